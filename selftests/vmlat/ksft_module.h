/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Kernel modules for the vmlat selftests: load a .ko by path
 * (finit_module(2)), unload by name (delete_module(2)), modprobe by exec,
 * read module parameters, name the KVM vendor module of this host.
 *
 * All functions that can fail return 0 or a negative errno.
 */
#ifndef VMLAT_KSFT_MODULE_H
#define VMLAT_KSFT_MODULE_H

#include <stdbool.h>
#include <stddef.h>

int vmlat_module_load(const char *path, const char *params);
int vmlat_module_unload(const char *name);
bool vmlat_module_loaded(const char *name);
bool vmlat_module_builtin(const char *name);
int vmlat_module_param_read(const char *name, const char *param,
			    char *buf, size_t len);
int vmlat_modprobe(const char *name, const char *params);
const char *vmlat_kvm_vendor_module(void);

#endif /* VMLAT_KSFT_MODULE_H */
