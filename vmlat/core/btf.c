// SPDX-License-Identifier: GPL-2.0
/*
 * Reading tracepoint prototypes from BTF (pure logic, see btf.h).
 *
 * Only what vmlat needs: validate a blob, index its types, find the
 * typedef btf_trace_<tp> and render its parameter types the way C
 * declares them. The format is Documentation/bpf/btf.rst.
 */
#include "btf.h"

/* Deepest chain of pointer/qualifier/typedef links we follow. */
#define VMLAT_BTF_MAX_DEPTH	32

/*
 * The header's first six fields, up to str_len: all a BTF header had until
 * Linux 7.2, whose struct btf_header adds a layout section (layout_off,
 * layout_len) that hdr_len covers when a blob has one. Blobs with either
 * header are read, whichever struct the build's headers declare: only
 * these fields are used (the layout section describes kinds for readers
 * that skip unknown ones; vmlat refuses those instead).
 */
#define VMLAT_BTF_HDR_MIN	(offsetof(struct btf_header, str_len) + sizeof(u32))

static const struct btf_header *btf_header_of(const void *data, size_t size)
{
	const struct btf_header *hdr = data;
	u64 body;

	if (!data || size < VMLAT_BTF_HDR_MIN)
		return NULL;
	if (hdr->magic != BTF_MAGIC || hdr->version != BTF_VERSION)
		return NULL;
	if (hdr->hdr_len < VMLAT_BTF_HDR_MIN || hdr->hdr_len > size)
		return NULL;
	body = size - hdr->hdr_len;
	if ((u64)hdr->type_off + hdr->type_len > body ||
	    (u64)hdr->str_off + hdr->str_len > body)
		return NULL;
	/* Types are 4-byte records; the string section must end in NUL. */
	if (hdr->type_off % 4 || hdr->type_len % 4)
		return NULL;
	if (hdr->str_len &&
	    ((const char *)data)[hdr->hdr_len + hdr->str_off + hdr->str_len - 1])
		return NULL;
	return hdr;
}

/* Size of one type record including its kind-specific tail, or 0 if bad. */
static u32 btf_type_size(const struct btf_type *t)
{
	u32 vlen = BTF_INFO_VLEN(t->info);
	u32 base = sizeof(*t);

	switch (BTF_INFO_KIND(t->info)) {
	case BTF_KIND_INT:
	case BTF_KIND_VAR:
	case VMLAT_BTF_KIND_DECL_TAG:
		return base + sizeof(u32);
	case BTF_KIND_ARRAY:
		return base + sizeof(struct btf_array);
	case BTF_KIND_STRUCT:
	case BTF_KIND_UNION:
		return base + vlen * sizeof(struct btf_member);
	case BTF_KIND_ENUM:
		return base + vlen * sizeof(struct btf_enum);
	case VMLAT_BTF_KIND_ENUM64:
		return base + vlen * sizeof(struct vmlat_btf_enum64);
	case BTF_KIND_FUNC_PROTO:
		return base + vlen * sizeof(struct btf_param);
	case BTF_KIND_DATASEC:
		return base + vlen * sizeof(struct btf_var_secinfo);
	case BTF_KIND_PTR:
	case BTF_KIND_FWD:
	case BTF_KIND_TYPEDEF:
	case BTF_KIND_VOLATILE:
	case BTF_KIND_CONST:
	case BTF_KIND_RESTRICT:
	case BTF_KIND_FUNC:
	case VMLAT_BTF_KIND_FLOAT:
	case VMLAT_BTF_KIND_TYPE_TAG:
		return base;
	default:
		return 0;
	}
}

/*
 * Walk the type section once. With @offs, record each type's offset.
 * Return the number of types, or -EINVAL if a record is unknown or runs
 * past the section, or -ENOSPC if @offs is too small.
 */
static int btf_walk(const u8 *types, u32 len, u32 *offs, u32 nr_offs)
{
	u32 pos = 0, n = 0, sz;

	while (pos < len) {
		if (len - pos < sizeof(struct btf_type))
			return -EINVAL;
		sz = btf_type_size((const struct btf_type *)(types + pos));
		if (!sz || sz > len - pos)
			return -EINVAL;
		if (offs) {
			if (n >= nr_offs)
				return -ENOSPC;
			offs[n] = pos;
		}
		pos += sz;
		if (++n >= (1U << 30))
			return -EINVAL;
	}
	return n;
}

