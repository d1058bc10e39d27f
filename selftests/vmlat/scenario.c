// SPDX-License-Identifier: GPL-2.0
/*
 * scenario: reproducible vCPU workloads and CPU contention, for comparing
 * vmlat's statistics with an independent ftrace oracle
 * (selftests/oracle/vmlat_oracle.py) recorded over the same run.
 *
 *   scenario [-c CPU] hog SECONDS      a VM doing port-I/O exits in a loop and
 *                                      a CPU hog ("vmlat-hog") on CPU
 *   scenario [-c CPU] two-vms SECONDS  two VM processes ("vm-a", "vm-b"),
 *                                      both vCPUs on CPU, port-I/O loops
 *   scenario [-c CPU] wait SECONDS     a halting guest (HLT, sleep 2 ms,
 *                                      re-enter) and a hog on CPU: every
 *                                      wake-up has to wait for the CPU
 *   scenario [-c CPU] idle SECONDS     a mostly halting guest (2 I/O exits,
 *                                      HLT, sleep 5 ms, re-enter), no hog;
 *                                      on PREEMPT_RT the vCPU thread is
 *                                      SCHED_FIFO (see scenario_idle())
 *   scenario [-c CPU] exits N          exactly N I/O, N CPUID, N hypercall
 *                                      (VMMCALL, VMCALL) and N HLT exits,
 *                                      16 nested page faults, then stop
 *   scenario [-c CPU] -n NAME hog SECONDS
 *                                      the hog scenario with NAME (any
 *                                      bytes) as the name of both the VM
 *                                      process and the hog, for the
 *                                      escaping of task names
 *   scenario [-c CPU] spin SECONDS     a guest that computes, with one port-I/O
 *                                      exit now and then (to check the
 *                                      clock), and a hog on CPU: its other
 *                                      exits are the host's interrupts,
 *                                      and the hog preempts it there
 *   scenario [-c CPU] burst SECONDS    a VM doing port-I/O exits on CPU and,
 *                                      a third into its guest's run (timed
 *                                      from its first exit), one burst of a
 *                                      SCHED_FIFO hog ("vmlat-burst")
 *                                      spinning there for 200 ms: the vCPU
 *                                      is preempted once, that long
 *
 * CPU defaults to 1 (the QEMU test host has CPUs 0 and 1; CPU 0 stays free
 * for the shell, the tracer and the main threads), 0 where there is only
 * one (the bochs test host). SECONDS may be fractional.
 * Every vCPU thread is named "vcpu0" and pinned to CPU; each VM has one
 * vCPU and lives in its own process, whose main thread is named after the
 * scenario ("vm-hog", "vm-a", ...). The guests are C functions run by the
 * KVM selftests' library (libkvm) in a VM without an in-kernel irqchip, so
 * HLT exits to userspace (KVM_EXIT_HLT);
 * the vCPU thread then sleeps in clock_nanosleep() if the scenario says so.
 *
 * Output on stdout, one record per line, "TAG key=value ...", each written
 * with a single write(2) so lines of several processes never mix (a name
 * given with -n is shown with its bytes outside '!'..'~' as \xNN):
 *   vcpu vm_pid=P vcpu_tid=T vcpu=0 comm=vcpu0 vm_comm=C cpu=N
 *        before the vCPU's first KVM_RUN
 *   hog pid=P comm=vmlat-hog cpu=N
 *        once the hog runs on its CPU (before any vCPU starts)
 *   burst pid=P comm=vmlat-burst cpu=N ms=N
 *        (burst) the FIFO hog, started, still asleep
 *   expect vm_pid=P vcpu_tid=T exit=NAME svm=NAME vmx=NAME count=N
 *   expect vm_pid=P vcpu_tid=T userspace=KVM_EXIT_x count=N
 *   expect vm_pid=P vcpu_tid=T hypercall_nr=0x0 count=N
 *        (exits only) exit counts the run must produce, besides the
 *        unavoidable extra exits (host interrupts INTR, first-touch NPF)
 *   done vm_pid=P vcpu_tid=T runs=N io=N hlt=N intr=N ms=N
 *        what the vCPU thread saw (KVM_RUN calls and exits to userspace)
 *   end scenario=NAME status=ok|fail
 * Diagnostics go to stderr. Exit status: 0 ok, 1 failure, 2 usage, 4 skip
 * (no /dev/kvm).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/kvm.h>

#include "ksft_kvm.h"
#include "ksft_util.h"

#define KSFT_SKIP		4
#define SCENARIO_PORT_IO	VMLAT_GUEST_PORT	/* 0x10 */
#define SCENARIO_PORT_FAIL	0x11	/* guest reports an unexpected result */
/* -KVM_ENOSYS, what KVM returns in EAX for a hypercall it does not know */
#define SCENARIO_ENOSYS		(-1000)
/* Hypercall number of the VMMCALLs: not a KVM_HC_* (those start at 1). */
#define SCENARIO_HC_NR		0
/* A scenario that does not finish in this time has failed. */
#define SCENARIO_MAX_MS		(600 * 1000ULL)
#define SCENARIO_BURST_MS	200
#define ARRAY_SIZE(a)		(sizeof(a) / sizeof((a)[0]))

