// SPDX-License-Identifier: GPL-2.0
/*
 * Self-test of the userspace KUnit shim (include/kunit/test.h + main.c).
 *
 * Cases named fail_* (and the parameter fail_three) fail on purpose;
 * shimcheck.sh checks that exactly those fail, that the reports say what
 * they should, and that nothing marked "must not be reached" ran.
 * Built only by `make shimcheck`, never into vmlat_unit.
 */
#include <kunit/test.h>

static int init_calls, exit_calls;
static bool after_expect_reached, after_mark_skipped_reached;

static int shim_init(struct kunit *test)
{
	test->priv = kunit_kzalloc(test, sizeof(int), GFP_KERNEL);
	init_calls++;
	return test->priv ? 0 : -12;
}

static void shim_exit(struct kunit *test)
{
	exit_calls++;
}

static void pass_expectations(struct kunit *test)
{
	static const char buf[] = "abc";
	uint32_t u = 0xffffffff;
	uint64_t big = UINT64_MAX;
	int x = 1, *p = &x;

	KUNIT_SUCCEED(test);
	KUNIT_EXPECT_TRUE(test, x);
	KUNIT_EXPECT_FALSE_MSG(test, x == 2, "x is %d", x);
	KUNIT_EXPECT_EQ(test, x, 1);
	/* C semantics, as in the kernel: -1 converts to u32 first. */
	KUNIT_EXPECT_EQ(test, u, -1);
	KUNIT_EXPECT_NE(test, big, 0);
	KUNIT_EXPECT_LT(test, 1, 2);
	KUNIT_EXPECT_LE(test, 2, 2);
	KUNIT_EXPECT_GT(test, big, u);
	KUNIT_EXPECT_GE(test, u, 0);
	KUNIT_EXPECT_PTR_EQ(test, p, &x);
	KUNIT_EXPECT_PTR_NE(test, p, NULL);
	KUNIT_EXPECT_NULL(test, (void *)NULL);
	KUNIT_EXPECT_NOT_NULL(test, p);
	KUNIT_EXPECT_NOT_ERR_OR_NULL(test, p);
	KUNIT_EXPECT_STREQ(test, buf, "abc");
	KUNIT_EXPECT_STRNEQ_MSG(test, buf, "abd", "%s", "msg");
	KUNIT_EXPECT_MEMEQ(test, buf, "abc", sizeof(buf));
	KUNIT_EXPECT_MEMNEQ(test, buf, "abd", sizeof(buf));
}

static void pass_assertions(struct kunit *test)
{
	const char *s = "x";
	int x = 3;

	KUNIT_ASSERT_TRUE(test, x);
	KUNIT_ASSERT_FALSE(test, !x);
	KUNIT_ASSERT_EQ_MSG(test, x, 3, "%d", x);
	KUNIT_ASSERT_NE(test, x, 4);
	KUNIT_ASSERT_LT(test, x, 4);
	KUNIT_ASSERT_LE(test, x, 3);
	KUNIT_ASSERT_GT(test, x, 2);
	KUNIT_ASSERT_GE(test, x, 3);
	KUNIT_ASSERT_PTR_EQ(test, &x, &x);
	KUNIT_ASSERT_PTR_NE(test, s, NULL);
	KUNIT_ASSERT_NULL(test, (int *)NULL);
	KUNIT_ASSERT_NOT_NULL(test, s);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, s);
	KUNIT_ASSERT_STREQ(test, s, "x");
	KUNIT_ASSERT_STRNEQ(test, s, "y");
	KUNIT_ASSERT_MEMEQ(test, s, "x", 2);
	KUNIT_ASSERT_MEMNEQ(test, s, "y", 2);
}

static void fail_expect_continues(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, 1 + 1, 3);
	after_expect_reached = true;
}

static void fail_assert_aborts(struct kunit *test)
{
	KUNIT_ASSERT_GE(test, 1, 2);
	KUNIT_FAIL(test, "must not be reached");
}

static void fail_messages(struct kunit *test)
{
	static const unsigned char l[4] = { 1, 2, 3, 4 }, r[4] = { 1, 2, 9, 4 };
	const char *s = "a b\n", *null_str = NULL;
	uint64_t big = UINT64_MAX;
	unsigned int small = 1;
	bool b = false;
	int neg = -1;
	int x;

	KUNIT_EXPECT_LT(test, neg, small);	/* -1 becomes UINT_MAX */
	KUNIT_EXPECT_EQ(test, big, 0);
	KUNIT_EXPECT_EQ(test, b, true);
	KUNIT_EXPECT_FALSE(test, 2 > 1);
	KUNIT_EXPECT_TRUE_MSG(test, 0, "ctx %d", 7);
	KUNIT_EXPECT_STREQ(test, s, "a\tb");
	KUNIT_EXPECT_STREQ(test, null_str, "x");
	KUNIT_EXPECT_MEMEQ(test, l, r, sizeof(l));
	KUNIT_EXPECT_NULL(test, &x);
	KUNIT_EXPECT_NOT_ERR_OR_NULL(test, (void *)-22L);
	kunit_kfree(test, &x);
}

