/* SPDX-License-Identifier: GPL-2.0 */
/*
 * vmlat's own trace events: one per completed interval, with numeric
 * fields so that tracefs hist triggers can key and bucket on them, and one
 * per latency report that crossed a threshold (emitted from process
 * context, rate-limited: a place for "snapshot" and "traceoff" triggers).
 * Documentation/vmlat.rst shows the hist triggers.
 *
 * All durations are in ns of the "mono" trace clock. vm_pid is the VMM
 * process (tgid), vcpu the vCPU index in its VM.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM vmlat

#if !defined(_VMLAT_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _VMLAT_TRACE_H

#include <linux/tracepoint.h>
#include <asm/svm.h>
#include <asm/vmx.h>

#include "exit_codes.h"
#include "types.h"

/* As KVM's kvm_exit prints it; isa 0: the reason could not be read. */
#define vmlat_print_exit_reason(isa, reason)				\
	((isa) == VMLAT_ISA_VMX ?					\
	 __print_symbolic((reason) & 0xffff, VMX_EXIT_REASONS) :	\
	 (isa) == VMLAT_ISA_SVM ?					\
	 __print_symbolic(reason, SVM_EXIT_REASONS) : "undecoded")

#define vmlat_print_by_kind(kind)					\
	__print_symbolic(kind, VMLAT_BY_KINDS(VMLAT_SYMBOL_, VMLAT_COMMA_))

/*
 * A preemption (switched out while runnable .. back on a CPU) or a wait
 * (woken .. on a CPU) of a vCPU, and the task that ran the longest slice
 * on the CPU it waited for meanwhile: by_pid, by_comm; for a vCPU also
 * its VM (by_vm_pid) and index (by_vcpu), else 0 and -1. as: the guest
 * address space the vCPU ran when it lost its CPU (guest_tasks' "as"),
 * by_as: the one the preempting vCPU ran; 0: none.
 */
DECLARE_EVENT_CLASS(vmlat_stolen,
	TP_PROTO(pid_t vm_pid, int vcpu, u64 duration_ns, u64 as,
		 const struct vmlat_by *by),
	TP_ARGS(vm_pid, vcpu, duration_ns, as, by),

	TP_STRUCT__entry(
		__field(pid_t, vm_pid)
		__field(int, vcpu)
		__field(int, cpu)
		__field(u64, duration_ns)
		__field(u8, by_kind)
		__field(pid_t, by_pid)
		__field(pid_t, by_vm_pid)
		__field(int, by_vcpu)
		__array(char, by_comm, TASK_COMM_LEN)
		__field(u64, as)
		__field(u64, by_as)
	),

	TP_fast_assign(
		__entry->vm_pid = vm_pid;
		__entry->vcpu = vcpu;
		__entry->cpu = by->cpu;
		__entry->duration_ns = duration_ns;
		__entry->by_kind = by->kind;
		__entry->by_pid = by->pid;
		__entry->by_vm_pid = by->vm_pid;
		__entry->by_vcpu = by->vcpu;
		memcpy(__entry->by_comm, by->comm, TASK_COMM_LEN);
		__entry->as = as;
		__entry->by_as = by->as;
	),

	TP_printk("vm_pid=%d vcpu=%d cpu=%d duration_ns=%llu by=%s by_pid=%d by_comm=%s by_vm_pid=%d by_vcpu=%d as=0x%llx by_as=0x%llx",
		  __entry->vm_pid, __entry->vcpu, __entry->cpu,
		  __entry->duration_ns, vmlat_print_by_kind(__entry->by_kind),
		  __entry->by_pid, __entry->by_comm, __entry->by_vm_pid,
		  __entry->by_vcpu, __entry->as, __entry->by_as)
);

DEFINE_EVENT(vmlat_stolen, vmlat_preempt,
	TP_PROTO(pid_t vm_pid, int vcpu, u64 duration_ns, u64 as,
		 const struct vmlat_by *by),
	TP_ARGS(vm_pid, vcpu, duration_ns, as, by));

