// SPDX-License-Identifier: GPL-2.0
/*
 * irqloop-wire: a GPIO chip whose lines are wired to each other in pairs.
 *
 * Line 2n and line 2n+1 are the two ends of wire n. Driving one end (as an
 * output) changes the level read at the other end and raises an edge
 * interrupt there, through a gpiolib irqchip. Userspace sees an ordinary chip
 * through the GPIO character device, so libgpiod, the gpiod tools and
 * irqloop's own logger and responders run against it unchanged: the testbed
 * of irqloop without a board.
 *
 * Each wire can delay the far end by a programmable time (hrtimer), so that a
 * test can emulate a slow target and know the truth:
 *   delay_ns  per-wire delay applied to every change (array, writable);
 *   spike_ns  per-wire extra delay applied to the next change only, then
 *             cleared (array, writable): a one-off spike. Setting a line to
 *             the level it already has is no change and leaves it armed.
 * For error paths, input_only (a bitmask of lines, writable) makes lines
 * refuse output direction, as input-only pins of real controllers do.
 *
 * Closer to real controllers than a plain software chip:
 *  - changes travel in order and each one arrives as its own edge, however
 *    short the pulse: a pulse shorter than the delay is two edges at the far
 *    end, never merged away (a wire holds up to WIRE_QUEUE changes in flight;
 *    beyond that the newest change replaces the last queued one, counted in
 *    the merged parameter);
 *  - an edge is latched while its interrupt is masked and delivered on
 *    unmask, and the flow handler is handle_edge_irq (irq_ack clears the
 *    latch), as on SoC GPIO blocks;
 *  - threaded_parent=1 delivers edges through a parent interrupt handled in a
 *    thread, as gpio-omap's bank interrupt is on PREEMPT_RT (and pinctrl-amd's):
 *    a consumer's IRQF_NO_THREAD handler then runs in that thread, and a
 *    second edge arriving before the thread ran is latched with the first;
 *  - bias: pull-up or pull-down (set_config) decides what an input reads when
 *    the other end of its wire does not drive; float_noise_ns=N makes such a
 *    line without bias toggle every N ns, as a floating pin picks up noise;
 *  - spin_lock=1 takes a spinlock_t (a sleeping lock on PREEMPT_RT) in set()
 *    and names the chip irqloop-wire-spin: a chip whose set() is not
 *    raw-safe, for the kernel responder's PREEMPT_RT refusal;
 *  - can_sleep=1 makes a chip whose lines can sleep, as an I2C/SPI expander's:
 *    gpiolib then calls only the _cansleep accessors, and each line's
 *    interrupt is a nested threaded one (gpio_irq_chip.threaded), run by
 *    handle_nested_irq() from a parent interrupt's thread, as an expander's
 *    driver runs them from its own threaded interrupt: such an interrupt
 *    refuses a handler without a thread;
 *  - rp1=mainline or rp1=rpi labels the chip pinctrl-rp1, under a parent
 *    device of its own, as the Pi 5's two RP1 drivers: mainline's writes
 *    through an MMIO regmap (a spinlock_t), which this variant imitates with
 *    a regmap of its own on the parent, set() going through it; the Raspberry
 *    Pi kernel's writes the registers directly (no regmap, raw-safe).
 */
#include <linux/bitmap.h>
#include <linux/gpio/driver.h>
#include <linux/hrtimer.h>
#include <linux/interrupt.h>
#include <linux/irq.h>
#include <linux/irq_work.h>
#include <linux/module.h>
#include <linux/pinctrl/pinconf-generic.h>
#include <linux/platform_device.h>
#include <linux/regmap.h>
#include <linux/slab.h>
#include <linux/spinlock.h>

#include "irqloop_compat.h"

#define WIRE_MAX_PAIRS 16
#define WIRE_LINES (2 * WIRE_MAX_PAIRS)
#define WIRE_QUEUE 64

