// SPDX-License-Identifier: GPL-2.0
/*
 * A tiny KVM guest for the vmlat selftests, on the raw /dev/kvm API.
 *
 * The tiny guest follows the KVM selftests' habit of a guest whose every
 * exit is known in advance: it runs 16-bit real-mode code that writes a
 * decreasing counter N, N-1, ..., 1 to an I/O port and then halts. Userspace
 * checks the value of every exit, so a lost or repeated exit is noticed, not
 * just a wrong total.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <linux/kvm.h>

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

#define GUEST_MEM_SIZE	0x10000UL
#define GUEST_CODE_GPA	0x1000UL
#define GUEST_N_OFFSET	2	/* imm32 of the first instruction */

/*
 * 16-bit real-mode code, loaded at GUEST_CODE_GPA with CS base 0:
 *
 *	mov	ecx, N
 * 1:	mov	eax, ecx
 *	out	VMLAT_GUEST_PORT, eax	; one KVM_EXIT_IO, data = ecx
 *	dec	ecx
 *	jnz	1b
 *	hlt				; one KVM_EXIT_HLT (no in-kernel irqchip)
 * 2:	jmp	2b			; never reached
 */
static const uint8_t guest_code[] = {
	0x66, 0xb9, 0x00, 0x00, 0x00, 0x00,	/* mov ecx, imm32 */
	0x66, 0x89, 0xc8,			/* mov eax, ecx */
	0x66, 0xe7, VMLAT_GUEST_PORT,		/* out imm8, eax */
	0x66, 0x49,				/* dec ecx */
	0x75, 0xf6,				/* jnz -10 */
	0xf4,					/* hlt */
	0xeb, 0xfe,				/* jmp . */
};

struct tiny_vm {
	int kvm_fd;
	int vm_fd;
	int vcpu_fd;
	struct kvm_run *run;
	size_t run_size;
	uint8_t *mem;
};

/* Says in @st->error why the run failed; evaluates to @err. */
#define guest_fail(st, err, ...) \
	vmlat_errorf((st)->error, sizeof((st)->error), (err), __VA_ARGS__)

static void tiny_vm_destroy(struct tiny_vm *vm)
{
	if (vm->run && vm->run != MAP_FAILED)
		munmap(vm->run, vm->run_size);
	if (vm->vcpu_fd >= 0)
		close(vm->vcpu_fd);
	if (vm->vm_fd >= 0)
		close(vm->vm_fd);
	if (vm->mem && vm->mem != MAP_FAILED)
		munmap(vm->mem, GUEST_MEM_SIZE);
	if (vm->kvm_fd >= 0)
		close(vm->kvm_fd);
}

/* Creates a VM with one vCPU at the start of guest_code, counter @n. */
static int tiny_vm_create(struct tiny_vm *vm, uint32_t n,
			  struct vmlat_guest_stats *st)
{
	struct kvm_userspace_memory_region region = {
		.slot = 0,
		.guest_phys_addr = 0,
		.memory_size = GUEST_MEM_SIZE,
	};
	struct kvm_sregs sregs;
	struct kvm_regs regs;
	int size;

	memset(vm, 0, sizeof(*vm));
	vm->kvm_fd = -1;
	vm->vm_fd = -1;
	vm->vcpu_fd = -1;

	vm->kvm_fd = open("/dev/kvm", O_RDWR | O_CLOEXEC);
	if (vm->kvm_fd < 0)
		return guest_fail(st, -errno, "open /dev/kvm: %s",
				  strerror(errno));
	if (ioctl(vm->kvm_fd, KVM_GET_API_VERSION, 0) != KVM_API_VERSION)
		return guest_fail(st, -EINVAL, "KVM API version is not %d",
				  KVM_API_VERSION);
	vm->vm_fd = ioctl(vm->kvm_fd, KVM_CREATE_VM, 0);
	if (vm->vm_fd < 0)
		return guest_fail(st, -errno, "KVM_CREATE_VM: %s",
				  strerror(errno));
	/* Only VMX without unrestricted guest needs it; harmless elsewhere. */
	if (ioctl(vm->kvm_fd, KVM_CHECK_EXTENSION, KVM_CAP_SET_TSS_ADDR) > 0 &&
	    ioctl(vm->vm_fd, KVM_SET_TSS_ADDR, 0xfffbd000UL) < 0)
		return guest_fail(st, -errno, "KVM_SET_TSS_ADDR: %s",
				  strerror(errno));

