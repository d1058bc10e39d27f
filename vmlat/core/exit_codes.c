// SPDX-License-Identifier: GPL-2.0
/*
 * VM-exit reasons: names and a compact slot index (pure logic).
 *
 * vmlat_exit_slot() runs in the kvm_exit probe, for every exit: it is a
 * table lookup, with a short scan only for the few SVM codes above 0xff.
 * The tables are generated from the lists in exit_codes.h.
 */
#include "exit_codes.h"

/* VM_EXIT_REASON bits 29:27: they qualify an exit, not change its reason. */
#define VMLAT_VMX_QUALIFIER_BITS	0x38000000U
#define VMLAT_VMX_BASIC_MASK	0xffffU

/* SVM intercept codes are 0x000..0x0ff; the rest are scanned. */
#define VMLAT_SVM_INTERCEPT_CODES	0x100

/* SVM_EXIT_ERR as KVM and ftrace see it: the low 32 bits of EXITCODE. */
#define VMLAT_SVM_EXIT_ERR	0xffffffffU

/**
 * struct vmlat_exit_desc - one exit reason
 * @code:	raw code as vmlat_exit_slot() accepts it (VMX: with bit 31
 *		for the VM-entry failure reasons)
 * @isa:	VMLAT_ISA_VMX or VMLAT_ISA_SVM
 * @name:	uapi macro name without prefix
 * @ftrace_name: the uapi list's string, as ftrace prints it
 */
struct vmlat_exit_desc {
	u32 code;
	u32 isa;
	const char *name;
	const char *ftrace_name;
};

