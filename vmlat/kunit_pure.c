// SPDX-License-Identifier: GPL-2.0
/*
 * vmlat_kunit.ko: the KUnit suites of vmlat's pure logic.
 *
 * The pure sources are compiled into this module a second time (not linked
 * from vmlat.ko), so the tests need vmlat.ko neither loaded nor built for
 * the same kernel. The suites themselves are in the vmlat/ files named
 * *_test.c, which also build in userspace (selftests/unit).
 */
#include <linux/module.h>

#include "btf.c"
#include "hist.c"
#include "state.c"
#include "nested.c"
#include "sync.c"
#include "exits.c"

MODULE_DESCRIPTION("KUnit tests for vmlat's pure logic");
MODULE_LICENSE("GPL");
