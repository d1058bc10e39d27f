// SPDX-License-Identifier: GPL-2.0
/*
 * VM names. libvirt writes each domain's QEMU pid to
 * /run/libvirt/qemu/<domain>.pid; QEMU itself gets its name from
 * "-name [guest=]NAME[,debug-threads=on]" (with debug-threads=on its
 * vCPU threads are named "CPU <n>/KVM"). Hosts that run QEMU by hand,
 * by libvirt or by anything else are covered by the two; a VMM with
 * neither keeps its comm.
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "names.h"
#include "snap.h"

static const char *env_or(const char *var, const char *def)
{
	const char *v = getenv(var);

	return v && *v ? v : def;
}

int qemu_name_arg(const char *arg, char *buf, size_t n)
{
	size_t o = 0;
	const char *p = arg;
	int first = 1;

	if (!n)
		return -1;
	while (*p) {
		/* One option: up to a ',' that is not ",,". */
		char opt[256];
		size_t k = 0;

		while (*p) {
			if (*p == ',') {
				if (p[1] == ',') {
					if (k + 1 < sizeof(opt))
						opt[k++] = ',';
					p += 2;
					continue;
				}
				break;
			}
			if (k + 1 < sizeof(opt))
				opt[k++] = *p;
			p++;
		}
		opt[k] = '\0';
		if (*p == ',')
			p++;
		if (!strncmp(opt, "guest=", 6)) {
			snprintf(buf, n, "%s", opt + 6);
			o = strlen(buf);
			return o ? 0 : -1;
		}
		/* The first option may be the name without its key. */
		if (first && !strchr(opt, '=') && *opt) {
			snprintf(buf, n, "%s", opt);
			o = 1;
		}
		first = 0;
	}
	return o ? 0 : -1;
}

/* @path's contents, NUL-separated as they are, into @buf; its length. */
static ssize_t read_file(const char *path, char *buf, size_t n)
{
	ssize_t r, len = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	while ((size_t)len + 1 < n &&
	       (r = read(fd, buf + len, n - 1 - (size_t)len)) > 0)
		len += r;
	close(fd);
	buf[len] = '\0';
	return len;
}

static int libvirt_name(int pid, char *buf, size_t n)
{
	const char *dir = env_or("VMLAT_LIBVIRT_RUN", "/run/libvirt/qemu");
	char path[4096], txt[32];
	struct dirent *e;
	size_t len;
	DIR *d = opendir(dir);
	int found = -1;

	if (!d)
		return -1;
	while (found && (e = readdir(d))) {
		len = strlen(e->d_name);
		if (len <= 4 || strcmp(e->d_name + len - 4, ".pid"))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (read_file(path, txt, sizeof(txt)) <= 0 ||
		    atoi(txt) != pid)
			continue;
		snprintf(buf, n, "%.*s", (int)(len - 4), e->d_name);
		found = 0;
	}
	closedir(d);
	return found;
}

int vm_name_of(int pid, char *buf, size_t n)
{
	char path[256], cmd[65536];
	ssize_t len;
	char *p, *end;

	if (pid <= 0)
		return -1;
	if (!libvirt_name(pid, buf, n))
		return 0;
	snprintf(path, sizeof(path), "%s/%d/cmdline",
		 env_or("VMLAT_PROC", "/proc"), pid);
	len = read_file(path, cmd, sizeof(cmd));
	if (len <= 0)
		return -1;
	end = cmd + len;
	for (p = cmd; p < end; p += strlen(p) + 1) {
		if (!strcmp(p, "-name") || !strcmp(p, "--name")) {
			p += strlen(p) + 1;
			return p < end ? qemu_name_arg(p, buf, n) : -1;
		}
		if (!strncmp(p, "-name=", 6) || !strncmp(p, "--name=", 7))
			return qemu_name_arg(strchr(p, '=') + 1, buf, n);
	}
	return -1;
}

/* Names seen, for VMs gone from /proc by the next read. */
struct seen {
	unsigned int id;
	int pid;
	char name[128];
};
static struct seen *seen;
static size_t nr_seen, cap_seen;

static const char *seen_name(unsigned int id, int pid)
{
	size_t i;

	for (i = 0; i < nr_seen; i++)
		if (seen[i].id == id && seen[i].pid == pid)
			return seen[i].name;
	return NULL;
}

static void remember(unsigned int id, int pid, const char *name)
{
	struct seen *ns;

	if (seen_name(id, pid))
		return;
	if (nr_seen == cap_seen) {
		size_t cap = cap_seen ? 2 * cap_seen : 64;

		ns = realloc(seen, cap * sizeof(*seen));
		if (!ns)
			return;
		seen = ns;
		cap_seen = cap;
	}
	seen[nr_seen].id = id;
	seen[nr_seen].pid = pid;
	snprintf(seen[nr_seen].name, sizeof(seen[nr_seen].name), "%s", name);
	nr_seen++;
}

void names_resolve(struct snap *s)
{
	const char *proc = env_or("VMLAT_PROC", "/proc");
	char path[256], name[128];
	const char *old;
	size_t i, j;
	ssize_t len;

	for (i = 0; i < s->nr_vms; i++) {
		struct vm *v = &s->vms[i];

		old = seen_name(v->id, v->pid);
		if (old) {
			snprintf(v->name, sizeof(v->name), "%s", old);
		} else if (!v->exited && !vm_name_of(v->pid, name, sizeof(name))) {
			snprintf(v->name, sizeof(v->name), "%s", name);
			remember(v->id, v->pid, name);
		}
		for (j = 0; j < v->nr_vcpus; j++) {
			struct vcpu *c = &v->vcpus[j];

			if (!strcmp(c->state, "exited"))
				continue;
			snprintf(path, sizeof(path), "%s/%d/task/%d/comm",
				 proc, v->pid, c->tid);
			len = read_file(path, c->thread, sizeof(c->thread));
			if (len > 0 && c->thread[len - 1] == '\n')
				c->thread[len - 1] = '\0';
			else if (len <= 0)
				c->thread[0] = '\0';
		}
	}
}