/*
 * Guest code: C functions of this program that libkvm runs in the guest
 * (ksft_kvm.c: 64-bit, no in-kernel irqchip, no ucall), with one argument
 * in RDI (N for guest_exits). Their only exits to userspace are their own
 * OUTs and HLTs, so a run makes exactly the exits counted here.
 */
#define GUEST_OUTB(port)						\
	__asm__ __volatile__("outb %%al, %[p]"				\
			     : : "a"(0), [p] "i"(port) : "memory")
#define GUEST_HLT()	__asm__ __volatile__("hlt" : : : "memory")

/* An endless stream of port-I/O exits to userspace. */
static void guest_io_loop(void)
{
	for (;;)
		GUEST_OUTB(SCENARIO_PORT_IO);
}

/*
 * Compute, with a port-I/O exit every @n iterations (the host checks its
 * deadline there): the guest's other exits are the host's interrupts.
 */
static void guest_spin_loop(uint32_t n)
{
	uint32_t i;

	for (;;) {
		for (i = 0; i < n; i++)
			__asm__ __volatile__("" : : : "memory");
		GUEST_OUTB(SCENARIO_PORT_IO);
	}
}

/* HLT forever: every KVM_RUN ends in KVM_EXIT_HLT. */
static void guest_hlt_loop(void)
{
	for (;;)
		GUEST_HLT();
}

/* Two port-I/O exits, then HLT, forever. */
static void guest_idle_loop(void)
{
	for (;;) {
		GUEST_OUTB(SCENARIO_PORT_IO);
		GUEST_OUTB(SCENARIO_PORT_IO);
		GUEST_HLT();
	}
}

/*
 * guest_exits' argument: N, and which hypercall instruction the CPU has
 * (KVM would turn the other one into a #UD exit and patch it).
 */
#define SCENARIO_EXITS_VMCALL	(1u << 31)	/* VMCALL (Intel), else VMMCALL */
#define SCENARIO_EXITS_N_MAX	(SCENARIO_EXITS_VMCALL - 1)
/*
 * Pages the guest touches once each: the first touch of a guest page is a
 * nested page fault (SVM NPF, VMX EPT_VIOLATION). Page aligned, nothing
 * else in them, and never touched by the guest before: one fault each, plus
 * at most the page-table pages the guest's walk touches first.
 */
#define SCENARIO_EXITS_PAGES	16
static uint8_t scenario_pages[SCENARIO_EXITS_PAGES][4096]
	__attribute__((aligned(4096)));

static long guest_hypercall(uint32_t arg)
{
	long ret = SCENARIO_HC_NR;

	if (arg & SCENARIO_EXITS_VMCALL)
		__asm__ __volatile__("vmcall" : "+a"(ret)
				     : "b"(0), "c"(0), "d"(0), "S"(0)
				     : "memory");
	else
		__asm__ __volatile__("vmmcall" : "+a"(ret)
				     : "b"(0), "c"(0), "d"(0), "S"(0)
				     : "memory");
	return ret;
}

