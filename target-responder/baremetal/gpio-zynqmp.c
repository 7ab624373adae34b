// SPDX-License-Identifier: MIT
/*
 * ZynqMP PS GPIO (Cadence/Xilinx): one block, six banks behind one base.
 * Banks 0..2 carry the MIO pins, 26 lines each (GPIO 0..25, 26..51,
 * 52..77); banks 3..5 the EMIO signals to the fabric, 32 each (78..109,
 * 110..141, 142..173). The core gives the block's base and the node's line
 * numbers; both lines must be on one bank.
 *
 * Per bank n: MASK_DATA_LSW/MSW (0x000 + 8n, +4) set lines 0..15 / 16..31
 * of the bank in one write (upper half: a 0 selects the bit written, lower
 * half: its level); DATA (0x040 + 4n) the output latches; DATA_RO
 * (0x060 + 4n) the pin levels; at 0x204 + 0x40n, DIRM (1 output), OEN (+4, 1
 * driven), INT_MASK (+8, read only, 1 masked), INT_EN (+0xc, write 1 to
 * unmask), INT_DIS (+0x10, write 1 to mask), INT_STAT (+0x14, latched
 * whether masked or not, write 1 to clear), INT_TYPE (+0x18, 1 edge),
 * INT_POLARITY (+0x1c, 1 rising) and INT_ANY (+0x20, 1 both edges).
 *
 * The input level is read from DATA_RO on the MIO banks and from DATA on the
 * EMIO banks, as Linux's gpio-zynq does for the ZynqMP (its DATA_RO quirk).
 */
#include "gpio.h"
#include "mmio.h"

#define ZYNQMP_MASK_DATA_LSW(b) (0x000u + 8u * (b))
#define ZYNQMP_MASK_DATA_MSW(b) (0x004u + 8u * (b))
#define ZYNQMP_DATA(b) (0x040u + 4u * (b))
#define ZYNQMP_DATA_RO(b) (0x060u + 4u * (b))
#define ZYNQMP_DIRM(b) (0x204u + 0x40u * (b))
#define ZYNQMP_OEN(b) (0x208u + 0x40u * (b))
#define ZYNQMP_INT_MASK(b) (0x20cu + 0x40u * (b))
#define ZYNQMP_INT_EN(b) (0x210u + 0x40u * (b))
#define ZYNQMP_INT_DIS(b) (0x214u + 0x40u * (b))
#define ZYNQMP_INT_STAT(b) (0x218u + 0x40u * (b))
#define ZYNQMP_INT_TYPE(b) (0x21cu + 0x40u * (b))
#define ZYNQMP_INT_POLARITY(b) (0x220u + 0x40u * (b))
#define ZYNQMP_INT_ANY(b) (0x224u + 0x40u * (b))
#define ZYNQMP_BANKS 6
#define ZYNQMP_LINES 174

/* The first line of each bank, and one past the last. */
static const unsigned zynqmp_first[ZYNQMP_BANKS + 1] = {0, 26, 52, 78, 110, 142, 174};

/* No loop: the hot calls call it. */
static unsigned zynqmp_bank(unsigned line)
{
	return line < 78 ? line / 26 : 3 + (line - 78) / 32;
}

/* The bits of bank @b's lines (26 or 32). */
static uint32_t zynqmp_lines_of(unsigned b)
{
	unsigned n = zynqmp_first[b + 1] - zynqmp_first[b];

	return n >= 32 ? 0xffffffffu : ((uint32_t)1 << n) - 1;
}

/*
 * A bank's register bits (bit i: the bank's line i) and the masks of
 * pending() and ack() (line L at bit L % 32) differ by a rotation.
 */
static uint32_t zynqmp_rotl(uint32_t v, unsigned n)
{
	n %= 32;
	return n ? (v << n) | (v >> (32 - n)) : v;
}

static void zynqmp_modify(uintptr_t addr, uint32_t clear, uint32_t set)
{
	bm_write32(addr, (bm_read32(addr) & ~clear) | set);
}

