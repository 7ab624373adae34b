// SPDX-License-Identifier: GPL-2.0
/*
 * irqloop_responder: the target end of an irqloop measurement, in the kernel.
 *
 * The logger toggles a stimulus line and busy-waits for the response line to
 * change. This module answers every stimulus edge by toggling the response
 * line from the hard interrupt handler, so the measured path is: pin, interrupt
 * controller, entry code, this handler, the output write. Scheduler wake-up is
 * not on it. irqloop-responder (userspace, event mode) measures the same path
 * plus the wake-up of a thread; running both shows what that wake-up costs.
 *
 * GPIO mode:      in=<chip label>:<offset> out=<chip label>:<offset>
 *                 [edge=both|rising|falling]
 * Parallel port:  parport=<n>  (lpptest wiring: stimulus on nACK, response on
 *                 the data byte, which is inverted on every interrupt)
 * Either mode:    trigger=<chip label>:<offset>  a rising edge on this input
 *                 calls tracing_off(), freezing the ftrace ring buffer at the
 *                 worst case the logger has just seen (cyclictest -b, from
 *                 outside).
 *
 * Statistics are read-only attributes of the platform device
 * /sys/devices/platform/irqloop_responder/: handled, spurious,
 * last_toggle_ns (ktime_get_ns() right after the output write), triggered.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/device.h>
#include <linux/err.h>
#include <linux/gpio/consumer.h>
#include <linux/gpio/driver.h>
#include <linux/gpio/machine.h>
#include <linux/interrupt.h>
#include <linux/kernel.h>
#include <linux/ktime.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/platform_device.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/version.h>

#if IS_ENABLED(CONFIG_PARPORT) && !defined(IRQLOOP_NO_PARPORT)
#define IRQLOOP_HAVE_PARPORT 1
#include <linux/parport.h>
#endif

#define IRQLOOP_NAME "irqloop_responder"
#define IRQLOOP_LABEL_MAX 64

static char *param_in;
module_param_named(in, param_in, charp, 0444);
MODULE_PARM_DESC(in, "stimulus input line, <chip label>:<offset> (GPIO mode)");

static char *param_out;
module_param_named(out, param_out, charp, 0444);
MODULE_PARM_DESC(out, "response output line, <chip label>:<offset> (GPIO mode)");

static char *param_edge = "both";
module_param_named(edge, param_edge, charp, 0444);
MODULE_PARM_DESC(edge, "stimulus edges answered: both (default), rising or falling");

static char *param_trigger;
module_param_named(trigger, param_trigger, charp, 0444);
MODULE_PARM_DESC(trigger, "optional input, <chip label>:<offset>: a rising edge calls tracing_off()");

static int param_parport = -1;
module_param_named(parport, param_parport, int, 0444);
MODULE_PARM_DESC(parport, "parallel-port mode: answer nACK on parport<n> by inverting the data byte (default -1: GPIO mode)");

/* A line named on the command line, and what the chip said about it at load. */
struct irqloop_line {
	const char *param;		/* "in", "out", "trigger" */
	const char *spec;		/* the parameter's value */
	char label[IRQLOOP_LABEL_MAX];
	unsigned int offset;
	struct gpio_desc *desc;
	int irq;
};

struct irqloop_responder {
	struct platform_device *pdev;
	struct gpiod_lookup_table *lookup;
	struct irqloop_line in, out, trigger;
	unsigned long irq_flags;
	int out_level;			/* level last written to out */
	int in_level;			/* level of in seen by the last interrupt */
	atomic_long_t handled;
	atomic_long_t spurious;
	atomic_long_t triggered;
	atomic64_t last_toggle_ns;
#ifdef IRQLOOP_HAVE_PARPORT
	struct parport *port;
	struct pardevice *pardev;
	bool claimed;
	u8 data;
#endif
};

static struct irqloop_responder resp;

