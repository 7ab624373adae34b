// SPDX-License-Identifier: GPL-2.0
/*
 * irqloop_node: the testbed's stand-in for an "irqloop,responder" device-tree
 * node. The x86 guest kernel has no CONFIG_OF, so no overlay can be applied
 * there; this registers a platform device "irqloop-node" whose software node
 * carries what such a node would (irqloop,edge, and the deprecated
 * irqloop,threaded with threaded_prop=1) and a GPIO lookup table for its
 * in/out lines on the irqloop-wire chip (flagged GPIO_ACTIVE_LOW with
 * active_low=1, as an overlay's "in-gpios = <&gpio 17 GPIO_ACTIVE_LOW>" would). Bound to irqloop_responder through
 * driver_override, it goes through the responder's device-tree route (not its
 * module-parameter route): the same device_property_*() and gpiod_get() calls.
 */

#include <linux/gpio/machine.h>
#include <linux/module.h>
#include <linux/platform_device.h>
#include <linux/property.h>
#include <linux/slab.h>

static bool threaded_prop;
module_param(threaded_prop, bool, 0444);
MODULE_PARM_DESC(threaded_prop, "give the node the deprecated irqloop,threaded property");

static bool active_low;
module_param(active_low, bool, 0444);
MODULE_PARM_DESC(active_low, "flag the in and out lines GPIO_ACTIVE_LOW in the lookup table");

static char *edge = "both";
module_param(edge, charp, 0444);
MODULE_PARM_DESC(edge, "the node's irqloop,edge (both, rising or falling)");

static char *chip = "irqloop-wire";
module_param(chip, charp, 0444);
MODULE_PARM_DESC(chip, "label of the chip carrying in (offset 1) and out (offset 2)");

static struct platform_device *node_pdev;
static struct gpiod_lookup_table *node_lookup;

static int __init node_init(void)
{
	struct property_entry props[3] = {};
	struct platform_device_info info = {
		.name = "irqloop-node",
		.id = PLATFORM_DEVID_NONE,
		.properties = props,
	};
	unsigned long flags = active_low ? GPIO_ACTIVE_LOW : GPIO_ACTIVE_HIGH;
	int n = 0;

	props[n++] = PROPERTY_ENTRY_STRING("irqloop,edge", edge);
	if (threaded_prop)
		props[n++] = PROPERTY_ENTRY_BOOL("irqloop,threaded");
	node_lookup = kzalloc(struct_size(node_lookup, table, 3), GFP_KERNEL);
	if (!node_lookup)
		return -ENOMEM;
	node_lookup->dev_id = "irqloop-node";
	node_lookup->table[0] = (struct gpiod_lookup)GPIO_LOOKUP(chip, 1, "in", flags);
	node_lookup->table[1] = (struct gpiod_lookup)GPIO_LOOKUP(chip, 2, "out", flags);
	gpiod_add_lookup_table(node_lookup);
	node_pdev = platform_device_register_full(&info);
	if (IS_ERR(node_pdev)) {
		gpiod_remove_lookup_table(node_lookup);
		kfree(node_lookup);
		return PTR_ERR(node_pdev);
	}
	return 0;
}

static void __exit node_exit(void)
{
	platform_device_unregister(node_pdev);
	gpiod_remove_lookup_table(node_lookup);
	kfree(node_lookup);
}

module_init(node_init);
module_exit(node_exit);

MODULE_DESCRIPTION("irqloop testbed: a software-node stand-in for a responder device-tree node");
MODULE_LICENSE("GPL");
