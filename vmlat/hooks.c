// SPDX-License-Identifier: GPL-2.0
/*
 * Attaching vmlat's probes to tracepoints by name.
 *
 * Only kvm's tracepoint symbols are exported, and the scheduler's are not,
 * so vmlat finds every tracepoint by name instead: built-in ones with
 * for_each_kernel_tracepoint(), those of modules (kvm.ko) through the
 * tracepoint module notifier, which also reports modules already loaded
 * and tells when they go away. vmlat thus needs no symbol from kvm, loads
 * before or after it, survives "rmmod kvm_amd kvm" and re-attaches when kvm
 * comes back.
 *
 * A probe is attached only after its prototype has been read from the
 * running kernel's BTF (btf.c) and found equal to one vmlat has a probe
 * for; otherwise the hook stays detached and debugfs says why. The same
 * BTF confirms the layouts of KVM's private structs that the probes read
 * (layout.c): kvm's before its hooks attach, kvm_amd's when it loads
 * (a module notifier of its own: kvm_amd has no tracepoints).
 *
 * Locking: vmlat_hooks_lock serialises everything here. The module
 * notifier runs under tracepoint_module_list_mutex, so the order is
 * tracepoint_module_list_mutex -> vmlat_hooks_lock -> tracepoints_mutex
 * (inside tracepoint_probe_register()), everywhere.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/fs.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <linux/tracepoint.h>
#include <linux/vmalloc.h>
#include <linux/workqueue.h>

#include "btf.h"
#include "compat.h"
#include "delivery.h"
#include "layout.h"
#include "test_build.h"
#include "vmlat.h"

/* BTF of vmlinux is a few MiB; refuse anything absurd. */
#define VMLAT_BTF_MAX_SIZE	(64 << 20)

/**
 * struct vmlat_hook - runtime state of one hook (under vmlat_hooks_lock)
 * @tp:		the tracepoint the probe is registered on; NULL: detached
 * @probe:	the registered probe
 * @mod:	the module providing @tp; NULL for vmlinux
 * @detail:	confirmed prototype, or why the hook is detached
 */
struct vmlat_hook {
	struct tracepoint *tp;
	void *probe;
	struct module *mod;
	char detail[VMLAT_DETAIL_LEN];
};

static struct vmlat_hook vmlat_hooks[VMLAT_NR_HOOKS];
static DEFINE_MUTEX(vmlat_hooks_lock);

#ifdef VMLAT_TEST_BUILD
/* test_build.h: the test build's case, set at load */
int vmlat_test_case;

static int vmlat_test_case_set(const char *val, const struct kernel_param *kp)
{
	static const char *const names[] = {
		[VMLAT_TEST_NONE] = "none",
		[VMLAT_TEST_LAYOUT_SKEW] = "layout-skew",
		[VMLAT_TEST_NO_MOD_BTF] = "no-mod-btf",
		[VMLAT_TEST_KVM_NO_BTF] = "kvm-no-btf",
	};
	int i = sysfs_match_string(names, val);

	if (i < 0) {
		pr_warn("test_case: none, layout-skew, no-mod-btf or kvm-no-btf\n");
		return -EINVAL;
	}
	vmlat_test_case = i;
	return 0;
}

static const struct kernel_param_ops vmlat_test_case_ops = {
	.set = vmlat_test_case_set,
	.get = param_get_int,
};
module_param_cb(test_case, &vmlat_test_case_ops, &vmlat_test_case, 0444);
MODULE_PARM_DESC(test_case, "selftests' test build only: the kernel vmlat must refuse");
#endif

/* A test build's case in which modules have no BTF (test_build.h). */
static bool vmlat_test_no_mod_btf(void)
{
	return vmlat_test_case == VMLAT_TEST_NO_MOD_BTF ||
	       vmlat_test_case == VMLAT_TEST_KVM_NO_BTF;
}

