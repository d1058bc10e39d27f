/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Kernels that trace kvm_exit late, and the time of the exit there.
 *
 * On 6.1 SVM, KVM traces kvm_exit in svm_handle_exit(), after
 * vcpu_enter_guest() has taken the host interrupt that caused the exit
 * (and any that came meanwhile: their softirqs too) and re-enabled
 * preemption: the host's interrupt handling, and a preemption it leads
 * to, come before the kvm_exit of the exit. From 6.3 on (6.12) and on VMX,
 * kvm_exit is traced right after the exit with interrupts off.
 *
 * vmlat learns which at the first kvm_exit it sees: whether interrupts
 * are on in the probe is exactly the property that matters, whatever the
 * kernel version or backports. Where exits are traced late, the guest
 * time ends at the exit itself: at the host TSC KVM records right after
 * it (kvm_x86.h), read in the kvm_exit probe or, if the vCPU thread is
 * switched out first, in its sched_switch. Elsewhere nothing of this runs:
 * two static keys leave a no-op in the kvm_exit probe.
 */
#ifndef _VMLAT_EXIT_LATE_H
#define _VMLAT_EXIT_LATE_H

#include <linux/irqflags.h>
#include <linux/jump_label.h>
#include <linux/percpu.h>
#include <linux/types.h>

#include "clock.h"
#include "kvm_x86.h"

/* How this kernel traces kvm_exit, as the status file names it. */
enum vmlat_exit_trace {
	VMLAT_EXIT_TRACE_UNKNOWN,	/* no kvm_exit seen yet */
	VMLAT_EXIT_TRACE_PROMPT,	/* right after the exit, IRQs off */
	VMLAT_EXIT_TRACE_LATE,		/* after the host took its IRQs */
	VMLAT_NR_EXIT_TRACES
};

extern const char *const vmlat_exit_trace_names[VMLAT_NR_EXIT_TRACES];

DECLARE_STATIC_KEY_TRUE(vmlat_exit_trace_unknown);
DECLARE_STATIC_KEY_FALSE(vmlat_exit_trace_late);

void vmlat_exit_trace_learn(bool irqs_off);

/*
 * In the kvm_exit probe: learn how exits are traced, until known (then a
 * no-op).
 */
static __always_inline void vmlat_exit_trace_check(void)
{
	if (static_branch_unlikely(&vmlat_exit_trace_unknown))
		vmlat_exit_trace_learn(irqs_disabled());
}

/* Whether kvm_exit is traced late: then guest time ends at the exit. */
static __always_inline bool vmlat_exit_traced_late(void)
{
	return static_branch_unlikely(&vmlat_exit_trace_late);
}

DECLARE_PER_CPU(u64, vmlat_exit_unread);

/**
 * vmlat_exit_time_ns() - when the vCPU's guest last left, in vmlat's time
 * @vcpu:	the vCPU; current is its thread, on the CPU it exited on
 * @since_ns:	when its guest time began (the kvm_entry)
 * @now_ns:	vmlat_now_ns() of the caller, just before
 *
 * The host TSC KVM recorded right after the exit, taken to vmlat's clock
 * (vmlat_tsc_time_ns()): not @now_ns, which would end guest time early by
 * the probe's own time, and refuse a guest interval shorter than it. A
 * reading that is not one (scaled TSC, a TSC of unknown rate, or a time
 * outside [@since_ns, @now_ns]: KVM wrote the TSC offset since) is
 * counted in vmlat_exit_time_unread(). Inline: every exit traced late
 * reads one.
 *
 * Context: kvm_exit or sched_switch tracepoint of @vcpu's thread, after a
 * VM exit and before its kvm_exit.
 * Return: the time of the exit, or 0 if unknown.
 */
static __always_inline u64 vmlat_exit_time_ns(const struct kvm_vcpu *vcpu,
					      u64 since_ns, u64 now_ns)
{
	u64 exit_tsc, exit_ns = 0;

	if (!vmlat_kvm_exit_tsc(vcpu, &exit_tsc))
		exit_ns = vmlat_tsc_time_ns(exit_tsc, since_ns, now_ns);
	if (!exit_ns)
		this_cpu_inc(vmlat_exit_unread);
	return exit_ns;
}

enum vmlat_exit_trace vmlat_exit_trace_mode(void);
u64 vmlat_exit_time_unread(void);
void vmlat_exit_late_exit(void);

#endif /* _VMLAT_EXIT_LATE_H */
