/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Every kernel-version and kernel-config difference vmlat depends on, in
 * one place (the lttng-modules rule): no .c file tests LINUX_VERSION_CODE.
 *
 * Supported: 5.10 and later; tested on Debian's 5.10, 6.1, 6.12 and 7.2
 * lines (stock and PREEMPT_RT).
 */
#ifndef _VMLAT_COMPAT_H
#define _VMLAT_COMPAT_H

#include <linux/version.h>
#if __has_include(<linux/cc_platform.h>)
#include <linux/cc_platform.h>
#endif
#include <linux/hrtimer.h>
#include <linux/mem_encrypt.h>
#include <linux/module.h>
#include <linux/sched.h>
#include <linux/tracepoint-defs.h>
#include <linux/seq_file.h>
#include <asm/msr.h>
#include <asm/processor.h>
/*
 * cpuid_eax(), hypervisor_cpuid_base(): <asm/processor.h> until after
 * 6.1, <asm/cpuid.h> by 6.8, <asm/cpuid/api.h> from 6.16.
 */
#if __has_include(<asm/cpuid/api.h>)
#include <asm/cpuid/api.h>
#elif __has_include(<asm/cpuid.h>)
#include <asm/cpuid.h>
#endif

#if LINUX_VERSION_CODE < KERNEL_VERSION(5, 10, 0)
#error "vmlat needs Linux 5.10 or later"
#endif

/*
 * RHEL's kernels keep their LINUX_VERSION_CODE (RHEL 9: 5.14.0) and take
 * backports in each minor release; their <linux/version.h> names the
 * release. VMLAT_RHEL_SINCE(9, 1): RHEL 9.1 or later (RHEL 10 too), never
 * on another kernel. Each use below was read in AlmaLinux's rebuilds of
 * RHEL 9.0 to 9.6 and 10.0; no RHEL kernel was built or run here.
 */
#ifdef RHEL_RELEASE_CODE
#define VMLAT_RHEL_SINCE(a, b)	(RHEL_RELEASE_CODE >= RHEL_RELEASE_VERSION(a, b))
#else
#define VMLAT_RHEL_SINCE(a, b)	0
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
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 11, 0) || VMLAT_RHEL_SINCE(9, 6)
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
 * allocation fails); users do, through tracefs (see threshold.c).
 */
#define VMLAT_HAVE_TRACE_SNAPSHOT	IS_ENABLED(CONFIG_TRACER_SNAPSHOT)

/*
 * hrtimer_setup() (6.13) sets a timer's callback as it initialises it;
 * later kernels dropped hrtimer_init().
 */
static inline void vmlat_hrtimer_setup(struct hrtimer *timer,
				       enum hrtimer_restart (*fn)(struct hrtimer *),
				       clockid_t clock_id, enum hrtimer_mode mode)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 13, 0)
	hrtimer_setup(timer, fn, clock_id, mode);
#else
	hrtimer_init(timer, clock_id, mode);
	timer->function = fn;
#endif
}

/*
 * The unbound system workqueue: system_dfl_wq from 6.17 on, where
 * system_unbound_wq became deprecated (7.2 warns at its first use).
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 17, 0)
#define VMLAT_UNBOUND_WQ	system_dfl_wq
#else
#define VMLAT_UNBOUND_WQ	system_unbound_wq
#endif

/* hypervisor_cpuid_base() is cpuid_base_hypervisor() from 6.16 on. */
static inline u32 vmlat_cpuid_base_hypervisor(const char *sig, u32 leaves)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 16, 0)
	return cpuid_base_hypervisor(sig, leaves);
#else
	return hypervisor_cpuid_base(sig, leaves);
#endif
}

/*
 * The preemption model the kernel runs (with PREEMPT_DYNAMIC, the one
 * chosen at boot); preempt_model_*() came in 5.19 (RHEL 9.2),
 * preempt_model_lazy() in 6.13 (RHEL 10).
 */