static unsigned int pairs = 4;
module_param(pairs, uint, 0444);
MODULE_PARM_DESC(pairs, "number of wires (the chip has twice as many lines), 1..16, default 4");

static unsigned long delay_ns[WIRE_MAX_PAIRS];
static unsigned int delay_ns_count;
module_param_array(delay_ns, ulong, &delay_ns_count, 0644);
MODULE_PARM_DESC(delay_ns, "per wire: delay before the far end sees a change, in ns");

static unsigned long spike_ns[WIRE_MAX_PAIRS];
static unsigned int spike_ns_count;
module_param_array(spike_ns, ulong, &spike_ns_count, 0644);
MODULE_PARM_DESC(spike_ns, "per wire: extra delay for the next change only, in ns (then reset to 0)");

static unsigned long input_only;
module_param(input_only, ulong, 0644);
MODULE_PARM_DESC(input_only, "bitmask of lines that refuse output direction (-EINVAL)");

static bool threaded_parent;
module_param(threaded_parent, bool, 0444);
MODULE_PARM_DESC(threaded_parent, "deliver edges through a parent interrupt handled in a thread (as gpio-omap on PREEMPT_RT)");

static unsigned long float_noise_ns;
module_param(float_noise_ns, ulong, 0444);
MODULE_PARM_DESC(float_noise_ns, "an undriven input without bias toggles every N ns (0: keeps its last level)");

static bool param_spin_lock;
module_param_named(spin_lock, param_spin_lock, bool, 0444);
MODULE_PARM_DESC(spin_lock, "take a spinlock_t in set() (not raw-safe on PREEMPT_RT); label irqloop-wire-spin");

static bool param_can_sleep;
module_param_named(can_sleep, param_can_sleep, bool, 0444);
MODULE_PARM_DESC(can_sleep, "lines that can sleep, their interrupts nested in a parent's thread (as an I2C/SPI expander's)");

static char *param_rp1;
module_param_named(rp1, param_rp1, charp, 0444);
MODULE_PARM_DESC(rp1, "mainline: label pinctrl-rp1, set() through a regmap on a parent device; rpi: label pinctrl-rp1, direct");

static unsigned long merged;
module_param(merged, ulong, 0444);
MODULE_PARM_DESC(merged, "changes merged because a wire had WIRE_QUEUE changes in flight (read-only)");

struct wire_change {
	u64 due;	/* CLOCK_MONOTONIC ns */
	bool level;
};

struct wire_pair {
	struct hrtimer timer;
	struct wire_chip *chip;
	unsigned int far;	/* the line that sees the queued changes */
	struct wire_change q[WIRE_QUEUE];
	unsigned int head, count;
	u64 last_due;
};

struct wire_chip {
	struct gpio_chip gc;
	raw_spinlock_t lock;
	spinlock_t set_lock;	/* spin_lock=1 only */
	unsigned long level[BITS_TO_LONGS(WIRE_LINES)];
	unsigned long is_input[BITS_TO_LONGS(WIRE_LINES)];
	unsigned long pulled[BITS_TO_LONGS(WIRE_LINES)];
	unsigned long pull_level[BITS_TO_LONGS(WIRE_LINES)];
	unsigned long irq_enabled[BITS_TO_LONGS(WIRE_LINES)];
	unsigned long latched[BITS_TO_LONGS(WIRE_LINES)];
	unsigned long irq_pending[BITS_TO_LONGS(WIRE_LINES)];
	unsigned int irq_type[WIRE_LINES];
	struct irq_work irq_work;
	struct wire_pair pair[WIRE_MAX_PAIRS];
	struct hrtimer noise;
	int parent_irq;		/* threaded_parent=1 or can_sleep=1 only */
	struct platform_device *rp1_dev;	/* rp1= only: the chip's parent */
	struct regmap *regmap;		/* rp1=mainline only */
	bool dying;
	const char *names[WIRE_LINES];
};

