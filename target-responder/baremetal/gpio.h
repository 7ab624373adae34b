/* SPDX-License-Identifier: MIT */
/*
 * The bare-metal responder's GPIO driver contract (one small file per block,
 * listed in gpio-drivers.c).
 *
 * A driver knows one GPIO block's registers and nothing else: not the GIC,
 * not the console, not the device tree. The core (main.c) finds the block and
 * its lines (device tree, else build-time defaults), calls setup() once with
 * interrupts masked, and from the interrupt handler calls, in this order:
 *
 *     pending()  which of the bank's lines have an interrupt latched
 *     set_out()  the answer, first thing, when the stimulus line is among them
 *     get_in()   the stimulus line's level now (the spurious check)
 *     ack()      clear exactly the lines pending() returned
 *
 * and then EOIs at the GIC. Answer first, acknowledge after: the answer's
 * latency must not include the block's acknowledge or the GIC's EOI (the
 * kernel module does the same).
 *
 * Rules, so that the register-level tests can hold every driver to them:
 *  - setup() touches only the two lines' bits (read-modify-write of shared
 *    registers); other lines of the bank keep their configuration. It leaves
 *    the output low and no stale interrupt latched for the stimulus line.
 *  - The hot calls (pending, set_out, get_in, ack) do not loop, do not wait
 *    and do not fail. set_out() of a block with set/clear registers writes
 *    only the one line's bit.
 *  - A driver with several banks is given its bank's base and the line
 *    number within that bank; lines on two different banks are refused by
 *    setup() (return BM_GPIO_EINVAL). Where a block holds several banks
 *    behind one base (BCM2711, ZynqMP), the lines are numbered as the block's
 *    device-tree node numbers them (0..lines-1) and the driver finds the bank.
 *  - The masks of pending() and ack() hold line L at bit L % 32 (bm_gpio_bit):
 *    a bank has at most 32 lines, so the bits of one bank never collide.
 *  - All register access goes through mmio.h, so a host build runs the same
 *    code against a simulator.
 */
#ifndef IRQLOOP_BM_GPIO_H
#define IRQLOOP_BM_GPIO_H

#include <stdint.h>

#define BM_GPIO_EINVAL (-22) /* a line out of range, or lines on different banks */

struct bm_gpio_driver;

/* One GPIO block as the responder uses it. */
struct bm_gpio {
	const struct bm_gpio_driver *drv;
	uintptr_t base;    /* the block's (or bank's) registers */
	unsigned in_line;  /* stimulus: an input interrupting on both edges */
	unsigned out_line; /* response: an output the handler toggles */
	unsigned intid;    /* the block's interrupt at the GIC (SPI n is INTID 32 + n) */
};

struct bm_gpio_driver {
	const char *name;                /* "pl061", "bcm2711", "rcar-gen3", "zynqmp" */
	const char *const *compatible;   /* device-tree compatibles, NULL-terminated */
	unsigned lines;                  /* line numbers run 0..lines-1 */
	int (*setup)(const struct bm_gpio *g);
	uint32_t (*pending)(const struct bm_gpio *g);
	void (*set_out)(const struct bm_gpio *g, int level);
	int (*get_in)(const struct bm_gpio *g);
	void (*ack)(const struct bm_gpio *g, uint32_t mask);
};

/* Line @line's bit in the masks of pending() and ack(). */
static inline uint32_t bm_gpio_bit(unsigned line)
{
	return (uint32_t)1 << (line % 32);
}

/* Every driver built in, NULL-terminated (gpio-drivers.c). */
extern const struct bm_gpio_driver *const bm_gpio_drivers[];

/* The driver whose name or one of whose compatibles is @key, or NULL. */
const struct bm_gpio_driver *bm_gpio_find(const char *key);

#endif
