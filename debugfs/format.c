// SPDX-License-Identifier: GPL-2.0
/*
 * What the printers of /sys/kernel/debug/vmlat/ share: task names in
 * tables and in JSON, and columns described once (format.h) for both.
 */
#include <linux/seq_file.h>

#include "debugfs.h"
#include "format.h"

/**
 * vmlat_seq_comm() - a task name in a whitespace-separated table
 * @m:		the file
 * @comm:	the name; an empty one is printed as "-"
 *
 * Blanks and backslashes are escaped in octal, as /proc/mounts does
 * ("CPU 0/KVM" -> "CPU\0400/KVM").
 */
void vmlat_seq_comm(struct seq_file *m, const char *comm)
{
	if (!*comm) {
		seq_putc(m, '-');
		return;
	}
	seq_escape(m, comm, " \t\n\\");
}

/* A task name as a JSON string: comm is any bytes a task chose. */
void vmlat_seq_json_str(struct seq_file *m, const char *s)
{
	seq_putc(m, '"');
	for (; *s; s++) {
		unsigned char c = *s;

		if (c == '"' || c == '\\' || c < 0x20 || c >= 0x7f)
			seq_printf(m, "\\u%04x", c);
		else
			seq_putc(m, c);
	}
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
