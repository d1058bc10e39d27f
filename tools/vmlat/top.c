// SPDX-License-Identifier: GPL-2.0
/*
 * vmlat top: per VM, where its vCPUs' time went over the last interval
 * (the difference between two reads of the module's document, not its
 * totals), refreshed like top(1) and kvm_stat(1); -b (or output that is
 * not a terminal) prints each refresh as plain text for scripts.
 */
#include <json-c/json.h>
#include <ncurses.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "vmlat.h"

enum sort_key {
	SK_STEAL, SK_NAME, SK_PID, SK_GUEST, SK_KERNEL, SK_USER, SK_PREEMPTED,
	SK_WAIT, SK_IDLE, SK_EXITS, SK_P99, NR_SK
};

/* Sort key names (-s) and their keys in the live view. */
static const struct {
	const char *name;
	int key;
} sort_keys[NR_SK] = {
	[SK_STEAL] = { "steal", 's' },	/* preempted + wait */
	[SK_NAME] = { "name", 'n' },
	[SK_PID] = { "pid", 'P' },
	[SK_GUEST] = { "guest", 'g' },
	[SK_KERNEL] = { "kernel", 'k' },
	[SK_USER] = { "user", 'u' },
	[SK_PREEMPTED] = { "preempted", 'p' },
	[SK_WAIT] = { "wait", 'w' },
	[SK_IDLE] = { "idle", 'i' },
	[SK_EXITS] = { "exits", 'e' },
	[SK_P99] = { "p99", 'l' },
};

struct row {
	const struct vm *v;	/* the later read */
	struct vm d;		/* what happened in the interval */
	double share[VMLAT_NR_STATES];	/* of its observed time, in per cent */
	double exits_per_s;
	uint64_t p99_ns;	/* of its preemptions in the interval */
	char worst[96];		/* its worst preemptor in the interval */
	double worst_pct;
};

/* What -b prints (-o). */
enum top_out { OUT_TEXT, OUT_JSON, OUT_CSV };

struct top_params {
	struct common_params common;	/* the VM */
	bool batch;			/* -b, or stdout not a terminal */
	bool wide;			/* -w: the wide layout */
	enum top_out out;
	uint64_t interval_ms;
	long count;			/* refreshes; -1: until q */
	enum sort_key sort;
	bool reverse, all;
	int *pids;
	int nr_pids;
};

struct top {
	struct top_params p;
	bool live;		/* no q yet */
	long refresh;		/* refreshes printed */
	struct snap prev;	/* the read the interval starts from */
	struct row *rows;	/* of the last interval, pointing into prev */
	size_t nr_rows;
	double interval_s;
	size_t nr_vms, nr_exited;
};

static bool wanted(const struct top *t, const struct vm *v)
{
	int i;

	if (!vm_matches(v, t->p.common.filter))
		return false;
	if (!t->p.nr_pids)
		return true;
	for (i = 0; i < t->p.nr_pids; i++)
		if (t->p.pids[i] == v->pid)
			return true;
	return false;
}

static double row_value(const struct row *r, enum sort_key k)
{
	switch (k) {
	case SK_STEAL:
		return r->share[VMLAT_PREEMPTED] + r->share[VMLAT_WAIT];
	case SK_PID:
		return r->v->pid;
	case SK_GUEST:
		return r->share[VMLAT_GUEST];
	case SK_KERNEL:
		return r->share[VMLAT_KERNEL];
	case SK_USER:
		return r->share[VMLAT_USER];
	case SK_PREEMPTED:
		return r->share[VMLAT_PREEMPTED];
	case SK_WAIT:
		return r->share[VMLAT_WAIT];
	case SK_IDLE:
		return r->share[VMLAT_IDLE] + r->share[VMLAT_BLOCKED];
	case SK_EXITS:
		return r->exits_per_s;
	case SK_P99:
		return (double)r->p99_ns;
	default:
		return 0;
	}
}

static enum sort_key cur_sort;
static bool cur_reverse;

/* Largest first (names and pids: in order), then by VM id. */
static int row_cmp(const void *pa, const void *pb)
{
	const struct row *a = pa, *b = pb;
	double va, vb;
	int c;

	if (cur_sort == SK_NAME) {
		c = strcmp(a->v->name, b->v->name);
	} else {
		va = row_value(a, cur_sort);
		vb = row_value(b, cur_sort);
		c = va < vb ? 1 : va > vb ? -1 : 0;
		if (cur_sort == SK_PID)
			c = -c;
	}
	if (!c)
		c = a->v->id < b->v->id ? -1 : a->v->id > b->v->id;
	return cur_reverse ? -c : c;
}

