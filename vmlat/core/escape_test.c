// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for vmlat/core/escape.c: task names in tables and in JSON.
 *
 * Hand-worked cases pin the format down: every byte a table must not see
 * raw, UTF-8 kept, the ill-formed sequences of Unicode's table 3-8 (and
 * what Python's bytes.decode("utf-8", "replace") makes of them), a name
 * cut in the middle of a character. Then every 1- and 2-byte name and
 * long random ones are held to what escape.h promises, checked by slow,
 * obviously correct readers written here: a table cell reads back to the
 * name and has no blank or control byte; a JSON string is well-formed
 * UTF-8 (decoded code point by code point) without a raw control
 * character, reads back to the name when that was valid UTF-8, and a
 * name's length never exceeds the documented buffer sizes.
 */
#include <kunit/test.h>

#include "escape.h"
#include "kunit_lcg.h"

#define FFFD	"\xef\xbf\xbd"

struct esc_case {
	const char *desc;
	const char *in;
	size_t len;		/* of @in, which may hold a NUL */
	const char *text;	/* vmlat_escape_text() */
	const char *json;	/* vmlat_escape_json() */
};

#define ESC(d, i, t, j)		{ d, i, sizeof(i) - 1, t, j }

static const struct esc_case esc_cases[] = {
	ESC("plain", "vmlat-hog", "vmlat-hog", "vmlat-hog"),
	ESC("empty", "", "-", ""),
	ESC("a lone dash is not empty", "-", "\\055", "-"),
	ESC("dashes", "--", "--", "--"),
	ESC("blank", "CPU 0/KVM", "CPU\\0400/KVM", "CPU 0/KVM"),
	ESC("tab newline", "a\tb\n", "a\\011b\\012", "a\\u0009b\\u000a"),
	ESC("carriage return", "a\rb", "a\\015b", "a\\u000db"),
	ESC("vertical tab, form feed", "\v\f", "\\013\\014",
	    "\\u000b\\u000c"),
	ESC("escape, unit separator", "\x1b\x1f", "\\033\\037",
	    "\\u001b\\u001f"),
	ESC("DEL", "x\x7f", "x\\177", "x\\u007f"),
	ESC("backslash", "a\\b", "a\\134b", "a\\\\b"),
	ESC("quote", "say \"hi\"", "say\\040\"hi\"", "say \\\"hi\\\""),
	ESC("NUL inside", "a\0b", "a\\000b", "a\\u0000b"),
	ESC("UTF-8 kept", "v\xc3\xa9\xe2\x82\xac", "v\xc3\xa9\xe2\x82\xac",
	    "v\xc3\xa9\xe2\x82\xac"),
	ESC("4-byte UTF-8 kept", "\xf0\x9f\x98\x80", "\xf0\x9f\x98\x80",
	    "\xf0\x9f\x98\x80"),
	ESC("edges of the ranges kept", "\xc2\x80\xed\x9f\xbf\xee\x80\x80"
	    "\xf4\x8f\xbf\xbf", "\xc2\x80\xed\x9f\xbf\xee\x80\x80"
	    "\xf4\x8f\xbf\xbf", "\xc2\x80\xed\x9f\xbf\xee\x80\x80"
	    "\xf4\x8f\xbf\xbf"),
	ESC("cut in a 4-byte character, at the end",
	    "abcdefghijklm\xf0\x9f", "abcdefghijklm\xf0\x9f",
	    "abcdefghijklm" FFFD),
	ESC("cut in a 3-byte character, inside", "a\xe2\x82z", "a\xe2\x82z",
	    "a" FFFD "z"),
	ESC("lone lead byte", "\xc3", "\xc3", FFFD),
	ESC("lone continuation bytes", "\x80\xbf", "\x80\xbf", FFFD FFFD),
	ESC("overlong 2-byte", "\xc0\xaf", "\xc0\xaf", FFFD FFFD),
	ESC("overlong 3-byte", "\xe0\x80\xaf", "\xe0\x80\xaf",
	    FFFD FFFD FFFD),
	ESC("overlong 4-byte", "\xf0\x80\x80\xaf", "\xf0\x80\x80\xaf",
	    FFFD FFFD FFFD FFFD),
	ESC("surrogate", "\xed\xa0\x80", "\xed\xa0\x80", FFFD FFFD FFFD),
	ESC("above U+10FFFF", "\xf4\x90\x80\x80", "\xf4\x90\x80\x80",
	    FFFD FFFD FFFD FFFD),
	ESC("0xf5..0xff", "\xf5\xfe\xff", "\xf5\xfe\xff", FFFD FFFD FFFD),
	ESC("Unicode table 3-8", "\x61\xf1\x80\x80\xe1\x80\xc2\x62\x80"
	    "\x63\x80\xbf\x64", "\x61\xf1\x80\x80\xe1\x80\xc2\x62\x80"
	    "\x63\x80\xbf\x64",
	    "a" FFFD FFFD FFFD "b" FFFD "c" FFFD FFFD "d"),
	ESC("ill-formed, then a control byte", "\xe2\n", "\xe2\\012",
	    FFFD "\\u000a"),
};

