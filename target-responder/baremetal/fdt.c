// SPDX-License-Identifier: MIT
/*
 * A flattened device tree reader (the Devicetree Specification's format:
 * a header, a structure block of big-endian tokens, a strings block). It
 * walks the structure block once per query; the blob stays where the loader
 * put it and is never written.
 */
#include "bm.h"

#define FDT_MAGIC 0xd00dfeedu
#define FDT_BEGIN_NODE 1
#define FDT_END_NODE 2
#define FDT_PROP 3
#define FDT_NOP 4
#define FDT_END 9

static uint32_t fdt_be32(const void *p)
{
	const uint8_t *b = p;
	return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
}

uint64_t bm_fdt_cells(const uint32_t *p, unsigned cells)
{
	uint64_t v = 0;
	for (unsigned i = 0; i < cells; ++i)
		v = v << 32 | fdt_be32(p + i);
	return v;
}

int bm_fdt_init(struct bm_fdt *fdt, const void *blob)
{
	const uint8_t *b = blob;
	if (!blob || ((uintptr_t)blob & 7) || fdt_be32(b) != FDT_MAGIC)
		return -1;
	uint32_t total = fdt_be32(b + 4), off_struct = fdt_be32(b + 8),
		 off_strings = fdt_be32(b + 12), version = fdt_be32(b + 20),
		 size_strings = fdt_be32(b + 32), size_struct = fdt_be32(b + 36);
	if (version < 16 || total < 40 || off_struct > total || size_struct > total - off_struct ||
	    off_strings > total || size_strings > total - off_strings || (off_struct & 3))
		return -1;
	fdt->blob = b;
	fdt->structs = b + off_struct;
	fdt->structs_size = size_struct;
	fdt->strings = (const char *)b + off_strings;
	fdt->strings_size = size_strings;
	return 0;
}

/* The length of the NUL-terminated string at @off, or -1 if it runs out of the block. */
static int fdt_strlen(const struct bm_fdt *fdt, uint32_t off)
{
	for (uint32_t i = off; i < fdt->structs_size; ++i)
		if (!fdt->structs[i])
			return (int)(i - off);
	return -1;
}

static uint32_t fdt_align4(uint32_t off) { return (off + 3) & ~3u; }

/*
 * The property at @off (a FDT_PROP token): its name, value and length; the
 * offset after it, or 0 when it is not a property or is cut.
 */
static uint32_t fdt_prop_at(const struct bm_fdt *fdt, uint32_t off, const char **name,
			    const void **value, int *len)
{
	if (off + 12 > fdt->structs_size || fdt_be32(fdt->structs + off) != FDT_PROP)
		return 0;
	uint32_t l = fdt_be32(fdt->structs + off + 4), nameoff = fdt_be32(fdt->structs + off + 8);
	if (l > fdt->structs_size - off - 12 || nameoff >= fdt->strings_size)
		return 0;
	*name = fdt->strings + nameoff;
	*value = fdt->structs + off + 12;
	*len = (int)l;
	return fdt_align4(off + 12 + l);
}

/* Skips NOPs from @off. */
static uint32_t fdt_skip_nops(const struct bm_fdt *fdt, uint32_t off)
{
	while (off + 4 <= fdt->structs_size && fdt_be32(fdt->structs + off) == FDT_NOP)
		off += 4;
	return off;
}

const void *bm_fdt_prop(const struct bm_fdt *fdt, const struct bm_fdt_node *n, const char *name,
			int *len)
{
	uint32_t off = fdt_skip_nops(fdt, n->off);
	for (;;) {
		const char *pname;
		const void *value;
		int l;
		uint32_t next = fdt_prop_at(fdt, off, &pname, &value, &l);
		if (!next)
			return 0;
		if (!bm_strcmp(pname, name)) {
			if (len)
				*len = l;
			return value;
		}
		off = fdt_skip_nops(fdt, next);
	}
}

int bm_fdt_compatible(const struct bm_fdt *fdt, const struct bm_fdt_node *n, const char *compat)
{
	int len;
	const char *list = bm_fdt_prop(fdt, n, "compatible", &len);
	if (!list)
		return 0;
	for (int i = 0; i < len;) {
		const char *s = list + i;
		unsigned long l = 0;
		while (i + (int)l < len && s[l])
			++l;
		if (i + (int)l < len && !bm_strcmp(s, compat))
			return 1;
		i += (int)l + 1;
	}
	return 0;
}

int bm_fdt_disabled(const struct bm_fdt *fdt, const struct bm_fdt_node *n)
{
	int len;
	const char *status = bm_fdt_prop(fdt, n, "status", &len);
	if (!status || len < 1 || status[len - 1])
		return 0;
	return bm_strcmp(status, "okay") && bm_strcmp(status, "ok");
}

