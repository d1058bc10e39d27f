// SPDX-License-Identifier: GPL-2.0
/*
 * VM names. libvirt writes each domain's QEMU pid to
 * /run/libvirt/qemu/<domain>.pid; QEMU itself gets its name from
 * "-name [guest=]NAME[,debug-threads=on]" (with debug-threads=on its
 * vCPU threads are named "CPU <n>/KVM"). Hosts that run QEMU by hand,
 * by libvirt or by anything else are covered by the two; a VMM with
 * neither keeps its comm. A VM's UUID, the identity that means the same
 * VM on every host, is its libvirt domain's <uuid> in the status file
 * libvirt writes beside the pid file, else QEMU's "-uuid UUID" (libvirt
 * passes it too).
 */
#include <ctype.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdbool.h>
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

/*
 * @path's whole contents, NUL-terminated, in memory to free(); NULL if it
 * cannot be read or is larger than @max.
 */
static char *read_all(const char *path, size_t max)
{
	size_t len;
	char *buf;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	buf = read_fd_all(fd, max, &len);
	close(fd);
	return buf;
}

int uuid_arg(const char *s, size_t len, char *buf, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	size_t i;

	while (len && isspace((unsigned char)*s)) {
		s++;
		len--;
	}
	while (len && isspace((unsigned char)s[len - 1]))
		len--;
	if (len != 36 || n < 37)
		return -1;
	for (i = 0; i < 36; i++) {
		int c = tolower((unsigned char)s[i]);

		if (i == 8 || i == 13 || i == 18 || i == 23) {
			if (c != '-')
				return -1;
		} else if (!c || !strchr(hex, c)) {
			return -1;
		}
		buf[i] = (char)c;
	}
	buf[36] = '\0';
	return 0;
}

/*
 * The UUID of libvirt's status file @xml: its <domain> element's <uuid>,
 * the first <uuid> after "<domain" (libvirt writes it second, after
 * <name>; <domstatus> before it holds none). 0, or -1.
 */
static int xml_uuid(const char *xml, char *buf, size_t n)
{
	const char *p = xml, *u, *e;

	while ((p = strstr(p, "<domain"))) {
		if (p[7] == '>' || isspace((unsigned char)p[7]))
			break;
		p += 7;
	}
	if (!p)
		return -1;
	u = strstr(p, "<uuid>");
	if (!u)
		return -1;
	u += 6;
	e = strstr(u, "</uuid>");
	if (!e)
		return -1;
	return uuid_arg(u, (size_t)(e - u), buf, n);
}

/* libvirt's running domains: the pid files of its run directory. */
struct domain {
	int pid;
	char name[128];
};

struct domains {
	const char *dir;
	struct domain *d;
	size_t n;
};

/* Read libvirt's run directory once: a VM of each pid file. */
static void domains_read(struct domains *ds)
{
	char path[4096], txt[32];
	struct domain *nd;
	struct dirent *e;
	size_t len, cap = 0;
	DIR *d;

	ds->dir = env_or("VMLAT_LIBVIRT_RUN", "/run/libvirt/qemu");
	ds->d = NULL;
	ds->n = 0;
	d = opendir(ds->dir);
	if (!d)
		return;
	while ((e = readdir(d))) {
		len = strlen(e->d_name);
		if (len <= 4 || strcmp(e->d_name + len - 4, ".pid"))
			continue;
		snprintf(path, sizeof(path), "%s/%s", ds->dir, e->d_name);
		if (read_file(path, txt, sizeof(txt)) <= 0 || atoi(txt) <= 0)
			continue;
		if (ds->n == cap) {
			cap = cap ? 2 * cap : 64;
			nd = realloc(ds->d, cap * sizeof(*nd));
			if (!nd)
				break;
			ds->d = nd;
		}
		ds->d[ds->n].pid = atoi(txt);
		snprintf(ds->d[ds->n].name, sizeof(ds->d[ds->n].name), "%.*s",
			 (int)(len - 4), e->d_name);
		ds->n++;
	}
	closedir(d);
}

static void domains_free(struct domains *ds)
{
	free(ds->d);
	ds->d = NULL;
	ds->n = 0;
}

/* What names a VM: its name, where it comes from, its UUID. */
struct ident {
	char name[128];
	bool libvirt;
	char uuid[37];
};

/*
 * @pid's -name and -uuid (each -opt VALUE, --opt VALUE, -opt=VALUE or
 * --opt=VALUE) into @id; whether it has a -name.
 */
static bool cmdline_ident(int pid, struct ident *id)
{
	char path[256], cmd[65536];
	const char *val;
	bool named = false, got_uuid = false, name_seen = false;
	bool uuid_seen = false;
	ssize_t len;
	char *p, *end;

	snprintf(path, sizeof(path), "%s/%d/cmdline",
		 env_or("VMLAT_PROC", "/proc"), pid);
	len = read_file(path, cmd, sizeof(cmd));
	if (len <= 0)
		return false;
	end = cmd + len;
	for (p = cmd; p < end && !(name_seen && uuid_seen);
	     p += strlen(p) + 1) {
		const char *o = p[0] == '-' && p[1] == '-' ? p + 2 :
				p[0] == '-' ? p + 1 : NULL;
		bool is_name, is_uuid;

		if (!o)
			continue;
		is_name = !strncmp(o, "name", 4) && (!o[4] || o[4] == '=');
		is_uuid = !strncmp(o, "uuid", 4) && (!o[4] || o[4] == '=');
		if (!is_name && !is_uuid)
			continue;
		if (o[4] == '=') {
			val = o + 5;
		} else {
			p += strlen(p) + 1;
			if (p >= end)
				break;
			val = p;
		}
		/* The first of each counts. */
		if (is_name && !name_seen)
			named = !qemu_name_arg(val, id->name,
					       sizeof(id->name));
		if (is_uuid && !uuid_seen)
			got_uuid = !uuid_arg(val, strlen(val), id->uuid,
					     sizeof(id->uuid));
		name_seen |= is_name;
		uuid_seen |= is_uuid;
	}
	if (!got_uuid)
		id->uuid[0] = '\0';
	return named;
}

