// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for vmlat/core/exit_codes.c: exit reason names and slots.
 *
 * Besides the table-driven cases, two kinds of check tie the tables to
 * the kernel:
 *  - vmlat_exits_match_uapi_lists compares every slot with the kernel's
 *    VMX_EXIT_REASONS and SVM_EXIT_REASONS lists wherever this file is
 *    compiled with them: in the kernel (the headers of the kernel it is
 *    built for), and in userspace when <asm/svm.h> and <asm/vmx.h> exist
 *    (linux-libc-dev). To check another kernel's lists, install its uapi
 *    headers and point the userspace build at them:
 *	make -C $SRC O=/tmp/hdr/build ARCH=x86 \
 *		INSTALL_HDR_PATH=/tmp/hdr/usr headers_install
 *	make -C selftests/unit OUTPUT=/tmp/hdr/unit \
 *		TESTS=$PWD/vmlat/core/exit_codes_test.c \
 *		EXTRA_CFLAGS=-I/tmp/hdr/usr/include run
 *    (done for linux-source-6.1 and -6.12, whose lists are identical, and
 *    -7.2, whose lists have five more: VMLAT_EXITS_SINCE_6_12()).
 *    vmlat_exit_slot_names_are_uapi_macro_names needs no header: the
 *    macro names are stringified from exit_codes.h.
 *  - the replay cases count recorded sequences of raw exit codes, as a
 *    VMX host and an SVM host produce them, and compare the counts per
 *    name with what ftrace printed. VMX cannot run in the TCG test host,
 *    so this is what covers the VMX path end to end.
 */
#include <kunit/test.h>

#include "exit_codes.h"

#ifdef __KERNEL__
#include <asm/svm.h>
#include <asm/vmx.h>
#define HAVE_UAPI_EXIT_LISTS 1
#elif defined(__has_include)
#if __has_include(<asm/kvm.h>) && __has_include(<asm/svm.h>) && \
	__has_include(<asm/vmx.h>)
#include <asm/kvm.h>		/* DE_VECTOR..., used by SVM_EXIT_REASONS */
#include <asm/svm.h>
#include <asm/vmx.h>
#define HAVE_UAPI_EXIT_LISTS 1
#endif
#endif
#ifndef HAVE_UAPI_EXIT_LISTS
#define HAVE_UAPI_EXIT_LISTS 0
#endif

#ifndef GFP_KERNEL
#define GFP_KERNEL 0
#endif

#define ISA_VMX	VMLAT_ISA_VMX
#define ISA_SVM	VMLAT_ISA_SVM
#define VMX_FAILED	VMLAT_VMX_FAILED_VMENTRY
#define VMX_ENCLAVE	0x08000000U	/* VM_EXIT_REASON bit 27 */

/* ---- known codes ------------------------------------------------------ */

struct known_case {
	u32 isa;
	u64 raw;
	const char *name;
	const char *ftrace_name;
};

static const struct known_case known_cases[] = {
	{ ISA_SVM, 0x07b, "IOIO", "io" },
	{ ISA_SVM, 0x078, "HLT", "hlt" },
	{ ISA_SVM, 0x072, "CPUID", "cpuid" },
	{ ISA_SVM, 0x081, "VMMCALL", "hypercall" },
	{ ISA_SVM, 0x060, "INTR", "interrupt" },
	{ ISA_SVM, 0x400, "NPF", "npf" },
	{ ISA_SVM, 0x07c, "MSR", "msr" },
	{ ISA_SVM, 0x000, "READ_CR0", "read_cr0" },
	{ ISA_SVM, 0x04e, "EXCP_PF", "PF excp" },
	{ ISA_SVM, 0x053, "EXCP_XM", "XF excp" },
	{ ISA_SVM, 0x0a2, "INVPCID", "invpcid" },
	{ ISA_SVM, 0x401, "AVIC_INCOMPLETE_IPI", "avic_incomplete_ipi" },
	{ ISA_SVM, 0x403, "VMGEXIT", "vmgexit" },
	{ ISA_SVM, 0x80000010, "VMGEXIT_PSC", "vmgexit_page_state_change" },
	{ ISA_SVM, 0xffffffff, "ERR", "invalid_guest_state" },
	{ ISA_SVM, U64_MAX, "ERR", "invalid_guest_state" },
	{ ISA_VMX, 0, "EXCEPTION_NMI", "EXCEPTION_NMI" },
	{ ISA_VMX, 1, "EXTERNAL_INTERRUPT", "EXTERNAL_INTERRUPT" },
	{ ISA_VMX, 12, "HLT", "HLT" },
	{ ISA_VMX, 10, "CPUID", "CPUID" },
	{ ISA_VMX, 18, "VMCALL", "VMCALL" },
	{ ISA_VMX, 30, "IO_INSTRUCTION", "IO_INSTRUCTION" },
	{ ISA_VMX, 48, "EPT_VIOLATION", "EPT_VIOLATION" },
	{ ISA_VMX, 49, "EPT_MISCONFIG", "EPT_MISCONFIG" },
	{ ISA_VMX, 52, "PREEMPTION_TIMER", "PREEMPTION_TIMER" },
	{ ISA_VMX, 75, "NOTIFY", "NOTIFY" },
	/* Qualifier bits 27..29 do not change the reason. */
	{ ISA_VMX, VMX_ENCLAVE | 1, "EXTERNAL_INTERRUPT", "EXTERNAL_INTERRUPT" },
	{ ISA_VMX, VMX_ENCLAVE | 48, "EPT_VIOLATION", "EPT_VIOLATION" },
	{ ISA_VMX, 0x38000000 | 30, "IO_INSTRUCTION", "IO_INSTRUCTION" },
	/* VM-entry failures: their own slots, bit 31 set. */
	{ ISA_VMX, VMX_FAILED | 33, "INVALID_STATE", "INVALID_STATE" },
	{ ISA_VMX, VMX_FAILED | 34, "MSR_LOAD_FAIL", "MSR_LOAD_FAIL" },
	{ ISA_VMX, VMX_FAILED | 41, "MCE_DURING_VMENTRY", "MCE_DURING_VMENTRY" },
};

