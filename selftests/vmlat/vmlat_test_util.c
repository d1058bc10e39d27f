// SPDX-License-Identifier: GPL-2.0
/*
 * Helpers shared by the vmlat selftests: kernel modules, the vmlat status
 * file, an ftrace oracle in a private tracefs instance, and a tiny KVM guest.
 *
 * The tiny guest follows the KVM selftests' habit of a guest whose every
 * exit is known in advance: it runs 16-bit real-mode code that writes a
 * decreasing counter N, N-1, ..., 1 to an I/O port and then halts. Userspace
 * checks the value of every exit, so a lost or repeated exit is noticed, not
 * just a wrong total.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/kvm.h>
#include <linux/magic.h>
#include <linux/module.h>

#include "vmlat_test_util.h"

#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#endif

/* ---- misc ---------------------------------------------------------------- */

/**
 * vmlat_now_ms() - CLOCK_MONOTONIC in milliseconds
 *
 * Return: milliseconds since an arbitrary fixed point.
 */
uint64_t vmlat_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

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

/**
 * vmlat_path_exists() - does @path exist (any file type)?
 * @path: path to check
 *
 * Return: true if stat(2) succeeds.
 */
bool vmlat_path_exists(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0;
}

/**
 * vmlat_debugfs_mounted() - is debugfs mounted at /sys/kernel/debug?
 *
 * Return: true if /sys/kernel/debug is a debugfs mount.
 */
bool vmlat_debugfs_mounted(void)
{
	struct statfs sfs;

	if (statfs("/sys/kernel/debug", &sfs))
		return false;
	return sfs.f_type == DEBUGFS_MAGIC;
}

static int write_file(const char *path, const char *val)
{
	size_t len = strlen(val);
	ssize_t n;
	int fd, ret = 0;

	fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = write(fd, val, len);
	if (n < 0)
		ret = -errno;
	else if ((size_t)n != len)
		ret = -EIO;
	close(fd);
	return ret;
}

/* Reads the first line of @path without its newline. */
static int read_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "re");
	int ret = 0;

	if (!f)
		return -errno;
	if (!fgets(buf, (int)len, f))
		ret = ferror(f) ? -EIO : -ENODATA;
	else
		buf[strcspn(buf, "\n")] = '\0';
	fclose(f);
	return ret;
}

/* ---- kernel modules ------------------------------------------------------ */

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

/**
 * vmlat_module_unload() - unload a module by name, like rmmod
 * @name: module name (e.g. "vmlat", "kvm_amd")
 *
 * Uses O_NONBLOCK like rmmod. A module whose last user just went away can
 * stay busy for a moment, so -EAGAIN/-EBUSY are retried for about a second.
 *
 * Return: 0, or the negative errno of delete_module(2) (-ENOENT: not loaded,
 * -EAGAIN/-EBUSY: still in use, e.g. an open VM or a depending module).
 */
