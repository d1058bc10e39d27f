// SPDX-License-Identifier: GPL-2.0
/*
 * A tiny KVM guest for the vmlat selftests, run by the upstream KVM
 * selftests' library (libkvm), and a one-vCPU VM of the same kind that runs
 * a guest function of the caller's.
 *
 * The tiny guest follows the KVM selftests' habit of a guest whose every
 * exit is known in advance: it writes a decreasing counter N, N-1, ..., 1
 * to an I/O port and then halts. Userspace checks the value of every exit,
 * so a lost or repeated exit is noticed, not just a wrong total.
 *
 * The VM is libkvm's (64-bit guest code, identity-mapped ELF of the
 * program, a stack), made without two things libkvm's vm_create*() add:
 *  - no in-kernel irqchip, so HLT exits to userspace as KVM_EXIT_HLT (with
 *    one, a HLT with interrupts off would block in the kernel for ever);
 *  - no ucall: the guests report by their own port I/O only, so the exits
 *    to userspace are exactly the ones the tests count.
 * Besides those, the guest takes only exits handled in the kernel that the
 * tests allow for (first-touch nested page faults, host interrupts).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test_util.h"
#include "kvm_util.h"
#include "processor.h"

#include "ksft_kvm.h"
#include "ksft_util.h"

/**
 * vmlat_run_error() - what a failed KVM_RUN exit says
 * @run:  the vCPU's kvm_run, after a KVM_EXIT_FAIL_ENTRY or
 *        KVM_EXIT_INTERNAL_ERROR exit
 * @buf:  room for the text
 * @size: its size
 *
 * Return: @buf, e.g. "KVM_EXIT_FAIL_ENTRY, hardware reason 0x...".
 */
const char *vmlat_run_error(const struct kvm_run *run, char *buf,
			    size_t size)
{
	if (run->exit_reason == KVM_EXIT_FAIL_ENTRY)
		snprintf(buf, size, "KVM_EXIT_FAIL_ENTRY, hardware reason 0x%llx",
			 (unsigned long long)
			 run->fail_entry.hardware_entry_failure_reason);
	else if (run->exit_reason == KVM_EXIT_INTERNAL_ERROR)
		snprintf(buf, size, "KVM_EXIT_INTERNAL_ERROR, suberror %u",
			 run->internal.suberror);
	else
		snprintf(buf, size, "exit reason %u", run->exit_reason);
	return buf;
}

/*
 * Pages of memslot 0: libkvm's 512 for the program's ELF, a stack per
 * vCPU, tables.
 */
#define VMLAT_VM_PAGES(nr_vcpus)	(512 + (nr_vcpus) * DEFAULT_STACK_PGS + 16 + \
					 2 * VMLAT_CR3_MAX + 1)

/**
 * struct ksft_vm - a VM on libkvm
 * @vm:       libkvm's VM
 * @vcpu:     its vCPU 0 (@vcpus[0])
 * @nr_vcpus: how many
 * @vcpus:    its vCPUs, by index
 */
struct ksft_vm {
	struct kvm_vm *vm;
	struct kvm_vcpu *vcpu;
	unsigned int nr_vcpus;
	struct kvm_vcpu *vcpus[];
};

/*
 * The tiny guest: @n OUTs of the counter (one KVM_EXIT_IO each), then HLT
 * (one KVM_EXIT_HLT). Never re-entered after the HLT; HLTs again if it is.
 */
static void tiny_guest_code(uint32_t n)
{
	for (; n; n--)
		__asm__ __volatile__("outl %%eax, %[port]"
				     : : "a"(n), [port] "i"(VMLAT_GUEST_PORT)
				     : "memory");
	for (;;)
		__asm__ __volatile__("hlt" : : : "memory");
}

/* Says in @st->error why the run failed; evaluates to @err. */
#define guest_fail(st, err, ...) \
	vmlat_errorf((st)->error, sizeof((st)->error), (err), __VA_ARGS__)

/*
 * kvm_vm_elf_load() of the 6.1 library opens the program's ELF file twice
 * and closes neither: a program that makes thousands of VMs runs out of
 * file descriptors. Closes the descriptors from @lowest up that name the
 * program's file (descriptors are allocated lowest first, and VMs are made
 * one at a time).
 */
