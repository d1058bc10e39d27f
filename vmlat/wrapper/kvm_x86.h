/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What vmlat reads of KVM's private x86 state, and nowhere else: the raw
 * exit code and the guest's CR3 inside the kvm_exit probe, whether a vCPU
 * runs its L2 guest, whether it ever ran, a VM's vCPUs, and the host TSC
 * at the vCPU's last VM exit.
 *
 * kvm_exit passes only (vcpu, isa); the reason is in KVM's vendor state,
 * and kvm_x86_ops (get_exit_info) is not exported in 6.1. What public
 * headers allow:
 *  - SVM: struct vcpu_svm begins with the vCPU and the current VMCB
 *    pointer, so a mirror of those two members reaches the VMCB, whose
 *    control.exit_code (public <asm/svm.h>) is what KVM's kvm_exit event
 *    records.
 *  - VMX: kvm_exit fires in vmx_vcpu_run() right after the VM exit, on the
 *    vCPU's CPU with its VMCS current and preemption off, so a VMREAD of
 *    VM_EXIT_REASON (public <asm/vmx.h>) reads what KVM just read.
 * Decode the result with vmlat_exit_slot() (exit_codes.h).
 *
 * This header also checks, at build time, exit_codes.h's tables against the
 * uapi exit lists of the kernel being built for: every code equals the
 * macro it stands for, and the lists have as many entries as the tables.
 */
#ifndef _VMLAT_KVM_X86_H
#define _VMLAT_KVM_X86_H

#include <linux/build_bug.h>
#include <linux/compiler.h>
#include <linux/errno.h>
#include <linux/kvm_host.h>
#include <linux/mm.h>
#include <linux/uaccess.h>
#include <linux/version.h>
#include <linux/smp.h>
#include <asm/apicdef.h>
#include <asm/asm.h>
#include <asm/svm.h>
#include <asm/vmx.h>

#include "compat.h"
#include "exit_codes.h"
#include "exit_codes_uapi.h"
#include "layout.h"

/*
 * What differs in <linux/kvm_host.h>'s struct kvm_vcpu_arch and kvm_mmu
 * from 5.10 to 6.1 (5.10 has none of the four, 6.1 all), each version
 * read in that release's source (5.13's not seen) and, for RHEL 9, in
 * AlmaLinux's rebuilds of its releases:
 *  - guest_state_protected (5.11, SEV-ES): before it, no vCPU's state is
 *    protected from KVM;
 *  - l1_tsc_scaling_ratio (5.14, nested TSC scaling): before it,
 *    tsc_scaling_ratio is L1's, and 0 where the CPU cannot scale;
 *  - kvm_mmu.root_role.direct (5.19, RHEL 9.2): kvm_mmu.direct_map
 *    before;
 *  - kvm.vcpu_array (5.17, RHEL 9.1; an xarray), which kvm_get_vcpu()
 *    reads: kvm.vcpus[] before.
 * layout.c checks the members of this kernel's line, named here.
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(5, 11, 0)
#define VMLAT_KVM_HAS_STATE_PROTECTED	1
#else
#define VMLAT_KVM_HAS_STATE_PROTECTED	0
#endif
#if LINUX_VERSION_CODE >= KERNEL_VERSION(5, 14, 0)
#define VMLAT_KVM_L1_TSC_RATIO		arch.l1_tsc_scaling_ratio
#else
#define VMLAT_KVM_L1_TSC_RATIO		arch.tsc_scaling_ratio
#endif
#if LINUX_VERSION_CODE >= KERNEL_VERSION(5, 19, 0) || VMLAT_RHEL_SINCE(9, 2)
#define VMLAT_KVM_MMU_ROOT_ROLE		1
#else
#define VMLAT_KVM_MMU_ROOT_ROLE		0
#endif
#if LINUX_VERSION_CODE >= KERNEL_VERSION(5, 17, 0) || VMLAT_RHEL_SINCE(9, 1)
#define VMLAT_KVM_VCPUS			vcpu_array
#else
#define VMLAT_KVM_VCPUS			vcpus
#endif

static __always_inline bool vmlat_kvm_state_protected(struct kvm_vcpu *vcpu)
{
#if VMLAT_KVM_HAS_STATE_PROTECTED
	return READ_ONCE(vcpu->arch.guest_state_protected);
#else
	return false;
#endif
}

static __always_inline u64
vmlat_kvm_l1_tsc_ratio(const struct kvm_vcpu *vcpu)
{
	/* 0 before 5.14 where the CPU cannot scale: unscaled. */
	return READ_ONCE(vcpu->VMLAT_KVM_L1_TSC_RATIO) ?: 1;
}

static __always_inline bool vmlat_kvm_mmu_direct(struct kvm_vcpu *vcpu)
{
#if VMLAT_KVM_MMU_ROOT_ROLE
	return READ_ONCE(vcpu->arch.mmu)->root_role.direct;
#else
	return READ_ONCE(vcpu->arch.mmu)->direct_map;
#endif
}