static void rows_free(struct top *t)
{
	size_t i;

	for (i = 0; i < t->nr_rows; i++)
		vm_free(&t->rows[i].d);
	free(t->rows);
	t->rows = NULL;
	t->nr_rows = 0;
}

static void rows_sort(struct top *t)
{
	cur_sort = t->p.sort;
	cur_reverse = t->p.reverse;
	qsort(t->rows, t->nr_rows, sizeof(*t->rows), row_cmp);
}

/* The rows of the interval from @a to @b. */
static void rows_build(struct top *t, const struct snap *a,
		       const struct snap *b)
{
	const struct preemptor *w;
	struct row *r;
	size_t i, j;
	int s;

	rows_free(t);
	t->rows = calloc(b->nr_vms ? b->nr_vms : 1, sizeof(*t->rows));
	if (!t->rows)
		return;
	t->interval_s = b->now_ns > a->now_ns ?
			(double)(b->now_ns - a->now_ns) / 1e9 : 0;
	t->nr_vms = t->nr_exited = 0;
	for (i = 0; i < b->nr_vms; i++) {
		const struct vm *v = &b->vms[i];

		if (!wanted(t, v))
			continue;
		r = &t->rows[t->nr_rows];
		r->v = v;
		vm_delta(&r->d, snap_vm(a, v->id, v->pid), v);
		/* Gone before the interval: nothing to show, unless -a. */
		if (!r->d.st.observed_ns && v->exited && !t->p.all) {
			vm_free(&r->d);
			continue;
		}
		t->nr_vms++;
		t->nr_exited += v->exited;
		t->nr_rows++;
		for (s = 0; s < VMLAT_NR_STATES; s++)
			r->share[s] = r->d.st.observed_ns ?
				100.0 * (double)r->d.st.ns[s] /
				(double)r->d.st.observed_ns : 0;
		r->exits_per_s = t->interval_s > 0 ?
				 (double)r->d.st.exits / t->interval_s : 0;
		r->p99_ns = hist_quantile(&r->d.h[VMLAT_HIST_PREEMPT], 0.99);
		w = NULL;
		for (j = 0; j < r->d.nr_pre; j++)
			if (!w || r->d.pre[j].stolen_ns > w->stolen_ns)
				w = &r->d.pre[j];
		if (w) {
			preemptor_label(r->worst, sizeof(r->worst), w, b);
			r->worst_pct = r->d.st.observed_ns ?
				100.0 * (double)w->stolen_ns /
				(double)r->d.st.observed_ns : 0;
		} else {
			snprintf(r->worst, sizeof(r->worst), "-");
		}
	}
	rows_sort(t);
}

/*
 * Two layouts of the text table. The default fits 80 columns, as top(1)
 * and ps(1) do: the VM's name cut to NAME_COLS, its pid, vCPUs, the 7
 * shares and exits per second, and an X after a VM that exited. The wide
 * one (-w, or a terminal of WIDE_COLS or more) adds the p99 of the
 * preemptions and the worst preemptor, with whole names.
 */
#define NAME_COLS	13
#define WIDE_NAME_COLS	16	/* at least */
#define WIDE_COLS	120
#define TEXT_COLS	80

struct layout {
	bool wide;
	int name_cols;
};

/* The layout of @t's rows: in the wide one, the widest name sets it. */
static struct layout layout_of(const struct top *t, bool wide)
{
	struct layout l = { .wide = wide, .name_cols = NAME_COLS };
	char name[sizeof(t->rows->v->name)];
	size_t i;
	int w;

	if (!wide)
		return l;
	l.name_cols = WIDE_NAME_COLS;
	for (i = 0; i < t->nr_rows; i++) {
		w = name_cols(fmt_name(name, sizeof(name), t->rows[i].v->name));
		if (w > l.name_cols)
			l.name_cols = w;
	}
	return l;
}