/*
 * The task in which register_tracepoint_module_notifier() replays
 * MODULE_STATE_COMING for modules loaded before vmlat. A real COMING
 * notification runs in the loading task instead, which tells the two apart
 * even when they race.
 */
static struct task_struct *vmlat_replay_task;

/* BTF read for one attach pass: vmlinux, plus a module's split BTF. */
struct vmlat_btf_set {
	void *vmlinux_data;
	u32 *vmlinux_offs;
	struct vmlat_btf vmlinux;
	void *mod_file;		/* module BTF read from sysfs (vfree) */
	u32 *mod_offs;
	struct vmlat_btf mod;
	const struct vmlat_btf *top;	/* what to look tracepoints up in */
	char why[112];		/* why @top is NULL */
	bool no_mod_btf;	/* only the module's BTF is missing */
};

/*
 * Why the hooks of a module loaded before vmlat could not be confirmed
 * (no BTF, and not Linux 5.10), or "".
 */
static char vmlat_mod_unconfirmed[sizeof_field(struct vmlat_btf_set, why)];

static int vmlat_btf_index(struct vmlat_btf *btf, const void *data,
			   size_t size, const struct vmlat_btf *base,
			   u32 **offs)
{
	u32 nr;
	int err;

	err = vmlat_btf_count(data, size, &nr);
	if (err)
		return err;
	*offs = kvmalloc_array(nr ? nr : 1, sizeof(u32), GFP_KERNEL);
	if (!*offs)
		return -ENOMEM;
	return vmlat_btf_init(btf, data, size, base, *offs, nr);
}

/*
 * Read /sys/kernel/btf/@name into a vmalloc buffer. This deliberately does
 * not use kernel_read_file(): that is an LSM hook meant for firmware, kexec
 * images and policies, and LSMs such as IPE warn on an unknown read type.
 * Plain VFS reads of a sysfs binary attribute need no policy decision.
 */
static ssize_t vmlat_read_sysfs_btf(const char *name, void **data)
{
	char path[MODULE_NAME_LEN + 32];
	struct file *file;
	loff_t size, pos = 0;
	ssize_t n = 0;
	void *buf;

	*data = NULL;
	snprintf(path, sizeof(path), "/sys/kernel/btf/%s", name);
	file = filp_open(path, O_RDONLY, 0);
	if (IS_ERR(file))
		return PTR_ERR(file);
	size = i_size_read(file_inode(file));
	if (size <= 0 || size > VMLAT_BTF_MAX_SIZE) {
		n = size <= 0 ? -ENODATA : -EFBIG;
		goto out;
	}
	buf = vmalloc(size);
	if (!buf) {
		n = -ENOMEM;
		goto out;
	}
	while (pos < size) {
		n = kernel_read(file, buf + pos, size - pos, &pos);
		if (n <= 0)
			break;
	}
	if (n < 0 || pos != size) {
		vfree(buf);
		n = n < 0 ? n : -EIO;
		goto out;
	}
	*data = buf;
	n = size;
out:
	filp_close(file, NULL);
	return n;
}

/* 0 if module @name is loaded (/sys/module/@name), else an errno. */
static int vmlat_sysfs_module(const char *name)
{
	char path[MODULE_NAME_LEN + 16];
	struct file *file;

	snprintf(path, sizeof(path), "/sys/module/%s", name);
	file = filp_open(path, O_RDONLY | O_DIRECTORY, 0);
	if (IS_ERR(file))
		return PTR_ERR(file);
	filp_close(file, NULL);
	return 0;
}

/*
 * One read of /sys/kernel/btf/@name (or, @module, a look for
 * /sys/module/@name), made by a kernel worker.
 */
struct vmlat_btf_read {
	struct work_struct work;
	const char *name;
	bool module;
	void *data;
	ssize_t ret;
};

static void vmlat_btf_read_workfn(struct work_struct *work)
{
	struct vmlat_btf_read *rd = container_of(work, struct vmlat_btf_read,
						 work);

	if (rd->module)
		rd->ret = vmlat_sysfs_module(rd->name);
	else
		rd->ret = vmlat_read_sysfs_btf(rd->name, &rd->data);
}

