// SPDX-License-Identifier: GPL-2.0
/*
 * Task names as text: the escapers of tables and JSON (pure logic, see
 * escape.h).
 */
#include "escape.h"

/* An output buffer that counts what did not fit, as snprintf() does. */
struct esc_out {
	char *dst;
	size_t size;
	size_t len;
};

static void out_put(struct esc_out *o, const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++, o->len++)
		if (o->len + 1 < o->size)
			o->dst[o->len] = s[i];
}

static size_t out_end(struct esc_out *o)
{
	if (o->size)
		o->dst[o->len < o->size ? o->len : o->size - 1] = '\0';
	return o->len;
}

/* Whether byte @c must be escaped in a table. */
static bool text_special(u8 c)
{
	return c < 0x20 || c == 0x7f || c == ' ' || c == '\\';
}

/**
 * vmlat_escape_text() - a task name for a blank-separated table
 * @dst:	where to write it, NUL-terminated (cut to fit, if too small)
 * @size:	size of @dst; VMLAT_TEXT_NAME_SIZE holds any task name
 * @src:	the name's bytes (a NUL among them is escaped too)
 * @len:	how many
 *
 * See escape.h for the format.
 *
 * Context: any context.
 * Return: the length of the whole escaped name (more than @size - 1 if it
 * was cut), as snprintf() returns.
 */
size_t vmlat_escape_text(char *dst, size_t size, const char *src, size_t len)
{
	struct esc_out o = { .dst = dst, .size = size };
	char oct[4] = { '\\' };
	size_t i;
	u8 c;

	if (!len) {
		out_put(&o, "-", 1);
		return out_end(&o);
	}
	for (i = 0; i < len; i++) {
		c = src[i];
		if (!text_special(c) && !(len == 1 && c == '-')) {
			out_put(&o, (const char *)&src[i], 1);
			continue;
		}
		oct[1] = '0' + (c >> 6);
		oct[2] = '0' + ((c >> 3) & 7);
		oct[3] = '0' + (c & 7);
		out_put(&o, oct, sizeof(oct));
	}
	return out_end(&o);
}

/**
 * vmlat_utf8_seq() - the UTF-8 sequence at @s
 * @s:		its bytes, @s[0] >= 0x80 (ASCII is the caller's)
 * @len:	the bytes left at @s, 1 or more
 * @bad:	set when it is ill-formed
 *
 * Context: any context.
 * Return: its length if it is well-formed; else 0, and then *@bad is the
 * length of its maximal subpart (Unicode table 3-7: the longest start of
 * some well-formed sequence, at least 1 byte), which is replaced as a
 * whole. The vmlat command (tools/vmlat) validates names with it too.
 */
unsigned int vmlat_utf8_seq(const u8 *s, size_t len, unsigned int *bad)
{
	unsigned int n, i;
	u8 lo = 0x80, hi = 0xbf;

	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		n = 2;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		n = 3;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		n = 4;
	else
		n = 0;		/* 0x80..0xc1 (overlong, continuation), 0xf5.. */
	/* The second byte's range excludes overlongs, surrogates, > U+10FFFF. */
	if (s[0] == 0xe0)
		lo = 0xa0;
	else if (s[0] == 0xed)
		hi = 0x9f;
	else if (s[0] == 0xf0)
		lo = 0x90;
	else if (s[0] == 0xf4)
		hi = 0x8f;
	for (i = 1; i < n; i++) {
		if (i >= len || s[i] < lo || s[i] > hi)
			break;
		lo = 0x80;
		hi = 0xbf;
	}
	*bad = i;
	return n && i == n ? n : 0;
}

/**
 * vmlat_escape_json() - a task name as the contents of a JSON string
 * @dst:	where to write it, NUL-terminated (cut to fit, if too small)
 * @size:	size of @dst; VMLAT_JSON_NAME_SIZE holds any task name
 * @src:	the name's bytes (a NUL among them is escaped too)
 * @len:	how many
 *
 * See escape.h for the format. The quotes are the caller's.
 *
 * Context: any context.
 * Return: the length of the whole escaped name (more than @size - 1 if it
 * was cut), as snprintf() returns.
 */
size_t vmlat_escape_json(char *dst, size_t size, const char *src, size_t len)
{
	static const char hex[] = "0123456789abcdef";
	static const char fffd[] = "\xef\xbf\xbd";	/* U+FFFD in UTF-8 */
	const u8 *s = (const u8 *)src;
	struct esc_out o = { .dst = dst, .size = size };
	char esc[6] = { '\\', 'u', '0', '0' };
	unsigned int n, bad;
	size_t i = 0;

	while (i < len) {
		if (s[i] == '"' || s[i] == '\\') {
			out_put(&o, "\\", 1);
			out_put(&o, (const char *)&s[i++], 1);
		} else if (s[i] < 0x20 || s[i] == 0x7f) {
			esc[4] = hex[s[i] >> 4];
			esc[5] = hex[s[i++] & 0xf];
			out_put(&o, esc, sizeof(esc));
		} else if (s[i] < 0x80) {
			out_put(&o, (const char *)&s[i++], 1);
		} else {
			n = vmlat_utf8_seq(&s[i], len - i, &bad);
			if (n)
				out_put(&o, (const char *)&s[i], n);
			else
				out_put(&o, fffd, sizeof(fffd) - 1);
			i += n ?: bad;
		}
	}
	return out_end(&o);
}
