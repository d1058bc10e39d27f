// SPDX-License-Identifier: GPL-2.0
/*
 * cr3_guest: a KVM guest that switches among page-table roots, for
 * gta_test.py (vmlat's guest address spaces against KVM's own CR3).
 *
 *   cr3_guest N SECONDS [VCPUS]    N roots (1..8), for SECONDS, with
 *                                  VCPUS vCPUs (1..4, default 1), each
 *                                  going through every root in turn
 *
 * Prints libkvm's root, the guest's RIPs from which on it is in the root
 * it wrote last (cr3_guest_code(): after its CR3 write, up to its OUT),
 * then each root with the OUT exits taken in it (all vCPUs'), then each
 * vCPU's, then how many exits KVM_GET_SREGS found in another CR3 than the
 * guest said (0 unless KVM or the guest is broken):
 *
 *   pgd 0x<gpa>
 *   written 0x<rip> out 0x<rip>
 *   root <k> 0x<gpa> exits <count>
 *   vcpu <i> root <k> exits <count>
 *   mismatches <count>
 *
 * Exit status 0, or 1 with a message if the run failed.
 */
#include <stdio.h>
#include <stdlib.h>

#include "ksft_kvm.h"

int main(int argc, char **argv)
{
	int n = 0, secs = 0, vcpus = 1;
	struct vmlat_cr3_stats st;
	unsigned int i, k;

	if (argc >= 3 && argc <= 4) {
		n = atoi(argv[1]);
		secs = atoi(argv[2]);
		if (argc == 4)
			vcpus = atoi(argv[3]);
	}
	if (n < 1 || n > VMLAT_CR3_MAX || secs < 1 || vcpus < 1 ||
	    vcpus > VMLAT_CR3_VCPUS_MAX) {
		fprintf(stderr, "usage: %s ROOTS(1..%d) SECONDS [VCPUS(1..%d)]\n",
			argv[0], VMLAT_CR3_MAX, VMLAT_CR3_VCPUS_MAX);
		return 2;
	}
	if (vmlat_guest_run_cr3(n, vcpus, secs * 1000ULL, &st)) {
		fprintf(stderr, "cr3_guest: %s\n", st.error);
		return 1;
	}
	printf("pgd 0x%llx\n", (unsigned long long)st.pgd);
	printf("written 0x%llx out 0x%llx\n",
	       (unsigned long long)st.written_rip,
	       (unsigned long long)st.out_rip);
	for (k = 0; k < st.n; k++)
		printf("root %u 0x%llx exits %llu\n", k,
		       (unsigned long long)st.roots[k],
		       (unsigned long long)st.exits[k]);
	for (i = 0; i < st.nr_vcpus; i++)
		for (k = 0; k < st.n; k++)
			printf("vcpu %u root %u exits %llu\n", i, k,
			       (unsigned long long)st.vcpu_exits[i][k]);
	printf("mismatches %llu\n", (unsigned long long)st.mismatches);
	return 0;
}