static void known_case_desc(const struct known_case *c, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "%s 0x%llx %s",
		 c->isa == ISA_VMX ? "vmx" : "svm", (unsigned long long)c->raw,
		 c->name);
}

KUNIT_ARRAY_PARAM(known, known_cases, known_case_desc);

static void vmlat_exit_slot_names_known_codes(struct kunit *test)
{
	const struct known_case *c = test->param_value;
	int slot = vmlat_exit_slot(c->isa, c->raw);

	KUNIT_ASSERT_GE_MSG(test, slot, 0, "code not decoded");
	KUNIT_ASSERT_NOT_NULL_MSG(test, vmlat_exit_slot_name(slot),
				  "%s: slot %d name", c->name, slot);
	KUNIT_ASSERT_NOT_NULL_MSG(test, vmlat_exit_slot_ftrace_name(slot),
				  "%s: slot %d ftrace name", c->name, slot);
	KUNIT_EXPECT_STREQ_MSG(test, vmlat_exit_slot_name(slot), c->name,
			       "%s: slot %d name", c->name, slot);
	KUNIT_EXPECT_STREQ_MSG(test, vmlat_exit_slot_ftrace_name(slot),
			       c->ftrace_name, "%s: slot %d ftrace name",
			       c->name, slot);
	KUNIT_EXPECT_EQ_MSG(test, vmlat_exit_slot_isa(slot), c->isa,
			    "%s: slot %d ISA", c->name, slot);
}

/* ---- codes that must not be decoded ------------------------------------ */

struct unknown_case {
	const char *desc;
	u32 isa;
	u64 raw;
};

static const struct unknown_case unknown_cases[] = {
	{ "vmx gap 5", ISA_VMX, 5 },
	{ "vmx GETSEC 11, not in the list", ISA_VMX, 11 },
	{ "vmx 76, past the list", ISA_VMX, 76 },
	{ "vmx 0xffff", ISA_VMX, 0xffff },
	{ "vmx KVM's vmx->fail marker 0xdead", ISA_VMX, 0xdead },
	{ "vmx HLT with bit 31", ISA_VMX, VMX_FAILED | 12 },
	{ "vmx INVALID_STATE without bit 31", ISA_VMX, 33 },
	{ "vmx MCE_DURING_VMENTRY without bit 31", ISA_VMX, 41 },
	{ "vmx reserved bit 16", ISA_VMX, 0x10000 | 30 },
	{ "vmx reserved bit 26", ISA_VMX, 0x4000000 | 30 },
	{ "vmx reserved bit 30", ISA_VMX, 0x40000000 | 30 },
	{ "vmx above 32 bits", ISA_VMX, (1ULL << 32) | 12 },
	{ "vmx all ones", ISA_VMX, U64_MAX },
	{ "svm MWAIT_COND, not in the list", ISA_SVM, 0x08c },
	{ "svm CR1_WRITE_TRAP, not in the list", ISA_SVM, 0x091 },
	{ "svm 0x0a3", ISA_SVM, 0x0a3 },
	{ "svm 0x0ff", ISA_SVM, 0x0ff },
	{ "svm 0x100", ISA_SVM, 0x100 },
	{ "svm 0x404", ISA_SVM, 0x404 },
	{ "svm 0x80000000", ISA_SVM, 0x80000000 },
	{ "svm VMGEXIT_UNSUPPORTED_EVENT", ISA_SVM, 0x8000ffff },
	{ "svm SVM_EXIT_SW", ISA_SVM, 0xf0000000 },
	{ "svm 0xfffffffe", ISA_SVM, 0xfffffffe },
	{ "svm IOIO above 32 bits", ISA_SVM, (1ULL << 32) | 0x07b },
	{ "svm ERR low half only in the high half", ISA_SVM, 0xffffffff00000000ULL },
	{ "isa 0", 0, 0x078 },
	{ "isa 3", 3, 0x078 },
	{ "isa ~0", ~0U, 12 },
};

