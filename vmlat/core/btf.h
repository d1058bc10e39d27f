/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Reading tracepoint prototypes from BTF (pure logic).
 *
 * vmlat must never call a probe with the wrong prototype: kvm_entry gained
 * an argument inside 6.1.y, so a version check cannot tell. The kernel's
 * own record of a tracepoint's prototype is the BTF typedef
 * "btf_trace_<name>" that include/trace/bpf_probe.h emits for every
 * tracepoint (BPF's tp_btf programs rely on it):
 *
 *	typedef void (*btf_trace_kvm_entry)(void *__data,
 *					    struct kvm_vcpu *vcpu, bool f);
 *
 * vmlat_btf_tp_proto() renders its parameters after __data as
 * "(struct kvm_vcpu *, bool)", the string the hook table compares with.
 *
 * Module BTF is "split" BTF: its type ids continue after the base
 * (vmlinux) ids and its string offsets after the base string section, so a
 * module's struct vmlat_btf points at the vmlinux one as its base.
 *
 * Everything read from a blob is bounds-checked: a corrupt or hostile blob
 * makes these functions fail, never read out of bounds or loop forever.
 */
#ifndef _VMLAT_BTF_H
#define _VMLAT_BTF_H

#include "pure.h"

/*
 * BTF kinds younger than Linux 5.10's <uapi/linux/btf.h> (FLOAT 5.13,
 * DECL_TAG 5.16, TYPE_TAG 5.17, ENUM64 6.0), by their values in the BTF
 * format, which never change: a 5.10 kernel's BTF has none, but the
 * reader must know their sizes to walk a newer one, whatever the headers
 * it is built with (btf_test checks them against the uapi ones).
 */
enum {
	VMLAT_BTF_KIND_FLOAT = 16,
	VMLAT_BTF_KIND_DECL_TAG = 17,
	VMLAT_BTF_KIND_TYPE_TAG = 18,
	VMLAT_BTF_KIND_ENUM64 = 19,
};

/* struct btf_enum64's layout (6.0): a name and a value in two halves. */
struct vmlat_btf_enum64 {
	u32 name_off;
	u32 val_lo32;
	u32 val_hi32;
};

/**
 * struct vmlat_btf - an indexed, validated BTF blob
 * @types:	start of the type section
 * @types_len:	its length in bytes
 * @strs:	start of the string section
 * @strs_len:	its length in bytes
 * @offs:	caller's storage: byte offset in @types of each type
 * @nr_types:	number of types in this blob
 * @start_id:	id of the first type (1, or after the base's last id)
 * @start_str:	string offset of @strs[0] (0, or after the base's strings)
 * @base:	base BTF for split (module) BTF, else NULL
 */
struct vmlat_btf {
	const u8 *types;
	u32 types_len;
	const char *strs;
	u32 strs_len;
	const u32 *offs;
	u32 nr_types;
	u32 start_id;
	u32 start_str;
	const struct vmlat_btf *base;
};

int vmlat_btf_count(const void *data, size_t size, u32 *nr_types);
int vmlat_btf_init(struct vmlat_btf *btf, const void *data, size_t size,
		   const struct vmlat_btf *base, u32 *offs, u32 nr_offs);
int vmlat_btf_tp_proto(const struct vmlat_btf *btf, const char *tp_name,
		       char *buf, size_t size);

/**
 * struct vmlat_btf_loc - where a member lies in its struct
 * @bit_off:	bit offset from the start of the outermost struct
 * @bits:	size in bits: a bitfield's width, else 8 * its type's size
 */
struct vmlat_btf_loc {
	u32 bit_off;
	u32 bits;
};

int vmlat_btf_member(const struct vmlat_btf *btf, const char *type_name,
		     const char *path, struct vmlat_btf_loc *loc);

/**
 * struct vmlat_layout_member - a private member vmlat reads, as built
 * @type:	its outermost struct, as BTF names it: "vcpu_svm"
 * @path:	the member: "vmcb", "arch.hflags", "control.exit_code"
 * @bit_off:	its bit offset in the headers vmlat was built with
 * @bits:	its size in bits there (a bitfield's width)
 * @groups:	what reads it: a mask of the caller's groups, all refused
 *		if BTF says otherwise
 */
struct vmlat_layout_member {
	const char *type;
	const char *path;
	u32 bit_off;
	u32 bits;
	u32 groups;
};

/**
 * struct vmlat_layout_result - what vmlat_btf_check_layout() found
 * @confirmed:	members BTF places where the build does
 * @unconfirmed: members of structs BTF does not have
 * @differ:	members BTF places elsewhere, or lacks in a struct it has
 * @refused:	the OR of those members' groups
 * @why:	the first of them: build's offset, then BTF's
 */
struct vmlat_layout_result {
	u32 confirmed;
	u32 unconfirmed;
	u32 differ;
	u32 refused;
	char why[112];
};

void vmlat_btf_check_layout(const struct vmlat_btf *btf,
			    const struct vmlat_layout_member *tab, u32 n,
			    struct vmlat_layout_result *res);

#endif /* _VMLAT_BTF_H */