/*
 * The first two members of KVM's private struct vcpu_svm
 * (arch/x86/kvm/svm/svm.h). Verified identical in Debian's
 * linux-source-6.1 (6.1.192) and linux-source-6.12 (6.12.117):
 *
 *	struct vcpu_svm {
 *		struct kvm_vcpu vcpu;
 *		// vmcb always points at current_vmcb->ptr, ...
 *		struct vmcb *vmcb;
 *		struct kvm_vmcb_info vmcb01;
 *		...
 *
 * to_svm() is container_of(vcpu, struct vcpu_svm, vcpu) in both, and
 * neither struct is __randomize_layout. struct kvm_vcpu comes from the
 * same headers KVM was built with, so @vmcb has the same offset here.
 * The pointer is vmcb01's or, while L2 runs, vmcb02's: the one the exit
 * was written to. It is checked for plausibility before use all the same,
 * and layout.c confirms both members, and the VMCB fields read, against
 * kvm_amd's BTF when it loads: each reader below fails while its members'
 * group is refused (layout.h).
 */
struct vmlat_vcpu_svm {
	struct kvm_vcpu vcpu;
	struct vmcb *vmcb;
};

/*
 * The start of KVM's private struct kvm_lapic (arch/x86/kvm/lapic.h), up
 * to its vCPU pointer:
 *
 *	struct kvm_lapic {
 *		unsigned long base_address;
 *		struct kvm_io_device dev;	// one pointer: its ops
 *		struct kvm_timer lapic_timer;	// its hrtimer first
 *		u32 divide_count;
 *		struct kvm_vcpu *vcpu;
 *		...
 *
 * struct kvm_timer is 56 bytes after its hrtimer, and 64 in 5.10 (with
 * advance_expire_delta): Debian's 6.1, 6.12 and 7.2 BTF place vcpu at
 * 144, 144 and 160 (7.2's hrtimer is 80 bytes), and 5.10's source at
 * 152. layout.c confirms lapic_timer.timer and vcpu against kvm's BTF
 * (group VMLAT_LAYOUT_LAPIC). vmlat reads them only from the timer's own
 * expiry (timer:hrtimer_expire_entry), when the hrtimer's function is
 * KVM's apic_timer_fn: KVM cancels the timer, waiting for a running
 * expiry, before it frees the APIC.
 *
 * The members between, 5.10 to 7.2 alike (the 6.12 and 7.2 BTF place
 * expired_tscdeadline 32 bytes after the hrtimer, as the 5.10 and 6.1
 * sources do), are mirrored for expired_tscdeadline only: the guest TSC
 * deadline of the timer's last expiry, which KVM's apic_timer_expired()
 * sets, for a TSC-deadline timer or one on VMX's preemption timer, before
 * it makes the interrupt pending, and kvm_wait_lapic_expire() clears
 * (group VMLAT_LAYOUT_DEADLINE).
 *
 * After vcpu, 5.10 to 7.2 alike: four flags (three in 5.10, which keeps
 * apicv_active in struct kvm_vcpu_arch; 7.2 adds a fifth,
 * guest_apic_protected) and isr_count in the next 8 bytes, then
 * highest_isr_cache, then regs, the APIC's register page, 24 bytes past
 * vcpu (the 6.1, 6.12 and 7.2 BTF; 5.10's source): group
 * VMLAT_LAYOUT_IRR.
 */
#if LINUX_VERSION_CODE < KERNEL_VERSION(5, 11, 0)
#define VMLAT_KVM_TIMER_TAIL	64
#else
#define VMLAT_KVM_TIMER_TAIL	56
#endif

struct vmlat_kvm_lapic {
	unsigned long base_address;
	void *dev;
	struct {
		struct hrtimer timer;
		s64 period;
		s64 target_expiration;
		u32 timer_mode;
		u32 timer_mode_mask;
		u64 tscdeadline;
		u64 expired_tscdeadline;
		u8 tail[VMLAT_KVM_TIMER_TAIL - 40];
	} lapic_timer;
	u32 divide_count;
	struct kvm_vcpu *vcpu;
	u8 flags[8];
	int highest_isr_cache;
	void *regs;
};

/*
 * Whether @vec is set in the IRR of @vcpu's in-kernel APIC: KVM holds it
 * pending and has not injected it yet (the guest's interrupts off, a
 * higher vector in service), or the CPU has not delivered it yet (APICv,
 * AVIC). false if not known: no in-kernel APIC, or its layout refused.
 * Context: @vcpu's thread, in KVM_RUN (its APIC and register page live).
 */
static __always_inline bool vmlat_kvm_irr_test(const struct kvm_vcpu *vcpu,
					       u8 vec)
{
	const struct vmlat_kvm_lapic *apic;
	const u32 *irr;

	if (!vmlat_layout_ok(VMLAT_LAYOUT_LAPIC | VMLAT_LAYOUT_IRR))
		return false;
	apic = (const struct vmlat_kvm_lapic *)READ_ONCE(vcpu->arch.apic);
	if (!apic || !apic->regs)
		return false;
	/* KVM's REG_POS()/VEC_POS(): 32 vectors a register, 16 bytes apart */
	irr = apic->regs + APIC_IRR + (vec >> 5) * 0x10;
	return READ_ONCE(*irr) & BIT(vec & 31);
}

/*
 * The hrtimer of @vcpu's LAPIC timer, or NULL (no in-kernel APIC, or its
 * layout refused). Context: @vcpu's thread, in KVM_RUN.
 */
