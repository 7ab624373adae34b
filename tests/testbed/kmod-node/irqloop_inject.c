// SPDX-License-Identifier: GPL-2.0
/*
 * irqloop_inject: a testbed stand-in (not shipped) that injects a known cause of latency for
 * irqloop explain: another device's interrupt with a long handler.
 *
 * It drives one end of a wire of the irqloop-wire chip (out, offset 4 by default) and takes the
 * edge interrupt of the other end (in, offset 5), named "irqloop_inject" in /proc/interrupts.
 * A hard hrtimer pinned to one CPU toggles the wire every period_us; the chip raises the edge
 * on the CPU that made it, so the handler runs on that CPU too, and busy-waits busy_us there
 * (on local_clock(), the trace clock) with interrupts off: whatever interrupt comes due on that
 * CPU meanwhile (the responder's, on a delayed wire) waits for it. fired counts the handler's
 * runs; overran those that ran longer than busy_us + 10 % (under QEMU's TCG the loop ends late
 * when the host stalls the vCPU); longest_ns is the longest run.
 */
#include <linux/gpio/consumer.h>
#include <linux/gpio/machine.h>
#include <linux/hrtimer.h>
#include <linux/interrupt.h>
#include <linux/module.h>
#include <linux/platform_device.h>
#include <linux/sched/clock.h>
#include <linux/smp.h>

#include "irqloop_compat.h"

static char *chip = "irqloop-wire";
module_param(chip, charp, 0444);
MODULE_PARM_DESC(chip, "label of the chip carrying the wire");
static unsigned int out_line = 4;
module_param(out_line, uint, 0444);
MODULE_PARM_DESC(out_line, "offset driven by the timer");
static unsigned int in_line = 5;
module_param(in_line, uint, 0444);
MODULE_PARM_DESC(in_line, "offset whose edge interrupt is taken (the other end of out's wire)");
static unsigned int cpu;
module_param(cpu, uint, 0444);
MODULE_PARM_DESC(cpu, "CPU the timer, and so the handler, runs on");
static unsigned int period_us = 20000;
module_param(period_us, uint, 0444);
MODULE_PARM_DESC(period_us, "time between two injected interrupts");
static unsigned int busy_us = 1000;
module_param(busy_us, uint, 0444);
MODULE_PARM_DESC(busy_us, "how long the handler busy-waits (at most 10000)");
static unsigned long fired;
module_param(fired, ulong, 0444);
MODULE_PARM_DESC(fired, "the handler's runs so far");
static unsigned long overran;
module_param(overran, ulong, 0444);
MODULE_PARM_DESC(overran, "runs longer than busy_us + 10 % (the CPU was stalled under the loop)");
static unsigned long longest_ns;
module_param(longest_ns, ulong, 0444);
MODULE_PARM_DESC(longest_ns, "the longest run so far, on local_clock()");

static struct platform_device *inject_pdev;
static struct gpiod_lookup_table *inject_lookup;
static struct gpio_desc *inject_out, *inject_in;
static struct hrtimer inject_timer;
static int inject_irq = -1;
static bool inject_level;

/*
 * Busy-waits on local_clock(), the trace's clock, not udelay(): under QEMU's TCG a calibrated
 * delay loop runs from 1x to 5x its length, and the injected length must be what is known.
 */
static irqreturn_t inject_handler(int irq, void *data)
{
	const u64 start = local_clock(), end = start + (u64)busy_us * NSEC_PER_USEC;
	u64 now, ran;

	while ((now = local_clock()) < end)
		cpu_relax();
	ran = now - start;
	if (ran > (u64)busy_us * NSEC_PER_USEC * 11 / 10)
		WRITE_ONCE(overran, overran + 1);
	if (ran > longest_ns)
		WRITE_ONCE(longest_ns, ran);
	WRITE_ONCE(fired, fired + 1);
	return IRQ_HANDLED;
}

static enum hrtimer_restart inject_tick(struct hrtimer *t)
{
	inject_level = !inject_level;
	gpiod_set_value(inject_out, inject_level);
	hrtimer_forward_now(t, ns_to_ktime((u64)period_us * NSEC_PER_USEC));
	return HRTIMER_RESTART;
}

