// SPDX-License-Identifier: GPL-2.0
/*
 * irq_guest: KVM guests whose interrupts come late or on time, timed by
 * the guest itself, for vmlat's interrupt delivery tests (irq_test.py).
 *
 *   irq_guest timer N PERIOD_US CPU
 *	one vCPU, its thread pinned to CPU: N times, arm the LAPIC timer
 *	one-shot for PERIOD_US and halt until its interrupt. The guest reads
 *	its TSC when it arms the timer and in the interrupt's handler.
 *   irq_guest timerspin N PERIOD_US CPU
 *	the same, spinning in the guest (interrupts on) instead of halting:
 *	the timer expires while the vCPU runs (on VMX, KVM's preemption
 *	timer: a VM exit).
 *   irq_guest timerdl N PERIOD_US CPU
 *	as timer, in TSC-deadline mode: the guest writes its deadline to
 *	MSR_IA32_TSC_DEADLINE, and KVM fires it ahead by its timer advance
 *	(lapic_timer_advance_ns), then waits for the deadline before the VM
 *	entry that delivers it (kvm_wait_lapic_expire).
 *   irq_guest ipi N GAP_US CPU0 CPU1
 *	two vCPUs, vCPU i's thread pinned to CPUi: vCPU 1 halts, vCPU 0
 *	sends it N fixed IPIs, from when vCPU 1 enabled its APIC, each
 *	once the one before arrived and GAP_US passed. The guest reads its
 *	TSC before each ICR write and in the handler (the vCPUs share one
 *	TSC).
 *   irq_guest ipimask N GAP_US CPU0 CPU1
 *	as ipi, but vCPU 1 takes each IPI with its interrupts off: it turns
 *	them off, lets vCPU 0 send, and once sent runs MASK_EXITS CPUIDs
 *	(each a VM exit and entry, with the IPI pending in KVM's IRR and no
 *	way to inject it) before it turns them on: a guest that keeps its
 *	interrupts off across many exits, as a kernel's long critical
 *	section does.
 *   irq_guest device N GAP_US CPU0 CPU1
 *	the same, through a device as a VMM gives one: vCPU 0 rings a
 *	doorbell (a port write, an ioeventfd) and the VMM's I/O thread,
 *	pinned to CPU0, answers with an MSI to vCPU 1 through an irqfd, as
 *	QEMU's I/O threads and vhost do; the MSI asks for lowest priority
 *	delivery, as Windows' do. The guest reads its TSC before the
 *	doorbell.
 *   irq_guest lock N HOLD_US CPU0 CPU1
 *	two vCPUs and a spinlock in guest memory, no interrupt: N times,
 *	vCPU 0 takes the lock, holds it for HOLD_US, drops it and works
 *	HOLD_US more; vCPU 1 spins on the lock with PAUSE while it is held
 *	and without PAUSE while it is free, so that its PAUSE exits (Intel's
 *	pause-loop exiting, AMD's pause filter) come only while vCPU 0 holds
 *	the lock. The guest counts vCPU 1's spins (count) and their time on
 *	its TSC (spin_ns). Interrupts stay on: bochs takes no external
 *	interrupt's VM exit from a guest with IF=0 (a host of one CPU would
 *	stop).
 *   irq_guest lockhv N HOLD_US CPU0 CPU1
 *	the same in a guest with Hyper-V's enlightenments, as Windows with
 *	hv-spinlocks: the VMM gives both vCPUs KVM's Hyper-V CPUID leaves,
 *	the guest identifies itself (HV_X64_MSR_GUEST_OS_ID) and enables its
 *	hypercall page, and vCPU 1 calls HvNotifyLongSpinWait after every
 *	HV_SPIN_US of a spin. KVM answers the call as a PAUSE
 *	exit (kvm_vcpu_on_spin()): where the CPU has no pause filter (QEMU's
 *	emulated SVM), the calls are the only spins KVM sees. The line also
 *	has hv_calls=C hv_failed=F: the calls, and those whose status was
 *	not success.
 *
 * All start once a line came on standard input (the test's tracing is
 * on), then print one line:
 *
 *	irq_guest mode=M pid=P tids=T0[,T1[,TIO]] vector=V count=N
 *	  tsc_khz=K late_sum_ns=S late_max_ns=X [span_ns=D | spin_ns=D]
 *
 * and, once every vCPU thread has left KVM_RUN (vCPU 0 stops the halter
 * with NMIs, which vmlat does not time), KVM's own halt-polling counters
 * of the VM, those its debugfs has (/sys/kernel/debug/kvm/PID-FD/):
 *
 *	kvm_stats halt_attempted_poll=A halt_successful_poll=S ...
 *
 * A guest that gets no interrupt for 20 s ends the run: exit status 3.
 *
 * span (ipi, device): from vCPU 0's first send to its last arrival, on
 * the guest's TSC: tools/bench's IPI round trips per second.
 *
 * lock: count is vCPU 1's spins (one per hold it found), spin their time
 * on the guest's TSC; vector and late mean nothing there.
 *
 * late: for the timer, handler TSC - (arming TSC + PERIOD_US); for an
 * IPI, handler TSC - sending TSC; for the device, handler TSC - doorbell
 * TSC. vmlat's delivery latency is the host's
 * part of it: from the timer's expiry (after the arming's exit) or the
 * IPI's acceptance to the VM entry that delivers it.
 */