DEFINE_EVENT(vmlat_stolen, vmlat_wait,
	TP_PROTO(pid_t vm_pid, int vcpu, u64 duration_ns, u64 as,
		 const struct vmlat_by *by),
	TP_ARGS(vm_pid, vcpu, duration_ns, as, by));

/*
 * A preemption of a vCPU during which other vCPUs of its VM spun: made
 * PAUSE exits (pause-loop exiting, pause filter) or Hyper-V long-spin-wait
 * calls, spins of them; a
 * lock-holder preemption, suspected. Emitted with, and after, the
 * preemption's vmlat_preempt; by_* as there.
 */
TRACE_EVENT(vmlat_lock_holder,
	TP_PROTO(pid_t vm_pid, int vcpu, u64 duration_ns, unsigned int spins,
		 const struct vmlat_by *by),
	TP_ARGS(vm_pid, vcpu, duration_ns, spins, by),

	TP_STRUCT__entry(
		__field(pid_t, vm_pid)
		__field(int, vcpu)
		__field(int, cpu)
		__field(u64, duration_ns)
		__field(unsigned int, spins)
		__field(u8, by_kind)
		__field(pid_t, by_pid)
		__field(pid_t, by_vm_pid)
		__field(int, by_vcpu)
		__array(char, by_comm, TASK_COMM_LEN)
	),

	TP_fast_assign(
		__entry->vm_pid = vm_pid;
		__entry->vcpu = vcpu;
		__entry->cpu = by->cpu;
		__entry->duration_ns = duration_ns;
		__entry->spins = spins;
		__entry->by_kind = by->kind;
		__entry->by_pid = by->pid;
		__entry->by_vm_pid = by->vm_pid;
		__entry->by_vcpu = by->vcpu;
		memcpy(__entry->by_comm, by->comm, TASK_COMM_LEN);
	),

	TP_printk("vm_pid=%d vcpu=%d cpu=%d duration_ns=%llu spins=%u by=%s by_pid=%d by_comm=%s by_vm_pid=%d by_vcpu=%d",
		  __entry->vm_pid, __entry->vcpu, __entry->cpu,
		  __entry->duration_ns, __entry->spins,
		  vmlat_print_by_kind(__entry->by_kind), __entry->by_pid,
		  __entry->by_comm, __entry->by_vm_pid, __entry->by_vcpu)
);

/*
 * The handling of one VM exit: kvm_exit .. next kvm_entry, host time on
 * CPU only (time preempted or asleep meanwhile is in the other events).
 * exit_reason is the raw code (VMX: basic reason and flags), isa
 * VMLAT_ISA_VMX (1) or VMLAT_ISA_SVM (2), or 0 if it could not be read.
 */
TRACE_EVENT(vmlat_exit,
	TP_PROTO(pid_t vm_pid, int vcpu, u64 duration_ns, u32 isa,
		 u32 exit_reason),
	TP_ARGS(vm_pid, vcpu, duration_ns, isa, exit_reason),

	TP_STRUCT__entry(
		__field(pid_t, vm_pid)
		__field(int, vcpu)
		__field(int, cpu)
		__field(u64, duration_ns)
		__field(u32, isa)
		__field(u32, exit_reason)
	),

	TP_fast_assign(
		__entry->vm_pid = vm_pid;
		__entry->vcpu = vcpu;
		__entry->cpu = smp_processor_id();
		__entry->duration_ns = duration_ns;
		__entry->isa = isa;
		__entry->exit_reason = exit_reason;
	),

	TP_printk("vm_pid=%d vcpu=%d cpu=%d duration_ns=%llu reason=%s",
		  __entry->vm_pid, __entry->vcpu, __entry->cpu,
		  __entry->duration_ns,
		  vmlat_print_exit_reason(__entry->isa, __entry->exit_reason))
);

