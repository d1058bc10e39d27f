// SPDX-License-Identifier: GPL-2.0
/*
 * vmlat plot: PNG or SVG plots of one read (totals since vmlat was loaded)
 * or of the difference between two reads, drawn by gnuplot:
 *
 *   timeshare.EXT                  one stacked bar per VM: its vCPU time
 *                                  by state, 100% = its observed time
 *   hist-NAME-PID-ID.EXT           per VM: its latency distributions
 *
 * One gnuplot process draws every file from one script written to its
 * standard input, the data inline as datablocks: no temporary files.
 * It runs in the output directory, so that the script names its files
 * only by their (safe) names.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "escape.h"
#include "vmlat.h"

#define GNUPLOT_HINT	"install it (apt install gnuplot-nox)"

#define PLOT_W		1000	/* every plot's width */
#define HIST_H		600	/* a histogram plot's height */
/*
 * The time share plot's height: title, key and x axis, then a row per
 * VM, within [TS_MIN_H, TS_MAX_H]. Past TS_MAX_H the rows get thinner
 * and only every few rows keep their label, so that labels never
 * overlap (TS_MAX_H holds 258 labelled rows).
 */
#define TS_BASE_H	150
#define TS_ROW_H	18
#define TS_MIN_H	600
#define TS_MAX_H	4800
#define TS_LABEL_MIN	14	/* rows this high (px) show their shares, */
#define TS_SHARE_MIN	4.0	/* those this wide (%) */

/* Okabe-Ito colours (told apart with any colour vision), and greys. */
static const struct {
	const char *color;
	bool dark;		/* white text on it */
} st_style[VMLAT_NR_STATES] = {
	[VMLAT_GUEST]		= { "#009E73", true },
	[VMLAT_KERNEL]		= { "#0072B2", true },
	[VMLAT_USER]		= { "#56B4E9", false },
	[VMLAT_PREEMPTED]	= { "#D55E00", true },
	[VMLAT_WAIT]		= { "#CC79A7", false },
	[VMLAT_IDLE]		= { "#C8C8C8", false },
	[VMLAT_BLOCKED]		= { "#E69F00", false },
};

static const char *const hk_color[NR_HK] = {
	[VMLAT_HIST_PREEMPT]	= "#D55E00",	/* as preempted time */
	[VMLAT_HIST_WAIT]	= "#CC79A7",	/* as wait */
	[VMLAT_HIST_EXIT]	= "#0072B2",	/* as kernel */
	[HK_NESTED(VMLAT_NH_L2_EXIT_L0)]	= "#009E73",
	[HK_NESTED(VMLAT_NH_L2_EXIT_L1)]	= "#56B4E9",
	[HK_NESTED(VMLAT_NH_WAKEUP_L2)]	= "#E69F00",
	[HK_NESTED(VMLAT_NH_WAKEUP_L1)]	= "#000000",
	[HK_IRQ(VMLAT_IRQ_TIMER)]	= "#882255",
	[HK_IRQ(VMLAT_IRQ_IPI)]		= "#117733",
	[HK_IRQ(VMLAT_IRQ_DEVICE)]	= "#999933",
	[HK_IRQ(VMLAT_IRQ_OTHER)]	= "#AA4499",
	[HK_EXPIRE(VMLAT_EXPIRE_EARLY)]	= "#44AA99",
	[HK_EXPIRE(VMLAT_EXPIRE_LATE)]	= "#661100",
};

struct plot {
	struct common_params common;	/* the VM; -d, 0: the totals */
	const char *dir;
	const char *ext;		/* "png", "svg" */
	struct window w;
	size_t *sel;			/* the indices of w.cur's VMs to plot */
	size_t nr_sel;
	char **files;			/* written, in the order of the script */
	size_t nr_files, max_files;
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: vmlat plot [-o DIR] [-t png|svg] [-d DURATION] [VM]\n\n"
		"Plots, drawn by gnuplot, into DIR (default .; created if missing):\n"
		"  timeshare.EXT           each VM's vCPU time by state (100%% = its\n"
		"                          observed time), one bar per VM\n"
		"  hist-NAME-PID-ID.EXT    per VM, its latency distributions (preempt,\n"
		"                          wait, exit; and the nested kinds for VMs\n"
		"                          running a nested guest) on log axes\n"
		"Prints the files written, one per line.\n\n"
		"  -o DIR       write the plots into DIR\n"
		"  -t png|svg   the format (default png; %d pixels wide)\n"
		"  -d DURATION  what happened over DURATION (10s, 500ms, 2m) between\n"
		"               two reads, rather than the totals since vmlat was\n"
		"               loaded; VMs that had exited before are left out\n"
		"  VM           only the VMs of this name, pid or id:N\n",
		PLOT_W);
}

