// SPDX-License-Identifier: MIT
/*
 * BCM2711 GPIO (Raspberry Pi 4): one block of 58 lines (GPIO 0..57) whose
 * per-line registers come in two 32-bit banks, lines 0..31 and 32..57
 * (GPSETn, GPCLRn, GPLEVn, GPEDSn and the detect enables, n = line / 32);
 * GPFSEL0..5 hold 10 lines each, 3 bits a line (000 input, 001 output).
 *
 * Edge detection: the synchronous GPREN/GPFEN, as Linux's pinctrl-bcm2835
 * uses for an edge interrupt. They sample the pad on the system clock and
 * latch an edge into GPEDS after a stable 0-1-1 (1-0-0) pattern, which keeps
 * a glitch on a long wire from answering twice; their cost is a few cycles
 * of that clock, nanoseconds, well below what the logger resolves. The
 * asynchronous GPAREN/GPAFEN (no sampling, catch even very short pulses) and
 * the level detects GPHEN/GPLEN are switched off for both lines, so each edge
 * latches once and from one source, and the same edges are seen as by the
 * kernel responder on the same board.
 *
 * The block raises three interrupts by line: GPIO 0..27, 28..45 and 46..57
 * (the first, second and third of the node's interrupts); the stimulus line
 * decides which one the core must enable.
 */
#include "gpio.h"
#include "mmio.h"

#define BCM2711_GPFSEL0 0x00
#define BCM2711_GPSET0 0x1c
#define BCM2711_GPCLR0 0x28
#define BCM2711_GPLEV0 0x34
#define BCM2711_GPEDS0 0x40
#define BCM2711_GPREN0 0x4c
#define BCM2711_GPFEN0 0x58
#define BCM2711_GPHEN0 0x64
#define BCM2711_GPLEN0 0x70
#define BCM2711_GPAREN0 0x7c
#define BCM2711_GPAFEN0 0x88
#define BCM2711_LINES 58
#define BCM2711_FSEL_IN 0u
#define BCM2711_FSEL_OUT 1u

/* Register @reg0's word for @line (the bank's). */
static uintptr_t bcm2711_reg(const struct bm_gpio *g, unsigned reg0, unsigned line)
{
	return g->base + reg0 + 4 * (line / 32);
}

static void bcm2711_modify(uintptr_t addr, uint32_t clear, uint32_t set)
{
	bm_write32(addr, (bm_read32(addr) & ~clear) | set);
}

static void bcm2711_fsel(const struct bm_gpio *g, unsigned line, uint32_t fsel)
{
	unsigned shift = (line % 10) * 3;

	bcm2711_modify(g->base + BCM2711_GPFSEL0 + 4 * (line / 10), 7u << shift,
		       fsel << shift);
}

/* No detect of any kind on @line, and no event of it left latched. */
static void bcm2711_detect_off(const struct bm_gpio *g, unsigned line)
{
	static const unsigned enables[] = {BCM2711_GPREN0, BCM2711_GPFEN0, BCM2711_GPHEN0,
					   BCM2711_GPLEN0, BCM2711_GPAREN0, BCM2711_GPAFEN0};
	uint32_t bit = bm_gpio_bit(line);

	for (unsigned i = 0; i < sizeof(enables) / sizeof(enables[0]); ++i)
		bcm2711_modify(bcm2711_reg(g, enables[i], line), bit, 0);
	bm_write32(bcm2711_reg(g, BCM2711_GPEDS0, line), bit); /* write 1 to clear */
}

static int bcm2711_setup(const struct bm_gpio *g)
{
	unsigned in = g->in_line, out = g->out_line;
	uint32_t in_bit = bm_gpio_bit(in);

	if (in >= BCM2711_LINES || out >= BCM2711_LINES || in == out || in / 32 != out / 32)
		return BM_GPIO_EINVAL;
	/* The response: latch low before it becomes an output, never a glitch high. */
	bcm2711_detect_off(g, out);
	bm_write32(bcm2711_reg(g, BCM2711_GPCLR0, out), bm_gpio_bit(out));
	bcm2711_fsel(g, out, BCM2711_FSEL_OUT);
	/* The stimulus: an input, a stale event cleared, then both edges armed. */
	bcm2711_fsel(g, in, BCM2711_FSEL_IN);
	bcm2711_detect_off(g, in);
	bcm2711_modify(bcm2711_reg(g, BCM2711_GPREN0, in), 0, in_bit);
	bcm2711_modify(bcm2711_reg(g, BCM2711_GPFEN0, in), 0, in_bit);
	return 0;
}

static uint32_t bcm2711_pending(const struct bm_gpio *g)
{
	return bm_read32(bcm2711_reg(g, BCM2711_GPEDS0, g->in_line));
}

static void bcm2711_set_out(const struct bm_gpio *g, int level)
{
	unsigned reg = level ? BCM2711_GPSET0 : BCM2711_GPCLR0;

	bm_write32(bcm2711_reg(g, reg, g->out_line), bm_gpio_bit(g->out_line));
}

static int bcm2711_get_in(const struct bm_gpio *g)
{
	return (bm_read32(bcm2711_reg(g, BCM2711_GPLEV0, g->in_line)) >> (g->in_line % 32)) & 1;
}

static void bcm2711_ack(const struct bm_gpio *g, uint32_t mask)
{
	bm_write32(bcm2711_reg(g, BCM2711_GPEDS0, g->in_line), mask);
}

static const char *const bcm2711_compatible[] = {"brcm,bcm2711-gpio", 0};

const struct bm_gpio_driver bm_gpio_bcm2711 = {
	.name = "bcm2711",
	.compatible = bcm2711_compatible,
	.lines = BCM2711_LINES,
	.setup = bcm2711_setup,
	.pending = bcm2711_pending,
	.set_out = bcm2711_set_out,
	.get_in = bcm2711_get_in,
	.ack = bcm2711_ack,
};
