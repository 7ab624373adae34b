// SPDX-License-Identifier: MIT
/* The list of GPIO drivers built into the bare-metal responder (gpio.h). */
#include "gpio.h"

extern const struct bm_gpio_driver bm_gpio_bcm2711;
extern const struct bm_gpio_driver bm_gpio_pl061;
extern const struct bm_gpio_driver bm_gpio_rcar_gen3;
extern const struct bm_gpio_driver bm_gpio_rcar_gen4;
extern const struct bm_gpio_driver bm_gpio_zynqmp;

/* Alphabetical; each name and compatible appears once. */
const struct bm_gpio_driver *const bm_gpio_drivers[] = {
	&bm_gpio_bcm2711,
	&bm_gpio_pl061,
	&bm_gpio_rcar_gen3,
	&bm_gpio_rcar_gen4,
	&bm_gpio_zynqmp,
	0,
};

static int bm_streq(const char *a, const char *b)
{
	while (*a && *a == *b) {
		++a;
		++b;
	}
	return *a == *b;
}

const struct bm_gpio_driver *bm_gpio_find(const char *key)
{
	for (unsigned i = 0; bm_gpio_drivers[i]; ++i) {
		const struct bm_gpio_driver *d = bm_gpio_drivers[i];
		if (bm_streq(d->name, key))
			return d;
		for (unsigned c = 0; d->compatible && d->compatible[c]; ++c)
			if (bm_streq(d->compatible[c], key))
				return d;
	}
	return 0;
}
