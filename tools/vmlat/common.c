// SPDX-License-Identifier: GPL-2.0
/*
 * The command line, in the way of rtla's common_parse_options(): what
 * every command takes is parsed here, once - -f FILE (anywhere, before
 * the command is known), -h and --help, -d and --duration for the
 * commands that show a window, the one VM a command may be given - and
 * a command's own options go to its parse_opt(). A wrong option is
 * refused in one line, worded alike for every command, and exit status
 * 2:
 *
 *   vmlat: hist: -k bogus: no such kind (see vmlat hist -h)
 */
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "vmlat.h"

#define MAX_INPUTS	64
#define MAX_LONGOPTS	16	/* a command's, the common ones and the end */

static const char *inputs[MAX_INPUTS];
static int nr_inputs, next_input;

bool vmlat_offline(void)
{
	return nr_inputs > 0;
}

int common_nr_inputs(void)
{
	return nr_inputs;
}

const char *common_next_input(void)
{
	const char *path;

	if (!nr_inputs)
		return NULL;
	path = inputs[next_input];
	if (next_input + 1 < nr_inputs)
		next_input++;
	return path;
}

int common_refuse(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "vmlat: %s%s", cmd ?: "", cmd ? ": " : "");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, " (see vmlat %s%s-h)\n", cmd ?: "", cmd ? " " : "");
	return EXIT_USAGE;
}

int common_parse_inputs(int argc, char **argv, char **rest, int *nr_rest)
{
	const char *path;
	int i;

	*nr_rest = 0;
	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-f") || !strcmp(argv[i], "--file")) {
			if (i + 1 >= argc)
				return common_refuse(NULL, "%s needs a value",
						     argv[i]);
			path = argv[++i];
		} else if (!strncmp(argv[i], "--file=", 7)) {
			path = argv[i] + 7;
		} else {
			rest[(*nr_rest)++] = argv[i];
			continue;
		}
		if (nr_inputs == MAX_INPUTS)
			return common_refuse(NULL, "-f %s: at most %d files",
					     path, MAX_INPUTS);
		inputs[nr_inputs++] = path;
	}
	return -1;
}

/*
 * The option getopt_long() refused, as it was written: "--bogus", "-x".
 * A long option's error leaves it at argv[optind - 1], with optopt 0
 * (unknown) or its val; a short option's leaves optopt, the character
 * (long-only options have vals above 255: they cannot be mistaken).
 */
static const char *refused_option(char *buf, size_t n, char **argv,
				  const struct option *longs)
{
	const char *arg = argv[optind - 1];
	size_t len = strcspn(arg, "=");

	if (!strncmp(arg, "--", 2)) {
		if (!optopt)
			return arg;
		for (; longs->name; longs++)
			if (longs->val == optopt && len > 2 &&
			    !strncmp(longs->name, arg + 2, len - 2))
				return arg;
	}
	snprintf(buf, n, "-%c", optopt);
	return buf;
}

int common_parse_options(int argc, char **argv, const struct cmd_options *c,
			 struct common_params *common)
{
	struct option longs[MAX_LONGOPTS] = { 0 };
	const struct option *l;
	char shorts[64], bad[8];
	const char *what;
	size_t n = 0;
	int opt, ret;

	for (l = c->longopts; l && l->name && n < MAX_LONGOPTS - 3; l++)
		longs[n++] = *l;
	longs[n++] = (struct option){ "help", no_argument, NULL, 'h' };
	if (c->duration)
		longs[n++] = (struct option){ "duration", required_argument,
					      NULL, 'd' };
	/* ':' first: a missing value is ':', told apart from the unknown. */
	snprintf(shorts, sizeof(shorts), ":h%s%s", c->duration ? "d:" : "",
		 c->optstring ?: "");

	opterr = 0;
	optind = 1;
	while ((opt = getopt_long(argc, argv, shorts, longs, NULL)) != -1) {
		switch (opt) {
		case 'h':
			c->usage(stdout);
			return 0;
		case ':':
			what = refused_option(bad, sizeof(bad), argv, longs);
			return common_refuse(c->name, "%s needs a value", what);
		case '?':
			what = refused_option(bad, sizeof(bad), argv, longs);
			if (what != bad && optopt)
				return common_refuse(c->name, "%.*s takes no value",
						     (int)strcspn(what, "="),
						     what);
			return common_refuse(c->name, "unknown option '%s'",
					     what);
		case 'd':
			if (c->duration) {
				if (parse_duration_ms(optarg,
						      &common->duration_ms) ||
				    !common->duration_ms)
					return common_refuse(c->name, "-d %s: a duration such as 10s or 1m",
							     optarg);
				break;
			}
			/* A command without a window may take -d itself. */
			/* fall through */
		default:
			ret = c->parse_opt ? c->parse_opt(opt, optarg, common) :
			      EXIT_USAGE;
			if (ret)
				return ret;
			break;
		}
	}
	if (optind < argc)
		common->filter = argv[optind++];
	if (optind < argc)
		return common_refuse(c->name, "one VM at most, not '%s' too",
				     argv[optind]);
	return -1;
}
