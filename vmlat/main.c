// SPDX-License-Identifier: GPL-2.0
/*
 * vmlat: live, in-kernel latency analysis of KVM virtual machines.
 *
 * vmlat hooks KVM's and the scheduler's tracepoints and turns the offline
 * LTTng/Trace Compass analyses of Gebai et al. (vCPU preemption and its
 * cause), Nemati et al. (nested VMs), Biancheri and Dagenais (vCPU states
 * from host-only traces) and the steal-time breakdown of Ayodele et al.
 * into an analyzer that runs live and shows its results in
 * /sys/kernel/debug/vmlat/. See Documentation/vmlat.rst, "How vmlat is
 * built", for its parts.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kernel.h>
#include <linux/module.h>

#include "charge.h"
#include "clock.h"
#include "debugfs.h"
#include "events.h"
#include "exit_late.h"
#include "guest_steal.h"
#include "knobs.h"
#include "records.h"
#include "threshold.h"
#include "vmlat.h"

/*
 * The parts, in the order they start; they stop in the reverse order.
 * First, whether this kernel lets vmlat confirm kvm's hooks at all: if
 * not, it refuses to load before it allocates anything (but for the
 * guest_steal setting a module parameter may have made: freed last).
 * Every probe calls into the tables, so they come before the hooks and
 * are freed only once no probe can run; the reports' and exit_late's
 * deferred work is waited for once the hooks are gone; debugfs readers
 * come last and go first, but for the module parameters: they can be
 * written before vmlat_init() and after vmlat_exit() (knobs.c), and say
 * here when a reset may touch the tables.
 */
static const struct vmlat_part {
	const char *name;
	int (*init)(void);
	void (*exit)(void);
} vmlat_parts[] = {
	{ "guest_steal", NULL,			vmlat_guest_steal_exit },
	{ "kernel",	vmlat_hooks_check,	NULL },
	{ "clock",	vmlat_clock_init,	NULL },
	{ "pool",	vmlat_pool_init,	vmlat_pool_exit },
	{ "records",	vmlat_records_init,	vmlat_records_exit },
	{ "charge",	vmlat_charge_init,	NULL },
	{ "exit_late",	NULL,			vmlat_exit_late_exit },
	{ "events",	vmlat_events_init,	NULL },
	{ "reports",	NULL,			vmlat_report_exit },
	{ "hooks",	vmlat_hooks_init,	vmlat_hooks_exit },
	{ "debugfs",	vmlat_debugfs_init,	vmlat_debugfs_exit },
	{ "knobs",	vmlat_knobs_init,	vmlat_knobs_exit },
};

/* Stop the parts before @n, last first. */
static void vmlat_stop(unsigned int n)
{
	while (n--) {
		if (vmlat_parts[n].exit)
			vmlat_parts[n].exit();
	}
}

static int __init vmlat_init(void)
{
	unsigned int i;
	int err;

	for (i = 0; i < ARRAY_SIZE(vmlat_parts); i++) {
		err = vmlat_parts[i].init ? vmlat_parts[i].init() : 0;
		if (err) {
			pr_debug("%s: error %d\n", vmlat_parts[i].name, err);
			vmlat_stop(i);
			return err;
		}
	}
	pr_info("version %s loaded\n", VMLAT_VERSION);
	if (VMLAT_FLOOR)
		pr_warn("floor build (tools/bench): the probes return at once, nothing is measured\n");
	return 0;
}

static void __exit vmlat_exit(void)
{
	vmlat_stop(ARRAY_SIZE(vmlat_parts));
}

module_init(vmlat_init);
module_exit(vmlat_exit);

MODULE_AUTHOR("The vmlat authors");
MODULE_DESCRIPTION("Live latency analysis of KVM virtual machines");
MODULE_LICENSE("GPL");
MODULE_VERSION(VMLAT_VERSION);