static void skip_case(struct kunit *test)
{
	kunit_skip(test, "reason %d", 42);
	KUNIT_FAIL(test, "must not be reached");
}

static void skip_marked_continues(struct kunit *test)
{
	kunit_mark_skipped(test, "marked");
	after_mark_skipped_reached = true;
}

struct shim_param {
	const char *name;
	int value;
};

static const struct shim_param shim_params[] = {
	{ "ok_one", 1 }, { "ok_two", 2 }, { "fail_three", 3 }, { "skip_four", 4 },
};

static void shim_param_desc(const struct shim_param *p, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "%s", p->name);
}

KUNIT_ARRAY_PARAM(shim, shim_params, shim_param_desc);

static void fail_params(struct kunit *test)
{
	const struct shim_param *p = test->param_value;

	if (p->value == 4)
		kunit_skip(test, "four");
	KUNIT_EXPECT_LT(test, p->value, 3);
}

static const int plain_params[] = { 10, 20 };

KUNIT_ARRAY_PARAM(plain, plain_params, NULL);

static void pass_params_default_desc(struct kunit *test)
{
	const int *v = test->param_value;

	KUNIT_EXPECT_EQ(test, *v, 10 * (test->param_index + 1));
}

static void pass_managed_memory(struct kunit *test)
{
	uint32_t *a = kunit_kcalloc(test, 8, sizeof(*a), GFP_KERNEL);
	char *b = kunit_kmalloc(test, 16, GFP_KERNEL);
	int i;

	KUNIT_ASSERT_NOT_NULL(test, a);
	KUNIT_ASSERT_NOT_NULL(test, b);
	for (i = 0; i < 8; i++)
		KUNIT_EXPECT_EQ(test, a[i], 0);
	kunit_kfree(test, b);
	kunit_kfree(test, NULL);
	KUNIT_EXPECT_NULL(test, kunit_kmalloc_array(test, SIZE_MAX, 2, GFP_KERNEL));
	/* a is freed after the case; LeakSanitizer would say otherwise. */
}

/* Runs last: checks what the cases before it left behind. */
static void pass_bookkeeping(struct kunit *test)
{
	KUNIT_EXPECT_TRUE(test, after_expect_reached);
	KUNIT_EXPECT_TRUE(test, after_mark_skipped_reached);
	/* init and exit ran for every case and parameter, aborted or not */
	KUNIT_EXPECT_EQ(test, exit_calls, init_calls - 1);
	KUNIT_EXPECT_EQ(test, init_calls, 15);
	KUNIT_EXPECT_EQ(test, *(int *)test->priv, 0);
	kunit_info(test, "info %d", 99);
}

static struct kunit_case shim_cases[] = {
	KUNIT_CASE(pass_expectations),
	KUNIT_CASE(pass_assertions),
	KUNIT_CASE(fail_expect_continues),
	KUNIT_CASE(fail_assert_aborts),
	KUNIT_CASE(fail_messages),
	KUNIT_CASE(skip_case),
	KUNIT_CASE(skip_marked_continues),
	KUNIT_CASE_PARAM(fail_params, shim_gen_params),
	KUNIT_CASE_PARAM(pass_params_default_desc, plain_gen_params),
	KUNIT_CASE(pass_managed_memory),
	KUNIT_CASE(pass_bookkeeping),
	{}
};

static struct kunit_suite shim_suite = {
	.name = "kunit_shim",
	.init = shim_init,
	.exit = shim_exit,
	.test_cases = shim_cases,
};

static int failing_suite_init(struct kunit_suite *suite)
{
	return -5;
}

static void fail_never_runs(struct kunit *test)
{
	KUNIT_FAIL(test, "must not be reached");
}

static struct kunit_case init_fails_cases[] = {
	KUNIT_CASE(fail_never_runs),
	{}
};

static struct kunit_suite init_fails_suite = {
	.name = "kunit_shim_init_fails",
	.suite_init = failing_suite_init,
	.test_cases = init_fails_cases,
};

kunit_test_suites(&shim_suite, &init_fails_suite);

MODULE_LICENSE("GPL");