static void vmlat_btf_read_wait(struct vmlat_btf_read *rd)
{
	INIT_WORK_ONSTACK(&rd->work, vmlat_btf_read_workfn);
	queue_work(VMLAT_UNBOUND_WQ, &rd->work);
	flush_work(&rd->work);
	destroy_work_on_stack(&rd->work);
}

/*
 * Read /sys/kernel/btf/@name as vmlat_read_sysfs_btf() does, but with the
 * kernel's own root. A path is looked up from the root of the task that
 * opens it, and the task that loads vmlat or kvm (in whose context the
 * module notifier runs) may sit in a chroot or a container whose /sys is
 * not the host's, or in a service's private mount namespace. Kernel
 * threads share init's fs_struct (init_fs) and mount namespace, so the
 * read is handed to a worker and waited for. Its work function takes none
 * of the locks held here, so waiting cannot deadlock.
 */
static ssize_t vmlat_read_btf(const char *name, void **data)
{
	struct vmlat_btf_read rd = { .name = name };

	vmlat_btf_read_wait(&rd);
	*data = rd.data;
	return rd.ret;
}

/* Whether module @name is loaded, looked for as vmlat_read_btf() reads. */
static bool vmlat_module_loaded(const char *name)
{
	struct vmlat_btf_read rd = { .name = name, .module = true };

	vmlat_btf_read_wait(&rd);
	return !rd.ret;
}

static void vmlat_btf_set_free(struct vmlat_btf_set *set)
{
	kvfree(set->mod_offs);
	vfree(set->mod_file);
	kvfree(set->vmlinux_offs);
	vfree(set->vmlinux_data);
	memset(set, 0, sizeof(*set));
}

/*
 * Load the BTF of module @name (NULL: vmlinux only), @mod if it is being
 * loaded (its raw section at hand), else NULL. On failure set->top stays
 * NULL and set->why says what is missing; the hooks concerned then stay
 * detached with that reason. Return the error of reading the module's
 * BTF from sysfs, 0 if it was read or not needed.
 */
static ssize_t vmlat_btf_set_load(struct vmlat_btf_set *set, const char *name,
				  struct module *mod)
{
	const void *mod_data = NULL;
	size_t mod_size = 0;
	ssize_t n;
	int err;

	memset(set, 0, sizeof(*set));
	n = vmlat_read_btf("vmlinux", &set->vmlinux_data);
	if (n < 0) {
		snprintf(set->why, sizeof(set->why),
			 "no vmlinux BTF (%zd)", n);
		return 0;
	}
	err = vmlat_btf_index(&set->vmlinux, set->vmlinux_data, n, NULL,
			      &set->vmlinux_offs);
	if (err) {
		snprintf(set->why, sizeof(set->why),
			 "bad vmlinux BTF (%d)", err);
		return 0;
	}
	if (!name) {
		set->top = &set->vmlinux;
		return 0;
	}

	/*
	 * During a real load the raw section is at hand; when replaying
	 * modules loaded earlier it is gone (or, mid-load, about to be), and
	 * the BPF core's copy in sysfs is the one to read.
	 */
	if (mod && current != READ_ONCE(vmlat_replay_task) &&
	    !vmlat_test_no_mod_btf())
		mod_data = vmlat_module_btf(mod, &mod_size);
	if (!mod_data) {
		/* (a test build's kernel without module BTF: none in sysfs) */
		n = vmlat_test_no_mod_btf() ? -ENOENT :
		    vmlat_read_btf(name, &set->mod_file);
		if (n < 0) {
			snprintf(set->why, sizeof(set->why),
				 "no BTF for module %s (%zd)", name, n);
			set->no_mod_btf = n == -ENOENT;
			return n;
		}
		mod_data = set->mod_file;
		mod_size = n;
	}
	err = vmlat_btf_index(&set->mod, mod_data, mod_size, &set->vmlinux,
			      &set->mod_offs);
	if (err) {
		snprintf(set->why, sizeof(set->why),
			 "bad BTF for module %s (%d)", name, err);
		return 0;
	}
	set->top = &set->mod;
	return 0;
}

