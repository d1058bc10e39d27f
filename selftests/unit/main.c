// SPDX-License-Identifier: GPL-2.0
/*
 * vmlat_unit: runs vmlat's KUnit suites as a userspace program.
 *
 * The suites are the kernel's own test files (vmlat/<area>_test.c), compiled
 * against the stand-in <kunit/test.h> in include/ and linked with the pure
 * code they test, under ASan and UBSan. This file is the other half of that
 * stand-in: it runs every registered suite the way lib/kunit/test.c does
 * (suite_init, then init/case/exit for each case and each parameter, then
 * suite_exit) and prints the same KTAP, followed by one summary line:
 *
 *	<passed> passed, <failed> failed[, <skipped> skipped]
 *
 * counting leaf results: a plain case counts once, a parameterised case
 * once per parameter. Exit status: 1 if anything failed, 4 (kselftest's
 * "skip") if everything that ran was skipped, else 0.
 *
 * Usage: vmlat_unit [suite_glob[.case_glob]]   (as kunit.filter_glob)
 */
#define _GNU_SOURCE
#include <fnmatch.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <kunit/test.h>

/* Where the running case is: decides what __kunit_abort() may do. */
enum kunit_phase {
	PHASE_NONE,	/* no case running: an abort is a bug in the test */
	PHASE_INIT,	/* in the suite's init */
	PHASE_RUN,	/* in the case */
	PHASE_EXIT,	/* in the suite's exit: an abort must not re-run it */
};

struct kunit_result_stats {
	unsigned long passed;
	unsigned long failed;
	unsigned long skipped;
	unsigned long total;
};

/* A test-managed allocation; the payload follows, maximally aligned. */
struct __kunit_alloc {
	struct __kunit_alloc *next;
	size_t size;
	max_align_t payload[];
};

static struct kunit_suite **registered;
static size_t nr_registered;

/* Indentation of the lines belonging to the running case or parameter. */
static const char *case_indent = KUNIT_SUBTEST_INDENT;

const char *__asan_default_options(void);
const char *__ubsan_default_options(void);

/* Overridable with ASAN_OPTIONS / UBSAN_OPTIONS. */
const char *__asan_default_options(void)
{
	return "detect_leaks=1:detect_stack_use_after_return=1:"
	       "check_initialization_order=1:strict_init_order=1";
}

const char *__ubsan_default_options(void)
{
	return "print_stacktrace=1:halt_on_error=1";
}

static __attribute__((noreturn)) void oom(void)
{
	fprintf(stderr, "vmlat_unit: out of memory\n");
	exit(2);
}

static void *xrealloc(void *ptr, size_t size)
{
	void *p = realloc(ptr, size);

	if (!p)
		oom();
	return p;
}

void __kunit_register_suites(struct kunit_suite *const *suites, size_t n)
{
	registered = xrealloc(registered,
			      (nr_registered + n) * sizeof(*registered));
	memcpy(&registered[nr_registered], suites, n * sizeof(*suites));
	nr_registered += n;
}

/* Prints @text line by line as KTAP diagnostics of the running case. */
static void print_diag(const char *text)
{
	const char *nl;

	for (; *text; text = nl + 1) {
		nl = strchrnul(text, '\n');
		printf("%s# %.*s\n", case_indent, (int)(nl - text), text);
		if (!*nl)
			break;
	}
}

void __kunit_printk(const char *lvl, const char *name, const char *fmt, ...)
{
	char *msg, *line;
	va_list ap;

	(void)lvl;
	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) < 0)
		msg = NULL;
	va_end(ap);
	if (!msg || asprintf(&line, "%s: %s", name, msg) < 0)
		oom();
	print_diag(line);
	free(line);
	free(msg);
}

void __kunit_log(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
}

void __kunit_mark_skipped(struct kunit *test, const char *fmt, ...)
{
	va_list ap;

	test->status = KUNIT_SKIPPED;
	va_start(ap, fmt);
	vsnprintf(test->status_comment, sizeof(test->status_comment), fmt, ap);
	va_end(ap);
}

void __kunit_abort(struct kunit *test)
{
	if (test->try_catch.phase == PHASE_NONE) {
		fprintf(stderr,
			"vmlat_unit: failed assertion or kunit_skip() outside a running case\n");
		abort();
	}
	longjmp(test->try_catch.env, 1);
}

