// SPDX-License-Identifier: GPL-2.0
/*
 * vmlat - the operator's view of the vmlat module: per-VM time shares,
 * diagnosis, histograms, Prometheus metrics and plots, from the module's
 * JSON document (/sys/kernel/debug/vmlat/json). See vmlat(8) in
 * Documentation/vmlat-command.rst.
 */
#include <errno.h>
#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <wchar.h>

#include "escape.h"
#include "names.h"
#include "vmlat.h"

static char read_err[768];

int vmlat_read_quietly(struct snap *s)
{
	if (snap_read(s, common_next_input(), read_err, sizeof(read_err)))
		return -1;
	names_resolve(s);
	return 0;
}

const char *vmlat_read_error(void)
{
	return read_err;
}

int vmlat_read(struct snap *s)
{
	if (vmlat_read_quietly(s)) {
		fprintf(stderr, "vmlat: %s\n", read_err);
		return -1;
	}
	return 0;
}

void vmlat_wait_ms(uint64_t ms)
{
	struct timespec ts = {
		.tv_sec = (time_t)(ms / 1000),
		.tv_nsec = (long)(ms % 1000) * 1000000L,
	};

	if (vmlat_offline())
		return;
	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

int window_read(struct window *w, uint64_t dur_ms)
{
	memset(w, 0, sizeof(*w));
	if (dur_ms) {
		if (vmlat_read(&w->prev))
			return -1;
		vmlat_wait_ms(dur_ms);
		w->two = true;
	}
	if (vmlat_read(&w->cur)) {
		snap_free(&w->prev);
		return -1;
	}
	return 0;
}

const struct vm *window_prev(const struct window *w, const struct vm *v)
{
	return w->two ? snap_vm(&w->prev, v->id, v->pid) : NULL;
}

void window_vm(struct vm *d, const struct window *w, const struct vm *v)
{
	vm_delta(d, window_prev(w, v), v);
}

uint64_t window_ns(const struct window *w)
{
	return w->two && w->cur.now_ns > w->prev.now_ns ?
	       w->cur.now_ns - w->prev.now_ns : 0;
}

void window_free(struct window *w)
{
	snap_free(&w->prev);
	snap_free(&w->cur);
}

int parse_duration_ms(const char *s, uint64_t *ms)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || !isfinite(v) || v < 0)
		return -1;
	if (!*end || !strcmp(end, "s"))
		v *= 1000;
	else if (!strcmp(end, "ms"))
		;
	else if (!strcmp(end, "m"))
		v *= 60000;
	else if (!strcmp(end, "h"))
		v *= 3600000;
	else
		return -1;
	if (v > 1e12)
		return -1;
	*ms = (uint64_t)v;
	return 0;
}

char *fmt_name(char *buf, size_t n, const char *s)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t left = strlen(s), o = 0, l;
	unsigned int bad;

	while (left) {
		l = *u < 0x80 ? 1 : vmlat_utf8_seq(u, left, &bad);
		if (o + (l ?: 1) >= n)
			break;
		if (!l || name_control(u, l)) {
			buf[o++] = '?';
			l = l ?: bad;
		} else {
			memcpy(buf + o, u, l);
			o += l;
		}
		u += l;
		left -= l;
	}
	buf[o] = '\0';
	return buf;
}

/* The code point of the well-formed UTF-8 character of @l bytes at @u. */
static wchar_t utf8_decode(const unsigned char *u, size_t l)
{
	static const unsigned char lead_bits[] = { 0x7f, 0x7f, 0x1f, 0x0f, 0x07 };
	wchar_t c = u[0] & lead_bits[l];
	size_t i;

	for (i = 1; i < l; i++)
		c = (c << 6) | (u[i] & 0x3f);
	return c;
}

/*
 * The columns a character takes. wcwidth() counts in the C library's
 * locale; the command's is "C" (it sets none), so a UTF-8 one is asked
 * for, once, for this count alone.
 */