static struct wire_chip *wire;

/*
 * Called with the lock held: make input @line read @level. A matching edge is
 * latched whether or not its interrupt is enabled; returns true when it must
 * be delivered now. An output keeps its own driven level.
 */
static bool wire_arrive(struct wire_chip *w, unsigned int line, bool level)
{
	unsigned int type = w->irq_type[line];

	if (!test_bit(line, w->is_input) || test_bit(line, w->level) == level)
		return false;
	assign_bit(line, w->level, level);
	if (!(level ? type & IRQ_TYPE_EDGE_RISING : type & IRQ_TYPE_EDGE_FALLING))
		return false;
	if (test_and_set_bit(line, w->latched))
		return false;	/* one latch per line, as a status register */
	return test_bit(line, w->irq_enabled);
}

/* Hard interrupt context: the interrupts of @pending, directly or via the parent. */
static void wire_deliver(struct wire_chip *w, unsigned long *pending)
{
	unsigned int line;

	if (w->parent_irq) {
		unsigned long flags;

		raw_spin_lock_irqsave(&w->lock, flags);
		bitmap_or(w->irq_pending, w->irq_pending, pending, w->gc.ngpio);
		raw_spin_unlock_irqrestore(&w->lock, flags);
		generic_handle_irq(w->parent_irq);
		return;
	}
	for_each_set_bit(line, pending, w->gc.ngpio)
		generic_handle_domain_irq(w->gc.irq.domain, line);
}

/* The parent's thread, as a threaded bank interrupt: child handlers run here. */
static irqreturn_t wire_parent_thread(int irq, void *data)
{
	struct wire_chip *w = data;
	DECLARE_BITMAP(pending, WIRE_LINES);
	unsigned long flags;
	unsigned int line, child;

	raw_spin_lock_irqsave(&w->lock, flags);
	bitmap_copy(pending, w->irq_pending, w->gc.ngpio);
	bitmap_zero(w->irq_pending, w->gc.ngpio);
	raw_spin_unlock_irqrestore(&w->lock, flags);
	for_each_set_bit(line, pending, w->gc.ngpio) {
		if (!param_can_sleep) {
			generic_handle_domain_irq_safe(w->gc.irq.domain, line);
			continue;
		}
		/*
		 * A nested interrupt has no flow handler, so no irq_ack: the
		 * latch is cleared here, as an expander's thread reads and
		 * clears its status register before the nested handlers run.
		 */
		raw_spin_lock_irqsave(&w->lock, flags);
		clear_bit(line, w->latched);
		raw_spin_unlock_irqrestore(&w->lock, flags);
		child = irq_find_mapping(w->gc.irq.domain, line);
		if (child)
			handle_nested_irq(child);
	}
	return IRQ_HANDLED;
}

/* Runs in hard interrupt context (IRQ_WORK_INIT_HARD), as the IRQ core requires. */
static void wire_irq_work(struct irq_work *work)
{
	struct wire_chip *w = container_of(work, struct wire_chip, irq_work);
	DECLARE_BITMAP(pending, WIRE_LINES);
	unsigned long flags;

	raw_spin_lock_irqsave(&w->lock, flags);
	bitmap_copy(pending, w->irq_pending, w->gc.ngpio);
	if (!w->parent_irq)
		bitmap_zero(w->irq_pending, w->gc.ngpio);
	raw_spin_unlock_irqrestore(&w->lock, flags);
	if (!bitmap_empty(pending, w->gc.ngpio))
		wire_deliver(w, pending);
}

/* Called with the lock held: ask irq_work to deliver @line's latched edge. */
static void wire_kick(struct wire_chip *w, unsigned int line)
{
	set_bit(line, w->irq_pending);
	irq_work_queue(&w->irq_work);
}

/*
 * A hard hrtimer callback runs in hard interrupt context, also on PREEMPT_RT.
 * Delivers the changes due now one at a time, each as its own edge, then
 * re-arms for the next one in flight.
 */