/*
 * Hard interrupt handlers: requested with IRQF_NO_THREAD, so they stay in hard
 * interrupt context even on PREEMPT_RT, where everything else is forced into
 * threads. The output is written first; bookkeeping comes after, off the
 * measured path.
 */
static irqreturn_t irqloop_gpio_irq(int irq, void *data)
{
	struct irqloop_responder *r = data;
	int level;

	r->out_level = !r->out_level;
	gpiod_set_value(r->out.desc, r->out_level);
	atomic64_set(&r->last_toggle_ns, ktime_get_ns());
	atomic_long_inc(&r->handled);

	/*
	 * The logger waits for the response before the next stimulus, so the
	 * input is stable here. A level that does not match the edge we asked
	 * for (or, with both edges, repeats the previous one) means a glitch,
	 * a missed edge, or an interrupt without an edge.
	 */
	level = gpiod_get_value(r->in.desc);
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
	return IRQ_HANDLED;
}

static irqreturn_t irqloop_trigger_irq(int irq, void *data)
{
	struct irqloop_responder *r = data;

	tracing_off();
	atomic_long_inc(&r->triggered);
	return IRQ_HANDLED;
}

/* Statistics, as read-only attributes of our platform device. */
static ssize_t handled_show(struct device *dev, struct device_attribute *attr,
			    char *buf)
{
	return sysfs_emit(buf, "%lu\n", atomic_long_read(&resp.handled));
}
static DEVICE_ATTR_RO(handled);

static ssize_t spurious_show(struct device *dev, struct device_attribute *attr,
			     char *buf)
{
	return sysfs_emit(buf, "%lu\n", atomic_long_read(&resp.spurious));
}
static DEVICE_ATTR_RO(spurious);

static ssize_t triggered_show(struct device *dev, struct device_attribute *attr,
			      char *buf)
{
	return sysfs_emit(buf, "%lu\n", atomic_long_read(&resp.triggered));
}
static DEVICE_ATTR_RO(triggered);

static ssize_t last_toggle_ns_show(struct device *dev,
				   struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%lld\n",
			  (long long)atomic64_read(&resp.last_toggle_ns));
}
static DEVICE_ATTR_RO(last_toggle_ns);

static ssize_t mode_show(struct device *dev, struct device_attribute *attr,
			 char *buf)
{
	if (param_parport >= 0)
		return sysfs_emit(buf, "parport%d\n", param_parport);
	return sysfs_emit(buf, "gpio in=%s out=%s edge=%s\n", param_in,
			  param_out, param_edge);
}
static DEVICE_ATTR_RO(mode);

static struct attribute *irqloop_attrs[] = {
	&dev_attr_handled.attr,
	&dev_attr_spurious.attr,
	&dev_attr_triggered.attr,
	&dev_attr_last_toggle_ns.attr,
	&dev_attr_mode.attr,
	NULL,
};
ATTRIBUTE_GROUPS(irqloop);

/* "<label>:<offset>"; the label may itself contain ':', the offset may not. */
static int irqloop_parse_line(struct irqloop_line *l, const char *param,
			      const char *spec)
{
	const char *colon;
	size_t len;

	l->param = param;
	l->spec = spec;
	colon = spec ? strrchr(spec, ':') : NULL;
	if (!colon || colon == spec) {
		pr_err("%s=%s: expected <chip label>:<offset>, e.g. %s=pinctrl-bcm2711:17\n",
		       param, spec ? spec : "", param);
		return -EINVAL;
	}
	len = colon - spec;
	if (len >= sizeof(l->label)) {
		pr_err("%s=%s: chip label longer than %zu characters\n", param,
		       spec, sizeof(l->label) - 1);
		return -EINVAL;
	}
	memcpy(l->label, spec, len);
	l->label[len] = '\0';
	if (kstrtouint(colon + 1, 10, &l->offset)) {
		pr_err("%s=%s: offset '%s' is not a number\n", param, spec,
		       colon + 1);
		return -EINVAL;
	}
	return 0;
}