static int char_cols(const unsigned char *u, size_t l)
{
	static locale_t utf8 = (locale_t)0;
	static bool tried;
	locale_t old;
	int w;

	if (l == 1)
		return 1;
	if (!tried) {
		tried = true;
		utf8 = newlocale(LC_CTYPE_MASK, "C.UTF-8", (locale_t)0);
	}
	if (!utf8)
		return 1;
	old = uselocale(utf8);
	w = wcwidth(utf8_decode(u, l));
	uselocale(old);
	/* A character it does not know: one column, as terminals show it. */
	return w < 0 ? 1 : w;
}

/*
 * The length of the character at @u, of valid UTF-8 (fmt_name()'s): by
 * its lead byte, never past a NUL.
 */
static size_t char_len(const unsigned char *u)
{
	size_t n = *u < 0xc0 ? 1 : *u < 0xe0 ? 2 : *u < 0xf0 ? 3 : 4, i;

	for (i = 1; i < n; i++)
		if (!u[i])
			return i;
	return n;
}

int name_cols(const char *s)
{
	const unsigned char *u = (const unsigned char *)s;
	int cols = 0;
	size_t l;

	for (; *u; u += l) {
		l = char_len(u);
		cols += char_cols(u, l);
	}
	return cols;
}

char *fmt_name_cols(char *buf, size_t n, const char *s, int cols)
{
	char shown[256];
	const unsigned char *u = (const unsigned char *)shown;
	/* Cut: what fits in all but the last column, then '+'. */
	int room, used = 0, w;
	size_t o = 0, l;

	fmt_name(shown, sizeof(shown), s);
	room = name_cols(shown) <= cols ? cols : cols - 1;
	for (; *u; u += l) {
		l = char_len(u);
		w = char_cols(u, l);
		if (used + w > room || o + l >= n)
			break;
		memcpy(buf + o, u, l);
		o += l;
		used += w;
	}
	if (room < cols && o + 1 < n) {
		buf[o++] = '+';
		used++;
	}
	for (; used < cols && o + 1 < n; used++)
		buf[o++] = ' ';
	buf[o] = '\0';
	return buf;
}

char *fmt_ns(char *buf, size_t n, uint64_t ns)
{
	static const struct { double div; const char *unit; } u[] = {
		{ 1e9, "s" }, { 1e6, "ms" }, { 1e3, "us" },
	};
	size_t i;
	double v;

	for (i = 0; i < sizeof(u) / sizeof(u[0]); i++) {
		if ((double)ns < u[i].div)
			continue;
		v = (double)ns / u[i].div;
		snprintf(buf, n, v >= 100 ? "%.0f %s" : v >= 10 ? "%.1f %s" :
			 "%.2f %s", v, u[i].unit);
		return buf;
	}
	snprintf(buf, n, "%llu ns", (unsigned long long)ns);
	return buf;
}

char *fmt_pct(char *buf, size_t n, uint64_t part, uint64_t whole)
{
	if (!whole)
		snprintf(buf, n, "-");
	else
		snprintf(buf, n, "%.1f", 100.0 * (double)part / (double)whole);
	return buf;
}

static const char *vm_name_by_pid(const struct snap *s, int pid)
{
	size_t i;

	for (i = 0; s && i < s->nr_vms; i++)
		if (s->vms[i].pid == pid)
			return s->vms[i].name;
	return NULL;
}

/* The name of vCPU @idx of a VMM @pid's VM: "CPU 0/KVM", or "vCPU 0". */
static const char *vcpu_name(const struct snap *s, int pid, int tid, int idx,
			     char *buf, size_t n)
{
	size_t i, j;

	for (i = 0; s && i < s->nr_vms; i++) {
		if (s->vms[i].pid != pid)
			continue;
		for (j = 0; j < s->vms[i].nr_vcpus; j++) {
			const struct vcpu *c = &s->vms[i].vcpus[j];

			if (c->tid == tid && c->thread[0] &&
			    strncmp(c->thread, "CPU ", 4) == 0)
				return fmt_name(buf, n, c->thread);
		}
	}
	snprintf(buf, n, "vCPU %d", idx);
	return buf;
}

