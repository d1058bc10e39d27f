// SPDX-License-Identifier: GPL-2.0
/*
 * sync_guest: a tiny KVM guest that makes vmlat's clock-sync hypercall
 * (hypercall/vmlat_hypercall.h) with registers this program sets, for
 * vmlat's clock-sync tests.
 *
 *   sync_guest honest N PERIOD_MS OFFSET_NS
 *	N exchanges, one every PERIOD_MS, whose guest clock is the host's
 *	CLOCK_MONOTONIC minus OFFSET_NS, read right before KVM_RUN (g1) and
 *	right after it returned (g2): the true mapping is host = guest +
 *	OFFSET_NS, the round trip is what this program measures. Then one
 *	more call, which brings the last exchange's g2.
 *   sync_guest clockpair
 *	the host's TSC and CLOCK_MONOTONIC read together (the pair of 20
 *	whose clock reads are closest around the TSC read), no guest
 *   sync_guest flood N
 *	N calls as fast as the guest can make them: malformed headers and
 *	seq 0, replayed and skipped numbers, well-formed calls with garbage
 *	times.
 *
 * The guest (a C function of this program, run by the KVM selftests'
 * library in 64-bit mode) loops on VMMCALL; OUT to port 0x11, where this
 * program sets the registers of the next call: what vmlat sees is what is
 * set here. Prints one line: what was sent and measured.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <linux/kvm.h>

#include "../../hypercall/vmlat_hypercall.h"
#include "ksft_kvm.h"

#define SYNC_PORT	0x11

/*
 * The guest: VMMCALL with the registers the host set at the OUT before it,
 * for ever. One asm statement, so that no compiled code runs between the
 * OUT exit and the next VMMCALL and no register the host sets is touched;
 * KVM's return value in RAX is overwritten by the host before the next call.
 */