/*
 * What the chip says about a line before we request it, so that each bad
 * parameter gets its own one-line reason. gpiod_get() stays the authority:
 * it fails with the same errors if the chip changes in between.
 */
struct irqloop_chip_info {
	unsigned int ngpio;
	bool can_sleep;
	char consumer[IRQLOOP_LABEL_MAX];	/* empty when the line is free */
};

#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 7, 0)
static int irqloop_chip_info(const struct irqloop_line *l,
			     struct irqloop_chip_info *info)
{
	struct gpio_device *gdev = gpio_device_find_by_label(l->label);
	struct gpio_chip *gc;
	int ret = -ENODEV;

	if (!gdev)
		return -ENODEV;
	gc = gpio_device_get_chip(gdev);
	if (gc) {
		info->ngpio = gc->ngpio;
		info->can_sleep = gc->can_sleep;
		info->consumer[0] = '\0';
		if (l->offset < gc->ngpio) {
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 8, 0)
			char *who = gpiochip_dup_line_label(gc, l->offset);

			if (!IS_ERR_OR_NULL(who))
				strscpy(info->consumer, who,
					sizeof(info->consumer));
			if (!IS_ERR(who))
				kfree(who);
#else
			const char *who = gpiochip_is_requested(gc, l->offset);

			if (who)
				strscpy(info->consumer, who,
					sizeof(info->consumer));
#endif
		}
		ret = 0;
	}
	gpio_device_put(gdev);
	return ret;
}
#else
struct irqloop_chip_match {
	const struct irqloop_line *line;
	struct irqloop_chip_info *info;
};

/* Runs under gpiolib's list lock, so the chip cannot go away meanwhile. */
static int irqloop_chip_match(struct gpio_chip *gc, void *data)
{
	struct irqloop_chip_match *m = data;
	const char *who;

	if (!gc->label || strcmp(gc->label, m->line->label))
		return 0;
	m->info->ngpio = gc->ngpio;
	m->info->can_sleep = gc->can_sleep;
	m->info->consumer[0] = '\0';
	if (m->line->offset < gc->ngpio) {
		who = gpiochip_is_requested(gc, m->line->offset);
		if (who)
			strscpy(m->info->consumer, who,
				sizeof(m->info->consumer));
	}
	return 1;
}

static int irqloop_chip_info(const struct irqloop_line *l,
			     struct irqloop_chip_info *info)
{
	struct irqloop_chip_match m = { .line = l, .info = info };

	return gpiochip_find(&m, irqloop_chip_match) ? 0 : -ENODEV;
}
#endif

static int irqloop_check_line(const struct irqloop_line *l)
{
	struct irqloop_chip_info info;

	if (irqloop_chip_info(l, &info)) {
		pr_err("%s=%s: no gpiochip labelled '%s' (gpiodetect shows labels in brackets)\n",
		       l->param, l->spec, l->label);
		return -ENODEV;
	}
	if (l->offset >= info.ngpio) {
		pr_err("%s=%s: offset %u out of range, chip '%s' has lines 0..%u\n",
		       l->param, l->spec, l->offset, l->label, info.ngpio - 1);
		return -EINVAL;
	}
	if (info.consumer[0]) {
		pr_err("%s=%s: line in use by '%s'\n", l->param, l->spec,
		       info.consumer);
		return -EBUSY;
	}
	if (info.can_sleep) {
		pr_err("%s=%s: lines of chip '%s' can sleep (I2C/SPI expander?); a hard interrupt handler cannot use them\n",
		       l->param, l->spec, l->label);
		return -EINVAL;
	}
	return 0;
}

