// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for vmlat/core/btf.c: reading tracepoint prototypes from BTF.
 *
 * The blobs are built here type by type, so each test states exactly the
 * BTF it feeds in. The same file runs in userspace under ASan/UBSan
 * (selftests/unit), where the mutation test doubles as a memory-safety
 * check of the parser against corrupt input.
 */
#include <kunit/test.h>

#include "btf.h"

#ifndef GFP_KERNEL
#define GFP_KERNEL 0
#endif

/* The inverse of BTF_INFO_KIND/VLEN/KFLAG (only tools/ headers have one). */
#define BB_INFO(kind, kflag, vlen) \
	(((u32)(kflag) << 31) | ((u32)(kind) << 24) | ((vlen) & 0xffff))

#define BB_TYPES_MAX	1024
#define BB_STRS_MAX	512
#define BB_HDR_V1	24	/* struct btf_header until Linux 7.2 */
#define BB_HDR_MAX	32	/* 7.2's, with layout_off and layout_len */

/* Builds a BTF blob; ids and string offsets may continue a base's. */
struct btf_builder {
	u8 types[BB_TYPES_MAX];
	u32 types_len;
	char strs[BB_STRS_MAX];
	u32 strs_len;
	u32 nr;		/* types added */
	u32 id_base;	/* ids of this blob start after id_base */
	u32 str_base;	/* string offsets start at str_base */
	u32 hdr_len;	/* of the header bb_finish() writes: 24 or more */
	u8 blob[BB_HDR_MAX + BB_TYPES_MAX + BB_STRS_MAX];
	size_t blob_len;
};

static struct btf_builder *bb_new(struct kunit *test,
				  const struct btf_builder *base)
{
	struct btf_builder *b = kunit_kzalloc(test, sizeof(*b), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, b);
	if (base) {
		b->id_base = base->id_base + base->nr;
		b->str_base = base->str_base + base->strs_len;
	} else {
		b->strs_len = 1;	/* offset 0 is the empty name */
	}
	return b;
}

/* Add @s to the string section; return its offset ("" is offset 0). */
static u32 bb_str(struct btf_builder *b, const char *s)
{
	u32 n = strlen(s) + 1;
	u32 off = b->strs_len;

	if (!*s)
		return 0;
	memcpy(b->strs + off, s, n);
	b->strs_len += n;
	return b->str_base + off;
}

static void bb_u32(struct btf_builder *b, u32 v)
{
	memcpy(b->types + b->types_len, &v, sizeof(v));
	b->types_len += sizeof(v);
}

/* Add a type record; its kind-specific tail follows with bb_u32(). */
static u32 bb_type_off(struct btf_builder *b, u32 kind, u32 vlen, u32 name_off,
		       u32 size_or_type)
{
	bb_u32(b, name_off);
	bb_u32(b, BB_INFO(kind, 0, vlen));
	bb_u32(b, size_or_type);
	return b->id_base + ++b->nr;
}

static u32 bb_type(struct btf_builder *b, u32 kind, u32 vlen, const char *name,
		   u32 size_or_type)
{
	return bb_type_off(b, kind, vlen, bb_str(b, name), size_or_type);
}

static u32 bb_int(struct btf_builder *b, const char *name, u32 bytes)
{
	u32 id = bb_type(b, BTF_KIND_INT, 0, name, bytes);

	bb_u32(b, bytes * 8);
	return id;
}

/* A function prototype returning void with the given parameter types. */
static u32 bb_proto(struct btf_builder *b, const u32 *params, u32 n)
{
	u32 id = bb_type(b, BTF_KIND_FUNC_PROTO, n, "", 0);
	u32 i;

	for (i = 0; i < n; i++) {
		bb_u32(b, 0);
		bb_u32(b, params[i]);
	}
	return id;
}

/* typedef void (*btf_trace_<tp>)(void *, params...) */
static void bb_tracepoint(struct btf_builder *b, const char *tp,
			  u32 void_ptr, const u32 *params, u32 n)
{
	u32 all[16], proto, ptr;
	char name[64];

	all[0] = void_ptr;
	if (n)
		memcpy(all + 1, params, n * sizeof(u32));
	proto = bb_proto(b, all, n + 1);
	ptr = bb_type(b, BTF_KIND_PTR, 0, "", proto);
	snprintf(name, sizeof(name), "btf_trace_%s", tp);
	bb_type(b, BTF_KIND_TYPEDEF, 0, name, ptr);
}

/*
 * The header as pahole writes it: six fields (24 bytes, hdr_len 24) until
 * Linux 7.2, whose header adds layout_off and layout_len (hdr_len 32) for
 * an optional layout section. Written field by field, so that the test
 * does not depend on which struct btf_header the build's headers have;
 * b->hdr_len's extra bytes are zero (no layout section).
 */
static const void *bb_finish(struct btf_builder *b)
{
	u32 hl = b->hdr_len ?: BB_HDR_V1;
	/* hdr_len, type_off, type_len, str_off, str_len */
	const u32 fields[] = { hl, 0, b->types_len, b->types_len, b->strs_len };
	const u16 magic = BTF_MAGIC;
	const u8 version = BTF_VERSION;

	memset(b->blob, 0, hl);
	memcpy(b->blob, &magic, sizeof(magic));
	memcpy(b->blob + 2, &version, sizeof(version));
	memcpy(b->blob + 4, fields, sizeof(fields));
	memcpy(b->blob + hl, b->types, b->types_len);
	memcpy(b->blob + hl + b->types_len, b->strs, b->strs_len);
	b->blob_len = hl + b->types_len + b->strs_len;
	return b->blob;
}

/* Index @b (with @base, already indexed, if split) into @btf. */
static int bb_index(struct kunit *test, struct btf_builder *b,
		    struct vmlat_btf *btf, const struct vmlat_btf *base)
{
	u32 nr = 0, *offs;
	int err;