	vm->mem = mmap(NULL, GUEST_MEM_SIZE, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (vm->mem == MAP_FAILED)
		return guest_fail(st, -errno, "mmap guest memory: %s",
				  strerror(errno));
	memcpy(vm->mem + GUEST_CODE_GPA, guest_code, sizeof(guest_code));
	memcpy(vm->mem + GUEST_CODE_GPA + GUEST_N_OFFSET, &n, sizeof(n));
	region.userspace_addr = (uintptr_t)vm->mem;
	if (ioctl(vm->vm_fd, KVM_SET_USER_MEMORY_REGION, &region) < 0)
		return guest_fail(st, -errno, "KVM_SET_USER_MEMORY_REGION: %s",
				  strerror(errno));

	vm->vcpu_fd = ioctl(vm->vm_fd, KVM_CREATE_VCPU, 0);
	if (vm->vcpu_fd < 0)
		return guest_fail(st, -errno, "KVM_CREATE_VCPU: %s",
				  strerror(errno));
	size = ioctl(vm->kvm_fd, KVM_GET_VCPU_MMAP_SIZE, 0);
	if (size < (int)sizeof(struct kvm_run))
		return guest_fail(st, size < 0 ? -errno : -EINVAL,
				  "KVM_GET_VCPU_MMAP_SIZE returned %d", size);
	vm->run_size = (size_t)size;
	vm->run = mmap(NULL, vm->run_size, PROT_READ | PROT_WRITE,
		       MAP_SHARED, vm->vcpu_fd, 0);
	if (vm->run == MAP_FAILED)
		return guest_fail(st, -errno, "mmap kvm_run: %s",
				  strerror(errno));

	/* Reset state is real mode at F000:FFF0; point CS:IP at our code. */
	if (ioctl(vm->vcpu_fd, KVM_GET_SREGS, &sregs) < 0)
		return guest_fail(st, -errno, "KVM_GET_SREGS: %s",
				  strerror(errno));
	sregs.cs.base = 0;
	sregs.cs.selector = 0;
	if (ioctl(vm->vcpu_fd, KVM_SET_SREGS, &sregs) < 0)
		return guest_fail(st, -errno, "KVM_SET_SREGS: %s",
				  strerror(errno));
	memset(&regs, 0, sizeof(regs));
	regs.rip = GUEST_CODE_GPA;
	regs.rflags = 0x2;	/* bit 1 is reserved and must be set */
	if (ioctl(vm->vcpu_fd, KVM_SET_REGS, &regs) < 0)
		return guest_fail(st, -errno, "KVM_SET_REGS: %s",
				  strerror(errno));
	return 0;
}

/* Checks one KVM_EXIT_IO against what guest_code must produce next. */
static int tiny_vm_check_io(struct tiny_vm *vm, uint32_t expect,
			    struct vmlat_guest_stats *st)
{
	const struct kvm_run *run = vm->run;
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
static int tiny_vm_run(struct tiny_vm *vm, uint32_t n,
		       struct vmlat_guest_progress *pr, uint64_t deadline_ms,
		       struct vmlat_guest_stats *st)
{
	const struct kvm_run *run = vm->run;
	uint32_t expect = n;
	char buf[80];
	int ret;

