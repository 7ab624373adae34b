// SPDX-License-Identifier: GPL-2.0
/*
 * irqloop_responder: the target end of an irqloop measurement, in the kernel.
 *
 * The logger toggles a stimulus line and busy-waits for the response line to
 * change. This module answers every stimulus edge by toggling the response
 * line from its interrupt handler, so the measured path is: pin, interrupt
 * controller, entry code, this handler, the output write. Scheduler wake-up is
 * not on it (unless the SoC's GPIO parent interrupt is threaded, or threaded=1
 * asks for it: the handler context actually used is reported).
 *
 * Two ways to describe the wiring, one platform driver behind both:
 *  - device tree: a node compatible "irqloop,responder" with in-gpios,
 *    out-gpios, optional trigger-gpios, pinctrl and irqloop,edge (see dts/
 *    for overlays and the binding); load with no line parameters. Policy is
 *    not the board's: threaded=1 and force=1 are module parameters on this
 *    route too (irqloop,threaded, the property they replace, is still read
 *    for one release, with a warning);
 *  - module parameters (boards without device tree, x86):
 *      in=<line> out=<line> [edge=both|rising|falling] [threaded=1] [force=1]
 *    where <line> is <chip label>:<offset> or a line name (in=GPIO17). The
 *    module then registers its own platform device with a software node
 *    carrying the same properties, and the same probe runs.
 * Parallel port:  parport=<n>  (lpptest wiring: stimulus on nACK, response on
 *                 the data byte, which is inverted on every interrupt)
 * Either mode:    trigger=<line>  (pulled down) a rising edge calls
 *                 tracing_off(), freezing the ftrace ring buffer at the worst
 *                 case the logger has just seen (cyclictest -b, from outside).
 *
 * Read-only attributes of the device (/sys/devices/platform/irqloop_responder/
 * with parameters): handled, spurious, triggered, last_toggle_ns
 * (ktime_get_ns() right after the output write), mode, context (what the
 * handler is expected to run in, decided at load) and context_seen (what it
 * ran in: "hard", "thread <comm>", or "none yet").
 *
 * Trace events (irqloop_trace.h, TRACE_SYSTEM irqloop): irqloop_edge and
 * irqloop_response per edge, irqloop_thread in threaded mode, each with the
 * edge's sequence number (its handled count), for `irqloop explain`.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/device.h>
#include <linux/err.h>
#include <linux/gpio/consumer.h>
#include <linux/gpio/machine.h>
#include <linux/interrupt.h>
#include <linux/kernel.h>
#include <linux/ktime.h>
#include <linux/mod_devicetable.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/pinctrl/pinconf-generic.h>
#include <linux/platform_device.h>
#include <linux/property.h>
#include <linux/regmap.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/version.h>
#include <linux/string.h>
#include <linux/workqueue.h>

#include "irqloop_compat.h"

#define CREATE_TRACE_POINTS
#include "irqloop_trace.h"

#if IS_ENABLED(CONFIG_PARPORT) && !defined(IRQLOOP_NO_PARPORT)
#define IRQLOOP_HAVE_PARPORT 1
#include <linux/parport.h>
#endif

#define IRQLOOP_NAME "irqloop_responder"
/* The trigger line's interrupt, apart from the answered one in /proc/interrupts and traces. */
#define IRQLOOP_TRIGGER_NAME "irqloop_trigger"
#define IRQLOOP_LABEL_MAX 64

