// SPDX-License-Identifier: GPL-2.0
/*
 * vmlat: live, in-kernel latency analysis of KVM virtual machines.
 *
 * vmlat hooks KVM's and the scheduler's tracepoints and turns the offline
 * LTTng/Trace Compass analyses of Gebai et al. (vCPU preemption and its
 * cause), Nemati et al. (nested VMs), Biancheri and Dagenais (vCPU states
 * from host-only traces) and the steal-time breakdown of Ayodele et al.
 * into an analyzer that runs live and shows its results in
 * /sys/kernel/debug/vmlat/. See Documentation/vmlat.rst.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>

#include "analyzer.h"
#include "report.h"
#include "vmlat.h"

static int __init vmlat_init(void)
{
	int err;

	err = vmlat_analyzer_init();
	if (err)
		return err;

	err = vmlat_hooks_init();
	if (err)
		goto err_free_analyzer;

	err = vmlat_debugfs_init();
	if (err)
		goto err_unhook;

	pr_info("version %s loaded\n", VMLAT_VERSION);
	return 0;

err_unhook:
	vmlat_hooks_exit();
	vmlat_report_exit();
err_free_analyzer:
	vmlat_analyzer_exit();
	return err;
}

static void __exit vmlat_exit(void)
{
	vmlat_debugfs_exit();
	vmlat_hooks_exit();	/* no probe runs after this */
	vmlat_report_exit();
	vmlat_analyzer_exit();
}

module_init(vmlat_init);
module_exit(vmlat_exit);

MODULE_AUTHOR("The vmlat authors");
MODULE_DESCRIPTION("Live latency analysis of KVM virtual machines");
MODULE_LICENSE("GPL");
MODULE_VERSION(VMLAT_VERSION);