static enum hrtimer_restart wire_timer(struct hrtimer *t)
{
	struct wire_pair *p = container_of(t, struct wire_pair, timer);
	struct wire_chip *w = p->chip;
	DECLARE_BITMAP(one, WIRE_LINES);
	unsigned long flags;
	bool raise;
	u64 now;

	for (;;) {
		raw_spin_lock_irqsave(&w->lock, flags);
		now = ktime_get_ns();
		if (w->dying || !p->count || p->q[p->head].due > now)
			break;
		raise = wire_arrive(w, p->far, p->q[p->head].level);
		p->head = (p->head + 1) % WIRE_QUEUE;
		p->count--;
		raw_spin_unlock_irqrestore(&w->lock, flags);
		if (raise) {
			bitmap_zero(one, WIRE_LINES);
			set_bit(p->far, one);
			wire_deliver(w, one);
		}
	}
	if (w->dying || !p->count) {
		raw_spin_unlock_irqrestore(&w->lock, flags);
		return HRTIMER_NORESTART;
	}
	hrtimer_set_expires(t, ns_to_ktime(p->q[p->head].due));
	raw_spin_unlock_irqrestore(&w->lock, flags);
	return HRTIMER_RESTART;
}

/* Called with the lock held: what an input reads when nothing drives its wire. */
static void wire_float(struct wire_chip *w, unsigned int line)
{
	if (test_bit(line, w->pulled) && wire_arrive(w, line, test_bit(line, w->pull_level)))
		wire_kick(w, line);
}

/* Noise on undriven inputs without bias: each toggles, an edge like any other. */
static enum hrtimer_restart wire_noise(struct hrtimer *t)
{
	struct wire_chip *w = container_of(t, struct wire_chip, noise);
	unsigned long flags;
	unsigned int line;

	raw_spin_lock_irqsave(&w->lock, flags);
	for (line = 0; line < w->gc.ngpio && !w->dying; line++) {
		if (!test_bit(line, w->is_input) || !test_bit(line ^ 1, w->is_input) ||
		    test_bit(line, w->pulled) || w->pair[line / 2].count)
			continue;
		if (wire_arrive(w, line, !test_bit(line, w->level)))
			wire_kick(w, line);
	}
	raw_spin_unlock_irqrestore(&w->lock, flags);
	hrtimer_forward_now(t, ns_to_ktime(float_noise_ns));
	return w->dying ? HRTIMER_NORESTART : HRTIMER_RESTART;
}

static int wire_get(struct gpio_chip *gc, unsigned int offset)
{
	struct wire_chip *w = gpiochip_get_data(gc);

	return test_bit(offset, w->level);
}

/*
 * May be called in atomic context (a hard interrupt handler), so the far
 * end's interrupt is raised from irq_work (or from the hrtimer of a delayed
 * wire), never from here.
 */
static void wire_set_locked(struct wire_chip *w, unsigned int offset, int value)
{
	unsigned int n = offset / 2, far = offset ^ 1;
	struct wire_pair *p = &w->pair[n];
	unsigned long flags;
	u64 delay, due;

	raw_spin_lock_irqsave(&w->lock, flags);
	if (test_bit(offset, w->level) == !!value) {
		/* No change: nothing travels, and an armed spike stays armed. */
		raw_spin_unlock_irqrestore(&w->lock, flags);
		return;
	}
	assign_bit(offset, w->level, value);
	delay = READ_ONCE(delay_ns[n]);
	if (delay || READ_ONCE(spike_ns[n]))
		delay += xchg(&spike_ns[n], 0);
	if (w->dying) {
		/* nothing may reach the IRQ domain any more */
	} else if (delay || p->count) {
		/* In order behind what is in flight: a wire does not reorder. */
		due = max(ktime_get_ns() + delay, p->last_due);
		p->far = far;
		p->last_due = due;
		if (p->count == WIRE_QUEUE) {
			p->q[(p->head + p->count - 1) % WIRE_QUEUE].level = value;
			merged++;
		} else {
			p->q[(p->head + p->count) % WIRE_QUEUE] =
				(struct wire_change){ .due = due, .level = value };
			if (!p->count++)
				hrtimer_start(&p->timer, ns_to_ktime(due),
					      HRTIMER_MODE_ABS_HARD);
		}
	} else if (wire_arrive(w, far, value)) {
		wire_kick(w, far);
	}
	raw_spin_unlock_irqrestore(&w->lock, flags);
}

