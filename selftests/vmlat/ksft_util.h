/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Small helpers shared by the vmlat selftest library and its programs.
 *
 * All functions that can fail return 0 or a negative errno.
 */
#ifndef VMLAT_KSFT_UTIL_H
#define VMLAT_KSFT_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

uint64_t vmlat_now_ms(void);
bool vmlat_path_exists(const char *path);
int vmlat_write_file(const char *path, const char *val);
int vmlat_read_line(const char *path, char *buf, size_t len);
void vmlat_trim_right(char *s);
int vmlat_env_ull(const char *name, unsigned long long dflt,
		  unsigned long long *val);
bool vmlat_case_wanted(const char *name);
int vmlat_errorf(char *buf, size_t size, int err, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

#endif /* VMLAT_KSFT_UTIL_H */
