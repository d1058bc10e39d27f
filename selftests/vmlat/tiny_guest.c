// SPDX-License-Identifier: GPL-2.0
/*
 * tiny_guest: run the selftests' tiny KVM guest from the command line.
 *
 *   tiny_guest exits N      exactly N port-I/O exits, then HLT
 *   tiny_guest seconds S    port-I/O exits in a loop for S seconds
 *   tiny_guest churn N      N VM lifetimes (a VM made, 1 to 5 exits, HLT,
 *                           destroyed) in threads made one after another,
 *                           each running 1 to 4 of them in turn
 *   tiny_guest hold N       N VMs alive at once, one vCPU thread each:
 *                           each runs to its HLT, then all wait until
 *                           stdin is closed (or reaches its end)
 *
 * Prints the exits userspace saw and the rate. Used by the demo
 * (tools/demo) and the benchmark (tools/bench), and handy to put load on
 * a vCPU by hand.
 */
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

struct holder {
	struct ksft_vm *vm;
	sem_t *ready, *go;
	int err;
	struct vmlat_guest_stats st;
};

/*
 * Makes its VM and runs it to the HLT (so this thread is its vCPU
 * thread), then waits.
 */
static void *hold_thread(void *arg)
{
	struct holder *h = arg;

	h->err = vmlat_guest_run_kept(&h->vm, 1, &h->st);
	sem_post(h->ready);
	sem_wait(h->go);
	return NULL;
}

/* @n VMs alive at once until stdin ends; then all destroyed. */
static int hold(unsigned long n, struct vmlat_guest_stats *st)
{
	struct holder *h = calloc(n, sizeof(*h));
	pthread_t *th = calloc(n, sizeof(*th));
	unsigned long i, made = 0;
	sem_t ready, go;
	char c;
	int err = 0;

	if (!h || !th) {
		free(h);
		free(th);
		return -ENOMEM;
	}
	sem_init(&ready, 0, 0);
	sem_init(&go, 0, 0);
	for (i = 0; i < n; i++) {
		h[i].ready = &ready;
		h[i].go = &go;
		if (pthread_create(&th[i], NULL, hold_thread, &h[i])) {
			err = -EAGAIN;
			break;
		}
		made++;
		sem_wait(&ready);
		err = h[i].err;
		if (err) {
			*st = h[i].st;
			break;
		}
		st->io_exits += h[i].st.io_exits;
		st->hlt_exits += h[i].st.hlt_exits;
	}
	if (!err) {
		printf("tiny_guest: %lu VMs alive\n", made);
		fflush(stdout);
		while (read(0, &c, 1) > 0)
			;
	}
	for (i = 0; i < made; i++)
		sem_post(&go);
	for (i = 0; i < made; i++) {
		pthread_join(th[i], NULL);
		ksft_vm_destroy(h[i].vm);
	}
	free(h);
	free(th);
	return err;
}

int main(int argc, char **argv)
{
	struct vmlat_guest_progress pr = {};
	struct vmlat_guest_stats st = {};
	unsigned long n;
	uint64_t t0, ms;
	int err;

	if (argc != 3 || (strcmp(argv[1], "exits") &&
			  strcmp(argv[1], "seconds") && strcmp(argv[1], "churn") &&
			  strcmp(argv[1], "hold"))) {
		fprintf(stderr, "usage: %s exits N | seconds S | churn N | hold N\n",
			argv[0]);
		return 2;
	}
	n = strtoul(argv[2], NULL, 0);
	t0 = vmlat_now_ms();
	if (!strcmp(argv[1], "exits"))
		err = vmlat_guest_run_exits(n, &st);
	else if (!strcmp(argv[1], "churn"))
		err = churn(n, &st);
	else if (!strcmp(argv[1], "hold"))
		err = hold(n, &st);
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
