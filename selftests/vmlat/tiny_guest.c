// SPDX-License-Identifier: GPL-2.0
/*
 * tiny_guest: run the selftests' tiny KVM guest from the command line.
 *
 *   tiny_guest exits N      exactly N port-I/O exits, then HLT
 *   tiny_guest seconds S    port-I/O exits in a loop for S seconds
 *   tiny_guest churn N      N VM lifetimes (a VM made, 1 to 5 exits, HLT,
 *                           destroyed) in threads made one after another,
 *                           each running 1 to 4 of them in turn
 *
 * Prints the exits userspace saw and the rate. Used by the demo
 * (tools/demo) and the benchmark (tools/bench), and handy to put load on
 * a vCPU by hand.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ksft_kvm.h"
#include "ksft_util.h"

struct churn {
	unsigned long first, nr;
	int err;
	struct vmlat_guest_stats st;
};

static void *churn_thread(void *arg)
{
	struct churn *c = arg;
	unsigned long i;

	for (i = 0; i < c->nr && !c->err; i++)
		c->err = vmlat_guest_run_exits(1 + (c->first + i) % 5, &c->st);
	return NULL;
}

/* @n VM lifetimes, in threads of 1 to 4 each, one thread at a time. */
static int churn(unsigned long n, struct vmlat_guest_stats *st)
{
	unsigned long done, threads = 0;
	struct churn c;
	pthread_t th;

	for (done = 0; done < n; done += c.nr, threads++) {
		memset(&c, 0, sizeof(c));
		c.first = done;
		c.nr = 1 + threads % 4;
		if (c.nr > n - done)
			c.nr = n - done;
		if (pthread_create(&th, NULL, churn_thread, &c))
			return -EAGAIN;
		pthread_join(th, NULL);
		if (c.err) {
			*st = c.st;
			return c.err;
		}
		st->io_exits += c.st.io_exits;
		st->hlt_exits += c.st.hlt_exits;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct vmlat_guest_progress pr = {};
	struct vmlat_guest_stats st = {};
	unsigned long n;
	uint64_t t0, ms;
	int err;

	if (argc != 3 || (strcmp(argv[1], "exits") &&
			  strcmp(argv[1], "seconds") && strcmp(argv[1], "churn"))) {
		fprintf(stderr, "usage: %s exits N | seconds S | churn N\n",
			argv[0]);
		return 2;
	}
	n = strtoul(argv[2], NULL, 0);
	t0 = vmlat_now_ms();
	if (!strcmp(argv[1], "exits"))
		err = vmlat_guest_run_exits(n, &st);
	else if (!strcmp(argv[1], "churn"))
		err = churn(n, &st);
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