#include <errno.h>
#include <pthread.h>
#include <sys/eventfd.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "kvm_util.h"
#include "processor.h"
#include "apic.h"

#define IRQ_VECTOR	0xa7
#define APIC_LVTT	0x320
#define APIC_TMICT	0x380
#define APIC_TDCR	0x3e0
#define APIC_TDR_DIV_1	0xb
#define APIC_LVT_TSCDEADLINE	(2 << 17)
#define MSR_TSC_DEADLINE	0x6e0
/*
 * 100 ms ticks without an interrupt that end a stuck run (20 s: the
 * slowest delivery next to a hog on a loaded debug test host is under a
 * second), its status
 */
#define STUCK_TICKS	200
/* ipimask: VM exits with each IPI pending, more than vmlat's 16 */
#define MASK_EXITS	40
#define STUCK_EXIT	3
/* lockhv: Hyper-V's MSRs, the call and its fast-call bit (Hyper-V TLFS) */
#define HV_MSR_GUEST_OS_ID	0x40000000
#define HV_MSR_HYPERCALL	0x40000001
#define HV_LINUX_OS_ID		0x8100000000000000ull
#define HV_NOTIFY_LONG_SPIN_WAIT	0x0008
#define HV_FAST_CALL		(1ull << 16)
/*
 * A spin calls after this long, and again after as long: Windows counts
 * PAUSEs instead (a VMM's hv-spinlocks), which mean no time under TCG,
 * where a PAUSE lets the other emulated CPU run its turn
 */
#define HV_SPIN_US		500
/* The device's doorbell port, and its MSI's GSI */
#define DOORBELL_PORT	0x2000
#define DEVICE_GSI	32

/*
 * Shared with the guest (its globals, read through addr_gva2hva()); what
 * another vCPU or the host reads meanwhile goes through READ_ONCE() and
 * WRITE_ONCE().
 */
static uint64_t g_count, g_late_sum, g_late_max, g_due, g_ready;
static uint64_t g_n, g_period_tsc, g_gap_tsc, g_tmict, g_spin, g_device;
static uint64_t g_deadline, g_stop, g_halter_done, g_span;
static uint64_t g_mask, g_masked, g_sent;
static uint64_t g_lock, g_hold_tsc, g_spin_tsc;
static uint64_t g_hv, g_amd, g_hcall_gpa, g_hv_calls, g_hv_failed;
static uint64_t g_hv_spin_tsc;

static void irq_handler(struct ex_regs *regs)
{
	uint64_t now = rdtsc(), late;

	late = now > READ_ONCE(g_due) ? now - READ_ONCE(g_due) : 0;
	g_late_sum += late;
	if (late > g_late_max)
		g_late_max = late;
	WRITE_ONCE(g_count, g_count + 1);
	xapic_write_reg(APIC_EOI, 0);
}

