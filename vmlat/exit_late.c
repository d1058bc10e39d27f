// SPDX-License-Identifier: GPL-2.0
/*
 * Kernels that trace kvm_exit late (exit_late.h): learning it, and the
 * time of a VM exit from the host TSC KVM records right after it.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/kvm_host.h>
#include <linux/percpu.h>
#include <linux/workqueue.h>

#include "clock.h"
#include "exit_late.h"
#include "kvm_x86.h"

const char *const vmlat_exit_trace_names[VMLAT_NR_EXIT_TRACES] = {
	[VMLAT_EXIT_TRACE_UNKNOWN]	= "unknown",
	[VMLAT_EXIT_TRACE_PROMPT]	= "prompt",
	[VMLAT_EXIT_TRACE_LATE]		= "late",
};

DEFINE_STATIC_KEY_TRUE(vmlat_exit_trace_unknown);
DEFINE_STATIC_KEY_FALSE(vmlat_exit_trace_late);

static atomic_t vmlat_exit_trace = ATOMIC_INIT(VMLAT_EXIT_TRACE_UNKNOWN);
/*
 * Per CPU: where the TSC is not usable (or KVM scales it), every late
 * exit counts here, on every CPU at once.
 */
DEFINE_PER_CPU(u64, vmlat_exit_unread);

/* Static keys change under a mutex: not from the probe. */
static void vmlat_exit_trace_work_fn(struct work_struct *work)
{
	if (atomic_read(&vmlat_exit_trace) == VMLAT_EXIT_TRACE_LATE) {
		static_branch_enable(&vmlat_exit_trace_late);
		pr_info("kvm_exit comes after the host handled the exit's interrupts: guest time ends at the exit's TSC%s\n",
			vmlat_tsc_usable() ? "" :
			" (no usable TSC: at a switch-out before kvm_exit only)");
	}
	static_branch_disable(&vmlat_exit_trace_unknown);
}

static DECLARE_WORK(vmlat_exit_trace_work, vmlat_exit_trace_work_fn);

/**
 * vmlat_exit_trace_learn() - a kvm_exit probe ran with @irqs_off
 * @irqs_off:	interrupts were off in the probe
 *
 * The first call decides; later ones (until the work has patched the
 * probe) change nothing.
 *
 * Context: kvm_exit tracepoint, preemption off; interrupts as KVM left
 * them.
 */
void vmlat_exit_trace_learn(bool irqs_off)
{
	int mode = irqs_off ? VMLAT_EXIT_TRACE_PROMPT : VMLAT_EXIT_TRACE_LATE;

	if (atomic_read(&vmlat_exit_trace) != VMLAT_EXIT_TRACE_UNKNOWN)
		return;
	if (atomic_cmpxchg(&vmlat_exit_trace, VMLAT_EXIT_TRACE_UNKNOWN,
			   mode) == VMLAT_EXIT_TRACE_UNKNOWN)
		schedule_work(&vmlat_exit_trace_work);
}

/**
 * vmlat_exit_trace_mode() - how this kernel traces kvm_exit
 *
 * Return: enum vmlat_exit_trace, learned at the first kvm_exit.
 */
enum vmlat_exit_trace vmlat_exit_trace_mode(void)
{
	return atomic_read(&vmlat_exit_trace);
}

/**
 * vmlat_exit_time_unread() - exits whose time could not be read
 *
 * Return: how many times vmlat_exit_time_ns() found no usable TSC
 * reading (the guest time then ended at the kvm_exit or the switch-out).
 */
u64 vmlat_exit_time_unread(void)
{
	u64 n = 0;
	int cpu;

	for_each_possible_cpu(cpu)
		n += per_cpu(vmlat_exit_unread, cpu);
	return n;
}

/* Context: process context, once no probe can run. */
void vmlat_exit_late_exit(void)
{
	cancel_work_sync(&vmlat_exit_trace_work);
}