/*
 * @n OUTs (exit to userspace), @n CPUIDs and @n hypercalls (both handled in
 * the host kernel), one write to each of SCENARIO_EXITS_PAGES fresh pages
 * (nested page faults), @n HLTs (exit to userspace; the host stops after
 * the @n-th). A hypercall must return -KVM_ENOSYS, else the guest reports
 * RAX on the failure port forever. @arg: @n | SCENARIO_EXITS_VMCALL.
 */
static void guest_exits(uint32_t arg)
{
	uint32_t i, eax, ecx, n = arg & SCENARIO_EXITS_N_MAX;
	long ret;

	for (i = 0; i < n; i++)
		GUEST_OUTB(SCENARIO_PORT_IO);
	for (i = 0; i < n; i++) {
		eax = 0;
		ecx = 0;
		__asm__ __volatile__("cpuid" : "+a"(eax), "+c"(ecx)
				     : : "rbx", "rdx", "memory");
	}
	for (i = 0; i < n; i++) {
		ret = guest_hypercall(arg);
		if (ret != SCENARIO_ENOSYS)
			for (;;)
				__asm__ __volatile__("outl %%eax, %[p]"
						     : : "a"((uint32_t)ret),
						       [p] "i"(SCENARIO_PORT_FAIL)
						     : "memory");
	}
	for (i = 0; i < SCENARIO_EXITS_PAGES; i++)
		*(volatile uint8_t *)scenario_pages[i] = 1;
	for (i = 0; i < n; i++)
		GUEST_HLT();
	for (;;)
		GUEST_HLT();
}

/**
 * struct vcpu_job - what one vCPU thread runs, and what it saw
 * @vm_comm:      name of the VM process (its main thread), for the output
 * @guest:        guest function (one of the guest_* above)
 * @arg:          its argument
 * @cpu:          CPU to pin the vCPU thread to
 * @deadline_ms:  stop at this vmlat_now_ms(), 0 for no deadline
 * @hlt_sleep_us: sleep this long after every KVM_EXIT_HLT
 * @max_hlt:      stop after this many KVM_EXIT_HLT, 0 for no limit
 * @tid:          thread id of the vCPU thread
 * @runs:         KVM_RUN calls that returned to userspace
 * @io:           KVM_EXIT_IO to SCENARIO_PORT_IO
 * @hlt:          KVM_EXIT_HLT
 * @intr:         KVM_EXIT_INTR and KVM_RUN failing with EINTR
 * @ret:          0 or a negative errno
 * @error:        why it failed
 */
struct vcpu_job {
	const char *vm_comm;
	void *guest;
	uint32_t arg;
	int cpu;
	uint64_t deadline_ms;
	unsigned int hlt_sleep_us;
	/* the vCPU thread SCHED_FIFO, priority 1 */
	bool fifo;
	uint64_t max_hlt;
	/* > 0: written to at the first exit, deadline then go_run_ms on */
	int go_fd;
	uint64_t go_run_ms;
	pid_t tid;
	uint64_t runs, io, hlt, intr;
	int ret;
	char error[200];
};

static const char *scenario_name = "?";
/* -n: the name of the VM process and of the hog, instead of theirs. */
static const char *name_opt;

/* @name for the output: bytes outside '!'..'~' and '\' as \xNN. */
static const char *shown(const char *name, char *buf, size_t size)
{
	size_t n = 0;

	for (; *name && n + 5 < size; name++) {
		unsigned char c = *name;

		if (c > ' ' && c < 0x7f && c != '\\')
			buf[n++] = c;
		else
			n += snprintf(buf + n, size - n, "\\x%02x", c);
	}
	buf[n] = '\0';
	return buf;
}

