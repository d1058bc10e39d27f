/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Userspace stand-in for the kernel's <kunit/visibility.h>: the unit-test
 * binary always "has KUnit", so VISIBLE_IF_KUNIT symbols are global.
 */
#ifndef _KUNIT_VISIBILITY_H
#define _KUNIT_VISIBILITY_H

#define VISIBLE_IF_KUNIT
#define EXPORT_SYMBOL_IF_KUNIT(symbol) extern int __kunit_no_such_object

#endif /* _KUNIT_VISIBILITY_H */
