// SPDX-License-Identifier: GPL-2.0
/*
 * The tracepoint probes of vmlat and the table that says which tracepoint
 * each serves, for which prototype.
 *
 * Probes run in KVM's and the scheduler's hot paths with preemption off,
 * often under the runqueue lock: they must not sleep, allocate, take
 * sleeping locks or print. They count their hits and hand the event to
 * event dispatch (events.c), which relies on preemption being off.
 *
 * Up to 6.12 a tracepoint disabled preemption around its probes. Newer
 * kernels (Debian's 7.2, stock and PREEMPT_RT) hold SRCU-fast instead
 * (upstream "tracing: Guard __DECLARE_TRACE() use of __DO_TRACE_CALL()
 * with SRCU-fast"), so a probe is as preemptible as the code that traces:
 * KVM's exit handling, its run loop, a task's exit, and, on PREEMPT_RT,
 * the MMU under its sleeping mmu_lock. Those probes disable preemption
 * themselves (a per-CPU count, nested and nearly free where the
 * tracepoint already did it). kvm_entry, kvm_exit and the sched_* probes
 * need not: KVM traces kvm_entry with interrupts off on every kernel, and
 * kvm_exit too from 6.12 on (6.1's SVM traces it in svm_handle_exit(),
 * preemptible, but there the tracepoint disables preemption); the
 * scheduler traces its events under the raw runqueue or pi lock. The
 * exit probe, the hottest, so pays nothing for it.
 *
 * Each probe's prototype is written out exactly as the tracepoint declares
 * it, argument type names included, and is attached only after hooks.c has
 * read the same prototype from the running kernel's BTF: on kCFI kernels a
 * mismatch would be fatal, elsewhere it would silently read garbage.
 */
#include <linux/kvm_host.h>
#include <linux/sched.h>

#include "compat.h"
#include "delivery.h"
#include "events.h"
#include "vmlat.h"

DEFINE_PER_CPU(struct vmlat_pcpu, vmlat_pcpu);

/*
 * The probes of kvm_entry, kvm_exit and kvm_userspace_exit, the three
 * events of every exit round trip, are in events.c, their events' code
 * inlined into them (events.h).
 */

struct kvm_mmu_page;

static void vmlat_probe_kvm_hypercall(void *data, unsigned long nr,
				      unsigned long a0, unsigned long a1,
				      unsigned long a2, unsigned long a3)
{
	if (VMLAT_FLOOR)
		return;
	preempt_disable_notrace();
	vmlat_hit(VMLAT_HOOK_KVM_HYPERCALL);
	vmlat_on_kvm_hypercall(nr, a0, a1, a2, a3);
	preempt_enable_notrace();
}

/* Both kvm_hv_hypercall variants: exit handling, KVM's, preemptible. */
static __always_inline void vmlat_hv_hypercall(__u16 code, bool extra)
{
	if (VMLAT_FLOOR)
		return;
	preempt_disable_notrace();
	vmlat_hit(VMLAT_HOOK_KVM_HV_HYPERCALL);
	vmlat_on_kvm_hv_hypercall(code, extra);
	preempt_enable_notrace();
}

static void vmlat_probe_kvm_hv_hypercall(void *data, __u16 code, bool fast,
					 __u16 var_cnt, __u16 rep_cnt,
					 __u16 rep_idx, __u64 ingpa,
					 __u64 outgpa)
{
	vmlat_hv_hypercall(code, var_cnt || rep_cnt || rep_idx);
}

/* The same before variable-size headers (5.10's): no var_cnt. */
static void vmlat_probe_kvm_hv_hypercall_v0(void *data, __u16 code,
					    bool fast, __u16 rep_cnt,
					    __u16 rep_idx, __u64 ingpa,
					    __u64 outgpa)
{
	vmlat_hv_hypercall(code, rep_cnt || rep_idx);
}

static void vmlat_probe_kvm_nested_vmenter(void *data, __u64 rip, __u64 vmcb,
					   __u64 nested_rip, __u32 int_ctl,
					   __u32 event_inj, bool tdp_enabled,
					   __u64 guest_tdp_pgd,
					   __u64 guest_cr3, __u32 isa)
{
	if (VMLAT_FLOOR)
		return;
	vmlat_hit(VMLAT_HOOK_KVM_NESTED_VMENTER);	/* preempt-safe */
}