	bb_finish(b);
	err = vmlat_btf_count(b->blob, b->blob_len, &nr);
	if (err)
		return err;
	offs = kunit_kzalloc(test, (nr + 1) * sizeof(u32), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, offs);
	return vmlat_btf_init(btf, b->blob, b->blob_len, base, offs, nr);
}

/* The common base: what kernel BTF has for kvm_entry's argument types. */
struct base_ids {
	u32 void_ptr, bool_t, u32_t, uint, vcpu_ptr, task_ptr, char_t;
};

static struct btf_builder *bb_kernel_base(struct kunit *test,
					  struct base_ids *ids)
{
	struct btf_builder *b = bb_new(test, NULL);
	u32 bool_int, uint, vcpu, task;

	ids->void_ptr = bb_type(b, BTF_KIND_PTR, 0, "", 0);
	bool_int = bb_int(b, "_Bool", 1);
	ids->bool_t = bb_type(b, BTF_KIND_TYPEDEF, 0, "bool", bool_int);
	uint = bb_int(b, "unsigned int", 4);
	ids->uint = uint;
	ids->u32_t = bb_type(b, BTF_KIND_TYPEDEF, 0, "u32", uint);
	vcpu = bb_type(b, BTF_KIND_STRUCT, 0, "kvm_vcpu", 0);
	ids->vcpu_ptr = bb_type(b, BTF_KIND_PTR, 0, "", vcpu);
	task = bb_type(b, BTF_KIND_STRUCT, 0, "task_struct", 0);
	ids->task_ptr = bb_type(b, BTF_KIND_PTR, 0, "", task);
	ids->char_t = bb_int(b, "char", 1);
	return b;
}

static void vmlat_btf_tp_proto_kvm_entry_both_variants(struct kunit *test)
{
	struct base_ids id;
	struct btf_builder *b = bb_kernel_base(test, &id);
	struct vmlat_btf btf;
	char buf[128];

	bb_tracepoint(b, "kvm_entry", id.void_ptr,
		      (u32[]){ id.vcpu_ptr, id.bool_t }, 2);
	bb_tracepoint(b, "kvm_entry_old", id.void_ptr,
		      (u32[]){ id.vcpu_ptr }, 1);
	KUNIT_ASSERT_EQ(test, bb_index(test, b, &btf, NULL), 0);

	KUNIT_EXPECT_EQ(test, vmlat_btf_tp_proto(&btf, "kvm_entry", buf,
						 sizeof(buf)), 0);
	KUNIT_EXPECT_STREQ(test, buf, "(struct kvm_vcpu *, bool)");
	KUNIT_EXPECT_EQ(test, vmlat_btf_tp_proto(&btf, "kvm_entry_old", buf,
						 sizeof(buf)), 0);
	KUNIT_EXPECT_STREQ(test, buf, "(struct kvm_vcpu *)");
}

/*
 * Linux 7.2's vmlinux BTF still has the 24-byte header (pahole writes no
 * layout section), while 7.2's struct btf_header is 32 bytes: built
 * against 7.2, vmlat first refused it ("bad vmlinux BTF (-22)"). Either
 * header, with the same types, gives the same prototype; a header cut
 * before str_len does not.
 */
static void vmlat_btf_reads_both_header_sizes(struct kunit *test)
{
	static const u32 lens[] = { BB_HDR_V1, BB_HDR_MAX };
	struct vmlat_btf btf;
	struct base_ids id;
	char proto[64];
	size_t i;

	for (i = 0; i < ARRAY_SIZE(lens); i++) {
		struct btf_builder *b = bb_kernel_base(test, &id);

		b->hdr_len = lens[i];
		bb_tracepoint(b, "kvm_exit", id.void_ptr,
			      (u32[]){ id.vcpu_ptr, id.u32_t }, 2);
		KUNIT_ASSERT_EQ_MSG(test, bb_index(test, b, &btf, NULL), 0,
				    "hdr_len %u", lens[i]);
		KUNIT_EXPECT_EQ(test, vmlat_btf_tp_proto(&btf, "kvm_exit", proto,
							 sizeof(proto)), 0);
		KUNIT_EXPECT_STREQ(test, proto, "(struct kvm_vcpu *, u32)");
	}
}

/* Module BTF: ids and strings continue the base's, types mix freely. */
static void vmlat_btf_tp_proto_split_module_btf(struct kunit *test)
{
	struct base_ids id;
	struct btf_builder *base = bb_kernel_base(test, &id);
	struct btf_builder *mod = bb_new(test, base);
	struct vmlat_btf vmlinux, kvm;
	u32 mmu_page, mmu_ptr;
	char buf[128];

	KUNIT_ASSERT_EQ(test, bb_index(test, base, &vmlinux, NULL), 0);
	mmu_page = bb_type(mod, BTF_KIND_STRUCT, 0, "kvm_mmu_page", 0);
	mmu_ptr = bb_type(mod, BTF_KIND_PTR, 0, "", mmu_page);
	bb_tracepoint(mod, "kvm_mmu_get_page", id.void_ptr,
		      (u32[]){ mmu_ptr, id.bool_t }, 2);
	KUNIT_ASSERT_EQ(test, bb_index(test, mod, &kvm, &vmlinux), 0);

	KUNIT_EXPECT_EQ(test, kvm.start_id, vmlinux.nr_types + 1);
	KUNIT_EXPECT_EQ(test, vmlat_btf_tp_proto(&kvm, "kvm_mmu_get_page", buf,
						 sizeof(buf)), 0);
	KUNIT_EXPECT_STREQ(test, buf, "(struct kvm_mmu_page *, bool)");
	/* The base alone does not know the module's tracepoint. */
	KUNIT_EXPECT_EQ(test, vmlat_btf_tp_proto(&vmlinux, "kvm_mmu_get_page",
						 buf, sizeof(buf)), -ENOENT);
}