/* Request one line through the consumer API, using our lookup table. */
static int irqloop_get_line(struct irqloop_line *l, enum gpiod_flags flags)
{
	struct device *dev = &resp.pdev->dev;
	struct gpio_desc *desc;
	int ret;

	desc = gpiod_get(dev, l->param, flags);
	if (IS_ERR(desc)) {
		ret = PTR_ERR(desc);
		if (ret == -EPROBE_DEFER) {	/* the chip went away */
			ret = -ENODEV;
		} else if (flags == GPIOD_OUT_LOW && ret != -EBUSY &&
			   ret != -ENOMEM) {
			/* An input-only line, or one tied to an interrupt. */
			pr_err("%s=%s: cannot drive the line as an output (gpiolib error %d)\n",
			       l->param, l->spec, ret);
			return -EINVAL;
		}
		pr_err("%s=%s: cannot request the line (error %d)\n",
		       l->param, l->spec, ret);
		return ret;
	}
	l->desc = desc;
	if (gpiod_cansleep(desc)) {	/* the chip changed since the check */
		pr_err("%s=%s: line can sleep; a hard interrupt handler cannot use it\n",
		       l->param, l->spec);
		return -EINVAL;
	}
	if (flags == GPIOD_OUT_LOW &&
	    gpiod_get_direction(desc) == GPIO_LINE_DIRECTION_IN) {
		pr_err("%s=%s: cannot drive the line as an output (it stays an input)\n",
		       l->param, l->spec);
		return -EINVAL;
	}
	return 0;
}

static int irqloop_request_irq(struct irqloop_line *l, irq_handler_t handler,
			       unsigned long trigger)
{
	int ret;

	l->irq = gpiod_to_irq(l->desc);
	if (l->irq <= 0) {
		pr_err("%s=%s: line has no interrupt (error %d)\n", l->param,
		       l->spec, l->irq);
		l->irq = 0;
		return -EINVAL;
	}
	ret = request_irq(l->irq, handler, IRQF_NO_THREAD | trigger,
			  IRQLOOP_NAME, &resp);
	if (ret) {
		pr_err("%s=%s: cannot request interrupt %d (error %d)\n",
		       l->param, l->spec, l->irq, ret);
		l->irq = 0;
	}
	return ret;
}

static void irqloop_put_line(struct irqloop_line *l)
{
	if (l->irq)
		free_irq(l->irq, &resp);
	l->irq = 0;
	if (l->desc)
		gpiod_put(l->desc);
	l->desc = NULL;
}

static void irqloop_gpio_stop(void)
{
	irqloop_put_line(&resp.trigger);
	irqloop_put_line(&resp.in);
	irqloop_put_line(&resp.out);
	if (resp.lookup) {
		gpiod_remove_lookup_table(resp.lookup);
		kfree(resp.lookup);
		resp.lookup = NULL;
	}
}

static int irqloop_parse_edge(void)
{
	if (!strcmp(param_edge, "both"))
		resp.irq_flags = IRQF_TRIGGER_RISING | IRQF_TRIGGER_FALLING;
	else if (!strcmp(param_edge, "rising"))
		resp.irq_flags = IRQF_TRIGGER_RISING;
	else if (!strcmp(param_edge, "falling"))
		resp.irq_flags = IRQF_TRIGGER_FALLING;
	else {
		pr_err("edge=%s: expected both, rising or falling\n",
		       param_edge);
		return -EINVAL;
	}
	return 0;
}

static bool irqloop_same_line(const struct irqloop_line *a,
			      const struct irqloop_line *b)
{
	return a->spec && b->spec && a->offset == b->offset &&
	       !strcmp(a->label, b->label);
}

/*
 * Parse and check every line parameter before requesting anything, so that a
 * bad one fails the load with its own reason and nothing to undo.
 */
