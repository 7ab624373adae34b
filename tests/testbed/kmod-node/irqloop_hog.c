// SPDX-License-Identifier: GPL-2.0
/*
 * irqloop_hog: a testbed stand-in (not shipped) that injects a known cause of latency for
 * irqloop explain on one chosen CPU, busy-waiting busy_us (on sched_clock(), at the trace
 * clock's rate) every period_us:
 *
 *   mode=softirq  a tasklet (TASKLET_SOFTIRQ, "irq:softirq_entry vec=6") raised from a hard
 *                 hrtimer pinned to the CPU; it re-arms the timer when it ends;
 *   mode=rt       a SCHED_FIFO kthread of priority prio (default 60, above the 50 of an IRQ
 *                 thread), bound to the CPU, spinning with interrupts on and preemption on;
 *   mode=irqsoff  the same kthread (prio default 90, above the logger's sampler) spinning
 *                 inside local_irq_save()/local_irq_restore().
 *
 * The next run is due period_us after the end of the last one, not on a fixed grid: a vCPU
 * the host stalls gets its own pace back, never a backlog of runs. fired counts the runs,
 * overran those longer than busy_us + 10 % (under QEMU's TCG the loop ends late when the host
 * stalls the vCPU), longest_ns is the longest run (on sched_clock()).
 */
#include <linux/hrtimer.h>
#include <linux/interrupt.h>
#include <linux/kthread.h>
#include <linux/module.h>
#include <linux/sched.h>
#include <linux/sched/clock.h>
#include <linux/sched/types.h>
#include <linux/smp.h>
#include <uapi/linux/sched.h>
#include <uapi/linux/sched/types.h>

#include "irqloop_compat.h"

static char *mode = "softirq";
module_param(mode, charp, 0444);
MODULE_PARM_DESC(mode, "softirq, rt or irqsoff");
static unsigned int cpu;
module_param(cpu, uint, 0444);
MODULE_PARM_DESC(cpu, "CPU the hog runs on");
static unsigned int period_us = 5000;
module_param(period_us, uint, 0444);
MODULE_PARM_DESC(period_us, "time from the end of one run to the start of the next (100 to 1000000)");
static unsigned int busy_us = 1000;
module_param(busy_us, uint, 0444);
MODULE_PARM_DESC(busy_us, "how long each run busy-waits (at most 10000)");
static unsigned int prio;
module_param(prio, uint, 0444);
MODULE_PARM_DESC(prio, "SCHED_FIFO priority of the kthread (rt: 60, irqsoff: 90 by default)");
static unsigned long fired;
module_param(fired, ulong, 0444);
MODULE_PARM_DESC(fired, "the runs so far");
static unsigned long overran;
module_param(overran, ulong, 0444);
MODULE_PARM_DESC(overran, "runs longer than busy_us + 10 % (the CPU was stalled under the loop)");
static unsigned long longest_ns;
module_param(longest_ns, ulong, 0444);
MODULE_PARM_DESC(longest_ns, "the longest run so far, on sched_clock()");

enum hog_mode { HOG_SOFTIRQ, HOG_RT, HOG_IRQSOFF };
static enum hog_mode hog_mode;
static struct hrtimer hog_timer;
static struct tasklet_struct hog_tasklet;
static struct task_struct *hog_thread;
static bool hog_stopping;

/*
 * One run: busy_us on sched_clock(), not udelay() (a calibrated loop runs 1x to 5x under TCG),
 * and not local_clock(), the trace clock, although it runs at sched_clock()'s rate: where the
 * kernel does not trust the TSC to be stable (as under QEMU's TCG), local_clock() is clamped to
 * one tick past the last tick's time, so with interrupts off (no tick) it stops, and a loop
 * waiting on it for more than what is left of the tick never ends.
 */
static void hog_spin(void)
{
	const u64 start = sched_clock(), end = start + (u64)busy_us * NSEC_PER_USEC;
	u64 now, ran;

	while ((now = sched_clock()) < end)
		cpu_relax();
	ran = now - start;
	if (ran > (u64)busy_us * NSEC_PER_USEC * 11 / 10)
		WRITE_ONCE(overran, overran + 1);
	if (ran > longest_ns)
		WRITE_ONCE(longest_ns, ran);
	WRITE_ONCE(fired, fired + 1);
}

