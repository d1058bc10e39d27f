// SPDX-License-Identifier: GPL-2.0
/*
 * sync_guest: a tiny KVM guest that makes vmlat's clock-sync hypercall
 * (hypercall/vmlat_hypercall.h) with registers this program sets, for
 * vmlat's clock-sync tests.
 *
 *   sync_guest honest N PERIOD_MS OFFSET_NS [v1]
 *	N exchanges, one every PERIOD_MS, whose guest clock is the host's
 *	CLOCK_MONOTONIC minus OFFSET_NS, read right before KVM_RUN (g1) and
 *	right after it returned (g2): the true mapping is host = guest +
 *	OFFSET_NS, the round trip is what this program measures. Then one
 *	more call, which brings the last exchange's g2. Version 2 calls
 *	(v1: version 1); what came back in RAX and RBX is counted.
 *   sync_guest user N PERIOD_MS OFFSET_NS K
 *	as honest, and between two honest calls (at CPL 0) K calls from
 *	CPL 3: seq ~0, 1 and the next honest seq in turn, version 2 and 1
 *	headers, g2 garbage, and every fourth call all random (header,
 *	seq, times). KVM's answer to each (-KVM_EPERM: it saw CPL 3) and
 *	RBX after it are counted.
 *   sync_guest names N KEYS TGID COMM
 *	process names (version 3): one call naming the guest's own CR3
 *	TGID COMM, then N calls as fast as the guest can make them: with
 *	KEYS > 0, roots among KEYS made-up ones (every other one said new,
 *	every eighth call malformed: a bit above the address); with KEYS 0,
 *	the first call again. Then the first call again, every 2 ms until
 *	it is taken. Prints the CR3 (KVM_GET_SREGS) and the replies: taken,
 *	limited, malformed, none.
 *   sync_guest steal ROUNDS SPIN_MS K
 *	the guest's own steal (version 4), once a line came on standard
 *	input (the test allowed the VM, or not; it printed "sync_guest
 *	ready" before, as the other steal modes do): ROUNDS rounds, each a call
 *	for every page and for two past the last, with RDX, RSI and RDI set
 *	to markers; before each round, SPIN_MS of calls with another number
 *	(the vCPU in and out of the guest all the time, never asleep: a hog
 *	on its CPU preempts it) and K calls from CPL 3, for pages in turn.
 *	Prints the counts of replies, then the last round, a line per page:
 *	its reply, the four registers after it, and the host's
 *	CLOCK_MONOTONIC right after the round.
 *   sync_guest stealvcpus ROUNDS SPIN_MS CPU0 CPU1
 *	a VM of two vCPUs, vCPU i run by a thread pinned to CPUi, once a
 *	line came on standard input: each makes ROUNDS rounds of SPIN_MS of
 *	other calls then a call for each of its own pages (the vCPU pages).
 *	Prints, per vCPU, its last round: vcpu=I page=P and as steal does.
 *   sync_guest stealflood N
 *	N calls for page 0 as fast as the guest can make them, once a line
 *	came on standard input; the replies counted.
 *   sync_guest clockpair
 *	the host's TSC and CLOCK_MONOTONIC read together (the pair of 20
 *	whose clock reads are closest around the TSC read), no guest
 *   sync_guest flood N [SECONDS]
 *	N calls (or as many as SECONDS allow) as fast as the guest can make
 *	them: malformed headers and
 *	seq 0, replayed and skipped numbers, well-formed calls with garbage
 *	times, and random 64-bit registers: all of them, all but a valid
 *	header (clock sync's or the steal call's, with a random page), and
 *	all with another hypercall number (never vmlat's, nor one of KVM's
 *	own). "calls" counts the clock-sync calls with vmlat's number,
 *	"steal" the steal calls.
 *
 * Random values come from random() seeded with $SYNC_SEED, else the time
 * and pid; the seed is printed.
 *
 * The guest (a C function of this program, run by the KVM selftests'
 * library in 64-bit mode) loops on VMMCALL (VMCALL on Intel); OUT to port 0x11, where this
 * program sets the registers of the next call: what vmlat sees is what is
 * set here. Prints one line: what was sent and measured.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
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
/* KVM's returns in RAX (include/uapi/linux/kvm_para.h) */
#define SYNC_KVM_ENOSYS	((uint64_t)-1000)
#define SYNC_KVM_EPERM	((uint64_t)-1)