/* A read-only string parameter NAME, held in param_NAME. */
#define IRQLOOP_STRING_PARAM(name, desc)                                                           \
	static char *param_##name;                                                                 \
	module_param_named(name, param_##name, charp, 0444);                                       \
	MODULE_PARM_DESC(name, desc)

IRQLOOP_STRING_PARAM(in, "stimulus input line: <chip label>:<offset> or a line name (GPIO mode)");
IRQLOOP_STRING_PARAM(out, "response output line: <chip label>:<offset> or a line name (GPIO mode)");
IRQLOOP_STRING_PARAM(edge, "stimulus edges answered: both (default), rising or falling");
IRQLOOP_STRING_PARAM(trigger, "optional input (pulled down): a rising edge calls tracing_off()");

static int param_parport = -1;
module_param_named(parport, param_parport, int, 0444);
MODULE_PARM_DESC(parport, "parallel-port mode: answer nACK on parport<n> by inverting the data byte (default -1: GPIO mode)");

static bool param_threaded;
module_param_named(threaded, param_threaded, bool, 0444);
MODULE_PARM_DESC(threaded, "answer from a threaded handler (what a forced-threaded SoC gives anyway) instead of hard IRQ; applies to device-tree nodes too");

static bool param_force;
module_param_named(force, param_force, bool, 0444);
MODULE_PARM_DESC(force, "on PREEMPT_RT, allow hard-IRQ mode on a controller not known to be raw-safe; applies to device-tree nodes too");

/*
 * GPIO controllers by driver name (or chip label, for a chip without a parent
 * device). raw_safe: get() and set() take no lock that sleeps on PREEMPT_RT
 * (raw spinlocks or none). threaded_parent: the controller's own interrupt is
 * an ordinary handler, forced into a thread on PREEMPT_RT, so our handler then
 * runs in that thread. Reasoning per driver in docs/backends/kernel-responder.md.
 */
struct irqloop_known_chip {
	const char *name;
	bool raw_safe;
	bool threaded_parent;
};

static const struct irqloop_known_chip irqloop_known_chips[] = {
	{ "pinctrl-bcm2835", true, false },	/* Pi 1-4: direct GPSET/GPCLR writes */
	/*
	 * Pi 5 RP1: the Raspberry Pi kernel's driver writes the SET/CLR aliases
	 * with writel(): raw-safe. Mainline's driver of the same name goes
	 * through an MMIO regmap (a spinlock_t), also from its interrupt chip:
	 * told apart by its regmap and refused on RT (irqloop_rp1_check()).
	 */
	{ "pinctrl-rp1", true, false },
	{ "basic-mmio-gpio", true, false },	/* gpio-mmio: bgpio raw spinlock */
	{ "gpio-dwapb", true, false },		/* bgpio set(), chained parent */
	{ "omap_gpio", true, true },		/* raw lock; bank IRQ request_irq() */
	/*
	 * raw lock. Its shared parent interrupt is forced into a thread unless it
	 * was requested with IRQF_ONESHOT: up to 6.7 it asks IRQF_SHARED (thread),
	 * 6.8 added IRQF_ONESHOT (never force-threaded: hard), and 6.9 (and later
	 * 6.8 stable releases) replaced it with IRQF_COND_ONESHOT (thread again).
	 * A 6.8 stable kernel may hold either: the first edge's context says.
	 */
	{ "amd_gpio", true, LINUX_VERSION_CODE < KERNEL_VERSION(6, 8, 0) ||
			    LINUX_VERSION_CODE >= KERNEL_VERSION(6, 9, 0) },
	{ "mvebu-gpio", false, false },		/* regmap with a spinlock_t */
	{ "irqloop-wire", true, false },	/* the testbed chip: raw spinlock */
};

/* Intel pinctrl drivers ("<platform>-pinctrl") all use pinctrl-intel's raw lock. */
static const char *const irqloop_intel_pinctrl[] = {
	"alderlake", "broxton", "cannonlake", "cedarfork", "denverton",
	"elkhartlake", "emmitsburg", "geminilake", "icelake", "jasperlake",
	"lakefield", "lewisburg", "meteorlake", "sunrisepoint", "tigerlake",
};

/* A line as configured, and what we hold of it. */
struct irqloop_line {
	const char *con_id;		/* "in", "out", "trigger" */
	const char *spec;		/* the parameter or firmware node path */
	char key[IRQLOOP_LABEL_MAX];	/* chip label, or line name */
	unsigned int offset;		/* U16_MAX: key is a line name */
	struct gpio_desc *desc;		/* devm: put after remove() */
	int irq;			/* devm: freed after remove(), before desc */
	char controller[IRQLOOP_LABEL_MAX];	/* driver name or chip label */
};

enum irqloop_ctx { CTX_HARD, CTX_THREADED, CTX_PARENT_THREAD };

static const char *const irqloop_ctx_names[] = {
	[CTX_HARD] = "hard",
	[CTX_THREADED] = "threaded (threaded=1)",
	[CTX_PARENT_THREAD] = "forced-threaded (the GPIO controller's parent interrupt is a thread)",
};

/*
 * One bound responder: allocated by probe with devm_kzalloc(), so every bind
 * starts from zeroed counters, and freed (with its lines and interrupts) when
 * the device is unbound.
 */
struct irqloop_responder {
	struct device *dev;		/* the bound device, either route */
	bool params;			/* our own device (module parameters) */
	bool at_load;			/* probed from init: refusals are init's */
	bool pp_mode;			/* parport=<n> */
	struct irqloop_line in, out, trigger;
	unsigned long irq_flags;
	bool threaded;
	bool cansleep;			/* threaded mode on a sleeping chip */
	enum irqloop_ctx ctx;
	int out_level;			/* level last written to out */
	int in_level;			/* level of in seen by the last interrupt */
	atomic_long_t handled;
	atomic_long_t spurious;
	atomic_long_t triggered;
	atomic64_t last_toggle_ns;
	atomic_t seen;			/* 0: no edge yet; 1: context recorded */
	bool seen_hard;
	char seen_comm[TASK_COMM_LEN];
	struct work_struct seen_work;
#ifdef IRQLOOP_HAVE_PARPORT
	struct parport *port;
	struct pardevice *pardev;
	bool claimed;
	u8 data;
#endif
};

/*
 * The module-parameter route: the lines init parsed, the lookup table and
 * the platform device it registered, and the probe's result for init.
 */
static struct {
	bool params;			/* loaded with line parameters */
	bool loading;			/* init is registering its device */
	bool pp_registered;		/* the parport driver (parport=<n>) */
	struct irqloop_line in, out, trigger;
	struct gpiod_lookup_table *lookup;
	struct platform_device *pdev;
	int probe_err;
} irqloop_cfg;

static DEFINE_MUTEX(irqloop_lock);	/* one responder at a time */
static struct irqloop_responder *irqloop_active;	/* the bound one, or NULL */

/*
 * A refusal in probe. Loading with parameters, the line is ours
 * ("irqloop_responder: ...") and init fails the load with it; otherwise
 * (a device-tree node, or our own device bound again through sysfs) it goes
 * through dev_err_probe(), so that a deferral is recorded as the reason
 * /sys/kernel/debug/devices_deferred shows.
 */
#define irqloop_refuse(r, err, fmt, ...)                                                           \
	((r)->at_load ? (pr_err(fmt, ##__VA_ARGS__), (err)) :                                      \
			dev_err_probe((r)->dev, (err), fmt, ##__VA_ARGS__))

/* Which context the first answered edge ran in: told once, from process context. */
static void irqloop_seen_work(struct work_struct *work)
{
	struct irqloop_responder *r = container_of(work, struct irqloop_responder,
						   seen_work);
	bool thread_expected = r->ctx != CTX_HARD;

	if (r->seen_hard)
		pr_info("first edge answered in hard interrupt context%s\n",
			thread_expected ? " (not the thread expected at load)" : "");
	else
		pr_info("first edge answered in thread '%s'%s\n", r->seen_comm,
			thread_expected ? "" :
			" (the GPIO controller's parent interrupt is threaded: the measurement includes its wake-up)");
}

/* In the handler, first edge only: where are we running? */
static inline void irqloop_note_context(struct irqloop_responder *r)
{
	if (likely(atomic_read(&r->seen)))
		return;
	r->seen_hard = in_hardirq();
	if (!r->seen_hard)
		memcpy(r->seen_comm, current->comm, sizeof(r->seen_comm));
	if (!atomic_cmpxchg(&r->seen, 0, 1))
		schedule_work(&r->seen_work);
}

/*
 * The answer. Output first, bookkeeping after, off the measured path. On
 * PREEMPT_RT in hard mode this runs with IRQF_NO_THREAD, so the chip's set()
 * must take no sleeping lock: checked at load (irqloop_rt_check()).
 */
static void irqloop_answer(struct irqloop_responder *r)
{
	/* The handler never runs twice at once for one line: handled is ours. */
	u64 seq = (u64)atomic_long_read(&r->handled) + 1;
	int level;

	r->out_level = !r->out_level;
	if (r->cansleep)
		gpiod_set_value_cansleep(r->out.desc, r->out_level);
	else
		gpiod_set_value(r->out.desc, r->out_level);
	trace_irqloop_response(seq, r->out_level);
	atomic64_set(&r->last_toggle_ns, ktime_get_ns());
	atomic_long_inc(&r->handled);
	irqloop_note_context(r);

	/*
	 * The logger waits for the response before the next stimulus, so the
	 * input is stable here. A level that does not match the edge we asked
	 * for (or, with both edges, repeats the previous one) means a glitch,
	 * a missed edge, or an interrupt without an edge. The trigger flags
	 * name physical edges, so the level compared is the physical one: the
	 * raw value, whatever GPIO_ACTIVE_LOW the device tree gives in-gpios
	 * (the logical value would count every edge of an active-low input
	 * as spurious).
	 */
	level = r->cansleep ? gpiod_get_raw_value_cansleep(r->in.desc) :
			      gpiod_get_raw_value(r->in.desc);
	if (level >= 0) {
		bool ok;

		if (r->irq_flags == IRQF_TRIGGER_RISING)
			ok = level == 1;
		else if (r->irq_flags == IRQF_TRIGGER_FALLING)
			ok = level == 0;
		else
			ok = level != r->in_level;
		if (!ok)
			atomic_long_inc(&r->spurious);
		r->in_level = level;
	}
}

/* The edge's sequence number: the handled count it will make. */
static inline u64 irqloop_next_seq(struct irqloop_responder *r)
{
	return (u64)atomic_long_read(&r->handled) + 1;
}

/*
 * Hard mode. The input is read for the edge event only while that event is
 * enabled: with tracing off, the measured path is what it always was.
 */
static irqreturn_t irqloop_gpio_irq(int irq, void *data)
{
	struct irqloop_responder *r = data;

	if (trace_irqloop_edge_enabled())
		trace_irqloop_edge(irqloop_next_seq(r),
				   gpiod_get_raw_value(r->in.desc));
	irqloop_answer(r);
	return IRQ_HANDLED;
}

/*
 * Threaded mode's primary handler (hard context: requested IRQF_ONESHOT, so
 * PREEMPT_RT does not force it into a thread of its own): the edge event,
 * then what irq_default_primary_handler() does. The input is not read here:
 * in threaded mode the chip's get() may take a sleeping lock on PREEMPT_RT.
 * A sleeping chip's nested interrupt never calls it: its thread function
 * records the edge instead.
 */
static irqreturn_t irqloop_gpio_primary(int irq, void *data)
{
	trace_irqloop_edge(irqloop_next_seq(data), -1);
	return IRQ_WAKE_THREAD;
}

static irqreturn_t irqloop_gpio_thread(int irq, void *data)
{
	struct irqloop_responder *r = data;

	if (r->cansleep)
		trace_irqloop_edge(irqloop_next_seq(r), -1);
	trace_irqloop_thread(irqloop_next_seq(r));
	irqloop_answer(r);
	return IRQ_HANDLED;
}

static irqreturn_t irqloop_trigger_irq(int irq, void *data)
{
	struct irqloop_responder *r = data;

	tracing_off();
	atomic_long_inc(&r->triggered);
	return IRQ_HANDLED;
}

/* Statistics, as read-only attributes of the device: this bind's. */
static ssize_t handled_show(struct device *dev, struct device_attribute *attr,
			    char *buf)
{
	struct irqloop_responder *r = dev_get_drvdata(dev);

	return sysfs_emit(buf, "%lu\n", atomic_long_read(&r->handled));
}
static DEVICE_ATTR_RO(handled);

static ssize_t spurious_show(struct device *dev, struct device_attribute *attr,
			     char *buf)
{
	struct irqloop_responder *r = dev_get_drvdata(dev);

	return sysfs_emit(buf, "%lu\n", atomic_long_read(&r->spurious));
}
static DEVICE_ATTR_RO(spurious);

static ssize_t triggered_show(struct device *dev, struct device_attribute *attr,
			      char *buf)
{
	struct irqloop_responder *r = dev_get_drvdata(dev);

	return sysfs_emit(buf, "%lu\n", atomic_long_read(&r->triggered));
}
static DEVICE_ATTR_RO(triggered);

static ssize_t last_toggle_ns_show(struct device *dev,
				   struct device_attribute *attr, char *buf)
{
	struct irqloop_responder *r = dev_get_drvdata(dev);

	return sysfs_emit(buf, "%lld\n",
			  (long long)atomic64_read(&r->last_toggle_ns));
}
static DEVICE_ATTR_RO(last_toggle_ns);

static ssize_t mode_show(struct device *dev, struct device_attribute *attr,
			 char *buf)
{
	struct irqloop_responder *r = dev_get_drvdata(dev);

	if (r->pp_mode)
		return sysfs_emit(buf, "parport%d\n", param_parport);
	return sysfs_emit(buf, "gpio in=%s out=%s edge=%s%s\n", r->in.spec,
			  r->out.spec,
			  r->irq_flags == IRQF_TRIGGER_RISING ? "rising" :
			  r->irq_flags == IRQF_TRIGGER_FALLING ? "falling" :
								 "both",
			  r->threaded ? " threaded" : "");
}
static DEVICE_ATTR_RO(mode);

static ssize_t context_show(struct device *dev, struct device_attribute *attr,
			    char *buf)
{
	struct irqloop_responder *r = dev_get_drvdata(dev);

	if (r->pp_mode)
		return sysfs_emit(buf, "parport_pc's handler%s\n",
				  IS_ENABLED(CONFIG_PREEMPT_RT) ?
					  " (forced-threaded on PREEMPT_RT)" : "");
	return sysfs_emit(buf, "%s\n", irqloop_ctx_names[r->ctx]);
}
static DEVICE_ATTR_RO(context);

static ssize_t context_seen_show(struct device *dev,
				 struct device_attribute *attr, char *buf)
{
	struct irqloop_responder *r = dev_get_drvdata(dev);

	/*
	 * Acquire pairs with the handler's fully ordered atomic_cmpxchg() that
	 * publishes seen: seen_hard and seen_comm, written before it, are read
	 * after it (on arm64 a plain read could see them stale).
	 */
	if (!atomic_read_acquire(&r->seen))
		return sysfs_emit(buf, "none yet\n");
	if (r->seen_hard)
		return sysfs_emit(buf, "hard\n");
	return sysfs_emit(buf, "thread %s\n", r->seen_comm);
}
static DEVICE_ATTR_RO(context_seen);

static struct attribute *irqloop_attrs[] = {
	&dev_attr_handled.attr,
	&dev_attr_spurious.attr,
	&dev_attr_triggered.attr,
	&dev_attr_last_toggle_ns.attr,
	&dev_attr_mode.attr,
	&dev_attr_context.attr,
	&dev_attr_context_seen.attr,
	NULL,
};
ATTRIBUTE_GROUPS(irqloop);

/*
 * "<label>:<offset>" or a line name; the label may itself contain ':', the
 * offset may not. Syntax only: the chip and line are gpiod_get()'s business.
 */
static int irqloop_parse_line(struct irqloop_line *l, const char *con_id,
			      const char *spec)
{
	const char *colon = strrchr(spec, ':');
	size_t len = colon ? (size_t)(colon - spec) : strlen(spec);

	l->con_id = con_id;
	l->spec = spec;
	if (!len) {
		pr_err("%s=%s: expected <chip label>:<offset> or a line name, e.g. %s=pinctrl-bcm2711:17 or %s=GPIO17\n",
		       con_id, spec, con_id, con_id);
		return -EINVAL;
	}
	if (len >= sizeof(l->key)) {
		pr_err("%s=%s: chip label or line name longer than %zu characters\n",
		       con_id, spec, sizeof(l->key) - 1);
		return -EINVAL;
	}
	memcpy(l->key, spec, len);
	l->key[len] = '\0';
	if (!colon) {
		l->offset = U16_MAX;
		return 0;
	}
	if (kstrtouint(colon + 1, 10, &l->offset)) {
		pr_err("%s=%s: offset '%s' is not a number\n", con_id, spec,
		       colon + 1);
		return -EINVAL;
	}
	if (l->offset >= U16_MAX) {
		pr_err("%s=%s: offset %u out of range\n", con_id, spec,
		       l->offset);
		return -EINVAL;
	}
	return 0;
}

static int irqloop_parse_edge(const char *edge, unsigned long *flags)
{
	if (!edge || !strcmp(edge, "both"))
		*flags = IRQF_TRIGGER_RISING | IRQF_TRIGGER_FALLING;
	else if (!strcmp(edge, "rising"))
		*flags = IRQF_TRIGGER_RISING;
	else if (!strcmp(edge, "falling"))
		*flags = IRQF_TRIGGER_FALLING;
	else
		return -EINVAL;
	return 0;
}

/* The controller's name, as irqloop_known_chips lists it. */
static void irqloop_name_controller(struct irqloop_line *l)
{
	struct device *ctrl = irqloop_line_controller(l->desc);
	const char *name = NULL;

	if (ctrl && ctrl->driver)
		name = ctrl->driver->name;
	if (!name)
		name = irqloop_line_chip_label(l->desc);
	strscpy(l->controller, name ? name : "?", sizeof(l->controller));
}

static const struct irqloop_known_chip *irqloop_lookup_chip(const char *name)
{
	static struct irqloop_known_chip intel = { "pinctrl-intel", true, false };
	size_t i, n;

	for (i = 0; i < ARRAY_SIZE(irqloop_known_chips); i++)
		if (!strcmp(name, irqloop_known_chips[i].name))
			return &irqloop_known_chips[i];
	for (i = 0; i < ARRAY_SIZE(irqloop_intel_pinctrl); i++) {
		n = strlen(irqloop_intel_pinctrl[i]);
		if (!strncmp(name, irqloop_intel_pinctrl[i], n) &&
		    !strcmp(name + n, "-pinctrl"))
			return &intel;
	}
	return NULL;
}

/*
 * Map gpiod_get()'s error for @l to one line of ours. gpiolib defers
 * (-EPROBE_DEFER) when the chip label or line name is unknown, and says
 * -EINVAL for an offset beyond the chip. Loading with parameters, a missing
 * chip is refused (init must answer now). Otherwise a deferral is real: the
 * controller may still come (a device-tree node's, or, for our own device
 * bound again through sysfs, a chip unloaded meanwhile), so it is passed on
 * with its reason.
 */
static int irqloop_get_error(struct irqloop_responder *r, struct irqloop_line *l, int err)
{
	if (!r->params && err == -EPROBE_DEFER)
		return dev_err_probe(r->dev, err, "%s-gpios: its GPIO controller is not there yet\n",
				     l->con_id);
	if (!r->params)
		return dev_err_probe(r->dev, err, "%s-gpios: cannot request the line (error %d)\n",
				     l->con_id, err);
	if (err == -EPROBE_DEFER && !r->at_load && l->offset == U16_MAX)
		return dev_err_probe(r->dev, err, "%s=%s: no line named '%s' yet: waiting for a chip that carries it\n",
				     l->con_id, l->spec, l->key);
	if (err == -EPROBE_DEFER && !r->at_load)
		return dev_err_probe(r->dev, err, "%s=%s: no gpiochip labelled '%s' yet: waiting for it\n",
				     l->con_id, l->spec, l->key);
	if (err == -EPROBE_DEFER && l->offset == U16_MAX)
		return irqloop_refuse(r, -ENODEV, "%s=%s: no line named '%s' (gpioinfo lists line names)\n",
				      l->con_id, l->spec, l->key);
	if (err == -EPROBE_DEFER || err == -ENOENT)
		return irqloop_refuse(r, -ENODEV, "%s=%s: no gpiochip labelled '%s' (gpiodetect shows labels in brackets)\n",
				      l->con_id, l->spec, l->key);
	if (err == -EINVAL)
		return irqloop_refuse(r, err, "%s=%s: offset %u out of range of chip '%s'\n",
				      l->con_id, l->spec, l->offset, l->key);
	if (err == -EBUSY)
		return irqloop_refuse(r, err, "%s=%s: line in use (gpioinfo names the consumer)\n",
				      l->con_id, l->spec);
	return irqloop_refuse(r, err, "%s=%s: cannot request the line (error %d)\n", l->con_id,
			      l->spec, err);
}

/*
 * Request one line through the consumer API (lookup table or firmware), as
 * an input, or as-is for the output (its direction is set separately, so
 * that a line that cannot drive is told apart from a bad offset). Held
 * until the device is unbound.
 */
static int irqloop_get_line(struct irqloop_responder *r, struct irqloop_line *l,
			    enum gpiod_flags flags)
{
	struct gpio_desc *desc;

	desc = devm_gpiod_get(r->dev, l->con_id, flags);
	if (IS_ERR(desc))
		return irqloop_get_error(r, l, PTR_ERR(desc));
	l->desc = desc;
	/* gpioinfo shows who holds the line, not "in"/"out"/"trigger". */
	gpiod_set_consumer_name(desc, IRQLOOP_NAME);
	irqloop_name_controller(l);
	if (!r->params && !l->spec)
		l->spec = l->con_id;
	if (gpiod_cansleep(desc) && !r->threaded)
		return irqloop_refuse(r, -EINVAL, "%s=%s: lines of '%s' can sleep (I2C/SPI expander?); a hard interrupt handler cannot use them (threaded=1 can)\n",
				      l->con_id, l->spec, l->controller);
	return 0;
}

/*
 * Mainline pinctrl-rp1 on PREEMPT_RT: its regmap's spinlock_t is taken in
 * set(), and in the irq_chip's ack/mask/unmask, which its chained handler
 * calls in hard interrupt context. Its GPIO interrupts cannot work on RT,
 * threaded=1 or not, and force=1 cannot make them: refused, whatever the
 * mode. The Raspberry Pi kernel's driver has no regmap.
 */
static int irqloop_rp1_check(struct irqloop_responder *r, const struct irqloop_line *l)
{
	struct device *ctrl = irqloop_line_controller(l->desc);

	if (!IS_ENABLED(CONFIG_PREEMPT_RT) || strcmp(l->controller, "pinctrl-rp1") ||
	    !ctrl || !dev_get_regmap(ctrl, NULL))
		return 0;
	return irqloop_refuse(r, -EPERM, "%s=%s: PREEMPT_RT: mainline pinctrl-rp1 writes through a regmap whose spinlock_t its interrupt chip takes in hard interrupt context: its GPIO interrupts do not work on PREEMPT_RT, threaded=1 or not (the Raspberry Pi kernel's pinctrl-rp1 writes directly and is accepted)\n",
			      l->con_id, l->spec);
}

/*
 * Hard-IRQ mode on PREEMPT_RT: our handler runs with IRQF_NO_THREAD, so the
 * controller's get() and set() must not take a lock that sleeps there
 * (spinlock_t is an rtmutex on RT). can_sleep=false does not promise that.
 * Only controllers known to be raw-safe are accepted, unless force=1.
 */
static int irqloop_rt_check(struct irqloop_responder *r, const struct irqloop_line *l)
{
	const struct irqloop_known_chip *k = irqloop_lookup_chip(l->controller);

	if (!IS_ENABLED(CONFIG_PREEMPT_RT) || r->threaded)
		return 0;
	if (k && k->raw_safe)
		return 0;
	if (param_force) {
		pr_warn("%s=%s: force=1: hard IRQ on PREEMPT_RT with '%s', whose set() is %s raw-safe\n",
			l->con_id, l->spec, l->controller, k ? "not" : "not known to be");
		return 0;
	}
	return irqloop_refuse(r, -EPERM, "%s=%s: PREEMPT_RT: '%s' is %s take only raw spinlocks in get()/set(), which a hard-IRQ handler needs (threaded=1, or force=1 after checking its source)\n",
			      l->con_id, l->spec, l->controller,
			      k ? "known not to" : "not known to");
}

/* The context our handler will run in, as far as can be known at load. */
static enum irqloop_ctx irqloop_predict_context(const struct irqloop_responder *r)
{
	const struct irqloop_known_chip *k = irqloop_lookup_chip(r->in.controller);

	if (r->threaded)
		return CTX_THREADED;
	/* The threadirqs boot option threads it too: only the first edge shows that. */
	if (k && k->threaded_parent && IS_ENABLED(CONFIG_PREEMPT_RT))
		return CTX_PARENT_THREAD;
	return CTX_HARD;
}

/* The stimulus interrupt, freed when the device is unbound (before its lines). */
static int irqloop_request_irq(struct irqloop_responder *r, struct irqloop_line *l,
			       irq_handler_t handler, unsigned long trigger)
{
	int ret;

	l->irq = gpiod_to_irq(l->desc);
	if (l->irq <= 0) {
		ret = l->irq;
		l->irq = 0;
		return irqloop_refuse(r, -EINVAL, "%s=%s: line has no interrupt (error %d)\n",
				      l->con_id, l->spec, ret);
	}
	if (r->threaded)
		ret = devm_request_threaded_irq(r->dev, l->irq, irqloop_gpio_primary,
						irqloop_gpio_thread, IRQF_ONESHOT | trigger,
						IRQLOOP_NAME, r);
	else
		ret = devm_request_irq(r->dev, l->irq, handler, IRQF_NO_THREAD | trigger,
				       IRQLOOP_NAME, r);
	if (ret)
		return irqloop_refuse(r, ret, "%s=%s: cannot request interrupt %d (error %d)\n",
				      l->con_id, l->spec, l->irq, ret);
	return 0;
}

/* Whether pin control applied a state to @dev (a device-tree node with pinctrl-0). */
static bool irqloop_has_pinctrl(struct device *dev)
{
#ifdef CONFIG_PINCTRL
	return dev->pins != NULL;
#else
	return false;
#endif
}

/* The trigger input: pulled down, so that a floating line cannot fire. */
static int irqloop_trigger_start(struct irqloop_responder *r)
{
	struct irqloop_line *t = &r->trigger;
	int ret;

	ret = irqloop_get_line(r, t, GPIOD_IN);
	if (ret)
		return ret;
	ret = gpiod_set_config(t->desc, PIN_CONF_PACKED(PIN_CONFIG_BIAS_PULL_DOWN, 1));
	if ((ret == -ENOTSUPP || ret == -EOPNOTSUPP) && irqloop_has_pinctrl(r->dev))
		/*
		 * gpio-omap behind pinctrl-single (BeagleBone), among others,
		 * cannot bias from gpiolib: the node's pinctrl state sets the pad,
		 * and the overlays in dts/ pull it down there.
		 */
		pr_info("%s=%s: '%s' leaves bias to the device tree's pinctrl state of %s (the overlays pull the pad down)\n",
			t->con_id, t->spec, t->controller, dev_name(r->dev));
	else if (ret == -ENOTSUPP || ret == -EOPNOTSUPP)
		pr_warn("%s=%s: '%s' cannot pull the line down: wire a pull-down resistor, or a floating trigger may fire\n",
			t->con_id, t->spec, t->controller);
	else if (ret)
		pr_warn("%s=%s: pull-down failed (error %d)\n", t->con_id, t->spec, ret);
	/*
	 * tracing_off() and a counter: no lock, fine in any context. A line of a
	 * sleeping chip (I2C/SPI expander) has a nested threaded interrupt, which
	 * refuses a hard handler; request_any_context_irq() picks what the line
	 * allows.
	 */
	t->irq = gpiod_to_irq(t->desc);
	if (t->irq <= 0) {
		ret = t->irq;
		t->irq = 0;
		return irqloop_refuse(r, -EINVAL, "%s=%s: line has no interrupt (error %d)\n",
				      t->con_id, t->spec, ret);
	}
	ret = devm_request_any_context_irq(r->dev, t->irq, irqloop_trigger_irq,
					   IRQF_TRIGGER_RISING, IRQLOOP_TRIGGER_NAME, r);
	if (ret < 0)
		return irqloop_refuse(r, ret, "%s=%s: cannot request interrupt %d (error %d)\n",
				      t->con_id, t->spec, t->irq, ret);
	return 0;
}

/*
 * GPIO mode's lines and interrupt, and the trigger (either mode). What is
 * got here is devm-managed: a failed probe or an unbind gives it back.
 */
static int irqloop_gpio_start(struct irqloop_responder *r, bool has_trigger)
{
	int ret;

	if (!r->pp_mode) {
		/*
		 * Both lines held, as-is, and every refusal decided before
		 * anything is driven: a refused load leaves the wires as it
		 * found them.
		 */
		ret = irqloop_get_line(r, &r->out, GPIOD_ASIS);
		if (ret)
			return ret;
		ret = irqloop_get_line(r, &r->in, GPIOD_IN);
		if (ret)
			return ret;
		r->cansleep = gpiod_cansleep(r->out.desc) || gpiod_cansleep(r->in.desc);
		ret = irqloop_rp1_check(r, &r->in);
		if (!ret)
			ret = irqloop_rp1_check(r, &r->out);
		if (!ret)
			ret = irqloop_rt_check(r, &r->out);
		if (!ret && strcmp(r->in.controller, r->out.controller))
			ret = irqloop_rt_check(r, &r->in);
		if (ret)
			return ret;
		ret = gpiod_direction_output(r->out.desc, 0);
		if (ret)
			return irqloop_refuse(r, ret, "%s=%s: cannot drive the line as an output (error %d)\n",
					      r->out.con_id, r->out.spec, ret);
		r->ctx = irqloop_predict_context(r);
		r->out_level = 0;
		r->in_level = r->cansleep ? gpiod_get_raw_value_cansleep(r->in.desc) :
					    gpiod_get_raw_value(r->in.desc);
		ret = irqloop_request_irq(r, &r->in, irqloop_gpio_irq, r->irq_flags);
		if (ret)
			return ret;
	}
	if (has_trigger)
		return irqloop_trigger_start(r);
	return 0;
}

#ifdef IRQLOOP_HAVE_PARPORT
/*
 * Called by parport_pc's interrupt handler with the port's cad_lock held,
 * in hard interrupt context on a standard kernel. On PREEMPT_RT the port's
 * own handler is force-threaded (parport_pc does not ask for
 * IRQF_NO_THREAD), so this mode then includes a thread wake-up: see
 * docs/backends/kernel-responder.md.
 */
static void irqloop_pp_irq(void *data)
{
	struct irqloop_responder *r = data;

	u64 seq = irqloop_next_seq(r);

	if (trace_irqloop_edge_enabled())
		trace_irqloop_edge(seq, !!(parport_read_status(r->port) & PARPORT_STATUS_ACK));
	r->data ^= 0xff;
	parport_write_data(r->port, r->data);
	trace_irqloop_response(seq, r->data);
	atomic64_set(&r->last_toggle_ns, ktime_get_ns());
	atomic_long_inc(&r->handled);
	irqloop_note_context(r);
	/* nACK interrupts on its rising edge: the pin must read high now. */
	if (!(parport_read_status(r->port) & PARPORT_STATUS_ACK))
		atomic_long_inc(&r->spurious);
}

static void irqloop_pp_stop(struct irqloop_responder *r)
{
	if (r->claimed) {
		parport_disable_irq(r->port);
		parport_release(r->pardev);
		r->claimed = false;
	}
	if (r->pardev)
		parport_unregister_device(r->pardev);
	r->pardev = NULL;
	if (r->port)
		parport_put_port(r->port);
	r->port = NULL;
}

/*
 * Our device on @port (a reference the caller got, ours from here): named
 * as the parport driver below, which binds it. Claimed for good, nACK
 * interrupt on.
 */
static int irqloop_pp_attach(struct irqloop_responder *r, struct parport *port)
{
	/* Exclusive access is a device flag (PARPORT_DEV_EXCL), not a port one. */
	struct pardev_cb cb = {
		.irq_func = irqloop_pp_irq,
		.private = r,
		.flags = PARPORT_DEV_EXCL,
	};
	int ret;

	r->port = port;
	if (port->irq == PARPORT_IRQ_NONE) {
		ret = irqloop_refuse(r, -EINVAL, "parport=%d: %s has no interrupt (modprobe parport_pc io=0x%lx irq=7)\n",
				     param_parport, port->name, port->base);
		goto fail;
	}
	r->pardev = parport_register_dev_model(port, IRQLOOP_NAME, &cb, 0);
	if (!r->pardev) {
		ret = irqloop_refuse(r, -EBUSY, "parport=%d: cannot register on %s (in use by lp or ppdev?)\n",
				     param_parport, port->name);
		goto fail;
	}
	if (parport_claim(r->pardev)) {
		ret = irqloop_refuse(r, -EBUSY, "parport=%d: %s is claimed by another driver\n",
				     param_parport, port->name);
		goto fail;
	}
	r->claimed = true;
	r->data = 0;
	parport_write_data(port, r->data);
	parport_enable_irq(port);
	return 0;
fail:
	irqloop_pp_stop(r);
	return ret;
}

static int irqloop_pp_start(struct irqloop_responder *r)
{
	struct parport *port = parport_find_number(param_parport);

	if (!port)
		return irqloop_refuse(r, -ENODEV, "parport=%d: no such port (modprobe parport_pc io=0x378 irq=7)\n",
				      param_parport);
	return irqloop_pp_attach(r, port);
}

/*
 * The parport side as a parport driver (the device model's match_port,
 * probe and detach, as lp and ppdev use): parport calls detach when a port
 * goes away (its driver unloaded, the card or adapter removed), and the
 * responder then gives up its device on it instead of keeping a device on
 * a dead port; match_port, when a port appears, attaches again to
 * parport<n> if the responder is bound and waiting for it. Both run under
 * parport's registration lock, then ours.
 */
static void irqloop_pp_match_port(struct parport *port)
{
	struct irqloop_responder *r;

	mutex_lock(&irqloop_lock);
	r = irqloop_active;
	if (r && r->pp_mode && !r->port && port->number == param_parport &&
	    !irqloop_pp_attach(r, parport_get_port(port)))
		pr_info("%s is back: answering nACK again\n", port->name);
	mutex_unlock(&irqloop_lock);
}

static void irqloop_pp_detach(struct parport *port)
{
	struct irqloop_responder *r;

	mutex_lock(&irqloop_lock);
	r = irqloop_active;
	if (r && r->pp_mode && r->port == port) {
		irqloop_pp_stop(r);
		pr_info("%s went away: device released (attached again if parport%d comes back)\n",
			port->name, param_parport);
	}
	mutex_unlock(&irqloop_lock);
}

/* Binds our own device (registered by name IRQLOOP_NAME) only. */
static int irqloop_pp_probe(struct pardevice *pardev)
{
	return strcmp(pardev->name, IRQLOOP_NAME) ? -ENODEV : 0;
}

static struct parport_driver irqloop_pp_driver = {
	.name = IRQLOOP_NAME,
	.match_port = irqloop_pp_match_port,
	.probe = irqloop_pp_probe,
	.detach = irqloop_pp_detach,
	IRQLOOP_PARPORT_DEVMODEL
};

/*
 * Init, parallel-port mode: the port checked first (registering a parport
 * driver while no port exists asks for the low-level driver to be loaded,
 * which would hide a missing port), then the driver.
 */
static int irqloop_pp_register(void)
{
	struct parport *port = parport_find_number(param_parport);

	if (!port) {
		pr_err("parport=%d: no such port (modprobe parport_pc io=0x378 irq=7)\n",
		       param_parport);
		return -ENODEV;
	}
	parport_put_port(port);
	return parport_register_driver(&irqloop_pp_driver);
}

static void irqloop_pp_unregister(void)
{
	parport_unregister_driver(&irqloop_pp_driver);
}
#else
static int irqloop_pp_start(struct irqloop_responder *r)
{
	return irqloop_refuse(r, -EINVAL, "parport=%d: built without parallel-port support (kernel has no CONFIG_PARPORT)\n",
			      param_parport);
}

static void irqloop_pp_stop(struct irqloop_responder *r)
{
}

/* The refusal is probe's (irqloop_pp_start()). */
static int irqloop_pp_register(void)
{
	return 0;
}

static void irqloop_pp_unregister(void)
{
}
#endif

/* Devm action: the first-edge report not left queued past the unbind. */
static void irqloop_cancel_seen(void *data)
{
	struct irqloop_responder *r = data;

	cancel_work_sync(&r->seen_work);
}

/*
 * Probe, for our own device (parameters, software node) and for device-tree
 * nodes alike, with state of its own. Errors of the parameter route at load
 * are told in one line of ours and handed to module init through
 * probe_err; probe itself then returns -ENODEV, which the driver core does
 * not repeat in the log. Every other refusal goes through dev_err_probe().
 */
static int irqloop_probe(struct platform_device *pdev)
{
	struct device *dev = &pdev->dev;
	struct irqloop_responder *r;
	const char *edge = NULL;
	bool has_trigger;
	int ret;

	r = devm_kzalloc(dev, sizeof(*r), GFP_KERNEL);
	if (!r)
		return dev_err_probe(dev, -ENOMEM, "no memory for the responder's state\n");
	r->dev = dev;
	/* Our own device (probed from inside platform_device_register_full()). */
	r->params = irqloop_cfg.params && !strcmp(dev_name(dev), IRQLOOP_NAME);
	r->at_load = r->params && irqloop_cfg.loading;
	r->pp_mode = r->params && param_parport >= 0;
	INIT_WORK(&r->seen_work, irqloop_seen_work);
	/* Registered before any interrupt: released after they are freed. */
	ret = devm_add_action_or_reset(dev, irqloop_cancel_seen, r);
	if (ret)
		return dev_err_probe(dev, ret, "cannot register the first-edge report's clean-up\n");
	platform_set_drvdata(pdev, r);

	mutex_lock(&irqloop_lock);
	if (irqloop_active) {
		/*
		 * Told once, in our words; for our own device the load fails
		 * with it (init reads probe_err), so parameters are never
		 * dropped in silence.
		 */
		ret = irqloop_refuse(r, -EBUSY, "%s: one irqloop responder at a time: %s is already bound (unbind it, or remove its device-tree node)\n",
				     dev_name(dev), dev_name(irqloop_active->dev));
		goto out;
	}
	if (r->params) {
		r->in = irqloop_cfg.in;
		r->out = irqloop_cfg.out;
		r->trigger = irqloop_cfg.trigger;
	} else {
		r->in.con_id = "in";
		r->out.con_id = "out";
		r->trigger.con_id = "trigger";
	}
	r->threaded = param_threaded;
	if (!r->params && device_property_present(dev, "irqloop,threaded")) {
		/* Policy moved out of the device tree: honoured for one release. */
		dev_warn(dev, "irqloop,threaded: this property moved to the module parameter threaded=1 (honoured for this release; remove it from the node)\n");
		r->threaded = true;
	}
	device_property_read_string(dev, "irqloop,edge", &edge);
	if (irqloop_parse_edge(edge, &r->irq_flags)) {
		ret = dev_err_probe(dev, -EINVAL, "irqloop,edge = \"%s\": expected both, rising or falling\n",
				    edge);
		goto out;
	}
	has_trigger = r->params ? !!param_trigger : device_property_present(dev, "trigger-gpios");
	if (r->pp_mode) {
		ret = irqloop_pp_start(r);
		if (ret)
			goto out;
	}
	ret = irqloop_gpio_start(r, has_trigger);
	if (ret) {
		irqloop_pp_stop(r);
		goto out;
	}
	irqloop_active = r;
	if (r->pp_mode)
		pr_info("answering nACK on parport%d%s%s\n", param_parport,
			has_trigger ? ", trace trigger " : "",
			has_trigger ? r->trigger.spec : "");
	else
		pr_info("answering %s edges of %s on %s (irq %d, %s, controller %s)%s%s\n",
			r->irq_flags == IRQF_TRIGGER_RISING ? "rising" :
			r->irq_flags == IRQF_TRIGGER_FALLING ? "falling" :
							       "both",
			r->in.spec, r->out.spec, r->in.irq, irqloop_ctx_names[r->ctx],
			r->in.controller, has_trigger ? ", trace trigger " : "",
			has_trigger ? r->trigger.spec : "");
out:
	mutex_unlock(&irqloop_lock);
	if (ret && r->at_load) {
		irqloop_cfg.probe_err = ret;
		return -ENODEV;
	}
	return ret;
}

/* The parport side by hand; lines, interrupts and the state itself by devm after this. */
static void irqloop_remove(struct platform_device *pdev)
{
	struct irqloop_responder *r = platform_get_drvdata(pdev);

	mutex_lock(&irqloop_lock);
	irqloop_pp_stop(r);
	if (irqloop_active == r)
		irqloop_active = NULL;
	mutex_unlock(&irqloop_lock);
	pr_info("unloaded: %lu handled, %lu spurious, %lu triggered\n",
		atomic_long_read(&r->handled), atomic_long_read(&r->spurious),
		atomic_long_read(&r->triggered));
}

static const struct of_device_id irqloop_of_match[] = {
	{ .compatible = "irqloop,responder" },
	{}
};
MODULE_DEVICE_TABLE(of, irqloop_of_match);

static struct platform_driver irqloop_driver = {
	.probe = irqloop_probe,
	IRQLOOP_PLATFORM_REMOVE(irqloop_remove),
	.driver = {
		.name = IRQLOOP_NAME,
		.of_match_table = irqloop_of_match,
		.dev_groups = irqloop_groups,
		/*
		 * Init reads the parameter device's probe result right after
		 * registering it: the probe must have run by then, whatever
		 * async_probe (module or kernel parameter) asks.
		 */
		.probe_type = PROBE_FORCE_SYNCHRONOUS,
	},
};

/*
 * Every parameter checked before anything is requested: each bad one fails
 * the load with its own line.
 */
static int irqloop_check_params(void)
{
	bool pp_mode = param_parport != -1;
	unsigned long flags;
	int ret;

	if (param_parport < -1) {
		pr_err("parport=%d: expected a port number (0, 1, ...) or -1 for GPIO mode\n",
		       param_parport);
		return -EINVAL;
	}
	if (pp_mode && (param_in || param_out || param_edge || param_threaded)) {
		pr_err("parport=%d: in=, out=, edge= and threaded= belong to GPIO mode; give one mode\n",
		       param_parport);
		return -EINVAL;
	}
	if (param_force && (param_threaded || !IS_ENABLED(CONFIG_PREEMPT_RT))) {
		pr_err("force=1: only for hard-IRQ mode on a PREEMPT_RT kernel (this one is %s%s)\n",
		       IS_ENABLED(CONFIG_PREEMPT_RT) ? "PREEMPT_RT" : "not PREEMPT_RT",
		       param_threaded ? ", and threaded=1 was given" : "");
		return -EINVAL;
	}
	if (!pp_mode && !param_in && !param_out) {
		/* threaded= and force= are policy for the device-tree nodes too. */
		if (param_edge || param_trigger) {
			pr_err("no lines given: load with in=<line> out=<line>, or parport=<n>\n");
			return -EINVAL;
		}
		return 0;	/* device tree route: the driver waits for nodes */
	}
	if (!pp_mode && (!param_in || !param_out)) {
		pr_err("%s: GPIO mode needs both in= and out=\n",
		       param_in ? "out= missing" : "in= missing");
		return -EINVAL;
	}
	if (param_edge && irqloop_parse_edge(param_edge, &flags)) {
		pr_err("edge=%s: expected both, rising or falling\n",
		       param_edge);
		return -EINVAL;
	}
	if (!pp_mode) {
		ret = irqloop_parse_line(&irqloop_cfg.in, "in", param_in);
		if (!ret)
			ret = irqloop_parse_line(&irqloop_cfg.out, "out", param_out);
		if (ret)
			return ret;
	}
	if (param_trigger) {
		ret = irqloop_parse_line(&irqloop_cfg.trigger, "trigger", param_trigger);
		if (ret)
			return ret;
	}
	if (!pp_mode && !strcmp(param_in, param_out)) {
		pr_err("out=%s: same line as in=%s\n", param_out, param_in);
		return -EINVAL;
	}
	if (param_trigger && !pp_mode &&
	    (!strcmp(param_trigger, param_in) || !strcmp(param_trigger, param_out))) {
		pr_err("trigger=%s: same line as %s=%s\n", param_trigger,
		       strcmp(param_trigger, param_in) ? "out" : "in",
		       param_trigger);
		return -EINVAL;
	}
	return 0;
}

/* Parameters: our own device, a software node with its properties, a lookup table. */
static int irqloop_add_param_device(void)
{
	struct property_entry props[2] = {};
	struct platform_device_info info = {
		.name = IRQLOOP_NAME,
		.id = PLATFORM_DEVID_NONE,
		.properties = props,
	};
	struct gpiod_lookup *e;
	int n = 0;

	if (param_edge)
		props[n++] = PROPERTY_ENTRY_STRING("irqloop,edge", param_edge);

	irqloop_cfg.lookup = kzalloc(struct_size(irqloop_cfg.lookup, table, 4), GFP_KERNEL);
	if (!irqloop_cfg.lookup)
		return -ENOMEM;
	irqloop_cfg.lookup->dev_id = IRQLOOP_NAME;
	e = irqloop_cfg.lookup->table;
	if (param_parport < 0) {
		*e++ = (struct gpiod_lookup)GPIO_LOOKUP(irqloop_cfg.in.key,
				irqloop_cfg.in.offset, "in", GPIO_ACTIVE_HIGH);
		*e++ = (struct gpiod_lookup)GPIO_LOOKUP(irqloop_cfg.out.key,
				irqloop_cfg.out.offset, "out", GPIO_ACTIVE_HIGH);
	}
	if (param_trigger)
		*e++ = (struct gpiod_lookup)GPIO_LOOKUP(irqloop_cfg.trigger.key,
				irqloop_cfg.trigger.offset, "trigger",
				GPIO_ACTIVE_HIGH | GPIO_PULL_DOWN);
	gpiod_add_lookup_table(irqloop_cfg.lookup);

	irqloop_cfg.pdev = platform_device_register_full(&info);
	if (IS_ERR(irqloop_cfg.pdev)) {
		int ret = PTR_ERR(irqloop_cfg.pdev);

		irqloop_cfg.pdev = NULL;
		return ret;
	}
	return 0;
}

static void irqloop_del_param_device(void)
{
	if (irqloop_cfg.pdev)
		platform_device_unregister(irqloop_cfg.pdev);
	irqloop_cfg.pdev = NULL;
	if (irqloop_cfg.lookup) {
		gpiod_remove_lookup_table(irqloop_cfg.lookup);
		kfree(irqloop_cfg.lookup);
		irqloop_cfg.lookup = NULL;
	}
}

static int __init irqloop_init(void)
{
	bool params;
	int ret;

	ret = irqloop_check_params();
	if (ret)
		return ret;
	params = param_in || param_out || param_parport >= 0;
	irqloop_cfg.params = params;
	if (param_parport >= 0) {
		ret = irqloop_pp_register();
		if (ret)
			return ret;
		irqloop_cfg.pp_registered = true;
	}

	ret = platform_driver_register(&irqloop_driver);
	if (ret)
		goto fail_pp;
	if (!params && (param_threaded || param_force)) {
		pr_info("no lines given: waiting for device-tree nodes compatible with \"irqloop,responder\", answered with %s\n",
			param_threaded ? "threaded=1" : "force=1");
		return 0;
	}
	if (!params) {
		pr_info("no parameters: waiting for device-tree nodes compatible with \"irqloop,responder\"\n");
		return 0;
	}
	irqloop_cfg.loading = true;
	ret = irqloop_add_param_device();
	irqloop_cfg.loading = false;
	/* Our own device must be the one bound, not a device-tree node's. */
	if (!ret) {
		mutex_lock(&irqloop_lock);
		if (!irqloop_active || irqloop_active->dev != &irqloop_cfg.pdev->dev)
			ret = irqloop_cfg.probe_err ? irqloop_cfg.probe_err : -ENODEV;
		mutex_unlock(&irqloop_lock);
	}
	if (!ret)
		return 0;
	irqloop_del_param_device();
	platform_driver_unregister(&irqloop_driver);
fail_pp:
	if (irqloop_cfg.pp_registered)
		irqloop_pp_unregister();
	irqloop_cfg.pp_registered = false;
	return ret;
}

static void __exit irqloop_exit(void)
{
	irqloop_del_param_device();
	platform_driver_unregister(&irqloop_driver);
	if (irqloop_cfg.pp_registered)
		irqloop_pp_unregister();
}

module_init(irqloop_init);
module_exit(irqloop_exit);

MODULE_DESCRIPTION("irqloop target responder: toggles a response line from the interrupt handler");
MODULE_LICENSE("GPL");
