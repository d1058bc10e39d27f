// SPDX-License-Identifier: GPL-2.0
/*
 * Small helpers the other parts of the selftest library and the test
 * programs share: the monotonic clock in ms, paths, one-line files.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ksft_util.h"

/**
 * vmlat_now_ms() - CLOCK_MONOTONIC in milliseconds
 *
 * Return: milliseconds since an arbitrary fixed point.
 */
uint64_t vmlat_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/**
 * vmlat_path_exists() - does @path exist (any file type)?
 * @path: path to check
 *
 * Return: true if stat(2) succeeds.
 */
bool vmlat_path_exists(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0;
}

/**
 * vmlat_write_file() - write @val to @path (truncating it), like echo
 * @path: file to write, typically in sysfs or tracefs
 * @val:  text to write, in a single write(2)
 *
 * Return: 0, -EIO for a short write, or the negative errno of open/write.
 */
int vmlat_write_file(const char *path, const char *val)
{
	size_t len = strlen(val);
	ssize_t n;
	int fd, ret = 0;

	fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = write(fd, val, len);
	if (n < 0)
		ret = -errno;
	else if ((size_t)n != len)
		ret = -EIO;
	close(fd);
	return ret;
}

/**
 * vmlat_read_line() - read the first line of @path without its newline
 * @path: file to read
 * @buf:  receives the line
 * @len:  size of @buf
 *
 * Return: 0, -ENODATA for an empty file, -EIO for a read error, or the
 * negative errno of fopen(3).
 */
int vmlat_read_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "re");
	int ret = 0;

	if (!f)
		return -errno;
	if (!fgets(buf, (int)len, f))
		ret = ferror(f) ? -EIO : -ENODATA;
	else
		buf[strcspn(buf, "\n")] = '\0';
	fclose(f);
	return ret;
}

/**
 * vmlat_trim_right() - remove trailing white space from @s in place
 * @s: string to trim
 */
void vmlat_trim_right(char *s)
{
	size_t n = strlen(s);

	while (n && isspace((unsigned char)s[n - 1]))
		s[--n] = '\0';
}

/**
 * vmlat_errorf() - say why something failed, and return its error
 * @buf:  receives the formatted message
 * @size: size of @buf
 * @err:  the error to return, a negative errno
 * @fmt:  printf format of the message
 *
 * Return: @err, so that "return vmlat_errorf(...);" reports and fails.
 */
int vmlat_errorf(char *buf, size_t size, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, size, fmt, ap);
	va_end(ap);
	return err;
}

/**
 * vmlat_env_ull() - a decimal number from the environment (a test's knob)
 * @name:	the variable
 * @dflt:	the number when it is unset
 * @val:	the number
 *
 * Return: 0, or -EINVAL if @name is set but is not a decimal number.
 */
/**
 * vmlat_case_wanted() - whether the run asks for case @name
 * @name:	a case of a kselftest_harness test (its TEST_F name)
 *
 * selftests/guest-job.sh passes "test:case,case" of VMLAT_ONLY as
 * VMLAT_TESTS="case case" (the Python tests read it too): then only those
 * run. kselftest_harness.h of 6.1 has no filter of its own.
 *
 * Return: true if VMLAT_TESTS is unset or empty, or names @name.
 */
bool vmlat_case_wanted(const char *name)
{
	const char *s = getenv("VMLAT_TESTS"), *p;
	size_t n = strlen(name);

	if (!s || !*s)
		return true;
	for (p = s; (p = strstr(p, name)); p += n)
		if ((p == s || p[-1] == ' ') && (p[n] == ' ' || !p[n]))
			return true;
	return false;
}

int vmlat_env_ull(const char *name, unsigned long long dflt,
		  unsigned long long *val)
{
	const char *s = getenv(name);
	char *end;

	if (!s) {
		*val = dflt;
		return 0;
	}
	if (!isdigit((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	*val = strtoull(s, &end, 10);
	return errno || *end ? -EINVAL : 0;
}
