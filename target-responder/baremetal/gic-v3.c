// SPDX-License-Identifier: MIT
/*
 * GICv3 (QEMU's, Xen's vGICv3, GIC-500/600): distributor with affinity
 * routing, this CPU's redistributor frame, and the CPU interface through
 * the ICC system registers (start.S let EL1 use them when it came from EL2).
 * Every interrupt used is Group 1 (Non-secure), as Linux's driver has them.
 */
#include "bm.h"
#include "mmio.h"

#define GICD_CTLR 0x0000
#define GICD_CTLR_RWP (1u << 31)
#define GICD_TYPER 0x0004
#define GICD_IGROUPR 0x0080
#define GICD_ISENABLER 0x0100
#define GICD_ICENABLER 0x0180
#define GICD_IPRIORITYR 0x0400
#define GICD_ICFGR 0x0c00
#define GICD_IROUTER 0x6000
#define GICR_TYPER 0x0008
#define GICR_WAKER 0x0014
#define GICR_SGI 0x10000 /* the SGI_base frame */
#define GICR_IGROUPR0 0x0080
#define GICR_ISENABLER0 0x0100
#define GICR_ICENABLER0 0x0180
#define GICR_IPRIORITYR 0x0400
#define GICR_ICFGR1 0x0c04

#define ICC_SRE_EL1 S3_0_C12_C12_5
#define ICC_PMR_EL1 S3_0_C4_C6_0
#define ICC_BPR1_EL1 S3_0_C12_C12_3
#define ICC_IGRPEN1_EL1 S3_0_C12_C12_7
#define ICC_IAR1_EL1 S3_0_C12_C12_0
#define ICC_EOIR1_EL1 S3_0_C12_C12_1
#define ICC_SGI1R_EL1 S3_0_C12_C11_5

static void gicv3_wait_rwp(const struct bm_gic *gic)
{
	for (unsigned i = 0; i < 1000000 && (bm_read32(gic->dist + GICD_CTLR) & GICD_CTLR_RWP); ++i)
		;
}

static void gicv3_byte(uintptr_t reg, unsigned intid, uint32_t value)
{
	uintptr_t word = reg + (intid & ~3u);
	unsigned shift = (intid & 3) * 8;
	bm_write32(word, (bm_read32(word) & ~(0xffu << shift)) | value << shift);
}

/* MPIDR's affinity as GICR_TYPER and GICD_IROUTER hold it: Aff3.Aff2.Aff1.Aff0. */
static uint32_t gicv3_affinity(void)
{
	uint64_t mpidr = bm_sysreg_read(mpidr_el1);
	return (uint32_t)((mpidr >> 32 & 0xff) << 24 | (mpidr & 0xffffff));
}

static int gicv3_init(struct bm_gic *gic)
{
	unsigned lines = 32 * ((bm_read32(gic->dist + GICD_TYPER) & 0x1f) + 1);
	bm_write32(gic->dist + GICD_CTLR, 0);
	gicv3_wait_rwp(gic);
	/* Disabled only: older Xen vGICs answered a write to ICPENDR with a data abort. */
	for (unsigned i = 32; i < lines; i += 32)
		bm_write32(gic->dist + GICD_ICENABLER + i / 8, 0xffffffffu);
	gicv3_wait_rwp(gic);
	/* ARE (ARE_NS), then Group 1 on: bit 1 (and bit 0, Group 0 or Group 1 NS by view). */
	bm_write32(gic->dist + GICD_CTLR, 1u << 4);
	gicv3_wait_rwp(gic);
	bm_write32(gic->dist + GICD_CTLR, 1u << 4 | 1u << 1 | 1u << 0);
	gicv3_wait_rwp(gic);

	/* This CPU's redistributor: the frame whose affinity matches, up to the Last one. */
	uint32_t aff = gicv3_affinity();
	gic->rd = 0;
	for (uintptr_t rd = gic->redist;; ) {
		uint32_t typer_lo = bm_read32(rd + GICR_TYPER), typer_hi = bm_read32(rd + GICR_TYPER + 4);
		if (typer_hi == aff) {
			gic->rd = rd;
			break;
		}
		if (typer_lo & (1u << 4))
			break; /* Last */
		rd += (typer_lo & (1u << 1)) ? 0x40000 : 0x20000; /* VLPIS: two more frames */
	}
	if (!gic->rd)
		return -1;
	uint32_t waker = bm_read32(gic->rd + GICR_WAKER);
	bm_write32(gic->rd + GICR_WAKER, waker & ~(1u << 1)); /* ProcessorSleep off */
	for (unsigned i = 0; i < 1000000 && (bm_read32(gic->rd + GICR_WAKER) & (1u << 2)); ++i)
		;
	bm_write32(gic->rd + GICR_SGI + GICR_ICENABLER0, 0xffffffffu);

	bm_sysreg_write(ICC_SRE_EL1, bm_sysreg_read(ICC_SRE_EL1) | 1);
	bm_isb();
	if (!(bm_sysreg_read(ICC_SRE_EL1) & 1))
		return -2; /* no system-register access: EL2 did not enable it */
	bm_sysreg_write(ICC_PMR_EL1, 0xff);
	bm_sysreg_write(ICC_BPR1_EL1, 0);
	bm_sysreg_write(ICC_IGRPEN1_EL1, 1);
	bm_isb();
	return 0;
}

