// SPDX-License-Identifier: GPL-2.0
/*
 * vmlat_kunit.ko: the KUnit suites of vmlat's pure logic (vmlat/core/).
 *
 * The pure sources are compiled into this module a second time (not linked
 * from vmlat.ko), so the tests need vmlat.ko neither loaded nor built for
 * the same kernel. Which sources: Kbuild's VMLAT_CORE list, the one list
 * of them, passes each with -include when it compiles this file. The
 * suites themselves are the vmlat/core/ files named *_test.c, which also
 * build in userspace (selftests/unit).
 */
#include <linux/module.h>

MODULE_DESCRIPTION("KUnit tests for vmlat's pure logic");
MODULE_LICENSE("GPL");