static void *plot_alloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size);

	if (!p) {
		fprintf(stderr, "vmlat: plot: out of memory\n");
		exit(EXIT_ERR);
	}
	return p;
}

static void add_file(struct plot *p, const char *name)
{
	if (p->nr_files == p->max_files) {
		size_t n = p->max_files ? 2 * p->max_files : 16;
		char **f = realloc(p->files, n * sizeof(*f));

		if (!f) {
			fprintf(stderr, "vmlat: plot: out of memory\n");
			exit(EXIT_ERR);
		}
		p->files = f;
		p->max_files = n;
	}
	p->files[p->nr_files] = strdup(name);
	if (!p->files[p->nr_files]) {
		fprintf(stderr, "vmlat: plot: out of memory\n");
		exit(EXIT_ERR);
	}
	p->nr_files++;
}

/* --- gnuplot: finding it, running it, reading its complaint ------------ */

/* The gnuplot that execvp() would run into @buf: 0, or -1 if none. */
static int find_gnuplot(char *buf, size_t n)
{
	const char *path = getenv("PATH"), *s, *e;
	struct stat st;

	if (!path)
		path = "/bin:/usr/bin";
	for (s = path; ; s = e + 1) {
		size_t len;

		e = strchrnul(s, ':');
		len = (size_t)(e - s);
		if (!len)
			snprintf(buf, n, "./gnuplot");
		else if ((size_t)snprintf(buf, n, "%.*s/gnuplot", (int)len, s) >= n)
			buf[0] = 0;
		if (buf[0] && !stat(buf, &st) && S_ISREG(st.st_mode) &&
		    !access(buf, X_OK))
			return 0;
		if (!*e)
			return -1;
	}
}

struct gnuplot {
	pid_t pid;
	FILE *in;		/* its script */
	int err;		/* its stdout and stderr (a memfd), or -1 */
};

static int gnuplot_start(struct gnuplot *g, const char *exe, const char *dir)
{
	int fds[2];

	g->err = memfd_create("vmlat-gnuplot", MFD_CLOEXEC);
	if (pipe2(fds, O_CLOEXEC)) {
		fprintf(stderr, "vmlat: plot: pipe: %s\n", strerror(errno));
		return -1;
	}
	g->pid = fork();
	if (g->pid < 0) {
		fprintf(stderr, "vmlat: plot: fork: %s\n", strerror(errno));
		close(fds[0]);
		close(fds[1]);
		return -1;
	}
	if (!g->pid) {
		int out = g->err >= 0 ? g->err : open("/dev/null", O_WRONLY);

		if (dup2(fds[0], STDIN_FILENO) < 0 || out < 0 ||
		    dup2(out, STDOUT_FILENO) < 0 || dup2(out, STDERR_FILENO) < 0)
			_exit(126);
		if (chdir(dir)) {
			dprintf(STDERR_FILENO, "%s: %s\n", dir, strerror(errno));
			_exit(126);
		}
		/* -d: the default settings, not the user's ~/.gnuplot */
		execl(exe, "gnuplot", "-d", (char *)NULL);
		_exit(127);
	}
	close(fds[0]);
	g->in = fdopen(fds[1], "w");
	if (!g->in) {
		fprintf(stderr, "vmlat: plot: %s\n", strerror(errno));
		close(fds[1]);
		return -1;
	}
	return 0;
}

