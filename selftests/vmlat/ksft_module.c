// SPDX-License-Identifier: GPL-2.0
/*
 * Kernel modules for the vmlat selftests: load a .ko by path
 * (finit_module(2)), unload by name (delete_module(2)), modprobe by exec,
 * module parameters and the KVM vendor module of this host.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/module.h>

#include "ksft_module.h"
#include "ksft_util.h"

static bool has_suffix(const char *s, const char *suffix)
{
	size_t ls = strlen(s), lx = strlen(suffix);

	return ls >= lx && !strcmp(s + ls - lx, suffix);
}

/**
 * vmlat_module_load() - load a module from a file, like insmod
 * @path:   module file; .ko.xz/.ko.zst/.ko.gz are handed to the kernel's
 *          in-kernel decompressor
 * @params: module parameters ("a=1 b=2"), or NULL
 *
 * Return: 0, or the negative errno of open(2)/finit_module(2)
 * (-EEXIST: a module of that name is already loaded).
 */
int vmlat_module_load(const char *path, const char *params)
{
	unsigned int flags = 0;
	int fd, ret = 0;

	if (has_suffix(path, ".xz") || has_suffix(path, ".zst") ||
	    has_suffix(path, ".gz"))
		flags |= MODULE_INIT_COMPRESSED_FILE;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (syscall(__NR_finit_module, fd, params ? params : "", flags))
		ret = -errno;
	close(fd);
	return ret;
}

/*
 * How long a module that stays busy is retried: the point past which it is
 * taken as held for good. Every caller expects the unload to succeed, and
 * a retry returns as soon as it does.
 */
#define VMLAT_UNLOAD_WAIT_MS	30000u

/**
 * vmlat_module_unload() - unload a module by name, like rmmod
 * @name: module name (e.g. "vmlat", "kvm_amd")
 *
 * Uses O_NONBLOCK like rmmod. A module whose last user just went away can
 * stay busy for a moment (longer on a loaded test host: the last VM's
 * file is released by its process's exit), so -EAGAIN/-EBUSY are retried
 * every 100 ms, for VMLAT_UNLOAD_WAIT_MS at most.
 *
 * Return: 0, or the negative errno of delete_module(2) (-ENOENT: not loaded,
 * -EAGAIN/-EBUSY: still in use, e.g. an open VM or a depending module).
 */
int vmlat_module_unload(const char *name)
{
	uint64_t deadline_ms = vmlat_now_ms() + VMLAT_UNLOAD_WAIT_MS;
	int err;

	for (;;) {
		if (!syscall(__NR_delete_module, name, O_NONBLOCK))
			return 0;
		err = errno;
		if ((err != EAGAIN && err != EBUSY) ||
		    vmlat_now_ms() > deadline_ms)
			return -err;
		usleep(100 * 1000);
	}
}

/**
 * vmlat_module_loaded() - is a loadable module @name live?
 * @name: module name
 *
 * Return: true if /sys/module/@name/initstate says "live" (built-in code
 * has no initstate and reports false).
 */
bool vmlat_module_loaded(const char *name)
{
	char path[PATH_MAX], state[32];

	snprintf(path, sizeof(path), "/sys/module/%s/initstate", name);
	return !vmlat_read_line(path, state, sizeof(state)) && !strcmp(state, "live");
}

/**
 * vmlat_module_builtin() - is @name built into the kernel?
 * @name: module name
 *
 * Return: true if /sys/module/@name exists without an initstate file
 * (only true for built-in code that has parameters or a version).
 */
bool vmlat_module_builtin(const char *name)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "/sys/module/%s", name);
	if (!vmlat_path_exists(path))
		return false;
	snprintf(path, sizeof(path), "/sys/module/%s/initstate", name);
	return !vmlat_path_exists(path);
}

/**
 * vmlat_module_param_read() - read /sys/module/@name/parameters/@param
 * @name:  module name
 * @param: parameter name
 * @buf:   receives the value without trailing newline
 * @len:   size of @buf
 *
 * Return: 0 or a negative errno.
 */
int vmlat_module_param_read(const char *name, const char *param,
			    char *buf, size_t len)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "/sys/module/%s/parameters/%s",
		 name, param);
	return vmlat_read_line(path, buf, len);
}

/**
 * vmlat_modprobe() - run "modprobe @name @params..."
 * @name:   module name
 * @params: space-separated parameters ("nested=1"), or NULL
 *
 * modprobe resolves dependencies (irqbypass, ccp for kvm_amd) from
 * /lib/modules. Its stdout is sent to stderr so it cannot corrupt TAP.
 *
 * Return: 0; a negative errno if it could not be run; -EIO if modprobe
 * failed (its own message is on stderr).
 */
int vmlat_modprobe(const char *name, const char *params)
{
	char buf[256], *argv[16], *tok, *save = NULL;
	int argc = 0, status;
	pid_t pid;

	argv[argc++] = "modprobe";
	argv[argc++] = (char *)name;
	snprintf(buf, sizeof(buf), "%s", params ? params : "");
	for (tok = strtok_r(buf, " ", &save); tok && argc < 15;
	     tok = strtok_r(NULL, " ", &save))
		argv[argc++] = tok;
	argv[argc] = NULL;

	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		dup2(STDERR_FILENO, STDOUT_FILENO);
		execvp("modprobe", argv);
		_exit(127);
	}
	if (waitpid(pid, &status, 0) < 0)
		return -errno;
	if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
		return -ENOENT;
	return WIFEXITED(status) && !WEXITSTATUS(status) ? 0 : -EIO;
}

/**
 * vmlat_kvm_vendor_module() - name of the KVM vendor module of this host
 *
 * Return: the loaded one of "kvm_amd"/"kvm_intel"; if neither is loaded,
 * the one matching the CPU flags (svm/vmx) in /proc/cpuinfo; else NULL.
 */
const char *vmlat_kvm_vendor_module(void)
{
	const char *vendor = NULL;
	char *line = NULL;
	size_t cap = 0;
	FILE *f;

	if (vmlat_module_loaded("kvm_amd"))
		return "kvm_amd";
	if (vmlat_module_loaded("kvm_intel"))
		return "kvm_intel";
	f = fopen("/proc/cpuinfo", "re");
	if (!f)
		return NULL;
	while (!vendor && getline(&line, &cap, f) > 0) {
		if (strncmp(line, "flags", 5))
			continue;
		if (strstr(line, " svm"))
			vendor = "kvm_amd";
		else if (strstr(line, " vmx"))
			vendor = "kvm_intel";
		else
			break;
	}
	free(line);
	fclose(f);
	return vendor;
}
