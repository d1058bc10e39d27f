// SPDX-License-Identifier: GPL-2.0
/*
 * tiny_guest: run the selftests' tiny KVM guest from the command line.
 *
 *   tiny_guest exits N      exactly N port-I/O exits, then HLT
 *   tiny_guest seconds S    port-I/O exits in a loop for S seconds
 *
 * Prints the exits userspace saw and the rate. Used by the demo
 * (tools/demo) and handy to put load on a vCPU by hand.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ksft_kvm.h"
#include "ksft_util.h"

int main(int argc, char **argv)
{
	struct vmlat_guest_progress pr = {};
	struct vmlat_guest_stats st = {};
	unsigned long n;
	uint64_t t0, ms;
	int err;

	if (argc != 3 || (strcmp(argv[1], "exits") && strcmp(argv[1], "seconds"))) {
		fprintf(stderr, "usage: %s exits N | seconds S\n", argv[0]);
		return 2;
	}
	n = strtoul(argv[2], NULL, 0);
	t0 = vmlat_now_ms();
	if (!strcmp(argv[1], "exits"))
		err = vmlat_guest_run_exits(n, &st);
	else
		err = vmlat_guest_run_until(&pr, n * 1000, &st);
	ms = vmlat_now_ms() - t0;
	if (err) {
		fprintf(stderr, "tiny_guest: %s (%s)\n", strerror(-err), st.error);
		return 1;
	}
	printf("tiny_guest: %llu I/O exits, %llu HLT exits in %llu ms (%.0f exits/s)\n",
	       (unsigned long long)st.io_exits, (unsigned long long)st.hlt_exits,
	       (unsigned long long)ms, ms ? st.io_exits * 1000.0 / ms : 0.0);
	return 0;
}