/* How many arguments @proto ("(a, b)", "()") declares. */
static unsigned int vmlat_proto_args(const char *proto)
{
	unsigned int n = strcmp(proto, "()") ? 1 : 0;

	for (; *proto; proto++)
		n += *proto == ',';
	return n;
}

/*
 * Linux 5.10's modules have no BTF. There, a hook of module @mod takes
 * the one variant whose prototype is the one 5.10's source declares
 * (src_5_10), if @tp takes as many arguments as it does (the module's BPF
 * raw tracepoint table): the index of that variant, or -1 with the reason
 * in @hook's detail.
 */
static int vmlat_variant_5_10(const struct vmlat_hook_desc *desc,
			      struct vmlat_hook *hook, struct module *mod,
			      struct tracepoint *tp, const char *why)
{
	int args = vmlat_module_tp_args(mod, tp);
	unsigned int i;

	for (i = 0; i < desc->nr_variants; i++) {
		if (desc->variants[i].src_5_10)
			break;
	}
	if (i == desc->nr_variants || args < 0 ||
	    vmlat_proto_args(desc->variants[i].proto) != args) {
		snprintf(hook->detail, sizeof(hook->detail),
			 "cannot confirm prototype: %s; %d arguments, none of 5.10's",
			 why, args);
		return -1;
	}
	return i;
}

/* Confirm the prototype of @tp and register the matching probe. */
static void vmlat_hook_attach(enum vmlat_hook_id id, struct tracepoint *tp,
			      struct module *mod, struct vmlat_btf_set *set)
{
	const struct vmlat_hook_desc *desc = &vmlat_hook_descs[id];
	struct vmlat_hook *hook = &vmlat_hooks[id];
	char proto[VMLAT_DETAIL_LEN - 32];
	unsigned int i;
	int err;

	lockdep_assert_held(&vmlat_hooks_lock);
	if (hook->tp)
		return;

	if (!set->top && set->no_mod_btf && mod && vmlat_kernel_5_10()) {
		err = vmlat_variant_5_10(desc, hook, mod, tp, set->why);
		if (err < 0)
			return;
		i = err;
		snprintf(proto, sizeof(proto), "%s (5.10's; %u args, no BTF)",
			 desc->variants[i].proto,
			 vmlat_proto_args(desc->variants[i].proto));
		goto attach;
	}
	if (!set->top) {
		snprintf(hook->detail, sizeof(hook->detail),
			 "cannot confirm prototype: %s", set->why);
		return;
	}
	err = vmlat_btf_tp_proto(set->top, desc->name, proto, sizeof(proto));
	if (err) {
		snprintf(hook->detail, sizeof(hook->detail),
			 "cannot confirm prototype: btf_trace_%s: error %d",
			 desc->name, err);
		return;
	}
	for (i = 0; i < desc->nr_variants; i++) {
		if (!strcmp(desc->variants[i].proto, proto))
			break;
	}
	if (i == desc->nr_variants) {
		snprintf(hook->detail, sizeof(hook->detail),
			 "unsupported prototype %s", proto);
		return;
	}
attach:
	err = tracepoint_probe_register(tp, desc->variants[i].probe, NULL);
	if (err) {
		snprintf(hook->detail, sizeof(hook->detail),
			 "tracepoint_probe_register: error %d", err);
		return;
	}
	hook->tp = tp;
	hook->probe = desc->variants[i].probe;
	hook->mod = mod;
	strscpy(hook->detail, proto, sizeof(hook->detail));
}