static void timer_guest(void)
{
	uint64_t i;

	xapic_enable();
	xapic_write_reg(APIC_TDCR, APIC_TDR_DIV_1);
	xapic_write_reg(APIC_LVTT, IRQ_VECTOR |
			(g_deadline ? APIC_LVT_TSCDEADLINE : 0));
	for (i = 0; i < g_n; i++) {
		asm volatile("cli");
		WRITE_ONCE(g_due, rdtsc() + g_period_tsc);
		if (g_deadline)
			wrmsr(MSR_TSC_DEADLINE, g_due);
		else
			xapic_write_reg(APIC_TMICT, g_tmict);
		if (g_spin) {
			asm volatile("sti");
			while (READ_ONCE(g_count) == i)
				asm volatile("pause");
		}
		while (READ_ONCE(g_count) == i)
			asm volatile("sti; hlt; cli");
	}
	GUEST_DONE();
}

/* An NMI (vmlat times no NMI) wakes the halter to see g_stop. */
static void nmi_handler(struct ex_regs *regs)
{
}

/* vCPU 1's end: halt until vCPU 0 has sent all and stops it. */
static void halt_until_stopped(void)
{
	while (!READ_ONCE(g_stop))
		asm volatile("sti; hlt; cli");
	WRITE_ONCE(g_halter_done, 1);
	GUEST_DONE();
}

static void ipi_halter(void)
{
	xapic_enable();
	/* An IPI to an APIC not enabled yet would be dropped. */
	WRITE_ONCE(g_ready, 1);
	halt_until_stopped();
}

/* ipimask: each IPI waits MASK_EXITS exits with interrupts off. */
static void ipi_masker(void)
{
	uint32_t eax, ebx, ecx, edx;
	uint64_t i, k;

	xapic_enable();
	WRITE_ONCE(g_ready, 1);
	for (i = 0; i < g_n; i++) {
		WRITE_ONCE(g_masked, i + 1);
		/*
		 * Exits while it waits, too: bochs takes no external
		 * interrupt's VM exit from a guest with IF=0, but its host
		 * takes its interrupts after each exit.
		 */
		while (READ_ONCE(g_sent) == i)
			cpuid(0, &eax, &ebx, &ecx, &edx);
		for (k = 0; k < MASK_EXITS; k++)
			cpuid(0, &eax, &ebx, &ecx, &edx);
		asm volatile("sti; nop; cli");
		while (READ_ONCE(g_count) == i)
			asm volatile("sti; hlt; cli");
	}
	halt_until_stopped();
}

static void ipi_sender(void)
{
	uint64_t i, t, t0;

	xapic_enable();
	asm volatile("sti");
	xapic_write_reg(APIC_ICR2, SET_APIC_DEST_FIELD(1));
	while (!READ_ONCE(g_ready))
		asm volatile("pause");
	t0 = rdtsc();
	for (i = 0; i < g_n; i++) {
		t = rdtsc();
		while (rdtsc() - t < g_gap_tsc)
			;
		/* ipimask: once the target has its interrupts off */
		while (g_mask && READ_ONCE(g_masked) == i)
			asm volatile("pause");
		WRITE_ONCE(g_due, rdtsc());
		if (g_device)
			asm volatile("outb %%al, %%dx"
				     : : "a"(0), "d"((uint16_t)DOORBELL_PORT));
		else
			xapic_write_reg(APIC_ICR, APIC_DEST_PHYSICAL |
						  APIC_DM_FIXED | IRQ_VECTOR);
		/* KVM accepted it in the ICR write's exit. */
		WRITE_ONCE(g_sent, i + 1);
		while (READ_ONCE(g_count) == i)
			asm volatile("pause");
	}
	g_span = rdtsc() - t0;
	/*
	 * Stop the halter: NMIs until it is done (one that comes before its
	 * HLT is missed), so that its last halt ends as the others do.
	 */
	WRITE_ONCE(g_stop, 1);
	while (!READ_ONCE(g_halter_done)) {
		xapic_write_reg(APIC_ICR, APIC_DEST_PHYSICAL | APIC_DM_NMI);
		t = rdtsc();
		while (rdtsc() - t < g_gap_tsc)
			;
	}
	GUEST_DONE();
}

