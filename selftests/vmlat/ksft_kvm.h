/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A tiny KVM guest that performs an exact, known number of port-I/O exits,
 * and the same kind of VM running a guest function of the caller's, both
 * on the upstream KVM selftests' library (libkvm; link with its objects).
 *
 * All functions that can fail return 0 or a negative errno.
 */
#ifndef VMLAT_KSFT_KVM_H
#define VMLAT_KSFT_KVM_H

#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>

/* The guest writes its loop counter (N, N-1, ..., 1) to this port. */
#define VMLAT_GUEST_PORT	0x10

/**
 * struct vmlat_guest_stats - what userspace saw of one tiny guest run
 * @io_exits:  KVM_EXIT_IO exits, each checked against the expected value
 * @hlt_exits: KVM_EXIT_HLT exits (1 after a complete bounded run)
 * @error:     why the run failed, empty on success
 */
struct vmlat_guest_stats {
	uint64_t io_exits;
	uint64_t hlt_exits;
	char error[160];
};

/**
 * struct vmlat_guest_progress - run control shared with another process
 * @io_exits: I/O exits so far, published after every exit
 * @stop:     set non-zero to make the guest loop return
 *
 * Put it in MAP_SHARED memory and access it with __atomic builtins.
 */
struct vmlat_guest_progress {
	uint64_t io_exits;
	uint32_t stop;
};

struct ksft_vm;

int vmlat_guest_run_exits(uint32_t nr_io, struct vmlat_guest_stats *st);
int vmlat_guest_run_kept(struct ksft_vm **vmp, uint32_t nr_io,
			 struct vmlat_guest_stats *st);
int vmlat_guest_run_until(struct vmlat_guest_progress *pr,
			  uint64_t max_ms, struct vmlat_guest_stats *st);

struct kvm_run;
const char *vmlat_run_error(const struct kvm_run *run, char *buf,
			    size_t size);

/* ---- VMs running a guest function of the caller's --------------------- */

struct ksft_vm;

int ksft_vm_create(struct ksft_vm **vmp, void *guest_code, uint64_t arg,
		   struct vmlat_guest_stats *st);
int ksft_vm_create_vcpus(struct ksft_vm **vmp, unsigned int nr_vcpus,
			 void *guest_code, uint64_t arg,
			 struct vmlat_guest_stats *st);
int ksft_vm_vcpu_fd(const struct ksft_vm *vm);
struct kvm_run *ksft_vm_kvm_run(const struct ksft_vm *vm);
int ksft_vm_user_page(struct ksft_vm *vm, uint64_t gva);
int ksft_vm_vcpu_fd_n(const struct ksft_vm *vm, unsigned int i);
struct kvm_run *ksft_vm_kvm_run_n(const struct ksft_vm *vm, unsigned int i);
void ksft_vm_destroy(struct ksft_vm *vm);

/* ---- a guest switching among page-table roots (vmlat_guest_run_cr3) ---- */

#define VMLAT_CR3_MAX	8
#define VMLAT_CR3_VCPUS_MAX	4
#define VMLAT_CR3_PORT	0x11
/*
 * Loops in root 0 per round; k + 1 times in root k. A visit's worth of root
 * 0's spin, summed over the visits, is what tells a root's guest time from
 * its neighbour's (gta_test: 5 times the 20000 it was, so that it stands
 * well above the tolerance of its check against ftrace on the debug
 * kernel, where each visit's exit costs milliseconds).
 */
#define VMLAT_CR3_SPIN	100000

/**
 * struct vmlat_cr3_stats - what userspace saw of a vmlat_guest_run_cr3() run
 * @n:          how many roots
 * @pgd:        libkvm's own root, which the guest starts in
 * @roots:      the roots' guest-physical addresses
 * @nr_vcpus:   how many vCPUs ran it
 * @exits:      OUT exits in each root, all vCPUs'
 * @vcpu_exits: OUT exits in each root, per vCPU
 * @mismatches: exits whose CR3 (KVM_GET_SREGS) was not their root
 * @written_rip: the guest's RIP right after its CR3 write
 * @out_rip:    its OUT's: an exit at a RIP from @written_rip to @out_rip
 *              is in the root last written, anywhere else in the one before
 * @error:      why the run failed, empty on success
 */
struct vmlat_cr3_stats {
	unsigned int n;
	unsigned int nr_vcpus;
	uint64_t pgd;
	uint64_t written_rip;
	uint64_t out_rip;
	uint64_t roots[VMLAT_CR3_MAX];
	uint64_t exits[VMLAT_CR3_MAX];
	uint64_t vcpu_exits[VMLAT_CR3_VCPUS_MAX][VMLAT_CR3_MAX];
	uint64_t mismatches;
	char error[160];
};

int vmlat_guest_run_cr3(unsigned int n, unsigned int nr_vcpus, uint64_t ms,
			struct vmlat_cr3_stats *st);

/*
 * Is the host CPU an Intel (VMX) one? Its guests' hypercall is VMCALL, an
 * AMD's VMMCALL: KVM turns the other one into a #UD exit and patches it.
 */
bool vmlat_host_is_intel(void);

#endif /* VMLAT_KSFT_KVM_H */
