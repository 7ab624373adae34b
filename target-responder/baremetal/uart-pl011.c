// SPDX-License-Identifier: MIT
/*
 * PL011 (and SBSA UART, its subset, as Xen's vpl011) polled output: only
 * the data and flag registers, so the firmware's or the hypervisor's line
 * settings stand.
 */
#include "bm.h"
#include "mmio.h"

#define PL011_DR 0x00
#define PL011_FR 0x18
#define PL011_FR_TXFF (1u << 5)

static uintptr_t bm_pl011_base;

void bm_console_init(uintptr_t pl011_base) { bm_pl011_base = pl011_base; }

void bm_putc(char c)
{
	if (!bm_pl011_base)
		return;
	while (bm_read32(bm_pl011_base + PL011_FR) & PL011_FR_TXFF)
		;
	bm_write32(bm_pl011_base + PL011_DR, (unsigned char)c);
}