/* lock: vCPU 0 holds the lock HOLD_US at a time, N times. */
static void lock_holder(void)
{
	uint64_t i, t;

	asm volatile("sti");
	for (i = 0; i < g_n; i++) {
		WRITE_ONCE(g_lock, 1);
		t = rdtsc();
		while (rdtsc() - t < g_hold_tsc)
			;
		WRITE_ONCE(g_lock, 0);
		t = rdtsc();
		while (rdtsc() - t < g_hold_tsc)
			;
	}
	WRITE_ONCE(g_stop, 1);
	GUEST_DONE();
}

/*
 * lockhv: HvNotifyLongSpinWait, a fast call with the spin's length (TSC
 * cycles, in place of a count) as its input: vmmcall on AMD, vmcall on
 * Intel (the 64-bit convention: RCX the control, RDX the input, R8 the
 * output). Returns the call's status.
 */
static uint64_t hv_notify_long_spin_wait(uint64_t spins)
{
	uint64_t status, control = HV_NOTIFY_LONG_SPIN_WAIT | HV_FAST_CALL;

	if (g_amd)
		asm volatile("xor %%r8, %%r8; vmmcall"
			     : "=a"(status), "+c"(control), "+d"(spins)
			     : : "cc", "memory", "r8");
	else
		asm volatile("xor %%r8, %%r8; vmcall"
			     : "=a"(status), "+c"(control), "+d"(spins)
			     : : "cc", "memory", "r8");
	return status;
}

/* lock: vCPU 1 spins with PAUSE while the lock is held, only then. */
static void lock_spinner(void)
{
	uint64_t t, last;

	asm volatile("sti");
	if (g_hv) {
		/* The hypercall page once the guest said who it is. */
		wrmsr(HV_MSR_GUEST_OS_ID, HV_LINUX_OS_ID);
		wrmsr(HV_MSR_HYPERCALL, g_hcall_gpa | 1);
	}
	while (!READ_ONCE(g_stop)) {
		if (!READ_ONCE(g_lock))
			continue;
		t = rdtsc();
		for (last = t; READ_ONCE(g_lock); ) {
			asm volatile("pause");
			if (g_hv && rdtsc() - last >= g_hv_spin_tsc) {
				last = rdtsc();
				g_hv_calls++;
				if (hv_notify_long_spin_wait(last - t))
					g_hv_failed++;
			}
		}
		g_spin_tsc += rdtsc() - t;
		/* Its spins: what the stuck-run watch sees progress in. */
		WRITE_ONCE(g_count, g_count + 1);
	}
	GUEST_DONE();
}

/*
 * lockhv: the Hyper-V CPUID leaves KVM supports (the vCPU's ioctl, which
 * 5.10 has too) in place of KVM's own 0x400000xx ones, as a VMM with
 * hv-* options gives them: KVM handles Hyper-V's calls for the vCPU.
 */
static void set_hv_cpuid(struct kvm_vcpu *vcpu)
{
	const struct kvm_cpuid2 *hv = vcpu_get_supported_hv_cpuid(vcpu);
	struct kvm_cpuid2 *c = allocate_kvm_cpuid2(vcpu->cpuid->nent + hv->nent);
	unsigned int i, n = 0;

	for (i = 0; i < vcpu->cpuid->nent; i++) {
		if (vcpu->cpuid->entries[i].function >= 0x40000000 &&
		    vcpu->cpuid->entries[i].function < 0x40000100)
			continue;
		c->entries[n++] = vcpu->cpuid->entries[i];
	}
	memcpy(&c->entries[n], hv->entries, hv->nent * sizeof(*hv->entries));
	c->nent = n + hv->nent;
	vcpu_init_cpuid(vcpu, c);
	free(c);
}

struct vcpu_thread {
	pthread_t thread;
	struct kvm_vcpu *vcpu;
	int cpu;
	pid_t tid;
	int done;
	int err;
};

