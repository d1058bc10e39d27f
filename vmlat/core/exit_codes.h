/* SPDX-License-Identifier: GPL-2.0 */
/*
 * VM-exit reasons: names and a compact slot index (pure logic).
 *
 * The kvm_exit tracepoint hands vmlat a vCPU and an ISA; the raw exit code
 * is read from the VMCB or VMCS (wrapper/kvm_x86.h). vmlat_exit_slot() turns
 * (isa, raw code) into a slot in [0, VMLAT_EXIT_NR_SLOTS), an index for
 * per-VM counter arrays, or -1 when the code is not one KVM names: the
 * caller counts those separately and never guesses. VMX and SVM slots are
 * disjoint, so one array serves both ISAs.
 *
 * The slots are exactly the entries of the kernel's own name lists,
 * VMX_EXIT_REASONS (uapi/asm/vmx.h) and SVM_EXIT_REASONS (uapi/asm/svm.h),
 * as of Linux 7.2: 6.1's and 6.12's (identical), and the five entries
 * the lists gained since (VMLAT_EXITS_SINCE_6_12() below; a kernel whose
 * lists lack them never exits with those codes, as its KVM does not
 * enable them). They are written out below because the pure
 * code also builds in userspace, where those headers may be missing;
 * wrapper/kvm_x86.h checks the codes and counts at build time against the
 * kernel being built for, and exit_codes_test.c checks codes, names and counts
 * against whichever uapi headers it is compiled with.
 *
 * Each slot has two names:
 *  - its name (vmlat_exit_slot_name()): the uapi macro without its
 *    EXIT_REASON_, SVM_EXIT_ or SVM_ prefix ("HLT", "IOIO", "VMMCALL",
 *    "NPF"; SVM exception intercepts "EXCP_<vector>", e.g. "EXCP_PF";
 *    SVM_EXIT_ERR "ERR"). One word, upper case: what vmlat's debugfs
 *    files print.
 *  - its ftrace name (vmlat_exit_slot_ftrace_name()): the string of the
 *    kernel's name list, which ftrace's kvm_exit prints as "reason":
 *    the same as the name for VMX, lower case and sometimes different
 *    words for SVM ("io", "hypercall", "interrupt", "PF excp").
 *
 * Raw codes, as KVM's kvm_exit event records them in exit_reason:
 *  - VMX: the full 32-bit VM_EXIT_REASON field. Bits 15:0 are the basic
 *    reason. Bits 27 (exit incident to SGX enclave mode), 28 (pending MTF
 *    after SMM) and 29 (SMM exit from VMX root) only qualify the exit and
 *    are ignored. Bit 31 marks a failed VM entry: the SDM uses only basic
 *    reasons 33 (INVALID_STATE), 34 (MSR_LOAD_FAIL) and 41
 *    (MCE_DURING_VMENTRY) for those, so these three slots are the
 *    VM-entry failure slots and their code includes bit 31 (0x80000021
 *    for INVALID_STATE; ftrace prints "INVALID_STATE FAILED_VMENTRY").
 *    A code whose bit 31 disagrees with its basic reason, with reserved
 *    bits (30, 26:16, 63:32) set, or with an unnamed basic reason (e.g.
 *    KVM's internal 0xdead) gives -1.
 *  - SVM: the VMCB EXITCODE. KVM and ftrace use its low 32 bits, so
 *    SVM_EXIT_ERR (-1) is 0xffffffff; the 64-bit all-ones value is
 *    accepted as the same code. Any other code above 32 bits gives -1.
 *    (ftrace itself prints SVM_EXIT_ERR as "0xffffffff", not as
 *    "invalid_guest_state": __print_symbolic() compares the 32-bit field
 *    with (unsigned long)-1.)
 */
#ifndef _VMLAT_EXIT_CODES_H
#define _VMLAT_EXIT_CODES_H

#include "pure.h"

/* The isa argument of the kvm_exit tracepoint (KVM_ISA_* in kvm/trace.h). */
/* The slot of an exit whose reason could not be read or is unknown. */
#define VMLAT_SLOT_UNDECODED	(-1)

#define VMLAT_ISA_VMX	1
#define VMLAT_ISA_SVM	2

