/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Which of exit_codes.h's newer entries (VMLAT_EXITS_SINCE_6_12()) the
 * uapi exit lists at hand name. Include after <asm/svm.h> and <asm/vmx.h>,
 * where exit_codes.h's uapi expressions are expanded (wrapper/kvm_x86.h,
 * exit_codes_test.c).
 *
 * Each such entry's macro and list entry came together (7.2 has all five,
 * 6.12 none). For headers without one, the macro is defined here with its
 * architectural code, so that the tables still expand, and
 * VMLAT_UAPI_HAS_<ISA>_<name> is 0; VMLAT_UAPI_VMX_NR and VMLAT_UAPI_SVM_NR
 * are then how many entries the headers' lists must have.
 */
#ifndef _VMLAT_EXIT_CODES_UAPI_H
#define _VMLAT_EXIT_CODES_UAPI_H

#include "exit_codes.h"

#ifdef EXIT_REASON_TDCALL
#define VMLAT_UAPI_HAS_VMX_TDCALL 1
#else
#define VMLAT_UAPI_HAS_VMX_TDCALL 0
#define EXIT_REASON_TDCALL 77
#endif

#ifdef EXIT_REASON_MSR_READ_IMM
#define VMLAT_UAPI_HAS_VMX_MSR_READ_IMM 1
#else
#define VMLAT_UAPI_HAS_VMX_MSR_READ_IMM 0
#define EXIT_REASON_MSR_READ_IMM 84
#endif

#ifdef EXIT_REASON_MSR_WRITE_IMM
#define VMLAT_UAPI_HAS_VMX_MSR_WRITE_IMM 1
#else
#define VMLAT_UAPI_HAS_VMX_MSR_WRITE_IMM 0
#define EXIT_REASON_MSR_WRITE_IMM 85
#endif

#ifdef SVM_EXIT_BUS_LOCK
#define VMLAT_UAPI_HAS_SVM_BUS_LOCK 1
#else
#define VMLAT_UAPI_HAS_SVM_BUS_LOCK 0
#define SVM_EXIT_BUS_LOCK 0x0a5
#endif

#ifdef SVM_EXIT_IDLE_HLT
#define VMLAT_UAPI_HAS_SVM_IDLE_HLT 1
#else
#define VMLAT_UAPI_HAS_SVM_IDLE_HLT 0
#define SVM_EXIT_IDLE_HLT 0x0a6
#endif

#define VMLAT_UAPI_MISSING_VMX_(isa, name)	\
	+ (VMLAT_ISA_##isa == VMLAT_ISA_VMX && !VMLAT_UAPI_HAS_##isa##_##name)
#define VMLAT_UAPI_MISSING_SVM_(isa, name)	\
	+ (VMLAT_ISA_##isa == VMLAT_ISA_SVM && !VMLAT_UAPI_HAS_##isa##_##name)

/* How many entries the uapi lists at hand have. */
#define VMLAT_UAPI_VMX_NR \
	(VMLAT_EXIT_VMX_NR - (0 VMLAT_EXITS_SINCE_6_12(VMLAT_UAPI_MISSING_VMX_)))
#define VMLAT_UAPI_SVM_NR \
	(VMLAT_EXIT_SVM_NR - (0 VMLAT_EXITS_SINCE_6_12(VMLAT_UAPI_MISSING_SVM_)))

#endif /* _VMLAT_EXIT_CODES_UAPI_H */