static void wire_set_void(struct gpio_chip *gc, unsigned int offset, int value)
{
	struct wire_chip *w = gpiochip_get_data(gc);
	unsigned long flags = 0;

	/* spin_lock=1: a spinlock_t, which sleeps on PREEMPT_RT, as some drivers' set() does. */
	if (param_spin_lock)
		spin_lock_irqsave(&w->set_lock, flags);
	if (w->regmap)
		regmap_write(w->regmap, offset, value);	/* its spinlock_t, then below */
	else
		wire_set_locked(w, offset, value);
	if (param_spin_lock)
		spin_unlock_irqrestore(&w->set_lock, flags);
}

/* rp1=mainline: the regmap's register write is a line's level. */
static int wire_regmap_write(void *context, unsigned int reg, unsigned int val)
{
	wire_set_locked(context, reg, val);
	return 0;
}

static int wire_regmap_read(void *context, unsigned int reg, unsigned int *val)
{
	struct wire_chip *w = context;

	*val = test_bit(reg, w->level);
	return 0;
}

static const struct regmap_config wire_regmap_config = {
	.name = "irqloop-wire-rp1",
	.reg_bits = 32,
	.val_bits = 32,
	.max_register = WIRE_LINES - 1,
	.reg_read = wire_regmap_read,
	.reg_write = wire_regmap_write,
	.fast_io = true,	/* a spinlock_t, as an MMIO regmap's */
	.cache_type = REGCACHE_NONE,
};

/* rp1=: a parent device for the chip, and for mainline a regmap on it. */
static int wire_rp1_setup(struct wire_chip *w)
{
	bool mainline;

	if (!param_rp1)
		return 0;
	if (!strcmp(param_rp1, "mainline"))
		mainline = true;
	else if (!strcmp(param_rp1, "rpi"))
		mainline = false;
	else {
		pr_err("irqloop-wire: rp1=%s: expected mainline or rpi\n", param_rp1);
		return -EINVAL;
	}
	w->rp1_dev = platform_device_register_simple("irqloop-wire-rp1", -1, NULL, 0);
	if (IS_ERR(w->rp1_dev)) {
		int ret = PTR_ERR(w->rp1_dev);

		w->rp1_dev = NULL;
		return ret;
	}
	w->gc.parent = &w->rp1_dev->dev;
	w->gc.label = "pinctrl-rp1";
	if (mainline) {
		w->regmap = regmap_init(&w->rp1_dev->dev, NULL, w, &wire_regmap_config);
		if (IS_ERR(w->regmap)) {
			int ret = PTR_ERR(w->regmap);

			w->regmap = NULL;
			platform_device_unregister(w->rp1_dev);
			w->rp1_dev = NULL;
			return ret;
		}
	}
	return 0;
}

static void wire_rp1_free(struct wire_chip *w)
{
	if (w->regmap)
		regmap_exit(w->regmap);
	w->regmap = NULL;
	if (w->rp1_dev)
		platform_device_unregister(w->rp1_dev);
	w->rp1_dev = NULL;
}

static int wire_set_int(struct gpio_chip *gc, unsigned int offset, int value)
{
	wire_set_void(gc, offset, value);
	return 0;
}

