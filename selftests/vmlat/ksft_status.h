/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The vmlat debugfs status file, parsed into one record per hook.
 *
 * All functions that can fail return 0 or a negative errno.
 */
#ifndef VMLAT_KSFT_STATUS_H
#define VMLAT_KSFT_STATUS_H

#include <stdbool.h>
#include <stdint.h>

#define VMLAT_DEBUGFS_DIR	"/sys/kernel/debug/vmlat"
#define VMLAT_STATUS_PATH	VMLAT_DEBUGFS_DIR "/status"
#define VMLAT_NR_HOOKS		22
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

bool vmlat_debugfs_mounted(void);
int vmlat_status_read(struct vmlat_hook_status *hooks, int max, int *nr);
const struct vmlat_hook_status *
vmlat_status_find(const struct vmlat_hook_status *hooks, int nr,
		  const char *hook);
bool vmlat_hook_is_kvm(const char *hook);
int vmlat_prototype_nr_params(const char *detail);

#endif /* VMLAT_KSFT_STATUS_H */