/* On the chosen CPU: a pinned timer stays there. */
static void inject_start(void *unused)
{
	hrtimer_start(&inject_timer, ns_to_ktime((u64)period_us * NSEC_PER_USEC),
		      HRTIMER_MODE_REL_PINNED_HARD);
}

static void inject_release(void)
{
	if (inject_irq >= 0)
		free_irq(inject_irq, NULL);
	if (!IS_ERR_OR_NULL(inject_in))
		gpiod_put(inject_in);
	if (!IS_ERR_OR_NULL(inject_out))
		gpiod_put(inject_out);
	if (!IS_ERR_OR_NULL(inject_pdev))
		platform_device_unregister(inject_pdev);
	if (inject_lookup) {
		gpiod_remove_lookup_table(inject_lookup);
		kfree(inject_lookup);
	}
}

static int __init inject_init(void)
{
	int ret;

	if (busy_us > 10000 || period_us <= busy_us || cpu >= nr_cpu_ids || !cpu_online(cpu)) {
		pr_err("irqloop_inject: busy_us %u, period_us %u, cpu %u: busy_us at most 10000, below period_us, on an online CPU\n",
		       busy_us, period_us, cpu);
		return -EINVAL;
	}
	inject_lookup = kzalloc(struct_size(inject_lookup, table, 3), GFP_KERNEL);
	if (!inject_lookup)
		return -ENOMEM;
	inject_lookup->dev_id = "irqloop-inject";
	inject_lookup->table[0] =
		(struct gpiod_lookup)GPIO_LOOKUP(chip, out_line, "out", GPIO_ACTIVE_HIGH);
	inject_lookup->table[1] =
		(struct gpiod_lookup)GPIO_LOOKUP(chip, in_line, "in", GPIO_ACTIVE_HIGH);
	gpiod_add_lookup_table(inject_lookup);
	inject_pdev = platform_device_register_simple("irqloop-inject", -1, NULL, 0);
	if (IS_ERR(inject_pdev)) {
		ret = PTR_ERR(inject_pdev);
		goto fail;
	}
	inject_out = gpiod_get(&inject_pdev->dev, "out", GPIOD_OUT_LOW);
	if (IS_ERR(inject_out)) {
		ret = PTR_ERR(inject_out);
		pr_err("irqloop_inject: out (%s %u): error %d\n", chip, out_line, ret);
		goto fail;
	}
	inject_in = gpiod_get(&inject_pdev->dev, "in", GPIOD_IN);
	if (IS_ERR(inject_in)) {
		ret = PTR_ERR(inject_in);
		pr_err("irqloop_inject: in (%s %u): error %d\n", chip, in_line, ret);
		goto fail;
	}
	ret = gpiod_to_irq(inject_in);
	if (ret < 0)
		goto fail;
	ret = request_irq(ret, inject_handler, IRQF_TRIGGER_RISING | IRQF_TRIGGER_FALLING,
			  "irqloop_inject", NULL);
	if (ret)
		goto fail;
	inject_irq = gpiod_to_irq(inject_in);
	irqloop_hrtimer_setup(&inject_timer, inject_tick, CLOCK_MONOTONIC,
			      HRTIMER_MODE_REL_PINNED_HARD);
	ret = smp_call_function_single(cpu, inject_start, NULL, 1);
	if (ret)
		goto fail;
	pr_info("irqloop_inject: irq %d, a %u us handler every %u us on CPU %u\n", inject_irq,
		busy_us, period_us, cpu);
	return 0;
fail:
	inject_release();
	return ret;
}

static void __exit inject_exit(void)
{
	hrtimer_cancel(&inject_timer);
	inject_release();
	pr_info("irqloop_inject: unloaded, %lu interrupts handled\n", fired);
}

module_init(inject_init);
module_exit(inject_exit);
MODULE_DESCRIPTION("irqloop testbed: another interrupt with a long handler, at a chosen period");
MODULE_LICENSE("GPL");
