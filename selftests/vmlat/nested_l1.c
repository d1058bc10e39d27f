// SPDX-License-Identifier: GPL-2.0
/*
 * nested_l1: a guest that is a minimal L1 hypervisor, for vmlat's nested
 * (L2) tests. Built on the upstream KVM selftests' library, as their
 * svm_vmcall_test and vmx_*_test are: SVM on AMD, VMX on Intel.
 *
 *   nested_l1 [HYPERCALL IO CPUID HLT]      (default 400 400 400 200)
 *
 * L1 enables SVM (VMX) and runs an L2 that executes, in this order, its
 * ISA's hypercall instruction (VMMCALL, VMCALL) HYPERCALL times, an OUT to
 * port 0x80 IO times, CPUID CPUID times and HLT HLT times, then a last
 * hypercall. L1 intercepts the hypercall and HLT (the host reflects those
 * to L1, which skips the instruction and resumes L2); it does not
 * intercept I/O, which the host handles itself (in this program's KVM_RUN
 * loop). CPUID: SVM L1 does not intercept it (KVM handles it); on VMX every
 * CPUID exits, so it is reflected to L1 too, which skips it.
 *
 * Prints, as one line: its pid, the ISA, the reflected exits L1 saw, the
 * L2 I/O exits this loop saw, and what L2 was asked to do.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "test_util.h"
#include "kvm_util.h"
#include "processor.h"
#include "svm_util.h"
#include "vmx.h"

#define L2_PORT		0x80
#define L2_STACK_SIZE	256
#define RFLAGS_IF	(1UL << 9)	/* interrupt enable */

static int n_hypercall = 400, n_io = 400, n_cpuid = 400, n_hlt = 200;
static bool on_vmx;
static volatile int l2_done;
/* What L1 saw: the exits reflected to it. */
static int l1_hypercalls, l1_hlts, l1_cpuids;

/*
 * An instruction of L2 that exits. On VMX, L2's general registers are not
 * kept across an exit reflected to L1 (libkvm's vmresume() resumes L2 with
 * L1's registers; only RSP, RIP and RFLAGS are in the VMCS): every such
 * instruction clobbers them all, so that L2's compiled code keeps nothing
 * in a register across it.
 */
#define L2_EXIT(insns)							\
	__asm__ __volatile__(insns					\
			     : : : "rax", "rbx", "rcx", "rdx", "rsi", "rdi", \
			       "rbp", "r8", "r9", "r10", "r11", "r12",	\
			       "r13", "r14", "r15", "memory", "cc")

static void l2_hypercall(void)
{
	if (on_vmx)
		L2_EXIT("xor %%eax, %%eax; vmcall");
	else
		L2_EXIT("xor %%eax, %%eax; vmmcall");
}

static void l2_guest_code(void)
{
	int i;

	for (i = 0; i < n_hypercall; i++)
		l2_hypercall();
	for (i = 0; i < n_io; i++)
		L2_EXIT("xor %%eax, %%eax; mov $" __stringify(L2_PORT) ", %%edx; outb %%al, %%dx");
	for (i = 0; i < n_cpuid; i++)
		L2_EXIT("xor %%eax, %%eax; xor %%ecx, %%ecx; cpuid");
	for (i = 0; i < n_hlt; i++)
		L2_EXIT("hlt");
	l2_done = 1;
	l2_hypercall();
}