static int wire_get_direction(struct gpio_chip *gc, unsigned int offset)
{
	struct wire_chip *w = gpiochip_get_data(gc);

	return test_bit(offset, w->is_input) ? GPIO_LINE_DIRECTION_IN :
					       GPIO_LINE_DIRECTION_OUT;
}

static int wire_direction_input(struct gpio_chip *gc, unsigned int offset)
{
	struct wire_chip *w = gpiochip_get_data(gc);
	unsigned int far = offset ^ 1;
	unsigned long flags;

	raw_spin_lock_irqsave(&w->lock, flags);
	set_bit(offset, w->is_input);
	/*
	 * Take the level the other end drives, unless changes are still in
	 * flight: the timer delivers them. An undriven wire reads its bias, or
	 * keeps its last level.
	 */
	if (test_bit(far, w->is_input)) {
		wire_float(w, offset);
		wire_float(w, far);
	} else if (!w->pair[offset / 2].count) {
		assign_bit(offset, w->level, test_bit(far, w->level));
	}
	raw_spin_unlock_irqrestore(&w->lock, flags);
	return 0;
}

static int wire_direction_output(struct gpio_chip *gc, unsigned int offset,
				 int value)
{
	struct wire_chip *w = gpiochip_get_data(gc);
	unsigned long flags;

	if (READ_ONCE(input_only) & BIT(offset))
		return -EINVAL;
	wire_set_void(gc, offset, value);
	raw_spin_lock_irqsave(&w->lock, flags);
	clear_bit(offset, w->is_input);
	raw_spin_unlock_irqrestore(&w->lock, flags);
	return 0;
}

/* Bias only: pull-up, pull-down, none. */
static int wire_set_config(struct gpio_chip *gc, unsigned int offset,
			   unsigned long config)
{
	struct wire_chip *w = gpiochip_get_data(gc);
	unsigned long flags;

	switch (pinconf_to_config_param(config)) {
	case PIN_CONFIG_BIAS_PULL_UP:
	case PIN_CONFIG_BIAS_PULL_DOWN:
	case PIN_CONFIG_BIAS_DISABLE:
		break;
	default:
		return -ENOTSUPP;
	}
	raw_spin_lock_irqsave(&w->lock, flags);
	assign_bit(offset, w->pulled,
		   pinconf_to_config_param(config) != PIN_CONFIG_BIAS_DISABLE);
	assign_bit(offset, w->pull_level,
		   pinconf_to_config_param(config) == PIN_CONFIG_BIAS_PULL_UP);
	if (test_bit(offset ^ 1, w->is_input))
		wire_float(w, offset);
	raw_spin_unlock_irqrestore(&w->lock, flags);
	return 0;
}

static void wire_irq_ack(struct irq_data *d)
{
	struct gpio_chip *gc = irq_data_get_irq_chip_data(d);
	struct wire_chip *w = gpiochip_get_data(gc);

	clear_bit(irqd_to_hwirq(d), w->latched);
}

static void wire_irq_mask(struct irq_data *d)
{
	struct gpio_chip *gc = irq_data_get_irq_chip_data(d);
	struct wire_chip *w = gpiochip_get_data(gc);
	irq_hw_number_t hwirq = irqd_to_hwirq(d);

	clear_bit(hwirq, w->irq_enabled);
	gpiochip_disable_irq(gc, hwirq);
}

/* An edge latched while masked is delivered now. */
static void wire_irq_unmask(struct irq_data *d)
{
	struct gpio_chip *gc = irq_data_get_irq_chip_data(d);
	struct wire_chip *w = gpiochip_get_data(gc);
	irq_hw_number_t hwirq = irqd_to_hwirq(d);
	unsigned long flags;

	gpiochip_enable_irq(gc, hwirq);
	raw_spin_lock_irqsave(&w->lock, flags);
	set_bit(hwirq, w->irq_enabled);
	if (test_bit(hwirq, w->latched) && !w->dying)
		wire_kick(w, hwirq);
	raw_spin_unlock_irqrestore(&w->lock, flags);
}

