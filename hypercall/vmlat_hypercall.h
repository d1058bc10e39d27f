/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * vmlat's hypercalls: the ABI between a guest (the guest module
 * vmlat_guest.ko, or any program that speaks it), the host module vmlat.ko
 * and the tools. 64-bit guests only, from CPL 0. Two calls share the
 * number, told apart by the header in RBX: clock sync (versions 1 and 2),
 * from version 3 process names, and from version 4 the guest's steal.
 *
 * Clock sync: one exchange per hypercall, numbered seq = 1, 2, 3...:
 *
 *	RAX = VMLAT_HC_NR
 *	RBX = VMLAT_HC_HDR, the magic and this version (2); in: the reply
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
 * Only calls made at CPL 0 count: KVM's tracepoint fires before its own
 * CPL check (the caller gets -KVM_EPERM), and vmlat ignores the others.
 *
 * A guest that restarts (reboots, reloads its module) starts again at
 * seq 1; any seq lower than the last one the host took also starts a new
 * session: the host starts a new mapping.
 *
 * The reply (version 2): vmlat.ko writes VMLAT_HC_REPLY(call, prev) into
 * RBX, which KVM loads back into the guest on its next entry, for a call
 * from CPL 0 with the version 2 header. RBX still holding the header (and
 * RAX -KVM_ENOSYS) means no vmlat.ko that speaks version 2 saw the call:
 * none loaded, its kvm_hypercall probe not attached, or an older one.
 * call: what the host did with this call; prev: with exchange seq - 1.
 * A call the host LIMITED changed nothing there: make it again later with
 * the same seq and g2. The host never writes a register of a version 1
 * caller (VMLAT_HC_HDR_V1), whose RBX is input only; it still takes its
 * calls. KVM routes every VMCALL to its Hyper-V or Xen emulation instead
 * when the guest enabled those: vmlat sees nothing then.
 */
#ifndef _VMLAT_HYPERCALL_H
#define _VMLAT_HYPERCALL_H

#define VMLAT_HC_NR		0x564d4c54UL		/* "VMLT" */
#define VMLAT_HC_MAGIC		0x766d6c6174ULL		/* "vmlat" */
#define VMLAT_HC_VERSION	2
#define VMLAT_HC_HDR_OF(ver)	((VMLAT_HC_MAGIC << 16) | (ver))
#define VMLAT_HC_HDR		VMLAT_HC_HDR_OF(VMLAT_HC_VERSION)
#define VMLAT_HC_HDR_V1		VMLAT_HC_HDR_OF(1)
/*
 * Version 3's call: an operation in bits 8..15 (clock sync keeps version
 * 2's header). Two bits from any sync header: a single flipped bit never
 * turns one into the other.
 */
#define VMLAT_HC_OP_NAME	1
#define VMLAT_HC_HDR_NAME	(VMLAT_HC_HDR_OF(3) | (VMLAT_HC_OP_NAME << 8))
#define VMLAT_HC_NAME_NEW	0x1ULL		/* RCX: a new address space */
#define VMLAT_HC_NAME_RATE	1000
#define VMLAT_HC_NAME_BURST	200
/*
 * Version 4's call: the guest asks for its own steal, one page of four
 * values per call, as the host measured it (off unless the host's
 * operator allows it: vmlat.ko's guest_steal).
 *
 *	RAX = VMLAT_HC_NR
 *	RBX = VMLAT_HC_HDR_STEAL; out: the reply, VMLAT_HC_REPLY(call, 0)
 *	RCX = the page (VMLAT_HC_STEAL_P_*); out, with RDX, RSI and RDI:
 *	      its four values, when the call was TAKEN (else unchanged)
 *
 * The vCPU pages are the calling vCPU's: a guest asks on each of its
 * CPUs for that CPU's. The VM pages are the calling VM's only: how much
 * host tasks, other VMs and its own threads took from it, as totals,
 * never whose; and its exit reasons that took the most host time. All
 * are totals in ns since vmlat.ko was loaded or reset (a reset shows as
 * totals that went down). CPL 0 only, VMLAT_HC_STEAL_RATE calls a second
 * per VM at most (a burst of VMLAT_HC_STEAL_BURST).
 */