static void vmlat_hook_detach(enum vmlat_hook_id id, const char *why)
{
	struct vmlat_hook *hook = &vmlat_hooks[id];

	lockdep_assert_held(&vmlat_hooks_lock);
	if (!hook->tp)
		return;
	/* Fails only if the probe is not registered: our bug, not the user's. */
	WARN_ON_ONCE(tracepoint_probe_unregister(hook->tp, hook->probe, NULL));
	hook->tp = NULL;
	hook->probe = NULL;
	hook->mod = NULL;
	strscpy(hook->detail, why, sizeof(hook->detail));
}

static int vmlat_hook_lookup(const char *tp_name)
{
	int id;

	for (id = 0; id < VMLAT_NR_HOOKS; id++) {
		if (!strcmp(vmlat_hook_descs[id].name, tp_name))
			return id;
	}
	return -1;
}

/* Tracepoints found in one pass, before any BTF is read. */
struct vmlat_found {
	struct tracepoint *tp[VMLAT_NR_HOOKS];
	unsigned int nr;
};

static void vmlat_found_add(struct vmlat_found *found, struct tracepoint *tp)
{
	int id = vmlat_hook_lookup(tp->name);

	if (id >= 0 && !found->tp[id]) {
		found->tp[id] = tp;
		found->nr++;
	}
}

/*
 * Whether every scheduler hook is attached. The KVM hooks make vCPU
 * records, which only the scheduler's hooks keep right and only
 * sched_process_exit retires (dropping the thread's task_struct pointer
 * from the task table): without all of them, the KVM hooks stay detached.
 */
static bool vmlat_sched_hooks_attached(const char **missing)
{
	int id;

	for (id = VMLAT_HOOK_SCHED_SWITCH; id < VMLAT_NR_HOOKS; id++) {
		if (!vmlat_hooks[id].tp) {
			*missing = vmlat_hook_descs[id].name;
			return false;
		}
	}
	return true;
}

/*
 * Attach the hooks whose tracepoints were found in @mod (NULL: vmlinux),
 * last to first: the KVM hooks that end guest mode (kvm_exit,
 * kvm_userspace_exit) before kvm_entry, which makes records in guest
 * mode. Attached the other way round on a host whose VMs run, a record
 * could enter guest mode and never see the exit that ended it, and keep
 * a pointer to a vCPU its VMM destroyed.
 * Return 0, or -EOPNOTSUPP if there was no BTF to confirm them with.
 */
static int vmlat_attach_found(struct vmlat_found *found, struct module *mod)
{
	char layout[VMLAT_DETAIL_LEN - 16];
	struct vmlat_btf_set set;
	const char *missing;
	u32 refused = 0;
	int id, ret;

	BUILD_BUG_ON(VMLAT_HOOK_KVM_ENTRY != 0 ||
		     VMLAT_HOOK_SCHED_SWITCH < VMLAT_HOOK_KVM_MMU_GET_PAGE);
	if (!found->nr)
		return 0;
	vmlat_btf_set_load(&set, mod ? mod->name : NULL, mod);
	/* kvm's private layouts, while none of its hooks is attached */
	for (id = 0; id < VMLAT_HOOK_SCHED_SWITCH; id++) {
		if (found->tp[id] && !vmlat_hooks[id].tp) {
			refused = vmlat_layout_check(VMLAT_LAYOUT_KVM, set.top,
						     set.why, layout,
						     sizeof(layout));
			break;
		}
	}
	for (id = VMLAT_NR_HOOKS - 1; id >= 0; id--) {
		if (!found->tp[id])
			continue;
		if (id < VMLAT_HOOK_SCHED_SWITCH &&
		    !vmlat_sched_hooks_attached(&missing)) {
			snprintf(vmlat_hooks[id].detail, VMLAT_DETAIL_LEN,
				 "not attached: the scheduler's %s is not",
				 missing);
			continue;
		}
		if (id < VMLAT_HOOK_SCHED_SWITCH &&
		    (refused & VMLAT_LAYOUT_VCPU)) {
			snprintf(vmlat_hooks[id].detail, VMLAT_DETAIL_LEN,
				 "not attached: %s", layout);
			continue;
		}
		vmlat_hook_attach(id, found->tp[id], mod, &set);
	}
	ret = 0;
	if (!set.top && set.no_mod_btf && vmlat_kernel_5_10())
		pr_info("module %s has no BTF (Linux 5.10): its hooks take 5.10's prototypes, checked by their numbers of arguments\n",
			mod->name);
	else if (!set.top)
		ret = -EOPNOTSUPP;
	/* loaded before vmlat: vmlat_hooks_init() refuses the load */
	if (ret && mod && current == READ_ONCE(vmlat_replay_task))
		strscpy(vmlat_mod_unconfirmed, set.why,
			sizeof(vmlat_mod_unconfirmed));
	else if (ret && mod)
		pr_warn("cannot confirm the prototypes of module %s's tracepoints (%s): its hooks stay detached until it loads with its BTF\n",
			mod->name, set.why);
	else if (ret)
		pr_warn("cannot confirm tracepoint prototypes: %s\n", set.why);
	vmlat_btf_set_free(&set);
	return ret;
}

