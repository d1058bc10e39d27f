// SPDX-License-Identifier: GPL-2.0
/*
 * What the files of /sys/kernel/debug/vmlat/ share: task names in
 * tables and in JSON (escape.h), columns described once (format.h) for
 * both, and the reading of a value written to a knob (knobs.c checks it).
 */
#include <linux/sched.h>
#include <linux/seq_file.h>
#include <linux/err.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#include "debugfs.h"
#include "escape.h"
#include "format.h"

/* The escapers' buffer sizes hold a whole comm. */
static_assert(VMLAT_NAME_MAX + 1 == TASK_COMM_LEN);

/**
 * vmlat_seq_comm() - a task name in a blank-separated table
 * @m:		the file
 * @comm:	the name (TASK_COMM_LEN bytes at most, NUL-terminated)
 *
 * Control bytes, DEL, blanks and backslashes are escaped in octal, as
 * /proc/mounts does ("CPU 0/KVM" -> "CPU\0400/KVM"); an empty name is "-"
 * (escape.h).
 */
void vmlat_seq_comm(struct seq_file *m, const char *comm)
{
	char buf[VMLAT_TEXT_NAME_SIZE];

	vmlat_escape_text(buf, sizeof(buf), comm,
			  strnlen(comm, VMLAT_NAME_MAX));
	seq_puts(m, buf);
}

/**
 * vmlat_seq_guest_process() - a guest process in a table: "pid comm"
 * @m:		the file
 * @tgid:	its pid in the guest; 0: the guest named none
 * @comm:	its name (an empty one is "-")
 * @unnamed:	what stands for both when @tgid is 0
 */
void vmlat_seq_guest_process(struct seq_file *m, u32 tgid, const char *comm,
			     const char *unnamed)
{
	if (!tgid) {
		seq_puts(m, unnamed);
		return;
	}
	seq_printf(m, "%u ", tgid);
	vmlat_seq_comm(m, comm);
}

/**
 * vmlat_seq_json_str() - a task name as a JSON string, quoted
 * @m:		the file
 * @comm:	the name (TASK_COMM_LEN bytes at most, NUL-terminated)
 *
 * Valid UTF-8 as it is, control characters as \u00XX, ill-formed UTF-8
 * as U+FFFD (escape.h): any name gives a valid document.
 */
void vmlat_seq_json_str(struct seq_file *m, const char *comm)
{
	char buf[VMLAT_JSON_NAME_SIZE];

	vmlat_escape_json(buf, sizeof(buf), comm,
			  strnlen(comm, VMLAT_NAME_MAX));
	seq_putc(m, '"');
	seq_puts(m, buf);
	seq_putc(m, '"');
}

static u64 col_u64(const struct vmlat_col *c, const void *row)
{
	return *(const u64 *)((const char *)row + c->off);
}

/* " name1 name2 ...": a table header's part for @cols. */
void vmlat_cols_header(struct seq_file *m, const struct vmlat_col *cols,
		       unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		seq_printf(m, " %s", cols[i].name);
}

/* " v1 v2 ...": @row's values of @cols, in a table. */
void vmlat_cols_text(struct seq_file *m, const struct vmlat_col *cols,
		     unsigned int n, const void *row)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		if (cols[i].is_signed)
			seq_printf(m, " %lld", (s64)col_u64(&cols[i], row));
		else
			seq_printf(m, " %llu", col_u64(&cols[i], row));
	}
}

/* @sep"name":value of column @c of @row. */
static void col_json(struct seq_file *m, const struct vmlat_col *c,
		     const void *row, const char *sep)
{
	if (c->is_signed)
		seq_printf(m, "%s\"%s\":%lld", sep, c->name,
			   (s64)col_u64(c, row));
	else
		seq_printf(m, "%s\"%s\":%llu", sep, c->name, col_u64(c, row));
}

/* ",\"name1\":v1,...": @row's values of @cols as JSON members. */
void vmlat_cols_json(struct seq_file *m, const struct vmlat_col *cols,
		     unsigned int n, const void *row)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		col_json(m, &cols[i], row, ",");
}

/* "{\"name1\":v1,...": a JSON object of @cols, left open for more. */
void vmlat_cols_json_open(struct seq_file *m, const struct vmlat_col *cols,
			  unsigned int n, const void *row)
{
	unsigned int i;

	seq_putc(m, '{');
	for (i = 0; i < n; i++)
		col_json(m, &cols[i], row, i ? "," : "");
}

/* @sum += @row, column by column (sums of vCPUs). */
void vmlat_cols_add(const struct vmlat_col *cols, unsigned int n, void *sum,
		    const void *row)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		*(u64 *)((char *)sum + cols[i].off) += col_u64(&cols[i], row);
}

/**
 * vmlat_knob_from_user() - a value written to a knob file
 * @ubuf:	the user's buffer
 * @count:	its length
 * @buf:	where to copy it
 * @size:	@buf's size
 *
 * Return: @buf holding the value, NUL-terminated; "" for an empty value
 * or one too long for @buf (the knob refuses it, with its message); or
 * ERR_PTR(-EFAULT).
 */
const char *vmlat_knob_from_user(const char __user *ubuf, size_t count,
				 char *buf, size_t size)
{
	if (!count || count >= size)
		return "";
	if (copy_from_user(buf, ubuf, count))
		return ERR_PTR(-EFAULT);
	buf[count] = '\0';
	return buf;
}