int vmlat_module_unload(const char *name)
{
	int tries;

	for (tries = 0; ; tries++) {
		if (!syscall(__NR_delete_module, name, O_NONBLOCK))
			return 0;
		if ((errno != EAGAIN && errno != EBUSY) || tries >= 10)
			return -errno;
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
	return !read_line(path, state, sizeof(state)) && !strcmp(state, "live");
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
	return read_line(path, buf, len);
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

/* ---- vmlat status file --------------------------------------------------- */

const char *const vmlat_hook_names[VMLAT_NR_HOOKS] = {
	"kvm:kvm_entry",
	"kvm:kvm_exit",
	"kvm:kvm_userspace_exit",
	"kvm:kvm_hypercall",
	"kvm:kvm_nested_vmenter",
	"kvm:kvm_nested_vmexit_inject",
	"kvmmmu:kvm_mmu_get_page",
	"sched:sched_switch",
	"sched:sched_waking",
	"sched:sched_wakeup",
	"sched:sched_wakeup_new",
	"sched:sched_migrate_task",
	"sched:sched_process_exit",
};

/**
 * vmlat_hook_is_kvm() - is @hook a tracepoint of kvm.ko?
 * @hook: "system:name"
 *
 * Return: true for the kvm: and kvmmmu: systems (they come and go with
 * kvm.ko), false for the built-in sched: ones.
 */
bool vmlat_hook_is_kvm(const char *hook)
{
	return !strncmp(hook, "kvm:", 4) || !strncmp(hook, "kvmmmu:", 7);
}

static void trim_right(char *s)
{
	size_t n = strlen(s);

	while (n && isspace((unsigned char)s[n - 1]))
		s[--n] = '\0';
}

/* Parses "hook state hits detail..." (see the contract). */
static int parse_status_line(char *line, struct vmlat_hook_status *h)
{
	char state[16], hits[24], *end;
	int detail_at = -1;

	memset(h, 0, sizeof(*h));
	if (sscanf(line, "%63s %15s %23s %n", h->hook, state, hits,
		   &detail_at) != 3 || detail_at < 0)
		return -EPROTO;
	if (!strchr(h->hook, ':'))
		return -EPROTO;
	if (!strcmp(state, "attached"))
		h->attached = true;
	else if (strcmp(state, "detached"))
		return -EPROTO;
	if (!isdigit((unsigned char)hits[0]))
		return -EPROTO;
	errno = 0;
	h->hits = strtoull(hits, &end, 10);
	if (errno || *end)
		return -EPROTO;
	snprintf(h->detail, sizeof(h->detail), "%s", line + detail_at);
	trim_right(h->detail);
	return h->detail[0] ? 0 : -EPROTO;
}

/**
 * vmlat_status_read() - parse /sys/kernel/debug/vmlat/status
 * @hooks: receives one record per hook line, in file order
 * @max:   capacity of @hooks
 * @nr:    receives the number of records filled
 *
 * Header lines (starting with '#') and blank lines are skipped.
 *
 * Return: 0; -ENOENT if vmlat is not loaded (or debugfs not mounted);
 * -EPROTO if a line does not follow the contract's format; -E2BIG if there
 * are more than @max hook lines; another negative errno on read errors.
 */
int vmlat_status_read(struct vmlat_hook_status *hooks, int max, int *nr)
{
	char *line = NULL;
	size_t cap = 0;
	int n = 0, ret = 0;
	FILE *f;

	*nr = 0;
	f = fopen(VMLAT_STATUS_PATH, "re");
	if (!f)
		return -errno;
	while (getline(&line, &cap, f) > 0) {
		trim_right(line);
		if (line[0] == '#' || line[0] == '\0')
			continue;
		if (n == max) {
			ret = -E2BIG;
			break;
		}
		ret = parse_status_line(line, &hooks[n]);
		if (ret)
			break;
		n++;
	}
	if (!ret && ferror(f))
		ret = -EIO;
	free(line);
	fclose(f);
	*nr = n;
	return ret;
}

/**
 * vmlat_status_find() - the record of @hook
 * @hooks: records from vmlat_status_read()
 * @nr:    number of records
 * @hook:  "system:name"
 *
 * Return: the record, or NULL if @hook is not listed.
 */
const struct vmlat_hook_status *
vmlat_status_find(const struct vmlat_hook_status *hooks, int nr,
		  const char *hook)
{
	int i;

	for (i = 0; i < nr; i++)
		if (!strcmp(hooks[i].hook, hook))
			return &hooks[i];
	return NULL;
}

/**
 * vmlat_prototype_nr_params() - number of parameters in a "(a, b, c)" detail
 * @detail: detail column of an attached hook
 *
 * Commas inside nested parentheses (function pointers) do not count.
 *
 * Return: number of parameters ("()" and "(void)" have 0), or -1 if
 * @detail is not a parenthesised list.
 */
int vmlat_prototype_nr_params(const char *detail)
{
	size_t len = strlen(detail);
	int depth = 0, nr = 1;
	const char *p;

	if (len < 2 || detail[0] != '(' || detail[len - 1] != ')')
		return -1;
	if (!strcmp(detail, "()") || !strcmp(detail, "(void)"))
		return 0;
	for (p = detail + 1; p < detail + len - 1; p++) {
		if (*p == '(')
			depth++;
		else if (*p == ')')
			depth--;
		else if (*p == ',' && depth == 0)
			nr++;
		if (depth < 0)
			return -1;
	}
	return depth ? -1 : nr;
}

/* ---- ftrace oracle ------------------------------------------------------- */

/**
 * vmlat_tracefs_root() - where tracefs is mounted
 *
 * Return: "/sys/kernel/tracing" or "/sys/kernel/debug/tracing" (the first
 * that has an instances directory), or NULL.
 */
const char *vmlat_tracefs_root(void)
{
	if (vmlat_path_exists("/sys/kernel/tracing/instances"))
		return "/sys/kernel/tracing";
	if (vmlat_path_exists("/sys/kernel/debug/tracing/instances"))
		return "/sys/kernel/debug/tracing";
	return NULL;
}

static int split_event(const char *event, char *sys, char *name, size_t len)
{
	const char *colon = strchr(event, ':');

	if (!colon || (size_t)(colon - event) >= len || strlen(colon) > len)
		return -EINVAL;
	snprintf(sys, len, "%.*s", (int)(colon - event), event);
	snprintf(name, len, "%s", colon + 1);
	return 0;
}

/**
 * vmlat_tracefs_event_has_field() - does a trace event record @field?
 * @event: "system:name"
 * @field: field name as in the event's format file ("immediate_exit")
 *
 * Reads the top-level events/<system>/<name>/format.
 *
 * Return: 1 if a "field:<type> @field;" (or "@field[...]") line exists,
 * 0 if not, negative errno if the format file cannot be read.
 */
int vmlat_tracefs_event_has_field(const char *event, const char *field)
{
	char sys[64], name[64], path[PATH_MAX], *line = NULL;
	const char *root = vmlat_tracefs_root();
	size_t cap = 0, flen = strlen(field);
	int found = 0;
	FILE *f;

	if (!root)
		return -ENOENT;
	if (split_event(event, sys, name, sizeof(sys)))
		return -EINVAL;
	snprintf(path, sizeof(path), "%s/events/%s/%s/format",
		 root, sys, name);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (!found && getline(&line, &cap, f) > 0) {
		char *decl = strstr(line, "field:"), *end, *id;

		if (!decl)
			continue;
		decl += strlen("field:");
		end = strchr(decl, ';');
		if (!end)
			continue;
		*end = '\0';
		/* "unsigned long rip", "char comm[16]": name is the last word */
		end = strchr(decl, '[');
		if (end)
			*end = '\0';
		trim_right(decl);
		id = strrchr(decl, ' ');
		id = id ? id + 1 : decl;
		found = strlen(id) == flen && !strcmp(id, field);
	}
	free(line);
	fclose(f);
	return found;
}

static int ftrace_write(struct vmlat_ftrace *ft, const char *file,
			const char *val)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", ft->dir, file);
	return write_file(path, val);
}

/**
 * vmlat_ftrace_open() - create a private tracing instance
 * @ft:             instance to initialise
 * @buffer_size_kb: per-CPU ring buffer size; choose it so the test's
 *                  events fit, vmlat_ftrace_lost() tells if they did not
 *
 * Creates instances/vmlat_test_<pid> with tracing off, so the top-level
 * buffer and other users' instances are untouched.
 *
 * Return: 0 or a negative errno (-ENOENT: no tracefs).
 */
int vmlat_ftrace_open(struct vmlat_ftrace *ft, unsigned int buffer_size_kb)
{
	const char *root = vmlat_tracefs_root();
	char val[32];
	int ret;

	memset(ft, 0, sizeof(*ft));
	if (!root)
		return -ENOENT;
	snprintf(ft->dir, sizeof(ft->dir), "%s/instances/vmlat_test_%d",
		 root, (int)getpid());
	rmdir(ft->dir);	/* left over by a killed run with the same pid */
	if (mkdir(ft->dir, 0755)) {
		ret = -errno;
		ft->dir[0] = '\0';
		return ret;
	}
	snprintf(val, sizeof(val), "%u", buffer_size_kb);
	ret = ftrace_write(ft, "tracing_on", "0");
	if (!ret)
		ret = ftrace_write(ft, "buffer_size_kb", val);
	if (ret)
		vmlat_ftrace_close(ft);
	return ret;
}

/**
 * vmlat_ftrace_enable() - enable one event in the instance
 * @ft:    instance from vmlat_ftrace_open()
 * @event: "system:name"
 *
 * The event's index for vmlat_ftrace_count() is the order of enabling.
 *
 * Return: 0 or a negative errno (-ENOENT: no such event, e.g. kvm not
 * loaded; -ENOSPC: too many events).
 */
int vmlat_ftrace_enable(struct vmlat_ftrace *ft, const char *event)
{
	char sys[64], name[64], file[192];
	int ret;

	if (ft->nr_events == VMLAT_FTRACE_MAX_EVENTS)
		return -ENOSPC;
	if (split_event(event, sys, name, sizeof(sys)))
		return -EINVAL;
	snprintf(file, sizeof(file), "events/%s/%s/enable", sys, name);
	ret = ftrace_write(ft, file, "1");
	if (ret)
		return ret;
	snprintf(ft->events[ft->nr_events++], sizeof(ft->events[0]), "%s",
		 event);
	return 0;
}

/**
 * vmlat_ftrace_start() - empty the instance's buffer and start recording
 * @ft: instance
 *
 * Return: 0 or a negative errno.
 */
int vmlat_ftrace_start(struct vmlat_ftrace *ft)
{
	/* Opening "trace" with O_TRUNC clears the buffer and its counters. */
	int ret = ftrace_write(ft, "trace", "");

	return ret ? ret : ftrace_write(ft, "tracing_on", "1");
}

/**
 * vmlat_ftrace_stop() - stop recording (the events stay enabled)
 * @ft: instance
 *
 * Return: 0 or a negative errno.
 */
int vmlat_ftrace_stop(struct vmlat_ftrace *ft)
{
	return ftrace_write(ft, "tracing_on", "0");
}

/**
 * vmlat_ftrace_lost() - events the instance failed to keep
 * @ft:      instance
 * @lost:    receives the sum over CPUs of "overrun", "commit overrun" and
 *           "dropped events" of per_cpu/cpu*\/stats
 * @entries: receives the sum of "entries" (events now in the buffer), or NULL
 *
 * The oracle is only complete if *@lost is 0.
 *
 * Return: 0 or a negative errno.
 */
int vmlat_ftrace_lost(struct vmlat_ftrace *ft, uint64_t *lost,
		      uint64_t *entries)
{
	static const char *const lost_keys[] = {
		"overrun:", "commit overrun:", "dropped events:",
	};
	char path[PATH_MAX], *line = NULL;
	struct dirent *de;
	size_t cap = 0, i;
	int ret = 0, nr_cpus = 0;
	DIR *dir;

	*lost = 0;
	if (entries)
		*entries = 0;
	snprintf(path, sizeof(path), "%s/per_cpu", ft->dir);
	dir = opendir(path);
	if (!dir)
		return -errno;
	while (!ret && (de = readdir(dir))) {
		FILE *f;

		if (strncmp(de->d_name, "cpu", 3))
			continue;
		snprintf(path, sizeof(path), "%s/per_cpu/%s/stats",
			 ft->dir, de->d_name);
		f = fopen(path, "re");
		if (!f) {
			ret = -errno;
			break;
		}
		nr_cpus++;
		while (getline(&line, &cap, f) > 0) {
			for (i = 0; i < ARRAY_SIZE(lost_keys); i++)
				if (!strncmp(line, lost_keys[i], strlen(lost_keys[i])))
					*lost += strtoull(line + strlen(lost_keys[i]),
							  NULL, 10);
			if (entries && !strncmp(line, "entries:", 8))
				*entries += strtoull(line + 8, NULL, 10);
		}
		fclose(f);
	}
	closedir(dir);
	free(line);
	if (!ret && !nr_cpus)
		ret = -ENOENT;
	return ret;
}

/*
 * Finds the event name in a line of the "trace" file:
 *   "<comm>-<pid> [<cpu>] <irq flags> <secs>.<usecs>: <event>: <fields>"
 * (the irq-flags column is optional). The comm may contain anything, so
 * anchor on the "[ddd]" CPU column, then on the timestamp token.
 */
static bool trace_line_event(const char *line, char *name, size_t len)
{
	const char *p = line, *q = NULL, *tok, *end;

	for (p = strchr(p, '['); p; p = strchr(p + 1, '[')) {
		for (q = p + 1; isdigit((unsigned char)*q); q++)
			;
		if (q > p + 1 && *q == ']')
			break;
	}
	if (!p)
		return false;
	for (p = q + 1; *p; p = end) {
		while (*p == ' ')
			p++;
		tok = p;
		end = strchr(tok, ' ');
		if (!end)
			return false;
		if (isdigit((unsigned char)tok[0]) && end[-1] == ':' &&
		    memchr(tok, '.', (size_t)(end - tok)))
			break;
	}
	if (!*p)
		return false;
	while (*end == ' ')
		end++;
	tok = end;
	end = strchr(tok, ':');
	if (!end || end == tok || (size_t)(end - tok) >= len)
		return false;
	snprintf(name, len, "%.*s", (int)(end - tok), tok);
	return true;
}

/**
 * vmlat_ftrace_count() - count the recorded events, per enabled event
 * @ft:     instance (stop it first with vmlat_ftrace_stop())
 * @counts: receives one count per enabled event, in enabling order
 * @total:  receives the number of event lines, ours or not; compare it
 *          with the "entries" of vmlat_ftrace_lost() to prove that every
 *          buffered event was parsed
 *
 * Reads the instance's "trace" file (non-consuming).
 *
 * Return: 0 or a negative errno.
 */
int vmlat_ftrace_count(struct vmlat_ftrace *ft, uint64_t *counts,
		       uint64_t *total)
{
	char path[PATH_MAX], name[64], *line = NULL;
	size_t cap = 0;
	int i, ret = 0;
	FILE *f;

	*total = 0;
	for (i = 0; i < ft->nr_events; i++)
		counts[i] = 0;
	snprintf(path, sizeof(path), "%s/trace", ft->dir);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (getline(&line, &cap, f) > 0) {
		if (line[0] == '#' || !trace_line_event(line, name, sizeof(name)))
			continue;
		(*total)++;
		for (i = 0; i < ft->nr_events; i++) {
			const char *ev = strchr(ft->events[i], ':') + 1;

			if (!strcmp(ev, name))
				counts[i]++;
		}
	}
	if (ferror(f))
		ret = -EIO;
	free(line);
	fclose(f);
	return ret;
}

/**
 * vmlat_ftrace_close() - disable the events and remove the instance
 * @ft: instance; safe on a zeroed or already closed one
 */
void vmlat_ftrace_close(struct vmlat_ftrace *ft)
{
	if (!ft->dir[0])
		return;
	ftrace_write(ft, "tracing_on", "0");
	ftrace_write(ft, "events/enable", "0");
	if (rmdir(ft->dir))
		fprintf(stderr, "# cannot remove tracing instance %s: %s\n",
			ft->dir, strerror(errno));
	ft->dir[0] = '\0';
	ft->nr_events = 0;
}

/* ---- tiny KVM guest ------------------------------------------------------ */

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

static int __attribute__((format(printf, 3, 4)))
guest_fail(struct vmlat_guest_stats *st, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(st->error, sizeof(st->error), fmt, ap);
	va_end(ap);
	return err;
}

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