/* kvm's tracepoints were seen (its hooks may have been refused). */
static bool vmlat_kvm_seen;

static void vmlat_collect_builtin(struct tracepoint *tp, void *priv)
{
	vmlat_found_add(priv, tp);
}

static void vmlat_module_coming(struct module *mod)
{
	struct vmlat_found found = {};
	unsigned int i;

	for (i = 0; i < mod->num_tracepoints; i++)
		vmlat_found_add(&found,
				tracepoint_ptr_deref(mod->tracepoints_ptrs + i));
	if (found.tp[VMLAT_HOOK_KVM_EXIT])
		vmlat_kvm_seen = true;
	vmlat_attach_found(&found, mod);
	/* Its tracepoints vmlat knows that this kernel's module has not. */
	for (i = 0; i < VMLAT_NR_HOOKS; i++) {
		if (!found.tp[i] && vmlat_hook_descs[i].provider &&
		    !strcmp(vmlat_hook_descs[i].provider, mod->name))
			snprintf(vmlat_hooks[i].detail, VMLAT_DETAIL_LEN,
				 "module %s has no such tracepoint", mod->name);
	}
}

static void vmlat_module_going(struct module *mod)
{
	char why[VMLAT_DETAIL_LEN];
	int id;

	snprintf(why, sizeof(why), "module %s unloaded", mod->name);
	/* Its LAPIC timers' function goes with it (delivery.c). */
	if (vmlat_hooks[VMLAT_HOOK_KVM_EXIT].mod == mod)
		vmlat_delivery_forget();
	for (id = 0; id < VMLAT_NR_HOOKS; id++) {
		if (vmlat_hooks[id].tp && vmlat_hooks[id].mod == mod)
			vmlat_hook_detach(id, why);
	}
}

static int vmlat_tp_module_notify(struct notifier_block *nb,
				  unsigned long state, void *data)
{
	struct tp_module *tp_mod = data;

	mutex_lock(&vmlat_hooks_lock);
	if (state == MODULE_STATE_COMING)
		vmlat_module_coming(tp_mod->mod);
	else if (state == MODULE_STATE_GOING)
		vmlat_module_going(tp_mod->mod);
	mutex_unlock(&vmlat_hooks_lock);
	return NOTIFY_OK;
}

static struct notifier_block vmlat_tp_module_nb = {
	.notifier_call = vmlat_tp_module_notify,
};

/* ---- kvm_amd: the layouts of its struct vcpu_svm and of the VMCB ---- */

/*
 * Confirm kvm_amd's layouts from its BTF: @mod in its COMING notifier,
 * NULL for a kvm_amd loaded before vmlat (its BTF in sysfs, none there if
 * it is not loaded, or if it has none: 5.10, where /sys/module tells the
 * two apart). Under vmlat_hooks_lock, whose work queue reads BTF.
 */