/**
 * vmlat_btf_count() - validate a BTF blob and count its types
 * @data:	the blob (e.g. /sys/kernel/btf/vmlinux)
 * @size:	its size in bytes
 * @nr_types:	on success, the number of types (the index size to allocate)
 *
 * Return: 0, or -EINVAL if the blob is not valid native-endian BTF.
 */
int vmlat_btf_count(const void *data, size_t size, u32 *nr_types)
{
	const struct btf_header *hdr = btf_header_of(data, size);
	int n;

	if (!hdr)
		return -EINVAL;
	n = btf_walk((const u8 *)data + hdr->hdr_len + hdr->type_off,
		     hdr->type_len, NULL, 0);
	if (n < 0)
		return n;
	*nr_types = n;
	return 0;
}

/**
 * vmlat_btf_init() - index a BTF blob
 * @btf:	filled in on success
 * @data:	the blob; must stay valid while @btf is used
 * @size:	its size in bytes
 * @base:	the base BTF when @data is split (module) BTF, else NULL
 * @offs:	storage for the index, @nr_offs entries
 * @nr_offs:	at least the count vmlat_btf_count() returned
 *
 * Return: 0, -EINVAL for an invalid blob, -ENOSPC if @offs is too small.
 */
int vmlat_btf_init(struct vmlat_btf *btf, const void *data, size_t size,
		   const struct vmlat_btf *base, u32 *offs, u32 nr_offs)
{
	const struct btf_header *hdr = btf_header_of(data, size);
	const u8 *body;
	int n;

	if (!hdr)
		return -EINVAL;
	body = (const u8 *)data + hdr->hdr_len;
	n = btf_walk(body + hdr->type_off, hdr->type_len, offs, nr_offs);
	if (n < 0)
		return n;

	btf->types = body + hdr->type_off;
	btf->types_len = hdr->type_len;
	btf->strs = (const char *)body + hdr->str_off;
	btf->strs_len = hdr->str_len;
	btf->offs = offs;
	btf->nr_types = n;
	btf->base = base;
	btf->start_id = base ? base->start_id + base->nr_types : 1;
	btf->start_str = base ? base->start_str + base->strs_len : 0;
	return 0;
}

/* The type with @id, looked up in @btf or its base; NULL if none. */
static const struct btf_type *btf_type(const struct vmlat_btf *btf, u32 id)
{
	for (; btf; btf = btf->base) {
		if (id >= btf->start_id && id - btf->start_id < btf->nr_types)
			return (const void *)(btf->types +
					      btf->offs[id - btf->start_id]);
	}
	return NULL;
}

/* The string at @off, looked up in @btf or its base; NULL if out of range. */
static const char *btf_str(const struct vmlat_btf *btf, u32 off)
{
	for (; btf; btf = btf->base) {
		/* The section ends in NUL (checked), so strings terminate. */
		if (off >= btf->start_str && off - btf->start_str < btf->strs_len)
			return btf->strs + (off - btf->start_str);
	}
	return NULL;
}

/* Kind of type @id, or -1 if it does not exist (0 is void, not a kind). */
static int btf_kind_of(const struct vmlat_btf *btf, u32 id)
{
	const struct btf_type *t = id ? btf_type(btf, id) : NULL;

	return t ? (int)BTF_INFO_KIND(t->info) : -1;
}

/* Find a type of @kind named @name; return its id or -ENOENT. */
static s32 btf_find(const struct vmlat_btf *btf, const char *name, u32 kind)
{
	const struct btf_type *t;
	const char *s;
	u32 i;

	for (; btf; btf = btf->base) {
		for (i = 0; i < btf->nr_types; i++) {
			t = (const void *)(btf->types + btf->offs[i]);
			if (BTF_INFO_KIND(t->info) != kind)
				continue;
			s = btf_str(btf, t->name_off);
			if (s && !strcmp(s, name))
				return btf->start_id + i;
		}
	}
	return -ENOENT;
}

/* A bounded string builder: output is truncated, never overrun. */
struct btf_out {
	char *buf;
	size_t size;
	size_t len;	/* what the full output would need, minus the NUL */
	char last;	/* last character written, for "char **" */
};

