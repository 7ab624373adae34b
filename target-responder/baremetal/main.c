// SPDX-License-Identifier: MIT
/*
 * The bare-metal responder's core: it finds its devices (device tree, else
 * the build's defaults), sets up the GIC and one GPIO block, then answers
 * each edge of the stimulus line from the interrupt handler (or a polling
 * loop) and prints its counters on the console. See README.md.
 */
#include "bm.h"
#include "gpio.h"
#include "mmio.h"

/* Build-time defaults (CMake cache variables, README.md): QEMU virt's map. */
#ifndef BM_DEFAULT_UART
#define BM_DEFAULT_UART 0x09000000
#endif
#ifndef BM_DEFAULT_GIC_VERSION
#define BM_DEFAULT_GIC_VERSION 0 /* 0: v3 when the CPU has its system registers, else v2 */
#endif
#ifndef BM_DEFAULT_GICD
#define BM_DEFAULT_GICD 0x08000000
#endif
#ifndef BM_DEFAULT_GICC
#define BM_DEFAULT_GICC 0x08010000
#endif
#ifndef BM_DEFAULT_GICR
#define BM_DEFAULT_GICR 0x080a0000
#endif
#ifndef BM_DEFAULT_GPIO
#define BM_DEFAULT_GPIO pl061 /* a driver name, bare: rcar-gen3 stays one word */
#endif
#ifndef BM_DEFAULT_GPIO_BASE
#define BM_DEFAULT_GPIO_BASE 0x09030000
#endif
#ifndef BM_DEFAULT_GPIO_INTID
#define BM_DEFAULT_GPIO_INTID 39
#endif
#ifndef BM_DEFAULT_GPIO_EDGE
#define BM_DEFAULT_GPIO_EDGE 0 /* the GIC input: 0 level, 1 edge */
#endif
#ifndef BM_DEFAULT_IN
#define BM_DEFAULT_IN 3
#endif
#ifndef BM_DEFAULT_OUT
#define BM_DEFAULT_OUT 4
#endif

#define BM_STR_(x) #x
#define BM_STR(x) BM_STR_(x)

#define BM_TIMER_PPI 27 /* the EL1 virtual timer: the console's quiet-period wake-up */
#define BM_SELFTEST_SGI 1
#define BM_PRINT_PERIOD_MS 1000

/* What the responder runs with; filled from defaults, the device tree, then bootargs. */
struct bm_config {
	int have_dt;
	const char *bootargs;
	int bootargs_len;
	const char *stdout_path;
	int stdout_path_len;
	struct bm_fdt_node aliases; /* valid when have_aliases */
	int have_aliases;
	uintptr_t uart;
	int uart_found;
	unsigned gic_version;
	uintptr_t gicd, gicc, gicr;
	int gic_found;
	const struct bm_gpio_driver *drv;
	uintptr_t gpio_base;
	unsigned intid;
	int edge;
	char gpio_node[96];
	const char *gpio_sel; /* gpio= */
	int gpio_sel_len;
	const char *gpio_error;
	uint64_t in, out, poll, sgi, quiet_ms, intid_arg, nodt, irq_index;
	int have_in, have_out, have_intid;
};

static struct bm_config bm_cfg;
static struct bm_gic bm_gic;
static struct bm_gpio bm_g;
static int bm_poll;
static int bm_out_level, bm_in_level;

/* Shared with the handler. */
static volatile uint64_t bm_edges, bm_spurious, bm_unexpected, bm_max_ticks, bm_last_event;

static uint64_t bm_ns(uint64_t ticks)
{
	uint64_t freq = bm_sysreg_read(cntfrq_el0);
	return freq ? ticks / freq * 1000000000u + ticks % freq * 1000000000u / freq : 0;
}

static void bm_stop(void)
{
	bm_irq_disable();
	for (;;)
		bm_wfi();
}

