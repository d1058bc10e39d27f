// SPDX-License-Identifier: GPL-2.0
/*
 * corecount: what vmlat's pure logic (vmlat/core/) does for one VM exit
 * round trip, counted in instructions under callgrind (make -C
 * tools/corecount run). Not a test: it prints counts.
 *
 * Each probe's share of the core, as events.c calls it for a port-I/O
 * exit that goes to userspace (tools/bench's exits): at kvm_exit the
 * exit's slot, the state machine's fast path and the nested machine's
 * inline part; at kvm_userspace_exit the state machine; at kvm_entry the
 * state machine, the nested machine, the address space's reasons and the
 * reason's histogram. One noinline function per probe, so that
 * callgrind's inclusive count of each, over ROUNDS round trips, is that
 * probe's core work; what the glue adds around it (the vCPU lookup,
 * the clock, the exit code's read, the seqcount, the counters) is the
 * rest of tools/bench's figure.
 */
#include <stdio.h>
#include <stdlib.h>

#include "ahist.h"
#include "exit_codes.h"
#include "state.h"

#define ROUNDS		100000
#define KVM_ISA_SVM	2	/* as kvm_x86.h: the kvm_exit "isa" */
#define SVM_IOIO	0x07b

static struct vmlat_vcpu_acct acct;
static struct vmlat_ahist hist;
static int exit_slot;

/* Keep the compiler from folding the rounds together. */
static volatile u64 clock_ns;

static u64 now(void)
{
	return clock_ns += 137;
}

static __attribute__((noinline)) void on_kvm_exit(void)
{
	struct vmlat_done done;
	u64 t = now();
	int slot = vmlat_exit_slot(KVM_ISA_SVM, SVM_IOIO);
	bool hlt = vmlat_exit_slot_is_hlt(slot);

	if (!vmlat_acct_owner(&acct, VMLAT_EV_EXIT, hlt, t, &done))
		abort();
	vmlat_nested_exit(&acct.nested, false, slot, hlt,
			  vmlat_exit_slot_is_vmenter(slot), t,
			  acct.time_ns[VMLAT_GUEST]);
	exit_slot = slot;
}

static __attribute__((noinline)) void on_userspace_exit(void)
{
	struct vmlat_done done;

	if (!vmlat_acct_owner(&acct, VMLAT_EV_USER_EXIT, false, now(), &done))
		abort();
}

static __attribute__((noinline)) void on_kvm_entry(void)
{
	struct vmlat_nested_done nd;
	struct vmlat_done done;
	u64 t = now();

	if (!vmlat_acct_owner(&acct, VMLAT_EV_ENTRY, false, t, &done))
		abort();
	if (done.kind == VMLAT_DONE_EXIT) {
		vmlat_as_cursor_exit(&acct.as, exit_slot, done.ns);
		vmlat_ahist_add(&hist, done.ns);
	}
	if (vmlat_nested_entry(&acct.nested, false, acct.woken_ns, t, &nd,
			       acct.time_ns[VMLAT_GUEST]))
		abort();
}

int main(void)
{
	int i;

	vmlat_ahist_init(&hist);
	vmlat_acct_init(&acct, VMLAT_EV_ENTRY, now());
	for (i = 0; i < ROUNDS; i++) {
		on_kvm_exit();
		on_userspace_exit();
		on_kvm_entry();
	}
	printf("%d round trips, %llu exits\n", ROUNDS,
	       (unsigned long long)acct.exits);
	return 0;
}