/* Both kvm_nested_vmexit_inject variants: KVM traces it preemptible. */
static __always_inline void vmlat_nested_vmexit_injected(void)
{
	preempt_disable_notrace();
	vmlat_hit(VMLAT_HOOK_KVM_NESTED_VMEXIT_INJECT);
	vmlat_on_nested_vmexit_inject();
	preempt_enable_notrace();
}

static void vmlat_probe_kvm_nested_vmexit_inject(void *data, __u32 exit_code,
						 __u64 exit_info1,
						 __u64 exit_info2,
						 __u32 exit_int_info,
						 __u32 exit_int_info_err,
						 __u32 isa)
{
	if (VMLAT_FLOOR)
		return;
	vmlat_nested_vmexit_injected();
}

/* kvm_nested_vmexit_inject's exit_code became __u64 after 6.12. */
static void vmlat_probe_kvm_nested_vmexit_inject_v2(void *data, __u64 exit_code,
						    __u64 exit_info1,
						    __u64 exit_info2,
						    __u32 exit_int_info,
						    __u32 exit_int_info_err,
						    __u32 isa)
{
	if (VMLAT_FLOOR)
		return;
	vmlat_nested_vmexit_injected();
}

static void vmlat_probe_kvm_mmu_get_page(void *data, struct kvm_mmu_page *sp,
					 bool created)
{
	if (VMLAT_FLOOR)
		return;
	preempt_disable_notrace();
	vmlat_hit(VMLAT_HOOK_KVM_MMU_GET_PAGE);
	vmlat_on_mmu_get_page();
	preempt_enable_notrace();
}

/*
 * Interrupt delivery (delivery.c). KVM traces kvm_apic_accept_irq in
 * process context (preemptible on 7.2), with interrupts off (the x2APIC
 * IPI fastpath, an irqfd's wake-up) or in a hard IRQ (a device's irqfd).
 */
static void vmlat_probe_kvm_apic_accept_irq(void *data, __u32 apicid,
					    __u16 dm, __u16 tm, __u8 vec)
{
	if (VMLAT_FLOOR)
		return;
	preempt_disable_notrace();
	vmlat_hit(VMLAT_HOOK_KVM_APIC_ACCEPT_IRQ);
	vmlat_on_apic_accept_irq(apicid, dm, vec);
	preempt_enable_notrace();
}

/* kvm_inj_virq: traced before vcpu_enter_guest() disables preemption. */
static void vmlat_probe_kvm_inj_virq(void *data, unsigned int vector,
				     bool soft, bool reinjected)
{
	if (VMLAT_FLOOR)
		return;
	preempt_disable_notrace();
	vmlat_hit(VMLAT_HOOK_KVM_INJ_VIRQ);
	vmlat_on_inj_virq(vector, reinjected);
	preempt_enable_notrace();
}

/* 5.10's kvm_inj_virq: the vector alone, a reinjection not told apart. */
static void vmlat_probe_kvm_inj_virq_v0(void *data, unsigned int irq)
{
	if (VMLAT_FLOOR)
		return;
	preempt_disable_notrace();
	vmlat_hit(VMLAT_HOOK_KVM_INJ_VIRQ);
	vmlat_on_inj_virq(irq, false);
	preempt_enable_notrace();
}

static void vmlat_probe_kvm_msi_set_irq(void *data, __u64 address,
					__u64 msi_data)
{
	if (VMLAT_FLOOR)
		return;
	preempt_disable_notrace();
	vmlat_hit(VMLAT_HOOK_KVM_MSI_SET_IRQ);
	vmlat_on_irq_source();
	preempt_enable_notrace();
}

static void vmlat_probe_kvm_set_irq(void *data, unsigned int gsi, int level,
				    int irq_source_id)
{
	if (VMLAT_FLOOR)
		return;
	preempt_disable_notrace();
	vmlat_hit(VMLAT_HOOK_KVM_SET_IRQ);
	vmlat_on_irq_source();
	preempt_enable_notrace();
}