void bm_exception(unsigned vector, uint64_t esr, uint64_t elr, uint64_t far)
{
	static int once;
	if (once++)
		bm_stop();
	bm_printf("irqloop-bm: error: unexpected exception (vector %u, ESR 0x%lx, ELR 0x%lx, "
		  "FAR 0x%lx): stopped\n",
		  vector, (unsigned long)esr, (unsigned long)elr, (unsigned long)far);
	bm_stop();
}

/* ---- The MMU: identity map, the image Normal write-back, everything else Device-nGnRE. ---- */

static uint64_t bm_pt_l1[512] __attribute__((aligned(4096)));
static uint64_t bm_pt_l2[512] __attribute__((aligned(4096)));
extern char _start[], _end[];

#define BM_PT_BLOCK 0x1u
#define BM_PT_TABLE 0x3u
#define BM_PT_AF (1u << 10)
#define BM_PT_DEVICE (BM_PT_BLOCK | 0u << 2 | BM_PT_AF | 3ull << 53) /* attr 0, XN */
#define BM_PT_NORMAL (BM_PT_BLOCK | 1u << 2 | 3u << 8 | BM_PT_AF)    /* attr 1, inner shareable */

/* 0 when the MMU and caches are on; else the reason they stayed off. */
static const char *bm_mmu_on(void)
{
	uintptr_t s = (uintptr_t)_start, e = (uintptr_t)_end;
	if (e > (1ull << 39) || s >> 30 != (e - 1) >> 30)
		return "the image is above 512 GB or crosses a 1 GB boundary";
	for (unsigned i = 0; i < 512; ++i)
		bm_pt_l1[i] = (uint64_t)i << 30 | BM_PT_DEVICE;
	uint64_t gb = s >> 30 << 30;
	for (unsigned j = 0; j < 512; ++j) {
		uint64_t a = gb | (uint64_t)j << 21;
		int ours = a < e && a + (1u << 21) > s;
		bm_pt_l2[j] = a | (ours ? BM_PT_NORMAL : BM_PT_DEVICE);
	}
	bm_pt_l1[s >> 30] = (uintptr_t)bm_pt_l2 | BM_PT_TABLE;

	/* Written with the caches off: drop any stale line over the image before they go on. */
	unsigned line = 4u << (bm_sysreg_read(ctr_el0) >> 16 & 0xf);
	for (uintptr_t a = s & ~(uintptr_t)(line - 1); a < e; a += line)
		__asm__ volatile("dc ivac, %0" : : "r"(a) : "memory");
	__asm__ volatile("dsb sy" : : : "memory");

	uint64_t parange = bm_sysreg_read(id_aa64mmfr0_el1) & 0xf;
	if (parange > 5)
		parange = 5;
	bm_sysreg_write(mair_el1, 0xff00ull | 0x04); /* attr 1 Normal WB, attr 0 Device-nGnRE */
	bm_sysreg_write(tcr_el1, 25u | 1u << 8 | 1u << 10 | 3u << 12 | 1u << 23 | parange << 32);
	bm_sysreg_write(ttbr0_el1, (uintptr_t)bm_pt_l1);
	__asm__ volatile("dsb ish; tlbi vmalle1; dsb ish; isb" : : : "memory");
	bm_sysreg_write(sctlr_el1, bm_sysreg_read(sctlr_el1) | 1u << 0 | 1u << 2 | 1u << 12);
	bm_isb();
	return 0;
}

/* ---- Bootargs: KEY=VALUE words; the numbers are decimal or 0x hexadecimal. ---- */

static int bm_word_is(const char *w, int len, const char *key)
{
	unsigned long kl = bm_strlen(key);
	return (unsigned long)len > kl && w[kl] == '=' && !bm_strncmp(w, key, kl);
}

static void bm_print_word(const char *w, int len, const char *what)
{
	char word[64];
	int n = len < 63 ? len : 63;
	for (int i = 0; i < n; ++i)
		word[i] = w[i];
	word[n] = 0;
	bm_printf("irqloop-bm: bootarg %s: %s\n", word, what);
}

