/* SPDX-License-Identifier: MIT */
/*
 * Register access for the bare-metal responder.
 *
 * On the target, bm_read32()/bm_write32() are single 32-bit device accesses
 * (ldr/str to Device-nGnRE memory; no barrier is implied beyond the one the
 * caller asks for with bm_wmb()). In a host build (BM_HOST defined: the
 * register-level tests in tests/hw), the same calls go to a register
 * simulator through bm_host_read32()/bm_host_write32(), which the test links
 * in. The drivers are compiled unchanged for both: the test runs the code
 * that runs on the board.
 */
#ifndef IRQLOOP_BM_MMIO_H
#define IRQLOOP_BM_MMIO_H

#include <stdint.h>

#ifdef BM_HOST
#ifdef __cplusplus
extern "C" {
#endif
uint32_t bm_host_read32(uintptr_t addr);
void bm_host_write32(uintptr_t addr, uint32_t value);
#ifdef __cplusplus
}
#endif
static inline uint32_t bm_read32(uintptr_t addr) { return bm_host_read32(addr); }
static inline void bm_write32(uintptr_t addr, uint32_t value) { bm_host_write32(addr, value); }
static inline void bm_wmb(void) {}
#else
static inline uint32_t bm_read32(uintptr_t addr)
{
	uint32_t v;
	__asm__ volatile("ldr %w0, [%1]" : "=r"(v) : "r"(addr) : "memory");
	return v;
}
static inline void bm_write32(uintptr_t addr, uint32_t value)
{
	__asm__ volatile("str %w0, [%1]" : : "rZ"(value), "r"(addr) : "memory");
}
/* Order earlier device writes before later ones reach the interconnect. */
static inline void bm_wmb(void) { __asm__ volatile("dsb st" : : : "memory"); }
#endif

#endif