static void vmlat_svm_layout_check(struct module *mod)
{
	struct vmlat_btf_set set;
	ssize_t n;

	lockdep_assert_held(&vmlat_hooks_lock);
	n = vmlat_btf_set_load(&set, "kvm_amd", mod);
	/* no BTF: unless it is not loaded (5.10's modules have none) */
	if (n != -ENOENT || mod || vmlat_module_loaded("kvm_amd"))
		vmlat_layout_check(VMLAT_LAYOUT_KVM_AMD,
				   set.top == &set.mod ? set.top : NULL,
				   set.why, NULL, 0);
	vmlat_btf_set_free(&set);
}

/*
 * kvm_amd loading: its COMING notification comes before its init, so
 * before any of its vCPUs runs. Only this module's state is taken here.
 */
static int vmlat_vendor_module_notify(struct notifier_block *nb,
				      unsigned long state, void *data)
{
	struct module *mod = data;

	if (strcmp(mod->name, "kvm_amd"))
		return NOTIFY_DONE;
	mutex_lock(&vmlat_hooks_lock);
	if (state == MODULE_STATE_COMING)
		vmlat_svm_layout_check(mod);
	else if (state == MODULE_STATE_GOING)
		vmlat_layout_forget(VMLAT_LAYOUT_KVM_AMD);
	mutex_unlock(&vmlat_hooks_lock);
	return NOTIFY_OK;
}

static struct notifier_block vmlat_vendor_module_nb = {
	.notifier_call = vmlat_vendor_module_notify,
};

static void vmlat_hooks_set_initial_detail(void)
{
	const struct vmlat_hook_desc *desc;
	int id;

	for (id = 0; id < VMLAT_NR_HOOKS; id++) {
		desc = &vmlat_hook_descs[id];
		if (desc->provider)
			snprintf(vmlat_hooks[id].detail, VMLAT_DETAIL_LEN,
				 "module %s not loaded", desc->provider);
		else
			strscpy(vmlat_hooks[id].detail,
				"no such tracepoint in this kernel",
				VMLAT_DETAIL_LEN);
	}
}

/**
 * vmlat_hooks_check() - whether kvm's hooks can be confirmed on this kernel
 *
 * By the BTF of module kvm (CONFIG_DEBUG_INFO_BTF_MODULES, from Linux
 * 5.11), or on 5.10, whose modules have none, by their numbers of
 * arguments. On any other kernel vmlat would pin its memory and never
 * measure a VM: it does not load.
 *
 * Context: process context, before anything is allocated.
 * Return: 0 or -EOPNOTSUPP.
 */
int vmlat_hooks_check(void)
{
	if ((IS_ENABLED(CONFIG_DEBUG_INFO_BTF_MODULES) &&
	     vmlat_test_case != VMLAT_TEST_NO_MOD_BTF) || vmlat_kernel_5_10())
		return 0;
	pr_err("kvm's tracepoints cannot be confirmed: this kernel has no module BTF (CONFIG_DEBUG_INFO_BTF_MODULES is not set) and is not Linux 5.10; vmlat does not load\n");
	return -EOPNOTSUPP;
}

/**
 * vmlat_hooks_init() - attach every hook that can be confirmed
 *
 * Hooks of modules not loaded yet attach when the module loads.
 *
 * Context: process context, may sleep.
 * Return: 0, or a negative errno if vmlat cannot work on this kernel at
 * all (no vmlinux BTF to confirm prototypes with).
 */
