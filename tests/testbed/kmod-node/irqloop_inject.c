// SPDX-License-Identifier: GPL-2.0
/*
 * irqloop_inject: a testbed stand-in (not shipped) that injects a known cause of latency for
 * irqloop explain: another device's interrupt with a long handler.
 *
 * It drives one end of a wire of the irqloop-wire chip (out, offset 4 by default) and takes the
 * edge interrupt of the other end (in, offset 5), named "irqloop_inject" in /proc/interrupts.
 * A hard hrtimer pinned to one CPU toggles the wire every period_us; the chip raises the edge
 * on the CPU that made it, so the handler runs on that CPU too, and busy-waits busy_us there
 * (on sched_clock(), which the trace's "local" clock reads) with interrupts off: whatever
 * interrupt comes due on that CPU meanwhile (the responder's, on a delayed wire) waits for it.
 * fired counts the handler's runs; overran those that ran longer than busy_us + 10 % (under
 * QEMU's TCG the loop ends late when the host stalls the vCPU); longest_ns is the longest run;
 * cut the runs ended by the bound (below).
 *
 * burst=N makes each period a burst of N interrupts back to back: the timer raises the first
 * edge, and each handler, once its busy-wait is over, toggles the wire again, so the next edge's
 * interrupt comes due as the handler returns (the chip raises it from irq_work on the same CPU).
 * A window that holds the whole burst sees N handlers of busy_us each, N * busy_us in all.
 *
 * PREEMPT_RT threads the handler (its busy-wait then runs in irq/N-irqloop_inject, which a hard
 * handler preempts) unless nothread=1 asks for IRQF_NO_THREAD, as a device whose handler must
 * stay in hard interrupt context does (a timer's, an IPI's): then it holds off the CPU's other
 * interrupts there too. On a stock kernel nothread=1 changes nothing (but with threadirqs).
 */
#include <linux/gpio/consumer.h>
#include <linux/gpio/machine.h>
#include <linux/hrtimer.h>
#include <linux/interrupt.h>
#include <linux/module.h>
#include <linux/platform_device.h>
#include <linux/sched/clock.h>
#include <linux/smp.h>
#include <linux/timekeeping.h>

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
static unsigned int burst = 1;
module_param(burst, uint, 0444);
MODULE_PARM_DESC(burst, "interrupts per period, back to back, each busy_us long (1 to 64)");
static bool nothread;
module_param(nothread, bool, 0444);
MODULE_PARM_DESC(nothread, "IRQF_NO_THREAD: the handler in hard interrupt context on PREEMPT_RT too");
static unsigned long fired;
module_param(fired, ulong, 0444);
MODULE_PARM_DESC(fired, "the handler's runs so far");
static unsigned long overran;
module_param(overran, ulong, 0444);
MODULE_PARM_DESC(overran, "runs longer than busy_us + 10 % (the CPU was stalled under the loop)");
static unsigned long longest_ns;
module_param(longest_ns, ulong, 0444);
MODULE_PARM_DESC(longest_ns, "the longest run so far, on sched_clock()");
static unsigned long cut;
module_param(cut, ulong, 0444);
MODULE_PARM_DESC(cut, "runs ended by the bound: sched_clock() stood still for 10 x busy_us");

static struct platform_device *inject_pdev;
static struct gpiod_lookup_table *inject_lookup;
static struct gpio_desc *inject_out, *inject_in;
static struct hrtimer inject_timer;
static int inject_irq = -1;
static bool inject_level;
static unsigned int inject_left; /* interrupts of the current burst still to raise */

/*
 * Busy-waits on sched_clock(), which the trace's default "local" clock reads, not udelay():
 * under QEMU's TCG a calibrated delay loop runs from 1x to 5x its length, and the injected
 * length must be what is known. Not on local_clock(): once the kernel finds the TSC unstable (a
 * guest with two vCPUs on a busy host does, at boot), local_clock() is clamped to one tick past
 * this CPU's last tick, and with interrupts off no tick comes: a wait that began late in a tick
 * never ended, and the CPU stayed in this handler for good (the RCU stall that kept explain-irq
 * from ending). The comparison is signed (a clock that steps back lengthens the wait, never
 * ends it), and the clocksource (ktime_get_mono_fast_ns(), safe here, slow to read under TCG:
 * checked now and then) bounds the wait at 10 x busy_us should sched_clock() stand still; such
 * runs count in cut.
 */
static irqreturn_t inject_handler(int irq, void *data)
{
	const s64 busy_ns = (s64)busy_us * NSEC_PER_USEC;
	const u64 start = sched_clock(), bound = ktime_get_mono_fast_ns() + 10 * busy_ns;
	unsigned int spins = 0;
	u64 now;
	s64 ran;

	while ((s64)((now = sched_clock()) - start) < busy_ns) {
		/* sched_clock() again past the bound: the host may stall the vCPU in between. */
		if (!(++spins % 1024) && ktime_get_mono_fast_ns() > bound &&
		    (s64)((now = sched_clock()) - start) < busy_ns) {
			WRITE_ONCE(cut, cut + 1);
			break;
		}
		cpu_relax();
	}
	ran = now - start;
	if (ran > busy_ns * 11 / 10)
		WRITE_ONCE(overran, overran + 1);
	if (ran > 0 && (u64)ran > longest_ns)
		WRITE_ONCE(longest_ns, ran);
	WRITE_ONCE(fired, fired + 1);
	if (inject_left) {
		inject_left--;
		inject_level = !inject_level;
		gpiod_set_value(inject_out, inject_level);
	}
	return IRQ_HANDLED;
}

static enum hrtimer_restart inject_tick(struct hrtimer *t)
{
	inject_left = burst - 1;
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

	if (busy_us > 10000 || burst < 1 || burst > 64 || period_us <= (u64)busy_us * burst ||
	    cpu >= nr_cpu_ids || !cpu_online(cpu)) {
		pr_err("irqloop_inject: busy_us %u, burst %u, period_us %u, cpu %u: busy_us at most 10000, burst 1 to 64, burst * busy_us below period_us, on an online CPU\n",
		       busy_us, burst, period_us, cpu);
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
	ret = request_irq(ret, inject_handler,
			  IRQF_TRIGGER_RISING | IRQF_TRIGGER_FALLING | (nothread ? IRQF_NO_THREAD : 0),
			  "irqloop_inject", NULL);
	if (ret)
		goto fail;
	inject_irq = gpiod_to_irq(inject_in);
	irqloop_hrtimer_setup(&inject_timer, inject_tick, CLOCK_MONOTONIC,
			      HRTIMER_MODE_REL_PINNED_HARD);
	ret = smp_call_function_single(cpu, inject_start, NULL, 1);
	if (ret)
		goto fail;
	pr_info("irqloop_inject: irq %d, %u x a %u us handler every %u us on CPU %u%s\n",
		inject_irq, burst, busy_us, period_us, cpu, nothread ? ", not threaded" : "");
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
