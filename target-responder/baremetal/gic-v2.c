// SPDX-License-Identifier: MIT
/*
 * GICv2 (GIC-400, Cortex-A15 GIC, Xen's vGICv2): distributor and memory-
 * mapped CPU interface. Group 0 without security extensions, Group 1 from
 * the Non-secure side of a board with them: enable bit 0 is the right one
 * in both views, as Linux's driver writes it.
 */
#include "bm.h"
#include "mmio.h"

#define GICD_CTLR 0x000
#define GICD_TYPER 0x004
#define GICD_ISENABLER 0x100
#define GICD_ICENABLER 0x180
#define GICD_IPRIORITYR 0x400
#define GICD_ITARGETSR 0x800
#define GICD_ICFGR 0xc00
#define GICD_SGIR 0xf00
#define GICC_CTLR 0x00
#define GICC_PMR 0x04
#define GICC_BPR 0x08
#define GICC_IAR 0x0c
#define GICC_EOIR 0x10

static void gicv2_byte(uintptr_t reg, unsigned intid, uint32_t value)
{
	uintptr_t word = reg + (intid & ~3u);
	unsigned shift = (intid & 3) * 8;
	bm_write32(word, (bm_read32(word) & ~(0xffu << shift)) | value << shift);
}

static int gicv2_init(struct bm_gic *gic)
{
	unsigned lines = 32 * ((bm_read32(gic->dist + GICD_TYPER) & 0x1f) + 1);
	bm_write32(gic->dist + GICD_CTLR, 0);
	/* Disabled only: older Xen vGICs answered a write to ICPENDR with a data abort. */
	for (unsigned i = 0; i < lines; i += 32)
		bm_write32(gic->dist + GICD_ICENABLER + i / 8, 0xffffffffu);
	bm_write32(gic->dist + GICD_CTLR, 1);
	bm_write32(gic->cpu + GICC_PMR, 0xff);
	bm_write32(gic->cpu + GICC_BPR, 0);
	bm_write32(gic->cpu + GICC_CTLR, 1);
	return 0;
}

static void gicv2_enable(const struct bm_gic *gic, unsigned intid, int edge)
{
	gicv2_byte(gic->dist + GICD_IPRIORITYR, intid, 0xa0);
	if (intid >= 32) {
		/* ITARGETSR0-7 read as this CPU's own mask. */
		uint32_t self = bm_read32(gic->dist + GICD_ITARGETSR) & 0xff;
		gicv2_byte(gic->dist + GICD_ITARGETSR, intid, self);
		uintptr_t cfg = gic->dist + GICD_ICFGR + intid / 16 * 4;
		uint32_t bit = 2u << (intid % 16 * 2);
		bm_write32(cfg, (bm_read32(cfg) & ~bit) | (edge ? bit : 0));
	}
	bm_write32(gic->dist + GICD_ISENABLER + intid / 32 * 4, 1u << (intid % 32));
}

static uint32_t gicv2_ack(const struct bm_gic *gic) { return bm_read32(gic->cpu + GICC_IAR); }

static void gicv2_eoi(const struct bm_gic *gic, uint32_t iar)
{
	bm_write32(gic->cpu + GICC_EOIR, iar);
}

static void gicv2_sgi_self(const struct bm_gic *gic, unsigned intid)
{
	bm_write32(gic->dist + GICD_SGIR, 2u << 24 | (intid & 0xf)); /* filter 2: this CPU */
}

const struct bm_gic_ops bm_gic_v2_ops = {
	.name = "GICv2",
	.init = gicv2_init,
	.enable = gicv2_enable,
	.ack = gicv2_ack,
	.eoi = gicv2_eoi,
	.sgi_self = gicv2_sgi_self,
};