static void gicv3_enable(const struct bm_gic *gic, unsigned intid, int edge)
{
	if (intid < 32) {
		uintptr_t sgi = gic->rd + GICR_SGI;
		bm_write32(sgi + GICR_IGROUPR0, bm_read32(sgi + GICR_IGROUPR0) | 1u << intid);
		gicv3_byte(sgi + GICR_IPRIORITYR, intid, 0xa0);
		if (intid >= 16) {
			uint32_t bit = 2u << ((intid - 16) * 2);
			uint32_t cfg = bm_read32(sgi + GICR_ICFGR1);
			bm_write32(sgi + GICR_ICFGR1, (cfg & ~bit) | (edge ? bit : 0));
		}
		bm_write32(sgi + GICR_ISENABLER0, 1u << intid);
		return;
	}
	uintptr_t d = gic->dist;
	uintptr_t grp = d + GICD_IGROUPR + intid / 32 * 4;
	bm_write32(grp, bm_read32(grp) | 1u << (intid % 32));
	gicv3_byte(d + GICD_IPRIORITYR, intid, 0xa0);
	uintptr_t cfg = d + GICD_ICFGR + intid / 16 * 4;
	uint32_t bit = 2u << (intid % 16 * 2);
	bm_write32(cfg, (bm_read32(cfg) & ~bit) | (edge ? bit : 0));
	uint32_t aff = gicv3_affinity();
	/* IROUTER: Aff2.Aff1.Aff0 in the low word, Aff3 in the high one; Interrupt_Routing_Mode 0. */
	bm_write32(d + GICD_IROUTER + intid * 8, aff & 0xffffff);
	bm_write32(d + GICD_IROUTER + intid * 8 + 4, aff >> 24);
	bm_write32(d + GICD_ISENABLER + intid / 32 * 4, 1u << (intid % 32));
	gicv3_wait_rwp(gic);
}

static uint32_t gicv3_ack(const struct bm_gic *gic)
{
	(void)gic;
	uint32_t iar = (uint32_t)bm_sysreg_read(ICC_IAR1_EL1);
	__asm__ volatile("dsb sy" : : : "memory");
	return iar;
}

static void gicv3_eoi(const struct bm_gic *gic, uint32_t iar)
{
	(void)gic;
	bm_sysreg_write(ICC_EOIR1_EL1, iar);
	bm_isb();
}

static void gicv3_sgi_self(const struct bm_gic *gic, unsigned intid)
{
	(void)gic;
	uint64_t mpidr = bm_sysreg_read(mpidr_el1);
	uint64_t aff0 = mpidr & 0xff, aff1 = mpidr >> 8 & 0xff, aff2 = mpidr >> 16 & 0xff,
		 aff3 = mpidr >> 32 & 0xff;
	uint64_t v = aff3 << 48 | (aff0 >> 4) << 44 | aff2 << 32 | (uint64_t)(intid & 0xf) << 24 |
		     aff1 << 16 | 1u << (aff0 & 0xf);
	bm_sysreg_write(ICC_SGI1R_EL1, v);
	bm_isb();
}

const struct bm_gic_ops bm_gic_v3_ops = {
	.name = "GICv3",
	.init = gicv3_init,
	.enable = gicv3_enable,
	.ack = gicv3_ack,
	.eoi = gicv3_eoi,
	.sgi_self = gicv3_sgi_self,
};