void *kunit_kmalloc_array(struct kunit *test, size_t n, size_t size, gfp_t gfp)
{
	struct __kunit_alloc *a;
	size_t bytes;

	if (__builtin_mul_overflow(n, size, &bytes) ||
	    __builtin_add_overflow(bytes, sizeof(*a), &bytes))
		return NULL;
	/* Exactly the size asked for, so ASan sees any overrun. */
	a = malloc(bytes);
	if (!a)
		return NULL;
	a->size = bytes - sizeof(*a);
	if (gfp & __GFP_ZERO)
		memset(a->payload, 0, a->size);
	a->next = test->allocs;
	test->allocs = a;
	return a->payload;
}

void kunit_kfree(struct kunit *test, const void *ptr)
{
	struct __kunit_alloc **pp, *a;

	if (!ptr)
		return;
	for (pp = &test->allocs; (a = *pp); pp = &a->next) {
		if ((const void *)a->payload == ptr) {
			*pp = a->next;
			free(a);
			return;
		}
	}
	KUNIT_FAIL(test, "kunit_kfree: %p already freed or not allocated by kunit",
		   ptr);
}

void kunit_cleanup(struct kunit *test)
{
	struct __kunit_alloc *a;

	while ((a = test->allocs)) {
		test->allocs = a->next;
		free(a);
	}
}

/* ---- failure reports ---------------------------------------------- */

static void put_int(char *buf, size_t size, unsigned long long bits,
		    enum __kunit_int_kind kind)
{
	switch (kind) {
	case __KUNIT_INT_BOOL:
		snprintf(buf, size, "%s", bits ? "true" : "false");
		break;
	case __KUNIT_INT_SIGNED:
		snprintf(buf, size, "%lld", (long long)bits);
		break;
	case __KUNIT_INT_UNSIGNED:
		snprintf(buf, size, "%llu", bits);
		break;
	}
}