/* Halt-polling (events.c): both in the halting vCPU's thread. */
static void vmlat_probe_kvm_halt_poll_ns(void *data, bool grow,
					 unsigned int vcpu_id,
					 unsigned int new, unsigned int old)
{
	if (VMLAT_FLOOR)
		return;
	preempt_disable_notrace();
	vmlat_hit(VMLAT_HOOK_KVM_HALT_POLL_NS);
	vmlat_on_halt_poll_ns(grow, vcpu_id, old);
	preempt_enable_notrace();
}

static void vmlat_probe_kvm_vcpu_wakeup(void *data, __u64 ns, bool waited,
					bool valid)
{
	if (VMLAT_FLOOR)
		return;
	preempt_disable_notrace();
	vmlat_hit(VMLAT_HOOK_KVM_VCPU_WAKEUP);
	vmlat_on_vcpu_wakeup(ns, waited, valid);
	preempt_enable_notrace();
}

/* The TSC-deadline timer at its VM entry, interrupts off (delivery.c). */
static void vmlat_probe_kvm_wait_lapic_expire(void *data, unsigned int vcpu_id,
					      s64 delta)
{
	if (VMLAT_FLOOR)
		return;
	preempt_disable_notrace();
	vmlat_hit(VMLAT_HOOK_KVM_WAIT_LAPIC_EXPIRE);
	vmlat_on_wait_lapic_expire(vcpu_id, delta);
	preempt_enable_notrace();
}

/* Every hrtimer's expiry, in its hard or soft IRQ: one compare for most. */
static void vmlat_probe_hrtimer_expire_entry(void *data, struct hrtimer *t,
					     ktime_t *now)
{
	if (VMLAT_FLOOR)
		return;
	vmlat_hit(VMLAT_HOOK_HRTIMER_EXPIRE_ENTRY);
	vmlat_on_hrtimer_expire(t);
}

/* hrtimer_expire_entry's now passed by value (7.2). */
static void vmlat_probe_hrtimer_expire_entry_v2(void *data, struct hrtimer *t,
						ktime_t now)
{
	if (VMLAT_FLOOR)
		return;
	vmlat_hit(VMLAT_HOOK_HRTIMER_EXPIRE_ENTRY);
	vmlat_on_hrtimer_expire(t);
}

static void vmlat_probe_sched_switch(void *data, bool preempt,
				     struct task_struct *prev,
				     struct task_struct *next,
				     unsigned int prev_state)
{
	if (VMLAT_FLOOR)
		return;
	vmlat_hit(VMLAT_HOOK_SCHED_SWITCH);
	if (vmlat_switch_may_count(prev, next))
		vmlat_on_sched_switch(preempt, prev, next, prev_state);
}

/*
 * sched_switch before 5.18, without prev_state: the tracepoint comes
 * after __schedule() made a sleeper with a signal pending TASK_RUNNING
 * again, so prev's own state is the one to pass.
 */
static void vmlat_probe_sched_switch_v0(void *data, bool preempt,
					struct task_struct *prev,
					struct task_struct *next)
{
	if (VMLAT_FLOOR)
		return;
	vmlat_hit(VMLAT_HOOK_SCHED_SWITCH);
	if (vmlat_switch_may_count(prev, next))
		vmlat_on_sched_switch(preempt, prev, next,
				      vmlat_task_state(prev));
}

static void vmlat_probe_sched_waking(void *data, struct task_struct *p)
{
	if (VMLAT_FLOOR)
		return;
	vmlat_hit(VMLAT_HOOK_SCHED_WAKING);
	if (vmlat_task_maybe(p))
		vmlat_on_sched_waking(p);
}

static void vmlat_probe_sched_wakeup(void *data, struct task_struct *p)
{
	if (VMLAT_FLOOR)
		return;
	vmlat_hit(VMLAT_HOOK_SCHED_WAKEUP);
	if (vmlat_task_maybe(p))
		vmlat_on_sched_wakeup(p);
}

static void vmlat_probe_sched_wakeup_new(void *data, struct task_struct *p)
{
	if (VMLAT_FLOOR)
		return;
	vmlat_hit(VMLAT_HOOK_SCHED_WAKEUP_NEW);
}

static void vmlat_probe_sched_migrate_task(void *data, struct task_struct *p,
					   int dest_cpu)
{
	if (VMLAT_FLOOR)
		return;
	vmlat_hit(VMLAT_HOOK_SCHED_MIGRATE_TASK);
	if (vmlat_task_maybe(p))
		vmlat_on_sched_migrate(p, dest_cpu);
}

