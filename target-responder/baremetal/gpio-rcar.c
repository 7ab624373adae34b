// SPDX-License-Identifier: MIT
/*
 * R-Car GPIO (Gen3: the Salvator boards' H3 and M3; Gen4 and V3U): one
 * block per bank of up to 32 lines, each with its own base and interrupt, so
 * the core gives the bank's base and lines 0..31 within it.
 *
 * A line is in general I/O mode (IOINTSEL 0; INOUTSEL 1 output, driven from
 * OUTDT while OUTDTSEL is 0) or in interrupt mode (IOINTSEL 1; EDGLEVEL 1 edge,
 * BOTHEDGE 1 both edges, POSNEG 0 positive logic). INTDT shows the latched
 * interrupts whether masked or not; INTCLR clears them (write 1); INTMSK reads
 * 1 for an unmasked line, a 0 written to it masks that line and a 1 changes
 * nothing; MSKCLR unmasks (write 1). INDT reads the input levels.
 *
 * Gen4 (and V3U, its first member) adds INEN: a line's input buffer is off
 * until its bit is set, and an input or interrupt line whose bit is clear
 * reads 0 and never interrupts. Gen3 has no INEN (0x50 is not a register
 * there; its INDT reads outputs too), hence two driver entries sharing all
 * but setup(). Both lines get their buffer on: the stimulus to interrupt, the
 * response so that get_in() on it reads the answer back, as the core does for
 * its counters line.
 *
 * OUTDT has no set or clear register, so set_out() is one read and one write
 * of OUTDT (the other lines' bits written back as read): the handler runs
 * with interrupts masked on one CPU, and setup() is the only other writer.
 */
#include "gpio.h"
#include "mmio.h"

#define RCAR_IOINTSEL 0x00
#define RCAR_INOUTSEL 0x04
#define RCAR_OUTDT 0x08
#define RCAR_INDT 0x0c
#define RCAR_INTDT 0x10
#define RCAR_INTCLR 0x14
#define RCAR_INTMSK 0x18
#define RCAR_MSKCLR 0x1c
#define RCAR_POSNEG 0x20
#define RCAR_EDGLEVEL 0x24
#define RCAR_OUTDTSEL 0x40
#define RCAR_BOTHEDGE 0x4c
#define RCAR_INEN 0x50
#define RCAR_LINES 32

static void rcar_modify(const struct bm_gpio *g, unsigned reg, uint32_t clear, uint32_t set)
{
	bm_write32(g->base + reg, (bm_read32(g->base + reg) & ~clear) | set);
}

/* The manual's sequences for general output mode and edge interrupt mode. */
static int rcar_setup_lines(const struct bm_gpio *g, int has_inen)
{
	unsigned in = g->in_line, out = g->out_line;
	uint32_t ib = bm_gpio_bit(in), ob = bm_gpio_bit(out);

	if (in >= RCAR_LINES || out >= RCAR_LINES || in == out)
		return BM_GPIO_EINVAL;
	/* The response: masked, low, then an output driven from OUTDT. */
	bm_write32(g->base + RCAR_INTMSK, ~ob);
	rcar_modify(g, RCAR_OUTDT, ob, 0);
	rcar_modify(g, RCAR_POSNEG, ob, 0);
	if (has_inen) /* on, unlike Linux: the core reads the answer back (get_in) */
		rcar_modify(g, RCAR_INEN, 0, ob);
	rcar_modify(g, RCAR_IOINTSEL, ob, 0);
	rcar_modify(g, RCAR_INOUTSEL, 0, ob);
	rcar_modify(g, RCAR_OUTDTSEL, ob, 0);
	/* The stimulus: masked while it is set up, both edges, cleared, unmasked. */
	bm_write32(g->base + RCAR_INTMSK, ~ib);
	rcar_modify(g, RCAR_INOUTSEL, ib, 0);
	rcar_modify(g, RCAR_POSNEG, ib, 0);
	rcar_modify(g, RCAR_EDGLEVEL, 0, ib);
	rcar_modify(g, RCAR_BOTHEDGE, 0, ib);
	if (has_inen)
		rcar_modify(g, RCAR_INEN, 0, ib);
	rcar_modify(g, RCAR_IOINTSEL, 0, ib);
	bm_write32(g->base + RCAR_INTCLR, ib);
	bm_write32(g->base + RCAR_MSKCLR, ib);
	return 0;
}

static int rcar_gen3_setup(const struct bm_gpio *g)
{
	return rcar_setup_lines(g, 0);
}

static int rcar_gen4_setup(const struct bm_gpio *g)
{
	return rcar_setup_lines(g, 1);
}

static uint32_t rcar_pending(const struct bm_gpio *g)
{
	return bm_read32(g->base + RCAR_INTDT) & bm_read32(g->base + RCAR_INTMSK);
}

static void rcar_set_out(const struct bm_gpio *g, int level)
{
	uint32_t ob = bm_gpio_bit(g->out_line);

	rcar_modify(g, RCAR_OUTDT, ob, level ? ob : 0);
}

static int rcar_get_in(const struct bm_gpio *g)
{
	return (bm_read32(g->base + RCAR_INDT) >> g->in_line) & 1;
}

static void rcar_ack(const struct bm_gpio *g, uint32_t mask)
{
	bm_write32(g->base + RCAR_INTCLR, mask);
}

static const char *const rcar_gen3_compatible[] = {
	"renesas,rcar-gen3-gpio",
	"renesas,gpio-r8a7795",	 /* H3 */
	"renesas,gpio-r8a7796",	 /* M3-W */
	"renesas,gpio-r8a77961", /* M3-W+ */
	"renesas,gpio-r8a77965", /* M3-N */
	"renesas,gpio-r8a77970", /* V3M */
	"renesas,gpio-r8a77980", /* V3H */
	"renesas,gpio-r8a77990", /* E3 */
	"renesas,gpio-r8a77995", /* D3 */
	"renesas,gpio-r8a774a1", /* RZ/G2M */
	"renesas,gpio-r8a774b1", /* RZ/G2N */
	"renesas,gpio-r8a774c0", /* RZ/G2E */
	"renesas,gpio-r8a774e1", /* RZ/G2H */
	0,
};

static const char *const rcar_gen4_compatible[] = {
	"renesas,rcar-gen4-gpio",
	"renesas,gpio-r8a779a0", /* V3U: INEN, no family compatible of its own */
	0,
};

const struct bm_gpio_driver bm_gpio_rcar_gen3 = {
	.name = "rcar-gen3",
	.compatible = rcar_gen3_compatible,
	.lines = RCAR_LINES,
	.setup = rcar_gen3_setup,
	.pending = rcar_pending,
	.set_out = rcar_set_out,
	.get_in = rcar_get_in,
	.ack = rcar_ack,
};

const struct bm_gpio_driver bm_gpio_rcar_gen4 = {
	.name = "rcar-gen4",
	.compatible = rcar_gen4_compatible,
	.lines = RCAR_LINES,
	.setup = rcar_gen4_setup,
	.pending = rcar_pending,
	.set_out = rcar_set_out,
	.get_in = rcar_get_in,
	.ack = rcar_ack,
};