static void header_line(char *buf, size_t n, const struct layout *l)
{
	if (l->wide)
		snprintf(buf, n,
			 "%-*s %7s %5s %6s %6s %6s %8s %6s %6s %6s %9s %11s  %s",
			 l->name_cols, "VM", "PID", "VCPUS", "GUEST%", "KERN%",
			 "USER%", "PREEMPT%", "WAIT%", "IDLE%", "BLK%",
			 "EXITS/s", "P99-PREEMPT", "TOP PREEMPTOR");
	else
		snprintf(buf, n, "%-*s %7s %5s %6s %5s %5s %6s %5s %5s %5s %6s",
			 l->name_cols, "VM", "PID", "VCPUS", "GUEST%", "KERN%",
			 "USER%", "PREEM%", "WAIT%", "IDLE%", "BLK%", "EXIT/s");
}

static void row_line(char *buf, size_t n, const struct row *r,
		     const struct layout *l)
{
	char p99[16], worst[128], rate[24], name[4 * sizeof(r->v->name)];

	snprintf(rate, sizeof(rate), "%.0f", r->exits_per_s);
	fmt_name_cols(name, sizeof(name), r->v->name, l->name_cols);
	if (!l->wide) {
		snprintf(buf, n,
			 "%s %7d %5zu %6.1f %5.1f %5.1f %6.1f %5.1f %5.1f %5.1f %6s%s",
			 name, r->v->pid, r->v->nr_vcpus, r->share[VMLAT_GUEST],
			 r->share[VMLAT_KERNEL], r->share[VMLAT_USER],
			 r->share[VMLAT_PREEMPTED], r->share[VMLAT_WAIT],
			 r->share[VMLAT_IDLE], r->share[VMLAT_BLOCKED], rate,
			 r->v->exited ? " X" : "");
		return;
	}
	if (r->p99_ns)
		fmt_ns(p99, sizeof(p99), r->p99_ns);
	else
		snprintf(p99, sizeof(p99), "-");
	if (r->worst[0] != '-')
		snprintf(worst, sizeof(worst), "%s %.1f%%", r->worst,
			 r->worst_pct);
	else
		snprintf(worst, sizeof(worst), "-");
	snprintf(buf, n,
		 "%s %7d %5zu %6.1f %6.1f %6.1f %8.1f %6.1f %6.1f %6.1f %9s %11s  %s%s",
		 name, r->v->pid, r->v->nr_vcpus, r->share[VMLAT_GUEST],
		 r->share[VMLAT_KERNEL], r->share[VMLAT_USER],
		 r->share[VMLAT_PREEMPTED], r->share[VMLAT_WAIT],
		 r->share[VMLAT_IDLE], r->share[VMLAT_BLOCKED], rate, p99, worst,
		 r->v->exited ? " (exited)" : "");
}

/*
 * The first line: when (reading the module), the interval, the VMs, the
 * order. Within 80 columns but for thousands of VMs sorted by a long key,
 * reversed: the default layout cuts it there (it is ASCII).
 */
static void title_line(char *buf, size_t n, const struct top *t,
		       const struct layout *l)
{
	char when[32] = "", exited[32] = "";
	time_t now = time(NULL);
	struct tm tm;

	if (!vmlat_offline() && localtime_r(&now, &tm))
		strftime(when, sizeof(when), "%H:%M:%S, ", &tm);
	if (t->nr_exited)
		snprintf(exited, sizeof(exited), " (%zu exited)", t->nr_exited);
	snprintf(buf, n, "vmlat top - %sinterval %.2f s, %zu VMs%s, by %s%s",
		 when, t->interval_s, t->nr_vms, exited,
		 sort_keys[t->p.sort].name, t->p.reverse ? ", reversed" : "");
	if (!l->wide && n > TEXT_COLS)
		buf[TEXT_COLS] = '\0';
}

/*
 * -o json: one JSON object per refresh and line (JSON Lines), the text
 * table's numbers unrounded; a name as fmt_name() shows it, so that the
 * document is valid UTF-8 and carries no control character.
 */