static unsigned int sync_seed;

/*
 * The guest: the hypercall with the registers the host set at the OUT
 * before it, for ever. One asm statement, so that no compiled code runs
 * between the OUT exit and the next call and no register the host sets is
 * touched; KVM's return value in RAX is overwritten by the host before the
 * next call. VMMCALL on AMD, VMCALL on Intel (the other one would be a
 * #UD exit that KVM patches into this one).
 */
#define SYNC_GUEST_CODE(name, insn)					\
static void name(void)							\
{									\
	__asm__ __volatile__("1:	" insn "\n"				\
			     "	outb	%%al, %[port]\n"		\
			     "	jmp	1b\n"				\
			     : : [port] "i"(SYNC_PORT)			\
			     : "rax", "rbx", "rcx", "rdx", "rsi", "rdi",	\
			       "memory");					\
}
SYNC_GUEST_CODE(sync_guest_vmmcall, "vmmcall")
SYNC_GUEST_CODE(sync_guest_vmcall, "vmcall")

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/*
 * A call; @nr: 0 for vmlat's; @rax, @rbx and @out (RCX, RDX, RSI, RDI):
 * what came back.
 */
struct call {
	uint64_t nr, hdr, g1, prev_g2, seq;
	uint64_t rdi;		/* a name call's comm[8..15] */
	uint64_t rax, rbx;
	uint64_t out[4];
};

/* Make one call: KVM_RUN until the guest's OUT after its hypercall. */
static int make_call(int fd, struct kvm_run *run, struct call *c)
{
	struct kvm_regs regs;
	char why[128];

	if (ioctl(fd, KVM_GET_REGS, &regs) < 0)
		return -errno;
	regs.rax = c->nr ? c->nr : VMLAT_HC_NR;
	regs.rbx = c->hdr;
	regs.rcx = c->g1;
	regs.rdx = c->prev_g2;
	regs.rsi = c->seq;
	regs.rdi = c->rdi;
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
			break;
		fprintf(stderr, "sync_guest: %s\n",
			vmlat_run_error(run, why, sizeof(why)));
		return -EIO;
	}
	if (ioctl(fd, KVM_GET_REGS, &regs) < 0)
		return -errno;
	c->rax = regs.rax;
	c->rbx = regs.rbx;
	c->out[0] = regs.rcx;
	c->out[1] = regs.rdx;
	c->out[2] = regs.rsi;
	c->out[3] = regs.rdi;
	return 0;
}

/* 64 random bits: random() gives 31 */
static uint64_t rand64(void)
{
	return (uint64_t)random() << 62 ^ (uint64_t)random() << 31 ^
	       (uint64_t)random();
}

