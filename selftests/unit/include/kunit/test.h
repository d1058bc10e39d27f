/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Userspace stand-in for the kernel's <kunit/test.h>.
 *
 * vmlat's KUnit suites (vmlat/<area>_test.c) are ordinary KUnit files. This
 * header lets the very same files build into a plain program, run by
 * selftests/unit/main.c under ASan and UBSan, so a mistake in pure logic
 * shows up in a second with a precise report instead of after a kernel
 * build and a boot.
 *
 * The API is the subset of Linux 6.1's KUnit that pure-logic tests use, with
 * the same names, arguments and semantics (6.1, because the debug kernel that
 * runs the real KUnit module is built from it). Beyond 6.1: KUNIT_*_MEMEQ
 * and KUNIT_*_MEMNEQ (6.2), and, as in later kernels, @priv is reset before
 * every parameter and kunit_kfree() of a foreign pointer fails the case.
 * Comparisons are done in the operands' own C types, exactly as in the
 * kernel; only the printing differs: integers print as signed or unsigned
 * according to their type, bools as true/false.
 *
 * Deliberately absent: resources and actions, kunit_get_current_test(),
 * later kernels' KUNIT_ARRAY_PARAM_DESC and KUNIT_CASE_SLOW, timeouts.
 */
#ifndef _KUNIT_TEST_H
#define _KUNIT_TEST_H

#include <errno.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>

/* Lets a test tell that it is not running in the kernel, if it must. */
#define KUNIT_USERSPACE_SHIM 1

/* What the kernel's <kunit/test.h> brings in through other headers. */
#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a) __KUNIT_ARRAY_SIZE(a)
#endif
#ifndef KERN_ERR
#define KERN_ERR	""
#endif
#ifndef KERN_WARNING
#define KERN_WARNING	""
#endif
#ifndef KERN_INFO
#define KERN_INFO	""
#endif
#ifndef GFP_KERNEL
#define GFP_KERNEL	0xcc0u
#endif
#ifndef __GFP_ZERO
#define __GFP_ZERO	0x100u
#endif
typedef unsigned int gfp_t;

/* Linux's strscpy(): copies what fits, always terminates, -E2BIG if cut. */
#ifndef strscpy
static inline ssize_t __kunit_strscpy(char *dst, const char *src, size_t size)
{
	size_t len;

	if (!size)
		return -E2BIG;
	for (len = 0; len < size && src[len]; len++)
		;
	if (len == size) {
		memcpy(dst, src, size - 1);
		dst[size - 1] = '\0';
		return -E2BIG;
	}
	memcpy(dst, src, len + 1);
	return len;
}

#define strscpy(dst, src, size) __kunit_strscpy(dst, src, size)
#endif

/* <linux/module.h> is included by the kernel's header; these are no-ops. */
#define __KUNIT_SWALLOW_SEMICOLON extern int __kunit_no_such_object
#ifndef MODULE_LICENSE
#define MODULE_LICENSE(x)	__KUNIT_SWALLOW_SEMICOLON
#define MODULE_DESCRIPTION(x)	__KUNIT_SWALLOW_SEMICOLON
#define MODULE_AUTHOR(x)	__KUNIT_SWALLOW_SEMICOLON
#define MODULE_IMPORT_NS(x)	__KUNIT_SWALLOW_SEMICOLON
#endif

#define __KUNIT_CAT2(a, b) a##b
#define __KUNIT_CAT(a, b) __KUNIT_CAT2(a, b)
#define __KUNIT_PRINTF(a, b) __attribute__((format(printf, a, b)))

/* Like the kernel's: sizeof(struct { int:-1; }) breaks the build. */
#define __KUNIT_MUST_BE_ARRAY(a)					\
	((int)sizeof(struct { int:(-!!__builtin_types_compatible_p(	\
			__typeof__(a), __typeof__(&(a)[0]))); }))
#define __KUNIT_ARRAY_SIZE(a)						\
	(sizeof(a) / sizeof((a)[0]) + __KUNIT_MUST_BE_ARRAY(a))

/* Size of the buffer a parameter generator may write its description to. */
#define KUNIT_PARAM_DESC_SIZE 128
#define KUNIT_STATUS_COMMENT_SIZE 256
#define KUNIT_SUBTEST_INDENT		"    "
#define KUNIT_SUBSUBTEST_INDENT		"        "

/**
 * enum kunit_status - result of a test case, parameter or suite
 * @KUNIT_SUCCESS: passed (a case starts out passing)
 * @KUNIT_FAILURE: an expectation or assertion failed
 * @KUNIT_SKIPPED: kunit_skip() or kunit_mark_skipped() was called last
 */
enum kunit_status {
	KUNIT_SUCCESS,
	KUNIT_FAILURE,
	KUNIT_SKIPPED,
};

enum kunit_assert_type {
	KUNIT_ASSERTION,
	KUNIT_EXPECTATION,
};