static void print_json(const struct top *t)
{
	json_object *o = json_object_new_object(), *vms, *vm;
	char name[sizeof(t->rows->v->name)];
	size_t i;
	int s;

	json_object_object_add(o, "interval_s",
			       json_object_new_double(t->interval_s));
	json_object_object_add(o, "sorted_by",
			       json_object_new_string(sort_keys[t->p.sort].name));
	vms = json_object_new_array();
	for (i = 0; i < t->nr_rows; i++) {
		const struct row *r = &t->rows[i];

		vm = json_object_new_object();
		json_object_object_add(vm, "vm", json_object_new_string(
			fmt_name(name, sizeof(name), r->v->name)));
		json_object_object_add(vm, "pid", json_object_new_int(r->v->pid));
		json_object_object_add(vm, "vm_id",
				       json_object_new_int64(r->v->id));
		json_object_object_add(vm, "vcpus",
				       json_object_new_int64((int64_t)r->v->nr_vcpus));
		json_object_object_add(vm, "exited",
				       json_object_new_boolean(r->v->exited));
		for (s = 0; s < VMLAT_NR_STATES; s++) {
			char key[32];

			snprintf(key, sizeof(key), "%s_pct", state_names[s]);
			json_object_object_add(vm, key,
					       json_object_new_double(r->share[s]));
		}
		json_object_object_add(vm, "exits_per_s",
				       json_object_new_double(r->exits_per_s));
		json_object_object_add(vm, "p99_preempt_ns", r->p99_ns ?
				       json_object_new_int64((int64_t)r->p99_ns) :
				       NULL);
		json_object_object_add(vm, "top_preemptor", r->worst[0] != '-' ?
				       json_object_new_string(r->worst) : NULL);
		json_object_object_add(vm, "top_preemptor_pct",
				       r->worst[0] != '-' ?
				       json_object_new_double(r->worst_pct) : NULL);
		json_object_array_add(vms, vm);
	}
	json_object_object_add(o, "vms", vms);
	printf("%s\n", json_object_to_json_string_ext(o,
		JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(o);
	fflush(stdout);
}

/* A CSV field (RFC 4180): quoted, a quote doubled. */
static void csv_str(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		if (*s == '"')
			putchar('"');
		putchar(*s);
	}
	putchar('"');
}

/* -o csv: a header line once, then a line per VM and refresh. */
static void print_csv(const struct top *t)
{
	char name[sizeof(t->rows->v->name)];
	size_t i;
	int s;

	if (!t->refresh) {
		printf("refresh,interval_s,vm,pid,vm_id,vcpus,exited");
		for (s = 0; s < VMLAT_NR_STATES; s++)
			printf(",%s_pct", state_names[s]);
		printf(",exits_per_s,p99_preempt_ns,top_preemptor,top_preemptor_pct\n");
	}
	for (i = 0; i < t->nr_rows; i++) {
		const struct row *r = &t->rows[i];

		printf("%ld,%.3f,", t->refresh + 1, t->interval_s);
		csv_str(fmt_name(name, sizeof(name), r->v->name));
		printf(",%d,%u,%zu,%d", r->v->pid, r->v->id, r->v->nr_vcpus,
		       r->v->exited);
		for (s = 0; s < VMLAT_NR_STATES; s++)
			printf(",%.3f", r->share[s]);
		printf(",%.3f,", r->exits_per_s);
		if (r->p99_ns)
			printf("%llu", (unsigned long long)r->p99_ns);
		putchar(',');
		if (r->worst[0] != '-') {
			csv_str(r->worst);
			printf(",%.3f", r->worst_pct);
		} else {
			putchar(',');
		}
		putchar('\n');
	}
	fflush(stdout);
}

static void print_batch(const struct top *t)
{
	struct layout l;
	char line[1024];
	size_t i;

	if (t->p.out == OUT_JSON) {
		print_json(t);
		return;
	}
	if (t->p.out == OUT_CSV) {
		print_csv(t);
		return;
	}

	l = layout_of(t, t->p.wide);
	title_line(line, sizeof(line), t, &l);
	printf("%s\n", line);
	header_line(line, sizeof(line), &l);
	printf("%s\n", line);
	for (i = 0; i < t->nr_rows; i++) {
		row_line(line, sizeof(line), &t->rows[i], &l);
		printf("%s\n", line);
	}
	printf("\n");
	fflush(stdout);
}

static void draw(const struct top *t)
{
	struct layout l;
	char line[1024];
	int y = 0, rows, cols;
	size_t i;

	getmaxyx(stdscr, rows, cols);
	l = layout_of(t, t->p.wide || cols >= WIDE_COLS);
	erase();
	title_line(line, sizeof(line), t, &l);
	mvaddnstr(y++, 0, line, cols);
	mvaddnstr(y++, 0, "sort: s steal  p preempted  w wait  g guest  k kernel  u user  i idle",
		  cols);
	mvaddnstr(y++, 0, "      e exits  l p99  n name  P pid  r reverse  q quit", cols);
	y++;
	header_line(line, sizeof(line), &l);
	attron(A_REVERSE);
	mvaddnstr(y++, 0, line, cols);
	attroff(A_REVERSE);
	for (i = 0; i < t->nr_rows && y < rows; i++) {
		row_line(line, sizeof(line), &t->rows[i], &l);
		mvaddnstr(y++, 0, line, cols);
	}
	refresh();
}

/* A key in the live view: false to quit. */
static bool key(struct top *t, int ch)
{
	int k;

	if (ch == 'q' || ch == 'Q' || ch == 27)
		return false;
	if (ch == 'r') {
		t->p.reverse = !t->p.reverse;
		return true;
	}
	for (k = 0; k < NR_SK; k++)
		if (sort_keys[k].key == ch)
			t->p.sort = k;
	return true;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: vmlat top [-b] [-w] [-o text|json|csv] [-d|-i INTERVAL] [-n COUNT]\n"
		"                 [-p PID[,PID...]] [-s KEY] [-r] [-a] [VM]\n"
		"  per VM, over each interval: the share of its vCPUs' time in guest, exit\n"
		"  handling in the host kernel and in the VMM (user), preempted, waiting for\n"
		"  a CPU, idle (halted) and blocked; exits per second; with -w, p99\n"
		"  preemption and the worst preemptor. Its lines fit 80 columns: names cut\n"
		"  at 13 with a '+', an X after a VM that exited.\n"
		"  -b           batch mode: print each refresh (the default when stdout is\n"
		"               not a terminal)\n"
		"  -w           wide: also P99-PREEMPT and TOP PREEMPTOR, names whole (the\n"
		"               live view's layout in a terminal of %d columns or more)\n"
		"  -o FORMAT    batch mode's output: text (the default), json (an object\n"
		"               per refresh and line) or csv (a header, a line per VM)\n"
		"  -d, -i INTERVAL  between refreshes: 2s (also 0.5, seconds as top -d\n"
		"               takes them, 500ms, 1m)\n"
		"  -n COUNT     stop after COUNT refreshes (default: never, q quits; with\n"
		"               -f FILEs, one per two consecutive files)\n"
		"  -p PID,...   only the VMs of these VMM processes\n"
		"  -s KEY       sort by steal (preempted + wait, the default), name, pid,\n"
		"               guest, kernel, user, preempted, wait, idle, exits, p99\n"
		"  -r           reverse the order\n"
		"  -a           also VMs that exited before the interval\n"
		"  VM           only this VM (its name, VMM pid, or id:N)\n",
		WIDE_COLS);
}