/* VM_EXIT_REASON bit 31 (VMX_EXIT_REASONS_FAILED_VMENTRY in uapi/asm/vmx.h) */
#define VMLAT_VMX_FAILED_VMENTRY	0x80000000U

/*
 * The name lists, as X-macros: X(name, code, ftrace_name, uapi_value),
 * in the order of the uapi lists (ascending code). uapi_value is the
 * uapi expression the entry stands for; it is only expanded where those
 * headers are included (wrapper/kvm_x86.h, exit_codes_test.c).
 */
#define VMLAT_VMX_EXITS(X)						\
	X(EXCEPTION_NMI, 0, "EXCEPTION_NMI", EXIT_REASON_EXCEPTION_NMI)	\
	X(EXTERNAL_INTERRUPT, 1, "EXTERNAL_INTERRUPT",			\
	  EXIT_REASON_EXTERNAL_INTERRUPT)				\
	X(TRIPLE_FAULT, 2, "TRIPLE_FAULT", EXIT_REASON_TRIPLE_FAULT)	\
	X(INIT_SIGNAL, 3, "INIT_SIGNAL", EXIT_REASON_INIT_SIGNAL)	\
	X(SIPI_SIGNAL, 4, "SIPI_SIGNAL", EXIT_REASON_SIPI_SIGNAL)	\
	X(INTERRUPT_WINDOW, 7, "INTERRUPT_WINDOW",			\
	  EXIT_REASON_INTERRUPT_WINDOW)					\
	X(NMI_WINDOW, 8, "NMI_WINDOW", EXIT_REASON_NMI_WINDOW)		\
	X(TASK_SWITCH, 9, "TASK_SWITCH", EXIT_REASON_TASK_SWITCH)	\
	X(CPUID, 10, "CPUID", EXIT_REASON_CPUID)			\
	X(HLT, 12, "HLT", EXIT_REASON_HLT)				\
	X(INVD, 13, "INVD", EXIT_REASON_INVD)				\
	X(INVLPG, 14, "INVLPG", EXIT_REASON_INVLPG)			\
	X(RDPMC, 15, "RDPMC", EXIT_REASON_RDPMC)			\
	X(RDTSC, 16, "RDTSC", EXIT_REASON_RDTSC)			\
	X(VMCALL, 18, "VMCALL", EXIT_REASON_VMCALL)			\
	X(VMCLEAR, 19, "VMCLEAR", EXIT_REASON_VMCLEAR)			\
	X(VMLAUNCH, 20, "VMLAUNCH", EXIT_REASON_VMLAUNCH)		\
	X(VMPTRLD, 21, "VMPTRLD", EXIT_REASON_VMPTRLD)			\
	X(VMPTRST, 22, "VMPTRST", EXIT_REASON_VMPTRST)			\
	X(VMREAD, 23, "VMREAD", EXIT_REASON_VMREAD)			\
	X(VMRESUME, 24, "VMRESUME", EXIT_REASON_VMRESUME)		\
	X(VMWRITE, 25, "VMWRITE", EXIT_REASON_VMWRITE)			\
	X(VMOFF, 26, "VMOFF", EXIT_REASON_VMOFF)			\
	X(VMON, 27, "VMON", EXIT_REASON_VMON)				\
	X(CR_ACCESS, 28, "CR_ACCESS", EXIT_REASON_CR_ACCESS)		\
	X(DR_ACCESS, 29, "DR_ACCESS", EXIT_REASON_DR_ACCESS)		\
	X(IO_INSTRUCTION, 30, "IO_INSTRUCTION", EXIT_REASON_IO_INSTRUCTION) \
	X(MSR_READ, 31, "MSR_READ", EXIT_REASON_MSR_READ)		\
	X(MSR_WRITE, 32, "MSR_WRITE", EXIT_REASON_MSR_WRITE)		\
	X(INVALID_STATE, VMLAT_VMX_FAILED_VMENTRY | 33, "INVALID_STATE", \
	  EXIT_REASON_INVALID_STATE)					\
	X(MSR_LOAD_FAIL, VMLAT_VMX_FAILED_VMENTRY | 34, "MSR_LOAD_FAIL", \
	  EXIT_REASON_MSR_LOAD_FAIL)					\
	X(MWAIT_INSTRUCTION, 36, "MWAIT_INSTRUCTION",			\
	  EXIT_REASON_MWAIT_INSTRUCTION)				\
	X(MONITOR_TRAP_FLAG, 37, "MONITOR_TRAP_FLAG",			\
	  EXIT_REASON_MONITOR_TRAP_FLAG)				\
	X(MONITOR_INSTRUCTION, 39, "MONITOR_INSTRUCTION",		\
	  EXIT_REASON_MONITOR_INSTRUCTION)				\
	X(PAUSE_INSTRUCTION, 40, "PAUSE_INSTRUCTION",			\
	  EXIT_REASON_PAUSE_INSTRUCTION)				\
	X(MCE_DURING_VMENTRY, VMLAT_VMX_FAILED_VMENTRY | 41,		\
	  "MCE_DURING_VMENTRY", EXIT_REASON_MCE_DURING_VMENTRY)		\
	X(TPR_BELOW_THRESHOLD, 43, "TPR_BELOW_THRESHOLD",		\
	  EXIT_REASON_TPR_BELOW_THRESHOLD)				\
	X(APIC_ACCESS, 44, "APIC_ACCESS", EXIT_REASON_APIC_ACCESS)	\
	X(EOI_INDUCED, 45, "EOI_INDUCED", EXIT_REASON_EOI_INDUCED)	\
	X(GDTR_IDTR, 46, "GDTR_IDTR", EXIT_REASON_GDTR_IDTR)		\
	X(LDTR_TR, 47, "LDTR_TR", EXIT_REASON_LDTR_TR)			\
	X(EPT_VIOLATION, 48, "EPT_VIOLATION", EXIT_REASON_EPT_VIOLATION) \
	X(EPT_MISCONFIG, 49, "EPT_MISCONFIG", EXIT_REASON_EPT_MISCONFIG) \
	X(INVEPT, 50, "INVEPT", EXIT_REASON_INVEPT)			\
	X(RDTSCP, 51, "RDTSCP", EXIT_REASON_RDTSCP)			\
	X(PREEMPTION_TIMER, 52, "PREEMPTION_TIMER",			\
	  EXIT_REASON_PREEMPTION_TIMER)					\
	X(INVVPID, 53, "INVVPID", EXIT_REASON_INVVPID)			\
	X(WBINVD, 54, "WBINVD", EXIT_REASON_WBINVD)			\
	X(XSETBV, 55, "XSETBV", EXIT_REASON_XSETBV)			\
	X(APIC_WRITE, 56, "APIC_WRITE", EXIT_REASON_APIC_WRITE)		\
	X(RDRAND, 57, "RDRAND", EXIT_REASON_RDRAND)			\
	X(INVPCID, 58, "INVPCID", EXIT_REASON_INVPCID)			\
	X(VMFUNC, 59, "VMFUNC", EXIT_REASON_VMFUNC)			\
	X(ENCLS, 60, "ENCLS", EXIT_REASON_ENCLS)			\
	X(RDSEED, 61, "RDSEED", EXIT_REASON_RDSEED)			\
	X(PML_FULL, 62, "PML_FULL", EXIT_REASON_PML_FULL)		\
	X(XSAVES, 63, "XSAVES", EXIT_REASON_XSAVES)			\
	X(XRSTORS, 64, "XRSTORS", EXIT_REASON_XRSTORS)			\
	X(UMWAIT, 67, "UMWAIT", EXIT_REASON_UMWAIT)			\
	X(TPAUSE, 68, "TPAUSE", EXIT_REASON_TPAUSE)			\
	X(BUS_LOCK, 74, "BUS_LOCK", EXIT_REASON_BUS_LOCK)		\
	X(NOTIFY, 75, "NOTIFY", EXIT_REASON_NOTIFY)			\
	X(TDCALL, 77, "TDCALL", EXIT_REASON_TDCALL)			\
	X(MSR_READ_IMM, 84, "MSR_READ_IMM", EXIT_REASON_MSR_READ_IMM)	\
	X(MSR_WRITE_IMM, 85, "MSR_WRITE_IMM", EXIT_REASON_MSR_WRITE_IMM)