char *preemptor_label(char *buf, size_t n, const struct preemptor *p,
		      const struct snap *s)
{
	const char *vm;
	char c[64], name[128];

	switch (p->kind) {
	case VMLAT_BY_HOST:
		snprintf(buf, n, "host task %s[%d]",
			 fmt_name(name, sizeof(name), p->comm), p->pid);
		break;
	case VMLAT_BY_VM:
		vm = vm_name_by_pid(s, p->vm_pid);
		snprintf(buf, n, "VM %s (%s)",
			 fmt_name(name, sizeof(name), vm ? vm : p->comm),
			 vcpu_name(s, p->vm_pid, p->pid, p->vcpu, c, sizeof(c)));
		break;
	case VMLAT_BY_SAME_VM:
		snprintf(buf, n, "its own %s",
			 vcpu_name(s, p->vm_pid, p->pid, p->vcpu, c, sizeof(c)));
		break;
	case VMLAT_BY_IDLE:
		snprintf(buf, n, "CPU %d waking from idle", p->cpu);
		break;
	default:
		snprintf(buf, n, "nothing (%s)", p->comm);
		break;
	}
	return buf;
}

bool vm_matches(const struct vm *v, const char *filter)
{
	char num[32];

	if (!filter)
		return true;
	if (!strcmp(filter, v->name) || !strcmp(filter, v->comm))
		return true;
	snprintf(num, sizeof(num), "%d", v->pid);
	if (!strcmp(filter, num))
		return true;
	snprintf(num, sizeof(num), "id:%u", v->id);
	return !strcmp(filter, num);
}

static const struct {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *what;
} cmds[] = {
	{ "top", cmd_top, "per-VM time shares, refreshed (like top)" },
	{ "report", cmd_report, "one run, ending with a diagnosis" },
	{ "hist", cmd_hist, "latency histograms as text" },
	{ "export", cmd_export, "Prometheus metrics (node_exporter textfile)" },
	{ "plot", cmd_plot, "PNG/SVG plots (gnuplot)" },
	{ "save", cmd_save, "the document, with this host's VM names" },
};

static void usage(FILE *f)
{
	size_t i;

	fprintf(f, "usage: vmlat [-f FILE]... COMMAND [OPTIONS]\n\n");
	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		fprintf(f, "  %-8s %s\n", cmds[i].name, cmds[i].what);
	fprintf(f, "\n  -f FILE  read a saved %s (\"-\": stdin) instead of the module;\n"
		"           given again, the next read takes the next file\n"
		"  -V, --version  the command's version\n"
		"\n'vmlat COMMAND -h' tells a command's options.\n",
		VMLAT_JSON);
}

int main(int argc, char **argv)
{
	char **args = calloc((size_t)argc + 1, sizeof(*args));
	int i, n;
	size_t c;

	if (!args)
		return EXIT_ERR;
	/* -f FILE anywhere: the inputs; the rest goes to the command. */
	i = common_parse_inputs(argc, argv, args, &n);
	if (i >= 0) {
		free(args);
		return i;
	}
	if (!n) {
		usage(stderr);
		free(args);
		return EXIT_USAGE;
	}
	if (!strcmp(args[0], "-h") || !strcmp(args[0], "--help") ||
	    !strcmp(args[0], "help")) {
		usage(stdout);
		free(args);
		return 0;
	}
	if (!strcmp(args[0], "-V") || !strcmp(args[0], "--version")) {
		printf("vmlat %s (reads the module's JSON schemas %d to %d)\n",
		       VMLAT_CMD_VERSION, VMLAT_SCHEMA_OLDEST, VMLAT_SCHEMA);
		free(args);
		return 0;
	}
	for (c = 0; c < sizeof(cmds) / sizeof(cmds[0]); c++) {
		if (!strcmp(args[0], cmds[c].name)) {
			i = cmds[c].fn(n, args);
			free(args);
			return i;
		}
	}
	fprintf(stderr, "vmlat: no command '%s'\n", args[0]);
	usage(stderr);
	free(args);
	return EXIT_USAGE;
}
