/* SPDX-License-Identifier: GPL-2.0 */
/*
 * irqloop_compat.h: every kernel-version difference met by the irqloop kernel
 * modules (irqloop_responder.ko and the testbed's irqloop-wire.ko), in one
 * place. Checked against Debian's 6.1, 6.12 (bookworm-backports) and the
 * newest headers of Debian's archive (tests/testbed/kbuild-check.sh).
 */
#ifndef IRQLOOP_COMPAT_H
#define IRQLOOP_COMPAT_H

#include <linux/device.h>
#include <linux/gpio/consumer.h>
#include <linux/gpio/driver.h>
#include <linux/hrtimer.h>
#include <linux/platform_device.h>
#include <linux/version.h>

/*
 * The device of the GPIO controller behind a line we hold (NULL for a chip
 * registered without a parent), and the chip's label. Holding the line holds
 * a reference on its gpio_device, so both stay valid until gpiod_put(). From
 * 6.8 the gpio_device accessors say so; before, gpiod_to_chip() is the only
 * way and the chip cannot go while the line is requested.
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 8, 0)
static inline struct device *irqloop_line_controller(struct gpio_desc *desc)
{
	return gpio_device_to_device(gpiod_to_gpio_device(desc))->parent;
}

static inline const char *irqloop_line_chip_label(struct gpio_desc *desc)
{
	return gpio_device_get_label(gpiod_to_gpio_device(desc));
}
#else
static inline struct device *irqloop_line_controller(struct gpio_desc *desc)
{
	return gpiod_to_chip(desc)->parent;
}

static inline const char *irqloop_line_chip_label(struct gpio_desc *desc)
{
	return gpiod_to_chip(desc)->label;
}
#endif

/* hrtimer_setup() replaced hrtimer_init() + .function in 6.13. */
static inline void
irqloop_hrtimer_setup(struct hrtimer *t, enum hrtimer_restart (*fn)(struct hrtimer *),
		      clockid_t clock, enum hrtimer_mode mode)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 13, 0)
	hrtimer_setup(t, fn, clock, mode);
#else
	hrtimer_init(t, clock, mode);
	t->function = fn;
#endif
}

/*
 * gpio_chip.set returns int on current mainline and void before. Decided from
 * the member's own type, so no version number has to be guessed: give both
 * forms, the one the kernel's struct takes is used.
 */
#define IRQLOOP_GC_SET_RETURNS_INT                                            \
	__builtin_types_compatible_p(typeof(((struct gpio_chip *)0)->set),    \
				     int (*)(struct gpio_chip *, unsigned int, int))
#define IRQLOOP_GC_SET(fn_int, fn_void)                                       \
	__builtin_choose_expr(IRQLOOP_GC_SET_RETURNS_INT, fn_int, fn_void)

/* platform_driver.remove returns void from 6.11; before, that was remove_new. */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 11, 0)
#define IRQLOOP_PLATFORM_REMOVE(fn) .remove = (fn)
#else
#define IRQLOOP_PLATFORM_REMOVE(fn) .remove_new = (fn)
#endif

/*
 * A parport_driver with match_port/probe/detach is on the device model's
 * route; up to 6.10 it says so with .devmodel = true (without it, parport
 * calls the old attach() instead). 6.11 removed the field and the old route.
 */
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 11, 0)
#define IRQLOOP_PARPORT_DEVMODEL .devmodel = true,
#else
#define IRQLOOP_PARPORT_DEVMODEL
#endif

#endif /* IRQLOOP_COMPAT_H */
