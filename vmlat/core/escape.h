/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Task names as text (pure logic).
 *
 * A task's name (comm) is whatever bytes it chose (prctl(PR_SET_NAME),
 * /proc/<pid>/comm), at most VMLAT_NAME_MAX of them, cut wherever that
 * limit fell, possibly in the middle of a UTF-8 character. vmlat prints
 * names in blank-separated tables and in JSON strings; these escapers
 * make any name safe in both.
 *
 * Tables, vmlat_escape_text(): every byte below 0x20, 0x7f, the blank and
 * the backslash become a backslash and three octal digits, as in
 * /proc/mounts ("CPU 0/KVM" -> "CPU\0400/KVM"); every other byte (UTF-8
 * included) stays as it is. The empty name is "-" and the name "-" is
 * "\055", so that the two stay apart. A name then never splits a column
 * or a line.
 *
 * JSON, vmlat_escape_json() (a string's contents, without the quotes):
 * '"' and '\' become \" and \\, the other bytes below 0x20 and 0x7f
 * become \u00XX, valid UTF-8 stays as it is, and each maximal subpart of
 * an ill-formed sequence (Unicode 15, section 3.9, "U+FFFD Substitution of
 * Maximal Subparts") becomes one U+FFFD: a lone or unexpected byte, or
 * the start of a character cut short, such as a name's last bytes cut by
 * the length limit. The document stays valid UTF-8, and a decoder reads
 * the name as Python's bytes.decode("utf-8", "replace") does.
 */
#ifndef _VMLAT_ESCAPE_H
#define _VMLAT_ESCAPE_H

#include "pure.h"

/* The longest task name: TASK_COMM_LEN less its NUL. */
#define VMLAT_NAME_MAX		15
/* Room for any escaped name, NUL included: 4 and 6 bytes per byte. */
#define VMLAT_TEXT_NAME_SIZE	(4 * VMLAT_NAME_MAX + 1)
#define VMLAT_JSON_NAME_SIZE	(6 * VMLAT_NAME_MAX + 1)

size_t vmlat_escape_text(char *dst, size_t size, const char *src, size_t len);
size_t vmlat_escape_json(char *dst, size_t size, const char *src, size_t len);
unsigned int vmlat_utf8_seq(const u8 *s, size_t len, unsigned int *bad);

#endif /* _VMLAT_ESCAPE_H */