/* SVM intercept exit codes, 0x000..0x0ff. */
#define VMLAT_SVM_EXITS_INTERCEPTS(X)					\
	X(READ_CR0, 0x000, "read_cr0", SVM_EXIT_READ_CR0)		\
	X(READ_CR2, 0x002, "read_cr2", SVM_EXIT_READ_CR2)		\
	X(READ_CR3, 0x003, "read_cr3", SVM_EXIT_READ_CR3)		\
	X(READ_CR4, 0x004, "read_cr4", SVM_EXIT_READ_CR4)		\
	X(READ_CR8, 0x008, "read_cr8", SVM_EXIT_READ_CR8)		\
	X(WRITE_CR0, 0x010, "write_cr0", SVM_EXIT_WRITE_CR0)		\
	X(WRITE_CR2, 0x012, "write_cr2", SVM_EXIT_WRITE_CR2)		\
	X(WRITE_CR3, 0x013, "write_cr3", SVM_EXIT_WRITE_CR3)		\
	X(WRITE_CR4, 0x014, "write_cr4", SVM_EXIT_WRITE_CR4)		\
	X(WRITE_CR8, 0x018, "write_cr8", SVM_EXIT_WRITE_CR8)		\
	X(READ_DR0, 0x020, "read_dr0", SVM_EXIT_READ_DR0)		\
	X(READ_DR1, 0x021, "read_dr1", SVM_EXIT_READ_DR1)		\
	X(READ_DR2, 0x022, "read_dr2", SVM_EXIT_READ_DR2)		\
	X(READ_DR3, 0x023, "read_dr3", SVM_EXIT_READ_DR3)		\
	X(READ_DR4, 0x024, "read_dr4", SVM_EXIT_READ_DR4)		\
	X(READ_DR5, 0x025, "read_dr5", SVM_EXIT_READ_DR5)		\
	X(READ_DR6, 0x026, "read_dr6", SVM_EXIT_READ_DR6)		\
	X(READ_DR7, 0x027, "read_dr7", SVM_EXIT_READ_DR7)		\
	X(WRITE_DR0, 0x030, "write_dr0", SVM_EXIT_WRITE_DR0)		\
	X(WRITE_DR1, 0x031, "write_dr1", SVM_EXIT_WRITE_DR1)		\
	X(WRITE_DR2, 0x032, "write_dr2", SVM_EXIT_WRITE_DR2)		\
	X(WRITE_DR3, 0x033, "write_dr3", SVM_EXIT_WRITE_DR3)		\
	X(WRITE_DR4, 0x034, "write_dr4", SVM_EXIT_WRITE_DR4)		\
	X(WRITE_DR5, 0x035, "write_dr5", SVM_EXIT_WRITE_DR5)		\
	X(WRITE_DR6, 0x036, "write_dr6", SVM_EXIT_WRITE_DR6)		\
	X(WRITE_DR7, 0x037, "write_dr7", SVM_EXIT_WRITE_DR7)		\
	X(EXCP_DE, 0x040, "DE excp", SVM_EXIT_EXCP_BASE + DE_VECTOR)	\
	X(EXCP_DB, 0x041, "DB excp", SVM_EXIT_EXCP_BASE + DB_VECTOR)	\
	X(EXCP_BP, 0x043, "BP excp", SVM_EXIT_EXCP_BASE + BP_VECTOR)	\
	X(EXCP_OF, 0x044, "OF excp", SVM_EXIT_EXCP_BASE + OF_VECTOR)	\
	X(EXCP_BR, 0x045, "BR excp", SVM_EXIT_EXCP_BASE + BR_VECTOR)	\
	X(EXCP_UD, 0x046, "UD excp", SVM_EXIT_EXCP_BASE + UD_VECTOR)	\
	X(EXCP_NM, 0x047, "NM excp", SVM_EXIT_EXCP_BASE + NM_VECTOR)	\
	X(EXCP_DF, 0x048, "DF excp", SVM_EXIT_EXCP_BASE + DF_VECTOR)	\
	X(EXCP_TS, 0x04a, "TS excp", SVM_EXIT_EXCP_BASE + TS_VECTOR)	\
	X(EXCP_NP, 0x04b, "NP excp", SVM_EXIT_EXCP_BASE + NP_VECTOR)	\
	X(EXCP_SS, 0x04c, "SS excp", SVM_EXIT_EXCP_BASE + SS_VECTOR)	\
	X(EXCP_GP, 0x04d, "GP excp", SVM_EXIT_EXCP_BASE + GP_VECTOR)	\
	X(EXCP_PF, 0x04e, "PF excp", SVM_EXIT_EXCP_BASE + PF_VECTOR)	\
	X(EXCP_MF, 0x050, "MF excp", SVM_EXIT_EXCP_BASE + MF_VECTOR)	\
	X(EXCP_AC, 0x051, "AC excp", SVM_EXIT_EXCP_BASE + AC_VECTOR)	\
	X(EXCP_MC, 0x052, "MC excp", SVM_EXIT_EXCP_BASE + MC_VECTOR)	\
	X(EXCP_XM, 0x053, "XF excp", SVM_EXIT_EXCP_BASE + XM_VECTOR)	\
	X(INTR, 0x060, "interrupt", SVM_EXIT_INTR)			\
	X(NMI, 0x061, "nmi", SVM_EXIT_NMI)				\
	X(SMI, 0x062, "smi", SVM_EXIT_SMI)				\
	X(INIT, 0x063, "init", SVM_EXIT_INIT)				\
	X(VINTR, 0x064, "vintr", SVM_EXIT_VINTR)			\
	X(CR0_SEL_WRITE, 0x065, "cr0_sel_write", SVM_EXIT_CR0_SEL_WRITE) \
	X(IDTR_READ, 0x066, "read_idtr", SVM_EXIT_IDTR_READ)		\
	X(GDTR_READ, 0x067, "read_gdtr", SVM_EXIT_GDTR_READ)		\
	X(LDTR_READ, 0x068, "read_ldtr", SVM_EXIT_LDTR_READ)		\
	X(TR_READ, 0x069, "read_rt", SVM_EXIT_TR_READ)			\
	X(IDTR_WRITE, 0x06a, "write_idtr", SVM_EXIT_IDTR_WRITE)		\
	X(GDTR_WRITE, 0x06b, "write_gdtr", SVM_EXIT_GDTR_WRITE)		\
	X(LDTR_WRITE, 0x06c, "write_ldtr", SVM_EXIT_LDTR_WRITE)		\
	X(TR_WRITE, 0x06d, "write_rt", SVM_EXIT_TR_WRITE)		\
	X(RDTSC, 0x06e, "rdtsc", SVM_EXIT_RDTSC)			\
	X(RDPMC, 0x06f, "rdpmc", SVM_EXIT_RDPMC)			\
	X(PUSHF, 0x070, "pushf", SVM_EXIT_PUSHF)			\
	X(POPF, 0x071, "popf", SVM_EXIT_POPF)				\
	X(CPUID, 0x072, "cpuid", SVM_EXIT_CPUID)			\
	X(RSM, 0x073, "rsm", SVM_EXIT_RSM)				\
	X(IRET, 0x074, "iret", SVM_EXIT_IRET)				\
	X(SWINT, 0x075, "swint", SVM_EXIT_SWINT)			\
	X(INVD, 0x076, "invd", SVM_EXIT_INVD)				\
	X(PAUSE, 0x077, "pause", SVM_EXIT_PAUSE)			\
	X(HLT, 0x078, "hlt", SVM_EXIT_HLT)				\
	X(INVLPG, 0x079, "invlpg", SVM_EXIT_INVLPG)			\
	X(INVLPGA, 0x07a, "invlpga", SVM_EXIT_INVLPGA)			\
	X(IOIO, 0x07b, "io", SVM_EXIT_IOIO)				\
	X(MSR, 0x07c, "msr", SVM_EXIT_MSR)				\
	X(TASK_SWITCH, 0x07d, "task_switch", SVM_EXIT_TASK_SWITCH)	\
	X(FERR_FREEZE, 0x07e, "ferr_freeze", SVM_EXIT_FERR_FREEZE)	\
	X(SHUTDOWN, 0x07f, "shutdown", SVM_EXIT_SHUTDOWN)		\
	X(VMRUN, 0x080, "vmrun", SVM_EXIT_VMRUN)			\
	X(VMMCALL, 0x081, "hypercall", SVM_EXIT_VMMCALL)		\
	X(VMLOAD, 0x082, "vmload", SVM_EXIT_VMLOAD)			\
	X(VMSAVE, 0x083, "vmsave", SVM_EXIT_VMSAVE)			\
	X(STGI, 0x084, "stgi", SVM_EXIT_STGI)				\
	X(CLGI, 0x085, "clgi", SVM_EXIT_CLGI)				\
	X(SKINIT, 0x086, "skinit", SVM_EXIT_SKINIT)			\
	X(RDTSCP, 0x087, "rdtscp", SVM_EXIT_RDTSCP)			\
	X(ICEBP, 0x088, "icebp", SVM_EXIT_ICEBP)			\
	X(WBINVD, 0x089, "wbinvd", SVM_EXIT_WBINVD)			\
	X(MONITOR, 0x08a, "monitor", SVM_EXIT_MONITOR)			\
	X(MWAIT, 0x08b, "mwait", SVM_EXIT_MWAIT)			\
	X(XSETBV, 0x08d, "xsetbv", SVM_EXIT_XSETBV)			\
	X(EFER_WRITE_TRAP, 0x08f, "write_efer_trap",			\
	  SVM_EXIT_EFER_WRITE_TRAP)					\
	X(CR0_WRITE_TRAP, 0x090, "write_cr0_trap", SVM_EXIT_CR0_WRITE_TRAP) \
	X(CR4_WRITE_TRAP, 0x094, "write_cr4_trap", SVM_EXIT_CR4_WRITE_TRAP) \
	X(CR8_WRITE_TRAP, 0x098, "write_cr8_trap", SVM_EXIT_CR8_WRITE_TRAP) \
	X(INVPCID, 0x0a2, "invpcid", SVM_EXIT_INVPCID)			\
	X(BUS_LOCK, 0x0a5, "buslock", SVM_EXIT_BUS_LOCK)		\
	X(IDLE_HLT, 0x0a6, "idle-halt", SVM_EXIT_IDLE_HLT)