static void out_str(struct btf_out *o, const char *s)
{
	size_t n = strlen(s);

	if (o->len < o->size) {
		size_t room = o->size - o->len - 1;

		memcpy(o->buf + o->len, s, n < room ? n : room);
		o->buf[o->len + (n < room ? n : room)] = '\0';
	}
	o->len += n;
	if (n)
		o->last = s[n - 1];
}

static int btf_render(const struct vmlat_btf *btf, u32 id, struct btf_out *o,
		      int depth);

/* Render parameter types of @proto from index @first on: "int, char *". */
static int btf_render_params(const struct vmlat_btf *btf,
			     const struct btf_type *proto, u32 first,
			     struct btf_out *o, int depth)
{
	const struct btf_param *p = (const struct btf_param *)(proto + 1);
	u32 i, vlen = BTF_INFO_VLEN(proto->info);
	int err;

	if (first >= vlen) {
		out_str(o, "void");
		return 0;
	}
	for (i = first; i < vlen; i++) {
		if (i > first)
			out_str(o, ", ");
		/* type 0 in the last slot is "...": not in tracepoints */
		if (!p[i].type)
			return -EINVAL;
		err = btf_render(btf, p[i].type, o, depth);
		if (err)
			return err;
	}
	return 0;
}

/* A pointer to a function: "int (*)(unsigned int)", as bpftool has it. */
static int btf_render_func_ptr(const struct vmlat_btf *btf,
			       const struct btf_type *proto, struct btf_out *o,
			       int depth)
{
	int err = btf_render(btf, proto->type, o, depth);

	if (err)
		return err;
	out_str(o, " (*)(");
	err = btf_render_params(btf, proto, 0, o, depth);
	out_str(o, ")");
	return err;
}

/*
 * Render the C spelling of type @id: "struct kvm_vcpu *", "bool",
 * "const char *". Pointers render their target first, so "char **"
 * comes out right. Return 0, or a negative errno for ids that do not
 * resolve, names that are missing, chains that are too deep (a cycle in a
 * hostile blob) and kinds a tracepoint argument cannot have.
 */
static int btf_render(const struct vmlat_btf *btf, u32 id, struct btf_out *o,
		      int depth)
{
	const struct btf_type *t;
	const char *name, *qual, *prefix = "";
	int err;

	if (depth > VMLAT_BTF_MAX_DEPTH)
		return -ELOOP;
	if (id == 0) {
		out_str(o, "void");
		return 0;
	}
	t = btf_type(btf, id);
	if (!t)
		return -EINVAL;

	switch (BTF_INFO_KIND(t->info)) {
	case BTF_KIND_PTR:
		if (btf_kind_of(btf, t->type) == BTF_KIND_FUNC_PROTO)
			return btf_render_func_ptr(btf, btf_type(btf, t->type),
						   o, depth + 1);
		err = btf_render(btf, t->type, o, depth + 1);
		if (!err)
			out_str(o, o->last == '*' ? "*" : " *");
		return err;
	case BTF_KIND_CONST:
	case BTF_KIND_VOLATILE:
		qual = BTF_INFO_KIND(t->info) == BTF_KIND_CONST ?
		       "const" : "volatile";
		/* "char *const p": the qualifier follows what it qualifies */
		if (btf_kind_of(btf, t->type) == BTF_KIND_PTR) {
			err = btf_render(btf, t->type, o, depth + 1);
			if (!err) {
				out_str(o, " ");
				out_str(o, qual);
			}
			return err;
		}
		out_str(o, qual);
		out_str(o, " ");
		return btf_render(btf, t->type, o, depth + 1);
	case BTF_KIND_RESTRICT:
	case VMLAT_BTF_KIND_TYPE_TAG:
		/* Neither changes how a caller passes the argument. */
		return btf_render(btf, t->type, o, depth + 1);
	case BTF_KIND_STRUCT:
		prefix = "struct ";
		break;
	case BTF_KIND_UNION:
		prefix = "union ";
		break;
	case BTF_KIND_FWD:
		prefix = BTF_INFO_KFLAG(t->info) ? "union " : "struct ";
		break;
	case BTF_KIND_ENUM:
	case VMLAT_BTF_KIND_ENUM64:
		prefix = "enum ";
		break;
	case BTF_KIND_INT:
	case VMLAT_BTF_KIND_FLOAT:
	case BTF_KIND_TYPEDEF:
		break;
	default:
		return -EINVAL;
	}

	name = btf_str(btf, t->name_off);
	if (!name || !*name)
		return -EINVAL;	/* anonymous types never name an argument */
	out_str(o, prefix);
	out_str(o, name);
	return 0;
}

