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
 * A change made while an earlier one is still in flight on the same wire is
 * merged with it: the far end sees the final level once, when the pending
 * timer fires, as a glitch-filtered wire would.
 */
#include <linux/bitmap.h>
#include <linux/gpio/driver.h>
#include <linux/hrtimer.h>
#include <linux/irq.h>
#include <linux/irq_work.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/spinlock.h>

#define WIRE_MAX_PAIRS 16

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

struct wire_pair {
	struct hrtimer timer;
	struct wire_chip *chip;
	unsigned int far;	/* the line that will see the change */
	bool level;		/* the level it will see */
};

struct wire_chip {
	struct gpio_chip gc;
	raw_spinlock_t lock;
	unsigned long level[BITS_TO_LONGS(2 * WIRE_MAX_PAIRS)];
	unsigned long is_input[BITS_TO_LONGS(2 * WIRE_MAX_PAIRS)];
	unsigned long irq_enabled[BITS_TO_LONGS(2 * WIRE_MAX_PAIRS)];
	unsigned long irq_pending[BITS_TO_LONGS(2 * WIRE_MAX_PAIRS)];
	unsigned int irq_type[2 * WIRE_MAX_PAIRS];
	struct irq_work irq_work;
	struct wire_pair pair[WIRE_MAX_PAIRS];
	bool dying;
	const char *names[2 * WIRE_MAX_PAIRS];
};

static struct wire_chip *wire;

/* Called with the lock held: does the edge @level on @line match its trigger type? */
static bool wire_edge_wanted(struct wire_chip *w, unsigned int line, bool level)
{
	unsigned int type = w->irq_type[line];

	if (!test_bit(line, w->irq_enabled))
		return false;
	return level ? type & IRQ_TYPE_EDGE_RISING : type & IRQ_TYPE_EDGE_FALLING;
}

/*
 * Called with the lock held: make @line read @level; returns true when an
 * interrupt must be raised for it. An output keeps its own driven level.
 */
static bool wire_arrive(struct wire_chip *w, unsigned int line, bool level)
{
	if (!test_bit(line, w->is_input) || test_bit(line, w->level) == level)
		return false;
	assign_bit(line, w->level, level);
	return wire_edge_wanted(w, line, level);
}

/* Runs in hard interrupt context, as the IRQ core requires. */
static void wire_irq_work(struct irq_work *work)
{
	struct wire_chip *w = container_of(work, struct wire_chip, irq_work);
	DECLARE_BITMAP(pending, 2 * WIRE_MAX_PAIRS);
	unsigned long flags;
	unsigned int line;

	raw_spin_lock_irqsave(&w->lock, flags);
	bitmap_copy(pending, w->irq_pending, w->gc.ngpio);
	bitmap_zero(w->irq_pending, w->gc.ngpio);
	raw_spin_unlock_irqrestore(&w->lock, flags);

	for_each_set_bit(line, pending, w->gc.ngpio)
		generic_handle_domain_irq(w->gc.irq.domain, line);
}

/* A hard hrtimer callback runs in hard interrupt context, also on PREEMPT_RT. */
static enum hrtimer_restart wire_timer(struct hrtimer *t)
{
	struct wire_pair *p = container_of(t, struct wire_pair, timer);
	struct wire_chip *w = p->chip;
	unsigned long flags;
	bool raise;

	raw_spin_lock_irqsave(&w->lock, flags);
	raise = !w->dying && wire_arrive(w, p->far, p->level);
	raw_spin_unlock_irqrestore(&w->lock, flags);

	if (raise)
		generic_handle_domain_irq(w->gc.irq.domain, p->far);
	return HRTIMER_NORESTART;
}

static int wire_get(struct gpio_chip *gc, unsigned int offset)
{
	struct wire_chip *w = gpiochip_get_data(gc);

	return test_bit(offset, w->level);
}

/*
 * May be called in atomic context, so the far end's interrupt is raised from
 * irq_work (or from the hrtimer of a delayed wire), never from here.
 */
