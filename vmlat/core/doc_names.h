/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The names vmlat's output gives its states and kinds, as the debugfs
 * tables, the JSON document and the trace events print them: one list
 * each, with its enum. The module and the vmlat command (tools/vmlat)
 * include this same header, so neither restates a name.
 *
 * Each list is x(id, "name") per entry with sep() between them, in the
 * order of its enum: the trace events print an index and the command's
 * arrays follow it, so new names go at the end. Expand a list with
 * VMLAT_ENUM_, VMLAT_NAME_, VMLAT_SYMBOL_ or VMLAT_STRING_ and
 * VMLAT_COMMA_. Macros and enums only: no type, no include.
 */
#ifndef _VMLAT_DOC_NAMES_H
#define _VMLAT_DOC_NAMES_H

/*
 * The JSON document's layout: bumped at every rename or move. The guest
 * module's steal.json has the members of this layout the command reads.
 */
#define VMLAT_JSON_SCHEMA		4

#define VMLAT_COMMA_()			,
#define VMLAT_ENUM_(id, name)		id
#define VMLAT_NAME_(id, name)		[id] = name
#define VMLAT_SYMBOL_(id, name)		{ id, name }
#define VMLAT_STRING_(id, name)		name

/* A vCPU's states: core/state.h says what each one is. */
#define VMLAT_STATES(x, sep)						\
	x(VMLAT_GUEST, "guest") sep()					\
	x(VMLAT_KERNEL, "kernel") sep()					\
	x(VMLAT_USER, "user") sep()					\
	x(VMLAT_PREEMPTED, "preempted") sep()				\
	x(VMLAT_WAIT, "wait") sep()					\
	x(VMLAT_IDLE, "idle") sep()					\
	x(VMLAT_BLOCKED, "blocked")

enum vmlat_state {
	VMLAT_STATES(VMLAT_ENUM_, VMLAT_COMMA_),
	VMLAT_NR_STATES
};

/* The kinds of interval with a histogram of their own per VM. */
#define VMLAT_HIST_KINDS(x, sep)					\
	x(VMLAT_HIST_PREEMPT, "preempt") sep()				\
	x(VMLAT_HIST_WAIT, "wait") sep()				\
	x(VMLAT_HIST_EXIT, "exit")

enum vmlat_hist_kind {
	VMLAT_HIST_KINDS(VMLAT_ENUM_, VMLAT_COMMA_),
	VMLAT_NR_HIST_KINDS
};

/*
 * What a latency report (a threshold crossed) is of: the kinds above,
 * then an interrupt's delivery ("irq"), which has a histogram per source.
 */
#define VMLAT_REPORT_IRQ		VMLAT_NR_HIST_KINDS
#define VMLAT_NR_REPORT_KINDS		(VMLAT_NR_HIST_KINDS + 1)
#define VMLAT_REPORT_IRQ_NAME		"irq"

/*
 * A VM's histograms fed by the nested (L2) state machine (core/nested.h),
 * after the kinds above in its "histograms":
 *   l2_exit_l0  L2 exit round trip, handled by L0 (the host)
 *   l2_exit_l1  L2 exit round trip, reflected to L1
 *   wakeup_l2   L2 HLT (or wake-up) .. L2 runs again
 *   wakeup_l1   L1 HLT (or wake-up) .. L1 runs again
 */
#define VMLAT_NESTED_HISTS(x, sep)					\
	x(VMLAT_NH_L2_EXIT_L0, "l2_exit_l0") sep()			\
	x(VMLAT_NH_L2_EXIT_L1, "l2_exit_l1") sep()			\
	x(VMLAT_NH_WAKEUP_L2, "wakeup_l2") sep()			\
	x(VMLAT_NH_WAKEUP_L1, "wakeup_l1")

enum vmlat_nested_hist {
	VMLAT_NESTED_HISTS(VMLAT_ENUM_, VMLAT_COMMA_),
	VMLAT_NR_NESTED_HISTS
};

/*
 * Where an interrupt delivered to a vCPU came from (core/irq.h): its
 * LAPIC timer, an IPI from another vCPU of its VM, a device (an MSI or an
 * interrupt line: irqfd, KVM_SIGNAL_MSI, KVM_IRQ_LINE, the IOAPIC), or
 * anything else (a self-IPI, the other local vector table entries, PV
 * unhalt). Each has a histogram per VM, named "irq_" and its name.
 */
