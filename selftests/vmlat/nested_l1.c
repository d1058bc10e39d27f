// SPDX-License-Identifier: GPL-2.0
/*
 * nested_l1: a guest that is a minimal L1 hypervisor, for vmlat's nested
 * (L2) tests. Built on the upstream KVM selftests' library, as their
 * svm_vmcall_test is.
 *
 *   nested_l1 [VMMCALL IO CPUID HLT]      (default 400 400 400 200)
 *
 * L1 enables SVM and VMRUNs an L2 that executes, in this order, VMMCALL
 * VMMCALL times, an OUT to port 0x80 IO times, CPUID CPUID times and HLT
 * HLT times, then a last VMMCALL. L1 intercepts VMMCALL and HLT (the host
 * reflects those to L1, which skips the instruction and resumes L2); it
 * does not intercept I/O or CPUID, which the host handles itself (I/O in
 * this program's KVM_RUN loop, CPUID in KVM).
 *
 * Prints, as one line: its pid, the reflected exits L1 saw, the L2 I/O
 * exits this loop saw, and what L2 was asked to do.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "test_util.h"
#include "kvm_util.h"
#include "processor.h"
#include "svm_util.h"

#define L2_PORT		0x80
#define L2_STACK_SIZE	256

static int n_vmmcall = 400, n_io = 400, n_cpuid = 400, n_hlt = 200;
static volatile int l2_done;
/* What L1 saw: the exits reflected to it. */
static int l1_vmmcalls, l1_hlts;

static void l2_guest_code(void)
{
	uint32_t eax, ebx, ecx, edx;
	int i;

	for (i = 0; i < n_vmmcall; i++)
		__asm__ __volatile__("vmmcall" ::: "memory");
	for (i = 0; i < n_io; i++)
		__asm__ __volatile__("outb %%al, %%dx"
				     :: "a"(0), "d"(L2_PORT) : "memory");
	for (i = 0; i < n_cpuid; i++)
		cpuid(0, &eax, &ebx, &ecx, &edx);
	for (i = 0; i < n_hlt; i++)
		__asm__ __volatile__("hlt" ::: "memory");
	l2_done = 1;
	__asm__ __volatile__("vmmcall" ::: "memory");
}

static void l1_guest_code(struct svm_test_data *svm)
{
	unsigned long l2_stack[L2_STACK_SIZE];
	struct vmcb *vmcb = svm->vmcb;

	generic_svm_setup(svm, l2_guest_code, &l2_stack[L2_STACK_SIZE]);
	vmcb->control.intercept |= 1ULL << INTERCEPT_HLT;

	for (;;) {
		run_guest(vmcb, svm->vmcb_gpa);
		switch (vmcb->control.exit_code) {
		case SVM_EXIT_VMMCALL:
			l1_vmmcalls++;
			vmcb->save.rip += 3;
			if (l2_done)
				GUEST_DONE();
			break;
		case SVM_EXIT_HLT:
			l1_hlts++;
			vmcb->save.rip += 1;
			break;
		default:
			GUEST_ASSERT_1(0, vmcb->control.exit_code);
		}
	}
}

int main(int argc, char *argv[])
{
	struct kvm_vcpu *vcpu;
	vm_vaddr_t svm_gva;
	struct kvm_vm *vm;
	struct ucall uc;
	long io_exits = 0;

	if (argc == 5) {
		n_vmmcall = atoi(argv[1]);
		n_io = atoi(argv[2]);
		n_cpuid = atoi(argv[3]);
		n_hlt = atoi(argv[4]);
	} else if (argc != 1) {
		fprintf(stderr, "usage: %s [VMMCALL IO CPUID HLT]\n", argv[0]);
		return 2;
	}
	TEST_REQUIRE(kvm_cpu_has(X86_FEATURE_SVM));

	vm = vm_create_with_one_vcpu(&vcpu, l1_guest_code);
	vcpu_alloc_svm(vm, &svm_gva);
	vcpu_args_set(vcpu, 1, svm_gva);
	sync_global_to_guest(vm, n_vmmcall);
	sync_global_to_guest(vm, n_io);
	sync_global_to_guest(vm, n_cpuid);
	sync_global_to_guest(vm, n_hlt);

	for (;;) {
		struct kvm_run *run = vcpu->run;

		vcpu_run(vcpu);
		TEST_ASSERT(run->exit_reason == KVM_EXIT_IO,
			    "unexpected exit reason %u (%s)", run->exit_reason,
			    exit_reason_str(run->exit_reason));
		if (run->io.port == L2_PORT &&
		    run->io.direction == KVM_EXIT_IO_OUT) {
			io_exits++;
			continue;
		}
		switch (get_ucall(vcpu, &uc)) {
		case UCALL_ABORT:
			REPORT_GUEST_ASSERT_1(uc, "unexpected L2 exit 0x%lx");
			/* not reached */
		case UCALL_DONE:
			goto done;
		default:
			TEST_FAIL("unknown ucall %lu", uc.cmd);
		}
	}
done:
	sync_global_from_guest(vm, l1_vmmcalls);
	sync_global_from_guest(vm, l1_hlts);
	printf("nested_l1 pid=%d l1_vmmcall=%d l1_hlt=%d l0_io=%ld vmmcall=%d io=%d cpuid=%d hlt=%d\n",
	       getpid(), l1_vmmcalls, l1_hlts, io_exits, n_vmmcall, n_io,
	       n_cpuid, n_hlt);
	kvm_vm_free(vm);
	return 0;
}
