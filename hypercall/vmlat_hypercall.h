/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * vmlat's clock-synchronisation hypercall: the ABI between a guest (the
 * guest module vmlat_guest.ko, or any program that speaks it), the host
 * module vmlat.ko and the tools. 64-bit guests only.
 *
 * One exchange per hypercall, numbered seq = 1, 2, 3...:
 *
 *	RAX = VMLAT_HC_NR
 *	RBX = VMLAT_HC_HDR, the magic and this version
 *	RCX = g1, the guest clock right before this hypercall
 *	RDX = g2 of exchange seq - 1, the guest clock right after that
 *	      hypercall returned (0 for seq 1: none)
 *	RSI = seq
 *	VMMCALL (AMD) or VMCALL (Intel)
 *
 * KVM does not handle the number: it returns -KVM_ENOSYS (-1000) in RAX,
 * after its kvm_hypercall tracepoint, where vmlat.ko takes the host time
 * h of the exchange. Exchange seq is complete when seq + 1 brings its g2:
 * g1 <= h <= g2 on a common timeline. The guest clock is in ns; the guest
 * module uses CLOCK_MONOTONIC, which the "mono" trace clock shows too.
 *
 * A guest that restarts (reboots, reloads its module) starts again at
 * seq 1, which makes the host start a new mapping.
 */
#ifndef _VMLAT_HYPERCALL_H
#define _VMLAT_HYPERCALL_H

#define VMLAT_HC_NR		0x564d4c54UL		/* "VMLT" */
#define VMLAT_HC_MAGIC		0x766d6c6174ULL		/* "vmlat" */
#define VMLAT_HC_VERSION	1
#define VMLAT_HC_HDR		((VMLAT_HC_MAGIC << 16) | VMLAT_HC_VERSION)
/* The host takes at most this many exchanges per second and VM. */
#define VMLAT_HC_MAX_RATE	100

#endif /* _VMLAT_HYPERCALL_H */