/*
 * @pid's name and UUID: its libvirt domain (a pid file in @ds) and that
 * domain's status file's <uuid>; else QEMU's -name and -uuid in its
 * command line ($VMLAT_PROC, default /proc). 0 if it has a name, -1 if
 * not (not a named VM, or gone): then @id->uuid may still be set.
 */
static int vm_ident_of(int pid, const struct domains *ds, struct ident *id)
{
	char path[4096], *xml;
	struct ident cl = { 0 };
	bool named;
	size_t i;

	memset(id, 0, sizeof(*id));
	if (pid <= 0)
		return -1;
	for (i = 0; i < ds->n; i++) {
		if (ds->d[i].pid != pid)
			continue;
		snprintf(id->name, sizeof(id->name), "%s", ds->d[i].name);
		id->libvirt = true;
		snprintf(path, sizeof(path), "%s/%s.xml", ds->dir,
			 ds->d[i].name);
		xml = read_all(path, 64 << 20);
		if (xml && !xml_uuid(xml, id->uuid, sizeof(id->uuid))) {
			free(xml);
			return 0;
		}
		free(xml);
		break;
	}
	/* libvirt starts QEMU with -uuid: its domain's, if its XML is not. */
	named = cmdline_ident(pid, &cl);
	memcpy(id->uuid, cl.uuid, sizeof(id->uuid));
	if (id->libvirt)
		return 0;
	if (!named)
		return -1;
	memcpy(id->name, cl.name, sizeof(id->name));
	return 0;
}

/* A DNS-1123 label (@sub 0) or subdomain (@sub 1) of @len bytes at @s. */
static bool dns1123(const char *s, size_t len, bool sub)
{
	size_t i;

	if (!len || len > (sub ? 253U : 63U))
		return false;
	for (i = 0; i < len; i++) {
		char c = s[i];
		bool alnum = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');

		if (!alnum && c != '-' && !(sub && c == '.'))
			return false;
		if (!alnum && (i == 0 || i == len - 1))
			return false;
	}
	return true;
}

int kubevirt_name(const char *domain, char *ns, size_t nns, char *name,
		  size_t nname)
{
	const char *u = strchr(domain, '_');

	if (!u || !dns1123(domain, (size_t)(u - domain), false) ||
	    !dns1123(u + 1, strlen(u + 1), true) ||
	    (size_t)(u - domain) >= nns || strlen(u + 1) >= nname)
		return -1;
	snprintf(ns, nns, "%.*s", (int)(u - domain), domain);
	snprintf(name, nname, "%s", u + 1);
	return 0;
}

/* Names seen, for VMs gone from /proc by the next read. */
struct seen {
	unsigned int id;
	int pid;
	struct ident ident;
};
static struct seen *seen;
static size_t nr_seen, cap_seen;

static const struct ident *seen_ident(unsigned int id, int pid)
{
	size_t i;

	for (i = 0; i < nr_seen; i++)
		if (seen[i].id == id && seen[i].pid == pid)
			return &seen[i].ident;
	return NULL;
}

static void remember(unsigned int id, int pid, const struct ident *ident)
{
	struct seen *ns;

	if (seen_ident(id, pid))
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
	seen[nr_seen].ident = *ident;
	nr_seen++;
}

void names_resolve(struct snap *s)
{
	const char *proc = env_or("VMLAT_PROC", "/proc");
	const struct ident *old;
	struct domains ds = { 0 };
	bool listed = false;
	struct ident id;
	char path[256];
	size_t i, j;
	ssize_t len;

	for (i = 0; i < s->nr_vms; i++) {
		struct vm *v = &s->vms[i];

		/* Named where it ran (vmlat save): not this machine's pids. */
		if (v->names_saved)
			continue;
		old = seen_ident(v->id, v->pid);
		if (!old && !v->exited) {
			if (!listed)
				domains_read(&ds);
			listed = true;
			if (!vm_ident_of(v->pid, &ds, &id)) {
				remember(v->id, v->pid, &id);
				old = seen_ident(v->id, v->pid);
				if (!old)	/* out of memory: this once */
					old = &id;
			} else {
				/* No name: its comm; a -uuid all the same. */
				memcpy(v->uuid, id.uuid, sizeof(v->uuid));
			}
		}
		if (old) {
			v->named = true;
			snprintf(v->name, sizeof(v->name), "%s", old->name);
			v->libvirt = old->libvirt;
			memcpy(v->uuid, old->uuid, sizeof(v->uuid));
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
	domains_free(&ds);
}