#define VMLAT_HC_OP_STEAL	2
#define VMLAT_HC_HDR_STEAL	(VMLAT_HC_HDR_OF(4) | (VMLAT_HC_OP_STEAL << 8))
/* This vCPU, type 1 and type 2: preempted, wait, host kernel, VMM ns */
#define VMLAT_HC_STEAL_P_STEAL	0
/* This vCPU, the rest: guest, idle, blocked ns, and observed ns */
#define VMLAT_HC_STEAL_P_TIME	1
/* This vCPU: its exits; its index in the VM; the pages that exist; 0 */
#define VMLAT_HC_STEAL_P_INFO	2
/* The VM's type 1, by taker: host tasks, other VMs, its own threads; 0 */
#define VMLAT_HC_STEAL_P_TAKERS	3
/*
 * The VM's exit reasons by host time, the most first: page
 * VMLAT_HC_STEAL_P_EXITS + r for rank r < VMLAT_HC_STEAL_TOP: the isa
 * (1 VMX, 2 SVM; 0: no reason at that rank) << 32 | the raw exit code,
 * the exits, their handling ns, 0.
 */
#define VMLAT_HC_STEAL_P_EXITS	4
#define VMLAT_HC_STEAL_TOP	8
#define VMLAT_HC_STEAL_PAGES	(VMLAT_HC_STEAL_P_EXITS + VMLAT_HC_STEAL_TOP)
#define VMLAT_HC_STEAL_RATE	1000
#define VMLAT_HC_STEAL_BURST	1000
/*
 * The host takes at most this many exchanges per second and VM, and up to
 * VMLAT_HC_BURST of them at once after a pause: a token bucket.
 */
#define VMLAT_HC_MAX_RATE	100
#define VMLAT_HC_BURST		10

/* The reply in RBX: a magic of its own, and what happened. */
#define VMLAT_HC_REPLY_MAGIC	0x766d61636bULL		/* "vmack" */
#define VMLAT_HC_REPLY(call, prev) \
	((VMLAT_HC_REPLY_MAGIC << 16) | ((prev) << 8) | (call))
#define VMLAT_HC_IS_REPLY(rbx)	((rbx) >> 16 == VMLAT_HC_REPLY_MAGIC)
#define VMLAT_HC_REPLY_CALL(rbx) ((rbx) & 0xff)
#define VMLAT_HC_REPLY_PREV(rbx) (((rbx) >> 8) & 0xff)

/* What the host did with this call */
#define VMLAT_HC_CALL_TAKEN	1	/* its host time is recorded */
#define VMLAT_HC_CALL_LIMITED	2	/* over the rate: ignored */
#define VMLAT_HC_CALL_MALFORMED	3	/* seq 0: ignored */
#define VMLAT_HC_CALL_REPLAYED	4	/* seq of the last call taken: ignored */
#define VMLAT_HC_CALL_DENIED	5	/* steal: the host does not allow it */
/*
 * (names: TAKEN, LIMITED, or MALFORMED for a field out of range; steal:
 * TAKEN, LIMITED, MALFORMED for a page out of range, DENIED)
 */

/* ... and with exchange seq - 1 (when the call was taken) */
#define VMLAT_HC_PREV_NONE	0	/* none pending: the first call */
#define VMLAT_HC_PREV_MAPPED	1	/* taken into the mapping */
#define VMLAT_HC_PREV_UNPAIRED	2	/* seq skipped numbers, or no g2 */
#define VMLAT_HC_PREV_REFUSED	3	/* times out of order or range */
#define VMLAT_HC_PREV_RESTARTED	4	/* a new session: mapping restarted */

#endif /* _VMLAT_HYPERCALL_H */