/* The calling thread's tid, in @tid, and its CPU, @cpu: 0 or errno. */
static int pin_self(int cpu, pid_t *tid)
{
	cpu_set_t set;

	*tid = syscall(SYS_gettid);
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set) ? errno : 0;
}

static void *vcpu_fn(void *arg)
{
	struct vcpu_thread *v = arg;
	struct ucall uc;

	v->err = pin_self(v->cpu, &v->tid);
	if (v->err)
		return NULL;
	for (;;) {
		vcpu_run(v->vcpu);
		switch (get_ucall(v->vcpu, &uc)) {
		case UCALL_DONE:
			WRITE_ONCE(v->done, 1);
			return NULL;
		case UCALL_ABORT:
			fprintf(stderr, "irq_guest: guest assert: %s\n",
				(const char *)uc.args[0]);
			v->err = EFAULT;
			WRITE_ONCE(v->done, 1);
			return NULL;
		default:
			break;
		}
	}
}

/* The VMM's I/O thread: each doorbell rung is answered by the irqfd. */
struct io_thread {
	pthread_t thread;
	int cpu;
	int doorbell;
	int irqfd;
	pid_t tid;
	int err;
};

static void *io_fn(void *arg)
{
	struct io_thread *io = arg;
	uint64_t v, one = 1;

	io->err = pin_self(io->cpu, &io->tid);
	if (io->err)
		return NULL;
	for (;;) {
		if (read(io->doorbell, &v, sizeof(v)) != sizeof(v) ||
		    write(io->irqfd, &one, sizeof(one)) != sizeof(one)) {
			io->err = errno;
			return NULL;
		}
	}
}

/*
 * The device: a doorbell at DOORBELL_PORT (an ioeventfd) and an MSI to
 * APIC 1's IRQ_VECTOR on DEVICE_GSI (an irqfd), answered by @io.
 */
static void device_setup(struct kvm_vm *vm, struct io_thread *io)
{
	struct kvm_irq_routing *r;
	struct kvm_ioeventfd ioev = {
		.addr = DOORBELL_PORT,
		.len = 1,
		.flags = KVM_IOEVENTFD_FLAG_PIO,
	};
	struct kvm_irqfd irqfd = { .gsi = DEVICE_GSI };

	io->doorbell = eventfd(0, 0);
	io->irqfd = eventfd(0, 0);
	TEST_ASSERT(io->doorbell >= 0 && io->irqfd >= 0, "eventfd");
	r = calloc(1, sizeof(*r) + sizeof(r->entries[0]));
	TEST_ASSERT(r, "calloc");
	r->nr = 1;
	r->entries[0].gsi = DEVICE_GSI;
	r->entries[0].type = KVM_IRQ_ROUTING_MSI;
	/*
	 * Lowest priority (data bits 8-10: 001) as Windows sends its MSIs,
	 * to physical destination APIC 1 alone, edge: the IPIs are fixed.
	 */
	r->entries[0].u.msi.address_lo = 0xfee00000 | (1 << 12);
	r->entries[0].u.msi.data = IRQ_VECTOR | 1 << 8;
	vm_ioctl(vm, KVM_SET_GSI_ROUTING, r);
	free(r);
	ioev.fd = io->doorbell;
	vm_ioctl(vm, KVM_IOEVENTFD, &ioev);
	irqfd.fd = io->irqfd;
	vm_ioctl(vm, KVM_IRQFD, &irqfd);
}

/* KVM's halt-polling counters of @vm, those its debugfs has. */
static void print_kvm_stats(struct kvm_vm *vm)
{
	static const char *const names[] = {
		"halt_attempted_poll", "halt_successful_poll",
		"halt_poll_success_ns", "halt_poll_fail_ns", "halt_wait_ns",
		"halt_poll_invalid", "halt_wakeup",
	};
	unsigned long long val;
	char path[128];
	unsigned int i;
	FILE *f;

	printf("kvm_stats");
	for (i = 0; i < ARRAY_SIZE(names); i++) {
		snprintf(path, sizeof(path), "/sys/kernel/debug/kvm/%d-%d/%s",
			 (int)getpid(), vm->fd, names[i]);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fscanf(f, "%llu", &val) == 1)
			printf(" %s=%llu", names[i], val);
		fclose(f);
	}
	printf("\n");
}