static void l1_svm_code(struct svm_test_data *svm)
{
	unsigned long l2_stack[L2_STACK_SIZE];
	struct vmcb *vmcb = svm->vmcb;

	generic_svm_setup(svm, l2_guest_code, &l2_stack[L2_STACK_SIZE]);
	vmcb->control.intercept |= 1ULL << INTERCEPT_HLT;

	for (;;) {
		run_guest(vmcb, svm->vmcb_gpa);
		switch (vmcb->control.exit_code) {
		case SVM_EXIT_VMMCALL:
			l1_hypercalls++;
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

static void l1_vmx_code(struct vmx_pages *vmx)
{
	unsigned long l2_stack[L2_STACK_SIZE];
	uint64_t reason;

	GUEST_ASSERT(prepare_for_vmx_operation(vmx));
	GUEST_ASSERT(load_vmcs(vmx));
	prepare_vmcs(vmx, l2_guest_code, &l2_stack[L2_STACK_SIZE]);
	GUEST_ASSERT(!vmwrite(CPU_BASED_VM_EXEC_CONTROL,
			      vmreadz(CPU_BASED_VM_EXEC_CONTROL) |
			      CPU_BASED_HLT_EXITING));
	/*
	 * L2 runs with interrupts on (it gets none: L1 injects nothing):
	 * bochs does not leave a guest with IF=0 for an external interrupt.
	 */
	GUEST_ASSERT(!vmwrite(GUEST_RFLAGS, vmreadz(GUEST_RFLAGS) | RFLAGS_IF));
	GUEST_ASSERT(!vmlaunch());

	for (;;) {
		reason = vmreadz(VM_EXIT_REASON);
		switch (reason) {
		case EXIT_REASON_VMCALL:
			l1_hypercalls++;
			if (l2_done)
				GUEST_DONE();
			break;
		case EXIT_REASON_HLT:
			l1_hlts++;
			break;
		case EXIT_REASON_CPUID:
			l1_cpuids++;
			break;
		default:
			GUEST_ASSERT_1(0, reason);
		}
		GUEST_ASSERT(!vmwrite(GUEST_RIP, vmreadz(GUEST_RIP) +
				      vmreadz(VM_EXIT_INSTRUCTION_LEN)));
		GUEST_ASSERT(!vmresume());
	}
}

int main(int argc, char *argv[])
{
	struct kvm_vcpu *vcpu;
	vm_vaddr_t l1_gva;
	struct kvm_regs regs;
	struct kvm_vm *vm;
	struct ucall uc;
	long io_exits = 0;

	if (argc == 5) {
		n_hypercall = atoi(argv[1]);
		n_io = atoi(argv[2]);
		n_cpuid = atoi(argv[3]);
		n_hlt = atoi(argv[4]);
	} else if (argc != 1) {
		fprintf(stderr, "usage: %s [HYPERCALL IO CPUID HLT]\n", argv[0]);
		return 2;
	}
	on_vmx = kvm_cpu_has(X86_FEATURE_VMX);
	TEST_REQUIRE(on_vmx || kvm_cpu_has(X86_FEATURE_SVM));

	if (on_vmx) {
		vm = vm_create_with_one_vcpu(&vcpu, l1_vmx_code);
		vcpu_alloc_vmx(vm, &l1_gva);
	} else {
		vm = vm_create_with_one_vcpu(&vcpu, l1_svm_code);
		vcpu_alloc_svm(vm, &l1_gva);
	}
	vcpu_args_set(vcpu, 1, l1_gva);
	/* L1 too runs with interrupts on, for bochs (see l1_vmx_code()). */
	vcpu_regs_get(vcpu, &regs);
	regs.rflags |= RFLAGS_IF;
	vcpu_regs_set(vcpu, &regs);
	sync_global_to_guest(vm, on_vmx);
	sync_global_to_guest(vm, n_hypercall);
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
	sync_global_from_guest(vm, l1_hypercalls);
	sync_global_from_guest(vm, l1_hlts);
	sync_global_from_guest(vm, l1_cpuids);
	printf("nested_l1 pid=%d isa=%s l1_hypercall=%d l1_hlt=%d l1_cpuid=%d l0_io=%ld hypercall=%d io=%d cpuid=%d hlt=%d\n",
	       getpid(), on_vmx ? "vmx" : "svm", l1_hypercalls, l1_hlts,
	       l1_cpuids, io_exits, n_hypercall, n_io, n_cpuid, n_hlt);
	kvm_vm_free(vm);
	return 0;
}