/* A C string literal for @s, so that invisible differences show. */
static void put_quoted(FILE *f, const char *s)
{
	if (!s) {
		fputs("NULL", f);
		return;
	}
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = *s;

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c == '\n')
			fputs("\\n", f);
		else if (c == '\t')
			fputs("\\t", f);
		else if (c < 0x20 || c >= 0x7f)
			fprintf(f, "\\x%02x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

/* Kernel KUnit omits "x == 5" when the expression was the literal 5. */
static void report_int(FILE *f, const char *text, unsigned long long bits,
		       enum __kunit_int_kind kind)
{
	char val[32];

	put_int(val, sizeof(val), bits, kind);
	if (strcmp(text, val))
		fprintf(f, "    %s == %s\n", text, val);
}

static void report_str(FILE *f, const char *text, const char *s)
{
	char *quoted = NULL;
	size_t len = 0;
	FILE *q;

	q = open_memstream(&quoted, &len);
	if (!q)
		oom();
	put_quoted(q, s);
	fclose(q);
	/* A literal that says what it is needs no second line. */
	if (strcmp(text, quoted))
		fprintf(f, "    %s == %s\n", text, quoted);
	free(quoted);
}

#define HEXDUMP_ROW	16
#define HEXDUMP_ALL	256	/* bigger buffers: only rows near the difference */

static void report_hexdump(FILE *f, const char *text, const unsigned char *buf,
			   const unsigned char *other, size_t size,
			   size_t first_diff)
{
	size_t from = 0, to = size, i;

	if (size > HEXDUMP_ALL) {
		from = first_diff / HEXDUMP_ROW * HEXDUMP_ROW;
		from = from >= HEXDUMP_ROW ? from - HEXDUMP_ROW : 0;
		to = from + 4 * HEXDUMP_ROW < size ? from + 4 * HEXDUMP_ROW : size;
	}
	fprintf(f, "    %s ==\n", text);
	for (i = from; i < to; i++) {
		if (i % HEXDUMP_ROW == 0)
			fprintf(f, "%s    %04zx:", i == from ? "" : "\n", i);
		fprintf(f, buf[i] != other[i] ? "<%02x>" : " %02x ", buf[i]);
	}
	fputc('\n', f);
	if (from || to < size)
		fprintf(f, "    (bytes %zu..%zu of %zu shown)\n", from, to - 1, size);
}

static void report_mem(FILE *f, const struct __kunit_fail_info *info)
{
	const unsigned char *l = info->left_ptr, *r = info->right_ptr;
	size_t diff;

	if (!l || !r) {
		fprintf(f, "Expected %s is not null, but is\n",
			l ? info->right_text : info->left_text);
		return;
	}
	fprintf(f, "Expected %s %s %s, but\n", info->left_text, info->op_text,
		info->right_text);
	for (diff = 0; diff < info->size && l[diff] == r[diff]; diff++)
		;
	if (diff == info->size) {
		fprintf(f, "    all %zu bytes are equal\n", info->size);
		return;
	}
	fprintf(f, "    first difference at byte %zu of %zu\n", diff, info->size);
	report_hexdump(f, info->left_text, l, r, info->size, diff);
	report_hexdump(f, info->right_text, r, l, info->size, diff);
}

static void report(FILE *f, struct kunit *test,
		   const struct __kunit_fail_info *info)
{
	fprintf(f, "%s: %s FAILED at %s:%d\n", test->name,
		info->type == KUNIT_ASSERTION ? "ASSERTION" : "EXPECTATION",
		info->file, info->line);

	switch (info->kind) {
	case __KUNIT_FAIL_MSG:
		break;
	case __KUNIT_FAIL_UNARY:
		fprintf(f, "Expected %s to be %s, but is %s\n", info->left_text,
			info->want_true ? "true" : "false",
			info->want_true ? "false" : "true");
		break;
	case __KUNIT_FAIL_INT:
		fprintf(f, "Expected %s %s %s, but\n", info->left_text,
			info->op_text, info->right_text);
		report_int(f, info->left_text, info->left_bits, info->left_kind);
		report_int(f, info->right_text, info->right_bits,
			   info->right_kind);
		break;
	case __KUNIT_FAIL_PTR:
		fprintf(f, "Expected %s %s %s, but\n", info->left_text,
			info->op_text, info->right_text);
		fprintf(f, "    %s == %p\n", info->left_text, info->left_ptr);
		if (strcmp(info->right_text, "NULL"))
			fprintf(f, "    %s == %p\n", info->right_text,
				info->right_ptr);
		break;
	case __KUNIT_FAIL_STR:
		fprintf(f, "Expected %s %s %s, but\n", info->left_text,
			info->op_text, info->right_text);
		report_str(f, info->left_text, info->left_ptr);
		report_str(f, info->right_text, info->right_ptr);
		break;
	case __KUNIT_FAIL_MEM:
		report_mem(f, info);
		break;
	case __KUNIT_FAIL_NOT_ERR:
		if (!info->left_ptr)
			fprintf(f, "Expected %s is not null, but is\n",
				info->left_text);
		else
			fprintf(f, "Expected %s is not error, but is: %ld\n",
				info->left_text, (long)(intptr_t)info->left_ptr);
		break;
	}
}

void __kunit_do_failed(struct kunit *test, const struct __kunit_fail_info *info,
		       const char *fmt, ...)
{
	char *text = NULL;
	size_t len = 0;
	va_list ap;
	FILE *f;

	kunit_set_failure(test);

	f = open_memstream(&text, &len);
	if (!f)
		oom();
	report(f, test, info);
	if (fmt) {
		va_start(ap, fmt);
		vfprintf(f, fmt, ap);
		va_end(ap);
	}
	fclose(f);
	print_diag(text);
	free(text);
}

/* ---- running suites ------------------------------------------------- */

static void stats_add(struct kunit_result_stats *stats, enum kunit_status status)
{
	switch (status) {
	case KUNIT_SUCCESS:
		stats->passed++;
		break;
	case KUNIT_FAILURE:
		stats->failed++;
		break;
	case KUNIT_SKIPPED:
		stats->skipped++;
		break;
	}
	stats->total++;
}

static void stats_sum(struct kunit_result_stats *total,
		      const struct kunit_result_stats *add)
{
	total->passed += add->passed;
	total->failed += add->failed;
	total->skipped += add->skipped;
	total->total += add->total;
}

static void print_stats(const char *indent, const char *name,
			const struct kunit_result_stats *stats)
{
	printf("%s# %s: pass:%lu fail:%lu skip:%lu total:%lu\n", indent, name,
	       stats->passed, stats->failed, stats->skipped, stats->total);
}

static void print_result(const char *indent, enum kunit_status status,
			 size_t num, const char *name, const char *comment)
{
	printf("%s%s %zu %s", indent, kunit_status_to_ok_not_ok(status), num,
	       name);
	if (status == KUNIT_SKIPPED)
		printf(" # SKIP%s%s", *comment ? " " : "", comment);
	putchar('\n');
}

/*
 * One run of @tc (one parameter of it, if parameterised), as the kernel
 * does it: init, the case, exit; a failed assertion or kunit_skip() jumps
 * back here, and exit still runs, once. Memory from kunit_kmalloc() is
 * freed after exit.
 */
static void run_case_once(struct kunit_suite *suite, struct kunit_case *tc,
			  struct kunit *test)
{
	test->name = tc->name;
	test->status = KUNIT_SUCCESS;
	test->status_comment[0] = '\0';
	test->allocs = NULL;

	test->try_catch.phase = PHASE_INIT;
	if (setjmp(test->try_catch.env) == 0) {
		int err = suite->init ? suite->init(test) : 0;

		if (err) {
			kunit_err(test, "failed to initialize: %d", err);
			kunit_set_failure(test);
		} else {
			test->try_catch.phase = PHASE_RUN;
			tc->run_case(test);
		}
	}
	if (test->try_catch.phase != PHASE_EXIT) {
		test->try_catch.phase = PHASE_EXIT;
		if (suite->exit) {
			if (setjmp(test->try_catch.env) == 0)
				suite->exit(test);
		}
	}
	test->try_catch.phase = PHASE_NONE;
	kunit_cleanup(test);

	if (test->status == KUNIT_FAILURE)
		tc->status = KUNIT_FAILURE;
	else if (tc->status != KUNIT_FAILURE && test->status == KUNIT_SUCCESS)
		tc->status = KUNIT_SUCCESS;
}

/* Runs @tc (all its parameters); returns the leaf results. */
static struct kunit_result_stats run_case(struct kunit_suite *suite,
					  struct kunit_case *tc, size_t num)
{
	struct kunit_result_stats stats = { 0 };
	char desc[KUNIT_PARAM_DESC_SIZE];
	struct kunit test = { 0 };

	tc->status = KUNIT_SKIPPED;
	if (!tc->generate_params) {
		case_indent = KUNIT_SUBTEST_INDENT;
		run_case_once(suite, tc, &test);
		stats_add(&stats, test.status);
		print_result(KUNIT_SUBTEST_INDENT, tc->status, num, tc->name,
			     test.status_comment);
		return stats;
	}

	case_indent = KUNIT_SUBSUBTEST_INDENT;
	printf(KUNIT_SUBSUBTEST_INDENT "KTAP version 1\n");
	printf(KUNIT_SUBSUBTEST_INDENT "# Subtest: %s\n", tc->name);
	desc[0] = '\0';
	test.param_value = tc->generate_params(NULL, desc);
	while (test.param_value) {
		test.priv = NULL;
		run_case_once(suite, tc, &test);
		if (!desc[0])
			snprintf(desc, sizeof(desc), "param-%d", test.param_index);
		print_result(KUNIT_SUBSUBTEST_INDENT, test.status,
			     test.param_index + 1, desc, test.status_comment);
		stats_add(&stats, test.status);
		desc[0] = '\0';
		test.param_value = tc->generate_params(test.param_value, desc);
		test.param_index++;
	}
	case_indent = KUNIT_SUBTEST_INDENT;
	if (!stats.total) {
		/* Not silently nothing: a case without parameters is a skip. */
		snprintf(test.status_comment, sizeof(test.status_comment),
			 "no parameters");
		stats_add(&stats, KUNIT_SKIPPED);
	}
	print_stats(KUNIT_SUBTEST_INDENT, tc->name, &stats);
	print_result(KUNIT_SUBTEST_INDENT, tc->status, num, tc->name,
		     test.status_comment);
	return stats;
}

static bool case_selected(const struct kunit_case *tc, const char *case_glob)
{
	return !case_glob || !fnmatch(case_glob, tc->name, 0);
}

static size_t nr_selected(struct kunit_suite *suite, const char *case_glob)
{
	struct kunit_case *tc;
	size_t n = 0;

	kunit_suite_for_each_test_case(suite, tc)
		n += case_selected(tc, case_glob);
	return n;
}

/* Runs @suite as kunit_run_tests() does; adds its leaf results to @total. */
static void run_suite(struct kunit_suite *suite, size_t num,
		      const char *case_glob, struct kunit_result_stats *total)
{
	struct kunit_result_stats suite_stats = { 0 }, leaf_stats = { 0 };
	enum kunit_status status = KUNIT_SKIPPED;
	struct kunit_case *tc;
	size_t i = 0;

	printf(KUNIT_SUBTEST_INDENT "KTAP version 1\n");
	printf(KUNIT_SUBTEST_INDENT "# Subtest: %s\n", suite->name);
	printf(KUNIT_SUBTEST_INDENT "1..%zu\n", nr_selected(suite, case_glob));

	suite->status_comment[0] = '\0';
	suite->suite_init_err = suite->suite_init ? suite->suite_init(suite) : 0;
	if (suite->suite_init_err) {
		printf(KUNIT_SUBTEST_INDENT "# %s: failed to initialize (%d)\n",
		       suite->name, suite->suite_init_err);
		status = KUNIT_FAILURE;
	}

	kunit_suite_for_each_test_case(suite, tc) {
		struct kunit_result_stats stats = { 0 };

		if (!case_selected(tc, case_glob))
			continue;
		if (suite->suite_init_err) {
			/* Counted, so that the summary shows the damage. */
			tc->status = KUNIT_FAILURE;
			stats_add(&stats, KUNIT_FAILURE);
			print_result(KUNIT_SUBTEST_INDENT, KUNIT_FAILURE, ++i,
				     tc->name, "");
		} else {
			stats = run_case(suite, tc, ++i);
		}
		stats_add(&suite_stats, tc->status);
		stats_sum(&leaf_stats, &stats);
		if (tc->status == KUNIT_FAILURE)
			status = KUNIT_FAILURE;
		else if (tc->status == KUNIT_SUCCESS && status != KUNIT_FAILURE)
			status = KUNIT_SUCCESS;
	}

	if (!suite->suite_init_err && suite->suite_exit)
		suite->suite_exit(suite);

	if (suite_stats.total > 1)
		print_stats(KUNIT_SUBTEST_INDENT, suite->name, &suite_stats);
	if (leaf_stats.total > 1)
		printf(KUNIT_SUBTEST_INDENT
		       "# Totals: pass:%lu fail:%lu skip:%lu total:%lu\n",
		       leaf_stats.passed, leaf_stats.failed,
		       leaf_stats.skipped, leaf_stats.total);
	print_result("", status, num, suite->name, suite->status_comment);
	stats_sum(total, &leaf_stats);
}

int main(int argc, char **argv)
{
	struct kunit_result_stats total = { 0 };
	char *suite_glob = NULL, *case_glob = NULL;
	size_t i, n = 0, num = 0;

	if (argc > 2 || (argc == 2 && argv[1][0] == '-')) {
		fprintf(stderr, "usage: %s [suite_glob[.case_glob]]\n", argv[0]);
		return 2;
	}
	if (argc == 2) {
		suite_glob = argv[1];
		case_glob = strchr(suite_glob, '.');
		if (case_glob)
			*case_glob++ = '\0';
	}

	/* Line by line, so a sanitizer report lands after the last result. */
	setvbuf(stdout, NULL, _IOLBF, 0);

	for (i = 0; i < nr_registered; i++) {
		struct kunit_suite *suite = registered[i];

		if (suite_glob && (fnmatch(suite_glob, suite->name, 0) ||
				   !nr_selected(suite, case_glob)))
			registered[i] = NULL;
		else
			n++;
	}

	printf("KTAP version 1\n");
	printf("1..%zu\n", n);
	for (i = 0; i < nr_registered; i++) {
		if (registered[i])
			run_suite(registered[i], ++num, case_glob, &total);
	}
	free(registered);

	printf("%lu passed, %lu failed", total.passed, total.failed);
	if (total.skipped)
		printf(", %lu skipped", total.skipped);
	printf("\n");

	if (total.failed)
		return 1;
	return total.skipped && !total.passed ? 4 : 0;
}