/* One parameter of each spelling a tracepoint argument can have. */
static void vmlat_btf_tp_proto_renders_c_spellings(struct kunit *test)
{
	struct base_ids id;
	struct btf_builder *b = bb_kernel_base(test, &id);
	struct vmlat_btf btf;
	u32 cchar, cchar_ptr, char_ptr_ptr, e, u, fwd_u, vol, restr, cptr;
	u32 fn, fn_ptr, int_t;
	char buf[256];

	cchar = bb_type(b, BTF_KIND_CONST, 0, "", id.char_t);
	cchar_ptr = bb_type(b, BTF_KIND_PTR, 0, "", cchar);
	char_ptr_ptr = bb_type(b, BTF_KIND_PTR, 0, "",
			       bb_type(b, BTF_KIND_PTR, 0, "", id.char_t));
	e = bb_type(b, BTF_KIND_ENUM, 0, "rq_state", 4);
	u = bb_type(b, BTF_KIND_UNION, 0, "ktime_u", 8);
	fwd_u = bb_type_off(b, BTF_KIND_FWD, 0, bb_str(b, "fwd_u"), 0);
	/* make it a union forward (kind_flag 1) */
	memcpy(b->types + b->types_len - 8,
	       &(u32){ BB_INFO(BTF_KIND_FWD, 1, 0) }, sizeof(u32));
	vol = bb_type(b, BTF_KIND_VOLATILE, 0, "", id.uint);
	restr = bb_type(b, BTF_KIND_RESTRICT, 0, "", id.task_ptr);
	cptr = bb_type(b, BTF_KIND_CONST, 0, "",
		       bb_type(b, BTF_KIND_PTR, 0, "", id.char_t));
	/* int (*)(unsigned int, struct task_struct *) */
	int_t = bb_int(b, "int", 4);
	fn = bb_type(b, BTF_KIND_FUNC_PROTO, 2, "", int_t);
	bb_u32(b, 0);
	bb_u32(b, id.uint);
	bb_u32(b, 0);
	bb_u32(b, id.task_ptr);
	fn_ptr = bb_type(b, BTF_KIND_PTR, 0, "", fn);
	bb_tracepoint(b, "many", id.void_ptr,
		      (u32[]){ cchar_ptr, char_ptr_ptr, e, u, fwd_u, vol,
			       restr, id.u32_t, cptr, fn_ptr },
		      10);
	bb_tracepoint(b, "none", id.void_ptr, NULL, 0);
	KUNIT_ASSERT_EQ(test, bb_index(test, b, &btf, NULL), 0);

	KUNIT_EXPECT_EQ(test, vmlat_btf_tp_proto(&btf, "many", buf,
						 sizeof(buf)), 0);
	KUNIT_EXPECT_STREQ(test, buf,
			   "(const char *, char **, enum rq_state, union ktime_u, "
			   "union fwd_u, volatile unsigned int, "
			   "struct task_struct *, u32, char * const, "
			   "int (*)(unsigned int, struct task_struct *))");
	KUNIT_EXPECT_EQ(test, vmlat_btf_tp_proto(&btf, "none", buf,
						 sizeof(buf)), 0);
	KUNIT_EXPECT_STREQ(test, buf, "(void)");
}

static void vmlat_btf_tp_proto_missing_is_enoent(struct kunit *test)
{
	struct base_ids id;
	struct btf_builder *b = bb_kernel_base(test, &id);
	struct vmlat_btf btf;
	char buf[64];

	/* A typedef with the right name but not the btf_trace_ prefix. */
	bb_type(b, BTF_KIND_TYPEDEF, 0, "kvm_exit", id.uint);
	KUNIT_ASSERT_EQ(test, bb_index(test, b, &btf, NULL), 0);
	KUNIT_EXPECT_EQ(test, vmlat_btf_tp_proto(&btf, "kvm_exit", buf,
						 sizeof(buf)), -ENOENT);
	KUNIT_EXPECT_STREQ(test, buf, "");
}

/* btf_trace_* of the wrong shape is refused, not half-rendered. */
static void vmlat_btf_tp_proto_wrong_shape_is_einval(struct kunit *test)
{
	struct base_ids id;
	struct btf_builder *b = bb_kernel_base(test, &id);
	struct vmlat_btf btf;
	u32 anon, anon_ptr;
	char buf[64];

	bb_type(b, BTF_KIND_TYPEDEF, 0, "btf_trace_not_ptr", id.uint);
	bb_type(b, BTF_KIND_TYPEDEF, 0, "btf_trace_ptr_to_int",
		bb_type(b, BTF_KIND_PTR, 0, "", id.uint));
	/* first parameter is not void *__data */
	bb_tracepoint(b, "no_data", id.task_ptr, (u32[]){ id.uint }, 1);
	/* no parameter at all, not even __data */
	bb_type(b, BTF_KIND_TYPEDEF, 0, "btf_trace_no_params",
		bb_type(b, BTF_KIND_PTR, 0, "", bb_proto(b, NULL, 0)));
	/* anonymous struct: nothing to name */
	anon = bb_type(b, BTF_KIND_STRUCT, 0, "", 0);
	anon_ptr = bb_type(b, BTF_KIND_PTR, 0, "", anon);
	bb_tracepoint(b, "anon", id.void_ptr, (u32[]){ anon_ptr }, 1);
	/* a parameter whose type id does not exist */
	bb_tracepoint(b, "dangling", id.void_ptr, (u32[]){ 9999 }, 1);
	KUNIT_ASSERT_EQ(test, bb_index(test, b, &btf, NULL), 0);

	KUNIT_EXPECT_EQ(test, vmlat_btf_tp_proto(&btf, "not_ptr", buf,
						 sizeof(buf)), -EINVAL);
	KUNIT_EXPECT_EQ(test, vmlat_btf_tp_proto(&btf, "ptr_to_int", buf,
						 sizeof(buf)), -EINVAL);
	KUNIT_EXPECT_EQ(test, vmlat_btf_tp_proto(&btf, "no_data", buf,
						 sizeof(buf)), -EINVAL);
	KUNIT_EXPECT_EQ(test, vmlat_btf_tp_proto(&btf, "no_params", buf,
						 sizeof(buf)), -EINVAL);
	KUNIT_EXPECT_EQ(test, vmlat_btf_tp_proto(&btf, "anon", buf,
						 sizeof(buf)), -EINVAL);
	KUNIT_EXPECT_STREQ(test, buf, "");
	KUNIT_EXPECT_EQ(test, vmlat_btf_tp_proto(&btf, "dangling", buf,
						 sizeof(buf)), -EINVAL);
}