/*
 * The other SVM codes: nested page fault, AVIC, SEV-ES VMGEXIT, the
 * software-defined VMGEXIT events (which KVM copies into the VMCB only
 * after kvm_exit, but which the uapi list names) and SVM_EXIT_ERR.
 */
#define VMLAT_SVM_EXITS_OTHER(X)					\
	X(NPF, 0x400, "npf", SVM_EXIT_NPF)				\
	X(AVIC_INCOMPLETE_IPI, 0x401, "avic_incomplete_ipi",		\
	  SVM_EXIT_AVIC_INCOMPLETE_IPI)					\
	X(AVIC_UNACCELERATED_ACCESS, 0x402, "avic_unaccelerated_access", \
	  SVM_EXIT_AVIC_UNACCELERATED_ACCESS)				\
	X(VMGEXIT, 0x403, "vmgexit", SVM_EXIT_VMGEXIT)			\
	X(VMGEXIT_MMIO_READ, 0x80000001, "vmgexit_mmio_read",		\
	  SVM_VMGEXIT_MMIO_READ)					\
	X(VMGEXIT_MMIO_WRITE, 0x80000002, "vmgexit_mmio_write",		\
	  SVM_VMGEXIT_MMIO_WRITE)					\
	X(VMGEXIT_NMI_COMPLETE, 0x80000003, "vmgexit_nmi_complete",	\
	  SVM_VMGEXIT_NMI_COMPLETE)					\
	X(VMGEXIT_AP_HLT_LOOP, 0x80000004, "vmgexit_ap_hlt_loop",	\
	  SVM_VMGEXIT_AP_HLT_LOOP)					\
	X(VMGEXIT_AP_JUMP_TABLE, 0x80000005, "vmgexit_ap_jump_table",	\
	  SVM_VMGEXIT_AP_JUMP_TABLE)					\
	X(VMGEXIT_PSC, 0x80000010, "vmgexit_page_state_change",		\
	  SVM_VMGEXIT_PSC)						\
	X(VMGEXIT_GUEST_REQUEST, 0x80000011, "vmgexit_guest_request",	\
	  SVM_VMGEXIT_GUEST_REQUEST)					\
	X(VMGEXIT_EXT_GUEST_REQUEST, 0x80000012,			\
	  "vmgexit_ext_guest_request", SVM_VMGEXIT_EXT_GUEST_REQUEST)	\
	X(VMGEXIT_AP_CREATION, 0x80000013, "vmgexit_ap_creation",	\
	  SVM_VMGEXIT_AP_CREATION)					\
	X(VMGEXIT_HV_FEATURES, 0x8000fffd, "vmgexit_hypervisor_feature", \
	  SVM_VMGEXIT_HV_FEATURES)					\
	X(ERR, 0xffffffff, "invalid_guest_state", SVM_EXIT_ERR)