static void sync_guest_code(void)
{
	__asm__ __volatile__("1:	vmmcall\n"
			     "	outb	%%al, %[port]\n"
			     "	jmp	1b\n"
			     : : [port] "i"(SYNC_PORT)
			     : "rax", "rbx", "rcx", "rdx", "rsi", "memory");
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

struct call {
	uint64_t hdr, g1, prev_g2, seq;
};

/* Make one call: KVM_RUN until the guest's OUT after its VMMCALL. */
static int make_call(int fd, struct kvm_run *run, const struct call *c)
{
	struct kvm_regs regs;
	char why[128];

	if (ioctl(fd, KVM_GET_REGS, &regs) < 0)
		return -errno;
	regs.rax = VMLAT_HC_NR;
	regs.rbx = c->hdr;
	regs.rcx = c->g1;
	regs.rdx = c->prev_g2;
	regs.rsi = c->seq;
	if (ioctl(fd, KVM_SET_REGS, &regs) < 0)
		return -errno;
	for (;;) {
		if (ioctl(fd, KVM_RUN, 0) < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (run->exit_reason == KVM_EXIT_IO &&
		    run->io.port == SYNC_PORT)
			return 0;
		fprintf(stderr, "sync_guest: %s\n",
			vmlat_run_error(run, why, sizeof(why)));
		return -EIO;
	}
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static int honest(int fd, struct kvm_run *run, long n, long period_ms,
		  uint64_t off)
{
	struct call c = { .hdr = VMLAT_HC_HDR };
	uint64_t *rtt, g2 = 0;
	long i;
	int err;

	rtt = calloc(n + 1, sizeof(*rtt));
	if (!rtt)
		return -ENOMEM;
	for (i = 1; i <= n + 1; i++) {
		c.seq = i;
		c.prev_g2 = g2;
		c.g1 = mono_ns() - off;
		err = make_call(fd, run, &c);
		if (err) {
			free(rtt);
			return err;
		}
		g2 = mono_ns() - off;
		rtt[i - 1] = g2 - c.g1;
		if (i <= n)
			usleep(period_ms * 1000);
	}
	/* The last call only brought the g2 of exchange n. */
	qsort(rtt, n, sizeof(*rtt), cmp_u64);
	printf("sync_guest mode=honest pid=%d exchanges=%ld offset_ns=%llu rtt_min_ns=%llu rtt_p50_ns=%llu rtt_max_ns=%llu last_g2=%llu\n",
	       (int)getpid(), n, (unsigned long long)off,
	       (unsigned long long)rtt[0], (unsigned long long)rtt[n / 2],
	       (unsigned long long)rtt[n - 1],
	       (unsigned long long)c.prev_g2);
	free(rtt);
	return 0;
}

static int flood(int fd, struct kvm_run *run, long n)
{
	uint64_t seq = 10, t0 = mono_ns();
	long i, malformed = 0;
	struct call c;
	int err;

	for (i = 0; i < n; i++) {
		c.hdr = VMLAT_HC_HDR;
		c.g1 = (uint64_t)rand() << 20;
		c.prev_g2 = (uint64_t)rand() << 20;
		switch (i % 5) {
		case 0:		/* wrong magic or version */
			c.hdr = VMLAT_HC_HDR ^ (1ULL << (i % 64));
			c.seq = ++seq;
			malformed++;
			break;
		case 1:		/* seq 0 */
			c.seq = 0;
			malformed++;
			break;
		case 2:		/* replayed */
			c.seq = seq - 3;
			break;
		case 3:		/* skips numbers */
			seq += 7;
			c.seq = seq;
			break;
		default:	/* next number, garbage times */
			c.seq = ++seq;
			break;
		}
		err = make_call(fd, run, &c);
		if (err)
			return err;
	}
	printf("sync_guest mode=flood pid=%d calls=%ld malformed=%ld duration_ms=%llu\n",
	       (int)getpid(), n, malformed,
	       (unsigned long long)((mono_ns() - t0) / 1000000 + 1));
	return 0;
}

static int clockpair(void)
{
	uint64_t m1, m2, tsc, best = UINT64_MAX, best_tsc = 0, best_mono = 0;
	unsigned int lo, hi;
	int i;

	for (i = 0; i < 20; i++) {
		m1 = mono_ns();
		asm volatile("lfence; rdtsc" : "=a"(lo), "=d"(hi));
		tsc = (uint64_t)hi << 32 | lo;
		m2 = mono_ns();
		if (m2 - m1 < best) {
			best = m2 - m1;
			best_tsc = tsc;
			best_mono = m1 + (m2 - m1) / 2;
		}
	}
	printf("sync_guest mode=clockpair tsc=%llu mono_ns=%llu skew_ns=%llu\n",
	       (unsigned long long)best_tsc, (unsigned long long)best_mono,
	       (unsigned long long)(best / 2 + 1));
	return 0;
}

int main(int argc, char **argv)
{
	struct vmlat_guest_stats st = {};
	struct vmlat_vm *vm;
	struct kvm_run *run;
	int fd, err;

	if (argc == 2 && !strcmp(argv[1], "clockpair"))
		return clockpair();
	if (argc == 5 && !strcmp(argv[1], "honest")) {
		;
	} else if (argc == 3 && !strcmp(argv[1], "flood")) {
		;
	} else {
		fprintf(stderr, "usage: %s honest N PERIOD_MS OFFSET_NS | flood N | clockpair\n",
			argv[0]);
		return 2;
	}
	err = vmlat_vm_create(&vm, sync_guest_code, 0, &st);
	if (err) {
		fprintf(stderr, "sync_guest: %s\n", st.error);
		return err == -ENOENT ? 4 : 1;
	}
	fd = vmlat_vm_vcpu_fd(vm);
	run = vmlat_vm_kvm_run(vm);
	if (argc == 5)
		err = honest(fd, run, strtol(argv[2], NULL, 0),
			     strtol(argv[3], NULL, 0),
			     strtoull(argv[4], NULL, 0));
	else
		err = flood(fd, run, strtol(argv[2], NULL, 0));
	vmlat_vm_destroy(vm);
	if (err) {
		fprintf(stderr, "sync_guest: %s\n", strerror(-err));
		return 1;
	}
	return 0;
}
