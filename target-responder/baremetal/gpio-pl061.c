// SPDX-License-Identifier: MIT
/*
 * ARM PrimeCell PL061 (QEMU virt, Juno): 8 lines, one block, one interrupt.
 * GPIODATA is address-masked: a write to base + (mask << 2) changes only
 * the lines in mask, so set_out() and get_in() touch their own line alone.
 */
#include "gpio.h"
#include "mmio.h"

#define PL061_DATA 0x000 /* + (mask << 2) */
#define PL061_DIR 0x400
#define PL061_IS 0x404  /* 1: level */
#define PL061_IBE 0x408 /* 1: both edges */
#define PL061_IEV 0x40c
#define PL061_IE 0x410
#define PL061_RIS 0x414
#define PL061_MIS 0x418
#define PL061_IC 0x41c
#define PL061_AFSEL 0x420
#define PL061_LINES 8

static void pl061_update(uintptr_t reg, uint32_t clear, uint32_t set)
{
	bm_write32(reg, (bm_read32(reg) & ~clear) | set);
}

static int pl061_setup(const struct bm_gpio *g)
{
	if (g->in_line >= PL061_LINES || g->out_line >= PL061_LINES || g->in_line == g->out_line)
		return BM_GPIO_EINVAL;
	uint32_t in = 1u << g->in_line, out = 1u << g->out_line;
	pl061_update(g->base + PL061_IE, in | out, 0);
	pl061_update(g->base + PL061_AFSEL, in | out, 0);
	bm_write32(g->base + PL061_DATA + (out << 2), 0);
	pl061_update(g->base + PL061_DIR, in, out);
	pl061_update(g->base + PL061_IS, in, 0);
	pl061_update(g->base + PL061_IBE, 0, in);
	bm_write32(g->base + PL061_IC, in);
	pl061_update(g->base + PL061_IE, 0, in);
	return 0;
}

static uint32_t pl061_pending(const struct bm_gpio *g)
{
	return bm_read32(g->base + PL061_MIS) & 0xff;
}

static void pl061_set_out(const struct bm_gpio *g, int level)
{
	uint32_t out = 1u << g->out_line;
	bm_write32(g->base + PL061_DATA + (out << 2), level ? out : 0);
}

static int pl061_get_in(const struct bm_gpio *g)
{
	uint32_t in = 1u << g->in_line;
	return (bm_read32(g->base + PL061_DATA + (in << 2)) & in) != 0;
}

static void pl061_ack(const struct bm_gpio *g, uint32_t mask)
{
	bm_write32(g->base + PL061_IC, mask);
}

static const char *const pl061_compatible[] = {"arm,pl061", 0};

const struct bm_gpio_driver bm_gpio_pl061 = {
	.name = "pl061",
	.compatible = pl061_compatible,
	.lines = PL061_LINES,
	.setup = pl061_setup,
	.pending = pl061_pending,
	.set_out = pl061_set_out,
	.get_in = pl061_get_in,
	.ack = pl061_ack,
};