/* Maps @addr through the ranges of the node at depth @d (a bus), into its parent's space. */
static int fdt_range(const struct bm_fdt_node *n, unsigned d, uint64_t *addr)
{
	if (n->ranges_len[d] < 0)
		return -1; /* no ranges: not translatable */
	if (n->ranges_len[d] == 0)
		return 0; /* identity */
	unsigned child = n->addr_cells[d], parent = n->addr_cells[d - 1], size = n->size_cells[d];
	unsigned entry = child + parent + size;
	if (!entry || child > 2 || parent > 2 || size > 2)
		return -1;
	unsigned count = (unsigned)n->ranges_len[d] / (4 * entry);
	for (unsigned i = 0; i < count; ++i) {
		const uint32_t *r = n->ranges[d] + i * entry;
		uint64_t cbase = bm_fdt_cells(r, child), pbase = bm_fdt_cells(r + child, parent),
			 len = bm_fdt_cells(r + child + parent, size);
		if (*addr >= cbase && *addr - cbase < len) {
			*addr = *addr - cbase + pbase;
			return 0;
		}
	}
	return -1;
}

int bm_fdt_reg(const struct bm_fdt *fdt, const struct bm_fdt_node *n, unsigned i, uint64_t *addr,
	       uint64_t *size)
{
	if (!n->depth)
		return -1;
	unsigned ac = n->addr_cells[n->depth - 1], sc = n->size_cells[n->depth - 1];
	int len;
	const uint32_t *reg = bm_fdt_prop(fdt, n, "reg", &len);
	if (!reg || !ac || ac > 2 || sc > 2 || (unsigned)len < (i + 1) * 4 * (ac + sc))
		return -1;
	*addr = bm_fdt_cells(reg + i * (ac + sc), ac);
	if (size)
		*size = bm_fdt_cells(reg + i * (ac + sc) + ac, sc);
	/* Up through each bus to the root: depth-1 is the parent. */
	for (unsigned d = n->depth - 1; d > 0; --d)
		if (fdt_range(n, d, addr))
			return -1;
	return 0;
}

int bm_fdt_walk(const struct bm_fdt *fdt,
		int (*fn)(const struct bm_fdt *fdt, const struct bm_fdt_node *n, void *ctx),
		void *ctx)
{
	static char path[168];
	static unsigned path_len[BM_FDT_MAX_DEPTH + 1];
	struct bm_fdt_node n;
	int depth = -1;
	uint32_t off = 0;

	n.path = path;
	while (off + 4 <= fdt->structs_size) {
		uint32_t token = fdt_be32(fdt->structs + off);
		if (token == FDT_NOP) {
			off += 4;
		} else if (token == FDT_BEGIN_NODE) {
			int l = fdt_strlen(fdt, off + 4);
			if (l < 0 || ++depth >= BM_FDT_MAX_DEPTH)
				return -1;
			n.name = (const char *)fdt->structs + off + 4;
			n.depth = (unsigned)depth;
			n.off = fdt_align4(off + 4 + (uint32_t)l + 1);
			/* The path: the parent's, '/', the name (the root is "/"). */
			unsigned p = depth ? path_len[depth - 1] : 0;
			if (depth > 1 && p < sizeof(path) - 1)
				path[p++] = '/';
			if (depth == 0)
				path[p++] = '/';
			for (int i = 0; i < l && p < sizeof(path) - 1; ++i)
				path[p++] = n.name[i];
			path[p] = 0;
			path_len[depth] = p;
			/* This node's own cells and ranges, for its children. */
			n.addr_cells[depth] = 2;
			n.size_cells[depth] = 1;
			n.ranges[depth] = 0;
			n.ranges_len[depth] = -1;
			uint32_t q = fdt_skip_nops(fdt, n.off);
			for (;;) {
				const char *pname;
				const void *value;
				int vl;
				uint32_t next = fdt_prop_at(fdt, q, &pname, &value, &vl);
				if (!next)
					break;
				if (!bm_strcmp(pname, "#address-cells") && vl == 4)
					n.addr_cells[depth] = fdt_be32(value);
				else if (!bm_strcmp(pname, "#size-cells") && vl == 4)
					n.size_cells[depth] = fdt_be32(value);
				else if (!bm_strcmp(pname, "ranges")) {
					n.ranges[depth] = value;
					n.ranges_len[depth] = vl;
				}
				q = fdt_skip_nops(fdt, next);
			}
			int r = fn(fdt, &n, ctx);
			if (r)
				return r;
			off = q;
		} else if (token == FDT_PROP) {
			const char *pname;
			const void *value;
			int vl;
			off = fdt_prop_at(fdt, off, &pname, &value, &vl);
			if (!off)
				return -1;
		} else if (token == FDT_END_NODE) {
			if (depth < 0)
				return -1;
			--depth;
			off += 4;
		} else if (token == FDT_END) {
			return 0;
		} else {
			return -1;
		}
	}
	return -1;
}