struct kunit;

/**
 * struct kunit_case - one test case; arrays of them end with an empty one
 * @run_case:		the test function
 * @name:		its name, as printed in the KTAP output
 * @generate_params:	NULL, or the parameter generator (KUNIT_CASE_PARAM)
 */
struct kunit_case {
	void (*run_case)(struct kunit *test);
	const char *name;
	const void *(*generate_params)(const void *prev, char *desc);

	/* private: internal use only. */
	enum kunit_status status;
	char *log;
};

#define KUNIT_CASE(test_name) { .run_case = test_name, .name = #test_name }

/*
 * The generator is called with prev == NULL first, then with the value it
 * returned last, until it returns NULL. It may write a description of at
 * most KUNIT_PARAM_DESC_SIZE bytes (NUL included) to desc; "param-<index>"
 * is used otherwise.
 */
#define KUNIT_CASE_PARAM(test_name, gen_params)				\
	{ .run_case = test_name, .name = #test_name,			\
	  .generate_params = gen_params }

/**
 * struct kunit_suite - a named set of test cases sharing init and exit
 * @name:		the suite's name; vmlat's are "vmlat_<area>"
 * @suite_init:		called once before the cases; non-zero fails them all
 * @suite_exit:		called once after the cases if suite_init succeeded
 * @init:		called before every case (and every parameter)
 * @exit:		called after every case, even when @init failed or the
 *			case aborted; never twice
 * @test_cases:		array of cases ending with an empty one
 */
struct kunit_suite {
	const char name[256];
	int (*suite_init)(struct kunit_suite *suite);
	void (*suite_exit)(struct kunit_suite *suite);
	int (*init)(struct kunit *test);
	void (*exit)(struct kunit *test);
	struct kunit_case *test_cases;

	/* private: internal use only */
	char status_comment[KUNIT_STATUS_COMMENT_SIZE];
	char *log;
	int suite_init_err;
};

/* private: how an assertion leaves the case (longjmp back to the runner). */
struct kunit_try_catch {
	jmp_buf env;
	volatile int phase;	/* read again after longjmp() */
};

struct __kunit_alloc;

/**
 * struct kunit - the running instance of a test case
 * @priv: for the test's own use, typically set by the suite's init; reset
 *	  to NULL before every case and every parameter
 */
struct kunit {
	void *priv;

	/* private: internal use only. */
	const char *name;
	char *log;
	struct kunit_try_catch try_catch;
	const void *param_value;
	int param_index;
	enum kunit_status status;
	struct __kunit_alloc *allocs;
	char status_comment[KUNIT_STATUS_COMMENT_SIZE];
};

static inline void kunit_set_failure(struct kunit *test)
{
	test->status = KUNIT_FAILURE;
}

static inline const char *kunit_status_to_ok_not_ok(enum kunit_status status)
{
	return status == KUNIT_FAILURE ? "not ok" : "ok";
}

#define kunit_suite_for_each_test_case(suite, test_case)		\
	for (test_case = (suite)->test_cases; test_case->run_case; test_case++)

/*
 * Registration. The kernel puts the suite pointers in an ELF section read
 * by the module loader; here a constructor hands them to the runner, which
 * runs suites in registration (link) order. Use at file scope, followed by
 * a semicolon, as in the kernel.
 */
void __kunit_register_suites(struct kunit_suite *const *suites, size_t n);

#define __kunit_test_suites(id, ...)					\
	static struct kunit_suite *const __KUNIT_CAT(id, _suites)[] =	\
		{ __VA_ARGS__ };					\
	__attribute__((constructor)) static void			\
	__KUNIT_CAT(id, _register)(void)				\
	{								\
		__kunit_register_suites(__KUNIT_CAT(id, _suites),	\
			__KUNIT_ARRAY_SIZE(__KUNIT_CAT(id, _suites)));	\
	}								\
	__KUNIT_SWALLOW_SEMICOLON

#define kunit_test_suites(...)						\
	__kunit_test_suites(__KUNIT_CAT(__kunit_, __COUNTER__), __VA_ARGS__)
#define kunit_test_suite(suite)	kunit_test_suites(&suite)
#define kunit_test_init_section_suites(...) kunit_test_suites(__VA_ARGS__)
#define kunit_test_init_section_suite(suite) kunit_test_suites(&suite)

/*
 * Test-managed memory: freed after the case (after the suite's exit).
 * Only __GFP_ZERO in @gfp has an effect. Under ASan, an access past @size
 * or after the case is reported.
 */
void *kunit_kmalloc_array(struct kunit *test, size_t n, size_t size, gfp_t gfp);
/* Frees one test-managed allocation early; NULL is ignored, others fail. */
void kunit_kfree(struct kunit *test, const void *ptr);
void kunit_cleanup(struct kunit *test);