/* A pointer to itself must end, not recurse forever. */
static void vmlat_btf_tp_proto_cycle_is_eloop(struct kunit *test)
{
	struct base_ids id;
	struct btf_builder *b = bb_kernel_base(test, &id);
	struct vmlat_btf btf;
	u32 self;
	char buf[256];

	self = b->id_base + b->nr + 1;
	bb_type(b, BTF_KIND_PTR, 0, "", self);
	bb_tracepoint(b, "loop", id.void_ptr, (u32[]){ self }, 1);
	KUNIT_ASSERT_EQ(test, bb_index(test, b, &btf, NULL), 0);
	KUNIT_EXPECT_EQ(test, vmlat_btf_tp_proto(&btf, "loop", buf,
						 sizeof(buf)), -ELOOP);
}

static void vmlat_btf_tp_proto_small_buffer_truncates(struct kunit *test)
{
	struct base_ids id;
	struct btf_builder *b = bb_kernel_base(test, &id);
	struct vmlat_btf btf;
	char buf[12];

	bb_tracepoint(b, "kvm_exit", id.void_ptr,
		      (u32[]){ id.vcpu_ptr, id.u32_t }, 2);
	KUNIT_ASSERT_EQ(test, bb_index(test, b, &btf, NULL), 0);
	memset(buf, 'x', sizeof(buf));
	KUNIT_EXPECT_EQ(test, vmlat_btf_tp_proto(&btf, "kvm_exit", buf,
						 sizeof(buf)), -ENAMETOOLONG);
	KUNIT_EXPECT_STREQ(test, buf, "(struct kvm");
	KUNIT_EXPECT_EQ(test, vmlat_btf_tp_proto(&btf, "kvm_exit", buf, 0),
			-ENAMETOOLONG);
}

struct header_case {
	const char *desc;
	u32 off;	/* byte offset in the blob to overwrite */
	u32 val;	/* 32-bit value written there */
};

/* Offsets in struct btf_header: magic/version/flags at 0, hdr_len at 4. */
static const struct header_case header_cases[] = {
	{ "bad magic", 0, 0x1234eb9e },
	{ "bad version", 0, BTF_MAGIC | (2 << 16) },
	{ "hdr_len too small", 4, 8 },
	{ "hdr_len short of str_len", 4, 20 },
	{ "hdr_len past end", 4, 0x10000 },
	{ "type_off misaligned", 8, 2 },
	{ "type_len past end", 12, 0x100000 },
	{ "str_len past end", 20, 0x100000 },
	{ "str_off overflows", 16, 0xfffffff0 },
};