static void close_leaked_elf_fds(int lowest)
{
	char link[64], path[PATH_MAX], prog[PATH_MAX];
	ssize_t n;
	int fd;

	if (lowest < 0 || !realpath(program_invocation_name, prog))
		return;
	for (fd = lowest; fd < lowest + 8; fd++) {
		snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
		n = readlink(link, path, sizeof(path) - 1);
		if (n < 0)
			continue;
		path[n] = '\0';
		if (!strcmp(path, prog))
			close(fd);
	}
}

/**
 * ksft_vm_create() - create a one-vCPU VM that runs @guest_code(@arg)
 * @vmp:        receives the VM; free it with ksft_vm_destroy()
 * @guest_code: a function of this program, run in the guest in 64-bit mode
 *              with its first argument (RDI) @arg; it must not call
 *              anything that is not guest code itself (no libc), and talks
 *              to the host by port I/O, HLT and hypercalls
 * @arg:        its argument
 * @st:         on failure @st->error says why
 *
 * The VM has no in-kernel irqchip (HLT exits as KVM_EXIT_HLT) and makes no
 * ucalls. libkvm asserts (ends the process with a message) if one of its
 * own KVM calls fails; /dev/kvm missing or not usable is reported here.
 *
 * Context: creates the VM and its vCPU from the calling thread; call
 * KVM_RUN from one thread only (the "vCPU thread").
 * Return: 0, or the negative errno of opening /dev/kvm (-ENOENT: no kvm).
 */
int ksft_vm_create(struct ksft_vm **vmp, void *guest_code, uint64_t arg,
		   struct vmlat_guest_stats *st)
{
	return ksft_vm_create_vcpus(vmp, 1, guest_code, arg, st);
}

/**
 * ksft_vm_create_vcpus() - ksft_vm_create() with @nr_vcpus vCPUs
 * @vmp:        receives the VM; free it with ksft_vm_destroy()
 * @nr_vcpus:   1 or more; vCPU i runs @guest_code(@arg) on a stack of its
 *              own, from its thread (see ksft_vm_vcpu_fd_n())
 * @guest_code: as for ksft_vm_create()
 * @arg:        its argument, the same for every vCPU
 * @st:         on failure @st->error says why
 *
 * Return: 0, -EINVAL for no vCPU, or as ksft_vm_create().
 */
int ksft_vm_create_vcpus(struct ksft_vm **vmp, unsigned int nr_vcpus,
			 void *guest_code, uint64_t arg,
			 struct vmlat_guest_stats *st)
{
	struct ksft_vm *vm;
	unsigned int i;
	int fd;