static inline const char *vmlat_preempt_model(void)
{
#if LINUX_VERSION_CODE < KERNEL_VERSION(5, 19, 0) && !VMLAT_RHEL_SINCE(9, 2)
	/* Before, no preempt_model_*(): the config says it. */
	if (IS_ENABLED(CONFIG_PREEMPT_RT))
		return "rt";
	if (IS_ENABLED(CONFIG_PREEMPT_DYNAMIC))
		return "dynamic";
	if (IS_ENABLED(CONFIG_PREEMPT))
		return "full";
	if (IS_ENABLED(CONFIG_PREEMPT_VOLUNTARY))
		return "voluntary";
	return "none";
#else
	if (preempt_model_rt())
		return "rt";
	if (preempt_model_full())
		return "full";
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 13, 0) || VMLAT_RHEL_SINCE(10, 0)
	if (preempt_model_lazy())
		return "lazy";
#endif
	if (preempt_model_voluntary())
		return "voluntary";
	return "none";
#endif
}

/* A task's state: task_struct.state until 5.14, __state from then on. */
static inline unsigned int vmlat_task_state(const struct task_struct *t)
{
#if LINUX_VERSION_CODE < KERNEL_VERSION(5, 14, 0)
	return READ_ONCE(t->state);
#else
	return READ_ONCE(t->__state);
#endif
}

/*
 * In a guest: whether the CPU state is encrypted (SEV-ES, SEV-SNP), so
 * that the host sees only what the guest exposes (cc_platform_has() from
 * 5.16; sev_es_active() before); whether it is a TDX guest (5.19 on).
 */
static inline bool vmlat_guest_state_encrypted(void)
{
#if __has_include(<linux/cc_platform.h>)
	return cc_platform_has(CC_ATTR_GUEST_STATE_ENCRYPT);
#else
	return sev_es_active();
#endif
}

static inline bool vmlat_tdx_guest(void)
{
#ifdef X86_FEATURE_TDX_GUEST
	return cpu_feature_enabled(X86_FEATURE_TDX_GUEST);
#else
	return false;
#endif
}

/*
 * In a guest: whether it is a confidential one, its memory encrypted
 * (SEV, SEV-ES, SEV-SNP, TDX). Inside a guest memory encryption can only
 * be the guest's own (SME is the host's), so before cc_platform_has()
 * mem_encrypt_active() says it.
 */
static inline bool vmlat_confidential_guest(void)
{
#if __has_include(<linux/cc_platform.h>)
	return cc_platform_has(CC_ATTR_GUEST_MEM_ENCRYPT) || vmlat_tdx_guest();
#else
	return mem_encrypt_active() || vmlat_tdx_guest();
#endif
}

/*
 * Whether this is Linux 5.10, whose modules have no BTF (module BTF came
 * in 5.11): hooks.c may then take the prototypes of 5.10's source.
 */
static inline bool vmlat_kernel_5_10(void)
{
	return LINUX_VERSION_CODE >= KERNEL_VERSION(5, 10, 0) &&
	       LINUX_VERSION_CODE < KERNEL_VERSION(5, 11, 0);
}

/*
 * How many arguments tracepoint @tp of module @mod takes, as the BPF raw
 * tracepoint table that every TRACE_EVENT adds to its module says
 * (struct bpf_raw_event_map, since 4.17); -ENOENT if it has none.
 */
static inline int vmlat_module_tp_args(const struct module *mod,
				       const struct tracepoint *tp)
{
#ifdef CONFIG_BPF_EVENTS
	unsigned int i;

	for (i = 0; i < mod->num_bpf_raw_events; i++)
		if (mod->bpf_raw_events[i].tp == tp)
			return mod->bpf_raw_events[i].num_args;
#endif
	return -ENOENT;
}

/* A static irq_work's initializer: IRQ_WORK_INIT() came in 5.11. */
#ifdef IRQ_WORK_INIT
#define VMLAT_IRQ_WORK_INIT(fn)	IRQ_WORK_INIT(fn)
#else
#define VMLAT_IRQ_WORK_INIT(fn)	{ .func = (fn) }
#endif

/* rdmsrl_safe() is rdmsrq_safe() from 6.16 on. */
static inline int vmlat_rdmsrq_safe(u32 msr, u64 *value)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 16, 0)
	return rdmsrq_safe(msr, value);
#else
	return rdmsrl_safe(msr, (unsigned long long *)value);
#endif
}

#endif /* _VMLAT_COMPAT_H */