static bool hdr_valid(uint64_t hdr)
{
	return hdr == VMLAT_HC_HDR || hdr == VMLAT_HC_HDR_V1;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Counts of what came back. */
struct answers {
	long replies;		/* RBX: a version 2 reply */
	long replies_mapped;	/* ... saying the previous exchange mapped */
	long rbx_kept;		/* RBX: what was sent */
	long enosys;		/* RAX: -KVM_ENOSYS */
	long user_calls;
	long user_eperm;	/* RAX: -KVM_EPERM, KVM saw CPL 3 */
	long user_rbx_kept;
};

static void count_answer(struct answers *an, const struct call *c)
{
	an->enosys += c->rax == SYNC_KVM_ENOSYS;
	an->rbx_kept += c->rbx == c->hdr;
	if (VMLAT_HC_IS_REPLY(c->rbx)) {
		an->replies++;
		an->replies_mapped += VMLAT_HC_REPLY_CALL(c->rbx) ==
				      VMLAT_HC_CALL_TAKEN &&
				      VMLAT_HC_REPLY_PREV(c->rbx) ==
				      VMLAT_HC_PREV_MAPPED;
	}
}

/*
 * Ring 3 (@sregs0: ring 0's registers): CS and SS with DPL and RPL 3,
 * which is what KVM's get_cpl() reads (SVM: the VMCB's CPL, set from
 * SS.DPL; VMX: SS.DPL), IOPL 3 for the OUT.
 */
static int enter_ring3(int fd, const struct kvm_sregs *sregs0)
{
	struct kvm_sregs sregs = *sregs0;
	struct kvm_regs regs;

	sregs.cs.selector = 0x33;
	sregs.cs.dpl = 3;
	sregs.ss.selector = 0x2b;
	sregs.ss.dpl = 3;
	if (ioctl(fd, KVM_SET_SREGS, &sregs) < 0 ||
	    ioctl(fd, KVM_GET_REGS, &regs) < 0)
		return -errno;
	regs.rflags |= 3 << 12;		/* IOPL 3 */
	if (ioctl(fd, KVM_SET_REGS, &regs) < 0)
		return -errno;
	return 0;
}

/* Ring 3 for @k calls (@sregs0: ring 0's registers, restored after). */
static int user_calls(int fd, struct kvm_run *run,
		      const struct kvm_sregs *sregs0, long k,
		      uint64_t next_seq, struct answers *an)
{
	struct call c = {};
	long i;
	int err;

	err = enter_ring3(fd, sregs0);
	if (err)
		return err;
	for (i = 0; i < k; i++) {
		static const uint64_t seqs[] = { ~0ULL, 1, 0 };

		c.hdr = i % 2 ? VMLAT_HC_HDR_V1 : VMLAT_HC_HDR;
		c.seq = seqs[i % 3] ? seqs[i % 3] : next_seq;
		c.g1 = mono_ns();
		c.prev_g2 = (uint64_t)rand() << 20;
		if (i % 4 == 3) {
			c.hdr = rand64();
			c.seq = rand64();
			c.g1 = rand64();
			c.prev_g2 = rand64();
		}
		err = make_call(fd, run, &c);
		if (err)
			return err;
		an->user_calls++;
		an->user_eperm += c.rax == SYNC_KVM_EPERM;
		an->user_rbx_kept += c.rbx == c.hdr;
	}
	if (ioctl(fd, KVM_SET_SREGS, sregs0) < 0)
		return -errno;
	return 0;
}

static int honest(int fd, struct kvm_run *run, long n, long period_ms,
		  uint64_t off, uint64_t hdr, long k_user)
{
	struct call c = { .hdr = hdr };
	struct answers an = {};
	struct kvm_sregs sregs0;
	uint64_t *rtt, g2 = 0;
	long i;
	int err;

	if (ioctl(fd, KVM_GET_SREGS, &sregs0) < 0)
		return -errno;
	rtt = calloc(n + 1, sizeof(*rtt));
	if (!rtt)
		return -ENOMEM;
	for (i = 1; i <= n + 1; i++) {
		c.seq = i;
		c.prev_g2 = g2;
		c.g1 = mono_ns() - off;
		err = make_call(fd, run, &c);
		if (err)
			goto out;
		g2 = mono_ns() - off;
		rtt[i - 1] = g2 - c.g1;
		count_answer(&an, &c);
		if (i > n)
			break;
		err = user_calls(fd, run, &sregs0, k_user, i + 1, &an);
		if (err)
			goto out;
		usleep(period_ms * 1000);
	}
	/* The last call only brought the g2 of exchange n. */
	qsort(rtt, n, sizeof(*rtt), cmp_u64);
	printf("sync_guest mode=honest pid=%d exchanges=%ld offset_ns=%llu rtt_min_ns=%llu rtt_p50_ns=%llu rtt_max_ns=%llu last_g2=%llu version=%llu replies=%ld replies_mapped=%ld rbx_kept=%ld enosys=%ld user_calls=%ld user_eperm=%ld user_rbx_kept=%ld seed=%u\n",
	       (int)getpid(), n, (unsigned long long)off,
	       (unsigned long long)rtt[0], (unsigned long long)rtt[n / 2],
	       (unsigned long long)rtt[n - 1],
	       (unsigned long long)c.prev_g2,
	       (unsigned long long)(hdr & 0xffff), an.replies,
	       an.replies_mapped, an.rbx_kept, an.enosys, an.user_calls,
	       an.user_eperm, an.user_rbx_kept, sync_seed);
out:
	free(rtt);
	return err;
}

static int flood(int fd, struct kvm_run *run, long n, long secs)
{
	uint64_t seq = 10, t0 = mono_ns();
	uint64_t end = secs > 0 ? t0 + secs * 1000000000ULL : UINT64_MAX;
	long i, malformed = 0, random_calls = 0, other_nr = 0, steal = 0;
	struct call c;
	int err;

	for (i = 0; i < n && (i % 64 || mono_ns() < end); i++) {
		memset(&c, 0, sizeof(c));
		c.hdr = VMLAT_HC_HDR;
		c.g1 = (uint64_t)rand() << 20;
		c.prev_g2 = (uint64_t)rand() << 20;
		switch (i % 8) {
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
		case 4:		/* next number, garbage times */
			c.seq = ++seq;
			break;
		case 5:		/* all random */
		case 6:		/* all random but a valid header */
		case 7:		/* all random, another hypercall */
			c.hdr = i % 8 == 5 ? rand64() :
				(const uint64_t[]){ VMLAT_HC_HDR,
						    VMLAT_HC_HDR_V1,
						    VMLAT_HC_HDR_STEAL }
				[random() % 3];
			c.seq = rand64();
			c.g1 = rand64();
			c.prev_g2 = rand64();
			c.rdi = rand64();
			if (c.hdr == VMLAT_HC_HDR_STEAL) {
				/* a page: one of them, past them, or any */
				c.g1 = random() & 1 ? rand64() :
				       (uint64_t)random() % 16;
				steal++;
			} else if (i % 8 == 7) {
				/* KVM's own are small numbers, vmlat's 32-bit */
				c.nr = rand64() | 1ULL << 40;
				other_nr++;
			} else {
				random_calls++;
				malformed += !hdr_valid(c.hdr) || !c.seq;
			}
			break;
		}
		err = make_call(fd, run, &c);
		if (err)
			return err;
	}
	printf("sync_guest mode=flood pid=%d calls=%ld malformed=%ld random=%ld other_nr=%ld steal=%ld seed=%u duration_ms=%llu\n",
	       (int)getpid(), i - other_nr - steal, malformed, random_calls,
	       other_nr, steal, sync_seed,
	       (unsigned long long)((mono_ns() - t0) / 1000000 + 1));
	return 0;
}

/* Version 3: @n name calls after one naming the guest's own CR3. */
static int names(int fd, struct kvm_run *run, long n, long keys,
		 uint64_t tgid, const char *comm)
{
	long i, taken = 0, limited = 0, malformed = 0, none = 0, sent = 0;
	uint64_t t0 = mono_ns(), comm_own[2] = { 0, 0 };
	struct kvm_sregs sregs;
	struct call c, own;
	char name[16];
	int err;

	if (ioctl(fd, KVM_GET_SREGS, &sregs) < 0)
		return -errno;
	memset(name, 0, sizeof(name));
	strncpy(name, comm, sizeof(name) - 1);
	memcpy(comm_own, name, sizeof(comm_own));
	memset(&own, 0, sizeof(own));
	own.hdr = VMLAT_HC_HDR_NAME;
	own.g1 = sregs.cr3 & ~0xfffULL;
	own.prev_g2 = tgid;
	own.seq = comm_own[0];
	own.rdi = comm_own[1];
	/* The own name first, and again at the end until it is taken. */
	for (i = -1; i <= n; i++) {
		c = own;
		if (i >= 0 && i < n && keys > 0) {
			c.g1 = (uint64_t)(1 + random() % keys) << 13;
			c.g1 |= i % 2 ? VMLAT_HC_NAME_NEW : 0;
			if (i % 8 == 7)
				c.g1 |= 1ULL << 60;
			c.prev_g2 = 1 + random() % 4000000;
			memset(name, 0, sizeof(name));
			snprintf(name, sizeof(name), "flood%ld", i % 1000000000);
			memcpy(&c.seq, name, 8);
			memcpy(&c.rdi, name + 8, 8);
		}
		err = make_call(fd, run, &c);
		if (err)
			return err;
		sent++;
		if (!VMLAT_HC_IS_REPLY(c.rbx)) {
			none++;
		} else if (VMLAT_HC_REPLY_CALL(c.rbx) == VMLAT_HC_CALL_TAKEN) {
			taken++;
		} else if (VMLAT_HC_REPLY_CALL(c.rbx) == VMLAT_HC_CALL_LIMITED) {
			limited++;
			if (i == n && limited < 1000000) {
				usleep(2000);
				i--;	/* the last one again */
			}
		} else if (VMLAT_HC_REPLY_CALL(c.rbx) == VMLAT_HC_CALL_MALFORMED) {
			malformed++;
		}
	}
	printf("sync_guest mode=names pid=%d cr3=0x%llx calls=%ld taken=%ld limited=%ld malformed=%ld none=%ld duration_ms=%llu\n",
	       (int)getpid(), (unsigned long long)sregs.cr3, sent, taken,
	       limited, malformed, none,
	       (unsigned long long)((mono_ns() - t0) / 1000000 + 1));
	return 0;
}

/* The markers a steal call's RDX, RSI and RDI carry in. */
#define STEAL_MARK(i)	(0x5354454100000000ULL | (i))	/* "STEA" */

/* The replies to steal calls, by what they said. */
struct steal_counts {
	long calls, taken, limited, malformed, denied, none, other;
	long untouched;		/* ... those with RCX..RDI as they went in */
};

static void steal_call(int fd, struct kvm_run *run, uint64_t page,
		       struct call *c, struct steal_counts *n, int *err)
{
	memset(c, 0, sizeof(*c));
	c->hdr = VMLAT_HC_HDR_STEAL;
	c->g1 = page;			/* RCX */
	c->prev_g2 = STEAL_MARK(1);	/* RDX */
	c->seq = STEAL_MARK(2);		/* RSI */
	c->rdi = STEAL_MARK(3);
	*err = make_call(fd, run, c);
	if (*err)
		return;
	n->calls++;
	n->untouched += c->out[0] == page && c->out[1] == STEAL_MARK(1) &&
			c->out[2] == STEAL_MARK(2) &&
			c->out[3] == STEAL_MARK(3);
	if (!VMLAT_HC_IS_REPLY(c->rbx))
		n->none++;
	else if (VMLAT_HC_REPLY_CALL(c->rbx) == VMLAT_HC_CALL_TAKEN)
		n->taken++;
	else if (VMLAT_HC_REPLY_CALL(c->rbx) == VMLAT_HC_CALL_LIMITED)
		n->limited++;
	else if (VMLAT_HC_REPLY_CALL(c->rbx) == VMLAT_HC_CALL_MALFORMED)
		n->malformed++;
	else if (VMLAT_HC_REPLY_CALL(c->rbx) == VMLAT_HC_CALL_DENIED)
		n->denied++;
	else
		n->other++;
}

/*
 * The order a round asks the pages in: page 1 (its time observed) first,
 * then 0 and the others: the figures of every page asked after it grew
 * since by no more than the time observed did (vmlat.rst).
 */
static uint64_t steal_order(uint64_t i)
{
	return i == 0 ? VMLAT_HC_STEAL_P_TIME :
	       i == 1 ? VMLAT_HC_STEAL_P_STEAL : i;
}

static void steal_counts_print(const char *mode, const struct steal_counts *n,
			       const char *more)
{
	printf("sync_guest mode=%s pid=%d calls=%ld taken=%ld limited=%ld malformed=%ld denied=%ld none=%ld other=%ld untouched=%ld%s\n",
	       mode, (int)getpid(), n->calls, n->taken, n->limited,
	       n->malformed, n->denied, n->none, n->other, n->untouched,
	       more);
}

/*
 * The steal modes' start: says "sync_guest ready" (its VM made, its vCPU
 * not run yet), then waits for a line on standard input. The test lets
 * every VM go once all are ready: a VM made slowly (KASAN under TCG)
 * would otherwise start its calls after another had ended its own.
 */
static int wait_for_go(void)
{
	printf("sync_guest ready\n");
	fflush(stdout);
	return getchar() == EOF ? -EPIPE : 0;
}

static int steal(int fd, struct kvm_run *run, long rounds, long spin_ms,
		 long k_user)
{
	struct call last[VMLAT_HC_STEAL_PAGES + 2], c;
	struct steal_counts n = {}, user = {};
	long r, i, user_eperm = 0;
	struct kvm_sregs sregs0;
	uint64_t p, t, end_ns = 0;
	char more[256];
	int err = 0;

	if (ioctl(fd, KVM_GET_SREGS, &sregs0) < 0)
		return -errno;
	err = wait_for_go();
	if (err)
		return err;
	for (r = 0; r < rounds; r++) {
		if (k_user) {
			err = enter_ring3(fd, &sregs0);
			for (i = 0; !err && i < k_user; i++) {
				steal_call(fd, run, i % VMLAT_HC_STEAL_PAGES,
					   &c, &user, &err);
				user_eperm += !err && c.rax == SYNC_KVM_EPERM;
			}
			if (err || ioctl(fd, KVM_SET_SREGS, &sregs0) < 0)
				return err ?: -errno;
		}
		/* Busy, not another vmlat call: KVM's -KVM_ENOSYS. */
		for (t = mono_ns(); mono_ns() - t < spin_ms * 1000000ULL;) {
			c = (struct call){ .nr = 0x5354, .hdr = 1 };
			err = make_call(fd, run, &c);
			if (err)
				return err;
		}
		/* Page 1 first: its observed time bounds the others' growth. */
		for (i = 0; i < VMLAT_HC_STEAL_PAGES + 2; i++) {
			p = steal_order(i);
			steal_call(fd, run, p, &last[p], &n, &err);
			if (err)
				return err;
		}
		end_ns = mono_ns();
	}
	snprintf(more, sizeof(more),
		 " user_calls=%ld user_eperm=%ld user_untouched=%ld user_replies=%ld end_ns=%llu",
		 user.calls, user_eperm, user.untouched, user.calls - user.none,
		 (unsigned long long)end_ns);
	steal_counts_print("steal", &n, more);
	for (p = 0; p < VMLAT_HC_STEAL_PAGES + 2; p++)
		printf("page=%llu reply=%llu rax=%lld rcx=%llu rdx=%llu rsi=%llu rdi=%llu\n",
		       (unsigned long long)p,
		       (unsigned long long)(VMLAT_HC_IS_REPLY(last[p].rbx) ?
			VMLAT_HC_REPLY_CALL(last[p].rbx) : 0),
		       (long long)last[p].rax,
		       (unsigned long long)last[p].out[0],
		       (unsigned long long)last[p].out[1],
		       (unsigned long long)last[p].out[2],
		       (unsigned long long)last[p].out[3]);
	return 0;
}

/* One vCPU of stealvcpus: its thread's work and what it got. */
struct steal_vcpu {
	pthread_t thread;
	int fd, cpu, err;
	struct kvm_run *run;
	long rounds, spin_ms;
	struct steal_counts n;
	struct call last[VMLAT_HC_STEAL_P_INFO + 1];
};

static void *steal_vcpu_fn(void *arg)
{
	struct steal_vcpu *v = arg;
	cpu_set_t set;
	uint64_t t, p, i;
	struct call c;
	long r;

	CPU_ZERO(&set);
	CPU_SET(v->cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set)) {
		v->err = -errno;
		return NULL;
	}
	for (r = 0; r < v->rounds && !v->err; r++) {
		for (t = mono_ns(); !v->err &&
		     mono_ns() - t < v->spin_ms * 1000000ULL;) {
			c = (struct call){ .nr = 0x5354, .hdr = 1 };
			v->err = make_call(v->fd, v->run, &c);
		}
		for (i = 0; !v->err && i <= VMLAT_HC_STEAL_P_INFO; i++) {
			p = steal_order(i);
			steal_call(v->fd, v->run, p, &v->last[p], &v->n,
				   &v->err);
		}
	}
	return NULL;
}