static void bm_parse_bootargs(struct bm_config *c, int report)
{
	static const char *const keys[] = {"in",       "out",   "poll", "sgi", "quiet_ms",
					   "intid",    "nodt",  "irq"};
	uint64_t *const values[] = {&c->in,        &c->out,  &c->poll, &c->sgi, &c->quiet_ms,
				    &c->intid_arg, &c->nodt, &c->irq_index};
	int *const seen[] = {&c->have_in, &c->have_out, 0, 0, 0, &c->have_intid, 0, 0};
	const char *p = c->bootargs, *end = c->bootargs + c->bootargs_len;
	while (p && p < end && *p) {
		while (p < end && (*p == ' ' || *p == '\t'))
			++p;
		const char *w = p;
		while (p < end && *p && *p != ' ' && *p != '\t')
			++p;
		int len = (int)(p - w), known = 0;
		if (!len)
			continue;
		if (bm_word_is(w, len, "gpio")) {
			c->gpio_sel = w + 5;
			c->gpio_sel_len = len - 5;
			continue;
		}
		for (unsigned k = 0; k < sizeof(keys) / sizeof(keys[0]); ++k) {
			if (!bm_word_is(w, len, keys[k]))
				continue;
			known = 1;
			unsigned long kl = bm_strlen(keys[k]) + 1;
			if (bm_parse_u64(w + kl, (unsigned long)len - kl, values[k])) {
				if (report)
					bm_print_word(w, len, "not a number: ignored");
			} else if (seen[k]) {
				*seen[k] = 1;
			}
		}
		if (!known && report)
			bm_print_word(w, len, "not ours: ignored");
	}
}

/* ---- The device tree: /chosen and /aliases first, then the devices. ---- */

static int bm_dt_chosen(const struct bm_fdt *fdt, const struct bm_fdt_node *n, void *ctx)
{
	struct bm_config *c = ctx;
	if (n->depth != 1)
		return 0;
	if (!bm_strcmp(n->name, "chosen")) {
		int len;
		const char *s = bm_fdt_prop(fdt, n, "bootargs", &len);
		if (s && len > 0) {
			c->bootargs = s;
			c->bootargs_len = len - 1;
		}
		s = bm_fdt_prop(fdt, n, "stdout-path", &len);
		if (!s)
			s = bm_fdt_prop(fdt, n, "linux,stdout-path", &len);
		if (s && len > 0) {
			c->stdout_path = s;
			/* "serial0:115200n8": the path ends at ':' */
			int l = 0;
			while (l < len && s[l] && s[l] != ':')
				++l;
			c->stdout_path_len = l;
		}
	} else if (!bm_strcmp(n->name, "aliases")) {
		c->aliases = *n;
		c->have_aliases = 1;
	}
	return 0;
}

static int bm_name_matches(const struct bm_fdt_node *n, const char *sel, int len)
{
	unsigned long pl = bm_strlen(n->path), nl = bm_strlen(n->name);
	return (pl == (unsigned long)len && !bm_strncmp(n->path, sel, (unsigned long)len)) ||
	       (nl == (unsigned long)len && !bm_strncmp(n->name, sel, (unsigned long)len));
}

static void bm_copy(char *dst, unsigned size, const char *src)
{
	unsigned i = 0;
	for (; src[i] && i + 1 < size; ++i)
		dst[i] = src[i];
	dst[i] = 0;
}