static int wire_irq_set_type(struct irq_data *d, unsigned int type)
{
	struct gpio_chip *gc = irq_data_get_irq_chip_data(d);
	struct wire_chip *w = gpiochip_get_data(gc);
	unsigned long flags;

	/* A wire has edges only: level triggers would need a resampling loop. */
	if (type & ~IRQ_TYPE_EDGE_BOTH)
		return -EINVAL;
	/*
	 * Under the lock the edge path takes: a wire hrtimer landing an edge on
	 * this line reads irq_type and sets latched in one critical section, so a
	 * type change never pairs an old type with a new latch state.
	 */
	raw_spin_lock_irqsave(&w->lock, flags);
	w->irq_type[irqd_to_hwirq(d)] = type;
	clear_bit(irqd_to_hwirq(d), w->latched);
	raw_spin_unlock_irqrestore(&w->lock, flags);
	return 0;
}

static const struct irq_chip wire_irq_chip = {
	.name = "irqloop-wire",
	.irq_ack = wire_irq_ack,
	.irq_mask = wire_irq_mask,
	.irq_unmask = wire_irq_unmask,
	.irq_set_type = wire_irq_set_type,
	.flags = IRQCHIP_IMMUTABLE | IRQCHIP_SKIP_SET_WAKE,
	GPIOCHIP_IRQ_RESOURCE_HELPERS,
};

static void wire_free(struct wire_chip *w)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(w->names); i++)
		kfree(w->names[i]);
	kfree(w);
}

/* threaded_parent=1 or can_sleep=1: a parent interrupt of our own, its handler a thread. */
static int wire_parent_setup(struct wire_chip *w)
{
	int irq, ret;

	/*
	 * No owner module: request_irq() would otherwise pin this module by
	 * its own parent interrupt, and it could never be unloaded.
	 */
	irq = __irq_alloc_descs(-1, 0, 1, NUMA_NO_NODE, NULL, NULL);
	if (irq < 0)
		return irq;
	irq_set_chip_and_handler(irq, &dummy_irq_chip, handle_simple_irq);
	irq_modify_status(irq, IRQ_NOREQUEST | IRQ_NOAUTOEN, IRQ_NOPROBE);
	ret = request_threaded_irq(irq, NULL, wire_parent_thread, IRQF_ONESHOT,
				   "irqloop-wire-parent", w);
	if (ret) {
		irq_free_desc(irq);
		return ret;
	}
	w->parent_irq = irq;
	return 0;
}

static void wire_parent_free(struct wire_chip *w)
{
	if (!w->parent_irq)
		return;
	free_irq(w->parent_irq, w);
	irq_free_desc(w->parent_irq);
	w->parent_irq = 0;
}

/* The gpio_chip's fields and callbacks, and its edge-interrupt chip. */
static void __init wire_chip_setup(struct wire_chip *w)
{
	struct gpio_irq_chip *girq;

	w->gc.label = param_spin_lock ? "irqloop-wire-spin" : "irqloop-wire";
	w->gc.owner = THIS_MODULE;
	w->gc.base = -1;
	w->gc.ngpio = 2 * pairs;
	w->gc.names = w->names;
	w->gc.can_sleep = param_can_sleep;
	w->gc.get = wire_get;
	w->gc.set = IRQLOOP_GC_SET(wire_set_int, wire_set_void);
	w->gc.set_config = wire_set_config;
	w->gc.get_direction = wire_get_direction;
	w->gc.direction_input = wire_direction_input;
	w->gc.direction_output = wire_direction_output;

	girq = &w->gc.irq;
	gpio_irq_chip_set_chip(girq, &wire_irq_chip);
	girq->handler = handle_edge_irq;
	girq->default_type = IRQ_TYPE_NONE;
	girq->threaded = param_can_sleep;	/* nested threaded interrupts */
}