static bool btf_is_void_ptr(const struct vmlat_btf *btf, u32 id)
{
	const struct btf_type *t = btf_type(btf, id);

	return t && BTF_INFO_KIND(t->info) == BTF_KIND_PTR && t->type == 0;
}

/**
 * vmlat_btf_tp_proto() - render a tracepoint's prototype from BTF
 * @btf:	indexed BTF holding the tracepoint (module BTF with its base)
 * @tp_name:	tracepoint name, e.g. "kvm_entry"
 * @buf:	output, e.g. "(struct kvm_vcpu *, bool)"; "(void)" if none
 * @size:	size of @buf
 *
 * Return: 0; -ENOENT if BTF has no btf_trace_@tp_name; -EINVAL if it is
 * not a pointer to a void function whose first parameter is void *; -ELOOP for
 * a cyclic type chain; -ENAMETOOLONG if @buf is too small (it then holds a
 * truncated, NUL-terminated string).
 */
int vmlat_btf_tp_proto(const struct vmlat_btf *btf, const char *tp_name,
		       char *buf, size_t size)
{
	static const char prefix[] = "btf_trace_";
	const struct btf_param *p;
	const struct btf_type *t;
	struct btf_out o = { .buf = buf, .size = size };
	char name[128];
	u32 vlen;
	s32 id;
	int err;

	if (!size)
		return -ENAMETOOLONG;
	buf[0] = '\0';
	if (strlen(tp_name) >= sizeof(name) - sizeof(prefix))
		return -ENAMETOOLONG;
	memcpy(name, prefix, sizeof(prefix) - 1);
	memcpy(name + sizeof(prefix) - 1, tp_name, strlen(tp_name) + 1);

	id = btf_find(btf, name, BTF_KIND_TYPEDEF);
	if (id < 0)
		return id;

	/* typedef -> pointer -> function prototype (void *__data, ...) */
	t = btf_type(btf, btf_type(btf, id)->type);
	if (!t || BTF_INFO_KIND(t->info) != BTF_KIND_PTR)
		return -EINVAL;
	t = btf_type(btf, t->type);
	if (!t || BTF_INFO_KIND(t->info) != BTF_KIND_FUNC_PROTO || t->type)
		return -EINVAL;
	vlen = BTF_INFO_VLEN(t->info);
	p = (const struct btf_param *)(t + 1);
	if (vlen < 1)
		return -EINVAL;
	if (!btf_is_void_ptr(btf, p[0].type))
		return -EINVAL;

	out_str(&o, "(");
	err = btf_render_params(btf, t, 1, &o, 0);
	if (err) {
		buf[0] = '\0';
		return err;
	}
	out_str(&o, ")");
	return o.len < size ? 0 : -ENAMETOOLONG;
}

/* ---- struct members and layouts --------------------------------------- */

/* @id with typedefs and qualifiers stripped; NULL if it does not resolve. */
static const struct btf_type *btf_resolve(const struct vmlat_btf *btf, u32 id)
{
	const struct btf_type *t;
	int depth;

	for (depth = 0; depth <= VMLAT_BTF_MAX_DEPTH; depth++) {
		t = id ? btf_type(btf, id) : NULL;
		if (!t)
			return NULL;
		switch (BTF_INFO_KIND(t->info)) {
		case BTF_KIND_TYPEDEF:
		case BTF_KIND_CONST:
		case BTF_KIND_VOLATILE:
		case BTF_KIND_RESTRICT:
		case VMLAT_BTF_KIND_TYPE_TAG:
			id = t->type;
			break;
		default:
			return t;
		}
	}
	return NULL;
}

static bool btf_is_composite(const struct btf_type *t)
{
	return t && (BTF_INFO_KIND(t->info) == BTF_KIND_STRUCT ||
		     BTF_INFO_KIND(t->info) == BTF_KIND_UNION);
}