	*vmp = NULL;
	memset(st, 0, sizeof(*st));
	/* libkvm would exit(KSFT_SKIP) itself: say why and let callers decide. */
	fd = open("/dev/kvm", O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return guest_fail(st, -errno, "open /dev/kvm: %s",
				  strerror(errno));
	close(fd);
	if (!nr_vcpus)
		return guest_fail(st, -EINVAL, "a VM needs a vCPU");
	vm = calloc(1, sizeof(*vm) + nr_vcpus * sizeof(vm->vcpus[0]));
	if (!vm)
		return guest_fail(st, -ENOMEM, "out of memory");
	/* __vm_create() without its vm_create_irqchip(). */
	vm->vm = ____vm_create(VM_MODE_DEFAULT,
			       vm_adjust_num_guest_pages(VM_MODE_DEFAULT,
							 VMLAT_VM_PAGES(nr_vcpus)));
	/* The lowest free descriptor: where the ELF loader's leaks start. */
	fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (fd >= 0)
		close(fd);
	kvm_vm_elf_load(vm->vm, program_invocation_name);
	close_leaked_elf_fds(fd);
	for (i = 0; i < nr_vcpus; i++) {
		struct kvm_regs regs;

		vm->vcpus[i] = vm_vcpu_add(vm->vm, i, guest_code);
		vcpu_args_set(vm->vcpus[i], 1, arg);
		/*
		 * IF=1. Harmless here: with no irqchip nothing can interrupt
		 * the guest. Needed on the bochs (VMX) test host: bochs takes
		 * no external-interrupt VM exit while the guest has IF=0 (real
		 * VT-x does), so a guest spinning with IF=0 would keep the
		 * host's only CPU for ever.
		 */
		vcpu_regs_get(vm->vcpus[i], &regs);
		regs.rflags |= 0x200;
		vcpu_regs_set(vm->vcpus[i], &regs);
	}
	vm->vcpu = vm->vcpus[0];
	vm->nr_vcpus = nr_vcpus;
	*vmp = vm;
	return 0;
}

/**
 * ksft_vm_vcpu_fd() - the vCPU file descriptor of a VM
 * @vm: VM from ksft_vm_create()
 *
 * Return: the fd for KVM_RUN, KVM_GET_REGS, KVM_SET_REGS...
 */
int ksft_vm_vcpu_fd(const struct ksft_vm *vm)
{
	return vm->vcpu->fd;
}

/**
 * ksft_vm_vcpu_fd_n() - the file descriptor of vCPU @i of a VM
 * @vm: VM from ksft_vm_create_vcpus()
 * @i:  below its number of vCPUs
 *
 * Return: the fd for KVM_RUN...
 */
int ksft_vm_vcpu_fd_n(const struct ksft_vm *vm, unsigned int i)
{
	return vm->vcpus[i]->fd;
}

/**
 * ksft_vm_kvm_run_n() - the struct kvm_run of vCPU @i of a VM
 * @vm: VM from ksft_vm_create_vcpus()
 * @i:  below its number of vCPUs
 *
 * Return: the mapped struct kvm_run.
 */
struct kvm_run *ksft_vm_kvm_run_n(const struct ksft_vm *vm, unsigned int i)
{
	return vm->vcpus[i]->run;
}

/**
 * ksft_vm_kvm_run() - the vCPU's shared struct kvm_run
 * @vm: VM from ksft_vm_create()
 *
 * Return: the mapped struct kvm_run (exit_reason and exit data after KVM_RUN).
 */
struct kvm_run *ksft_vm_kvm_run(const struct ksft_vm *vm)
{
	return vm->vcpu->run;
}

/**
 * ksft_vm_user_page() - let CPL 3 reach the guest page at @gva
 * @vm:  VM from ksft_vm_create()
 * @gva: an address libkvm mapped (with 4 KiB pages, as it maps the
 *       program and the stack)
 *
 * libkvm's page tables are for ring 0: it sets the U/S bit nowhere. This
 * sets it on every level of @gva's translation. The guest runs with
 * neither SMEP nor SMAP, so ring 0 keeps its access. Call it before the
 * first KVM_RUN (no TLB of the guest holds the old entries then).
 *
 * Return: 0, or -EFAULT if @gva is not mapped, or by a large page.
 */
int ksft_vm_user_page(struct ksft_vm *vm, uint64_t gva)
{
	uint64_t *table = addr_gpa2hva(vm->vm, vm->vm->pgd), *e;
	int level;

	for (level = 4; level >= 1; level--) {
		e = &table[(gva >> (PAGE_SHIFT + 9 * (level - 1))) & 511];
		if (!(*e & PTE_PRESENT_MASK) ||
		    (level > 1 && (*e & PTE_LARGE_MASK)))
			return -EFAULT;
		*e |= PTE_USER_MASK;
		if (level > 1)
			table = addr_gpa2hva(vm->vm, *e & PHYSICAL_PAGE_MASK);
	}
	return 0;
}

/**
 * ksft_vm_destroy() - close a VM made by ksft_vm_create()
 * @vm: the VM, or NULL
 */
void ksft_vm_destroy(struct ksft_vm *vm)
{
	if (!vm)
		return;
	kvm_vm_free(vm->vm);
	free(vm);
}

/* Checks one KVM_EXIT_IO against what tiny_guest_code must produce next. */
static int tiny_vm_check_io(struct ksft_vm *vm, uint32_t expect,
			    struct vmlat_guest_stats *st)
{
	const struct kvm_run *run = vm->vcpu->run;
	uint32_t val;

	if (run->io.direction != KVM_EXIT_IO_OUT ||
	    run->io.port != VMLAT_GUEST_PORT || run->io.size != 4 ||
	    run->io.count != 1)
		return guest_fail(st, -EPROTO,
				  "I/O exit %llu is dir %u port 0x%x size %u count %u, expected a 4-byte out to 0x%x",
				  (unsigned long long)st->io_exits + 1,
				  run->io.direction, run->io.port,
				  run->io.size, run->io.count,
				  VMLAT_GUEST_PORT);
	memcpy(&val, (const uint8_t *)run + run->io.data_offset, sizeof(val));
	if (val != expect)
		return guest_fail(st, -EBADMSG,
				  "I/O exit %llu carried %u, expected %u: an exit was lost or repeated",
				  (unsigned long long)st->io_exits + 1,
				  val, expect);
	return 0;
}

/*
 * Runs the vCPU of a VM created with counter @n. With @pr NULL, runs to the
 * final HLT; otherwise returns early when @pr->stop is set or at
 * @deadline_ms, publishing the I/O exit count after every exit.
 */
static int tiny_vm_run(struct ksft_vm *vm, uint32_t n,
		       struct vmlat_guest_progress *pr, uint64_t deadline_ms,
		       struct vmlat_guest_stats *st)
{
	const struct kvm_run *run = vm->vcpu->run;
	uint32_t expect = n;
	char buf[80];
	int ret;