static int __init wire_init(void)
{
	struct wire_chip *w;
	unsigned int i;
	int ret;

	if (pairs < 1 || pairs > WIRE_MAX_PAIRS) {
		pr_err("irqloop-wire: pairs=%u is out of range 1..%d\n", pairs,
		       WIRE_MAX_PAIRS);
		return -EINVAL;
	}
	if (float_noise_ns && float_noise_ns < 10000) {
		pr_err("irqloop-wire: float_noise_ns=%lu is below 10000\n",
		       float_noise_ns);
		return -EINVAL;
	}

	w = kzalloc(sizeof(*w), GFP_KERNEL);
	if (!w)
		return -ENOMEM;
	raw_spin_lock_init(&w->lock);
	spin_lock_init(&w->set_lock);
	w->irq_work = IRQ_WORK_INIT_HARD(wire_irq_work);
	for (i = 0; i < pairs; i++) {
		irqloop_hrtimer_setup(&w->pair[i].timer, wire_timer,
				      CLOCK_MONOTONIC, HRTIMER_MODE_ABS_HARD);
		w->pair[i].chip = w;
	}
	irqloop_hrtimer_setup(&w->noise, wire_noise, CLOCK_MONOTONIC,
			      HRTIMER_MODE_REL_HARD);
	/* Line names let users and tests pick lines by name: wire0a, wire0b... */
	for (i = 0; i < 2 * pairs; i++) {
		w->names[i] = kasprintf(GFP_KERNEL, "wire%u%c", i / 2,
					i % 2 ? 'b' : 'a');
		if (!w->names[i]) {
			wire_free(w);
			return -ENOMEM;
		}
	}
	bitmap_fill(w->is_input, 2 * pairs);

	wire_chip_setup(w);
	ret = wire_rp1_setup(w);
	if (ret) {
		wire_free(w);
		return ret;
	}
	if (threaded_parent || param_can_sleep) {
		ret = wire_parent_setup(w);
		if (ret) {
			pr_err("irqloop-wire: cannot set up the threaded parent interrupt (error %d)\n",
			       ret);
			wire_rp1_free(w);
			wire_free(w);
			return ret;
		}
	}
	ret = gpiochip_add_data(&w->gc, w);
	if (ret) {
		wire_parent_free(w);
		wire_rp1_free(w);
		wire_free(w);
		return ret;
	}
	wire = w;
	if (float_noise_ns)
		hrtimer_start(&w->noise, ns_to_ktime(float_noise_ns),
			      HRTIMER_MODE_REL_HARD);
	pr_info("irqloop-wire: %u wires on %u lines%s%s%s\n", pairs, 2 * pairs,
		w->parent_irq ? ", edges through threaded parent interrupt " : "",
		w->parent_irq ? "irqloop-wire-parent" : "",
		param_can_sleep ? ", lines can sleep (nested threaded interrupts)" : "");
	return 0;
}

static void __exit wire_exit(void)
{
	struct wire_chip *w = wire;
	unsigned long flags;
	unsigned int i;

	/* Stop new deliveries first: the IRQ domain goes away with the chip. */
	raw_spin_lock_irqsave(&w->lock, flags);
	w->dying = true;
	raw_spin_unlock_irqrestore(&w->lock, flags);
	hrtimer_cancel(&w->noise);
	for (i = 0; i < pairs; i++)
		hrtimer_cancel(&w->pair[i].timer);
	irq_work_sync(&w->irq_work);
	if (w->parent_irq)
		synchronize_irq(w->parent_irq);

	gpiochip_remove(&w->gc);
	wire_parent_free(w);
	wire_rp1_free(w);
	wire_free(w);
}

module_init(wire_init);
module_exit(wire_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("GPIO chip with lines wired in pairs, edge interrupts and programmable delays (irqloop testbed)");