int vmlat_hooks_init(void)
{
	struct vmlat_found found = {};
	int err, id;

	mutex_lock(&vmlat_hooks_lock);
	vmlat_hooks_set_initial_detail();
	for_each_kernel_tracepoint(vmlat_collect_builtin, &found);
	err = vmlat_attach_found(&found, NULL);
	mutex_unlock(&vmlat_hooks_lock);
	if (err) {
		pr_err("needs a kernel with CONFIG_DEBUG_INFO_BTF=y and /sys/kernel/btf/vmlinux readable\n");
		goto err_detach;
	}

	/*
	 * kvm_amd's layouts before kvm's hooks attach: from its notifier
	 * if it loads from now on, from sysfs if it is loaded already (both,
	 * if it loads now: the second check repeats the first).
	 */
	err = register_module_notifier(&vmlat_vendor_module_nb);
	if (err) {
		pr_err("cannot watch modules for kvm_amd (error %d)\n", err);
		goto err_detach;
	}
	mutex_lock(&vmlat_hooks_lock);
	vmlat_svm_layout_check(NULL);
	mutex_unlock(&vmlat_hooks_lock);

	/* Replays MODULE_STATE_COMING for modules already loaded (kvm). */
	WRITE_ONCE(vmlat_replay_task, current);
	err = register_tracepoint_module_notifier(&vmlat_tp_module_nb);
	WRITE_ONCE(vmlat_replay_task, NULL);
	if (err) {
		pr_err("cannot watch modules for tracepoints (error %d)\n", err);
		unregister_module_notifier(&vmlat_vendor_module_nb);
		goto err_detach;
	}
	/*
	 * kvm is loaded and its hooks can be confirmed neither by its BTF
	 * nor, on 5.10, by their arity: nothing to measure, nothing pinned.
	 */
	if (vmlat_mod_unconfirmed[0]) {
		pr_err("kvm's tracepoints cannot be confirmed: %s; vmlat does not load (the kernel drops a module's BTF that does not match vmlinux's: see its log)\n",
		       vmlat_mod_unconfirmed);
		unregister_tracepoint_module_notifier(&vmlat_tp_module_nb);
		unregister_module_notifier(&vmlat_vendor_module_nb);
		err = -EOPNOTSUPP;
		goto err_detach;
	}
	if (!vmlat_kvm_seen)
		pr_info("kvm is not loaded: its hooks attach when it is (modprobe kvm_amd or kvm_intel)\n");
	return 0;

err_detach:
	mutex_lock(&vmlat_hooks_lock);
	for (id = 0; id < VMLAT_NR_HOOKS; id++)
		vmlat_hook_detach(id, "vmlat failed to load");
	mutex_unlock(&vmlat_hooks_lock);
	tracepoint_synchronize_unregister();
	return err;
}

/**
 * vmlat_hooks_exit() - detach every hook; no probe runs after this returns
 *
 * Context: process context, may sleep.
 */
void vmlat_hooks_exit(void)
{
	int id;

	/* Replays MODULE_STATE_GOING for loaded modules: detaches kvm hooks. */
	unregister_tracepoint_module_notifier(&vmlat_tp_module_nb);
	unregister_module_notifier(&vmlat_vendor_module_nb);

	mutex_lock(&vmlat_hooks_lock);
	for (id = 0; id < VMLAT_NR_HOOKS; id++)
		vmlat_hook_detach(id, "vmlat unloading");
	mutex_unlock(&vmlat_hooks_lock);

	/* Probes may still run on other CPUs until this returns. */
	tracepoint_synchronize_unregister();
}

/**
 * vmlat_hooks_get_state() - snapshot one hook for display
 * @id:		the hook
 * @st:		filled in
 *
 * Context: process context, may sleep.
 */
void vmlat_hooks_get_state(enum vmlat_hook_id id, struct vmlat_hook_state *st)
{
	int cpu;

	st->hits = 0;
	for_each_possible_cpu(cpu)
		st->hits += per_cpu(vmlat_pcpu.hits[id], cpu);

	mutex_lock(&vmlat_hooks_lock);
	st->attached = !!vmlat_hooks[id].tp;
	strscpy(st->detail, vmlat_hooks[id].detail, sizeof(st->detail));
	mutex_unlock(&vmlat_hooks_lock);
}