/* gnuplot's error: the last "line N: ..." it printed, else its last line. */
static void gnuplot_error(int fd, char *msg, size_t n)
{
	char buf[8192], *line, *save = NULL;
	ssize_t len;
	off_t size;

	snprintf(msg, n, "no message");
	if (fd < 0)
		return;
	size = lseek(fd, 0, SEEK_END);
	if (size < 0)
		return;
	/* Its last lines: an error ends gnuplot. */
	size -= (off_t)sizeof(buf) - 1;
	len = pread(fd, buf, sizeof(buf) - 1, size > 0 ? size : 0);
	if (len <= 0)
		return;
	buf[len] = 0;
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char *t = line + strspn(line, " \t");
		size_t l = strlen(t);

		while (l && (t[l - 1] == ' ' || t[l - 1] == '\r'))
			t[--l] = 0;
		if (!l || *t == '^' || !strncmp(t, "gnuplot>", 8))
			continue;
		if (!strncmp(t, "line ", 5) || !strstr(msg, "line "))
			snprintf(msg, n, "%s", t);
	}
}

/* Close its script and wait: 0 if it drew everything, else -1 (said). */
static int gnuplot_finish(struct gnuplot *g)
{
	bool werr;
	int status;
	char msg[512];
	pid_t r;

	werr = ferror(g->in) != 0;
	if (fclose(g->in))
		werr = true;
	while ((r = waitpid(g->pid, &status, 0)) < 0 && errno == EINTR)
		;
	if (r < 0) {
		fprintf(stderr, "vmlat: plot: waitpid: %s\n", strerror(errno));
		return -1;
	}
	if (WIFEXITED(status) && WEXITSTATUS(status) == 127) {
		fprintf(stderr, "vmlat: gnuplot not found: " GNUPLOT_HINT "\n");
		return -1;
	}
	if (WIFSIGNALED(status)) {
		fprintf(stderr, "vmlat: plot: gnuplot was killed by signal %d\n",
			WTERMSIG(status));
		return -1;
	}
	if (WEXITSTATUS(status) || werr) {
		gnuplot_error(g->err, msg, sizeof(msg));
		fprintf(stderr, "vmlat: plot: gnuplot failed (exit %d): %s\n",
			WEXITSTATUS(status), msg);
		return -1;
	}
	return 0;
}

/* --- script text ------------------------------------------------------ */

/*
 * @s as a gnuplot string constant: single-quoted (no escapes but '' for
 * '), a control character as '?', bytes that are not UTF-8 as U+FFFD
 * (a name from a command line can be any bytes; SVG must be UTF-8).
 */
static void put_str(FILE *f, const char *s)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t n = strlen(s), l;
	unsigned int bad;

	fputc('\'', f);
	while (n) {
		l = *u < 0x80 ? 1 : vmlat_utf8_seq(u, n, &bad);
		if (!l) {
			fputs("\xef\xbf\xbd", f);
			l = 1;
		} else if (l == 1 && *u == '\'') {
			fputs("''", f);
		} else if (l == 1 && (*u < 0x20 || *u == 0x7f)) {
			fputc('?', f);
		} else {
			fwrite(u, 1, l, f);
		}
		u += l;
		n -= l;
	}
	fputc('\'', f);
}

/* fmt_ns(), with the micro sign. */
static char *fmt_time(char *buf, size_t n, uint64_t ns)
{
	size_t l;

	fmt_ns(buf, n, ns);
	l = strlen(buf);
	if (l > 3 && !strcmp(buf + l - 3, " us") && l + 1 < n)
		strcpy(buf + l - 2, "\xc2\xb5s");
	return buf;
}

/* "over 1.35 s" or "totals since vmlat was loaded", for titles. */
static char *what_span(const struct plot *p, char *buf, size_t n)
{
	char t[32];
	uint64_t ns = window_ns(&p->w) ?: p->common.duration_ms * 1000000;

	if (!p->w.two) {
		snprintf(buf, n, "totals since vmlat was loaded (or reset)");
		return buf;
	}
	snprintf(buf, n, "over %s (two reads)", fmt_time(t, sizeof(t), ns));
	return buf;
}