#define SET_GLOBAL(vm, g, val) \
	(*(uint64_t *)addr_gva2hva(vm, (vm_vaddr_t)&(g)) = (val))
#define GET_GLOBAL(vm, g) \
	READ_ONCE(*(uint64_t *)addr_gva2hva(vm, (vm_vaddr_t)&(g)))

int main(int argc, char **argv)
{
	struct vcpu_thread v[2] = {};
	struct kvm_vcpu *vcpus[2] = {};
	struct io_thread io = {};
	struct kvm_vm *vm;
	unsigned int i, nr, idle;
	uint64_t last, now;
	bool ipi, device, lock, hv, mask;
	long n, us, tsc_khz;
	char line[64];

	if (argc == 5 && (!strcmp(argv[1], "timer") ||
			  !strcmp(argv[1], "timerspin") ||
			  !strcmp(argv[1], "timerdl"))) {
		ipi = false;
		nr = 1;
	} else if (argc == 6 && (!strcmp(argv[1], "ipi") ||
				 !strcmp(argv[1], "ipimask") ||
				 !strcmp(argv[1], "device") ||
				 !strcmp(argv[1], "lock") ||
				 !strcmp(argv[1], "lockhv"))) {
		ipi = true;
		nr = 2;
	} else {
		fprintf(stderr, "usage: %s timer|timerspin|timerdl N PERIOD_US CPU | ipi|ipimask|device N GAP_US CPU0 CPU1 | lock|lockhv N HOLD_US CPU0 CPU1\n",
			argv[0]);
		return 2;
	}
	device = !strcmp(argv[1], "device");
	mask = !strcmp(argv[1], "ipimask");
	hv = !strcmp(argv[1], "lockhv");
	lock = hv || !strcmp(argv[1], "lock");
	n = atol(argv[2]);
	us = atol(argv[3]);
	for (i = 0; i < nr; i++)
		v[i].cpu = atoi(argv[4 + i]);

	vm = vm_create_with_one_vcpu(&vcpus[0], lock ? lock_holder :
				     ipi ? ipi_sender : timer_guest);
	/* KVM reports no TSC-deadline timer: the VMM says it has one. */
	if (!strcmp(argv[1], "timerdl"))
		vcpu_set_cpuid_feature(vcpus[0], X86_FEATURE_TSC_DEADLINE_TIMER);
	if (ipi)
		vcpus[1] = vm_vcpu_add(vm, 1, lock ? lock_spinner :
					       mask ? ipi_masker : ipi_halter);
	vm_init_descriptor_tables(vm);
	for (i = 0; i < nr; i++)
		vcpu_init_descriptor_tables(vcpus[i]);
	vm_install_exception_handler(vm, IRQ_VECTOR, irq_handler);
	vm_install_exception_handler(vm, NMI_VECTOR, nmi_handler);
	virt_pg_map(vm, APIC_DEFAULT_GPA, APIC_DEFAULT_GPA);

	tsc_khz = __vcpu_ioctl(vcpus[0], KVM_GET_TSC_KHZ, NULL);
	if (tsc_khz <= 0) {
		fprintf(stderr, "irq_guest: KVM_GET_TSC_KHZ: %ld\n", tsc_khz);
		return 1;
	}
	SET_GLOBAL(vm, g_n, n);
	if (lock) {
		SET_GLOBAL(vm, g_hold_tsc, us * tsc_khz / 1000);
		if (hv) {
			for (i = 0; i < nr; i++)
				set_hv_cpuid(vcpus[i]);
			SET_GLOBAL(vm, g_hv, 1);
			SET_GLOBAL(vm, g_hv_spin_tsc, HV_SPIN_US * tsc_khz / 1000);
			SET_GLOBAL(vm, g_amd, is_amd_cpu());
			SET_GLOBAL(vm, g_hcall_gpa,
				   addr_gva2gpa(vm, vm_vaddr_alloc_page(vm)));
		}
	} else if (ipi) {
		SET_GLOBAL(vm, g_gap_tsc, us * tsc_khz / 1000);
		SET_GLOBAL(vm, g_device, device);
		SET_GLOBAL(vm, g_mask, mask);
		if (device)
			device_setup(vm, &io);
	} else {
		SET_GLOBAL(vm, g_period_tsc, us * tsc_khz / 1000);
		/* KVM's APIC bus runs at 1 GHz: at divide 1, a count is 1 ns. */
		SET_GLOBAL(vm, g_tmict, us * 1000);
		SET_GLOBAL(vm, g_spin, !strcmp(argv[1], "timerspin"));
		SET_GLOBAL(vm, g_deadline, !strcmp(argv[1], "timerdl"));
	}

	if (!fgets(line, sizeof(line), stdin))
		return 1;
	if (device) {
		io.cpu = v[0].cpu;
		errno = pthread_create(&io.thread, NULL, io_fn, &io);
		if (errno) {
			perror("pthread_create");
			return 1;
		}
	}
	for (i = 0; i < nr; i++) {
		v[i].vcpu = vcpus[i];
		errno = pthread_create(&v[i].thread, NULL, vcpu_fn, &v[i]);
		if (errno) {
			perror("pthread_create");
			return 1;
		}
	}
	/*
	 * vCPU 0 finishes; the halter stays halted until the process exits.
	 * A guest that stops making progress ends the run, with its count.
	 */
	for (last = 0, idle = 0; !READ_ONCE(v[0].done); usleep(100000)) {
		now = GET_GLOBAL(vm, g_count);
		idle = now == last ? idle + 1 : 0;
		last = now;
		if (idle == STUCK_TICKS) {
			fprintf(stderr, "irq_guest: no interrupt for %d s: %llu of %ld\n",
				STUCK_TICKS / 10, (unsigned long long)now, n);
			_exit(STUCK_EXIT);
		}
	}
	if (v[0].err || v[1].err || io.err) {
		fprintf(stderr, "irq_guest: %s thread: %s\n",
			io.err ? "I/O" : "vCPU",
			strerror(io.err ?: v[0].err ?: v[1].err));
		return 1;
	}
	printf("irq_guest mode=%s pid=%d tids=%d", argv[1],
	       (int)getpid(), (int)v[0].tid);
	if (ipi)
		printf(",%d", (int)v[1].tid);
	if (device)
		printf(",%d", (int)io.tid);
	printf(" vector=%d count=%llu tsc_khz=%ld late_sum_ns=%llu late_max_ns=%llu",
	       IRQ_VECTOR, (unsigned long long)GET_GLOBAL(vm, g_count), tsc_khz,
	       (unsigned long long)(GET_GLOBAL(vm, g_late_sum) * 1000000 /
				    tsc_khz),
	       (unsigned long long)(GET_GLOBAL(vm, g_late_max) * 1000000 /
				    tsc_khz));
	if (ipi && !lock)
		printf(" span_ns=%llu",
		       (unsigned long long)(GET_GLOBAL(vm, g_span) * 1000000 /
					    tsc_khz));
	if (lock)
		printf(" spin_ns=%llu",
		       (unsigned long long)(GET_GLOBAL(vm, g_spin_tsc) *
					    1000000 / tsc_khz));
	if (hv)
		printf(" hv_calls=%llu hv_failed=%llu",
		       (unsigned long long)GET_GLOBAL(vm, g_hv_calls),
		       (unsigned long long)GET_GLOBAL(vm, g_hv_failed));
	printf("\n");
	/* The halter's last halt has ended: KVM's counters have it. */
	for (idle = 0; ipi && !READ_ONCE(v[1].done); usleep(100000)) {
		if (++idle == STUCK_TICKS) {
			fprintf(stderr, "irq_guest: the halter did not stop in %d s\n",
				STUCK_TICKS / 10);
			_exit(STUCK_EXIT);
		}
	}
	print_kvm_stats(vm);
	fflush(stdout);
	/* Not kvm_vm_free(): the I/O thread may still read its doorbell. */
	_exit(0);
}