static inline void *kunit_kmalloc(struct kunit *test, size_t size, gfp_t gfp)
{
	return kunit_kmalloc_array(test, 1, size, gfp);
}

static inline void *kunit_kzalloc(struct kunit *test, size_t size, gfp_t gfp)
{
	return kunit_kmalloc(test, size, gfp | __GFP_ZERO);
}

static inline void *kunit_kcalloc(struct kunit *test, size_t n, size_t size,
				  gfp_t gfp)
{
	return kunit_kmalloc_array(test, n, size, gfp | __GFP_ZERO);
}

/* private: implemented by the runner (selftests/unit/main.c). */
void __kunit_printk(const char *lvl, const char *name, const char *fmt, ...)
	__KUNIT_PRINTF(3, 4);
void __kunit_log(const char *fmt, ...) __KUNIT_PRINTF(1, 2);
void __kunit_mark_skipped(struct kunit *test, const char *fmt, ...)
	__KUNIT_PRINTF(2, 3);
__attribute__((noreturn)) void __kunit_abort(struct kunit *test);

/*
 * kunit_mark_skipped() marks the case (or the current parameter) skipped and
 * lets it go on; kunit_skip() also ends it, like a failed assertion (the
 * suite's exit still runs). As in the kernel, the status is simply
 * overwritten: a skip after a failed expectation hides the failure, and a
 * failure after a skip makes the case fail.
 */