static int irqloop_gpio_check(bool gpio_mode)
{
	struct irqloop_line *lines[3];
	int i, n = 0, ret;

	if (gpio_mode) {
		ret = irqloop_parse_edge();
		if (ret)
			return ret;
		ret = irqloop_parse_line(&resp.in, "in", param_in);
		if (ret)
			return ret;
		ret = irqloop_parse_line(&resp.out, "out", param_out);
		if (ret)
			return ret;
		lines[n++] = &resp.in;
		lines[n++] = &resp.out;
	}
	if (param_trigger) {
		ret = irqloop_parse_line(&resp.trigger, "trigger",
					 param_trigger);
		if (ret)
			return ret;
		lines[n++] = &resp.trigger;
	}
	for (i = 1; i < n; i++) {
		struct irqloop_line *other = NULL;

		if (irqloop_same_line(lines[i], lines[0]))
			other = lines[0];
		else if (i == 2 && irqloop_same_line(lines[2], lines[1]))
			other = lines[1];
		if (other) {
			pr_err("%s=%s: same line as %s=%s\n", lines[i]->param,
			       lines[i]->spec, other->param, other->spec);
			return -EINVAL;
		}
	}
	for (i = 0; i < n; i++) {
		ret = irqloop_check_line(lines[i]);
		if (ret)
			return ret;
	}
	return 0;
}

static int irqloop_gpio_start(bool gpio_mode)
{
	struct gpiod_lookup *e;
	int ret;

	/* Room for in, out, trigger and the terminating empty entry. */
	resp.lookup = kzalloc(struct_size(resp.lookup, table, 4), GFP_KERNEL);
	if (!resp.lookup)
		return -ENOMEM;
	resp.lookup->dev_id = dev_name(&resp.pdev->dev);
	e = resp.lookup->table;
	if (gpio_mode) {
		*e++ = (struct gpiod_lookup)GPIO_LOOKUP(resp.in.label,
				resp.in.offset, "in", GPIO_ACTIVE_HIGH);
		*e++ = (struct gpiod_lookup)GPIO_LOOKUP(resp.out.label,
				resp.out.offset, "out", GPIO_ACTIVE_HIGH);
	}
	if (param_trigger)
		*e++ = (struct gpiod_lookup)GPIO_LOOKUP(resp.trigger.label,
				resp.trigger.offset, "trigger",
				GPIO_ACTIVE_HIGH);
	gpiod_add_lookup_table(resp.lookup);

	if (gpio_mode) {
		ret = irqloop_get_line(&resp.out, GPIOD_OUT_LOW);
		if (ret)
			goto fail;
		ret = irqloop_get_line(&resp.in, GPIOD_IN);
		if (ret)
			goto fail;
		resp.out_level = 0;
		resp.in_level = gpiod_get_value(resp.in.desc);
		ret = irqloop_request_irq(&resp.in, irqloop_gpio_irq,
					  resp.irq_flags);
		if (ret)
			goto fail;
	}
	if (param_trigger) {
		ret = irqloop_get_line(&resp.trigger, GPIOD_IN);
		if (ret)
			goto fail;
		ret = irqloop_request_irq(&resp.trigger, irqloop_trigger_irq,
					  IRQF_TRIGGER_RISING);
		if (ret)
			goto fail;
	}
	return 0;
fail:
	irqloop_gpio_stop();
	return ret;
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

	r->data ^= 0xff;
	parport_write_data(r->port, r->data);
	atomic64_set(&r->last_toggle_ns, ktime_get_ns());
	atomic_long_inc(&r->handled);
	/* nACK interrupts on its rising edge: the pin must read high now. */
	if (!(parport_read_status(r->port) & PARPORT_STATUS_ACK))
		atomic_long_inc(&r->spurious);
}

static void irqloop_pp_stop(void)
{
	if (resp.claimed) {
		parport_disable_irq(resp.port);
		parport_release(resp.pardev);
		resp.claimed = false;
	}
	if (resp.pardev)
		parport_unregister_device(resp.pardev);
	resp.pardev = NULL;
	if (resp.port)
		parport_put_port(resp.port);
	resp.port = NULL;
}