static void bm_dt_gpio(const struct bm_fdt *fdt, const struct bm_fdt_node *n, struct bm_config *c)
{
	int len;
	const char *list = bm_fdt_prop(fdt, n, "compatible", &len);
	const struct bm_gpio_driver *drv = 0;
	for (int i = 0; list && i < len && !drv;) {
		drv = bm_gpio_find(list + i);
		i += (int)bm_strlen(list + i) + 1;
	}
	if (!drv)
		return;
	if (c->gpio_sel && !bm_name_matches(n, c->gpio_sel, c->gpio_sel_len) &&
	    !(bm_strlen(drv->name) == (unsigned long)c->gpio_sel_len &&
	      !bm_strncmp(drv->name, c->gpio_sel, (unsigned long)c->gpio_sel_len)))
		return;
	uint64_t base;
	const uint32_t *irq = bm_fdt_prop(fdt, n, "interrupts", &len);
	if (bm_fdt_reg(fdt, n, 0, &base, 0)) {
		c->gpio_error = "its reg cannot be read or translated";
	} else if (!irq || len < 12) {
		c->gpio_error = "it has no GIC interrupts property (3 cells)";
	} else if ((uint64_t)len < 12 * (c->irq_index + 1)) {
		c->gpio_error = "its interrupts property has no entry irq= names";
	} else {
		irq += 3 * c->irq_index;
		uint32_t type = (uint32_t)bm_fdt_cells(irq, 1), num = (uint32_t)bm_fdt_cells(irq + 1, 1),
			 flags = (uint32_t)bm_fdt_cells(irq + 2, 1);
		c->drv = drv;
		c->gpio_base = (uintptr_t)base;
		c->intid = type == 0 ? 32 + num : 16 + num; /* SPI, else PPI */
		c->edge = (flags & 0xf) && (flags & 0xf) <= 3;
		c->gpio_error = 0;
	}
	bm_copy(c->gpio_node, sizeof(c->gpio_node), n->path);
}

static int bm_dt_devices(const struct bm_fdt *fdt, const struct bm_fdt_node *n, void *ctx)
{
	struct bm_config *c = ctx;
	if (!n->depth || bm_fdt_disabled(fdt, n))
		return 0;
	uint64_t a0, a1;
	if (!c->gic_found) {
		unsigned v = 0;
		if (bm_fdt_compatible(fdt, n, "arm,gic-v3"))
			v = 3;
		else if (bm_fdt_compatible(fdt, n, "arm,gic-400") ||
			 bm_fdt_compatible(fdt, n, "arm,cortex-a15-gic") ||
			 bm_fdt_compatible(fdt, n, "arm,cortex-a7-gic"))
			v = 2;
		if (v && !bm_fdt_reg(fdt, n, 0, &a0, 0) && !bm_fdt_reg(fdt, n, 1, &a1, 0)) {
			c->gic_found = 1;
			c->gic_version = v;
			c->gicd = (uintptr_t)a0;
			if (v == 3)
				c->gicr = (uintptr_t)a1;
			else
				c->gicc = (uintptr_t)a1;
		}
	}
	if (bm_fdt_compatible(fdt, n, "arm,pl011") || bm_fdt_compatible(fdt, n, "arm,sbsa-uart")) {
		int chosen = c->stdout_path &&
			     bm_name_matches(n, c->stdout_path, c->stdout_path_len);
		if ((chosen || !c->uart_found) && !bm_fdt_reg(fdt, n, 0, &a0, 0)) {
			c->uart = (uintptr_t)a0;
			c->uart_found = chosen ? 2 : 1; /* 2: the chosen one, not replaced */
		}
	}
	if (!c->drv)
		bm_dt_gpio(fdt, n, c);
	return 0;
}

static void bm_dt_read(const struct bm_fdt *fdt, struct bm_config *c)
{
	bm_fdt_walk(fdt, bm_dt_chosen, c);
	/* stdout-path may name an alias: replace it by the alias's path. */
	if (c->stdout_path && c->stdout_path_len && c->stdout_path[0] != '/' && c->have_aliases) {
		char alias[32];
		int l = c->stdout_path_len < 31 ? c->stdout_path_len : 31;
		for (int i = 0; i < l; ++i)
			alias[i] = c->stdout_path[i];
		alias[l] = 0;
		int len;
		const char *path = bm_fdt_prop(fdt, &c->aliases, alias, &len);
		if (path && len > 0) {
			c->stdout_path = path;
			c->stdout_path_len = len - 1;
		}
	}
	bm_fdt_walk(fdt, bm_dt_devices, c);
}

