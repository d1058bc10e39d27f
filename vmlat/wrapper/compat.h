/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Every kernel-version and kernel-config difference vmlat depends on, in
 * one place (the lttng-modules rule): no .c file tests LINUX_VERSION_CODE.
 *
 * Supported: 6.1 and later (Debian bookworm's 6.1 and 6.12 lines).
 */
#ifndef _VMLAT_COMPAT_H
#define _VMLAT_COMPAT_H

#include <linux/version.h>
#include <linux/module.h>
#include <linux/seq_file.h>

#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 1, 0)
#error "vmlat needs Linux 6.1 or later"
#endif

/**
 * vmlat_module_btf() - the raw .BTF section of a module being loaded
 * @mod:	a module in its MODULE_STATE_COMING notifier
 * @size:	set to the section size
 *
 * The section lives in the loader's temporary copy: valid only inside the
 * COMING notifier of a real load (the loader NULLs the pointer after
 * init). Modules whose BTF is relative to a "distilled" base (6.11+) need
 * relocation by the BPF core first; for those, and without module BTF,
 * there is nothing usable here.
 *
 * Return: the section, or NULL.
 */
static inline const void *vmlat_module_btf(struct module *mod, size_t *size)
{
#ifdef CONFIG_DEBUG_INFO_BTF_MODULES
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 11, 0)
	if (mod->btf_base_data)
		return NULL;
#endif
	*size = mod->btf_data_size;
	return mod->btf_data;
#else
	return NULL;
#endif
}

/*
 * A debugfs file read with single_open(@__name_show) and written with
 * @__name_write(): the kernel's own macro from 6.2 on, spelt out for 6.1.
 */
#ifndef DEFINE_SHOW_STORE_ATTRIBUTE
#define DEFINE_SHOW_STORE_ATTRIBUTE(__name)				\
static int __name ## _open(struct inode *inode, struct file *file)	\
{									\
	return single_open(file, __name ## _show, inode->i_private);	\
}									\
									\
static const struct file_operations __name ## _fops = {			\
	.owner		= THIS_MODULE,					\
	.open		= __name ## _open,				\
	.read		= seq_read,					\
	.write		= __name ## _write,				\
	.llseek		= seq_lseek,					\
	.release	= single_release,				\
}
#endif

/*
 * Whether the main trace buffer can have a snapshot buffer: without
 * CONFIG_TRACER_SNAPSHOT, tracing_snapshot() does nothing but WARN. vmlat
 * never allocates that buffer (the exported ways to do so WARN when the
 * allocation fails); users do, through tracefs (see report.c).
 */
#define VMLAT_HAVE_TRACE_SNAPSHOT	IS_ENABLED(CONFIG_TRACER_SNAPSHOT)

#endif /* _VMLAT_COMPAT_H */