static void wire_set(struct gpio_chip *gc, unsigned int offset, int value)
{
	struct wire_chip *w = gpiochip_get_data(gc);
	unsigned int n = offset / 2, far = offset ^ 1;
	struct wire_pair *p = &w->pair[n];
	unsigned long flags;
	u64 delay;

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
	} else if (delay) {
		p->far = far;
		p->level = value;
		if (!hrtimer_is_queued(&p->timer))
			hrtimer_start(&p->timer, ns_to_ktime(delay),
				      HRTIMER_MODE_REL_HARD);
	} else if (wire_arrive(w, far, value)) {
		set_bit(far, w->irq_pending);
		irq_work_queue(&w->irq_work);
	}
	raw_spin_unlock_irqrestore(&w->lock, flags);
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
	 * Take the level the other end drives, unless a delayed change is
	 * still in flight: its timer delivers it. An undriven wire keeps its
	 * last level, as if weakly held.
	 */
	if (!test_bit(far, w->is_input) &&
	    !hrtimer_is_queued(&w->pair[offset / 2].timer))
		assign_bit(offset, w->level, test_bit(far, w->level));
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
	wire_set(gc, offset, value);
	raw_spin_lock_irqsave(&w->lock, flags);
	clear_bit(offset, w->is_input);
	raw_spin_unlock_irqrestore(&w->lock, flags);
	return 0;
}

static void wire_irq_mask(struct irq_data *d)
{
	struct gpio_chip *gc = irq_data_get_irq_chip_data(d);
	struct wire_chip *w = gpiochip_get_data(gc);
	irq_hw_number_t hwirq = irqd_to_hwirq(d);

	clear_bit(hwirq, w->irq_enabled);
	gpiochip_disable_irq(gc, hwirq);
}

static void wire_irq_unmask(struct irq_data *d)
{
	struct gpio_chip *gc = irq_data_get_irq_chip_data(d);
	struct wire_chip *w = gpiochip_get_data(gc);
	irq_hw_number_t hwirq = irqd_to_hwirq(d);

	gpiochip_enable_irq(gc, hwirq);
	set_bit(hwirq, w->irq_enabled);
}

static int wire_irq_set_type(struct irq_data *d, unsigned int type)
{
	struct gpio_chip *gc = irq_data_get_irq_chip_data(d);
	struct wire_chip *w = gpiochip_get_data(gc);

	/* A wire has edges only: level triggers would need a resampling loop. */
	if (type & ~IRQ_TYPE_EDGE_BOTH)
		return -EINVAL;
	w->irq_type[irqd_to_hwirq(d)] = type;
	return 0;
}

static const struct irq_chip wire_irq_chip = {
	.name = "irqloop-wire",
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

static int __init wire_init(void)
{
	struct gpio_irq_chip *girq;
	struct wire_chip *w;
	unsigned int i;
	int ret;

	if (pairs < 1 || pairs > WIRE_MAX_PAIRS) {
		pr_err("irqloop-wire: pairs=%u is out of range 1..%d\n", pairs,
		       WIRE_MAX_PAIRS);
		return -EINVAL;
	}

	w = kzalloc(sizeof(*w), GFP_KERNEL);
	if (!w)
		return -ENOMEM;
	raw_spin_lock_init(&w->lock);
	w->irq_work = IRQ_WORK_INIT_HARD(wire_irq_work);
	for (i = 0; i < pairs; i++) {
		hrtimer_init(&w->pair[i].timer, CLOCK_MONOTONIC,
			     HRTIMER_MODE_REL_HARD);
		w->pair[i].timer.function = wire_timer;
		w->pair[i].chip = w;
	}
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

	w->gc.label = "irqloop-wire";
	w->gc.owner = THIS_MODULE;
	w->gc.base = -1;
	w->gc.ngpio = 2 * pairs;
	w->gc.names = w->names;
	w->gc.can_sleep = false;
	w->gc.get = wire_get;
	w->gc.set = wire_set;
	w->gc.get_direction = wire_get_direction;
	w->gc.direction_input = wire_direction_input;
	w->gc.direction_output = wire_direction_output;

	girq = &w->gc.irq;
	gpio_irq_chip_set_chip(girq, &wire_irq_chip);
	girq->handler = handle_simple_irq;
	girq->default_type = IRQ_TYPE_NONE;

	ret = gpiochip_add_data(&w->gc, w);
	if (ret) {
		wire_free(w);
		return ret;
	}
	wire = w;
	pr_info("irqloop-wire: %u wires on %u lines\n", pairs, 2 * pairs);
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
	for (i = 0; i < pairs; i++)
		hrtimer_cancel(&w->pair[i].timer);
	irq_work_sync(&w->irq_work);

	gpiochip_remove(&w->gc);
	wire_free(w);
}

module_init(wire_init);
module_exit(wire_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("GPIO chip with lines wired in pairs, edge interrupts and programmable delays (irqloop testbed)");