/* One output record, in a single write(2). */
static void __attribute__((format(printf, 1, 2))) say(const char *fmt, ...)
{
	char buf[256];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf) - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if (n > (int)sizeof(buf) - 2)
		n = sizeof(buf) - 2;
	buf[n++] = '\n';
	if (write(STDOUT_FILENO, buf, n) != n)
		perror("scenario: write");
}

static pid_t my_tid(void)
{
	return (pid_t)syscall(SYS_gettid);
}

static int pin_self(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set) ? -errno : 0;
}

/* Records in @job why it failed; evaluates to @err. */
#define job_fail(job, err, ...)						\
	((job)->ret = vmlat_errorf((job)->error, sizeof((job)->error),	\
				   (err), __VA_ARGS__))

static void sleep_us(unsigned int us)
{
	struct timespec ts = {
		.tv_sec = us / 1000000,
		.tv_nsec = (long)(us % 1000000) * 1000,
	};

	while (clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, &ts) == EINTR)
		;
}

/* Handles one exit to userspace; returns 1 to stop, 0 to go on, or < 0. */
static int vcpu_handle_exit(struct vcpu_job *job, const struct kvm_run *run)
{
	uint32_t val = 0;
	char buf[80];

	switch (run->exit_reason) {
	case KVM_EXIT_IO:
		if (run->io.port == SCENARIO_PORT_FAIL) {
			memcpy(&val, (const uint8_t *)run + run->io.data_offset,
			       sizeof(val));
			return job_fail(job, -EPROTO,
					"VMMCALL returned 0x%x, expected -KVM_ENOSYS",
					val);
		}
		if (run->io.port != SCENARIO_PORT_IO ||
		    run->io.direction != KVM_EXIT_IO_OUT)
			return job_fail(job, -EPROTO,
					"unexpected I/O exit: port 0x%x dir %u",
					run->io.port, run->io.direction);
		job->io++;
		return 0;
	case KVM_EXIT_HLT:
		job->hlt++;
		if (job->max_hlt && job->hlt >= job->max_hlt)
			return 1;
		if (job->hlt_sleep_us)
			sleep_us(job->hlt_sleep_us);
		return 0;
	case KVM_EXIT_INTR:
		job->intr++;
		return 0;
	case KVM_EXIT_FAIL_ENTRY:
	case KVM_EXIT_INTERNAL_ERROR:
		return job_fail(job, -EPROTO, "%s",
				vmlat_run_error(run, buf, sizeof(buf)));
	default:
		return job_fail(job, -EPROTO, "unexpected exit reason %u",
				run->exit_reason);
	}
}

static int vcpu_run_job(struct vcpu_job *job)
{
	uint64_t t0 = vmlat_now_ms();
	struct vmlat_guest_stats st;
	struct ksft_vm *vm;
	struct kvm_run *run;
	char buf[80];
	int fd, ret;

	ret = ksft_vm_create(&vm, job->guest, job->arg, &st);
	if (ret)
		return job_fail(job, ret, "%s", st.error);
	/*
	 * Making the VM is not its run time: a loaded debug test host once
	 * took the whole second of "idle 1" to make one (runs=0).
	 */
	if (job->deadline_ms)
		job->deadline_ms += vmlat_now_ms() - t0;
	fd = ksft_vm_vcpu_fd(vm);
	run = ksft_vm_kvm_run(vm);
	say("vcpu vm_pid=%d vcpu_tid=%d vcpu=0 comm=vcpu0 vm_comm=%s cpu=%d",
	    (int)getpid(), (int)my_tid(),
	    shown(name_opt ?: job->vm_comm, buf, sizeof(buf)), job->cpu);
	for (;;) {
		if (job->deadline_ms && vmlat_now_ms() >= job->deadline_ms)
			break;
		if (ioctl(fd, KVM_RUN, 0) < 0) {
			if (errno == EINTR || errno == EAGAIN) {
				job->intr++;
				continue;
			}
			ret = job_fail(job, -errno, "KVM_RUN: %s",
				       strerror(errno));
			break;
		}
		job->runs++;
		if (job->go_fd > 0) {
			/* the guest runs: the deadline counts from now */
			job->deadline_ms = vmlat_now_ms() + job->go_run_ms;
			if (write(job->go_fd, "g", 1) != 1)
				ret = job_fail(job, -errno, "go: %s",
					       strerror(errno));
			close(job->go_fd);
			job->go_fd = 0;
			if (ret)
				break;
		}
		ret = vcpu_handle_exit(job, run);
		if (ret) {
			ret = ret > 0 ? 0 : ret;
			break;
		}
	}
	ksft_vm_destroy(vm);
	return ret;
}