/* Size in bytes of type @id, or 0 if it has none (void, function, loop). */
static u64 btf_type_bytes(const struct vmlat_btf *btf, u32 id, int depth)
{
	const struct btf_type *t = btf_resolve(btf, id);
	const struct btf_array *a;

	if (!t || depth > VMLAT_BTF_MAX_DEPTH)
		return 0;
	switch (BTF_INFO_KIND(t->info)) {
	case BTF_KIND_INT:
	case BTF_KIND_ENUM:
	case VMLAT_BTF_KIND_ENUM64:
	case BTF_KIND_STRUCT:
	case BTF_KIND_UNION:
	case VMLAT_BTF_KIND_FLOAT:
		return t->size;
	case BTF_KIND_PTR:
		/* BTF describes the running kernel: this build's pointers. */
		return sizeof(void *);
	case BTF_KIND_ARRAY:
		a = (const struct btf_array *)(t + 1);
		return a->nelems * btf_type_bytes(btf, a->type, depth + 1);
	default:
		return 0;
	}
}

/* Length of the first component of @path ("control" of "control.x"). */
static size_t btf_path_len(const char *path)
{
	const char *dot = strchr(path, '.');

	return dot ? (size_t)(dot - path) : strlen(path);
}

/*
 * Find member @name (@len characters) of struct or union @t, looking into
 * its anonymous struct and union members as C does. On success set
 * @bit_off (from the start of @t), @found to the member and @kflag to
 * whether the struct that holds it has bitfield offsets.
 */
static int btf_find_member(const struct vmlat_btf *btf,
			   const struct btf_type *t, const char *name,
			   size_t len, u32 *bit_off,
			   const struct btf_member **found, bool *kflag,
			   int depth)
{
	const struct btf_member *m = (const struct btf_member *)(t + 1);
	u32 i, vlen = BTF_INFO_VLEN(t->info), off, inner;
	bool kf = BTF_INFO_KFLAG(t->info);
	const char *s;
	int err;

	if (depth > VMLAT_BTF_MAX_DEPTH)
		return -ELOOP;
	for (i = 0; i < vlen; i++) {
		off = kf ? BTF_MEMBER_BIT_OFFSET(m[i].offset) : m[i].offset;
		s = btf_str(btf, m[i].name_off);
		if (!s)
			return -EINVAL;
		if (*s) {
			if (strlen(s) != len || memcmp(s, name, len))
				continue;
			*bit_off = off;
			*found = &m[i];
			*kflag = kf;
			return 0;
		}
		/* Anonymous: a nested struct or union, or unnamed padding. */
		if (!btf_is_composite(btf_resolve(btf, m[i].type)))
			continue;
		err = btf_find_member(btf, btf_resolve(btf, m[i].type), name,
				      len, &inner, found, kflag, depth + 1);
		if (err == -ENOENT)
			continue;
		if (err)
			return err;
		*bit_off = off + inner;
		return 0;
	}
	return -ENOENT;
}

/**
 * vmlat_btf_member() - where a member of a struct lies, from BTF
 * @btf:	indexed BTF (with its base, for split BTF)
 * @type_name:	the struct or union, e.g. "vmcb"
 * @path:	its member, nested ones joined by '.': "control.exit_code"
 *		(members of anonymous structs and unions are named as in C)
 * @loc:	on success: bit offset from the start of @type_name, size in
 *		bits (a bitfield's width, else 8 times its type's size)
 *
 * Return: 0; -ENOENT if BTF has no struct or union @type_name
 * (@loc->bits then 0) or it has no member @path (@loc->bits then 1);
 * -EINVAL if @type_name or a member @path goes through is not a struct or
 * union, a member has no size, or a name is corrupt; -ELOOP for a cycle.
 */