/* One write: the line's mask bit selects it, the others keep their levels. */
static void zynqmp_write_line(const struct bm_gpio *g, unsigned line, int level)
{
	unsigned b = zynqmp_bank(line), i = line - zynqmp_first[b];
	uintptr_t reg = g->base + (i < 16 ? ZYNQMP_MASK_DATA_LSW(b) : ZYNQMP_MASK_DATA_MSW(b));
	uint32_t bit = (uint32_t)1 << (i % 16);

	bm_write32(reg, (~bit << 16) | (level ? bit : 0));
}

static int zynqmp_setup(const struct bm_gpio *g)
{
	unsigned in = g->in_line, out = g->out_line, b;
	uint32_t ib, ob;

	if (in >= ZYNQMP_LINES || out >= ZYNQMP_LINES || in == out)
		return BM_GPIO_EINVAL;
	b = zynqmp_bank(in);
	if (zynqmp_bank(out) != b)
		return BM_GPIO_EINVAL;
	ib = (uint32_t)1 << (in - zynqmp_first[b]);
	ob = (uint32_t)1 << (out - zynqmp_first[b]);
	/* The response: never interrupting, latched low, then driven. */
	bm_write32(g->base + ZYNQMP_INT_DIS(b), ob);
	zynqmp_write_line(g, out, 0);
	zynqmp_modify(g->base + ZYNQMP_DIRM(b), 0, ob);
	zynqmp_modify(g->base + ZYNQMP_OEN(b), 0, ob);
	/* The stimulus: masked while set up, an input on both edges, cleared, unmasked. */
	bm_write32(g->base + ZYNQMP_INT_DIS(b), ib);
	zynqmp_modify(g->base + ZYNQMP_DIRM(b), ib, 0);
	zynqmp_modify(g->base + ZYNQMP_INT_TYPE(b), 0, ib);
	zynqmp_modify(g->base + ZYNQMP_INT_ANY(b), 0, ib);
	bm_write32(g->base + ZYNQMP_INT_STAT(b), ib);
	bm_write32(g->base + ZYNQMP_INT_EN(b), ib);
	return 0;
}

static uint32_t zynqmp_pending(const struct bm_gpio *g)
{
	unsigned b = zynqmp_bank(g->in_line);
	uint32_t hw = bm_read32(g->base + ZYNQMP_INT_STAT(b)) &
		      ~bm_read32(g->base + ZYNQMP_INT_MASK(b)) & zynqmp_lines_of(b);

	return zynqmp_rotl(hw, zynqmp_first[b]);
}

static void zynqmp_set_out(const struct bm_gpio *g, int level)
{
	zynqmp_write_line(g, g->out_line, level);
}

static int zynqmp_get_in(const struct bm_gpio *g)
{
	unsigned b = zynqmp_bank(g->in_line);
	unsigned reg = b <= 2 ? ZYNQMP_DATA_RO(b) : ZYNQMP_DATA(b);

	return (bm_read32(g->base + reg) >> (g->in_line - zynqmp_first[b])) & 1;
}

static void zynqmp_ack(const struct bm_gpio *g, uint32_t mask)
{
	unsigned b = zynqmp_bank(g->in_line);

	bm_write32(g->base + ZYNQMP_INT_STAT(b),
		   zynqmp_rotl(mask, 32 - zynqmp_first[b] % 32) & zynqmp_lines_of(b));
}

static const char *const zynqmp_compatible[] = {"xlnx,zynqmp-gpio-1.0", 0};

const struct bm_gpio_driver bm_gpio_zynqmp = {
	.name = "zynqmp",
	.compatible = zynqmp_compatible,
	.lines = ZYNQMP_LINES,
	.setup = zynqmp_setup,
	.pending = zynqmp_pending,
	.set_out = zynqmp_set_out,
	.get_in = zynqmp_get_in,
	.ack = zynqmp_ack,
};