static void esc_case_desc(const struct esc_case *c, char *desc)
{
	strscpy(desc, c->desc, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(esc, esc_cases, esc_case_desc);

static void vmlat_escape_text_cases(struct kunit *test)
{
	const struct esc_case *c = test->param_value;
	char out[VMLAT_TEXT_NAME_SIZE + 8];
	size_t n;

	n = vmlat_escape_text(out, sizeof(out), c->in, c->len);
	KUNIT_EXPECT_STREQ_MSG(test, out, c->text, "%s", c->desc);
	KUNIT_EXPECT_EQ_MSG(test, n, strlen(c->text), "%s: length", c->desc);
}

static void vmlat_escape_json_cases(struct kunit *test)
{
	const struct esc_case *c = test->param_value;
	char out[VMLAT_JSON_NAME_SIZE + 8];
	size_t n;

	n = vmlat_escape_json(out, sizeof(out), c->in, c->len);
	KUNIT_EXPECT_STREQ_MSG(test, out, c->json, "%s", c->desc);
	KUNIT_EXPECT_EQ_MSG(test, n, strlen(c->json), "%s: length", c->desc);
}

/* Reads a table cell back; returns its length, or -1 if malformed. */
static int text_unescape(const char *s, u8 *out)
{
	int n = 0;

	if (!strcmp(s, "-"))
		return 0;
	while (*s) {
		if (*s != '\\') {
			out[n++] = *s++;
			continue;
		}
		if (s[1] < '0' || s[1] > '3' || s[2] < '0' || s[2] > '7' ||
		    s[3] < '0' || s[3] > '7')
			return -1;
		out[n++] = (s[1] - '0') << 6 | (s[2] - '0') << 3 | (s[3] - '0');
		s += 4;
	}
	return n;
}

/*
 * The code point of the UTF-8 sequence at @s, decoded the slow way (any
 * lead byte, then range checks on the value), its length in *@n; or -1.
 */
static long utf8_decode(const u8 *s, size_t len, unsigned int *n)
{
	static const long min[] = { 0, 0, 0x80, 0x800, 0x10000 };
	unsigned int i;
	long cp;

	if (s[0] < 0x80) {
		*n = 1;
		return s[0];
	}
	if ((s[0] & 0xe0) == 0xc0) {
		*n = 2;
		cp = s[0] & 0x1f;
	} else if ((s[0] & 0xf0) == 0xe0) {
		*n = 3;
		cp = s[0] & 0x0f;
	} else if ((s[0] & 0xf8) == 0xf0) {
		*n = 4;
		cp = s[0] & 0x07;
	} else {
		return -1;
	}
	if (*n > len)
		return -1;
	for (i = 1; i < *n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return -1;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if (cp < min[*n] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return -1;
	return cp;
}

static bool utf8_valid(const u8 *s, size_t len)
{
	unsigned int n;
	size_t i;

	for (i = 0; i < len; i += n)
		if (utf8_decode(&s[i], len - i, &n) < 0)
			return false;
	return true;
}

/*
 * Reads a JSON string's contents back (as a JSON parser would, for the
 * escapes vmlat writes); returns their length, or -1 if malformed: a raw
 * control character or quote, an unknown escape, ill-formed UTF-8.
 */
static int json_unescape(const char *str, u8 *out)
{
	const u8 *s = (const u8 *)str;
	unsigned int n, v;
	int len = 0, i;

	if (!utf8_valid(s, strlen(str)))
		return -1;
	while (*s) {
		if (*s < 0x20 || *s == 0x7f || *s == '"')
			return -1;
		if (*s != '\\') {
			out[len++] = *s++;
			continue;
		}
		if (s[1] == '"' || s[1] == '\\') {
			out[len++] = s[1];
			s += 2;
			continue;
		}
		if (s[1] != 'u' || s[2] != '0' || s[3] != '0')
			return -1;
		for (v = 0, i = 4; i < 6; i++) {
			n = s[i] >= 'a' && s[i] <= 'f' ? s[i] - 'a' + 10 :
			    s[i] >= '0' && s[i] <= '9' ? s[i] - '0' : 16;
			if (n > 15)
				return -1;
			v = v << 4 | n;
		}
		out[len++] = v;
		s += 6;
	}
	return len;
}

/* Checks one name against the promises of escape.h; false on failure. */
static bool check_name(struct kunit *test, const u8 *name, size_t len)
{
	char text[VMLAT_TEXT_NAME_SIZE + 64], json[VMLAT_JSON_NAME_SIZE + 64];
	u8 back[sizeof(json)];
	size_t tn, jn, i;
	int bn;
	bool ok = true;

	tn = vmlat_escape_text(text, sizeof(text), (const char *)name, len);
	jn = vmlat_escape_json(json, sizeof(json), (const char *)name, len);
	if (len <= VMLAT_NAME_MAX) {
		KUNIT_EXPECT_LT_MSG(test, tn, VMLAT_TEXT_NAME_SIZE,
				    "text of a %zu-byte name too long", len);
		KUNIT_EXPECT_LT_MSG(test, jn, VMLAT_JSON_NAME_SIZE,
				    "JSON of a %zu-byte name too long", len);
		ok &= tn < VMLAT_TEXT_NAME_SIZE && jn < VMLAT_JSON_NAME_SIZE;
	}
	for (i = 0; i < tn; i++) {
		if ((u8)text[i] <= ' ' || text[i] == 0x7f) {
			KUNIT_FAIL(test, "text of a %zu-byte name has byte 0x%02x at %zu",
				   len, (u8)text[i], i);
			ok = false;
			break;
		}
	}
	bn = text_unescape(text, back);
	KUNIT_EXPECT_TRUE_MSG(test, bn == (int)len && !memcmp(back, name, len),
			      "text of a %zu-byte name does not read back (%d)",
			      len, bn);
	ok &= bn == (int)len && !memcmp(back, name, len);

	bn = json_unescape(json, back);
	KUNIT_EXPECT_GE_MSG(test, bn, 0, "JSON of a %zu-byte name malformed",
			    len);
	ok &= bn >= 0;
	if (utf8_valid(name, len)) {
		KUNIT_EXPECT_TRUE_MSG(test,
				      bn == (int)len && !memcmp(back, name, len),
				      "JSON of a valid %zu-byte name does not read back (%d)",
				      len, bn);
		ok &= bn == (int)len && !memcmp(back, name, len);
	}
	return ok;
}

static void vmlat_escape_every_short_name(struct kunit *test)
{
	unsigned int a, b;
	u8 name[2];

	for (a = 0; a < 256; a++) {
		name[0] = a;
		if (!check_name(test, name, 1)) {
			KUNIT_FAIL(test, "name 0x%02x", a);
			return;
		}
		for (b = 0; b < 256; b++) {
			name[1] = b;
			if (!check_name(test, name, 2)) {
				KUNIT_FAIL(test, "name 0x%02x 0x%02x", a, b);
				return;
			}
		}
	}
}

/*
 * Random names of up to VMLAT_NAME_MAX bytes, from bytes that matter:
 * controls, blank, backslash, quote, DEL, continuation and lead bytes.
 */
static void vmlat_escape_random_names(struct kunit *test)
{
	static const u8 pool[] = {
		0x00, 0x01, '\t', '\n', '\r', 0x1f, ' ', '"', '-', '\\', 'a',
		0x7f, 0x80, 0x8f, 0x90, 0x9f, 0xa0, 0xbf, 0xc0, 0xc2, 0xdf,
		0xe0, 0xe1, 0xed, 0xef, 0xf0, 0xf4, 0xf5, 0xff,
	};
	u64 seed = 1;
	u8 name[VMLAT_NAME_MAX];
	unsigned int i, round;
	size_t len;

	for (round = 0; round < 20000; round++) {
		len = lcg_next(&seed) >> 60;	/* 0..15 */
		for (i = 0; i < len; i++)
			name[i] = pool[(lcg_next(&seed) >> 33) % sizeof(pool)];
		if (!check_name(test, name, len)) {
			KUNIT_FAIL(test, "round %u", round);
			return;
		}
	}
}

/* The worst names fill the documented sizes exactly. */
static void vmlat_escape_worst_case_fits(struct kunit *test)
{
	char name[VMLAT_NAME_MAX], out[VMLAT_JSON_NAME_SIZE];

	memset(name, 0x01, sizeof(name));
	KUNIT_EXPECT_EQ(test, vmlat_escape_text(out, sizeof(out), name,
						sizeof(name)),
			VMLAT_TEXT_NAME_SIZE - 1);
	KUNIT_EXPECT_EQ(test, vmlat_escape_json(out, sizeof(out), name,
						sizeof(name)),
			VMLAT_JSON_NAME_SIZE - 1);
	KUNIT_EXPECT_EQ(test, strlen(out), VMLAT_JSON_NAME_SIZE - 1);
}

/* A buffer too small gets what fits, terminated; the length is whole. */
static void vmlat_escape_cut_to_fit(struct kunit *test)
{
	char out[5];

	memset(out, 'x', sizeof(out));
	KUNIT_EXPECT_EQ(test, vmlat_escape_text(out, sizeof(out), "a b", 3),
			(size_t)6);
	KUNIT_EXPECT_STREQ(test, out, "a\\04");
	KUNIT_EXPECT_EQ(test, vmlat_escape_json(out, sizeof(out), "\n", 1),
			(size_t)6);
	KUNIT_EXPECT_STREQ(test, out, "\\u00");
	KUNIT_EXPECT_EQ(test, vmlat_escape_json(NULL, 0, "ab", 2), (size_t)2);
}

static struct kunit_case vmlat_escape_cases[] = {
	KUNIT_CASE_PARAM(vmlat_escape_text_cases, esc_gen_params),
	KUNIT_CASE_PARAM(vmlat_escape_json_cases, esc_gen_params),
	KUNIT_CASE(vmlat_escape_every_short_name),
	KUNIT_CASE(vmlat_escape_random_names),
	KUNIT_CASE(vmlat_escape_worst_case_fits),
	KUNIT_CASE(vmlat_escape_cut_to_fit),
	{}
};

static struct kunit_suite vmlat_escape_suite = {
	.name = "vmlat_escape",
	.test_cases = vmlat_escape_cases,
};

kunit_test_suites(&vmlat_escape_suite);
