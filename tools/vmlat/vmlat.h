/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The vmlat command: what its subcommands share.
 */
#ifndef VMLAT_CMD_H
#define VMLAT_CMD_H

#include <getopt.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "snap.h"

/* Exit codes: 0 done, 1 an error (its one-line message on stderr), 2 usage. */
#define EXIT_ERR	1
#define EXIT_USAGE	2

#define container_of(ptr, type, member) \
	((type *)((char *)(ptr) - offsetof(type, member)))
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

/*
 * The command line (common.c), in the way of rtla's: what every command
 * takes is parsed once, for all of them. A command embeds the common
 * parameters in its own (container_of() gets them back).
 */
struct common_params {
	const char *filter;	/* the one VM given (vm_matches()); NULL: all */
	uint64_t duration_ms;	/* -d; 0: none given */
};

/* A command, for common_parse_options(). */
struct cmd_options {
	const char *name;		/* "hist": its refusals name it */
	const char *optstring;		/* its own short options, "k:" */
	const struct option *longopts;	/* its own long ones, or NULL */
	bool duration;			/* -d, --duration DURATION */
	void (*usage)(FILE *f);		/* its -h, --help */
	/*
	 * One of its own options, @arg its value: 0, or the exit status of
	 * common_refuse(). A long option without a short one has a val
	 * above 255.
	 */
	int (*parse_opt)(int opt, const char *arg,
			 struct common_params *common);
};

/*
 * common_parse_inputs() - main()'s: -f FILE, --file FILE and --file=FILE,
 * anywhere, are the documents to read (vmlat_read()); the other arguments
 * go to @rest (room for @argc), their number to @nr_rest. -1 to go on, or
 * the exit status of a refusal.
 */
int common_parse_inputs(int argc, char **argv, char **rest, int *nr_rest);
/*
 * common_parse_options() - @argv of command @c (argv[0] its name): -h and
 * --help print its usage on stdout; -d, --duration into
 * @common->duration_ms if @c->duration; its own options to
 * @c->parse_opt(); then one VM at most, into @common->filter. -1 to go
 * on, or the command's exit status: 0 after its usage, EXIT_USAGE after
 * a refusal.
 */
int common_parse_options(int argc, char **argv, const struct cmd_options *c,
			 struct common_params *common);
/*
 * common_refuse() - the one line of a wrong option of command @cmd (NULL:
 * of vmlat itself), "vmlat: CMD: WHAT (see vmlat CMD -h)"; EXIT_USAGE.
 */
int common_refuse(const char *cmd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* The next file of -f to read, the last one again; NULL: none given. */
const char *common_next_input(void);
/* How many files -f gave (0: the module is read). */
int common_nr_inputs(void);

/*
 * vmlat_read() - the next document: from the files given with -f, one per
 * call (the last one again when they run out), else the module's debugfs
 * file; VM and vCPU names resolved (names.h). On failure prints
 * "vmlat: <what to do>" and returns -1.
 */
int vmlat_read(struct snap *s);
/*
 * vmlat_read_quietly() - the same, the message kept rather than printed
 * (an ncurses screen would wipe it): vmlat_read_error() gives it.
 */
int vmlat_read_quietly(struct snap *s);
const char *vmlat_read_error(void);
/* Wait @ms between two reads: at once when reading -f files. */
void vmlat_wait_ms(uint64_t ms);
/* Reading -f files rather than the module. */
bool vmlat_offline(void);

/*
 * What hist, report and plot show: the module's totals (one read), or
 * what changed over a duration (two reads that far apart).
 */
struct window {
	bool two;		/* two reads: @prev, then @cur */
	struct snap prev;	/* the earlier read (empty for one) */
	struct snap cur;	/* the later read, or the only one */
};

/*
 * window_read() - one read (@dur_ms 0), or two @dur_ms apart. 0; or -1,
 * its message printed (vmlat_read()) and nothing held.
 */
int window_read(struct window *w, uint64_t dur_ms);
/* The VM of the earlier read that @v (of @w->cur) was; NULL if none. */
const struct vm *window_prev(const struct window *w, const struct vm *v);
/* @v (of @w->cur) over the window, into @d: vm_delta() of the two reads. */
void window_vm(struct vm *d, const struct window *w, const struct vm *v);
/* The time between the two reads, by the module's clock; 0 for one. */
uint64_t window_ns(const struct window *w);
void window_free(struct window *w);

/* "10", "10s", "500ms", "2m", "1h" into ms; -1 if it is none of those. */
int parse_duration_ms(const char *s, uint64_t *ms);

/* @ns for people: "812 ns", "3.41 us", "12.0 ms", "1.52 s" (3 digits). */
char *fmt_ns(char *buf, size_t n, uint64_t ns);
/* @part of @whole in per cent, "-" for none of none, into @buf. */
char *fmt_pct(char *buf, size_t n, uint64_t part, uint64_t whole);
/*
 * fmt_name() - a name from the host (a task's, a VM's) as a terminal may
 * show it, into @buf (@n > 0): a control character (C0, DEL, C1) or a
 * maximal subpart of ill-formed UTF-8 becomes '?', as ps(1) shows such a
 * name; cut where @buf ends, never inside a character.
 */
char *fmt_name(char *buf, size_t n, const char *s);
/*
 * name_cols() - the columns of a terminal @s (valid UTF-8 without a
 * control character, as fmt_name() makes it) takes: a wide character
 * (CJK) two, a combining one none, as wcwidth(3) counts them in UTF-8
 * (one each if the C library has no UTF-8 locale).
 */
int name_cols(const char *s);
/*
 * fmt_name_cols() - @s as fmt_name() shows it, in exactly @cols (>= 1)
 * columns of a terminal, into @buf: padded with blanks; if it is wider,
 * cut, a '+' in its last column, as procps top cuts a field too narrow
 * for its value.
 */
char *fmt_name_cols(char *buf, size_t n, const char *s, int cols);
/*
 * name_control() - whether the character of @l bytes at @u (a length
 * vmlat_utf8_seq() gave, 1 for ASCII) is a control character: C0, DEL,
 * or C1 (U+0080-U+009F, as UTF-8 0xc2 0x80-0x9f).
 */
static inline bool name_control(const unsigned char *u, size_t l)
{
	return (l == 1 && (*u < 0x20 || *u == 0x7f)) ||
	       (l == 2 && u[0] == 0xc2 && u[1] < 0xa0);
}

/*
 * preemptor_label() - who @p is, for people: "host task stress[123]",
 * "VM web2 (vCPU 1)", "its own vCPU 0", "CPU 3 waking from idle",
 * using @s's VM names.
 */
char *preemptor_label(char *buf, size_t n, const struct preemptor *p,
		      const struct snap *s);

/* The VMs of @s that @filter names (a name, pid or id; NULL: all). */
bool vm_matches(const struct vm *v, const char *filter);

int cmd_top(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_hist(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_plot(int argc, char **argv);
int cmd_save(int argc, char **argv);

#endif /* VMLAT_CMD_H */