static void *vcpu_thread(void *arg)
{
	struct vcpu_job *job = arg;
	struct sched_param fifo = { .sched_priority = 1 };
	uint64_t t0 = vmlat_now_ms();
	int ret;

	job->tid = my_tid();
	prctl(PR_SET_NAME, "vcpu0", 0, 0, 0);
	ret = pin_self(job->cpu);
	if (ret) {
		job_fail(job, ret, "cannot pin to CPU %d: %s", job->cpu,
			 strerror(-ret));
	} else if (job->fifo && sched_setscheduler(0, SCHED_FIFO, &fifo)) {
		ret = -errno;
		job_fail(job, ret, "cannot become SCHED_FIFO: %s",
			 strerror(-ret));
	} else {
		vcpu_run_job(job);
	}
	say("done vm_pid=%d vcpu_tid=%d runs=%llu io=%llu hlt=%llu intr=%llu ms=%llu",
	    (int)getpid(), (int)my_tid(), (unsigned long long)job->runs,
	    (unsigned long long)job->io, (unsigned long long)job->hlt,
	    (unsigned long long)job->intr,
	    (unsigned long long)(vmlat_now_ms() - t0));
	return NULL;
}

/*
 * Runs @job in a new thread of this process (named "vcpu0", pinned), with
 * this process's main thread named @job->vm_comm (or -n's), and waits for
 * it.
 */
static int run_vm(struct vcpu_job *job)
{
	pthread_t th;
	int err;

	prctl(PR_SET_NAME, name_opt ?: job->vm_comm, 0, 0, 0);
	err = pthread_create(&th, NULL, vcpu_thread, job);
	if (err) {
		fprintf(stderr, "scenario: pthread_create: %s\n", strerror(err));
		return -err;
	}
	pthread_join(th, NULL);
	if (job->ret)
		fprintf(stderr, "scenario: %s vCPU: %s\n", job->vm_comm,
			job->error);
	return job->ret;
}

/*
 * Starts the CPU hog "vmlat-hog" (or -n's name) pinned to @cpu; returns
 * once it runs there. It spins until killed (or @deadline_ms, or its
 * parent's death).
 */
static pid_t hog_start(int cpu, uint64_t deadline_ms)
{
	char c, buf[80];
	int pfd[2];
	pid_t pid;

	if (pipe(pfd))
		return -errno;
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		int i;

		prctl(PR_SET_NAME, name_opt ?: "vmlat-hog", 0, 0, 0);
		prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
		if (pin_self(cpu))
			_exit(1);
		close(pfd[0]);
		if (write(pfd[1], "r", 1) != 1)
			_exit(1);
		close(pfd[1]);
		/*
		 * Spin in userspace; look at the clock (a system call with the
		 * test host's hpet clocksource) only now and then.
		 */
		while (vmlat_now_ms() < deadline_ms)
			for (i = 0; i < 100000; i++)
				asm volatile("" : : : "memory");
		_exit(0);
	}
	close(pfd[1]);
	if (read(pfd[0], &c, 1) != 1) {
		close(pfd[0]);
		waitpid(pid, NULL, 0);
		return -ECHILD;
	}
	close(pfd[0]);
	say("hog pid=%d comm=%s cpu=%d", (int)pid,
	    shown(name_opt ?: "vmlat-hog", buf, sizeof(buf)), cpu);
	return pid;
}

