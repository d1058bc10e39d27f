// SPDX-License-Identifier: GPL-2.0
/*
 * An ftrace oracle for the vmlat selftests: a private tracefs instance in
 * which the events vmlat counts are recorded and counted independently,
 * in the same run.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ksft_ftrace.h"
#include "ksft_util.h"

#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#endif

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
/*
 * vmlat_tracefs_event_exists() - whether the running kernel (or a module
 * of it now loaded) has trace event @event ("sys:name"): 1, 0, or a
 * negative errno if tracefs cannot say.
 */
/* The format file of @event ("sys:name") into @path: 0 or -errno. */
static int event_format_path(const char *event, char path[PATH_MAX])
{
	const char *root = vmlat_tracefs_root();
	char sys[64], name[64];

	if (!root)
		return -ENOENT;
	if (split_event(event, sys, name, sizeof(sys)))
		return -EINVAL;
	snprintf(path, PATH_MAX, "%s/events/%s/%s/format", root, sys, name);
	return 0;
}

int vmlat_tracefs_event_exists(const char *event)
{
	char path[PATH_MAX];
	int err = event_format_path(event, path);

	if (err)
		return err;
	if (!access(path, F_OK))
		return 1;
	return errno == ENOENT ? 0 : -errno;
}

int vmlat_tracefs_event_has_field(const char *event, const char *field)
{
	char path[PATH_MAX], *line = NULL;
	size_t cap = 0, flen = strlen(field);
	int found = 0, err;
	FILE *f;

	err = event_format_path(event, path);
	if (err)
		return err;
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
		vmlat_trim_right(decl);
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
	return vmlat_write_file(path, val);
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
