/* SPDX-License-Identifier: MIT */
/*
 * The bare-metal responder's core: console, system registers, the device
 * tree reader and the interrupt controller, as main.c uses them. The GPIO
 * drivers do not include this (gpio.h is their whole contract).
 */
#ifndef IRQLOOP_BM_H
#define IRQLOOP_BM_H

#include <stdarg.h>
#include <stdint.h>

#define bm_sysreg_read(reg)                                                    \
	({                                                                     \
		uint64_t bm_v_;                                                \
		__asm__ volatile("mrs %0, " #reg : "=r"(bm_v_));               \
		bm_v_;                                                         \
	})
#define bm_sysreg_write(reg, val)                                              \
	__asm__ volatile("msr " #reg ", %x0" : : "rZ"((uint64_t)(val)) : "memory")

static inline void bm_isb(void) { __asm__ volatile("isb" : : : "memory"); }
static inline void bm_irq_disable(void) { __asm__ volatile("msr daifset, #2" : : : "memory"); }
static inline void bm_irq_enable(void) { __asm__ volatile("msr daifclr, #2" : : : "memory"); }
static inline void bm_wfi(void) { __asm__ volatile("dsb sy; wfi" : : : "memory"); }

/* The generic timer's virtual count, ordered after earlier instructions. */
static inline uint64_t bm_ticks(void)
{
	bm_isb();
	return bm_sysreg_read(cntvct_el0);
}

/* Console (uart-pl011.c, format.c). Polled output; bm_console_init(0) drops output. */
void bm_console_init(uintptr_t pl011_base);
void bm_putc(char c);
/*
 * A small printf: %s %c %d %u %x, the l and ll length modifiers, a field
 * width and 0-padding for numbers, %%. Nothing else.
 */
void bm_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void bm_vprintf(const char *fmt, va_list ap);

/* Strings (format.c). */
int bm_strcmp(const char *a, const char *b);
int bm_strncmp(const char *a, const char *b, unsigned long n);
unsigned long bm_strlen(const char *s);
/* Parses a decimal or 0x-prefixed hexadecimal number of @len chars; 0 on success. */
int bm_parse_u64(const char *s, unsigned long len, uint64_t *out);

/*
 * The flattened device tree (fdt.c): a reader of the format of the
 * Devicetree Specification, chapter 5, version 16 or later. Every access is
 * bounds-checked against the header's sizes; a blob that fails the checks
 * is treated as absent.
 */
struct bm_fdt {
	const uint8_t *blob;
	const uint8_t *structs;
	uint32_t structs_size;
	const char *strings;
	uint32_t strings_size;
};

#define BM_FDT_MAX_DEPTH 16

/* A node as bm_fdt_walk() shows it. */
struct bm_fdt_node {
	uint32_t off;       /* where its properties start in the structure block */
	const char *name;   /* its unit name ("" for the root) */
	unsigned depth;     /* 0 for the root */
	const char *path;   /* its full path, truncated at 160 characters */
	/* #address-cells and #size-cells and ranges of each ancestor, depth 0 first */
	unsigned addr_cells[BM_FDT_MAX_DEPTH];
	unsigned size_cells[BM_FDT_MAX_DEPTH];
	const uint32_t *ranges[BM_FDT_MAX_DEPTH];
	int ranges_len[BM_FDT_MAX_DEPTH]; /* -1: no ranges property */
};

/* 0 when @blob is a device tree this reader takes. */
int bm_fdt_init(struct bm_fdt *fdt, const void *blob);
/* Calls @fn for every node in document order until it returns nonzero (then returned). */
int bm_fdt_walk(const struct bm_fdt *fdt,
		int (*fn)(const struct bm_fdt *fdt, const struct bm_fdt_node *n, void *ctx),
		void *ctx);
/* The value of property @name of the node, its length in *len, or NULL. */
const void *bm_fdt_prop(const struct bm_fdt *fdt, const struct bm_fdt_node *n,
			const char *name, int *len);
/* 1 when the node's compatible list holds @compat. */
int bm_fdt_compatible(const struct bm_fdt *fdt, const struct bm_fdt_node *n, const char *compat);
/* 0 when the node's status is absent, "okay" or "ok". */
int bm_fdt_disabled(const struct bm_fdt *fdt, const struct bm_fdt_node *n);
/* Entry @i of the node's reg, translated to a CPU address through its parents' ranges. */
int bm_fdt_reg(const struct bm_fdt *fdt, const struct bm_fdt_node *n, unsigned i,
	       uint64_t *addr, uint64_t *size);
/* A big-endian number of @cells 32-bit cells. */
uint64_t bm_fdt_cells(const uint32_t *p, unsigned cells);

/* The interrupt controller (gic-v2.c, gic-v3.c). */
struct bm_gic {
	const struct bm_gic_ops *ops;
	uintptr_t dist;   /* the distributor */
	uintptr_t cpu;    /* GICv2: the CPU interface */
	uintptr_t redist; /* GICv3: the redistributor region; rd: this CPU's frame */
	uintptr_t rd;
};

struct bm_gic_ops {
	const char *name; /* "GICv2", "GICv3" */
	/* Distributor and this CPU's interface on, every interrupt off; 0 or a negative error. */
	int (*init)(struct bm_gic *gic);
	/* Enables @intid (SPI: routed to this CPU; edge or level), priority 0xa0. */
	void (*enable)(const struct bm_gic *gic, unsigned intid, int edge);
	/* The acknowledge register's value (INTID in its low bits, 1020-1023 special). */
	uint32_t (*ack)(const struct bm_gic *gic);
	void (*eoi)(const struct bm_gic *gic, uint32_t iar);
	/* Sends SGI @intid (0-15) to this CPU. */
	void (*sgi_self)(const struct bm_gic *gic, unsigned intid);
};

extern const struct bm_gic_ops bm_gic_v2_ops;
extern const struct bm_gic_ops bm_gic_v3_ops;

/* GICv2 keeps the source CPU of an SGI above bit 9; no LPI is enabled on v3. */
#define BM_INTID(iar) ((iar) & 0x3ffu)
#define BM_INTID_SPECIAL 1020 /* 1020-1023: no interrupt to take */

#endif
