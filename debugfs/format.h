/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Columns described once: a table of struct vmlat_col says each column's
 * name and where its value is in a row struct (all u64 or s64), and the
 * same table prints a text table's header and rows and a JSON object's
 * members, so that the two cannot disagree.
 */
#ifndef _VMLAT_FORMAT_H
#define _VMLAT_FORMAT_H

#include <linux/stddef.h>
#include <linux/types.h>

struct seq_file;

/**
 * struct vmlat_col - one column
 * @name:	its name, in the header and as the JSON member
 * @off:	offset of its u64 (or s64) in the row struct
 * @is_signed:	the value is an s64
 */
struct vmlat_col {
	const char *name;
	u16 off;
	bool is_signed;
};

#define VMLAT_COL(type, member)						\
	{ .name = #member, .off = offsetof(type, member) }
#define VMLAT_COL_S(type, member)					\
	{ .name = #member, .off = offsetof(type, member), .is_signed = true }
/* The same, for a member of the member @in of the row. */
#define VMLAT_COL_IN(type, in, member)					\
	{ .name = #member, .off = offsetof(type, in.member) }
#define VMLAT_COL_IN_S(type, in, member)				\
	{ .name = #member, .off = offsetof(type, in.member),		\
	  .is_signed = true }

void vmlat_cols_header(struct seq_file *m, const struct vmlat_col *cols,
		       unsigned int n);
void vmlat_cols_text(struct seq_file *m, const struct vmlat_col *cols,
		     unsigned int n, const void *row);
void vmlat_cols_json(struct seq_file *m, const struct vmlat_col *cols,
		     unsigned int n, const void *row);
void vmlat_cols_json_open(struct seq_file *m, const struct vmlat_col *cols,
			  unsigned int n, const void *row);
void vmlat_cols_add(const struct vmlat_col *cols, unsigned int n, void *sum,
		    const void *row);

#endif /* _VMLAT_FORMAT_H */