	for (;;) {
		if (pr && (__atomic_load_n(&pr->stop, __ATOMIC_ACQUIRE) ||
			   vmlat_now_ms() >= deadline_ms))
			return 0;
		if (ioctl(vm->vcpu->fd, KVM_RUN, 0) < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			return guest_fail(st, -errno,
					  "KVM_RUN after %llu I/O exits: %s",
					  (unsigned long long)st->io_exits,
					  strerror(errno));
		}
		switch (run->exit_reason) {
		case KVM_EXIT_IO:
			if (!expect)
				return guest_fail(st, -EPROTO,
						  "I/O exit after the %u expected ones",
						  n);
			ret = tiny_vm_check_io(vm, expect, st);
			if (ret)
				return ret;
			expect--;
			st->io_exits++;
			if (pr)
				__atomic_store_n(&pr->io_exits, st->io_exits,
						 __ATOMIC_RELEASE);
			break;
		case KVM_EXIT_HLT:
			st->hlt_exits++;
			if (expect)
				return guest_fail(st, -EPROTO,
						  "HLT after %llu of %u I/O exits",
						  (unsigned long long)st->io_exits,
						  n);
			return 0;
		case KVM_EXIT_INTR:
			break;
		case KVM_EXIT_FAIL_ENTRY:
		case KVM_EXIT_INTERNAL_ERROR:
			return guest_fail(st, -EPROTO, "%s",
					  vmlat_run_error(run, buf, sizeof(buf)));
		default:
			return guest_fail(st, -EPROTO,
					  "unexpected exit reason %u after %llu I/O exits",
					  run->exit_reason,
					  (unsigned long long)st->io_exits);
		}
	}
}

/**
 * vmlat_guest_run_exits() - run the tiny guest for exactly @nr_io I/O exits
 * @nr_io: number of port-I/O exits (1..UINT32_MAX)
 * @st:    receives the exits seen; on failure @st->error says why
 *
 * On success the guest made exactly @nr_io KVM_EXIT_IO exits with the
 * expected values, then one KVM_EXIT_HLT. The VM is destroyed on return.
 *
 * Return: 0, -EINVAL for @nr_io 0, -EPROTO/-EBADMSG for a guest that did
 * something else, or the negative errno of a failed KVM call.
 */
int vmlat_guest_run_exits(uint32_t nr_io, struct vmlat_guest_stats *st)
{
	struct ksft_vm *vm;
	int ret;

	ret = vmlat_guest_run_kept(&vm, nr_io, st);
	ksft_vm_destroy(vm);
	return ret;
}

/**
 * vmlat_guest_run_kept() - vmlat_guest_run_exits(), the VM kept alive
 * @vmp:   receives the VM, halted, for ksft_vm_destroy(); NULL on failure
 * @nr_io: number of port-I/O exits (1..UINT32_MAX)
 * @st:    as for vmlat_guest_run_exits()
 *
 * The calling thread runs the vCPU, and stays its thread (for vmlat, a
 * vCPU thread) until the VM is destroyed.
 *
 * Return: as for vmlat_guest_run_exits().
 */
int vmlat_guest_run_kept(struct ksft_vm **vmp, uint32_t nr_io,
			 struct vmlat_guest_stats *st)
{
	int ret;

	*vmp = NULL;
	memset(st, 0, sizeof(*st));
	if (!nr_io)
		return guest_fail(st, -EINVAL, "nr_io must be at least 1");
	ret = ksft_vm_create(vmp, tiny_guest_code, nr_io, st);
	if (!ret)
		ret = tiny_vm_run(*vmp, nr_io, NULL, 0, st);
	if (ret) {
		ksft_vm_destroy(*vmp);
		*vmp = NULL;
	}
	return ret;
}

/**
 * vmlat_guest_run_until() - run the tiny guest until told to stop
 * @pr:     shared control: progress is published in @pr->io_exits after
 *          every exit; setting @pr->stop ends the run
 * @max_ms: end the run after this long even if @pr->stop stays 0
 * @st:     receives the exits seen; on failure @st->error says why
 *
 * The guest counts down from UINT32_MAX, so it never reaches its HLT here;
 * every exit's value is still checked.
 *
 * Return: 0 when stopped (by flag or time), else as vmlat_guest_run_exits().
 */
int vmlat_guest_run_until(struct vmlat_guest_progress *pr, uint64_t max_ms,
			  struct vmlat_guest_stats *st)
{
	uint64_t deadline_ms = vmlat_now_ms() + max_ms;
	struct ksft_vm *vm;
	int ret;