/* ---- The answer. ---- */

/* Answers when the stimulus line is pending (gpio.h's order), counts, acknowledges. */
static inline void bm_answer(uint32_t pending)
{
	const struct bm_gpio_driver *drv = bm_g.drv;
	if (pending & bm_gpio_bit(bm_g.in_line)) {
		bm_out_level = !bm_out_level;
		drv->set_out(&bm_g, bm_out_level);
		int level = drv->get_in(&bm_g);
		/* Both edges: each level must differ from the one before. */
		if (level == bm_in_level)
			bm_spurious = bm_spurious + 1;
		bm_in_level = level;
		bm_edges = bm_edges + 1;
	} else {
		bm_spurious = bm_spurious + 1;
	}
	drv->ack(&bm_g, pending);
}

static void bm_note_time(uint64_t t0)
{
	uint64_t t1 = bm_ticks();
	if (t1 - t0 > bm_max_ticks)
		bm_max_ticks = t1 - t0;
	bm_last_event = t1;
}

void bm_irq(void)
{
	uint64_t t0 = bm_ticks();
	uint32_t iar = bm_gic.ops->ack(&bm_gic);
	unsigned intid = BM_INTID(iar);
	if (intid == bm_g.intid && !bm_poll) {
		bm_answer(bm_g.drv->pending(&bm_g));
		bm_gic.ops->eoi(&bm_gic, iar);
		bm_note_time(t0);
		return;
	}
	if (intid == BM_TIMER_PPI) {
		bm_sysreg_write(cntv_ctl_el0, 0); /* off: its output falls before the EOI */
		bm_isb();
		bm_gic.ops->eoi(&bm_gic, iar);
		return;
	}
	/* Anything else is counted and never answered; 1020-1023 are not EOI'd. */
	bm_unexpected = bm_unexpected + 1;
	bm_last_event = bm_ticks();
	if (intid < BM_INTID_SPECIAL)
		bm_gic.ops->eoi(&bm_gic, iar);
}

/* ---- The console's counters. ---- */

struct bm_counts {
	uint64_t edges, spurious, unexpected, max_ticks;
};

static void bm_snapshot(struct bm_counts *s)
{
	s->edges = bm_edges;
	s->spurious = bm_spurious;
	s->unexpected = bm_unexpected;
	s->max_ticks = bm_max_ticks;
}

static void bm_print_counts(const struct bm_counts *s)
{
	/* The response line as the block reads it back (get_in() on the output line). */
	struct bm_gpio probe = bm_g;
	probe.in_line = bm_g.out_line;
	int out = bm_g.drv->get_in(&probe);
	bm_printf("irqloop-bm: edges=%lu spurious=%lu unexpected=%lu max_ns=%lu out=%d\n",
		  (unsigned long)s->edges, (unsigned long)s->spurious,
		  (unsigned long)s->unexpected, (unsigned long)bm_ns(s->max_ticks), out);
}

static int bm_counts_differ(const struct bm_counts *a, const struct bm_counts *b)
{
	return a->edges != b->edges || a->spurious != b->spurious ||
	       a->unexpected != b->unexpected;
}

/*
 * The print rule: a counters line once the counters changed and then stayed
 * still for quiet_ms, or BM_PRINT_PERIOD_MS after the first unprinted change
 * when they keep changing.
 */