static void hog_tasklet_fn(struct tasklet_struct *t)
{
	hog_spin();
	/* On the same CPU (the tasklet runs where it was scheduled), period_us from now. */
	if (!READ_ONCE(hog_stopping))
		hrtimer_start(&hog_timer, ns_to_ktime((u64)period_us * NSEC_PER_USEC),
			      HRTIMER_MODE_REL_PINNED_HARD);
}

static enum hrtimer_restart hog_tick(struct hrtimer *t)
{
	tasklet_schedule(&hog_tasklet);
	return HRTIMER_NORESTART;
}

static void hog_softirq_start(void *unused)
{
	hrtimer_start(&hog_timer, ns_to_ktime((u64)period_us * NSEC_PER_USEC),
		      HRTIMER_MODE_REL_PINNED_HARD);
}

static int hog_thread_fn(void *unused)
{
	struct sched_attr attr = {
		.size = sizeof(attr),
		.sched_policy = SCHED_FIFO,
		.sched_priority = prio,
	};
	unsigned long flags;
	int ret = sched_setattr_nocheck(current, &attr);

	if (ret)
		pr_warn("irqloop_hog: SCHED_FIFO %u: error %d\n", prio, ret);
	while (!kthread_should_stop()) {
		ktime_t wait = ns_to_ktime((u64)period_us * NSEC_PER_USEC);

		if (hog_mode == HOG_IRQSOFF) {
			local_irq_save(flags);
			hog_spin();
			local_irq_restore(flags);
		} else {
			hog_spin();
		}
		set_current_state(TASK_INTERRUPTIBLE);
		if (!kthread_should_stop())
			schedule_hrtimeout(&wait, HRTIMER_MODE_REL);
		__set_current_state(TASK_RUNNING);
	}
	return 0;
}

static int __init hog_init(void)
{
	if (!strcmp(mode, "softirq"))
		hog_mode = HOG_SOFTIRQ;
	else if (!strcmp(mode, "rt"))
		hog_mode = HOG_RT;
	else if (!strcmp(mode, "irqsoff"))
		hog_mode = HOG_IRQSOFF;
	else {
		pr_err("irqloop_hog: mode '%s': not softirq, rt or irqsoff\n", mode);
		return -EINVAL;
	}
	if (!prio)
		prio = hog_mode == HOG_IRQSOFF ? 90 : 60;
	if (busy_us == 0 || busy_us > 10000 || period_us < 100 || period_us > 1000000 ||
	    prio > 99 || cpu >= nr_cpu_ids || !cpu_online(cpu)) {
		pr_err("irqloop_hog: busy_us %u, period_us %u, prio %u, cpu %u: busy_us 1 to 10000, period_us 100 to 1000000, prio 1 to 99, on an online CPU\n",
		       busy_us, period_us, prio, cpu);
		return -EINVAL;
	}
	if (hog_mode == HOG_SOFTIRQ) {
		tasklet_setup(&hog_tasklet, hog_tasklet_fn);
		irqloop_hrtimer_setup(&hog_timer, hog_tick, CLOCK_MONOTONIC,
				      HRTIMER_MODE_REL_PINNED_HARD);
		smp_call_function_single(cpu, hog_softirq_start, NULL, 1);
	} else {
		hog_thread = kthread_create_on_cpu(hog_thread_fn, NULL, cpu, "irqloop_hog/%u");
		if (IS_ERR(hog_thread))
			return PTR_ERR(hog_thread);
		wake_up_process(hog_thread);
	}
	pr_info("irqloop_hog: mode %s, %u us every %u us on CPU %u%s\n", mode, busy_us,
		period_us, cpu, hog_mode == HOG_SOFTIRQ ? "" : ", SCHED_FIFO");
	return 0;
}

static void __exit hog_exit(void)
{
	if (hog_mode == HOG_SOFTIRQ) {
		WRITE_ONCE(hog_stopping, true);
		/* The tasklet may re-arm the timer once more: cancel until neither is pending. */
		do {
			hrtimer_cancel(&hog_timer);
			tasklet_kill(&hog_tasklet);
		} while (hrtimer_active(&hog_timer));
	} else {
		kthread_stop(hog_thread);
	}
	pr_info("irqloop_hog: unloaded, %lu runs\n", fired);
}

module_init(hog_init);
module_exit(hog_exit);
MODULE_DESCRIPTION("irqloop testbed: a softirq, RT thread or IRQs-off hog on a chosen CPU");
MODULE_LICENSE("GPL");