	memset(st, 0, sizeof(*st));
	ret = ksft_vm_create(&vm, tiny_guest_code, UINT32_MAX, st);
	if (!ret)
		ret = tiny_vm_run(vm, UINT32_MAX, pr, deadline_ms, st);
	ksft_vm_destroy(vm);
	return ret;
}

/* ---- a guest that switches address spaces ---------------------------- */

/* The roots cr3_guest_code() switches among: set by the host before it runs. */
static uint64_t cr3_roots[VMLAT_CR3_MAX];

/*
 * Round after round, for each root k of @n: loads it into CR3, spins
 * (k + 1) * VMLAT_CR3_SPIN loops, and OUTs k: root k's guest time grows
 * with k, and every OUT exit is taken in the root it names. The labels
 * vmlat_cr3_written (the instruction after the CR3 write) and
 * vmlat_cr3_out (the OUT) tell an exit's guest RIP in root k (from the
 * one to the other, the spin between them) from one in the root before
 * (anywhere else: after the OUT, up to the CR3 write not yet done).
 * Global labels: a second copy of this code would not assemble.
 */
static void cr3_guest_code(uint32_t n)
{
	volatile uint64_t i;
	uint32_t k;

	for (;;) {
		for (k = 0; k < n; k++) {
			__asm__ __volatile__("mov %0, %%cr3\n\t"
					     ".globl vmlat_cr3_written\n"
					     "vmlat_cr3_written:"
					     : : "r"(cr3_roots[k]) : "memory");
			for (i = 0; i < (k + 1) * (uint64_t)VMLAT_CR3_SPIN; i++)
				;
			__asm__ __volatile__(".globl vmlat_cr3_out\n"
					     "vmlat_cr3_out:\n\t"
					     "outl %%eax, %[port]"
					     : : "a"(k), [port] "i"(VMLAT_CR3_PORT)
					     : "memory");
		}
	}
}

extern const char vmlat_cr3_written[], vmlat_cr3_out[];

/* One vCPU's run of cr3_guest_code(): its thread's part. */
struct cr3_vcpu_run {
	struct ksft_vm *vm;
	unsigned int idx;
	unsigned int n;
	uint64_t deadline_ms;
	const uint64_t *roots;
	uint64_t exits[VMLAT_CR3_MAX];
	uint64_t mismatches;
	int ret;
	char error[160];
};

static void *cr3_vcpu_thread(void *arg)
{
	struct cr3_vcpu_run *r = arg;
	struct kvm_vcpu *vcpu = r->vm->vcpus[r->idx];
	const struct kvm_run *run = vcpu->run;
	struct kvm_sregs sregs;
	char buf[80];
	uint32_t k;

	while (!r->ret && vmlat_now_ms() < r->deadline_ms) {
		if (ioctl(vcpu->fd, KVM_RUN, 0) < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			r->ret = vmlat_errorf(r->error, sizeof(r->error), -errno,
					      "vCPU %u KVM_RUN: %s", r->idx,
					      strerror(errno));
			break;
		}
		switch (run->exit_reason) {
		case KVM_EXIT_IO:
			memcpy(&k, (const uint8_t *)run + run->io.data_offset,
			       sizeof(k));
			if (run->io.port != VMLAT_CR3_PORT || k >= r->n) {
				r->ret = vmlat_errorf(r->error, sizeof(r->error),
						      -EPROTO, "OUT of %u to 0x%x",
						      k, run->io.port);
				break;
			}
			vcpu_sregs_get(vcpu, &sregs);
			r->exits[k]++;
			if ((sregs.cr3 & ~0xfffULL) != r->roots[k])
				r->mismatches++;
			break;
		case KVM_EXIT_INTR:
			break;
		default:
			r->ret = vmlat_errorf(r->error, sizeof(r->error), -EPROTO,
					      "vCPU %u: %s", r->idx,
					      vmlat_run_error(run, buf,
							      sizeof(buf)));
		}
	}
	return NULL;
}

/**
 * vmlat_guest_run_cr3() - a guest switching among @n page-table roots
 * @n:        how many roots, 1..VMLAT_CR3_MAX
 * @nr_vcpus: how many vCPUs run it, 1..VMLAT_CR3_VCPUS_MAX, each from a
 *            thread of its own, each round after round through every root
 * @ms:       how long to run it
 * @st:       receives the roots, the exits in each (per vCPU), and KVM's
 *            view of CR3 at each exit; on failure @st->error says why
 *
 * Each root is a copy of libkvm's PML4 in a page of its own, 8 KiB
 * aligned (so that no two are the halves of one KPTI pair). At every OUT
 * exit, KVM_GET_SREGS says which CR3 the guest had: what KVM itself
 * holds, the oracle for vmlat's reading of it; an exit whose CR3 is not
 * the root the guest named counts in @st->mismatches.
 *
 * Return: 0, -EINVAL for a bad @n or @nr_vcpus, or as
 * vmlat_guest_run_exits().
 */
int vmlat_guest_run_cr3(unsigned int n, unsigned int nr_vcpus, uint64_t ms,
			struct vmlat_cr3_stats *st)
{
	struct cr3_vcpu_run r[VMLAT_CR3_VCPUS_MAX] = {};
	pthread_t th[VMLAT_CR3_VCPUS_MAX];
	struct vmlat_guest_stats gs;
	uint64_t gpa, root;
	struct ksft_vm *vm;
	unsigned int i, k;
	int ret = 0, err;