#define VMLAT_SVM_EXITS(X)						\
	VMLAT_SVM_EXITS_INTERCEPTS(X)					\
	VMLAT_SVM_EXITS_OTHER(X)

/*
 * The entries above that 6.12's lists lack (7.2's have them), as
 * X(isa, name): where uapi headers are expanded, exit_codes_uapi.h tells
 * whether the headers at hand name each of them.
 */
/*
 * The entries 6.1's lists have and 5.10's (Debian 11's) lack: SEV-ES and
 * SNP exits, bus lock, notify, SIPI. 5.10 defines the macros of SEV-ES's
 * first software VMGEXIT codes already, but lists them only from 5.11,
 * with SVM_EXIT_VMGEXIT.
 */
#define VMLAT_EXITS_SINCE_5_10(X)					\
	X(VMX, SIPI_SIGNAL)						\
	X(VMX, BUS_LOCK)						\
	X(VMX, NOTIFY)							\
	X(SVM, EFER_WRITE_TRAP)						\
	X(SVM, CR0_WRITE_TRAP)						\
	X(SVM, CR4_WRITE_TRAP)						\
	X(SVM, CR8_WRITE_TRAP)						\
	X(SVM, VMGEXIT)							\
	X(SVM, VMGEXIT_MMIO_READ)					\
	X(SVM, VMGEXIT_MMIO_WRITE)					\
	X(SVM, VMGEXIT_NMI_COMPLETE)					\
	X(SVM, VMGEXIT_AP_HLT_LOOP)					\
	X(SVM, VMGEXIT_AP_JUMP_TABLE)					\
	X(SVM, VMGEXIT_PSC)						\
	X(SVM, VMGEXIT_GUEST_REQUEST)					\
	X(SVM, VMGEXIT_EXT_GUEST_REQUEST)				\
	X(SVM, VMGEXIT_AP_CREATION)					\
	X(SVM, VMGEXIT_HV_FEATURES)