static int parse_pids(struct top_params *p, const char *arg)
{
	char *copy = strdup(arg), *tok, *save = NULL, *end;
	long v;

	if (!copy)
		return -1;
	for (tok = strtok_r(copy, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		v = strtol(tok, &end, 10);
		if (*end || v <= 0 || v > 0x7fffffff) {
			free(copy);
			return -1;
		}
		p->pids = realloc(p->pids, (size_t)(p->nr_pids + 1) *
				  sizeof(*p->pids));
		if (!p->pids) {
			free(copy);
			return -1;
		}
		p->pids[p->nr_pids++] = (int)v;
	}
	free(copy);
	return p->nr_pids ? 0 : -1;
}

static int parse_opt(int opt, const char *arg, struct common_params *common)
{
	struct top_params *p = container_of(common, struct top_params, common);
	char *end;
	int k;

	switch (opt) {
	case 'b':
		p->batch = true;
		break;
	case 'd':	/* procps top's and kvm_stat's delay */
	case 'i':
		if (parse_duration_ms(arg, &p->interval_ms) ||
		    p->interval_ms < 100)
			return common_refuse("top", "-%c %s: an interval of 100ms or more, such as 2s",
					     opt, arg);
		break;
	case 'n':
		p->count = strtol(arg, &end, 10);
		if (*end || p->count <= 0)
			return common_refuse("top", "-n %s: a count of 1 or more",
					     arg);
		break;
	case 'p':
		if (parse_pids(p, arg))
			return common_refuse("top", "-p %s: process ids, separated by commas",
					     arg);
		break;
	case 's':
		for (k = 0; k < NR_SK; k++)
			if (!strcmp(arg, sort_keys[k].name))
				break;
		if (k == NR_SK)
			return common_refuse("top", "-s %s: sort by steal, name, pid, guest, kernel, user, preempted, wait, idle, exits or p99",
					     arg);
		p->sort = k;
		break;
	case 'r':
		p->reverse = true;
		break;
	case 'o':
		if (!strcmp(arg, "json"))
			p->out = OUT_JSON;
		else if (!strcmp(arg, "csv"))
			p->out = OUT_CSV;
		else if (!strcmp(arg, "text"))
			p->out = OUT_TEXT;
		else
			return common_refuse("top", "-o %s: text, json or csv",
					     arg);
		/* for scripts: batch mode */
		p->batch = p->batch || p->out != OUT_TEXT;
		break;
	case 'a':
		p->all = true;
		break;
	case 'w':
		p->wide = true;
		break;
	}
	return 0;
}

static const struct cmd_options top_cmd = {
	.name = "top",
	.optstring = "bd:i:n:o:p:s:raw",
	.usage = usage,
	.parse_opt = parse_opt,
};

/* The live view's screen (ncurses), until endwin(). */
static void screen_start(void)
{
	initscr();
	cbreak();
	noecho();
	curs_set(0);
	keypad(stdscr, TRUE);
	mvaddstr(0, 0, "vmlat top: reading...");
	refresh();
}

/* Wait an interval; in the live view, answer keys meanwhile (q: @t->live). */
static void top_wait(struct top *t)
{
	struct timespec t0, t1;
	long left = (long)t->p.interval_ms;
	int ch;

	if (t->p.batch) {
		vmlat_wait_ms(t->p.interval_ms);
		return;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (left > 0 && t->live) {
		timeout((int)left);
		ch = getch();
		if (ch != ERR) {
			t->live = key(t, ch);
			if (t->rows) {
				rows_sort(t);
				draw(t);
			}
		}
		clock_gettime(CLOCK_MONOTONIC, &t1);
		left = (long)t->p.interval_ms -
		       ((t1.tv_sec - t0.tv_sec) * 1000 +
			(t1.tv_nsec - t0.tv_nsec) / 1000000);
	}
}

/*
 * The next read, and the rows of the interval from the one before: 0,
 * or -1 (its message printed in batch mode, kept for after the live
 * view).
 */
static int top_collect(struct top *t)
{
	struct snap next;

	if (t->p.batch ? vmlat_read(&next) : vmlat_read_quietly(&next))
		return -1;
	rows_build(t, &t->prev, &next);
	/* The rows point into next's VMs: it becomes prev, kept till then. */
	snap_free(&t->prev);
	t->prev = next;
	return 0;
}

static void top_print(struct top *t)
{
	if (t->p.batch)
		print_batch(t);
	else
		draw(t);
	t->refresh++;
}

static int top_run(struct top *t)
{
	long done;
	int ret = 0;

	if (vmlat_read(&t->prev))
		return EXIT_ERR;
	if (!t->p.batch)
		screen_start();
	t->live = true;
	for (done = 0; t->p.count < 0 || done < t->p.count; done++) {
		top_wait(t);
		if (!t->live)
			break;
		if (top_collect(t)) {
			ret = EXIT_ERR;
			break;
		}
		top_print(t);
	}
	if (!t->p.batch) {
		endwin();
		if (ret)
			fprintf(stderr, "vmlat: %s\n", vmlat_read_error());
	}
	rows_free(t);
	snap_free(&t->prev);
	return ret;
}

int cmd_top(int argc, char **argv)
{
	struct top t = {
		.p = {
			.batch = !isatty(STDOUT_FILENO),
			.interval_ms = 2000,
			.count = -1,
			.sort = SK_STEAL,
		},
	};
	int ret;

	ret = common_parse_options(argc, argv, &top_cmd, &t.p.common);
	/*
	 * Saved documents without -n: one refresh per interval between two
	 * of them (one file: one, of nothing), then the end, not the last
	 * file again and again.
	 */
	if (t.p.count < 0 && vmlat_offline())
		t.p.count = common_nr_inputs() > 1 ? common_nr_inputs() - 1 : 1;
	if (ret < 0)
		ret = top_run(&t);
	free(t.p.pids);
	return ret;
}