static void bm_run(void)
{
	uint64_t freq = bm_sysreg_read(cntfrq_el0);
	uint64_t quiet = freq / 1000 * bm_cfg.quiet_ms, period = freq / 1000 * BM_PRINT_PERIOD_MS;
	struct bm_counts printed = {0, 0, 0, 0}, now_counts;
	uint64_t dirty_since = 0;
	unsigned spin = 0;
	for (;;) {
		if (bm_poll) {
			uint32_t pending = bm_g.drv->pending(&bm_g);
			if (pending) {
				uint64_t t0 = bm_ticks();
				bm_answer(pending);
				bm_note_time(t0);
				continue;
			}
			if (++spin & 0x3ff)
				continue;
		}
		bm_irq_disable();
		bm_snapshot(&now_counts);
		uint64_t last = bm_last_event, now = bm_ticks();
		int print = 0;
		if (bm_counts_differ(&now_counts, &printed)) {
			if (!dirty_since)
				dirty_since = now;
			uint64_t due = last + quiet < dirty_since + period ? last + quiet
									   : dirty_since + period;
			if (now >= due) {
				print = 1;
			} else if (!bm_poll) {
				bm_sysreg_write(cntv_cval_el0, due);
				bm_sysreg_write(cntv_ctl_el0, 1);
				bm_isb();
			}
		}
		if (!print && !bm_poll)
			bm_wfi(); /* wakes on a pending interrupt, taken below */
		bm_irq_enable();
		if (print) {
			bm_print_counts(&now_counts);
			printed = now_counts;
			dirty_since = 0;
		}
	}
}

/* ---- Start. ---- */

static void bm_defaults(struct bm_config *c)
{
	c->uart = BM_DEFAULT_UART;
	c->gic_version = BM_DEFAULT_GIC_VERSION;
	if (!c->gic_version)
		c->gic_version = (bm_sysreg_read(id_aa64pfr0_el1) >> 24 & 0xf) ? 3 : 2;
	c->gicd = BM_DEFAULT_GICD;
	c->gicc = BM_DEFAULT_GICC;
	c->gicr = BM_DEFAULT_GICR;
	c->drv = bm_gpio_find(BM_STR(BM_DEFAULT_GPIO));
	c->gpio_base = BM_DEFAULT_GPIO_BASE;
	c->intid = BM_DEFAULT_GPIO_INTID;
	c->edge = BM_DEFAULT_GPIO_EDGE;
	bm_copy(c->gpio_node, sizeof(c->gpio_node), "(build-time default)");
	c->uart_found = c->gic_found = 1;
}