static void header_case_desc(const struct header_case *c, char *desc)
{
	strscpy(desc, c->desc, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(header, header_cases, header_case_desc);

static void vmlat_btf_count_rejects_bad_header(struct kunit *test)
{
	const struct header_case *c = test->param_value;
	struct base_ids id;
	struct btf_builder *b = bb_kernel_base(test, &id);
	u32 nr = 0;

	bb_finish(b);
	KUNIT_ASSERT_EQ(test, vmlat_btf_count(b->blob, b->blob_len, &nr), 0);
	memcpy(b->blob + c->off, &c->val, sizeof(u32));
	KUNIT_EXPECT_EQ_MSG(test, vmlat_btf_count(b->blob, b->blob_len, &nr),
			    -EINVAL, "%s accepted", c->desc);
}

static void vmlat_btf_count_rejects_bad_records(struct kunit *test)
{
	struct base_ids id;
	struct btf_builder *b = bb_kernel_base(test, &id);
	struct vmlat_btf btf;
	u32 nr = 0, offs[4];

	bb_finish(b);
	KUNIT_ASSERT_EQ(test, vmlat_btf_count(b->blob, b->blob_len, &nr), 0);
	KUNIT_EXPECT_EQ(test, nr, b->nr);

	/* an index too small for the blob */
	KUNIT_EXPECT_EQ(test, vmlat_btf_init(&btf, b->blob, b->blob_len, NULL,
					     offs, ARRAY_SIZE(offs)), -ENOSPC);
	/* string section not NUL-terminated */
	b->blob[b->blob_len - 1] = 'x';
	KUNIT_EXPECT_EQ(test, vmlat_btf_count(b->blob, b->blob_len, &nr),
			-EINVAL);
	/* a record whose vlen runs past the section */
	b = bb_new(test, NULL);
	bb_type(b, BTF_KIND_STRUCT, 100, "big", 0);
	bb_finish(b);
	KUNIT_EXPECT_EQ(test, vmlat_btf_count(b->blob, b->blob_len, &nr),
			-EINVAL);
	/* an unknown kind */
	b = bb_new(test, NULL);
	bb_type(b, 31, 0, "future", 0);
	bb_finish(b);
	KUNIT_EXPECT_EQ(test, vmlat_btf_count(b->blob, b->blob_len, &nr),
			-EINVAL);
	/* too short for a header */
	KUNIT_EXPECT_EQ(test, vmlat_btf_count(b->blob, 8, &nr), -EINVAL);
	KUNIT_EXPECT_EQ(test, vmlat_btf_count(NULL, 0, &nr), -EINVAL);
}

/*
 * Corrupt a valid blob one byte at a time (and truncate it) and parse
 * each result fully. Nothing may be read out of bounds (KASAN, ASan) and
 * the output, when there is one, stays a terminated string.
 */
/*
 * btf.h's own values of the kinds 5.10's headers lack are the format's:
 * those of the uapi headers these tests are built with (6.1's or later:
 * the debug kernel's, linux-libc-dev's).
 */
static void vmlat_btf_kinds_are_the_uapi_ones(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, VMLAT_BTF_KIND_FLOAT, BTF_KIND_FLOAT);
	KUNIT_EXPECT_EQ(test, VMLAT_BTF_KIND_DECL_TAG, BTF_KIND_DECL_TAG);
	KUNIT_EXPECT_EQ(test, VMLAT_BTF_KIND_TYPE_TAG, BTF_KIND_TYPE_TAG);
	KUNIT_EXPECT_EQ(test, VMLAT_BTF_KIND_ENUM64, BTF_KIND_ENUM64);
	KUNIT_EXPECT_EQ(test, sizeof(struct vmlat_btf_enum64),
			sizeof(struct btf_enum64));
	KUNIT_EXPECT_EQ(test, offsetof(struct vmlat_btf_enum64, val_hi32),
			offsetof(struct btf_enum64, val_hi32));
}

static void vmlat_btf_survives_corruption(struct kunit *test)
{
	struct base_ids id;
	struct btf_builder *b = bb_kernel_base(test, &id);
	u8 *copy;
	u32 *offs, nr, i, seed = 12345;
	size_t len;
	struct vmlat_btf btf;
	char buf[96];
	unsigned int parsed = 0;

	bb_tracepoint(b, "kvm_exit", id.void_ptr,
		      (u32[]){ id.vcpu_ptr, id.u32_t }, 2);
	bb_finish(b);
	len = b->blob_len;
	copy = kunit_kzalloc(test, len, GFP_KERNEL);
	offs = kunit_kzalloc(test, 256 * sizeof(u32), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, copy);
	KUNIT_ASSERT_NOT_NULL(test, offs);

	for (i = 0; i < 4 * len; i++) {
		size_t n = len;

		memcpy(copy, b->blob, len);
		seed = seed * 1103515245 + 12345;
		if (i < len)
			copy[i] ^= (seed >> 16) | 1;	/* every byte, once */
		else
			n = (seed >> 8) % len;		/* random truncation */
		if (vmlat_btf_count(copy, n, &nr) || nr > 256)
			continue;
		if (vmlat_btf_init(&btf, copy, n, NULL, offs, nr))
			continue;
		if (!vmlat_btf_tp_proto(&btf, "kvm_exit", buf, sizeof(buf)))
			parsed++;
		KUNIT_EXPECT_LT_MSG(test, strlen(buf), sizeof(buf),
				    "round %u, %zu bytes", i, n);
	}
	/* Flips in names and unused bits keep it parseable: not all fail. */
	KUNIT_EXPECT_GT(test, parsed, 0U);
}

/* ---- struct members and layouts --------------------------------------- */

struct bb_mem {
	const char *name;	/* "" for an anonymous member */
	u32 type;
	u32 bit_off;
	u32 bitfield;		/* width, 0 if not a bitfield */
};

/* A struct or union; kind_flag set when a member is a bitfield. */
static u32 bb_struct(struct btf_builder *b, u32 kind, const char *name,
		     u32 size, const struct bb_mem *m, u32 n)
{
	bool kflag = false;
	u32 id, i;

	for (i = 0; i < n; i++)
		kflag |= m[i].bitfield != 0;
	bb_u32(b, bb_str(b, name));
	bb_u32(b, BB_INFO(kind, kflag, n));
	bb_u32(b, size);
	id = b->id_base + ++b->nr;
	for (i = 0; i < n; i++) {
		bb_u32(b, bb_str(b, m[i].name));
		bb_u32(b, m[i].type);
		bb_u32(b, kflag ? (m[i].bitfield << 24) | m[i].bit_off :
			  m[i].bit_off);
	}
	return id;
}

static u32 bb_array(struct btf_builder *b, u32 elem, u32 index, u32 nelems)
{
	u32 id = bb_type(b, BTF_KIND_ARRAY, 0, "", 0);

	bb_u32(b, elem);
	bb_u32(b, index);
	bb_u32(b, nelems);
	return id;
}

/*
 * Shapes of KVM's own: vmcb (control, save), kvm_vcpu (cpu, arch with an
 * array, a pointer, an anonymous union), kvm_mmu (a union with a bitfield
 * in an anonymous struct), a typedef, an enum. Set @vcpu and @vmcb_ptr,
 * for bb_vcpu_svm().
 */
static void bb_kvm_layout(struct btf_builder *b, u32 *vcpu_id, u32 *vmcb_id)
{
	u32 u8_t, u32_t, u64_t, ulong, ctl, save, vmcb, vmcb_ptr, arch, vcpu,
	    role, role_bits, mmu, mmu_ptr, regs, anon, td;

	u8_t = bb_int(b, "u8", 1);
	u32_t = bb_int(b, "u32", 4);
	u64_t = bb_int(b, "u64", 8);
	ulong = bb_int(b, "long unsigned int", 8);
	td = bb_type(b, BTF_KIND_TYPEDEF, 0, "__u64", u64_t);
	ctl = bb_struct(b, BTF_KIND_STRUCT, "vmcb_control_area", 1024,
			(const struct bb_mem[]){
				{ "intercepts", bb_array(b, u32_t, u32_t, 5), 0 },
				{ "exit_code", u32_t, 112 * 8 },
				{ "exit_code_hi", u32_t, 116 * 8 },
			}, 3);
	save = bb_struct(b, BTF_KIND_STRUCT, "vmcb_save_area", 1024,
			 (const struct bb_mem[]){
				{ "cpl", u8_t, 203 * 8 },
				{ "cr3", td, 336 * 8 },
				{ "rax", bb_type(b, BTF_KIND_VOLATILE, 0, "", td),
				  504 * 8 },
			 }, 3);
	vmcb = bb_struct(b, BTF_KIND_STRUCT, "vmcb", 4096,
			 (const struct bb_mem[]){
				{ "control", ctl, 0 },
				{ "save", save, 1024 * 8 },
			 }, 2);
	vmcb_ptr = bb_type(b, BTF_KIND_PTR, 0, "", vmcb);
	role_bits = bb_struct(b, BTF_KIND_STRUCT, "", 4,
			      (const struct bb_mem[]){
					{ "level", u32_t, 0, 4 },
					{ "direct", u32_t, 7, 1 },
			      }, 2);
	role = bb_struct(b, BTF_KIND_UNION, "kvm_mmu_page_role", 4,
			 (const struct bb_mem[]){
				{ "word", u32_t, 0 },
				{ "", role_bits, 0 },
			 }, 2);
	mmu = bb_struct(b, BTF_KIND_STRUCT, "kvm_mmu", 64,
			(const struct bb_mem[]){
				{ "root_role", role, 32 * 8 },
			}, 1);
	mmu_ptr = bb_type(b, BTF_KIND_PTR, 0, "", mmu);
	regs = bb_array(b, ulong, u32_t, 17);
	anon = bb_struct(b, BTF_KIND_UNION, "", 8,
			 (const struct bb_mem[]){
				{ "l1_tsc_offset", u64_t, 0 },
				{ "hflags", u32_t, 0 },
			 }, 2);
	arch = bb_struct(b, BTF_KIND_STRUCT, "kvm_vcpu_arch", 512,
			 (const struct bb_mem[]){
				{ "regs", regs, 0 },
				{ "mmu", mmu_ptr, 136 * 8 },
				{ "", anon, 144 * 8 },
			 }, 3);
	vcpu = bb_struct(b, BTF_KIND_STRUCT, "kvm_vcpu", 1024,
			 (const struct bb_mem[]){
				{ "cpu", u32_t, 0 },
				{ "arch", arch, 256 * 8 },
			 }, 2);
	bb_type(b, BTF_KIND_TYPEDEF, 0, "vcpu_t", vcpu);
	bb_type(b, BTF_KIND_ENUM, 0, "vcpu_mode", 4);
	*vcpu_id = vcpu;
	*vmcb_id = vmcb_ptr;
}

/* kvm_amd's struct vcpu_svm, in @b or a module's split BTF */
static void bb_vcpu_svm(struct btf_builder *b, u32 vcpu, u32 vmcb_ptr)
{
	bb_struct(b, BTF_KIND_STRUCT, "vcpu_svm", 2048,
		  (const struct bb_mem[]){
			{ "vcpu", vcpu, 0 },
			{ "vmcb", vmcb_ptr, 1024 * 8 },
		  }, 2);
}

static void bb_kvm_btf(struct kunit *test, struct vmlat_btf *btf)
{
	struct btf_builder *b = bb_new(test, NULL);
	u32 vcpu, vmcb_ptr;

	bb_kvm_layout(b, &vcpu, &vmcb_ptr);
	bb_vcpu_svm(b, vcpu, vmcb_ptr);
	KUNIT_ASSERT_EQ(test, bb_index(test, b, btf, NULL), 0);
}

static void expect_member(struct kunit *test, const struct vmlat_btf *btf,
			  const char *type, const char *path, u32 bit_off,
			  u32 bits)
{
	struct vmlat_btf_loc loc;

	KUNIT_EXPECT_EQ_MSG(test, vmlat_btf_member(btf, type, path, &loc), 0,
			    "%s.%s", type, path);
	KUNIT_EXPECT_EQ_MSG(test, loc.bit_off, bit_off, "%s.%s", type, path);
	KUNIT_EXPECT_EQ_MSG(test, loc.bits, bits, "%s.%s", type, path);
}

static void vmlat_btf_member_nested_paths(struct kunit *test)
{
	struct vmlat_btf btf;

	bb_kvm_btf(test, &btf);
	expect_member(test, &btf, "vcpu_svm", "vcpu", 0, 1024 * 8);
	expect_member(test, &btf, "vcpu_svm", "vmcb", 1024 * 8,
		      8 * sizeof(void *));
	expect_member(test, &btf, "vmcb", "control.exit_code", 112 * 8, 32);
	/* through a typedef, and a volatile typedef */
	expect_member(test, &btf, "vmcb", "save.cr3", (1024 + 336) * 8, 64);
	expect_member(test, &btf, "vmcb", "save.rax", (1024 + 504) * 8, 64);
	expect_member(test, &btf, "vmcb", "save.cpl", (1024 + 203) * 8, 8);
	expect_member(test, &btf, "vmcb", "control.intercepts", 0, 5 * 32);
	expect_member(test, &btf, "kvm_vcpu", "arch.regs", 256 * 8, 17 * 64);
	expect_member(test, &btf, "kvm_vcpu", "arch.mmu", (256 + 136) * 8,
		      8 * sizeof(void *));
	/* the outermost struct itself through a path of three */
	expect_member(test, &btf, "vcpu_svm", "vcpu.arch.mmu",
		      (256 + 136) * 8, 8 * sizeof(void *));
}

static void vmlat_btf_member_anonymous_union(struct kunit *test)
{
	struct vmlat_btf btf;

	bb_kvm_btf(test, &btf);
	expect_member(test, &btf, "kvm_vcpu", "arch.hflags",
		      (256 + 144) * 8, 32);
	expect_member(test, &btf, "kvm_vcpu", "arch.l1_tsc_offset",
		      (256 + 144) * 8, 64);
}

static void vmlat_btf_member_bitfield(struct kunit *test)
{
	struct vmlat_btf btf;

	bb_kvm_btf(test, &btf);
	/* in an anonymous struct of a union, in a kind_flag struct */
	expect_member(test, &btf, "kvm_mmu", "root_role.direct", 32 * 8 + 7, 1);
	expect_member(test, &btf, "kvm_mmu", "root_role.level", 32 * 8, 4);
	expect_member(test, &btf, "kvm_mmu_page_role", "word", 0, 32);
}

static void vmlat_btf_member_missing_is_enoent(struct kunit *test)
{
	struct vmlat_btf_loc loc;
	struct vmlat_btf btf;

	bb_kvm_btf(test, &btf);
	/* no such member: bits 1 */
	KUNIT_EXPECT_EQ(test, vmlat_btf_member(&btf, "vmcb", "control.cr3",
					       &loc), -ENOENT);
	KUNIT_EXPECT_EQ(test, loc.bits, 1U);
	KUNIT_EXPECT_EQ(test, vmlat_btf_member(&btf, "kvm_vcpu",
					       "arch.hflag", &loc), -ENOENT);
	KUNIT_EXPECT_EQ(test, vmlat_btf_member(&btf, "kvm_vcpu",
					       "arch.hflagsx", &loc), -ENOENT);
	/* no such struct: bits 0 */
	KUNIT_EXPECT_EQ(test, vmlat_btf_member(&btf, "vcpu_vmx", "vcpu",
					       &loc), -ENOENT);
	KUNIT_EXPECT_EQ(test, loc.bits, 0U);
}

static void vmlat_btf_member_wrong_kind_is_einval(struct kunit *test)
{
	struct vmlat_btf_loc loc;
	struct vmlat_btf btf;

	bb_kvm_btf(test, &btf);
	/* a typedef or an enum of that name, not a struct */
	KUNIT_EXPECT_EQ(test, vmlat_btf_member(&btf, "vcpu_t", "cpu", &loc),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, vmlat_btf_member(&btf, "vcpu_mode", "cpu",
					       &loc), -EINVAL);
	/* through an int, a pointer, an array */
	KUNIT_EXPECT_EQ(test, vmlat_btf_member(&btf, "kvm_vcpu", "cpu.x",
					       &loc), -EINVAL);
	KUNIT_EXPECT_EQ(test, vmlat_btf_member(&btf, "vcpu_svm",
					       "vmcb.control", &loc), -EINVAL);
	KUNIT_EXPECT_EQ(test, vmlat_btf_member(&btf, "kvm_vcpu",
					       "arch.regs.x", &loc), -EINVAL);
	/* empty components */
	KUNIT_EXPECT_EQ(test, vmlat_btf_member(&btf, "vmcb", "", &loc),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, vmlat_btf_member(&btf, "vmcb", "control.",
					       &loc), -EINVAL);
	KUNIT_EXPECT_EQ(test, vmlat_btf_member(&btf, "vmcb", ".control",
					       &loc), -EINVAL);
}

static void vmlat_btf_member_split_module_btf(struct kunit *test)
{
	struct btf_builder *b = bb_new(test, NULL), *m;
	struct vmlat_btf base, mod;
	struct vmlat_btf_loc loc;
	u32 vcpu, vmcb_ptr;

	/* vcpu_svm in the module, what it contains in vmlinux */
	bb_kvm_layout(b, &vcpu, &vmcb_ptr);
	KUNIT_ASSERT_EQ(test, bb_index(test, b, &base, NULL), 0);
	m = bb_new(test, b);
	bb_vcpu_svm(m, vcpu, vmcb_ptr);
	KUNIT_ASSERT_EQ(test, bb_index(test, m, &mod, &base), 0);

	KUNIT_EXPECT_EQ(test, vmlat_btf_member(&base, "vcpu_svm", "vmcb", &loc),
			-ENOENT);
	expect_member(test, &mod, "vcpu_svm", "vmcb", 1024 * 8,
		      8 * sizeof(void *));
	expect_member(test, &mod, "vcpu_svm", "vcpu.arch.hflags",
		      (256 + 144) * 8, 32);
	expect_member(test, &mod, "vmcb", "control.exit_code", 112 * 8, 32);
}

#define GROUP_CORE	0x1
#define GROUP_EXIT	0x2
#define GROUP_CR3	0x4
#define GROUP_CPL	0x8

/* What kvm_x86.h would compile from the headers bb_kvm_layout() mimics. */
static const struct vmlat_layout_member good_layout[] = {
	{ "vcpu_svm", "vcpu", 0, 1024 * 8, GROUP_CORE },
	{ "vcpu_svm", "vmcb", 1024 * 8, 8 * sizeof(void *), GROUP_CORE },
	{ "vmcb", "control.exit_code", 112 * 8, 32, GROUP_EXIT },
	{ "vmcb", "save.cr3", (1024 + 336) * 8, 64, GROUP_CR3 },
	{ "vmcb", "save.cpl", (1024 + 203) * 8, 8, GROUP_CPL | GROUP_CR3 },
	{ "kvm_mmu", "root_role.direct", 32 * 8 + 7, 1, GROUP_CR3 },
	{ "kvm_vcpu", "arch.hflags", (256 + 144) * 8, 32, GROUP_CORE },
};

static void vmlat_btf_check_layout_confirms(struct kunit *test)
{
	struct vmlat_layout_result res;
	struct vmlat_btf btf;

	bb_kvm_btf(test, &btf);
	vmlat_btf_check_layout(&btf, good_layout, ARRAY_SIZE(good_layout),
			       &res);
	KUNIT_EXPECT_EQ(test, res.confirmed, (u32)ARRAY_SIZE(good_layout));
	KUNIT_EXPECT_EQ(test, res.unconfirmed, 0U);
	KUNIT_EXPECT_EQ(test, res.differ, 0U);
	KUNIT_EXPECT_EQ(test, res.refused, 0U);
	KUNIT_EXPECT_STREQ(test, res.why, "");
}

/* A wrong expected offset refuses its member's groups, and says so. */
static void vmlat_btf_check_layout_refuses_mismatch(struct kunit *test)
{
	struct vmlat_layout_member tab[ARRAY_SIZE(good_layout)];
	struct vmlat_layout_result res;
	struct vmlat_btf btf;

	bb_kvm_btf(test, &btf);
	memcpy(tab, good_layout, sizeof(tab));
	tab[2].bit_off += 8 * 8;	/* control.exit_code at 120 */
	vmlat_btf_check_layout(&btf, tab, ARRAY_SIZE(tab), &res);
	KUNIT_EXPECT_EQ(test, res.confirmed, (u32)ARRAY_SIZE(tab) - 1);
	KUNIT_EXPECT_EQ(test, res.differ, 1U);
	KUNIT_EXPECT_EQ(test, res.refused, (u32)GROUP_EXIT);
	KUNIT_EXPECT_STREQ(test, res.why,
			   "vmcb.control.exit_code: offset 120 size 4, BTF offset 112 size 4");

	/* A size, a bitfield's bit, a missing member; the first is told. */
	memcpy(tab, good_layout, sizeof(tab));
	tab[3].bits = 32;
	tab[5].bit_off--;
	tab[6].path = "arch.hflags2";
	vmlat_btf_check_layout(&btf, tab, ARRAY_SIZE(tab), &res);
	KUNIT_EXPECT_EQ(test, res.confirmed, (u32)ARRAY_SIZE(tab) - 3);
	KUNIT_EXPECT_EQ(test, res.differ, 3U);
	KUNIT_EXPECT_EQ(test, res.refused, (u32)(GROUP_CR3 | GROUP_CORE));
	KUNIT_EXPECT_STREQ(test, res.why,
			   "vmcb.save.cr3: offset 1360 size 4, BTF offset 1360 size 8");

	tab[3] = good_layout[3];
	tab[5] = good_layout[5];
	tab[5].bit_off--;
	vmlat_btf_check_layout(&btf, tab, ARRAY_SIZE(tab), &res);
	KUNIT_EXPECT_STREQ(test, res.why,
			   "kvm_mmu.root_role.direct: bit 262 width 1, BTF bit 263 width 1");

	tab[5] = good_layout[5];
	vmlat_btf_check_layout(&btf, tab, ARRAY_SIZE(tab), &res);
	KUNIT_EXPECT_EQ(test, res.refused, (u32)GROUP_CORE);
	KUNIT_EXPECT_STREQ(test, res.why,
			   "kvm_vcpu.arch.hflags2: offset 400 size 4, not in BTF");
}

/* BTF without the struct (no module BTF): unconfirmed, nothing refused. */
static void vmlat_btf_check_layout_missing_struct(struct kunit *test)
{
	struct vmlat_layout_result res;
	struct btf_builder *b = bb_new(test, NULL);
	struct vmlat_btf btf;

	bb_int(b, "u32", 4);
	KUNIT_ASSERT_EQ(test, bb_index(test, b, &btf, NULL), 0);
	vmlat_btf_check_layout(&btf, good_layout, ARRAY_SIZE(good_layout),
			       &res);
	KUNIT_EXPECT_EQ(test, res.confirmed, 0U);
	KUNIT_EXPECT_EQ(test, res.unconfirmed, (u32)ARRAY_SIZE(good_layout));
	KUNIT_EXPECT_EQ(test, res.refused, 0U);
}

static struct kunit_case vmlat_btf_cases[] = {
	KUNIT_CASE(vmlat_btf_tp_proto_kvm_entry_both_variants),
	KUNIT_CASE(vmlat_btf_tp_proto_split_module_btf),
	KUNIT_CASE(vmlat_btf_reads_both_header_sizes),
	KUNIT_CASE(vmlat_btf_tp_proto_renders_c_spellings),
	KUNIT_CASE(vmlat_btf_tp_proto_missing_is_enoent),
	KUNIT_CASE(vmlat_btf_tp_proto_wrong_shape_is_einval),
	KUNIT_CASE(vmlat_btf_tp_proto_cycle_is_eloop),
	KUNIT_CASE(vmlat_btf_tp_proto_small_buffer_truncates),
	KUNIT_CASE_PARAM(vmlat_btf_count_rejects_bad_header,
			 header_gen_params),
	KUNIT_CASE(vmlat_btf_count_rejects_bad_records),
	KUNIT_CASE(vmlat_btf_survives_corruption),
	KUNIT_CASE(vmlat_btf_member_nested_paths),
	KUNIT_CASE(vmlat_btf_member_anonymous_union),
	KUNIT_CASE(vmlat_btf_member_bitfield),
	KUNIT_CASE(vmlat_btf_member_missing_is_enoent),
	KUNIT_CASE(vmlat_btf_member_wrong_kind_is_einval),
	KUNIT_CASE(vmlat_btf_member_split_module_btf),
	KUNIT_CASE(vmlat_btf_check_layout_confirms),
	KUNIT_CASE(vmlat_btf_check_layout_refuses_mismatch),
	KUNIT_CASE(vmlat_btf_check_layout_missing_struct),
	KUNIT_CASE(vmlat_btf_kinds_are_the_uapi_ones),
	{}
};

static struct kunit_suite vmlat_btf_suite = {
	.name = "vmlat_btf",
	.test_cases = vmlat_btf_cases,
};

kunit_test_suites(&vmlat_btf_suite);