#define VMLAT_IRQ_SOURCES(x, sep)					\
	x(VMLAT_IRQ_TIMER, "timer") sep()				\
	x(VMLAT_IRQ_IPI, "ipi") sep()					\
	x(VMLAT_IRQ_DEVICE, "device") sep()				\
	x(VMLAT_IRQ_OTHER, "other")

enum vmlat_irq_src {
	VMLAT_IRQ_SOURCES(VMLAT_ENUM_, VMLAT_COMMA_),
	VMLAT_NR_IRQ_SOURCES
};

/* A histogram's name, for an entry of VMLAT_IRQ_SOURCES. */
#define VMLAT_IRQ_HIST_NAME_(id, name)	[id] = "irq_" name
#define VMLAT_IRQ_HIST_STRING_(id, name)	"irq_" name

/*
 * A TSC-deadline LAPIC timer's lateness at the VM entry that delivers it
 * (KVM's kvm_wait_lapic_expire, against the guest's deadline): early (KVM
 * fired its hrtimer ahead by its timer advance, lapic_timer_advance_ns,
 * and busy-waits the rest), or late. A histogram per VM each.
 */
#define VMLAT_EXPIRE_HISTS(x, sep)					\
	x(VMLAT_EXPIRE_EARLY, "timer_early") sep()			\
	x(VMLAT_EXPIRE_LATE, "timer_late")

enum vmlat_expire_hist {
	VMLAT_EXPIRE_HISTS(VMLAT_ENUM_, VMLAT_COMMA_),
	VMLAT_NR_EXPIRE_HISTS
};

/*
 * Where the target vCPU was when an interrupt became pending: in the
 * guest, in the host handling an exit (kernel or VMM), halted (asleep
 * after a HLT, or halt-polling), preempted or waiting for a CPU, or
 * asleep for another reason.
 */
#define VMLAT_IRQ_ATS(x, sep)						\
	x(VMLAT_AT_GUEST, "guest") sep()				\
	x(VMLAT_AT_HOST, "host") sep()					\
	x(VMLAT_AT_HALTED, "halted") sep()				\
	x(VMLAT_AT_PREEMPTED, "preempted") sep()			\
	x(VMLAT_AT_BLOCKED, "blocked")

enum vmlat_irq_at {
	VMLAT_IRQ_ATS(VMLAT_ENUM_, VMLAT_COMMA_),
	VMLAT_NR_IRQ_ATS
};

/*
 * Who ran while a vCPU waited for its CPU: a host task, a vCPU of another
 * VM, a vCPU of the same VM, nothing (an interval of no time, or an
 * exit), or the CPU's idle task: the CPU was waking up (idle exit, IPI)
 * for the vCPU, no task took its time.
 */
#define VMLAT_BY_KINDS(x, sep)						\
	x(VMLAT_BY_HOST, "host") sep()					\
	x(VMLAT_BY_VM, "vm") sep()					\
	x(VMLAT_BY_SAME_VM, "same_vm") sep()				\
	x(VMLAT_BY_NONE, "none") sep()					\
	x(VMLAT_BY_IDLE, "idle")

enum vmlat_preemptor_kind {
	VMLAT_BY_KINDS(VMLAT_ENUM_, VMLAT_COMMA_),
	VMLAT_NR_BY_KINDS
};

/*
 * The state of a VM's clock sync: ok, too few exchanges (waiting), no line
 * fits them (inconsistent), the fit does not fit in 64 bits (out_of_range).
 */
#define VMLAT_SYNC_STATES(x, sep)					\
	x(VMLAT_SYNC_OK, "ok") sep()					\
	x(VMLAT_SYNC_WAITING, "waiting") sep()				\
	x(VMLAT_SYNC_INCONSISTENT, "inconsistent") sep()		\
	x(VMLAT_SYNC_OUT_OF_RANGE, "out_of_range")

enum vmlat_sync_state {
	VMLAT_SYNC_STATES(VMLAT_ENUM_, VMLAT_COMMA_),
	VMLAT_NR_SYNC_STATES
};

#endif /* _VMLAT_DOC_NAMES_H */