void bm_main(uintptr_t dtb, unsigned start_el)
{
	const char *mmu = bm_mmu_on();
	struct bm_config *c = &bm_cfg;
	struct bm_fdt fdt;
	c->have_dt = !bm_fdt_init(&fdt, (const void *)dtb);
	c->quiet_ms = 50;
	c->in = BM_DEFAULT_IN;
	c->out = BM_DEFAULT_OUT;
	if (c->have_dt) {
		bm_fdt_walk(&fdt, bm_dt_chosen, c);
		bm_parse_bootargs(c, 0);
	}
	if (!c->have_dt || c->nodt) {
		bm_defaults(c);
	} else {
		bm_dt_read(&fdt, c);
		if (!c->uart_found)
			c->uart = 0; /* silent rather than a guess that may fault */
	}
	bm_console_init(c->uart);
	bm_printf("\nirqloop-bm: irqloop bare-metal responder at 0x%lx, started at EL%u%s, "
		  "device tree %s",
		  (unsigned long)(uintptr_t)_start, start_el, start_el == 2 ? " (dropped to EL1)" : "",
		  c->have_dt ? (c->nodt ? "ignored (nodt=1)" : "at 0x") : "absent");
	if (c->have_dt && !c->nodt)
		bm_printf("%lx", (unsigned long)dtb);
	bm_printf(", MMU %s%s\n", mmu ? "off: " : "on", mmu ? mmu : "");
	if (c->bootargs_len)
		bm_printf("irqloop-bm: bootargs: %s\n", c->bootargs);
	bm_parse_bootargs(c, 1);

	if (!c->gic_found) {
		bm_printf("irqloop-bm: error: no GIC in the device tree (arm,gic-v3, arm,gic-400, "
			  "arm,cortex-a15-gic): stopped\n");
		bm_stop();
	}
	if (!c->drv) {
		if (c->gpio_error) {
			bm_printf("irqloop-bm: error: GPIO node %s: %s: stopped\n", c->gpio_node,
				  c->gpio_error);
			bm_stop();
		}
		bm_printf("irqloop-bm: error: no GPIO node with a built-in driver's compatible (");
		for (unsigned i = 0; bm_gpio_drivers[i]; ++i)
			for (unsigned k = 0; bm_gpio_drivers[i]->compatible[k]; ++k)
				bm_printf("%s%s", i || k ? " " : "", bm_gpio_drivers[i]->compatible[k]);
		bm_printf(")");
		if (c->gpio_sel) {
			char sel[64];
			int n = c->gpio_sel_len < 63 ? c->gpio_sel_len : 63;
			for (int i = 0; i < n; ++i)
				sel[i] = c->gpio_sel[i];
			sel[n] = 0;
			bm_printf(" named by gpio=%s (a node name, full path or driver name)", sel);
		}
		bm_printf(": stopped\n");
		bm_stop();
	}
	if (c->have_intid) {
		c->intid = (unsigned)c->intid_arg;
		c->edge = 0;
	}
	bm_poll = c->poll != 0;

	bm_gic.ops = c->gic_version == 3 ? &bm_gic_v3_ops : &bm_gic_v2_ops;
	bm_gic.dist = c->gicd;
	bm_gic.cpu = c->gicc;
	bm_gic.redist = c->gicr;
	int err = bm_gic.ops->init(&bm_gic);
	if (err) {
		bm_printf("irqloop-bm: error: %s at 0x%lx: %s: stopped\n", bm_gic.ops->name,
			  (unsigned long)c->gicd,
			  err == -1 ? "no redistributor frame has this CPU's affinity"
				    : "EL1 has no access to the ICC system registers");
		bm_stop();
	}
	bm_g.drv = c->drv;
	bm_g.base = c->gpio_base;
	bm_g.in_line = (unsigned)c->in;
	bm_g.out_line = (unsigned)c->out;
	bm_g.intid = c->intid;
	if (c->in >= c->drv->lines || c->out >= c->drv->lines || c->in == c->out ||
	    c->drv->setup(&bm_g)) {
		bm_printf("irqloop-bm: error: %s: lines in=%lu out=%lu refused (two different lines "
			  "of one bank, below %u): stopped\n",
			  c->drv->name, (unsigned long)c->in, (unsigned long)c->out, c->drv->lines);
		bm_stop();
	}
	bm_in_level = c->drv->get_in(&bm_g);
	if (!bm_poll)
		bm_gic.ops->enable(&bm_gic, bm_g.intid, c->edge);
	bm_gic.ops->enable(&bm_gic, BM_TIMER_PPI, 0);
	if (c->sgi)
		bm_gic.ops->enable(&bm_gic, BM_SELFTEST_SGI, 1);

	bm_printf("irqloop-bm: start gic=%s gpio=%s node=%s base=0x%lx intid=%u (%s) in=%lu "
		  "out=%lu mode=%s quiet_ms=%lu\n",
		  bm_gic.ops->name, c->drv->name, c->gpio_node, (unsigned long)c->gpio_base,
		  c->intid, c->edge ? "edge" : "level", (unsigned long)c->in,
		  (unsigned long)c->out, bm_poll ? "poll" : "wfi", (unsigned long)c->quiet_ms);
	bm_irq_enable();
	if (c->sgi) {
		/* One at a time: an SGI sent while the last is pending would merge with it. */
		uint64_t freq = bm_sysreg_read(cntfrq_el0);
		for (uint64_t i = 0; i < c->sgi; ++i) {
			uint64_t before = bm_unexpected, t0 = bm_ticks();
			bm_gic.ops->sgi_self(&bm_gic, BM_SELFTEST_SGI);
			while (bm_unexpected == before && bm_ticks() - t0 < freq / 10)
				;
		}
		bm_printf("irqloop-bm: sent %lu SGIs (INTID %u) to this CPU\n", (unsigned long)c->sgi,
			  BM_SELFTEST_SGI);
	}
	bm_run();
}