static void hog_stop(pid_t pid)
{
	if (pid <= 0)
		return;
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

/* A VM (this process) on @cpu next to a hog on the same CPU. */
static int with_hog(struct vcpu_job *job)
{
	pid_t hog;
	int ret;

	hog = hog_start(job->cpu, job->deadline_ms + 10 * 1000);
	if (hog < 0) {
		fprintf(stderr, "scenario: cannot start the hog: %s\n",
			strerror((int)-hog));
		return (int)hog;
	}
	ret = run_vm(job);
	hog_stop(hog);
	return ret;
}

static int scenario_hog(int cpu, uint64_t ms)
{
	struct vcpu_job job = {
		.vm_comm = "vm-hog",
		.guest = guest_io_loop,
		.cpu = cpu,
		.deadline_ms = vmlat_now_ms() + ms,
	};

	return with_hog(&job);
}

/* Iterations of guest_spin_loop() between two I/O exits: ~10 ms (TCG). */
#define SCENARIO_SPIN_ITERS	(1U << 20)

static int scenario_spin(int cpu, uint64_t ms)
{
	struct vcpu_job job = {
		.vm_comm = "vm-spin",
		.guest = guest_spin_loop,
		.arg = SCENARIO_SPIN_ITERS,
		.cpu = cpu,
		.deadline_ms = vmlat_now_ms() + ms,
	};

	return with_hog(&job);
}

static int scenario_wait(int cpu, uint64_t ms)
{
	struct vcpu_job job = {
		.vm_comm = "vm-wait",
		.guest = guest_hlt_loop,
		.cpu = cpu,
		.deadline_ms = vmlat_now_ms() + ms,
		.hlt_sleep_us = 2000,
	};

	return with_hog(&job);
}

/* Whether the running kernel is PREEMPT_RT. */
static bool kernel_is_rt(void)
{
	FILE *f = fopen("/sys/kernel/realtime", "r");
	int rt = 0;

	if (f) {
		if (fscanf(f, "%d", &rt) != 1)
			rt = 0;
		fclose(f);
	}
	return rt == 1;
}

/*
 * Every wake-up of the vCPU thread should find its CPU idle. PREEMPT_RT
 * expires a normal task's sleep in the CPU's timer softirq thread
 * (ktimers/N, on Debian's 6.12 RT), which is then current on the CPU at the
 * wake-up, and the vCPU waits behind it; a SCHED_FIFO task's sleep expires
 * in the timer interrupt, over the idle task.
 */
static int scenario_idle(int cpu, uint64_t ms)
{
	struct vcpu_job job = {
		.vm_comm = "vm-idle",
		.guest = guest_idle_loop,
		.cpu = cpu,
		.deadline_ms = vmlat_now_ms() + ms,
		.hlt_sleep_us = 5000,
		.fifo = kernel_is_rt(),
	};

	return run_vm(&job);
}

/*
 * Forks "vmlat-burst", pinned to @cpu, SCHED_FIFO: once a byte comes on
 * pipe @go (the guest's first exit: a loaded test host may take long to make
 * the VM), it sleeps @delay_ms, spins for @spin_ms (preempting whatever
 * runs, as a real-time task does), and exits. Exit status 3: it could not
 * become SCHED_FIFO; 4: no byte came.
 */
static pid_t burst_start(int cpu, const int go[2], uint64_t delay_ms,
			 uint64_t spin_ms)
{
	struct sched_param sp = { .sched_priority = 10 };
	pid_t pid = fork();

	if (pid < 0)
		return -errno;
	if (pid == 0) {
		uint64_t end, at_ms, now;
		char c;
		int i;

		prctl(PR_SET_NAME, "vmlat-burst", 0, 0, 0);
		prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
		if (pin_self(cpu))
			_exit(1);
		if (sched_setscheduler(0, SCHED_FIFO, &sp))
			_exit(3);
		close(go[1]);
		if (read(go[0], &c, 1) != 1)
			_exit(4);
		/* One sleep, not polling: no small preemptions before. */
		at_ms = vmlat_now_ms() + delay_ms;
		while ((now = vmlat_now_ms()) < at_ms)
			usleep((useconds_t)(at_ms - now) * 1000);
		end = vmlat_now_ms() + spin_ms;
		while (vmlat_now_ms() < end)
			for (i = 0; i < 10000; i++)
				asm volatile("" : : : "memory");
		_exit(0);
	}
	say("burst pid=%d comm=vmlat-burst cpu=%d ms=%d", (int)pid, cpu,
	    (int)spin_ms);
	return pid;
}

static int scenario_burst(int cpu, uint64_t ms)
{
	struct vcpu_job job = {
		.vm_comm = "vm-burst",
		.guest = guest_io_loop,
		.cpu = cpu,
		.go_run_ms = ms,
	};
	int ret, status, go[2];
	pid_t burst;

	/* a third into the guest's run, whenever that starts */
	if (pipe(go))
		return -errno;
	burst = burst_start(cpu, go, ms / 3, SCENARIO_BURST_MS);
	close(go[0]);
	job.go_fd = go[1];
	if (burst < 0) {
		close(go[1]);
		fprintf(stderr, "scenario: cannot start the burst: %s\n",
			strerror((int)-burst));
		return (int)burst;
	}
	ret = run_vm(&job);
	/* no exit at all: the burst ends without its byte */
	if (job.go_fd > 0)
		close(job.go_fd);
	if (waitpid(burst, &status, 0) != burst || !WIFEXITED(status) ||
	    WEXITSTATUS(status)) {
		fprintf(stderr, "scenario: the burst failed (status 0x%x%s)\n",
			status, WIFEXITED(status) && WEXITSTATUS(status) == 3 ?
			": cannot become SCHED_FIFO" :
			WIFEXITED(status) && WEXITSTATUS(status) == 4 ?
			": the guest never ran" : "");
		ret = ret ?: -ECHILD;
	}
	return ret;
}

/* Two VM processes, "vm-a" and "vm-b", with their vCPUs on @cpu. */
static int scenario_two_vms(int cpu, uint64_t ms)
{
	static const char *const names[] = { "vm-a", "vm-b" };
	uint64_t deadline_ms = vmlat_now_ms() + ms;
	pid_t pids[2] = { -1, -1 };
	int i, status, ret = 0;

	for (i = 0; i < 2; i++) {
		pids[i] = fork();
		if (pids[i] < 0) {
			ret = -errno;
			break;
		}
		if (pids[i] == 0) {
			struct vcpu_job job = {
				.vm_comm = names[i],
				.guest = guest_io_loop,
				.cpu = cpu,
				.deadline_ms = deadline_ms,
			};

			prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
			_exit(run_vm(&job) ? 1 : 0);
		}
	}
	for (i = 0; i < 2; i++) {
		if (pids[i] <= 0)
			continue;
		if (waitpid(pids[i], &status, 0) < 0 ||
		    !WIFEXITED(status) || WEXITSTATUS(status))
			ret = -EIO;
	}
	return ret;
}

static int scenario_exits(int cpu, uint32_t n)
{
	struct vcpu_job job = {
		.vm_comm = "vm-exits",
		.guest = guest_exits,
		.arg = n | (vmlat_host_is_intel() ? SCENARIO_EXITS_VMCALL : 0),
		.cpu = cpu,
		.deadline_ms = vmlat_now_ms() + SCENARIO_MAX_MS,
		.max_hlt = n,
	};
	const struct {
		const char *name, *svm, *vmx;
		uint32_t count;
	} expect[] = {
		{ "IOIO", "io", "IO_INSTRUCTION", n },
		{ "CPUID", "cpuid", "CPUID", n },
		{ "VMMCALL", "hypercall", "VMCALL", n },
		{ "HLT", "hlt", "HLT", n },
		{ "NPF", "npf", "EPT_VIOLATION", SCENARIO_EXITS_PAGES },
	};
	size_t i;
	int ret;

	ret = run_vm(&job);
	if (ret)
		return ret;
	if (job.io != n || job.hlt != n) {
		fprintf(stderr, "scenario: exits: %llu I/O, %llu HLT exits, expected %u each\n",
			(unsigned long long)job.io,
			(unsigned long long)job.hlt, n);
		return -EPROTO;
	}
	/* The thread is gone, but its tid is what the trace shows. */
	for (i = 0; i < ARRAY_SIZE(expect); i++)
		say("expect vm_pid=%d vcpu_tid=%d exit=%s svm=%s vmx=%s count=%u",
		    (int)getpid(), (int)job.tid, expect[i].name,
		    expect[i].svm, expect[i].vmx, expect[i].count);
	say("expect vm_pid=%d vcpu_tid=%d userspace=KVM_EXIT_IO count=%u",
	    (int)getpid(), (int)job.tid, n);
	say("expect vm_pid=%d vcpu_tid=%d userspace=KVM_EXIT_HLT count=%u",
	    (int)getpid(), (int)job.tid, n);
	say("expect vm_pid=%d vcpu_tid=%d hypercall_nr=0x%x count=%u",
	    (int)getpid(), (int)job.tid, SCENARIO_HC_NR, n);
	return 0;
}

static int usage(const char *prog)
{
	fprintf(stderr,
		"usage: %s [-c CPU] hog|spin|two-vms|wait|idle|burst SECONDS\n"
		"       %s [-c CPU] exits N\n"
		"       %s [-c CPU] -n NAME hog SECONDS\n", prog, prog, prog);
	return 2;
}

int main(int argc, char **argv)
{
	const char *prog = argv[0];
	char *end;
	double secs;
	long nr_cpus = sysconf(_SC_NPROCESSORS_ONLN);
	/* CPU 1 by default (the test host's CPU 0 runs the tests), CPU 0 on a
	 * test host with one CPU (bochs). */
	int cpu = nr_cpus > 1 ? 1 : 0, ret;
	uint64_t ms;

	if (argc >= 3 && !strcmp(argv[1], "-c")) {
		cpu = (int)strtol(argv[2], &end, 10);
		if (*end || cpu < 0 || cpu >= CPU_SETSIZE)
			return usage(prog);
		argc -= 2;
		argv += 2;
	}
	if (argc >= 3 && !strcmp(argv[1], "-n")) {
		name_opt = argv[2];
		argc -= 2;
		argv += 2;
	}
	if (argc != 3 || (name_opt && strcmp(argv[1], "hog")))
		return usage(prog);
	scenario_name = argv[1];
	secs = strtod(argv[2], &end);
	if (*end || secs <= 0 || secs > SCENARIO_MAX_MS / 1000)
		return usage(prog);
	ms = (uint64_t)(secs * 1000);
	if (access("/dev/kvm", R_OK | W_OK)) {
		fprintf(stderr, "scenario: no usable /dev/kvm: %s\n",
			strerror(errno));
		say("end scenario=%s status=skip", scenario_name);
		return KSFT_SKIP;
	}
	/* Records from forked children must not be duplicated by stdio. */
	setvbuf(stdout, NULL, _IONBF, 0);

	if (!strcmp(scenario_name, "hog"))
		ret = scenario_hog(cpu, ms);
	else if (!strcmp(scenario_name, "spin"))
		ret = scenario_spin(cpu, ms);
	else if (!strcmp(scenario_name, "two-vms"))
		ret = scenario_two_vms(cpu, ms);
	else if (!strcmp(scenario_name, "wait"))
		ret = scenario_wait(cpu, ms);
	else if (!strcmp(scenario_name, "idle"))
		ret = scenario_idle(cpu, ms);
	else if (!strcmp(scenario_name, "burst"))
		ret = scenario_burst(cpu, ms);
	else if (!strcmp(scenario_name, "exits") && secs == (uint32_t)secs)
		ret = scenario_exits(cpu, (uint32_t)secs);
	else
		return usage(prog);
	say("end scenario=%s status=%s", scenario_name, ret ? "fail" : "ok");
	return ret ? 1 : 0;
}
