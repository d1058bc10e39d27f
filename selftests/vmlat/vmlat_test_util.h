/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the vmlat selftests.
 *
 * Four groups, each usable on its own:
 *  - kernel modules: load a .ko by path (finit_module(2)), unload by name
 *    (delete_module(2)), modprobe by exec;
 *  - the vmlat debugfs status file, parsed into one record per hook;
 *  - an ftrace oracle in a private tracefs instance, so the events vmlat
 *    counts can be counted independently in the same run;
 *  - a tiny KVM guest built on the raw /dev/kvm API that performs an exact,
 *    known number of port-I/O exits.
 *
 * All functions that can fail return 0 or a negative errno.
 */
#ifndef VMLAT_TEST_UTIL_H
#define VMLAT_TEST_UTIL_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- kernel modules ---------------------------------------------------- */

int vmlat_module_load(const char *path, const char *params);
int vmlat_module_unload(const char *name);
bool vmlat_module_loaded(const char *name);
bool vmlat_module_builtin(const char *name);
int vmlat_module_param_read(const char *name, const char *param,
			    char *buf, size_t len);
int vmlat_modprobe(const char *name, const char *params);
const char *vmlat_kvm_vendor_module(void);

/* ---- vmlat status file ------------------------------------------------- */

#define VMLAT_DEBUGFS_DIR	"/sys/kernel/debug/vmlat"
#define VMLAT_STATUS_PATH	VMLAT_DEBUGFS_DIR "/status"
#define VMLAT_NR_HOOKS		13
/* Hooks on tracepoints that live in kvm.ko (the rest are built in). */
#define VMLAT_NR_KVM_HOOKS	7

/**
 * struct vmlat_hook_status - one line of /sys/kernel/debug/vmlat/status
 * @hook:     "system:name" of the tracepoint
 * @attached: state column is "attached" (false: "detached")
 * @hits:     probe calls since vmlat was loaded
 * @detail:   prototype "(...)" when attached, reason when detached
 */
struct vmlat_hook_status {
	char hook[64];
	bool attached;
	uint64_t hits;
	char detail[256];
};

/* Every hook the contract requires, kvm.ko ones first. */
extern const char *const vmlat_hook_names[VMLAT_NR_HOOKS];

int vmlat_status_read(struct vmlat_hook_status *hooks, int max, int *nr);
const struct vmlat_hook_status *
vmlat_status_find(const struct vmlat_hook_status *hooks, int nr,
		  const char *hook);
bool vmlat_hook_is_kvm(const char *hook);
int vmlat_prototype_nr_params(const char *detail);

/* ---- ftrace oracle ----------------------------------------------------- */

#define VMLAT_FTRACE_MAX_EVENTS	8

/**
 * struct vmlat_ftrace - a private tracefs instance
 * @dir:       instance directory (empty when not created)
 * @nr_events: number of entries used in @events
 * @events:    enabled events as "system:name"
 */
struct vmlat_ftrace {
	char dir[256];
	int nr_events;
	char events[VMLAT_FTRACE_MAX_EVENTS][64];
};

const char *vmlat_tracefs_root(void);
int vmlat_tracefs_event_has_field(const char *event, const char *field);
int vmlat_ftrace_open(struct vmlat_ftrace *ft, unsigned int buffer_size_kb);
int vmlat_ftrace_enable(struct vmlat_ftrace *ft, const char *event);
int vmlat_ftrace_start(struct vmlat_ftrace *ft);
int vmlat_ftrace_stop(struct vmlat_ftrace *ft);
int vmlat_ftrace_lost(struct vmlat_ftrace *ft, uint64_t *lost,
		      uint64_t *entries);
int vmlat_ftrace_count(struct vmlat_ftrace *ft, uint64_t *counts,
		       uint64_t *total);
void vmlat_ftrace_close(struct vmlat_ftrace *ft);

/* ---- tiny KVM guest ---------------------------------------------------- */

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

int vmlat_guest_run_exits(uint32_t nr_io, struct vmlat_guest_stats *st);
int vmlat_guest_run_until(struct vmlat_guest_progress *pr,
			  uint64_t max_ms, struct vmlat_guest_stats *st);

/* ---- misc -------------------------------------------------------------- */

uint64_t vmlat_now_ms(void);

struct kvm_run;
const char *vmlat_run_error(const struct kvm_run *run, char *buf,
			    size_t size);
bool vmlat_path_exists(const char *path);
bool vmlat_debugfs_mounted(void);

/* ---- tiny KVM guest with caller-supplied code ------------------------- */

/* Guest-physical address where vmlat_vm_create() loads the code. */
#define VMLAT_VM_CODE_GPA	0x1000

struct kvm_run;
struct vmlat_vm;

int vmlat_vm_create(struct vmlat_vm **vmp, const void *code, size_t len,
		    struct vmlat_guest_stats *st);
int vmlat_vm_vcpu_fd(const struct vmlat_vm *vm);
struct kvm_run *vmlat_vm_kvm_run(const struct vmlat_vm *vm);
void vmlat_vm_destroy(struct vmlat_vm *vm);

#endif /* VMLAT_TEST_UTIL_H */