#define VMLAT_VMX_DESC_(name, code, ftrace, ...)			\
	[VMLAT_EXIT_VMX_##name] = { code, VMLAT_ISA_VMX, #name, ftrace },
#define VMLAT_SVM_DESC_(name, code, ftrace, ...)			\
	[VMLAT_EXIT_SVM_##name] = { code, VMLAT_ISA_SVM, #name, ftrace },

static const struct vmlat_exit_desc vmlat_exits[VMLAT_EXIT_NR_SLOTS] = {
	VMLAT_VMX_EXITS(VMLAT_VMX_DESC_)
	VMLAT_SVM_EXITS(VMLAT_SVM_DESC_)
};

/*
 * Reverse indexes: slot + 1 by basic reason / intercept code, 0 for
 * codes without a name. A code listed twice would fail the round-trip
 * test.
 */
#define VMLAT_VMX_REV_(name, code, ...)				\
	[(code) & VMLAT_VMX_BASIC_MASK] = VMLAT_EXIT_VMX_##name + 1,
#define VMLAT_SVM_REV_(name, code, ...)				\
	[code] = VMLAT_EXIT_SVM_##name + 1,

static const u8 vmx_slot_by_basic[] = {
	VMLAT_VMX_EXITS(VMLAT_VMX_REV_)
};

/*
 * vmlat_exit_slot()'s tables: a VMX code with bit 31 set is not below
 * VMLAT_EXIT_FAST_NR, so the VM-entry failure reasons (listed with it)
 * have no entry in VMX's. SVM's is its reverse index of intercepts.
 */
#define VMLAT_VMX_FAST_(name, code, ...)				\
	[(code) & VMLAT_VMX_BASIC_MASK] =				\
		(code) & VMLAT_VMX_FAILED_VMENTRY ? 0 : VMLAT_EXIT_VMX_##name + 1,

const u8 vmlat_exit_slot_fast[2][VMLAT_EXIT_FAST_NR] = {
	[VMLAT_ISA_VMX - 1] = { VMLAT_VMX_EXITS(VMLAT_VMX_FAST_) },
	[VMLAT_ISA_SVM - 1] = { VMLAT_SVM_EXITS_INTERCEPTS(VMLAT_SVM_REV_) },
};

_Static_assert(VMLAT_SVM_INTERCEPT_CODES == VMLAT_EXIT_FAST_NR,
	       "SVM's intercepts are its fast codes");

enum {
	VMLAT_SVM_FIRST_OTHER = VMLAT_EXIT_SVM_FIRST +
		(0 VMLAT_SVM_EXITS_INTERCEPTS(VMLAT_EXIT_COUNT_)),
};

const u8 vmlat_exit_slot_flag[VMLAT_EXIT_NR_SLOTS] = {
	[VMLAT_EXIT_VMX_HLT] = VMLAT_EXITF_HLT,
	[VMLAT_EXIT_SVM_HLT] = VMLAT_EXITF_HLT,
	[VMLAT_EXIT_SVM_IDLE_HLT] = VMLAT_EXITF_HLT,
	[VMLAT_EXIT_SVM_VMRUN] = VMLAT_EXITF_VMENTER,
	[VMLAT_EXIT_VMX_VMLAUNCH] = VMLAT_EXITF_VMENTER,
	[VMLAT_EXIT_VMX_VMRESUME] = VMLAT_EXITF_VMENTER,
	[VMLAT_EXIT_SVM_VMMCALL] = VMLAT_EXITF_HYPERCALL,
	[VMLAT_EXIT_VMX_VMCALL] = VMLAT_EXITF_HYPERCALL,
	[VMLAT_EXIT_VMX_PAUSE_INSTRUCTION] = VMLAT_EXITF_PAUSE,
	[VMLAT_EXIT_SVM_PAUSE] = VMLAT_EXITF_PAUSE,
	[VMLAT_EXIT_VMX_PREEMPTION_TIMER] = VMLAT_EXITF_PTIMER,
};

_Static_assert(VMLAT_EXIT_NR_SLOTS < 255, "slot + 1 must fit in a u8");

static bool exit_slot_valid(int slot)
{
	return slot >= 0 && slot < VMLAT_EXIT_NR_SLOTS;
}

static int vmx_exit_slot(u64 raw_code)
{
	u64 code = raw_code & ~(u64)VMLAT_VMX_QUALIFIER_BITS;
	u64 basic = code & VMLAT_VMX_BASIC_MASK;
	int slot;

	if (basic >= ARRAY_SIZE(vmx_slot_by_basic) || !vmx_slot_by_basic[basic])
		return -1;
	slot = vmx_slot_by_basic[basic] - 1;
	/* Bit 31 must match the reason; reserved bits must be clear. */
	return code == vmlat_exits[slot].code ? slot : -1;
}

static int svm_exit_slot(u64 raw_code)
{
	int slot;

	if (raw_code < VMLAT_SVM_INTERCEPT_CODES)	/* its fast table */
		return vmlat_exit_slot(VMLAT_ISA_SVM, raw_code);
	if (raw_code == U64_MAX)	/* SVM_EXIT_ERR as a 64-bit value */
		raw_code = VMLAT_SVM_EXIT_ERR;
	for (slot = VMLAT_SVM_FIRST_OTHER; slot < VMLAT_EXIT_NR_SLOTS; slot++) {
		if (vmlat_exits[slot].code == raw_code)
			return slot;
	}
	return -1;
}

/**
 * vmlat_exit_slot_slow() - vmlat_exit_slot() for every code
 * @isa:	as for vmlat_exit_slot()
 * @raw_code:	as for vmlat_exit_slot()
 *
 * Context: any.
 * Return: as vmlat_exit_slot().
 */
int vmlat_exit_slot_slow(u32 isa, u64 raw_code)
{
	switch (isa) {
	case VMLAT_ISA_VMX:
		return vmx_exit_slot(raw_code);
	case VMLAT_ISA_SVM:
		return svm_exit_slot(raw_code);
	default:
		return -1;
	}
}

/**
 * vmlat_exit_slot_name() - the name of a slot, as vmlat prints it
 * @slot:	a slot from vmlat_exit_slot()
 *
 * Context: any.
 * Return: the uapi macro name without its prefix ("HLT", "IOIO",
 * "EPT_VIOLATION"), or NULL if @slot is not a slot.
 */
const char *vmlat_exit_slot_name(int slot)
{
	return exit_slot_valid(slot) ? vmlat_exits[slot].name : NULL;
}

/**
 * vmlat_exit_slot_ftrace_name() - the name of a slot, as ftrace prints it
 * @slot:	a slot from vmlat_exit_slot()
 *
 * Context: any.
 * Return: the string of the kernel's VMX_EXIT_REASONS/SVM_EXIT_REASONS
 * list that ftrace's kvm_exit prints as "reason" ("HLT", "io",
 * "hypercall"), or NULL if @slot is not a slot.
 */
const char *vmlat_exit_slot_ftrace_name(int slot)
{
	return exit_slot_valid(slot) ? vmlat_exits[slot].ftrace_name : NULL;
}

/**
 * vmlat_exit_slot_isa() - the ISA of a slot
 * @slot:	a slot from vmlat_exit_slot()
 *
 * Context: any.
 * Return: VMLAT_ISA_VMX or VMLAT_ISA_SVM, or 0 if @slot is not a slot.
 */
u32 vmlat_exit_slot_isa(int slot)
{
	return exit_slot_valid(slot) ? vmlat_exits[slot].isa : 0;
}

/**
 * vmlat_exit_slot_code() - the raw exit code of a slot
 * @slot:	a slot from vmlat_exit_slot()
 *
 * The code maps back to @slot: vmlat_exit_slot(isa, code) == slot. For
 * the VMX VM-entry failure reasons it includes bit 31 (0x80000021), for
 * SVM_EXIT_ERR it is 0xffffffff.
 *
 * Context: any.
 * Return: the code, or 0 if @slot is not a slot (check the ISA).
 */
u64 vmlat_exit_slot_code(int slot)
{
	return exit_slot_valid(slot) ? vmlat_exits[slot].code : 0;
}

/**
 * vmlat_exit_is_hlt() - whether an exit is the guest executing HLT
 * @isa:	VMLAT_ISA_VMX or VMLAT_ISA_SVM
 * @raw_code:	as for vmlat_exit_slot()
 *
 * Context: any.
 * Return: true for EXIT_REASON_HLT (VMX), SVM_EXIT_HLT and
 * SVM_EXIT_IDLE_HLT (SVM) only.
 */
bool vmlat_exit_is_hlt(u32 isa, u64 raw_code)
{
	return vmlat_exit_slot_is_hlt(vmlat_exit_slot(isa, raw_code));
}

/**
 * vmlat_exit_isa_name() - the name of an ISA, as vmlat prints it
 * @isa:	kvm_exit's isa argument
 *
 * Context: any.
 * Return: "vmx", "svm", or NULL for any other value.
 */
const char *vmlat_exit_isa_name(u32 isa)
{
	switch (isa) {
	case VMLAT_ISA_VMX:
		return "vmx";
	case VMLAT_ISA_SVM:
		return "svm";
	default:
		return NULL;
	}
}