static int steal_vcpus(struct ksft_vm *vm, long rounds, long spin_ms,
		       int cpu0, int cpu1)
{
	struct steal_vcpu v[2] = {};
	unsigned int i, p;
	int err = 0;

	for (i = 0; i < 2; i++) {
		v[i].fd = ksft_vm_vcpu_fd_n(vm, i);
		v[i].run = ksft_vm_kvm_run_n(vm, i);
		v[i].cpu = i ? cpu1 : cpu0;
		v[i].rounds = rounds;
		v[i].spin_ms = spin_ms;
	}
	err = wait_for_go();
	if (err)
		return err;
	for (i = 0; i < 2; i++) {
		err = -pthread_create(&v[i].thread, NULL, steal_vcpu_fn, &v[i]);
		if (err) {
			while (i--)
				pthread_join(v[i].thread, NULL);
			return err;
		}
	}
	for (i = 0; i < 2; i++) {
		pthread_join(v[i].thread, NULL);
		err = err ?: v[i].err;
	}
	if (err)
		return err;
	printf("sync_guest mode=stealvcpus pid=%d\n", (int)getpid());
	for (i = 0; i < 2; i++)
		for (p = 0; p <= VMLAT_HC_STEAL_P_INFO; p++)
			printf("vcpu=%u page=%u reply=%llu rcx=%llu rdx=%llu rsi=%llu rdi=%llu\n",
			       i, p,
			       (unsigned long long)(VMLAT_HC_IS_REPLY(v[i].last[p].rbx) ?
				VMLAT_HC_REPLY_CALL(v[i].last[p].rbx) : 0),
			       (unsigned long long)v[i].last[p].out[0],
			       (unsigned long long)v[i].last[p].out[1],
			       (unsigned long long)v[i].last[p].out[2],
			       (unsigned long long)v[i].last[p].out[3]);
	return 0;
}