int vmlat_btf_member(const struct vmlat_btf *btf, const char *type_name,
		     const char *path, struct vmlat_btf_loc *loc)
{
	const struct btf_member *m = NULL;
	const struct btf_type *t;
	u32 off = 0, inner = 0;
	bool kflag = false;
	size_t len;
	s32 id;
	u64 bytes;
	int err;

	loc->bit_off = 0;
	loc->bits = 0;
	id = btf_find(btf, type_name, BTF_KIND_STRUCT);
	if (id < 0)
		id = btf_find(btf, type_name, BTF_KIND_UNION);
	if (id < 0) {
		/* A typedef or an enum of that name is the wrong kind. */
		if (btf_find(btf, type_name, BTF_KIND_TYPEDEF) >= 0 ||
		    btf_find(btf, type_name, BTF_KIND_ENUM) >= 0)
			return -EINVAL;
		return -ENOENT;
	}
	t = btf_type(btf, id);
	for (;;) {
		len = btf_path_len(path);
		if (!len)
			return -EINVAL;
		if (!btf_is_composite(t))
			return -EINVAL;
		err = btf_find_member(btf, t, path, len, &inner, &m, &kflag, 0);
		if (err == -ENOENT)
			loc->bits = 1;
		if (err)
			return err;
		off += inner;
		if (!path[len])
			break;
		path += len + 1;
		t = btf_resolve(btf, m->type);
	}
	if (kflag && BTF_MEMBER_BITFIELD_SIZE(m->offset)) {
		loc->bits = BTF_MEMBER_BITFIELD_SIZE(m->offset);
	} else {
		bytes = btf_type_bytes(btf, m->type, 0);
		if (!bytes || bytes > (1U << 28))
			return -EINVAL;
		loc->bits = bytes * 8;
	}
	loc->bit_off = off;
	return 0;
}

static void out_u32(struct btf_out *o, u32 v)
{
	char num[11];
	int i = sizeof(num) - 1;

	num[i] = '\0';
	do {
		num[--i] = '0' + v % 10;
		v /= 10;
	} while (v);
	out_str(o, num + i);
}

/* "offset 112 size 4", or "bit 8327 width 1" for a bitfield. */
static void layout_where(struct btf_out *o, u32 bit_off, u32 bits)
{
	bool bytes = !(bit_off % 8 || bits % 8);

	out_str(o, bytes ? "offset " : "bit ");
	out_u32(o, bytes ? bit_off / 8 : bit_off);
	out_str(o, bytes ? " size " : " width ");
	out_u32(o, bytes ? bits / 8 : bits);
}

/**
 * vmlat_btf_check_layout() - confirm a table of member layouts against BTF
 * @btf:	the running kernel's BTF (with its base, for split BTF)
 * @tab:	what the build's headers say, @n entries
 * @n:		entries in @tab
 * @res:	the outcome: members confirmed, members whose struct BTF
 *		lacks (unconfirmed), the OR of @groups of every member that
 *		differs or is missing, and the first of them, e.g.
 *		"vmcb.control.exit_code: offset 112 size 4, BTF offset 120
 *		size 4"
 *
 * A struct BTF does not have at all leaves its members unconfirmed, not
 * refused: BTF that describes nothing of it (a kernel without module BTF)
 * cannot contradict the headers.
 */
void vmlat_btf_check_layout(const struct vmlat_btf *btf,
			    const struct vmlat_layout_member *tab, u32 n,
			    struct vmlat_layout_result *res)
{
	struct btf_out o = { .buf = res->why, .size = sizeof(res->why) };
	struct vmlat_btf_loc loc;
	u32 i;
	int err;

	res->confirmed = 0;
	res->unconfirmed = 0;
	res->differ = 0;
	res->refused = 0;
	res->why[0] = '\0';
	for (i = 0; i < n; i++) {
		const struct vmlat_layout_member *e = &tab[i];

		err = vmlat_btf_member(btf, e->type, e->path, &loc);
		if (err == -ENOENT && !loc.bits) {
			res->unconfirmed++;
			continue;
		}
		if (!err && loc.bit_off == e->bit_off && loc.bits == e->bits) {
			res->confirmed++;
			continue;
		}
		res->refused |= e->groups;
		if (res->differ++)
			continue;
		out_str(&o, e->type);
		out_str(&o, ".");
		out_str(&o, e->path);
		out_str(&o, ": ");
		layout_where(&o, e->bit_off, e->bits);
		if (err) {
			out_str(&o, err == -ENOENT ? ", not in BTF" :
				    ", unreadable in BTF");
			continue;
		}
		out_str(&o, ", BTF ");
		layout_where(&o, loc.bit_off, loc.bits);
	}
}