#define VMLAT_EXITS_SINCE_6_12(X)					\
	X(VMX, TDCALL)							\
	X(VMX, MSR_READ_IMM)						\
	X(VMX, MSR_WRITE_IMM)						\
	X(SVM, BUS_LOCK)						\
	X(SVM, IDLE_HLT)

#define VMLAT_EXIT_VMX_ENUM_(name, ...)	VMLAT_EXIT_VMX_##name,
#define VMLAT_EXIT_SVM_ENUM_(name, ...)	VMLAT_EXIT_SVM_##name,
#define VMLAT_EXIT_COUNT_(...)		+ 1

/*
 * The slots: VMX ones first, then SVM ones, each in table order. Slot
 * numbers are not an interface (they change when the kernel's lists do):
 * print names and codes.
 */
enum vmlat_exit_slot_id {
	VMLAT_VMX_EXITS(VMLAT_EXIT_VMX_ENUM_)
	VMLAT_SVM_EXITS(VMLAT_EXIT_SVM_ENUM_)
	VMLAT_EXIT_NR_SLOTS,
	VMLAT_EXIT_VMX_NR = 0 VMLAT_VMX_EXITS(VMLAT_EXIT_COUNT_),
	VMLAT_EXIT_SVM_FIRST = VMLAT_EXIT_VMX_NR,
	VMLAT_EXIT_SVM_NR = VMLAT_EXIT_NR_SLOTS - VMLAT_EXIT_VMX_NR,
};