	for (;;) {
		if (pr && (__atomic_load_n(&pr->stop, __ATOMIC_ACQUIRE) ||
			   vmlat_now_ms() >= deadline_ms))
			return 0;
		if (ioctl(vm->vcpu_fd, KVM_RUN, 0) < 0) {
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
	struct tiny_vm vm;
	int ret;

	memset(st, 0, sizeof(*st));
	if (!nr_io)
		return guest_fail(st, -EINVAL, "nr_io must be at least 1");
	ret = tiny_vm_create(&vm, nr_io, st);
	if (!ret)
		ret = tiny_vm_run(&vm, nr_io, NULL, 0, st);
	tiny_vm_destroy(&vm);
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
	struct tiny_vm vm;
	int ret;

	memset(st, 0, sizeof(*st));
	ret = tiny_vm_create(&vm, UINT32_MAX, st);
	if (!ret)
		ret = tiny_vm_run(&vm, UINT32_MAX, pr, deadline_ms, st);
	tiny_vm_destroy(&vm);
	return ret;
}

/* ---- tiny KVM guest with caller-supplied code ---------------------------- */

/*
 * The same VM as the tiny guest above (64 KiB of RAM, one vCPU in real mode,
 * CS base 0, no in-kernel irqchip, so HLT exits to userspace as
 * KVM_EXIT_HLT), running the caller's 16-bit code instead of guest_code.
 * Used by scenario.c for halting and mixed-exit guests.
 */
struct vmlat_vm {
	struct tiny_vm t;
};

_Static_assert(VMLAT_VM_CODE_GPA == GUEST_CODE_GPA,
	       "vmlat_vm_create() loads code where the tiny guest's is");

/**
 * vmlat_vm_create() - create a one-vCPU VM that runs @code
 * @vmp:  receives the VM; free it with vmlat_vm_destroy()
 * @code: 16-bit real-mode code, loaded at VMLAT_VM_CODE_GPA where the vCPU
 *        starts (RIP = VMLAT_VM_CODE_GPA, other general registers 0)
 * @len:  size of @code in bytes
 * @st:   on failure @st->error says why
 *
 * Context: creates the VM and its vCPU from the calling thread; call
 * KVM_RUN from one thread only (the "vCPU thread").
 * Return: 0, -EINVAL if @code does not fit, or the negative errno of a
 * failed allocation or KVM call.
 */
int vmlat_vm_create(struct vmlat_vm **vmp, const void *code, size_t len,
		    struct vmlat_guest_stats *st)
{
	struct vmlat_vm *vm;
	int ret;

	*vmp = NULL;
	memset(st, 0, sizeof(*st));
	if (!len || len > GUEST_MEM_SIZE - GUEST_CODE_GPA)
		return guest_fail(st, -EINVAL, "guest code of %zu bytes does not fit",
				  len);
	vm = calloc(1, sizeof(*vm));
	if (!vm)
		return guest_fail(st, -ENOMEM, "out of memory");
	ret = tiny_vm_create(&vm->t, 0, st);
	if (ret) {
		tiny_vm_destroy(&vm->t);
		free(vm);
		return ret;
	}
	/* Replace guest_code; the memory is the VM's RAM, not a copy. */
	memset(vm->t.mem + GUEST_CODE_GPA, 0, sizeof(guest_code));
	memcpy(vm->t.mem + GUEST_CODE_GPA, code, len);
	*vmp = vm;
	return 0;
}

/**
 * vmlat_vm_vcpu_fd() - the vCPU file descriptor of a VM
 * @vm: VM from vmlat_vm_create()
 *
 * Return: the fd for KVM_RUN, KVM_GET_REGS, KVM_SET_REGS...
 */
int vmlat_vm_vcpu_fd(const struct vmlat_vm *vm)
{
	return vm->t.vcpu_fd;
}

/**
 * vmlat_vm_kvm_run() - the vCPU's shared struct kvm_run
 * @vm: VM from vmlat_vm_create()
 *
 * Return: the mapped struct kvm_run (exit_reason and exit data after KVM_RUN).
 */
struct kvm_run *vmlat_vm_kvm_run(const struct vmlat_vm *vm)
{
	return vm->t.run;
}

/**
 * vmlat_vm_destroy() - close a VM made by vmlat_vm_create()
 * @vm: the VM, or NULL
 */
void vmlat_vm_destroy(struct vmlat_vm *vm)
{
	if (!vm)
		return;
	tiny_vm_destroy(&vm->t);
	free(vm);
}