/*
 * An exit of a nested (L2) guest, as the host saw it: from its kvm_exit to
 * the next kvm_entry into L2, handled by the host alone (reflected=0) or
 * reflected to the L1 hypervisor, whose handling is included (reflected=1).
 * Preemptions and sleeps of the vCPU meanwhile are included too. isa and
 * exit_reason are L2's exit, as in vmlat_exit.
 */
TRACE_EVENT(vmlat_nested_exit,

	TP_PROTO(pid_t vm_pid, int vcpu, u64 duration_ns, u32 isa,
		 u32 exit_reason, bool reflected),

	TP_ARGS(vm_pid, vcpu, duration_ns, isa, exit_reason, reflected),

	TP_STRUCT__entry(
		__field(pid_t, vm_pid)
		__field(int, vcpu)
		__field(int, cpu)
		__field(u64, duration_ns)
		__field(u32, isa)
		__field(u32, exit_reason)
		__field(u8, reflected)
	),

	TP_fast_assign(
		__entry->vm_pid = vm_pid;
		__entry->vcpu = vcpu;
		__entry->cpu = smp_processor_id();
		__entry->duration_ns = duration_ns;
		__entry->isa = isa;
		__entry->exit_reason = exit_reason;
		__entry->reflected = reflected;
	),

	TP_printk("vm_pid=%d vcpu=%d cpu=%d duration_ns=%llu reason=%s reflected=%u",
		  __entry->vm_pid, __entry->vcpu, __entry->cpu,
		  __entry->duration_ns,
		  vmlat_print_exit_reason(__entry->isa, __entry->exit_reason),
		  __entry->reflected)
);

/*
 * A clock-sync exchange of a guest, taken into its VM's guest -> host
 * mapping: guest time g1 before the hypercall, host time h at it, guest
 * time g2 after it (hypercall/vmlat_hypercall.h); seq is the guest's
 * number, vcpu the vCPU that made the hypercall completing it.
 */
TRACE_EVENT(vmlat_sync,

	TP_PROTO(pid_t vm_pid, int vcpu, u64 seq, u64 g1_ns, u64 h_ns,
		 u64 g2_ns),

	TP_ARGS(vm_pid, vcpu, seq, g1_ns, h_ns, g2_ns),

	TP_STRUCT__entry(
		__field(pid_t, vm_pid)
		__field(int, vcpu)
		__field(int, cpu)
		__field(u64, seq)
		__field(u64, g1_ns)
		__field(u64, h_ns)
		__field(u64, g2_ns)
		__field(u64, rtt_ns)
	),

	TP_fast_assign(
		__entry->vm_pid = vm_pid;
		__entry->vcpu = vcpu;
		__entry->cpu = smp_processor_id();
		__entry->seq = seq;
		__entry->g1_ns = g1_ns;
		__entry->h_ns = h_ns;
		__entry->g2_ns = g2_ns;
		__entry->rtt_ns = g2_ns - g1_ns;
	),

	TP_printk("vm_pid=%d vcpu=%d cpu=%d seq=%llu g1_ns=%llu h_ns=%llu g2_ns=%llu rtt_ns=%llu",
		  __entry->vm_pid, __entry->vcpu, __entry->cpu, __entry->seq,
		  __entry->g1_ns, __entry->h_ns, __entry->g2_ns,
		  __entry->rtt_ns)
);

/*
 * An interrupt delivered to a vCPU (vmlat/delivery.c): duration_ns from
 * the moment it became pending to the VM entry that delivered it; src
 * where it came from, at where the vCPU was when it became pending.
 */