/*
 * Raw codes below VMLAT_EXIT_FAST_NR, per ISA (VMLAT_ISA_* - 1): slot + 1,
 * or 0 where vmlat_exit_slot_slow() returns -1. They are SVM's intercepts
 * and VMX's basic reasons with no flag bit: nearly every exit.
 */
#define VMLAT_EXIT_FAST_NR	0x100
extern const u8 vmlat_exit_slot_fast[2][VMLAT_EXIT_FAST_NR];

int vmlat_exit_slot_slow(u32 isa, u64 raw_code);

/**
 * vmlat_exit_slot() - the slot of an exit reason
 * @isa:	VMLAT_ISA_VMX or VMLAT_ISA_SVM (kvm_exit's isa argument)
 * @raw_code:	VMX: the VM_EXIT_REASON field; SVM: the VMCB exit code
 *
 * See above for how raw codes are decoded. Inline: the kvm_exit probe
 * asks at every exit; a table lookup for nearly all of them.
 *
 * Context: any.
 * Return: a slot in [0, VMLAT_EXIT_NR_SLOTS), or -1 for an unknown ISA
 * or a code that is not in the kernel's list of exit reason names.
 */
static inline int vmlat_exit_slot(u32 isa, u64 raw_code)
{
	if (likely(raw_code < VMLAT_EXIT_FAST_NR && isa - 1 < 2))
		return (int)vmlat_exit_slot_fast[isa - 1][raw_code] - 1;
	return vmlat_exit_slot_slow(isa, raw_code);
}
const char *vmlat_exit_slot_name(int slot);
const char *vmlat_exit_slot_ftrace_name(int slot);
u32 vmlat_exit_slot_isa(int slot);
u64 vmlat_exit_slot_code(int slot);
bool vmlat_exit_is_hlt(u32 isa, u64 raw_code);
const char *vmlat_exit_isa_name(u32 isa);

