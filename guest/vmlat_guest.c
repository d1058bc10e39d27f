// SPDX-License-Identifier: GPL-2.0
/*
 * vmlat_guest.ko: the guest side of vmlat's clock synchronisation.
 *
 * Loaded in a KVM guest, it makes vmlat's clock-sync hypercall
 * (hypercall/vmlat_hypercall.h) rate_hz times a second: its clock right
 * before the call, the call, its clock right after it returned. vmlat.ko
 * on the host pairs each call with host time and maps this guest's clock
 * to the host's (/sys/kernel/debug/vmlat/sync there). Which clock is a
 * parameter: "mono" (default), CLOCK_MONOTONIC as ftrace's "mono" trace
 * clock stamps it (ktime_get_mono_fast_ns()); or "tsc", the TSC as
 * ftrace's "x86-tsc" clock stamps it.
 *
 * /sys/kernel/debug/vmlat_guest/status shows this side: calls made,
 * failures (a return other than KVM's -KVM_ENOSYS: a hypervisor that is
 * not KVM, or one that took the number), round-trip times.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/debugfs.h>
#include <linux/kstrtox.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <linux/seq_file.h>
#include <linux/timekeeping.h>
#include <linux/workqueue.h>
#include <asm/kvm_para.h>
#include <asm/msr.h>
#include <uapi/linux/kvm_para.h>

#include "vmlat_hypercall.h"

static unsigned int rate_hz = 10;
static bool clock_tsc;

static int rate_set(const char *val, const struct kernel_param *kp)
{
	unsigned int v;

	if (kstrtouint(val, 0, &v) || v < 1 || v > VMLAT_HC_MAX_RATE) {
		pr_warn("rate_hz: write a number of exchanges per second from 1 to %d\n",
			VMLAT_HC_MAX_RATE);
		return -EINVAL;
	}
	WRITE_ONCE(rate_hz, v);
	return 0;
}

static const struct kernel_param_ops rate_ops = {
	.set = rate_set,
	.get = param_get_uint,
};

module_param_cb(rate_hz, &rate_ops, &rate_hz, 0644);
MODULE_PARM_DESC(rate_hz, "clock-sync exchanges per second, 1 to 100 (default 10)");

static int clock_set(const char *val, const struct kernel_param *kp)
{
	if (sysfs_streq(val, "mono")) {
		clock_tsc = false;
		return 0;
	}
	if (sysfs_streq(val, "tsc")) {
		clock_tsc = true;
		return 0;
	}
	pr_warn("clock: write mono or tsc\n");
	return -EINVAL;
}

static int clock_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%s\n", clock_tsc ? "tsc" : "mono");
}

static const struct kernel_param_ops clock_ops = {
	.set = clock_set,
	.get = clock_get,
};

/* Read-only once loaded: a mapping is of one clock. */
module_param_cb(clock, &clock_ops, NULL, 0444);
MODULE_PARM_DESC(clock, "the guest clock to map: mono (CLOCK_MONOTONIC, default) or tsc");

/* The exchanges so far; written by the work item, read by debugfs. */
static DEFINE_MUTEX(vmlat_guest_lock);
static struct {
	u64 seq;
	u64 prev_g2;
	u64 calls;
	u64 failures;
	long last_ret;
	u64 rtt_min;
	u64 rtt_max;
	u64 rtt_sum;
	u64 rtt_last;
} st;

static struct dentry *vmlat_guest_dir;

static u64 guest_clock(void)
{
	return clock_tsc ? rdtsc_ordered() : ktime_get_mono_fast_ns();
}

static void vmlat_guest_exchange(struct work_struct *work);
static DECLARE_DELAYED_WORK(vmlat_guest_work, vmlat_guest_exchange);

static void vmlat_guest_exchange(struct work_struct *work)
{
	unsigned long flags;
	u64 g1, g2, rtt;
	long ret;

	mutex_lock(&vmlat_guest_lock);
	/* Nothing of this guest between the clock reads and the call. */
	local_irq_save(flags);
	g1 = guest_clock();
	ret = kvm_hypercall4(VMLAT_HC_NR, VMLAT_HC_HDR, g1, st.prev_g2,
			     ++st.seq);
	g2 = guest_clock();
	local_irq_restore(flags);

	st.calls++;
	st.last_ret = ret;
	if (ret != -KVM_ENOSYS)
		st.failures++;
	st.prev_g2 = g2;
	rtt = g2 - g1;
	st.rtt_last = rtt;
	st.rtt_sum += rtt;
	if (st.calls == 1 || rtt < st.rtt_min)
		st.rtt_min = rtt;
	if (rtt > st.rtt_max)
		st.rtt_max = rtt;
	mutex_unlock(&vmlat_guest_lock);

	schedule_delayed_work(&vmlat_guest_work,
			      max_t(unsigned long, 1, HZ / READ_ONCE(rate_hz)));
}

static int status_show(struct seq_file *m, void *unused)
{
	mutex_lock(&vmlat_guest_lock);
	seq_printf(m, "# vmlat_guest: hypercall version %d, clock %s\n",
		   VMLAT_HC_VERSION, clock_tsc ? "tsc" : "mono");
	seq_printf(m, "rate_hz %u\n", READ_ONCE(rate_hz));
	seq_printf(m, "calls %llu\n", st.calls);
	seq_printf(m, "seq %llu\n", st.seq);
	seq_printf(m, "failures %llu\n", st.failures);
	seq_printf(m, "last_return %ld\n", st.last_ret);
	seq_printf(m, "rtt_min %llu\n", st.rtt_min);
	seq_printf(m, "rtt_avg %llu\n",
		   st.calls ? div64_u64(st.rtt_sum, st.calls) : 0);
	seq_printf(m, "rtt_max %llu\n", st.rtt_max);
	seq_printf(m, "rtt_last %llu\n", st.rtt_last);
	mutex_unlock(&vmlat_guest_lock);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(status);

static int __init vmlat_guest_init(void)
{
	if (!boot_cpu_has(X86_FEATURE_HYPERVISOR) || !kvm_para_available()) {
		pr_err("not running in a KVM guest: load vmlat_guest.ko in one (on the host, load vmlat.ko)\n");
		return -ENODEV;
	}
	if (!IS_ENABLED(CONFIG_64BIT)) {
		pr_err("the clock-sync hypercall needs a 64-bit guest\n");
		return -ENODEV;
	}
	vmlat_guest_dir = debugfs_create_dir("vmlat_guest", NULL);
	debugfs_create_file("status", 0444, vmlat_guest_dir, NULL,
			    &status_fops);
	schedule_delayed_work(&vmlat_guest_work, 0);
	pr_info("clock-sync exchanges with the host, %u per second, clock %s\n",
		rate_hz, clock_tsc ? "tsc" : "mono");
	return 0;
}

static void __exit vmlat_guest_exit(void)
{
	cancel_delayed_work_sync(&vmlat_guest_work);
	debugfs_remove_recursive(vmlat_guest_dir);
}

module_init(vmlat_guest_init);
module_exit(vmlat_guest_exit);

MODULE_DESCRIPTION("vmlat guest side: clock-sync hypercalls to the host");
MODULE_LICENSE("GPL");