/* Both sched_process_exit variants: do_exit() traces it preemptible. */
static __always_inline void vmlat_process_exited(struct task_struct *p)
{
	preempt_disable_notrace();
	vmlat_hit(VMLAT_HOOK_SCHED_PROCESS_EXIT);
	vmlat_on_sched_exit(p);
	preempt_enable_notrace();
}

static void vmlat_probe_sched_process_exit(void *data, struct task_struct *p)
{
	if (VMLAT_FLOOR)
		return;
	vmlat_process_exited(p);
}

/* sched_process_exit gained "bool group_dead" after 6.12. */
static void vmlat_probe_sched_process_exit_v2(void *data, struct task_struct *p,
					      bool group_dead)
{
	if (VMLAT_FLOOR)
		return;
	vmlat_process_exited(p);
}

#define VARIANT(proto_str, fn)	{ .proto = proto_str, .probe = (void *)fn }
/* The same, of a prototype read in 5.10's source (5.10.223). */
#define VARIANT_5_10(proto_str, fn)					\
	{ .proto = proto_str, .probe = (void *)fn, .src_5_10 = true }
#define HOOK(id, sys, tp, prov, ...)					\
	[id] = {							\
		.system = sys,						\
		.name = tp,						\
		.provider = prov,					\
		.variants = (const struct vmlat_probe_variant[]){	\
			__VA_ARGS__					\
		},							\
		.nr_variants = sizeof((const struct vmlat_probe_variant[]){ \
			__VA_ARGS__ }) / sizeof(struct vmlat_probe_variant), \
	}

#define P_TASK	"struct task_struct *"
#define P_VCPU	"struct kvm_vcpu *"
#define P_UL	"long unsigned int"