static __always_inline struct hrtimer *
vmlat_kvm_lapic_timer(const struct kvm_vcpu *vcpu)
{
	struct vmlat_kvm_lapic *apic;

	if (!vmlat_layout_ok(VMLAT_LAYOUT_LAPIC))
		return NULL;
	apic = (struct vmlat_kvm_lapic *)READ_ONCE(vcpu->arch.apic);
	return apic ? &apic->lapic_timer.timer : NULL;
}

/*
 * The vCPU whose LAPIC timer @t is (vmlat_kvm_lapic_timer()), or NULL.
 * Where BTF could not confirm the layout (5.10's modules have none), the
 * vCPU is checked to point back at the APIC, read without faulting,
 * before anything else of it is.
 * Context: @t's expiry, its function KVM's apic_timer_fn.
 */
static __always_inline struct kvm_vcpu *
vmlat_kvm_lapic_timer_vcpu(struct hrtimer *t)
{
	struct vmlat_kvm_lapic *apic =
		container_of(t, struct vmlat_kvm_lapic, lapic_timer.timer);
	struct kvm_vcpu *vcpu = READ_ONCE(apic->vcpu);
	void *back;

	if (copy_from_kernel_nofault(&back, &vcpu->arch.apic, sizeof(back)) ||
	    back != (void *)apic)
		return NULL;
	return vcpu;
}

/*
 * Width of the VMCB's exit code in the headers vmlat is built with: 32 bits
 * (with exit_code_hi) up to 6.12, 64 from 7.2 on.
 */
#define VMLAT_KVM_SVM_EXIT_CODE_BITS \
	(8 * sizeof_field(struct vmcb_control_area, exit_code))

/* ---- build-time checks of exit_codes.h against this kernel's uapi lists ---- */

struct vmlat_uapi_exit_name {
	u64 code;
	const char *name;
};

#define VMLAT_UAPI_LIST_LEN_(...)					\
	(sizeof((const struct vmlat_uapi_exit_name[]){ __VA_ARGS__ }) /	\
	 sizeof(struct vmlat_uapi_exit_name))

static_assert(VMLAT_UAPI_LIST_LEN_(VMX_EXIT_REASONS) == VMLAT_UAPI_VMX_NR,
	      "exit_codes.h: VMX list length differs from VMX_EXIT_REASONS");
static_assert(VMLAT_UAPI_LIST_LEN_(SVM_EXIT_REASONS) == VMLAT_UAPI_SVM_NR,
	      "exit_codes.h: SVM list length differs from SVM_EXIT_REASONS");
static_assert(VMLAT_VMX_FAILED_VMENTRY == VMX_EXIT_REASONS_FAILED_VMENTRY);