static int irqloop_pp_start(void)
{
	struct pardev_cb cb = {
		.irq_func = irqloop_pp_irq,
		.private = &resp,
		.flags = PARPORT_FLAG_EXCL,
	};
	int ret;

	resp.port = parport_find_number(param_parport);
	if (!resp.port) {
		pr_err("parport=%d: no such port (modprobe parport_pc io=0x378 irq=7)\n",
		       param_parport);
		return -ENODEV;
	}
	if (resp.port->irq == PARPORT_IRQ_NONE) {
		pr_err("parport=%d: %s has no interrupt (modprobe parport_pc io=0x%lx irq=7)\n",
		       param_parport, resp.port->name, resp.port->base);
		ret = -EINVAL;
		goto fail;
	}
	resp.pardev = parport_register_dev_model(resp.port, IRQLOOP_NAME, &cb,
						 0);
	if (!resp.pardev) {
		pr_err("parport=%d: cannot register on %s (in use by lp or ppdev?)\n",
		       param_parport, resp.port->name);
		ret = -EBUSY;
		goto fail;
	}
	if (parport_claim(resp.pardev)) {
		pr_err("parport=%d: %s is claimed by another driver\n",
		       param_parport, resp.port->name);
		ret = -EBUSY;
		goto fail;
	}
	resp.claimed = true;
	resp.data = 0;
	parport_write_data(resp.port, resp.data);
	parport_enable_irq(resp.port);
	return 0;
fail:
	irqloop_pp_stop();
	return ret;
}
#else
static int irqloop_pp_start(void)
{
	pr_err("parport=%d: built without parallel-port support (kernel has no CONFIG_PARPORT)\n",
	       param_parport);
	return -EINVAL;
}

static void irqloop_pp_stop(void)
{
}
#endif

static int __init irqloop_init(void)
{
	bool pp_mode = param_parport >= 0;
	int ret;

	if (pp_mode && (param_in || param_out)) {
		pr_err("parport=%d: in= and out= belong to GPIO mode; give one mode\n",
		       param_parport);
		return -EINVAL;
	}
	if (!pp_mode && !param_in && !param_out) {
		pr_err("no lines given: load with in=<chip>:<offset> out=<chip>:<offset>, or parport=<n>\n");
		return -EINVAL;
	}
	ret = irqloop_gpio_check(!pp_mode);
	if (ret)
		return ret;

	/* The consumer device: gpiolib lookups and sysfs statistics hang off it. */
	resp.pdev = platform_device_alloc(IRQLOOP_NAME, PLATFORM_DEVID_NONE);
	if (!resp.pdev)
		return -ENOMEM;
	resp.pdev->dev.groups = irqloop_groups;
	ret = platform_device_add(resp.pdev);
	if (ret) {
		platform_device_put(resp.pdev);
		return ret;
	}

	if (pp_mode) {
		ret = irqloop_pp_start();
		if (ret)
			goto fail;
	}
	ret = pp_mode && !param_trigger ? 0 : irqloop_gpio_start(!pp_mode);
	if (ret) {
		irqloop_pp_stop();
		goto fail;
	}

	if (pp_mode)
		pr_info("answering nACK on parport%d%s%s\n", param_parport,
			param_trigger ? ", trace trigger " : "",
			param_trigger ? param_trigger : "");
	else
		pr_info("answering %s edges of %s on %s (irq %d)%s%s\n",
			param_edge, param_in, param_out, resp.in.irq,
			param_trigger ? ", trace trigger " : "",
			param_trigger ? param_trigger : "");
	return 0;
fail:
	platform_device_unregister(resp.pdev);
	return ret;
}

static void __exit irqloop_exit(void)
{
	irqloop_gpio_stop();
	irqloop_pp_stop();
	platform_device_unregister(resp.pdev);
	pr_info("unloaded: %lu handled, %lu spurious, %lu triggered\n",
		atomic_long_read(&resp.handled),
		atomic_long_read(&resp.spurious),
		atomic_long_read(&resp.triggered));
}

module_init(irqloop_init);
module_exit(irqloop_exit);

MODULE_DESCRIPTION("irqloop target responder: toggles a response line from the hard interrupt handler");
MODULE_LICENSE("GPL");