static void unknown_case_desc(const struct unknown_case *c, char *desc)
{
	strscpy(desc, c->desc, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(unknown, unknown_cases, unknown_case_desc);

static void vmlat_exit_slot_rejects_unknown_codes(struct kunit *test)
{
	const struct unknown_case *c = test->param_value;

	KUNIT_EXPECT_EQ_MSG(test, vmlat_exit_slot(c->isa, c->raw), -1,
			    "%s: slot", c->desc);
	KUNIT_EXPECT_FALSE_MSG(test, vmlat_exit_is_hlt(c->isa, c->raw),
			       "%s: HLT", c->desc);
}

/* ---- properties of every slot ------------------------------------------ */

static void vmlat_exit_slot_round_trips(struct kunit *test)
{
	int slot;

	for (slot = 0; slot < VMLAT_EXIT_NR_SLOTS; slot++) {
		u32 isa = vmlat_exit_slot_isa(slot);
		u64 code = vmlat_exit_slot_code(slot);

		KUNIT_EXPECT_EQ_MSG(test, vmlat_exit_slot(isa, code), slot,
				    "slot %d (%s) isa %u code 0x%llx", slot,
				    vmlat_exit_slot_name(slot), isa,
				    (unsigned long long)code);
	}
}

static void vmlat_exit_slot_isas_are_disjoint(struct kunit *test)
{
	int slot;

	KUNIT_EXPECT_GT(test, VMLAT_EXIT_VMX_NR, 0);
	KUNIT_EXPECT_GT(test, VMLAT_EXIT_SVM_NR, 0);
	for (slot = 0; slot < VMLAT_EXIT_NR_SLOTS; slot++) {
		bool vmx = slot < VMLAT_EXIT_SVM_FIRST;
		u32 isa = vmlat_exit_slot_isa(slot);
		u32 other = isa == ISA_VMX ? ISA_SVM : ISA_VMX;
		int cross = vmlat_exit_slot(other, vmlat_exit_slot_code(slot));

		KUNIT_EXPECT_EQ_MSG(test, isa, vmx ? ISA_VMX : ISA_SVM,
				    "slot %d", slot);
		/* The same number under the other ISA is another slot, if any. */
		KUNIT_EXPECT_NE_MSG(test, cross, slot, "slot %d", slot);
		if (cross >= 0)
			KUNIT_EXPECT_EQ_MSG(test, vmlat_exit_slot_isa(cross),
					    other, "slot %d", slot);
	}
}

/* Names are printed in whitespace-separated debugfs columns. */
static bool is_column_word(const char *s)
{
	if (!s || !*s)
		return false;
	for (; *s; s++) {
		if (!((*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
		      *s == '_'))
			return false;
	}
	return true;
}

static void vmlat_exit_slot_names_are_unique_words(struct kunit *test)
{
	int a, b;

	for (a = 0; a < VMLAT_EXIT_NR_SLOTS; a++) {
		const char *name = vmlat_exit_slot_name(a);

		KUNIT_EXPECT_TRUE_MSG(test, is_column_word(name),
				      "slot %d name \"%s\"", a, name);
		KUNIT_EXPECT_NOT_NULL_MSG(test, vmlat_exit_slot_ftrace_name(a),
					  "slot %d", a);
		if (!name)
			continue;
		for (b = a + 1; b < VMLAT_EXIT_NR_SLOTS; b++) {
			if (vmlat_exit_slot_isa(a) != vmlat_exit_slot_isa(b) ||
			    !vmlat_exit_slot_name(b))
				continue;
			KUNIT_EXPECT_STRNEQ_MSG(test, name,
						vmlat_exit_slot_name(b),
						"slots %d and %d", a, b);
		}
	}
}

static void vmlat_exit_slot_accessors_reject_bad_slots(struct kunit *test)
{
	static const int bad[] = { -1, VMLAT_EXIT_NR_SLOTS, 1000, -1000 };
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		KUNIT_EXPECT_NULL_MSG(test, vmlat_exit_slot_name(bad[i]),
				      "slot %d", bad[i]);
		KUNIT_EXPECT_NULL_MSG(test,
				      vmlat_exit_slot_ftrace_name(bad[i]),
				      "slot %d", bad[i]);
		KUNIT_EXPECT_EQ_MSG(test, vmlat_exit_slot_isa(bad[i]), 0U,
				    "slot %d", bad[i]);
		KUNIT_EXPECT_EQ_MSG(test, vmlat_exit_slot_code(bad[i]), 0ULL,
				    "slot %d", bad[i]);
	}
	KUNIT_EXPECT_STREQ(test, vmlat_exit_isa_name(ISA_VMX), "vmx");
	KUNIT_EXPECT_STREQ(test, vmlat_exit_isa_name(ISA_SVM), "svm");
	KUNIT_EXPECT_NULL(test, vmlat_exit_isa_name(0));
	KUNIT_EXPECT_NULL(test, vmlat_exit_isa_name(3));
}

static void vmlat_exit_is_hlt_only_for_hlt(struct kunit *test)
{
	int slot, hlts = 0;

	for (slot = 0; slot < VMLAT_EXIT_NR_SLOTS; slot++) {
		const char *name = vmlat_exit_slot_name(slot);
		bool hlt = vmlat_exit_is_hlt(vmlat_exit_slot_isa(slot),
					     vmlat_exit_slot_code(slot));

		KUNIT_ASSERT_NOT_NULL_MSG(test, name, "slot %d", slot);
		KUNIT_EXPECT_EQ_MSG(test, hlt, !strcmp(name, "HLT") ||
				    !strcmp(name, "IDLE_HLT"),
				    "slot %d (%s)", slot, name);
		hlts += hlt;
	}
	KUNIT_EXPECT_EQ(test, hlts, 3);
	KUNIT_EXPECT_TRUE(test, vmlat_exit_is_hlt(ISA_SVM, 0xa6));	/* idle-halt */
	KUNIT_EXPECT_TRUE(test, vmlat_exit_is_hlt(ISA_VMX, 12));
	KUNIT_EXPECT_TRUE(test, vmlat_exit_is_hlt(ISA_SVM, 0x78));
	KUNIT_EXPECT_FALSE(test, vmlat_exit_is_hlt(ISA_SVM, 12));	/* no ISA_SVM 0x00c */
	KUNIT_EXPECT_FALSE(test, vmlat_exit_is_hlt(ISA_VMX, 0x78));
	KUNIT_EXPECT_FALSE(test, vmlat_exit_is_hlt(ISA_VMX, VMX_FAILED | 12));
}

/* The spinner's exits (lhp.c): VMX's PAUSE_INSTRUCTION (40), SVM's PAUSE. */
static void vmlat_exit_slot_is_pause_only_for_pause(struct kunit *test)
{
	int slot, pauses = 0;

	for (slot = 0; slot < VMLAT_EXIT_NR_SLOTS; slot++) {
		const char *name = vmlat_exit_slot_name(slot);
		bool pause = vmlat_exit_slot_is_pause(slot);

		KUNIT_ASSERT_NOT_NULL_MSG(test, name, "slot %d", slot);
		KUNIT_EXPECT_EQ_MSG(test, pause,
				    !strcmp(name, "PAUSE_INSTRUCTION") ||
				    !strcmp(name, "PAUSE"),
				    "slot %d (%s)", slot, name);
		pauses += pause;
	}
	KUNIT_EXPECT_EQ(test, pauses, 2);
	KUNIT_EXPECT_TRUE(test,
			  vmlat_exit_slot_is_pause(vmlat_exit_slot(ISA_VMX, 40)));
	KUNIT_EXPECT_TRUE(test,
			  vmlat_exit_slot_is_pause(vmlat_exit_slot(ISA_SVM, 0x77)));
	/* TPAUSE (VMX 68) waits, it does not spin on a lock. */
	KUNIT_EXPECT_FALSE(test,
			   vmlat_exit_slot_is_pause(vmlat_exit_slot(ISA_VMX, 68)));
}

/*
 * The questions of the kvm_exit probe, by name: HLT (checked above),
 * entering a nested guest, the hypercall instruction, VMX's preemption
 * timer; the rare ones take it off its fast path.
 */
static void vmlat_exit_slot_flags_by_name(struct kunit *test)
{
	int slot, n[3] = {};

	for (slot = 0; slot < VMLAT_EXIT_NR_SLOTS; slot++) {
		const char *name = vmlat_exit_slot_name(slot);
		unsigned int f = vmlat_exit_slot_flags(slot);
		bool vmx = vmlat_exit_slot_isa(slot) == ISA_VMX;
		bool vmenter = !strcmp(name, "VMRUN") ||
			       !strcmp(name, "VMLAUNCH") ||
			       !strcmp(name, "VMRESUME");
		bool call = !strcmp(name, "VMMCALL") || !strcmp(name, "VMCALL");
		bool ptimer = vmx && !strcmp(name, "PREEMPTION_TIMER");

		KUNIT_EXPECT_EQ_MSG(test, vmlat_exit_slot_is_vmenter(slot),
				    vmenter, "slot %d (%s)", slot, name);
		KUNIT_EXPECT_EQ_MSG(test, vmlat_exit_slot_is_hypercall(slot),
				    call, "slot %d (%s)", slot, name);
		KUNIT_EXPECT_EQ_MSG(test, vmlat_exit_slot_is_ptimer(slot),
				    ptimer, "slot %d (%s)", slot, name);
		KUNIT_EXPECT_EQ_MSG(test, !!(f & VMLAT_EXITF_RARE),
				    vmenter || ptimer ||
				    vmlat_exit_slot_is_pause(slot),
				    "slot %d (%s)", slot, name);
		n[0] += vmenter;
		n[1] += call;
		n[2] += ptimer;
	}
	KUNIT_EXPECT_EQ(test, n[0], 3);
	KUNIT_EXPECT_EQ(test, n[1], 2);
	KUNIT_EXPECT_EQ(test, n[2], 1);
	KUNIT_EXPECT_EQ(test, vmlat_exit_slot_flags(VMLAT_SLOT_UNDECODED), 0U);
	KUNIT_EXPECT_EQ(test, vmlat_exit_slot_flags(VMLAT_EXIT_NR_SLOTS), 0U);
}

/*
 * vmlat_exit_slot()'s inline tables against the full decoding
 * (vmlat_exit_slot_slow(), which the tests above check by name and code):
 * every code below and around them, with the flag, qualifier and reserved
 * bits, for both ISAs and two that are neither. VMX's table is its own;
 * SVM's intercepts are one table for both, so for SVM this checks the
 * bounds around it.
 */
static void vmlat_exit_slot_fast_is_slow(struct kunit *test)
{
	static const u64 high[] = { 0, 0x100, 0x8000000, 0x10000000,
				    0x20000000, 0x40000000, VMX_FAILED,
				    0x10000, 0x100000000ULL };
	static const u32 isas[] = { ISA_VMX, ISA_SVM, 0, 3 };
	unsigned int i, h, low;

	for (i = 0; i < ARRAY_SIZE(isas); i++)
		for (h = 0; h < ARRAY_SIZE(high); h++)
			for (low = 0; low < 2 * VMLAT_EXIT_FAST_NR; low++) {
				u64 raw = high[h] | low;

				KUNIT_EXPECT_EQ_MSG(test,
					vmlat_exit_slot(isas[i], raw),
					vmlat_exit_slot_slow(isas[i], raw),
					"isa %u code %#llx", isas[i],
					(unsigned long long)raw);
			}
	for (i = 0; i < ARRAY_SIZE(isas); i++) {
		KUNIT_EXPECT_EQ(test, vmlat_exit_slot(isas[i], U64_MAX),
				vmlat_exit_slot_slow(isas[i], U64_MAX));
		KUNIT_EXPECT_EQ(test, vmlat_exit_slot(isas[i], 0xffffffff),
				vmlat_exit_slot_slow(isas[i], 0xffffffff));
	}
}

/* ---- the tables against the uapi macros -------------------------------- */

/*
 * The name a slot must have: its uapi macro without prefix, with
 * "SVM_EXIT_EXCP_BASE + XX_VECTOR" giving "EXCP_XX".
 */
static void name_from_macro(const char *macro, char *buf, size_t size)
{
	static const char *const prefixes[] = {
		"EXIT_REASON_", "SVM_EXIT_", "SVM_",
	};
	static const char excp[] = "SVM_EXIT_EXCP_BASE + ";
	size_t i, len;

	if (!strncmp(macro, excp, strlen(excp))) {
		macro += strlen(excp);
		len = strcspn(macro, "_");
		snprintf(buf, size, "EXCP_%.*s", (int)len, macro);
		return;
	}
	for (i = 0; i < ARRAY_SIZE(prefixes); i++) {
		len = strlen(prefixes[i]);
		if (!strncmp(macro, prefixes[i], len)) {
			macro += len;
			break;
		}
	}
	strscpy(buf, macro, size);
}

struct slot_macro {
	int slot;
	const char *macro;
};

#define VMX_MACRO(name, code, ftrace, uapi) \
	{ VMLAT_EXIT_VMX_##name, #uapi },
#define SVM_MACRO(name, code, ftrace, uapi) \
	{ VMLAT_EXIT_SVM_##name, #uapi },

static const struct slot_macro slot_macros[] = {
	VMLAT_VMX_EXITS(VMX_MACRO)
	VMLAT_SVM_EXITS(SVM_MACRO)
};

static void vmlat_exit_slot_names_are_uapi_macro_names(struct kunit *test)
{
	char want[64];
	size_t i;

	KUNIT_EXPECT_EQ(test, ARRAY_SIZE(slot_macros),
			(size_t)VMLAT_EXIT_NR_SLOTS);
	for (i = 0; i < ARRAY_SIZE(slot_macros); i++) {
		const char *name = vmlat_exit_slot_name(slot_macros[i].slot);

		name_from_macro(slot_macros[i].macro, want, sizeof(want));
		KUNIT_ASSERT_NOT_NULL_MSG(test, name, "from %s",
					  slot_macros[i].macro);
		KUNIT_EXPECT_STREQ_MSG(test, name, want, "from %s",
				       slot_macros[i].macro);
	}
}

#if HAVE_UAPI_EXIT_LISTS
struct uapi_reason {
	u64 code;
	const char *name;
};

#include "exit_codes_uapi.h"

static const struct uapi_reason uapi_vmx[] = { VMX_EXIT_REASONS };
static const struct uapi_reason uapi_svm[] = { SVM_EXIT_REASONS };

/* The X lists' uapi expressions, evaluated. */
struct slot_value {
	int slot;
	u64 value;
	const char *macro;
};

#define VMX_VALUE(name, code, ftrace, uapi) \
	{ VMLAT_EXIT_VMX_##name, (u64)(uapi), #uapi },
#define SVM_VALUE(name, code, ftrace, uapi) \
	{ VMLAT_EXIT_SVM_##name, (u64)(uapi), #uapi },

static const struct slot_value slot_values[] = {
	VMLAT_VMX_EXITS(VMX_VALUE)
	VMLAT_SVM_EXITS(SVM_VALUE)
};

/*
 * The slot ftrace names @code by: VMX by its basic reason (the failure
 * reasons carry bit 31), SVM by the code.
 */
static int uapi_code_slot(struct kunit *test, u32 isa, u64 code)
{
	int plain = vmlat_exit_slot(isa, code);
	int failed;

	if (isa != ISA_VMX)
		return plain;
	failed = vmlat_exit_slot(isa, code | VMX_FAILED);
	KUNIT_EXPECT_TRUE_MSG(test, plain < 0 || failed < 0,
			      "vmx %llu decodes with and without bit 31",
			      (unsigned long long)code);
	return plain >= 0 ? plain : failed;
}

static void check_uapi_list(struct kunit *test, u32 isa,
			    const struct uapi_reason *list, size_t n,
			    u8 *seen)
{
	size_t i;

	for (i = 0; i < n; i++) {
		int slot = uapi_code_slot(test, isa, list[i].code);
		const char *ftrace_name = vmlat_exit_slot_ftrace_name(slot);

		KUNIT_EXPECT_GE_MSG(test, slot, 0, "%s 0x%llx \"%s\" has no slot",
				    vmlat_exit_isa_name(isa),
				    (unsigned long long)list[i].code,
				    list[i].name);
		if (slot < 0)
			continue;
		seen[slot]++;
		KUNIT_EXPECT_EQ_MSG(test, vmlat_exit_slot_isa(slot), isa,
				    "%s 0x%llx: ISA", vmlat_exit_isa_name(isa),
				    (unsigned long long)list[i].code);
		KUNIT_ASSERT_NOT_NULL_MSG(test, ftrace_name,
					  "%s 0x%llx: ftrace name",
					  vmlat_exit_isa_name(isa),
					  (unsigned long long)list[i].code);
		KUNIT_EXPECT_STREQ_MSG(test, ftrace_name, list[i].name,
				       "%s 0x%llx", vmlat_exit_isa_name(isa),
				       (unsigned long long)list[i].code);
	}
}

static void vmlat_exits_match_uapi_lists(struct kunit *test)
{
	u8 *seen = kunit_kzalloc(test, VMLAT_EXIT_NR_SLOTS, GFP_KERNEL);
	u8 *want = kunit_kzalloc(test, VMLAT_EXIT_NR_SLOTS, GFP_KERNEL);
	size_t i;
	int slot;

	KUNIT_ASSERT_NOT_NULL(test, seen);
	KUNIT_ASSERT_NOT_NULL(test, want);
	KUNIT_EXPECT_EQ(test, ARRAY_SIZE(uapi_vmx), (size_t)VMLAT_UAPI_VMX_NR);
	KUNIT_EXPECT_EQ(test, ARRAY_SIZE(uapi_svm), (size_t)VMLAT_UAPI_SVM_NR);
	check_uapi_list(test, ISA_VMX, uapi_vmx, ARRAY_SIZE(uapi_vmx), seen);
	check_uapi_list(test, ISA_SVM, uapi_svm, ARRAY_SIZE(uapi_svm), seen);
	/* Each slot once, but the newer ones older headers do not name. */
	memset(want, 1, VMLAT_EXIT_NR_SLOTS);
#define SINCE_6_12(isa, name) \
	want[VMLAT_EXIT_##isa##_##name] = VMLAT_UAPI_HAS_##isa##_##name;
	VMLAT_EXITS_SINCE_5_10(SINCE_6_12)
	VMLAT_EXITS_SINCE_6_12(SINCE_6_12)
#undef SINCE_6_12
	for (slot = 0; slot < VMLAT_EXIT_NR_SLOTS; slot++)
		KUNIT_EXPECT_EQ_MSG(test, seen[slot], want[slot],
				    "slot %d (%s) named %u times by the uapi lists",
				    slot, vmlat_exit_slot_name(slot), seen[slot]);

	/* Each table code is the value of the macro it says it stands for. */
	for (i = 0; i < ARRAY_SIZE(slot_values); i++) {
		const struct slot_value *v = &slot_values[i];
		u64 code = vmlat_exit_slot_code(v->slot);

		if (vmlat_exit_slot_isa(v->slot) == ISA_VMX)
			KUNIT_EXPECT_EQ_MSG(test, code & 0xffff, v->value,
					    "%s", v->macro);
		else
			KUNIT_EXPECT_EQ_MSG(test, code, (u64)(u32)v->value,
					    "%s", v->macro);
	}
	/* The VM-entry failure flag is the uapi one. */
	KUNIT_EXPECT_EQ(test, (u64)VMLAT_VMX_FAILED_VMENTRY,
			(u64)VMX_EXIT_REASONS_FAILED_VMENTRY);
}
#else
static void vmlat_exits_match_uapi_lists(struct kunit *test)
{
	kunit_skip(test, "no <asm/svm.h>, <asm/vmx.h> to compare with");
}
#endif /* HAVE_UAPI_EXIT_LISTS */

/* ---- replays of recorded exit sequences --------------------------------- */

/* A stretch of a recorded sequence: @raw, @repeat times in a row. */
struct replay_run {
	u64 raw;
	u32 repeat;
};

/* What ftrace's kvm_exit printed as "reason" for the same run, counted. */
struct replay_count {
	const char *ftrace_name;
	u32 count;
};

static void replay(struct kunit *test, u32 isa,
		   const struct replay_run *runs, size_t nr_runs,
		   const struct replay_count *want, size_t nr_want,
		   u32 want_undecoded, u32 want_hlt)
{
	u32 *counts = kunit_kcalloc(test, VMLAT_EXIT_NR_SLOTS, sizeof(*counts),
				    GFP_KERNEL);
	u32 undecoded = 0, hlt = 0, total = 0, counted = 0;
	size_t i;
	int slot;
	u32 r;

	KUNIT_ASSERT_NOT_NULL(test, counts);
	for (i = 0; i < nr_runs; i++) {
		for (r = 0; r < runs[i].repeat; r++) {
			slot = vmlat_exit_slot(isa, runs[i].raw);
			if (slot < 0)
				undecoded++;
			else
				counts[slot]++;
			hlt += vmlat_exit_is_hlt(isa, runs[i].raw);
			total++;
		}
	}

	for (i = 0; i < nr_want; i++) {
		u32 got = 0;

		for (slot = 0; slot < VMLAT_EXIT_NR_SLOTS; slot++) {
			if (vmlat_exit_slot_isa(slot) == isa &&
			    !strcmp(vmlat_exit_slot_ftrace_name(slot),
				    want[i].ftrace_name))
				got += counts[slot];
		}
		KUNIT_EXPECT_EQ_MSG(test, got, want[i].count, "reason %s",
				    want[i].ftrace_name);
		counted += want[i].count;
	}
	KUNIT_EXPECT_EQ(test, undecoded, want_undecoded);
	KUNIT_EXPECT_EQ(test, hlt, want_hlt);
	/* Nothing counted under a reason the recording did not have. */
	KUNIT_EXPECT_EQ(test, counted + undecoded, total);
	for (slot = 0; slot < VMLAT_EXIT_NR_SLOTS; slot++) {
		if (vmlat_exit_slot_isa(slot) != isa)
			KUNIT_EXPECT_EQ_MSG(test, counts[slot], 0U,
					    "other ISA's slot %d", slot);
	}
}

/*
 * A VMX guest booting, doing port I/O in a loop and halting, with exits
 * in SGX enclave mode (bit 27), a failed VM entry (bit 31 with
 * INVALID_STATE: "INVALID_STATE FAILED_VMENTRY" in ftrace) and two
 * values no VMX host reports (bit 31 with HLT, reserved bit 16).
 */
static const struct replay_run vmx_recording[] = {
	{ 1, 1 },		/* EXTERNAL_INTERRUPT */
	{ 48, 3 },		/* EPT_VIOLATION */
	{ 10, 2 },		/* CPUID */
	{ 32, 1 },		/* MSR_WRITE */
	{ 30, 100 },		/* IO_INSTRUCTION */
	{ VMX_ENCLAVE | 1, 1 },
	{ 30, 50 },
	{ VMX_ENCLAVE | 48, 2 },
	{ 52, 1 },		/* PREEMPTION_TIMER */
	{ 12, 1 },		/* HLT */
	{ 1, 1 },
	{ 30, 20 },
	{ 12, 1 },
	{ VMX_FAILED | 12, 1 },	/* impossible: undecoded */
	{ 0x10000 | 30, 1 },	/* reserved bit: undecoded */
	{ VMX_FAILED | 33, 1 },	/* INVALID_STATE */
};

static const struct replay_count vmx_ftrace_counts[] = {
	{ "EXTERNAL_INTERRUPT", 3 },
	{ "EPT_VIOLATION", 5 },
	{ "CPUID", 2 },
	{ "MSR_WRITE", 1 },
	{ "IO_INSTRUCTION", 170 },
	{ "PREEMPTION_TIMER", 1 },
	{ "HLT", 2 },
	{ "INVALID_STATE", 1 },
};

static void vmlat_exit_slot_counts_vmx_replay(struct kunit *test)
{
	replay(test, ISA_VMX, vmx_recording, ARRAY_SIZE(vmx_recording),
	       vmx_ftrace_counts, ARRAY_SIZE(vmx_ftrace_counts), 2, 2);
}

/*
 * The SVM run of docs/kernel-facts.md (7777 port I/O exits), as ftrace
 * printed it, plus a VMGEXIT and a failed VMRUN (0xffffffff).
 */
static const struct replay_run svm_recording[] = {
	{ 0x400, 1 },		/* NPF */
	{ 0x07b, 4000 },	/* IOIO */
	{ 0x060, 21 },		/* INTR */
	{ 0x07b, 3777 },
	{ 0x060, 21 },
	{ 0x078, 1 },		/* HLT */
	{ 0x403, 1 },		/* VMGEXIT */
	{ 0x08c, 1 },		/* MWAIT_COND: no name, undecoded */
	{ 0xffffffff, 1 },	/* SVM_EXIT_ERR */
};

static const struct replay_count svm_ftrace_counts[] = {
	{ "npf", 1 },
	{ "io", 7777 },
	{ "interrupt", 42 },
	{ "hlt", 1 },
	{ "vmgexit", 1 },
	{ "invalid_guest_state", 1 },
};

static void vmlat_exit_slot_counts_svm_replay(struct kunit *test)
{
	replay(test, ISA_SVM, svm_recording, ARRAY_SIZE(svm_recording),
	       svm_ftrace_counts, ARRAY_SIZE(svm_ftrace_counts), 1, 1);
}

static struct kunit_case vmlat_exits_cases[] = {
	KUNIT_CASE_PARAM(vmlat_exit_slot_names_known_codes, known_gen_params),
	KUNIT_CASE_PARAM(vmlat_exit_slot_rejects_unknown_codes,
			 unknown_gen_params),
	KUNIT_CASE(vmlat_exit_slot_round_trips),
	KUNIT_CASE(vmlat_exit_slot_isas_are_disjoint),
	KUNIT_CASE(vmlat_exit_slot_names_are_unique_words),
	KUNIT_CASE(vmlat_exit_slot_accessors_reject_bad_slots),
	KUNIT_CASE(vmlat_exit_is_hlt_only_for_hlt),
	KUNIT_CASE(vmlat_exit_slot_is_pause_only_for_pause),
	KUNIT_CASE(vmlat_exit_slot_flags_by_name),
	KUNIT_CASE(vmlat_exit_slot_fast_is_slow),
	KUNIT_CASE(vmlat_exit_slot_names_are_uapi_macro_names),
	KUNIT_CASE(vmlat_exits_match_uapi_lists),
	KUNIT_CASE(vmlat_exit_slot_counts_vmx_replay),
	KUNIT_CASE(vmlat_exit_slot_counts_svm_replay),
	{}
};

static struct kunit_suite vmlat_exits_suite = {
	.name = "vmlat_exit_codes",
	.test_cases = vmlat_exits_cases,
};

kunit_test_suites(&vmlat_exits_suite);
