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
	KUNIT_CASE(vmlat_btf_kinds_are_the_uapi_ones),
	{}
};

static struct kunit_suite vmlat_btf_suite = {
	.name = "vmlat_btf",
	.test_cases = vmlat_btf_cases,
};

kunit_test_suites(&vmlat_btf_suite);