const struct vmlat_hook_desc vmlat_hook_descs[VMLAT_NR_HOOKS] = {
	HOOK(VMLAT_HOOK_KVM_ENTRY, "kvm", "kvm_entry", "kvm",
	     VARIANT("(" P_VCPU ", bool)", vmlat_probe_kvm_entry),
	     VARIANT_5_10("(" P_VCPU ")", vmlat_probe_kvm_entry_v1)),
	HOOK(VMLAT_HOOK_KVM_EXIT, "kvm", "kvm_exit", "kvm",
	     VARIANT("(" P_VCPU ", u32)", vmlat_probe_kvm_exit),
	     VARIANT_5_10("(unsigned int, " P_VCPU ", u32)",
			  vmlat_probe_kvm_exit_v0)),
	HOOK(VMLAT_HOOK_KVM_USERSPACE_EXIT, "kvm", "kvm_userspace_exit", "kvm",
	     VARIANT_5_10("(__u32, int)", vmlat_probe_kvm_userspace_exit)),
	HOOK(VMLAT_HOOK_KVM_HYPERCALL, "kvm", "kvm_hypercall", "kvm",
	     VARIANT_5_10("(" P_UL ", " P_UL ", " P_UL ", " P_UL ", " P_UL ")",
			  vmlat_probe_kvm_hypercall)),
	HOOK(VMLAT_HOOK_KVM_HV_HYPERCALL, "kvm", "kvm_hv_hypercall", "kvm",
	     VARIANT("(__u16, bool, __u16, __u16, __u16, __u64, __u64)",
		     vmlat_probe_kvm_hv_hypercall),
	     VARIANT_5_10("(__u16, bool, __u16, __u16, __u64, __u64)",
			  vmlat_probe_kvm_hv_hypercall_v0)),
	HOOK(VMLAT_HOOK_KVM_NESTED_VMENTER, "kvm", "kvm_nested_vmenter", "kvm",
	     VARIANT("(__u64, __u64, __u64, __u32, __u32, bool, __u64, __u64, __u32)",
		     vmlat_probe_kvm_nested_vmenter)),
	HOOK(VMLAT_HOOK_KVM_NESTED_VMEXIT_INJECT, "kvm",
	     "kvm_nested_vmexit_inject", "kvm",
	     VARIANT_5_10("(__u32, __u64, __u64, __u32, __u32, __u32)",
			  vmlat_probe_kvm_nested_vmexit_inject),
	     VARIANT("(__u64, __u64, __u64, __u32, __u32, __u32)",
		     vmlat_probe_kvm_nested_vmexit_inject_v2)),
	HOOK(VMLAT_HOOK_KVM_MMU_GET_PAGE, "kvmmmu", "kvm_mmu_get_page", "kvm",
	     VARIANT_5_10("(struct kvm_mmu_page *, bool)",
			  vmlat_probe_kvm_mmu_get_page)),
	HOOK(VMLAT_HOOK_KVM_APIC_ACCEPT_IRQ, "kvm", "kvm_apic_accept_irq", "kvm",
	     VARIANT_5_10("(__u32, __u16, __u16, __u8)",
			  vmlat_probe_kvm_apic_accept_irq)),
	HOOK(VMLAT_HOOK_KVM_INJ_VIRQ, "kvm", "kvm_inj_virq", "kvm",
	     VARIANT("(unsigned int, bool, bool)", vmlat_probe_kvm_inj_virq),
	     VARIANT_5_10("(unsigned int)", vmlat_probe_kvm_inj_virq_v0)),
	HOOK(VMLAT_HOOK_KVM_MSI_SET_IRQ, "kvm", "kvm_msi_set_irq", "kvm",
	     VARIANT_5_10("(__u64, __u64)", vmlat_probe_kvm_msi_set_irq)),
	HOOK(VMLAT_HOOK_KVM_SET_IRQ, "kvm", "kvm_set_irq", "kvm",
	     VARIANT_5_10("(unsigned int, int, int)", vmlat_probe_kvm_set_irq)),
	HOOK(VMLAT_HOOK_KVM_HALT_POLL_NS, "kvm", "kvm_halt_poll_ns", "kvm",
	     VARIANT_5_10("(bool, unsigned int, unsigned int, unsigned int)",
			  vmlat_probe_kvm_halt_poll_ns)),
	HOOK(VMLAT_HOOK_KVM_VCPU_WAKEUP, "kvm", "kvm_vcpu_wakeup", "kvm",
	     VARIANT_5_10("(__u64, bool, bool)", vmlat_probe_kvm_vcpu_wakeup)),
	HOOK(VMLAT_HOOK_KVM_WAIT_LAPIC_EXPIRE, "kvm", "kvm_wait_lapic_expire",
	     "kvm", VARIANT_5_10("(unsigned int, s64)",
				 vmlat_probe_kvm_wait_lapic_expire)),
	HOOK(VMLAT_HOOK_SCHED_SWITCH, "sched", "sched_switch", NULL,
	     VARIANT("(bool, " P_TASK ", " P_TASK ", unsigned int)",
		     vmlat_probe_sched_switch),
	     VARIANT("(bool, " P_TASK ", " P_TASK ")",
		     vmlat_probe_sched_switch_v0)),
	HOOK(VMLAT_HOOK_SCHED_WAKING, "sched", "sched_waking", NULL,
	     VARIANT("(" P_TASK ")", vmlat_probe_sched_waking)),
	HOOK(VMLAT_HOOK_SCHED_WAKEUP, "sched", "sched_wakeup", NULL,
	     VARIANT("(" P_TASK ")", vmlat_probe_sched_wakeup)),
	HOOK(VMLAT_HOOK_SCHED_WAKEUP_NEW, "sched", "sched_wakeup_new", NULL,
	     VARIANT("(" P_TASK ")", vmlat_probe_sched_wakeup_new)),
	HOOK(VMLAT_HOOK_SCHED_MIGRATE_TASK, "sched", "sched_migrate_task", NULL,
	     VARIANT("(" P_TASK ", int)", vmlat_probe_sched_migrate_task)),
	HOOK(VMLAT_HOOK_SCHED_PROCESS_EXIT, "sched", "sched_process_exit", NULL,
	     VARIANT("(" P_TASK ")", vmlat_probe_sched_process_exit),
	     VARIANT("(" P_TASK ", bool)", vmlat_probe_sched_process_exit_v2)),
	HOOK(VMLAT_HOOK_HRTIMER_EXPIRE_ENTRY, "timer", "hrtimer_expire_entry",
	     NULL,
	     VARIANT("(struct hrtimer *, ktime_t *)",
		     vmlat_probe_hrtimer_expire_entry),
	     VARIANT("(struct hrtimer *, ktime_t)",
		     vmlat_probe_hrtimer_expire_entry_v2)),
};