#define VMLAT_VMX_UAPI_CHECK_(name, code, ftrace, uapi)		\
	static_assert(((code) & 0xffff) == (uapi),			\
		      "exit_codes.h: VMX " #name " is not " #uapi);
#define VMLAT_SVM_UAPI_CHECK_(name, code, ftrace, uapi)		\
	static_assert((u32)(code) == (u32)(uapi),			\
		      "exit_codes.h: SVM " #name " is not " #uapi);

VMLAT_VMX_EXITS(VMLAT_VMX_UAPI_CHECK_)
VMLAT_SVM_EXITS(VMLAT_SVM_UAPI_CHECK_)

#undef VMLAT_VMX_UAPI_CHECK_
#undef VMLAT_SVM_UAPI_CHECK_
#undef VMLAT_UAPI_LIST_LEN_

/* ---- the reader ------------------------------------------------------- */

/*
 * The current VMCB of an SVM @vcpu, or NULL if the pointer is not
 * plausible or the layout of struct vcpu_svm or of the VMCB fields the
 * caller reads (@group, layout.h) is refused; @checked: the caller's
 * per-vCPU memory of the last one found so (NULL at first).
 */
static __always_inline const struct vmcb *
vmlat_svm_vmcb(struct kvm_vcpu *vcpu, const void **checked, u32 group)
{
	struct vmlat_vcpu_svm *svm =
		container_of(vcpu, struct vmlat_vcpu_svm, vcpu);
	const struct vmcb *vmcb;

	if (unlikely(!vmlat_layout_ok(VMLAT_LAYOUT_SVM_VMCB | group)))
		return NULL;
	vmcb = READ_ONCE(svm->vmcb);

	/*
	 * A VMCB is a page of its own (alloc_page()), in the direct map.
	 * virt_addr_valid() is a function call: checked once per pointer
	 * (a vCPU has one VMCB, two while it runs a nested guest).
	 */
	if (unlikely(vmcb != *checked)) {
		if (!vmcb || !PAGE_ALIGNED(vmcb) || !virt_addr_valid(vmcb))
			return NULL;
		*checked = vmcb;
	}
	return vmcb;
}

static __always_inline int vmlat_read_svm_exit_code(struct kvm_vcpu *vcpu,
						    u64 *code,
						    const void **checked)
{
	const struct vmcb *vmcb = vmlat_svm_vmcb(vcpu, checked,
						 VMLAT_LAYOUT_SVM_EXIT);

	if (!vmcb)
		return -EOPNOTSUPP;
	*code = READ_ONCE(vmcb->control.exit_code);
	return 0;
}

static __always_inline int vmlat_read_vmx_exit_code(struct kvm_vcpu *vcpu,
						    u64 *code)
{
	unsigned long value = 0;
	u8 failed = 1;

	/* Another CPU's current VMCS would be another vCPU's (or none). */
	if (READ_ONCE(vcpu->cpu) != smp_processor_id())
		return -EOPNOTSUPP;

	/*
	 * VMREAD: CF=1 (VMfailInvalid: no current VMCS, e.g. Hyper-V's
	 * enlightened VMCS) or ZF=1 (VMfailValid) is a failure, "setna"
	 * records it. A fault (#UD: VMX off) skips to 2: via the exception
	 * table and leaves failed = 1.
	 */
	asm volatile("1: vmread %[field], %[value]\n\t"
		     "setna %[failed]\n\t"
		     "2:\n\t"
		     _ASM_EXTABLE(1b, 2b)
		     : [value] "+r" (value), [failed] "+qm" (failed)
		     : [field] "r" ((unsigned long)VM_EXIT_REASON)
		     : "cc");
	if (failed)
		return -EOPNOTSUPP;
	*code = (u32)value;
	return 0;
}

/**
 * vmlat_read_exit_code() - the raw code of the VM exit being traced
 * @vcpu:	kvm_exit's vcpu argument
 * @isa:	kvm_exit's isa argument (VMLAT_ISA_VMX or VMLAT_ISA_SVM)
 * @code:	set to the raw exit code on success, for vmlat_exit_slot()
 * @checked:	the caller's per-vCPU memory of the last VMCB pointer
 *		found plausible (NULL at first)
 *
 * SVM: the VMCB's EXITCODE field (32 bits, as KVM and ftrace use it; an
 * SVM_EXIT_ERR reads as 0xffffffff). VMX: the 32-bit VM_EXIT_REASON
 * field of the current VMCS, flag bits included. No locks, no sleeping,
 * no printing: a few loads, or one VMREAD.
 *
 * Context: the kvm_exit tracepoint probe only, which runs with preemption
 * off on the vCPU's CPU right after the VM exit. For VMX nowhere else:
 * the VMREAD reads whatever VMCS is current on this CPU. For SVM the VMCB
 * holds the last exit's code until the next VMRUN, but only kvm_exit
 * guarantees it is the exit being traced.
 * Return: 0, or -EOPNOTSUPP if @isa is neither, the VMCB pointer is not
 * plausible, @vcpu is not on this CPU, or the VMREAD failed or faulted:
 * count the exit as undecoded.
 */
static __always_inline int vmlat_read_exit_code(struct kvm_vcpu *vcpu, u32 isa,
						u64 *code, const void **checked)
{
	switch (isa) {
	case VMLAT_ISA_SVM:
		return vmlat_read_svm_exit_code(vcpu, code, checked);
	case VMLAT_ISA_VMX:
		return vmlat_read_vmx_exit_code(vcpu, code);
	default:
		return -EOPNOTSUPP;
	}
}

/* Every group an SVM exit reads from the VMCB: its code, CR3 and CPL. */
#define VMLAT_LAYOUT_SVM_AT_EXIT					\
	(VMLAT_LAYOUT_SVM_VMCB | VMLAT_LAYOUT_SVM_EXIT |		\
	 VMLAT_LAYOUT_GUEST_CR3 | VMLAT_LAYOUT_SVM_CR3 |		\
	 VMLAT_LAYOUT_SVM_CPL)

/**
 * vmlat_svm_exit_vmcb() - the VMCB of an SVM exit, for all it reads there
 * @vcpu:	kvm_exit's vcpu, of an SVM guest
 * @checked:	as for vmlat_read_exit_code()
 *
 * kvm_exit's probe reads the exit code, and the guest's CR3 and CPL, from
 * one VMCB: one pointer and one test of the layouts for the three (they
 * are confirmed together on every kernel vmlat runs on), not one each.
 *
 * Context: as vmlat_read_exit_code().
 * Return: the VMCB, or NULL if one of the groups is refused or the pointer
 * is not plausible: then each read goes its own way (vmlat_read_exit_code(),
 * vmlat_kvm_read_guest_cr3() with no VMCB).
 */
static __always_inline const struct vmcb *
vmlat_svm_exit_vmcb(struct kvm_vcpu *vcpu, const void **checked)
{
	return vmlat_svm_vmcb(vcpu, checked, VMLAT_LAYOUT_SVM_AT_EXIT);
}

/**
 * vmlat_kvm_in_l2() - whether @vcpu runs its L2 guest
 * @vcpu:	a vCPU, in its thread's kvm_entry or kvm_exit probe
 *
 * is_guest_mode() as KVM reads it (arch/x86/kvm/kvm_cache_regs.h, not a
 * public header): HF_GUEST_MASK in the vCPU's hflags, in
 * <linux/kvm_host.h>'s struct kvm_vcpu_arch on 6.1 and 6.12.
 */
static __always_inline bool vmlat_kvm_in_l2(const struct kvm_vcpu *vcpu)
{
	return vcpu->arch.hflags & HF_GUEST_MASK;
}

/* ---- the clock-sync hypercall: its caller's CPL, the reply ------------ */

/**
 * vmlat_kvm_vcpu_loaded() - whether the current thread has @vcpu loaded
 * @vcpu:	a struct kvm_vcpu pointer, possibly stale
 *
 * KVM registers the vCPU's preempt notifier on its thread from vcpu_load()
 * to vcpu_put(), around every KVM_RUN; only the thread itself changes its
 * own list. Found there, @vcpu is alive and runs in this thread: it may be
 * dereferenced until the probe returns. Only its address is computed
 * otherwise. False while the notifier's offset is refused (layout.h).
 *
 * Context: any, preemption off; a few loads.
 */
static __always_inline bool vmlat_kvm_vcpu_loaded(const void *vcpu)
{
#ifdef CONFIG_PREEMPT_NOTIFIERS
	const struct preempt_notifier *want =
		&((const struct kvm_vcpu *)vcpu)->preempt_notifier;
	struct preempt_notifier *pn;

	if (unlikely(!vmlat_layout_ok(VMLAT_LAYOUT_LOADED)))
		return false;

	hlist_for_each_entry(pn, &current->preempt_notifiers, link)
		if (pn == want)
			return true;
#endif
	return false;
}

/*
 * VMREAD of @field of this CPU's current VMCS; false if it failed (no
 * current VMCS) or faulted (VMX off).
 */
static __always_inline bool vmlat_vmread(unsigned long field,
					 unsigned long *value)
{
	u8 failed = 1;

	*value = 0;
	asm volatile("1: vmread %[field], %[value]\n\t"
		     "setna %[failed]\n\t"
		     "2:\n\t"
		     _ASM_EXTABLE(1b, 2b)
		     : [value] "+r" (*value), [failed] "+qm" (failed)
		     : [field] "r" (field)
		     : "cc");
	return !failed;
}

/* SVM's CPL at the exit, from the current VMCB (svm_get_cpl()'s field). */
static __always_inline int vmlat_svm_cpl(const struct vmcb *vmcb)
{
	return READ_ONCE(vmcb->save.cpl) & 3;
}

/**
 * vmlat_kvm_read_cpl() - the privilege level the guest ran at when it exited
 * @vcpu:	a vCPU loaded by the current thread (vmlat_kvm_vcpu_loaded())
 *		handling its exit
 * @isa:	the exit's VMLAT_ISA_SVM or VMLAT_ISA_VMX
 * @checked:	the caller's per-vCPU memory of the last VMCB pointer found
 *		plausible (as for vmlat_read_exit_code())
 *
 * What KVM's own get_cpl() reads, with public headers:
 *  - SVM (svm_get_cpl()): the current VMCB's save.cpl, KVM's copy of the
 *    CPL at the exit;
 *  - VMX (vmx_get_cpl()): the DPL of the guest's SS, from the access
 *    rights of the current VMCS: in the vCPU's thread, with preemption
 *    off and the vCPU loaded, that VMCS is the vCPU's (KVM loads it on
 *    every CPU the thread moves to). KVM says 0 for a real-mode guest it
 *    runs in vm86 mode (no unrestricted guest); this reads SS's DPL, 3:
 *    such a guest cannot make the 64-bit call anyway.
 *
 * Context: a KVM probe in @vcpu's thread during its exit handling (the
 * kvm_exit and kvm_hypercall tracepoints, or its sched_switch before a late
 * kvm_exit: vmlat_kvm_read_guest_cr3()), preemption off.
 * Return: 0 to 3, or -EOPNOTSUPP if it cannot be read (@isa unknown, the
 * VMCB pointer not plausible, @vcpu not on this CPU, the VMREAD failed).
 */
static __always_inline int vmlat_kvm_read_cpl(struct kvm_vcpu *vcpu, u32 isa,
					      const void **checked)
{
	const struct vmcb *vmcb;
	unsigned long ar;

	switch (isa) {
	case VMLAT_ISA_SVM:
		vmcb = vmlat_svm_vmcb(vcpu, checked, VMLAT_LAYOUT_SVM_CPL);
		if (!vmcb)
			return -EOPNOTSUPP;
		return vmlat_svm_cpl(vmcb);
	case VMLAT_ISA_VMX:
		if (READ_ONCE(vcpu->cpu) != smp_processor_id() ||
		    !vmlat_vmread(GUEST_SS_AR_BYTES, &ar))
			return -EOPNOTSUPP;
		return VMX_AR_DPL(ar);
	default:
		return -EOPNOTSUPP;
	}
}

/**
 * vmlat_kvm_read_guest_cr3() - the guest's CR3 at the exit being traced
 * @vcpu:	kvm_exit's vcpu, running its L1 guest (not vmlat_kvm_in_l2())
 * @isa:	kvm_exit's isa
 * @checked:	the caller's memory of the last VMCB pointer found plausible
 *		(as for vmlat_read_exit_code())
 * @vmcb:	for SVM, the exit's VMCB from vmlat_svm_exit_vmcb() (its
 *		layouts confirmed), or NULL to look for it here
 * @cr3:	set to the guest's CR3 on success
 * @cpl:	set to its CPL too where the same read gives it (SVM's VMCB,
 *		as vmlat_kvm_read_cpl() reads it), else left as it was
 *
 * Where the guest's page-table root is, with public headers:
 *  - with two-dimensional paging (NPT/EPT: the vCPU's MMU role is
 *    direct), guest CR3 writes do not exit and KVM's vcpu->arch.cr3 is
 *    only refreshed when KVM needs it; the hardware saved the guest's CR3
 *    at this exit: SVM in the VMCB's save.cr3 (public <asm/svm.h>, written
 *    at every #VMEXIT), VMX in the VMCS's GUEST_CR3 field, read with
 *    VMREAD as vmlat_read_exit_code() reads the exit reason;
 *  - with shadow paging every guest CR3 write exits and KVM keeps it in
 *    vcpu->arch.cr3 (<asm/kvm_host.h>), while the hardware field holds
 *    KVM's shadow root.
 * A guest whose state is protected (SEV-ES, TDX) has neither.
 *
 * Context: the kvm_exit tracepoint probe, as vmlat_read_exit_code(); or,
 * where kvm_exit is traced late (exit_late.h), the sched_switch that takes
 * the vCPU's thread off CPU after the exit and before its kvm_exit (the
 * hardware saved the exit's state; the vCPU is still loaded there).
 * Return: 0, or -EOPNOTSUPP if it cannot be read (protected state, @isa
 * unknown, VMCB pointer not plausible, @vcpu not on this CPU, VMREAD
 * failed).
 */
static __always_inline int vmlat_kvm_read_guest_cr3(struct kvm_vcpu *vcpu,
						    u32 isa,
						    const void **checked,
						    const struct vmcb *vmcb,
						    u64 *cr3, int *cpl)
{
	unsigned long v;

	if (unlikely((!vmcb && !vmlat_layout_ok(VMLAT_LAYOUT_GUEST_CR3)) ||
		     vmlat_kvm_state_protected(vcpu)))
		return -EOPNOTSUPP;
	if (unlikely(!vmlat_kvm_mmu_direct(vcpu))) {
		*cr3 = READ_ONCE(vcpu->arch.cr3);
		return 0;
	}
	if (likely(vmcb)) {
		*cr3 = READ_ONCE(vmcb->save.cr3);
		*cpl = vmlat_svm_cpl(vmcb);
		return 0;
	}
	switch (isa) {
	case VMLAT_ISA_SVM:
		vmcb = vmlat_svm_vmcb(vcpu, checked, VMLAT_LAYOUT_SVM_CR3);
		if (!vmcb)
			return -EOPNOTSUPP;
		*cr3 = READ_ONCE(vmcb->save.cr3);
		if (likely(vmlat_layout_ok(VMLAT_LAYOUT_SVM_CPL)))
			*cpl = vmlat_svm_cpl(vmcb);
		return 0;
	case VMLAT_ISA_VMX:
		if (READ_ONCE(vcpu->cpu) != smp_processor_id() ||
		    !vmlat_vmread(GUEST_CR3, &v))
			return -EOPNOTSUPP;
		*cr3 = v;
		return 0;
	default:
		return -EOPNOTSUPP;
	}
}

/**
 * vmlat_kvm_set_rbx() - set the guest's RBX for its next entry
 * @vcpu:	a vCPU loaded by the current thread, handling an exit
 * @val:	the value
 *
 * kvm_rbx_write() (arch/x86/kvm/kvm_cache_regs.h, not a public header)
 * without its dirty mark: RBX is never lazily loaded, and both vendors'
 * entry code (svm/vmenter.S, vmx/vmenter.S in 6.1 and 6.12) load every GPR
 * but RAX, RSP and RIP from vcpu->arch.regs[] (public <asm/kvm_host.h>)
 * on every entry. After KVM's kvm_hypercall tracepoint, KVM writes RAX
 * (the return value) and RIP, not RBX.
 *
 * Context: as vmlat_kvm_read_cpl().
 */
static __always_inline void vmlat_kvm_set_rbx(struct kvm_vcpu *vcpu, u64 val)
{
	WRITE_ONCE(vcpu->arch.regs[VCPU_REGS_RBX], val);
}

/**
 * vmlat_kvm_set_page() - set the guest's RCX, RDX, RSI and RDI for its
 * next entry: a steal call's page (vmlat_hypercall.h)
 * @vcpu:	a vCPU loaded by the current thread, handling an exit
 * @val:	the four values
 *
 * As vmlat_kvm_set_rbx(): KVM's hypercall code writes none of them after
 * its tracepoint, and the entry code loads them all from
 * vcpu->arch.regs[].
 *
 * Context: as vmlat_kvm_read_cpl().
 */
static __always_inline void vmlat_kvm_set_page(struct kvm_vcpu *vcpu,
					       const u64 val[4])
{
	WRITE_ONCE(vcpu->arch.regs[VCPU_REGS_RCX], val[0]);
	WRITE_ONCE(vcpu->arch.regs[VCPU_REGS_RDX], val[1]);
	WRITE_ONCE(vcpu->arch.regs[VCPU_REGS_RSI], val[2]);
	WRITE_ONCE(vcpu->arch.regs[VCPU_REGS_RDI], val[3]);
}

/**
 * vmlat_kvm_read_rax() - the guest's RAX at the exit being traced
 * @vcpu:	as for vmlat_kvm_read_cpl()
 * @isa:	kvm_exit's isa
 * @checked:	as for vmlat_kvm_read_cpl()
 * @rax:	set to the guest's RAX on success
 *
 * Where the hardware left it, as vmlat_kvm_read_guest_cr3() reads CR3:
 *  - SVM: the current VMCB's save.rax (public <asm/svm.h>, written at every
 *    #VMEXIT; svm_vcpu_run() copies it to vcpu->arch.regs[] itself), the
 *    VMCB of the level that exited (vmcb02 while the vCPU runs L2);
 *  - VMX: vcpu->arch.regs[VCPU_REGS_RAX], where __vmx_vcpu_run() saved it
 *    with the other GPRs (VMX has no RAX field).
 *
 * Context: as vmlat_kvm_read_cpl(), in the kvm_exit probe.
 * Return: 0, or -EOPNOTSUPP if it cannot be read (protected state, @isa
 * unknown, VMCB pointer not plausible).
 */
static __always_inline int vmlat_kvm_read_rax(struct kvm_vcpu *vcpu, u32 isa,
					      const void **checked, u64 *rax)
{
	const struct vmcb *vmcb;

	if (unlikely(!vmlat_layout_ok(VMLAT_LAYOUT_REGS) ||
		     vmlat_kvm_state_protected(vcpu)))
		return -EOPNOTSUPP;
	switch (isa) {
	case VMLAT_ISA_SVM:
		vmcb = vmlat_svm_vmcb(vcpu, checked, VMLAT_LAYOUT_SVM_RAX);
		if (!vmcb)
			return -EOPNOTSUPP;
		*rax = READ_ONCE(vmcb->save.rax);
		return 0;
	case VMLAT_ISA_VMX:
		*rax = READ_ONCE(vcpu->arch.regs[VCPU_REGS_RAX]);
		return 0;
	default:
		return -EOPNOTSUPP;
	}
}

/**
 * vmlat_kvm_read_rdi() - the guest's RDI at this exit
 * @vcpu:	a vCPU loaded by the current thread, handling an exit
 *
 * kvm_rdi_read() (kvm_cache_regs.h) without its mode mask: as RBX in
 * vmlat_kvm_set_rbx(), the exit code of both vendors saved every GPR but
 * RAX, RSP and RIP into vcpu->arch.regs[]. The kvm_hypercall tracepoint
 * gives RBX, RCX, RDX and RSI; a name hypercall also has RDI.
 *
 * Context: as vmlat_kvm_read_cpl().
 */
static __always_inline u64 vmlat_kvm_read_rdi(struct kvm_vcpu *vcpu)
{
	return READ_ONCE(vcpu->arch.regs[VCPU_REGS_RDI]);
}

/**
 * vmlat_kvm_vcpu_never_ran() - whether @vcpu never completed a VM entry
 * @vcpu:	a live vCPU
 *
 * KVM's own test (kvm_vcpu_has_run() in 6.12's arch/x86/kvm/x86.h, open
 * coded in 6.1's cpuid.c): struct kvm_vcpu_arch.last_vmentry_cpu
 * (<asm/kvm_host.h>, 6.1 and 6.12) is -1 from kvm_arch_vcpu_create()
 * until vcpu_enter_guest() returns from the first VM entry, and a CPU
 * number ever after. Its kvm_entry sees -1 exactly on a new vCPU's first
 * entry (more than once if KVM re-enters at once from the fastpath), so a
 * vCPU at the address of one that ran is another vCPU.
 *
 * In 5.10 last_vmentry_cpu is unsigned and 0 until the first entry, a
 * CPU number too: there, stat.exits, which vcpu_enter_guest() counts
 * right after every VM exit, is 0 exactly until the first exit.
 */
static __always_inline bool vmlat_kvm_vcpu_never_ran(const struct kvm_vcpu *vcpu)
{
	if (!is_signed_type(typeof(vcpu->arch.last_vmentry_cpu)))
		return !READ_ONCE(vcpu->stat.exits);
	return READ_ONCE(vcpu->arch.last_vmentry_cpu) < 0;
}

/**
 * vmlat_kvm_vcpu_at() - the vCPU of @kvm whose vcpu_idx is @idx
 * @kvm:	a VM
 * @idx:	an index
 *
 * kvm_get_vcpu() (<linux/kvm_host.h>; its xa_load() takes the RCU read
 * lock itself) after the bound check that 6.1's lacks: vCPUs are only
 * added, online_vcpus counts them, and they live as long as their VM.
 *
 * Context: a thread running a vCPU of @kvm (it holds a reference on the
 * VM), any context.
 * Return: the vCPU, or NULL if @kvm has no vCPU @idx.
 */
static inline struct kvm_vcpu *vmlat_kvm_vcpu_at(struct kvm *kvm, int idx)
{
	if (idx < 0 || idx >= atomic_read(&kvm->online_vcpus))
		return NULL;
	return kvm_get_vcpu(kvm, idx);
}

/*
 * The L1 TSC scaling ratios that mean "not scaled": 1 when the CPU cannot
 * scale the TSC (no fractional bits), else 1 in KVM's fixed point:
 * kvm_caps.default_tsc_scaling_ratio = 1 << tsc_scaling_ratio_frac_bits,
 * 32 bits on SVM, 48 on VMX (svm_hardware_setup(), vmx's hardware_setup()
 * in 6.1 and 6.12).
 */
static __always_inline bool vmlat_kvm_tsc_unscaled(u64 ratio)
{
	return ratio == 1 || ratio == 1ULL << 32 || ratio == 1ULL << 48;
}

/**
 * vmlat_kvm_exit_tsc() - the host TSC at the vCPU's last VM exit
 * @vcpu:	a vCPU, in its thread, between the VM exit and the next
 *		VM entry
 * @tsc:	set to the host TSC read right after the exit
 *
 * vcpu_enter_guest() (arch/x86/kvm/x86.c, 6.1 and 6.12) stores, right
 * after the VM exit and before it enables interrupts,
 *
 *	vcpu->arch.last_guest_tsc = kvm_read_l1_tsc(vcpu, rdtsc());
 *
 * that is l1_tsc_offset + rdtsc() scaled by l1_tsc_scaling_ratio; all
 * three are in <linux/kvm_host.h>'s struct kvm_vcpu_arch. Unscaled, the
 * host TSC is the difference. The offset changes after the exit only when
 * KVM loads the vCPU on a host with an unstable TSC (kvm_arch_vcpu_load())
 * or when the guest writes its TSC (while KVM handles that exit): the
 * caller checks that the result falls inside the guest time it ends.
 *
 * Return: 0, or -EOPNOTSUPP if the vCPU's TSC is scaled or the three
 * members' layout is refused (layout.h).
 */
static __always_inline int vmlat_kvm_exit_tsc(const struct kvm_vcpu *vcpu,
					      u64 *tsc)
{
	if (!vmlat_layout_ok(VMLAT_LAYOUT_EXIT_TSC) ||
	    !vmlat_kvm_tsc_unscaled(vmlat_kvm_l1_tsc_ratio(vcpu)))
		return -EOPNOTSUPP;
	*tsc = READ_ONCE(vcpu->arch.last_guest_tsc) -
	       READ_ONCE(vcpu->arch.l1_tsc_offset);
	return 0;
}

/**
 * vmlat_kvm_timer_deadline_tsc() - the host TSC at the deadline of the
 * vCPU's LAPIC timer, which just expired
 * @vcpu:	a vCPU, in its thread (vmlat_kvm_vcpu_loaded()), KVM making
 *		its timer's interrupt pending (kvm_apic_accept_irq)
 * @tsc:	set to the deadline on the host's TSC
 *
 * The guest TSC KVM's apic_timer_expired() took as the deadline
 * (lapic_timer.expired_tscdeadline), less the vCPU's TSC offset: the
 * guest's TSC is the host's plus the offset, unscaled.
 *
 * Return: 0; -EOPNOTSUPP if the vCPU's TSC is scaled, or the members'
 * layout is refused (layout.h); -ENOENT if KVM set no deadline (a one-shot
 * or periodic timer on an hrtimer).
 */
static __always_inline int
vmlat_kvm_timer_deadline_tsc(const struct kvm_vcpu *vcpu, u64 *tsc)
{
	const struct vmlat_kvm_lapic *apic;
	u64 deadline;

	if (!vmlat_layout_ok(VMLAT_LAYOUT_LAPIC | VMLAT_LAYOUT_DEADLINE |
			     VMLAT_LAYOUT_EXIT_TSC) ||
	    !vmlat_kvm_tsc_unscaled(vmlat_kvm_l1_tsc_ratio(vcpu)))
		return -EOPNOTSUPP;
	apic = (const struct vmlat_kvm_lapic *)READ_ONCE(vcpu->arch.apic);
	if (!apic)
		return -ENOENT;
	deadline = READ_ONCE(apic->lapic_timer.expired_tscdeadline);
	if (!deadline)
		return -ENOENT;
	*tsc = deadline - READ_ONCE(vcpu->arch.l1_tsc_offset);
	return 0;
}

/**
 * vmlat_kvm_halt_window() - the poll window KVM gives @vcpu's halts
 * @vcpu:	a vCPU running in this thread (vmlat_kvm_vcpu_loaded())
 * @may_poll:	set to whether its guest leaves polling on: bit 0 of
 *		MSR_KVM_POLL_CONTROL, which KVM's kvm_arch_no_poll() reads
 *
 * Return: vcpu->halt_poll_ns, 0 if closed; 0 with @may_poll false if
 * the two members' layout is refused (layout.h).
 */
static __always_inline u32 vmlat_kvm_halt_window(const struct kvm_vcpu *vcpu,
						 bool *may_poll)
{
	if (!vmlat_layout_ok(VMLAT_LAYOUT_HALT)) {
		*may_poll = false;
		return 0;
	}
	*may_poll = READ_ONCE(vcpu->arch.msr_kvm_poll_control) & 1;
	return READ_ONCE(vcpu->halt_poll_ns);
}

#endif /* _VMLAT_KVM_X86_H */