	memset(st, 0, sizeof(*st));
	if (!n || n > VMLAT_CR3_MAX || !nr_vcpus ||
	    nr_vcpus > VMLAT_CR3_VCPUS_MAX)
		return vmlat_errorf(st->error, sizeof(st->error), -EINVAL,
				    "1 to %d roots, 1 to %d vCPUs",
				    VMLAT_CR3_MAX, VMLAT_CR3_VCPUS_MAX);
	ret = ksft_vm_create_vcpus(&vm, nr_vcpus, cr3_guest_code, n, &gs);
	if (ret) {
		memcpy(st->error, gs.error, sizeof(st->error));
		return ret;
	}
	gpa = vm_phy_pages_alloc(vm->vm, 2 * n + 1,
				 KVM_GUEST_PAGE_TABLE_MIN_PADDR, 0);
	root = (gpa + 0x1fff) & ~0x1fffULL;
	for (k = 0; k < n; k++, root += 0x2000) {
		memcpy(addr_gpa2hva(vm->vm, root),
		       addr_gpa2hva(vm->vm, vm->vm->pgd), 0x1000);
		cr3_roots[k] = root;
		st->roots[k] = root;
	}
	st->pgd = vm->vm->pgd;
	st->written_rip = (uintptr_t)vmlat_cr3_written;
	st->out_rip = (uintptr_t)vmlat_cr3_out;
	st->n = n;
	st->nr_vcpus = nr_vcpus;
	sync_global_to_guest(vm->vm, cr3_roots);
	for (i = 0; i < nr_vcpus; i++) {
		r[i].vm = vm;
		r[i].idx = i;
		r[i].n = n;
		r[i].deadline_ms = vmlat_now_ms() + ms;
		r[i].roots = st->roots;
	}
	for (i = 1; i < nr_vcpus; i++) {
		err = pthread_create(&th[i], NULL, cr3_vcpu_thread, &r[i]);
		if (err) {
			r[i].ret = vmlat_errorf(r[i].error, sizeof(r[i].error),
						-err, "pthread_create: %s",
						strerror(err));
			nr_vcpus = i;
			/* the others stop at their deadline */
			break;
		}
	}
	cr3_vcpu_thread(&r[0]);
	for (i = 1; i < nr_vcpus; i++)
		pthread_join(th[i], NULL);
	for (i = 0; i < st->nr_vcpus; i++) {
		for (k = 0; k < n; k++) {
			st->exits[k] += r[i].exits[k];
			st->vcpu_exits[i][k] = r[i].exits[k];
		}
		st->mismatches += r[i].mismatches;
		if (r[i].ret && !ret) {
			ret = r[i].ret;
			memcpy(st->error, r[i].error, sizeof(st->error));
		}
	}
	ksft_vm_destroy(vm);
	return ret;
}

bool vmlat_host_is_intel(void)
{
	return is_intel_cpu();
}