static void put_terminal(const struct plot *p, FILE *f, int h)
{
	if (!strcmp(p->ext, "svg"))
		fprintf(f, "set terminal svg size %d,%d fixed font \"sans,10\" "
			"noenhanced background rgb 'white'\n", PLOT_W, h);
	else
		fprintf(f, "set terminal pngcairo size %d,%d font \"sans,10\" "
			"noenhanced background rgb 'white'\n", PLOT_W, h);
}

/* @name with anything but [A-Za-z0-9._-] as '_'. */
static void safe_name(char *buf, size_t n, const char *name)
{
	size_t i;

	for (i = 0; name[i] && i + 1 < n; i++) {
		char c = name[i];

		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		    (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-')
			buf[i] = c;
		else
			buf[i] = '_';
	}
	buf[i] = 0;
}

/*
 * What to plot of the selected VM @i: its totals, or its difference
 * over the window (in @tmp, for put_vm()).
 */
static const struct vm *get_vm(const struct plot *p, size_t i, struct vm *tmp)
{
	const struct vm *v = &p->w.cur.vms[p->sel[i]];

	if (!p->w.two)
		return v;
	window_vm(tmp, &p->w, v);
	return tmp;
}

static void put_vm(const struct plot *p, struct vm *tmp)
{
	if (p->w.two)
		vm_free(tmp);
}

/* --- timeshare -------------------------------------------------------- */

static bool pid_shared(const struct plot *p, size_t i)
{
	int pid = p->w.cur.vms[p->sel[i]].pid;
	size_t j;

	for (j = 0; j < p->nr_sel; j++)
		if (j != i && p->w.cur.vms[p->sel[j]].pid == pid)
			return true;
	return false;
}

static void timeshare_script(struct plot *p, FILE *f)
{
	size_t n = p->nr_sel, i, every;
	double row_px;
	char buf[128];
	int h, s;

	h = TS_BASE_H + TS_ROW_H * (int)(n < 10000 ? n : 10000);
	h = h < TS_MIN_H ? TS_MIN_H : h > TS_MAX_H ? TS_MAX_H : h;
	row_px = (double)(h - TS_BASE_H) / (double)n;
	/* Label every row that has room; past that every few. */
	every = row_px >= TS_ROW_H ? 1 : (size_t)ceil(TS_ROW_H / row_px);

	snprintf(buf, sizeof(buf), "timeshare.%s", p->ext);
	add_file(p, buf);
	put_terminal(p, f, h);
	fprintf(f, "set output '%s'\n", buf);
	/*
	 * Title, key, x2 axis, bars from the top down, placed in pixels: the
	 * title and key gnuplot places would overlap at the plot's height.
	 */
	fprintf(f, "set label 1 'vCPU time of each VM by state: ' . ");
	put_str(f, what_span(p, buf, sizeof(buf)));
	fprintf(f, " at screen 0.5, screen %.5f center font ',11'\n"
		"set xlabel \"share of the VM's observed vCPU time (%%); kernel, "
		"user: exit handling in KVM, in the VMM\"\n"
		"set xrange [0:100]\n"
		"set yrange [-0.6:%zu.6]\n"
		"set xtics 10 nomirror out\n"
		"set mxtics 2\n"
		"set x2tics 10 mirror out\n"
		"set x2range [0:100]\n"
		"set grid xtics lc rgb '#d0d0d0'\n"
		"set key at screen 0.5, screen %.5f center top horizontal "
		"maxrows 1 Left reverse samplen 2 width 2\n"
		"set tmargin at screen %.5f\n"
		"set style fill solid 1.0 border lc rgb 'white'\n"
		"set border 3\n",
		1 - 16.0 / h, n - 1, 1 - 32.0 / h, 1 - 90.0 / h);
	/* The first VM on top. */
	fprintf(f, "set ytics nomirror scale 0 (");
	for (i = 0; i < n; i++) {
		const struct vm *v = &p->w.cur.vms[p->sel[i]];
		char label[256];
		int l;

		if (i % every)
			continue;
		l = snprintf(label, sizeof(label), "%s (pid %d", v->name,
			     v->pid);
		if (pid_shared(p, i))
			l += snprintf(label + l, sizeof(label) - (size_t)l,
				      ", id %u", v->id);
		snprintf(label + l, sizeof(label) - (size_t)l, "%s)",
			 v->exited ? ", exited" : "");
		if (i)
			fputs(", \\\n  ", f);
		put_str(f, label);
		fprintf(f, " %zu", n - 1 - i);
	}
	fprintf(f, ")\n");

	/* Per row: y, then each state's [from, to) in per cent (NaN: none). */
	fprintf(f, "$ts << EOD\n");
	for (i = 0; i < n; i++) {
		struct vm tmp;
		const struct vm *v = get_vm(p, i, &tmp);
		double obs = (double)v->st.observed_ns, at = 0, to;

		fprintf(f, "%zu", n - 1 - i);
		for (s = 0; s < VMLAT_NR_STATES; s++) {
			to = obs ? at + 100.0 * (double)v->st.ns[s] / obs : 0;
			if (to > 100)
				to = 100;
			if (to > at)
				fprintf(f, " %.4f %.4f", at, to);
			else
				fprintf(f, " NaN NaN");
			at = to > at ? to : at;
		}
		fprintf(f, "\n");
		put_vm(p, &tmp);
	}
	fprintf(f, "EOD\n");

	/* The shares wide enough to be written in their segment. */
	fprintf(f, "$tl << EOD\n");
	for (i = 0; row_px >= TS_LABEL_MIN && i < n; i++) {
		struct vm tmp;
		const struct vm *v = get_vm(p, i, &tmp);
		double obs = (double)v->st.observed_ns, at = 0, w;

		if (!v->st.observed_ns)
			fprintf(f, "50 %zu \"no vCPU time observed\" %d\n",
				n - 1 - i, 0x707070);
		for (s = 0; obs && s < VMLAT_NR_STATES; s++) {
			w = 100.0 * (double)v->st.ns[s] / obs;
			if (w >= TS_SHARE_MIN && at + w <= 100.5)
				fprintf(f, "%.4f %zu \"%.0f%%\" %d\n",
					at + w / 2, n - 1 - i, w,
					st_style[s].dark ? 0xffffff : 0);
			at += w;
		}
		put_vm(p, &tmp);
	}
	fprintf(f, "EOD\n");

	fprintf(f, "plot ");
	for (s = 0; s < VMLAT_NR_STATES; s++) {
		int c = 2 + 2 * s;

		fprintf(f, "$ts using (($%d+$%d)/2):1:%d:%d:($1-0.4):($1+0.4) "
			"with boxxyerror lc rgb '%s' title ",
			c, c + 1, c, c + 1, st_style[s].color);
		put_str(f, state_names[s]);
		fprintf(f, ", \\\n  ");
	}
	fprintf(f, "$tl using 1:2:3:4 with labels tc rgb variable "
		"font \",8\" notitle\n"
		"unset output\n"
		"undefine $ts $tl\n"
		"reset\n");
}

/* --- histograms ------------------------------------------------------- */

/* Kind @k of @v is plotted: not empty; a nested kind, of a nested VM. */
static bool hk_shown(const struct vm *v, int k)
{
	if (hk_is_nested(k) && v->nested.nr_vcpus <= 0)
		return false;
	return v->h[k].count && v->h[k].nr;
}

/*
 * Where bucket @b of @h is drawn, in ns: the one below 100 ns [0, 100)
 * as [50, 100) (a log axis has no 0), the overflow one (10 s up) up to
 * the largest sample.
 */
static void bucket_span(const struct hist *h, const struct bucket *b,
			double *lo, double *hi)
{
	uint64_t l = b->lo_ns, u = b->hi_ns;

	if (!l)
		l = u > 1 ? u / 2 : 1;
	if (u <= l)
		u = l + 1;
	if (u / 2 > l) {
		u = h->max_ns + 1;
		if (u < l + l / 16 + 1)
			u = l + l / 16 + 1;
	}
	*lo = (double)l;
	*hi = (double)u;
}

/* @m 10^@e ns for people: "1 ns", "20 µs", "500 ms", "10 s". */
static void tic_label(char *buf, size_t n, int m, int e)
{
	static const char *const unit[] = { "ns", "\xc2\xb5s", "ms", "s" };
	int u = e < 0 ? 0 : e / 3 > 3 ? 3 : e / 3;

	snprintf(buf, n, "%g %s", m * pow(10, e - 3 * u), unit[u]);
}

/*
 * The log x axis, in µs, for data from @lo to @hi ns (a margin added):
 * a tic at each 1..9 x 10^e, labelled at each power of ten, and at 2
 * and 5 x 10^e too when the axis spans less than two and a half decades.
 */
static void put_xaxis(FILE *f, double lo, double hi)
{
	char t[32];
	bool dense;
	int e, m, nr = 0;
	double x;

	lo /= 1.6;
	hi *= 1.6;
	dense = log10(hi / lo) < 2.5;
	fprintf(f, "set logscale x 10\n"
		"set xrange [%.9g:%.9g]\n"
		"set xtics nomirror out (", lo / 1000, hi / 1000);
	for (e = (int)floor(log10(lo)); e <= (int)ceil(log10(hi)); e++) {
		for (m = 1; m < 10; m++) {
			x = m * pow(10, e);
			if (x < lo || x > hi)
				continue;
			if (m == 1 || (dense && (m == 2 || m == 5))) {
				tic_label(t, sizeof(t), m, e);
				fprintf(f, "%s'%s' %.9g", nr++ ? ", " : "", t,
					x / 1000);
			} else {
				fprintf(f, "%s'' %.9g 1", nr++ ? ", " : "",
					x / 1000);
			}
		}
	}
	fprintf(f, ")\n");
}

/* A step line per bucket, dropping to @floor between separate buckets. */
static void hist_block(FILE *f, int k, const struct hist *h, double floor_y)
{
	double lo, hi, prev = -1;
	size_t i;

	fprintf(f, "$h%d << EOD\n", k);
	for (i = 0; i < h->nr; i++) {
		bucket_span(h, &h->b[i], &lo, &hi);
		if (lo < prev)		/* never backwards */
			lo = prev;
		if (hi <= lo)
			continue;
		if (lo != prev) {
			if (prev >= 0)
				fprintf(f, "%.9g %g\n", prev / 1000, floor_y);
			fprintf(f, "%.9g %g\n", lo / 1000, floor_y);
		}
		fprintf(f, "%.9g %llu\n%.9g %llu\n",
			lo / 1000, (unsigned long long)h->b[i].count,
			hi / 1000, (unsigned long long)h->b[i].count);
		prev = hi;
	}
	if (prev >= 0)
		fprintf(f, "%.9g %g\n", prev / 1000, floor_y);
	fprintf(f, "EOD\n");
}

static void hist_script(struct plot *p, FILE *f, size_t i)
{
	/*
	 * The y axis starts at 0.5 (a count of 1 stands clear of it); a
	 * bucket's sides go down to 0.1, below it: gnuplot clips them at
	 * the axis and does not draw the runs of empty buckets along it.
	 */
	const double ymin = 0.5, floor_y = 0.1;
	struct vm tmp;
	const struct vm *v = get_vm(p, i, &tmp);
	char name[192], file[256], span[64], t[32];
	double lo, hi, xmin = INFINITY, xmax = 0, cmax = 0;
	int k, m, nr = 0;
	size_t b;

	for (k = 0; k < NR_HK; k++) {
		const struct hist *h = &v->h[k];

		if (!hk_shown(v, k))
			continue;
		nr++;
		bucket_span(h, &h->b[0], &lo, &hi);
		xmin = lo < xmin ? lo : xmin;
		bucket_span(h, &h->b[h->nr - 1], &lo, &hi);
		xmax = hi > xmax ? hi : xmax;
		for (b = 0; b < h->nr; b++)
			if ((double)h->b[b].count > cmax)
				cmax = (double)h->b[b].count;
	}
	if (!nr)
		goto out;

	safe_name(name, sizeof(name), v->name);
	snprintf(file, sizeof(file), "hist-%s-%d-%u.%s", name, v->pid, v->id,
		 p->ext);
	add_file(p, file);
	put_terminal(p, f, HIST_H);
	fprintf(f, "set output '%s'\n", file);

	/* Title: who, then each kind's count and p99, three to a line. */
	snprintf(name, sizeof(name), "%s (pid %d, id %u%s)", v->name, v->pid,
		 v->id, v->exited ? ", exited" : "");
	fprintf(f, "set title ");
	put_str(f, name);
	fprintf(f, " . ");
	put_str(f, ": latency distributions, ");
	fprintf(f, " . ");
	put_str(f, what_span(p, span, sizeof(span)));
	for (k = 0, m = 0; k < NR_HK; k++) {
		if (!hk_shown(v, k))
			continue;
		fprintf(f, " . %s'%s %llu, p99 %s'", m % 3 ? "'     ' . " :
			"\"\\n\" . ", hkind_names[k],
			(unsigned long long)v->h[k].count,
			fmt_time(t, sizeof(t), hist_quantile(&v->h[k], 0.99)));
		m++;
	}
	fprintf(f, "\n");

	put_xaxis(f, xmin, xmax);
	fprintf(f, "set xlabel 'latency (log scale; dashed: each kind''s p99)'\n"
		"set logscale y 10\n"
		"set yrange [%g:%g]\n"
		"set ytics nomirror out\n"
		"set format y '%%.0f'\n"
		"set ylabel 'samples per bucket (log scale)'\n"
		"set grid xtics ytics lc rgb '#d8d8d8'\n"
		"set border 3\n"
		/* one column, two for more than three kinds */
		"set key below center Left reverse vertical maxrows %d "
		"samplen 3 height 1\n",
		ymin, pow(10, floor(log10(cmax) + 1e-9) + 1),
		nr > 3 ? (nr + 1) / 2 : nr);

	for (k = 0; k < NR_HK; k++) {
		double p99;

		if (!hk_shown(v, k))
			continue;
		p99 = (double)hist_quantile(&v->h[k], 0.99) / 1000;
		fprintf(f, "set arrow from %.9g, graph 0 to %.9g, graph 1 "
			"nohead dt 2 lw 1.5 lc rgb '%s' back\n", p99, p99,
			hk_color[k]);
		hist_block(f, k, &v->h[k], floor_y);
	}
	fprintf(f, "plot ");
	for (k = 0, m = 0; k < NR_HK; k++) {
		char what[160];

		if (!hk_shown(v, k))
			continue;
		snprintf(what, sizeof(what), "%s: %s", hkind_names[k],
			 hkind_what[k]);
		fprintf(f, "%s$h%d using 1:2 with lines lw 1.5 lc rgb '%s' title ",
			m++ ? ", \\\n  " : "", k, hk_color[k]);
		put_str(f, what);
	}
	fprintf(f, "\nunset output\n");
	for (k = 0; k < NR_HK; k++)
		if (hk_shown(v, k))
			fprintf(f, "undefine $h%d\n", k);
	fprintf(f, "reset\n");
out:
	put_vm(p, &tmp);
}

/* --- the command ------------------------------------------------------ */

/* mkdir -p @dir, then see that files can be made in it: 0, or -1 (said). */
static int prepare_dir(const char *dir)
{
	char path[PATH_MAX], *s;
	struct stat st;

	if (snprintf(path, sizeof(path), "%s", dir) >= (int)sizeof(path)) {
		fprintf(stderr, "vmlat: plot: %s: %s\n", dir,
			strerror(ENAMETOOLONG));
		return -1;
	}
	for (s = path + 1; ; s++) {
		if (*s && *s != '/')
			continue;
		if (s[-1] != '/') {
			char c = *s;

			*s = 0;
			if (mkdir(path, 0777) && errno != EEXIST) {
				fprintf(stderr, "vmlat: plot: cannot create %s: %s\n",
					path, strerror(errno));
				return -1;
			}
			*s = c;
		}
		if (!*s)
			break;
	}
	if (stat(dir, &st)) {
		fprintf(stderr, "vmlat: plot: %s: %s\n", dir, strerror(errno));
		return -1;
	}
	if (!S_ISDIR(st.st_mode)) {
		fprintf(stderr, "vmlat: plot: %s: %s\n", dir, strerror(ENOTDIR));
		return -1;
	}
	if (access(dir, W_OK | X_OK)) {
		fprintf(stderr, "vmlat: plot: cannot write into %s: %s\n", dir,
			strerror(errno));
		return -1;
	}
	return 0;
}

static int draw(struct plot *p, const char *exe)
{
	struct sigaction ign = { .sa_handler = SIG_IGN }, old;
	struct gnuplot g;
	size_t i;
	int ret;

	if (gnuplot_start(&g, exe, p->dir)) {
		if (g.err >= 0)
			close(g.err);
		return -1;
	}
	/* A gnuplot that dies early is told by its exit status. */
	sigaction(SIGPIPE, &ign, &old);
	fprintf(g.in, "set encoding utf8\n");
	timeshare_script(p, g.in);
	for (i = 0; i < p->nr_sel && !ferror(g.in); i++)
		hist_script(p, g.in, i);
	ret = gnuplot_finish(&g);
	sigaction(SIGPIPE, &old, NULL);
	if (g.err >= 0)
		close(g.err);
	return ret;
}

static int parse_opt(int opt, const char *arg, struct common_params *common)
{
	struct plot *p = container_of(common, struct plot, common);

	switch (opt) {
	case 'o':
		p->dir = arg;
		if (!*p->dir)
			return common_refuse("plot", "-o: an empty name");
		break;
	case 't':
		p->ext = arg;
		if (strcmp(arg, "png") && strcmp(arg, "svg"))
			return common_refuse("plot", "-t %s: the format is png or svg",
					     arg);
		break;
	}
	return 0;
}

static const struct cmd_options plot_cmd = {
	.name = "plot",
	.optstring = "o:t:",
	.duration = true,
	.usage = usage,
	.parse_opt = parse_opt,
};

int cmd_plot(int argc, char **argv)
{
	struct plot p = { .dir = ".", .ext = "png" };
	char exe[PATH_MAX];
	const char *sep;
	int ret;
	size_t i;

	ret = common_parse_options(argc, argv, &plot_cmd, &p.common);
	if (ret >= 0)
		return ret;
	ret = EXIT_ERR;
	if (find_gnuplot(exe, sizeof(exe))) {
		fprintf(stderr, "vmlat: gnuplot not found: " GNUPLOT_HINT "\n");
		return EXIT_ERR;
	}
	if (prepare_dir(p.dir))
		return EXIT_ERR;

	if (window_read(&p.w, p.common.duration_ms))
		goto out;

	/* With -d, a VM that had exited before the interval is left out. */
	p.sel = plot_alloc(p.w.cur.nr_vms, sizeof(*p.sel));
	for (i = 0; i < p.w.cur.nr_vms; i++) {
		const struct vm *v = &p.w.cur.vms[i], *va;

		va = window_prev(&p.w, v);
		if (vm_matches(v, p.common.filter) && !(va && va->exited))
			p.sel[p.nr_sel++] = i;
	}
	if (!p.nr_sel) {
		if (p.common.filter)
			fprintf(stderr, "vmlat: plot: no VM matches '%s' (a name, pid or id:N)%s\n",
				p.common.filter, p.w.two ? " in the interval" : "");
		else if (p.w.two)
			fprintf(stderr, "vmlat: plot: no VM ran in the interval\n");
		else
			fprintf(stderr, "vmlat: plot: vmlat has seen no VMs\n");
		goto out;
	}

	if (draw(&p, exe))
		goto out;
	sep = p.dir[strlen(p.dir) - 1] == '/' ? "" : "/";
	for (i = 0; i < p.nr_files; i++)
		printf("%s%s%s\n", p.dir, sep, p.files[i]);
	ret = fflush(stdout) ? EXIT_ERR : 0;
out:
	for (i = 0; i < p.nr_files; i++)
		free(p.files[i]);
	free(p.files);
	free(p.sel);
	window_free(&p.w);
	return ret;
}