static int steal_flood(int fd, struct kvm_run *run, long calls)
{
	struct steal_counts n = {};
	char more[64];
	struct call c;
	uint64_t t0;
	long i;
	int err;

	err = wait_for_go();
	if (err)
		return err;
	t0 = mono_ns();

	for (i = 0; i < calls && !err; i++)
		steal_call(fd, run, 0, &c, &n, &err);
	if (err)
		return err;
	snprintf(more, sizeof(more), " duration_ns=%llu",
		 (unsigned long long)(mono_ns() - t0));
	steal_counts_print("stealflood", &n, more);
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
	uint64_t hdr = VMLAT_HC_HDR;
	struct ksft_vm *vm;
	struct kvm_run *run;
	struct kvm_regs regs;
	void (*code)(void);
	long k_user = 0;
	unsigned int nr_vcpus = 1;
	const char *seed_env = getenv("SYNC_SEED");
	int fd, err;

	sync_seed = seed_env ? strtoul(seed_env, NULL, 0) :
		    (unsigned int)(time(NULL) ^ getpid());
	srandom(sync_seed);
	if (argc == 2 && !strcmp(argv[1], "clockpair"))
		return clockpair();
	if ((argc == 5 || argc == 6) && !strcmp(argv[1], "honest")) {
		if (argc == 6 && !strcmp(argv[5], "v1"))
			hdr = VMLAT_HC_HDR_V1;
		else if (argc == 6)
			argc = 0;
	} else if (argc == 6 && !strcmp(argv[1], "user")) {
		k_user = strtol(argv[5], NULL, 0);
	} else if ((argc == 3 || argc == 4) && !strcmp(argv[1], "flood")) {
		;
	} else if (argc == 6 && !strcmp(argv[1], "names")) {
		;
	} else if (argc == 5 && !strcmp(argv[1], "steal")) {
		;
	} else if (argc == 3 && !strcmp(argv[1], "stealflood")) {
		;
	} else if (argc == 6 && !strcmp(argv[1], "stealvcpus")) {
		nr_vcpus = 2;
	} else {
		argc = 0;
	}
	if (!argc) {
		fprintf(stderr, "usage: %s honest N PERIOD_MS OFFSET_NS [v1] | user N PERIOD_MS OFFSET_NS K | flood N [SECONDS] | names N KEYS TGID COMM | steal ROUNDS SPIN_MS K | stealvcpus ROUNDS SPIN_MS CPU0 CPU1 | stealflood N | clockpair\n",
			argv[0]);
		return 2;
	}
	code = vmlat_host_is_intel() ? sync_guest_vmcall : sync_guest_vmmcall;
	err = ksft_vm_create_vcpus(&vm, nr_vcpus, code, 0, &st);
	if (err) {
		fprintf(stderr, "sync_guest: %s\n", st.error);
		return err == -ENOENT ? 4 : 1;
	}
	fd = ksft_vm_vcpu_fd(vm);
	run = ksft_vm_kvm_run(vm);
	/* Ring 3 runs the guest's loop: its code and stack pages are user. */
	if (k_user && (ioctl(fd, KVM_GET_REGS, &regs) < 0 ||
		       ksft_vm_user_page(vm, (uint64_t)code) ||
		       ksft_vm_user_page(vm, (uint64_t)code + 63) ||
		       ksft_vm_user_page(vm, regs.rsp - 8))) {
		fprintf(stderr, "sync_guest: cannot map the guest for ring 3\n");
		err = -EFAULT;
	} else if (!strcmp(argv[1], "steal")) {
		err = ksft_vm_user_page(vm, (uint64_t)code) ||
		      ksft_vm_user_page(vm, (uint64_t)code + 63) ||
		      ioctl(fd, KVM_GET_REGS, &regs) < 0 ||
		      ksft_vm_user_page(vm, regs.rsp - 8) ? -EFAULT :
		      steal(fd, run, strtol(argv[2], NULL, 0),
			    strtol(argv[3], NULL, 0),
			    strtol(argv[4], NULL, 0));
	} else if (!strcmp(argv[1], "stealvcpus")) {
		err = steal_vcpus(vm, strtol(argv[2], NULL, 0),
				  strtol(argv[3], NULL, 0),
				  (int)strtol(argv[4], NULL, 0),
				  (int)strtol(argv[5], NULL, 0));
	} else if (!strcmp(argv[1], "stealflood")) {
		err = steal_flood(fd, run, strtol(argv[2], NULL, 0));
	} else if (!strcmp(argv[1], "names")) {
		err = names(fd, run, strtol(argv[2], NULL, 0),
			    strtol(argv[3], NULL, 0),
			    strtoull(argv[4], NULL, 0), argv[5]);
	} else if (argc >= 5) {
		err = honest(fd, run, strtol(argv[2], NULL, 0),
			     strtol(argv[3], NULL, 0),
			     strtoull(argv[4], NULL, 0), hdr, k_user);
	} else {
		err = flood(fd, run, strtol(argv[2], NULL, 0),
			    argc == 4 ? strtol(argv[3], NULL, 0) : 0);
	}
	ksft_vm_destroy(vm);
	if (err) {
		fprintf(stderr, "sync_guest: %s\n", strerror(-err));
		return 1;
	}
	return 0;
}