TRACE_EVENT(vmlat_irq,

	TP_PROTO(pid_t vm_pid, int vcpu, u64 duration_ns, u8 src, u8 at,
		 u64 wait_ns),

	TP_ARGS(vm_pid, vcpu, duration_ns, src, at, wait_ns),

	TP_STRUCT__entry(
		__field(pid_t, vm_pid)
		__field(int, vcpu)
		__field(int, cpu)
		__field(u64, duration_ns)
		__field(u64, wait_ns)
		__field(u8, src)
		__field(u8, at)
	),

	TP_fast_assign(
		__entry->vm_pid = vm_pid;
		__entry->vcpu = vcpu;
		__entry->cpu = smp_processor_id();
		__entry->duration_ns = duration_ns;
		__entry->wait_ns = wait_ns;
		__entry->src = src;
		__entry->at = at;
	),

	TP_printk("vm_pid=%d vcpu=%d cpu=%d duration_ns=%llu src=%s at=%s wait_ns=%llu",
		  __entry->vm_pid, __entry->vcpu, __entry->cpu,
		  __entry->duration_ns,
		  __print_symbolic(__entry->src,
			VMLAT_IRQ_SOURCES(VMLAT_SYMBOL_, VMLAT_COMMA_)),
		  __print_symbolic(__entry->at,
			VMLAT_IRQ_ATS(VMLAT_SYMBOL_, VMLAT_COMMA_)),
		  __entry->wait_ns)
);

/*
 * A latency report that a snapshot was taken for (or would have been,
 * in "event" mode): emitted from process context, at most once per
 * snapshot_interval_ms. Its fields are those of the report (see the
 * "reports" file); seq is the report's number there.
 */
TRACE_EVENT(vmlat_threshold,
	TP_PROTO(const struct vmlat_report *r),
	TP_ARGS(r),

	TP_STRUCT__entry(
		__field(u64, seq)
		__field(u8, kind)
		__field(pid_t, vm_pid)
		__field(int, vcpu)
		__field(int, cpu)
		__field(u64, duration_ns)
		__field(u64, start_ns)
		__field(u64, end_ns)
		__field(u32, isa)
		__field(u32, exit_reason)
		__field(u8, by_kind)
		__field(pid_t, by_pid)
		__field(pid_t, by_vm_pid)
		__array(char, by_comm, TASK_COMM_LEN)
		__field(u64, as)
		__field(u64, by_as)
	),

	TP_fast_assign(
		__entry->seq = r->seq;
		__entry->kind = r->kind;
		__entry->vm_pid = r->vm_pid;
		__entry->vcpu = r->vcpu;
		__entry->cpu = r->cpu;
		__entry->duration_ns = r->duration_ns;
		__entry->start_ns = r->start_ns;
		__entry->end_ns = r->end_ns;
		__entry->isa = r->isa;
		__entry->exit_reason = r->exit_reason;
		__entry->by_kind = r->by.kind;
		__entry->by_pid = r->by.pid;
		__entry->by_vm_pid = r->by.vm_pid;
		memcpy(__entry->by_comm, r->by.comm, TASK_COMM_LEN);
		__entry->as = r->as;
		__entry->by_as = r->by.as;
	),

	TP_printk("seq=%llu kind=%s vm_pid=%d vcpu=%d cpu=%d duration_ns=%llu start_ns=%llu end_ns=%llu reason=%s by_pid=%d by_comm=%s by_vm_pid=%d as=0x%llx by_as=0x%llx",
		  __entry->seq,
		  __print_symbolic(__entry->kind,
				   VMLAT_HIST_KINDS(VMLAT_SYMBOL_, VMLAT_COMMA_),
				   { VMLAT_REPORT_IRQ, VMLAT_REPORT_IRQ_NAME }),
		  __entry->vm_pid, __entry->vcpu, __entry->cpu,
		  __entry->duration_ns, __entry->start_ns, __entry->end_ns,
		  __entry->kind == VMLAT_HIST_EXIT ?
		  vmlat_print_exit_reason(__entry->isa, __entry->exit_reason) :
		  __entry->kind == VMLAT_REPORT_IRQ ?
		  __print_symbolic(__entry->isa,
			VMLAT_IRQ_SOURCES(VMLAT_SYMBOL_, VMLAT_COMMA_)) :
		  "-",
		  __entry->by_pid, __entry->by_comm, __entry->by_vm_pid,
		  __entry->as, __entry->by_as)
);

#endif /* _VMLAT_TRACE_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE vmlat_trace
#include <trace/define_trace.h>