/*
 * What the kvm_exit probe asks of every exit's slot, a bit each in one
 * byte per slot (vmlat_exit_slot_flags()): one load, where each question
 * was a compare or three.
 *   HLT:	the guest executing HLT. SVM_EXIT_IDLE_HLT is the HLT
 *		intercept of CPUs with the idle-HLT feature (taken only when
 *		no interrupt is pending; KVM handles it as HLT).
 *   VMENTER:	the guest entering its own guest (nested): VMRUN,
 *		VMLAUNCH, VMRESUME.
 *   HYPERCALL:	the guest's hypercall instruction (VMCALL, VMMCALL).
 *   PAUSE:	the guest spinning: a PAUSE exit, which KVM asks for as
 *		pause-loop exiting (VMX) or through the pause filter (SVM).
 *   PTIMER:	VMX's preemption timer, KVM's TSC-deadline timer where it
 *		uses it (delivery.c).
 * The rare ones (VMLAT_EXITF_RARE) take the probe off its fast path.
 */
#define VMLAT_EXITF_HLT		0x01
#define VMLAT_EXITF_VMENTER	0x02
#define VMLAT_EXITF_HYPERCALL	0x04
#define VMLAT_EXITF_PAUSE	0x08
#define VMLAT_EXITF_PTIMER	0x10
#define VMLAT_EXITF_RARE	(VMLAT_EXITF_VMENTER | VMLAT_EXITF_PAUSE | \
				 VMLAT_EXITF_PTIMER)

extern const u8 vmlat_exit_slot_flag[VMLAT_EXIT_NR_SLOTS];

/* The VMLAT_EXITF_* of a slot from vmlat_exit_slot(); 0 for none (< 0). */
static inline unsigned int vmlat_exit_slot_flags(int slot)
{
	return (unsigned int)slot < VMLAT_EXIT_NR_SLOTS ?
	       vmlat_exit_slot_flag[slot] : 0;
}

static inline bool vmlat_exit_slot_is_hlt(int slot)
{
	return vmlat_exit_slot_flags(slot) & VMLAT_EXITF_HLT;
}

static inline bool vmlat_exit_slot_is_vmenter(int slot)
{
	return vmlat_exit_slot_flags(slot) & VMLAT_EXITF_VMENTER;
}

static inline bool vmlat_exit_slot_is_hypercall(int slot)
{
	return vmlat_exit_slot_flags(slot) & VMLAT_EXITF_HYPERCALL;
}

static inline bool vmlat_exit_slot_is_pause(int slot)
{
	return vmlat_exit_slot_flags(slot) & VMLAT_EXITF_PAUSE;
}

static inline bool vmlat_exit_slot_is_ptimer(int slot)
{
	return vmlat_exit_slot_flags(slot) & VMLAT_EXITF_PTIMER;
}

#endif /* _VMLAT_EXIT_CODES_H */