#define kunit_mark_skipped(test, fmt, ...)				\
	__kunit_mark_skipped(test, fmt, ##__VA_ARGS__)

#define kunit_skip(test, fmt, ...)					\
	do {								\
		struct kunit *__test = (test);				\
									\
		kunit_mark_skipped(__test, fmt, ##__VA_ARGS__);		\
		__kunit_abort(__test);					\
	} while (0)

/* Printed at once, as part of the KTAP output, as "# <name>: <message>". */
#define kunit_log(lvl, test_or_suite, fmt, ...)				\
	do {								\
		(void)(test_or_suite);					\
		__kunit_log(lvl fmt, ##__VA_ARGS__);			\
	} while (0)

#define kunit_printk(lvl, test, fmt, ...)				\
	__kunit_printk(lvl, (test)->name, fmt, ##__VA_ARGS__)
#define kunit_info(test, fmt, ...)					\
	kunit_printk(KERN_INFO, test, fmt, ##__VA_ARGS__)
#define kunit_warn(test, fmt, ...)					\
	kunit_printk(KERN_WARNING, test, fmt, ##__VA_ARGS__)
#define kunit_err(test, fmt, ...)					\
	kunit_printk(KERN_ERR, test, fmt, ##__VA_ARGS__)

/* -------------------------------------------------------------------- */
/* Assertion machinery (private)                                         */
/* -------------------------------------------------------------------- */

enum __kunit_fail_kind {
	__KUNIT_FAIL_MSG,
	__KUNIT_FAIL_UNARY,
	__KUNIT_FAIL_INT,
	__KUNIT_FAIL_PTR,
	__KUNIT_FAIL_STR,
	__KUNIT_FAIL_MEM,
	__KUNIT_FAIL_NOT_ERR,
};

/* How an integer operand prints. */
enum __kunit_int_kind {
	__KUNIT_INT_UNSIGNED,
	__KUNIT_INT_SIGNED,
	__KUNIT_INT_BOOL,
};

/* private: everything the runner needs to describe a failed check. */
struct __kunit_fail_info {
	enum kunit_assert_type type;
	enum __kunit_fail_kind kind;
	const char *file;
	int line;
	const char *op_text;
	const char *left_text;
	const char *right_text;
	unsigned long long left_bits;
	unsigned long long right_bits;
	enum __kunit_int_kind left_kind;
	enum __kunit_int_kind right_kind;
	const void *left_ptr;
	const void *right_ptr;
	size_t size;
	bool want_true;
};

void __kunit_do_failed(struct kunit *test, const struct __kunit_fail_info *info,
		       const char *fmt, ...) __KUNIT_PRINTF(3, 4);

/*
 * Integer operands are passed through an unsigned long long parameter, so a
 * pointer or a struct given to KUNIT_EXPECT_EQ() breaks the build, as it
 * does in the kernel.
 */
static inline unsigned long long __kunit_int_bits(unsigned long long v)
{
	return v;
}

#define __KUNIT_INT_KIND(x)						\
	_Generic((x),							\
		 _Bool: __KUNIT_INT_BOOL,				\
		 default: ((__typeof__(x))-1 < (__typeof__(x))0 ?	\
			   __KUNIT_INT_SIGNED : __KUNIT_INT_UNSIGNED))

/*
 * Like the kernel, compare in the operands' own types; W=1 does not warn
 * about signedness or always-true comparisons, so neither do we, here.
 */
#ifdef __clang__
#define __KUNIT_DIAG_PUSH						\
	_Pragma("clang diagnostic push")				\
	_Pragma("clang diagnostic ignored \"-Wsign-compare\"")		\
	_Pragma("clang diagnostic ignored \"-Wtautological-compare\"")	\
	_Pragma("clang diagnostic ignored \"-Wtype-limits\"")
#define __KUNIT_DIAG_POP _Pragma("clang diagnostic pop")
#else
#define __KUNIT_DIAG_PUSH						\
	_Pragma("GCC diagnostic push")					\
	_Pragma("GCC diagnostic ignored \"-Wsign-compare\"")		\
	_Pragma("GCC diagnostic ignored \"-Wtype-limits\"")		\
	_Pragma("GCC diagnostic ignored \"-Wbool-compare\"")
#define __KUNIT_DIAG_POP _Pragma("GCC diagnostic pop")
#endif

/* Tells the compiler that a failed assertion does not return. */
#define __KUNIT_ABORT_IF_ASSERTION(test, assert_type)			\
	do {								\
		if ((assert_type) == KUNIT_ASSERTION)			\
			__kunit_abort(test);				\
	} while (0)

#define KUNIT_FAIL_ASSERTION(test, assert_type, fmt, ...)		\
	do {								\
		__kunit_do_failed(test, &(const struct __kunit_fail_info){ \
			.type = (assert_type),				\
			.kind = __KUNIT_FAIL_MSG,			\
			.file = __FILE__, .line = __LINE__,		\
		}, fmt, ##__VA_ARGS__);					\
		__KUNIT_ABORT_IF_ASSERTION(test, assert_type);		\
	} while (0)

#define KUNIT_UNARY_ASSERTION(test, assert_type, condition, expected_true, \
			      fmt, ...)					\
	do {								\
		if (__builtin_expect(!!(condition) == !!(expected_true), 1)) \
			break;						\
		__kunit_do_failed(test, &(const struct __kunit_fail_info){ \
			.type = (assert_type),				\
			.kind = __KUNIT_FAIL_UNARY,			\
			.file = __FILE__, .line = __LINE__,		\
			.left_text = #condition,			\
			.want_true = (expected_true),		\
		}, fmt, ##__VA_ARGS__);					\
		__KUNIT_ABORT_IF_ASSERTION(test, assert_type);		\
	} while (0)

#define KUNIT_BINARY_INT_ASSERTION(test, assert_type, left, op, right,	\
				   fmt, ...)				\
	do {								\
		const __typeof__(left) __left = (left);			\
		const __typeof__(right) __right = (right);		\
		bool __pass;						\
		enum __kunit_int_kind __lkind, __rkind;			\
									\
		__KUNIT_DIAG_PUSH					\
		__pass = __left op __right;				\
		__lkind = __KUNIT_INT_KIND(__left);			\
		__rkind = __KUNIT_INT_KIND(__right);			\
		__KUNIT_DIAG_POP					\
		if (__builtin_expect(__pass, 1))			\
			break;						\
		__kunit_do_failed(test, &(const struct __kunit_fail_info){ \
			.type = (assert_type),				\
			.kind = __KUNIT_FAIL_INT,			\
			.file = __FILE__, .line = __LINE__,		\
			.op_text = #op, .left_text = #left, .right_text = #right, \
			.left_bits = __kunit_int_bits(__left),		\
			.right_bits = __kunit_int_bits(__right),	\
			.left_kind = __lkind, .right_kind = __rkind,	\
		}, fmt, ##__VA_ARGS__);					\
		__KUNIT_ABORT_IF_ASSERTION(test, assert_type);		\
	} while (0)

#define KUNIT_BINARY_PTR_ASSERTION(test, assert_type, left, op, right,	\
				   fmt, ...)				\
	do {								\
		const __typeof__(left) __left = (left);			\
		const __typeof__(right) __right = (right);		\
									\
		if (__builtin_expect(__left op __right, 1))		\
			break;						\
		__kunit_do_failed(test, &(const struct __kunit_fail_info){ \
			.type = (assert_type),				\
			.kind = __KUNIT_FAIL_PTR,			\
			.file = __FILE__, .line = __LINE__,		\
			.op_text = #op, .left_text = #left, .right_text = #right, \
			.left_ptr = (const void *)__left,		\
			.right_ptr = (const void *)__right,		\
		}, fmt, ##__VA_ARGS__);					\
		__KUNIT_ABORT_IF_ASSERTION(test, assert_type);		\
	} while (0)

#define KUNIT_PTR_NULL_ASSERTION(test, assert_type, ptr, op, fmt, ...)	\
	do {								\
		const __typeof__(ptr) __ptr = (ptr);			\
									\
		if (__builtin_expect(__ptr op NULL, 1))			\
			break;						\
		__kunit_do_failed(test, &(const struct __kunit_fail_info){ \
			.type = (assert_type),				\
			.kind = __KUNIT_FAIL_PTR,			\
			.file = __FILE__, .line = __LINE__,		\
			.op_text = #op, .left_text = #ptr, .right_text = "NULL", \
			.left_ptr = (const void *)__ptr,		\
		}, fmt, ##__VA_ARGS__);					\
		__KUNIT_ABORT_IF_ASSERTION(test, assert_type);		\
	} while (0)

/* A NULL string fails both STREQ and STRNEQ (the kernel would oops). */
#define KUNIT_BINARY_STR_ASSERTION(test, assert_type, left, op, right,	\
				   fmt, ...)				\
	do {								\
		const char *__left = (left);				\
		const char *__right = (right);				\
									\
		if (__builtin_expect(__left && __right &&		\
				     strcmp(__left, __right) op 0, 1))	\
			break;						\
		__kunit_do_failed(test, &(const struct __kunit_fail_info){ \
			.type = (assert_type),				\
			.kind = __KUNIT_FAIL_STR,			\
			.file = __FILE__, .line = __LINE__,		\
			.op_text = #op, .left_text = #left, .right_text = #right, \
			.left_ptr = __left, .right_ptr = __right,	\
		}, fmt, ##__VA_ARGS__);					\
		__KUNIT_ABORT_IF_ASSERTION(test, assert_type);		\
	} while (0)

#define KUNIT_MEM_ASSERTION(test, assert_type, left, op, right, size_,	\
			    fmt, ...)					\
	do {								\
		const void *__left = (left);				\
		const void *__right = (right);				\
		const size_t __size = (size_);				\
									\
		if (__builtin_expect(__left && __right &&		\
				     memcmp(__left, __right, __size) op 0, 1)) \
			break;						\
		__kunit_do_failed(test, &(const struct __kunit_fail_info){ \
			.type = (assert_type),				\
			.kind = __KUNIT_FAIL_MEM,			\
			.file = __FILE__, .line = __LINE__,		\
			.op_text = #op, .left_text = #left, .right_text = #right, \
			.left_ptr = __left, .right_ptr = __right,	\
			.size = __size,					\
		}, fmt, ##__VA_ARGS__);					\
		__KUNIT_ABORT_IF_ASSERTION(test, assert_type);		\
	} while (0)

/* Linux's IS_ERR_OR_NULL(): NULL or the last page of the address space. */
static inline bool __kunit_is_err_or_null(const void *ptr)
{
	return !ptr || (uintptr_t)ptr >= (uintptr_t)-4095;
}

#define KUNIT_PTR_NOT_ERR_OR_NULL_MSG_ASSERTION(test, assert_type, ptr,	\
						fmt, ...)		\
	do {								\
		const __typeof__(ptr) __ptr = (ptr);			\
									\
		if (__builtin_expect(					\
			!__kunit_is_err_or_null((const void *)__ptr), 1)) \
			break;						\
		__kunit_do_failed(test, &(const struct __kunit_fail_info){ \
			.type = (assert_type),				\
			.kind = __KUNIT_FAIL_NOT_ERR,			\
			.file = __FILE__, .line = __LINE__,		\
			.left_text = #ptr,				\
			.left_ptr = (const void *)__ptr,		\
		}, fmt, ##__VA_ARGS__);					\
		__KUNIT_ABORT_IF_ASSERTION(test, assert_type);		\
	} while (0)

/* -------------------------------------------------------------------- */
/* Expectations: on failure, report and go on                            */
/* -------------------------------------------------------------------- */

#define KUNIT_SUCCEED(test) do { (void)(test); } while (0)

#define KUNIT_FAIL(test, fmt, ...)					\
	KUNIT_FAIL_ASSERTION(test, KUNIT_EXPECTATION, fmt, ##__VA_ARGS__)

#define KUNIT_EXPECT_TRUE(test, condition)				\
	KUNIT_EXPECT_TRUE_MSG(test, condition, NULL)
#define KUNIT_EXPECT_TRUE_MSG(test, condition, fmt, ...)		\
	KUNIT_UNARY_ASSERTION(test, KUNIT_EXPECTATION, condition, true,	\
			      fmt, ##__VA_ARGS__)

#define KUNIT_EXPECT_FALSE(test, condition)				\
	KUNIT_EXPECT_FALSE_MSG(test, condition, NULL)
#define KUNIT_EXPECT_FALSE_MSG(test, condition, fmt, ...)		\
	KUNIT_UNARY_ASSERTION(test, KUNIT_EXPECTATION, condition, false, \
			      fmt, ##__VA_ARGS__)

#define KUNIT_EXPECT_EQ(test, left, right)				\
	KUNIT_EXPECT_EQ_MSG(test, left, right, NULL)
#define KUNIT_EXPECT_EQ_MSG(test, left, right, fmt, ...)		\
	KUNIT_BINARY_INT_ASSERTION(test, KUNIT_EXPECTATION,		\
				   left, ==, right, fmt, ##__VA_ARGS__)

#define KUNIT_EXPECT_NE(test, left, right)				\
	KUNIT_EXPECT_NE_MSG(test, left, right, NULL)
#define KUNIT_EXPECT_NE_MSG(test, left, right, fmt, ...)		\
	KUNIT_BINARY_INT_ASSERTION(test, KUNIT_EXPECTATION,		\
				   left, !=, right, fmt, ##__VA_ARGS__)

#define KUNIT_EXPECT_LT(test, left, right)				\
	KUNIT_EXPECT_LT_MSG(test, left, right, NULL)
#define KUNIT_EXPECT_LT_MSG(test, left, right, fmt, ...)		\
	KUNIT_BINARY_INT_ASSERTION(test, KUNIT_EXPECTATION,		\
				   left, <, right, fmt, ##__VA_ARGS__)

#define KUNIT_EXPECT_LE(test, left, right)				\
	KUNIT_EXPECT_LE_MSG(test, left, right, NULL)
#define KUNIT_EXPECT_LE_MSG(test, left, right, fmt, ...)		\
	KUNIT_BINARY_INT_ASSERTION(test, KUNIT_EXPECTATION,		\
				   left, <=, right, fmt, ##__VA_ARGS__)

#define KUNIT_EXPECT_GT(test, left, right)				\
	KUNIT_EXPECT_GT_MSG(test, left, right, NULL)
#define KUNIT_EXPECT_GT_MSG(test, left, right, fmt, ...)		\
	KUNIT_BINARY_INT_ASSERTION(test, KUNIT_EXPECTATION,		\
				   left, >, right, fmt, ##__VA_ARGS__)

#define KUNIT_EXPECT_GE(test, left, right)				\
	KUNIT_EXPECT_GE_MSG(test, left, right, NULL)
#define KUNIT_EXPECT_GE_MSG(test, left, right, fmt, ...)		\
	KUNIT_BINARY_INT_ASSERTION(test, KUNIT_EXPECTATION,		\
				   left, >=, right, fmt, ##__VA_ARGS__)

#define KUNIT_EXPECT_PTR_EQ(test, left, right)				\
	KUNIT_EXPECT_PTR_EQ_MSG(test, left, right, NULL)
#define KUNIT_EXPECT_PTR_EQ_MSG(test, left, right, fmt, ...)		\
	KUNIT_BINARY_PTR_ASSERTION(test, KUNIT_EXPECTATION,		\
				   left, ==, right, fmt, ##__VA_ARGS__)

#define KUNIT_EXPECT_PTR_NE(test, left, right)				\
	KUNIT_EXPECT_PTR_NE_MSG(test, left, right, NULL)
#define KUNIT_EXPECT_PTR_NE_MSG(test, left, right, fmt, ...)		\
	KUNIT_BINARY_PTR_ASSERTION(test, KUNIT_EXPECTATION,		\
				   left, !=, right, fmt, ##__VA_ARGS__)

#define KUNIT_EXPECT_NULL(test, ptr)					\
	KUNIT_EXPECT_NULL_MSG(test, ptr, NULL)
#define KUNIT_EXPECT_NULL_MSG(test, ptr, fmt, ...)			\
	KUNIT_PTR_NULL_ASSERTION(test, KUNIT_EXPECTATION, ptr, ==,	\
				 fmt, ##__VA_ARGS__)

#define KUNIT_EXPECT_NOT_NULL(test, ptr)				\
	KUNIT_EXPECT_NOT_NULL_MSG(test, ptr, NULL)
#define KUNIT_EXPECT_NOT_NULL_MSG(test, ptr, fmt, ...)			\
	KUNIT_PTR_NULL_ASSERTION(test, KUNIT_EXPECTATION, ptr, !=,	\
				 fmt, ##__VA_ARGS__)

#define KUNIT_EXPECT_NOT_ERR_OR_NULL(test, ptr)				\
	KUNIT_EXPECT_NOT_ERR_OR_NULL_MSG(test, ptr, NULL)
#define KUNIT_EXPECT_NOT_ERR_OR_NULL_MSG(test, ptr, fmt, ...)		\
	KUNIT_PTR_NOT_ERR_OR_NULL_MSG_ASSERTION(test, KUNIT_EXPECTATION, \
						ptr, fmt, ##__VA_ARGS__)

#define KUNIT_EXPECT_STREQ(test, left, right)				\
	KUNIT_EXPECT_STREQ_MSG(test, left, right, NULL)
#define KUNIT_EXPECT_STREQ_MSG(test, left, right, fmt, ...)		\
	KUNIT_BINARY_STR_ASSERTION(test, KUNIT_EXPECTATION,		\
				   left, ==, right, fmt, ##__VA_ARGS__)

#define KUNIT_EXPECT_STRNEQ(test, left, right)				\
	KUNIT_EXPECT_STRNEQ_MSG(test, left, right, NULL)
#define KUNIT_EXPECT_STRNEQ_MSG(test, left, right, fmt, ...)		\
	KUNIT_BINARY_STR_ASSERTION(test, KUNIT_EXPECTATION,		\
				   left, !=, right, fmt, ##__VA_ARGS__)

/* Not in Linux 6.1's KUnit (added in 6.2): the module needs a fallback. */
#define KUNIT_EXPECT_MEMEQ(test, left, right, size)			\
	KUNIT_EXPECT_MEMEQ_MSG(test, left, right, size, NULL)
#define KUNIT_EXPECT_MEMEQ_MSG(test, left, right, size, fmt, ...)	\
	KUNIT_MEM_ASSERTION(test, KUNIT_EXPECTATION,			\
			    left, ==, right, size, fmt, ##__VA_ARGS__)

#define KUNIT_EXPECT_MEMNEQ(test, left, right, size)			\
	KUNIT_EXPECT_MEMNEQ_MSG(test, left, right, size, NULL)
#define KUNIT_EXPECT_MEMNEQ_MSG(test, left, right, size, fmt, ...)	\
	KUNIT_MEM_ASSERTION(test, KUNIT_EXPECTATION,			\
			    left, !=, right, size, fmt, ##__VA_ARGS__)

/* -------------------------------------------------------------------- */
/* Assertions: on failure, report and end the case                       */
/* -------------------------------------------------------------------- */

#define KUNIT_ASSERT_FAILURE(test, fmt, ...)				\
	KUNIT_FAIL_ASSERTION(test, KUNIT_ASSERTION, fmt, ##__VA_ARGS__)

#define KUNIT_ASSERT_TRUE(test, condition)				\
	KUNIT_ASSERT_TRUE_MSG(test, condition, NULL)
#define KUNIT_ASSERT_TRUE_MSG(test, condition, fmt, ...)		\
	KUNIT_UNARY_ASSERTION(test, KUNIT_ASSERTION, condition, true,	\
			      fmt, ##__VA_ARGS__)

#define KUNIT_ASSERT_FALSE(test, condition)				\
	KUNIT_ASSERT_FALSE_MSG(test, condition, NULL)
#define KUNIT_ASSERT_FALSE_MSG(test, condition, fmt, ...)		\
	KUNIT_UNARY_ASSERTION(test, KUNIT_ASSERTION, condition, false,	\
			      fmt, ##__VA_ARGS__)

#define KUNIT_ASSERT_EQ(test, left, right)				\
	KUNIT_ASSERT_EQ_MSG(test, left, right, NULL)
#define KUNIT_ASSERT_EQ_MSG(test, left, right, fmt, ...)		\
	KUNIT_BINARY_INT_ASSERTION(test, KUNIT_ASSERTION,		\
				   left, ==, right, fmt, ##__VA_ARGS__)

#define KUNIT_ASSERT_NE(test, left, right)				\
	KUNIT_ASSERT_NE_MSG(test, left, right, NULL)
#define KUNIT_ASSERT_NE_MSG(test, left, right, fmt, ...)		\
	KUNIT_BINARY_INT_ASSERTION(test, KUNIT_ASSERTION,		\
				   left, !=, right, fmt, ##__VA_ARGS__)

#define KUNIT_ASSERT_LT(test, left, right)				\
	KUNIT_ASSERT_LT_MSG(test, left, right, NULL)
#define KUNIT_ASSERT_LT_MSG(test, left, right, fmt, ...)		\
	KUNIT_BINARY_INT_ASSERTION(test, KUNIT_ASSERTION,		\
				   left, <, right, fmt, ##__VA_ARGS__)

#define KUNIT_ASSERT_LE(test, left, right)				\
	KUNIT_ASSERT_LE_MSG(test, left, right, NULL)
#define KUNIT_ASSERT_LE_MSG(test, left, right, fmt, ...)		\
	KUNIT_BINARY_INT_ASSERTION(test, KUNIT_ASSERTION,		\
				   left, <=, right, fmt, ##__VA_ARGS__)

#define KUNIT_ASSERT_GT(test, left, right)				\
	KUNIT_ASSERT_GT_MSG(test, left, right, NULL)
#define KUNIT_ASSERT_GT_MSG(test, left, right, fmt, ...)		\
	KUNIT_BINARY_INT_ASSERTION(test, KUNIT_ASSERTION,		\
				   left, >, right, fmt, ##__VA_ARGS__)

#define KUNIT_ASSERT_GE(test, left, right)				\
	KUNIT_ASSERT_GE_MSG(test, left, right, NULL)
#define KUNIT_ASSERT_GE_MSG(test, left, right, fmt, ...)		\
	KUNIT_BINARY_INT_ASSERTION(test, KUNIT_ASSERTION,		\
				   left, >=, right, fmt, ##__VA_ARGS__)

#define KUNIT_ASSERT_PTR_EQ(test, left, right)				\
	KUNIT_ASSERT_PTR_EQ_MSG(test, left, right, NULL)
#define KUNIT_ASSERT_PTR_EQ_MSG(test, left, right, fmt, ...)		\
	KUNIT_BINARY_PTR_ASSERTION(test, KUNIT_ASSERTION,		\
				   left, ==, right, fmt, ##__VA_ARGS__)

#define KUNIT_ASSERT_PTR_NE(test, left, right)				\
	KUNIT_ASSERT_PTR_NE_MSG(test, left, right, NULL)
#define KUNIT_ASSERT_PTR_NE_MSG(test, left, right, fmt, ...)		\
	KUNIT_BINARY_PTR_ASSERTION(test, KUNIT_ASSERTION,		\
				   left, !=, right, fmt, ##__VA_ARGS__)

#define KUNIT_ASSERT_NULL(test, ptr)					\
	KUNIT_ASSERT_NULL_MSG(test, ptr, NULL)
#define KUNIT_ASSERT_NULL_MSG(test, ptr, fmt, ...)			\
	KUNIT_PTR_NULL_ASSERTION(test, KUNIT_ASSERTION, ptr, ==,	\
				 fmt, ##__VA_ARGS__)

#define KUNIT_ASSERT_NOT_NULL(test, ptr)				\
	KUNIT_ASSERT_NOT_NULL_MSG(test, ptr, NULL)
#define KUNIT_ASSERT_NOT_NULL_MSG(test, ptr, fmt, ...)			\
	KUNIT_PTR_NULL_ASSERTION(test, KUNIT_ASSERTION, ptr, !=,	\
				 fmt, ##__VA_ARGS__)

#define KUNIT_ASSERT_NOT_ERR_OR_NULL(test, ptr)				\
	KUNIT_ASSERT_NOT_ERR_OR_NULL_MSG(test, ptr, NULL)
#define KUNIT_ASSERT_NOT_ERR_OR_NULL_MSG(test, ptr, fmt, ...)		\
	KUNIT_PTR_NOT_ERR_OR_NULL_MSG_ASSERTION(test, KUNIT_ASSERTION,	\
						ptr, fmt, ##__VA_ARGS__)

#define KUNIT_ASSERT_STREQ(test, left, right)				\
	KUNIT_ASSERT_STREQ_MSG(test, left, right, NULL)
#define KUNIT_ASSERT_STREQ_MSG(test, left, right, fmt, ...)		\
	KUNIT_BINARY_STR_ASSERTION(test, KUNIT_ASSERTION,		\
				   left, ==, right, fmt, ##__VA_ARGS__)

#define KUNIT_ASSERT_STRNEQ(test, left, right)				\
	KUNIT_ASSERT_STRNEQ_MSG(test, left, right, NULL)
#define KUNIT_ASSERT_STRNEQ_MSG(test, left, right, fmt, ...)		\
	KUNIT_BINARY_STR_ASSERTION(test, KUNIT_ASSERTION,		\
				   left, !=, right, fmt, ##__VA_ARGS__)

#define KUNIT_ASSERT_MEMEQ(test, left, right, size)			\
	KUNIT_ASSERT_MEMEQ_MSG(test, left, right, size, NULL)
#define KUNIT_ASSERT_MEMEQ_MSG(test, left, right, size, fmt, ...)	\
	KUNIT_MEM_ASSERTION(test, KUNIT_ASSERTION,			\
			    left, ==, right, size, fmt, ##__VA_ARGS__)

#define KUNIT_ASSERT_MEMNEQ(test, left, right, size)			\
	KUNIT_ASSERT_MEMNEQ_MSG(test, left, right, size, NULL)
#define KUNIT_ASSERT_MEMNEQ_MSG(test, left, right, size, fmt, ...)	\
	KUNIT_MEM_ASSERTION(test, KUNIT_ASSERTION,			\
			    left, !=, right, size, fmt, ##__VA_ARGS__)

/**
 * KUNIT_ARRAY_PARAM() - define name##_gen_params() walking @array
 * @name:	prefix of the generator's name
 * @array:	the parameters
 * @get_desc:	void (*)(typeof(&array[0]), char *desc), or NULL
 */
#define KUNIT_ARRAY_PARAM(name, array, get_desc)			\
	static const void *name##_gen_params(const void *prev, char *desc) \
	{								\
		__typeof__((array)[0]) *__next =			\
			prev ? ((__typeof__(__next))prev) + 1 : (array); \
		if ((size_t)(__next - (array)) < __KUNIT_ARRAY_SIZE(array)) { \
			void (*__get_desc)(__typeof__(__next), char *) = get_desc; \
			if (__get_desc)					\
				__get_desc(__next, desc);		\
			return __next;					\
		}							\
		return NULL;						\
	}

#endif /* _KUNIT_TEST_H */
