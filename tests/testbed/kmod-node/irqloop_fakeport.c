// SPDX-License-Identifier: GPL-2.0
/*
 * irqloop_fakeport: a parallel port that the testbed can take away. QEMU's
 * ISA port belongs to parport_pc, which the kernel does not unload while a
 * device is registered on one of its ports; this module registers a port
 * whose operations are plain variables (no hardware) and whose driver holds
 * no module reference for its devices (ops.owner NULL), so unloading it
 * removes the port under a bound device, as a PCI or USB port's removal
 * does: parport calls its drivers' detach(), and after parport_remove_port()
 * every operation is parport's dead one. Loading it again announces a new
 * port (match_port). Its irq= is only a number: nothing is requested and no
 * interrupt ever comes.
 */

#include <linux/module.h>
#include <linux/parport.h>

static int irq = 7;
module_param(irq, int, 0444);
MODULE_PARM_DESC(irq, "the interrupt number the port claims to have (never requested)");

static unsigned char fp_data, fp_ctrl;
static struct parport *fp_port;

static void fp_write_data(struct parport *p, unsigned char d) { fp_data = d; }
static unsigned char fp_read_data(struct parport *p) { return fp_data; }
static void fp_write_control(struct parport *p, unsigned char c) { fp_ctrl = c; }
static unsigned char fp_read_control(struct parport *p) { return fp_ctrl; }

static unsigned char fp_frob_control(struct parport *p, unsigned char mask, unsigned char val)
{
	fp_ctrl = (fp_ctrl & ~mask) ^ val;
	return fp_ctrl;
}

/* Nothing attached: not busy, no error, nACK high. */
static unsigned char fp_read_status(struct parport *p)
{
	return PARPORT_STATUS_ACK | PARPORT_STATUS_ERROR | PARPORT_STATUS_BUSY;
}

static void fp_nop(struct parport *p) { }
static void fp_init_state(struct pardevice *d, struct parport_state *s) { }
static void fp_state(struct parport *p, struct parport_state *s) { }

static struct parport_operations fp_ops = {
	.write_data = fp_write_data,
	.read_data = fp_read_data,
	.write_control = fp_write_control,
	.read_control = fp_read_control,
	.frob_control = fp_frob_control,
	.read_status = fp_read_status,
	.enable_irq = fp_nop,
	.disable_irq = fp_nop,
	.data_forward = fp_nop,
	.data_reverse = fp_nop,
	.init_state = fp_init_state,
	.save_state = fp_state,
	.restore_state = fp_state,
	.epp_write_data = parport_ieee1284_epp_write_data,
	.epp_read_data = parport_ieee1284_epp_read_data,
	.epp_write_addr = parport_ieee1284_epp_write_addr,
	.epp_read_addr = parport_ieee1284_epp_read_addr,
	.ecp_write_data = parport_ieee1284_ecp_write_data,
	.ecp_read_data = parport_ieee1284_ecp_read_data,
	.ecp_write_addr = parport_ieee1284_ecp_write_addr,
	.compat_write_data = parport_ieee1284_write_compat,
	.nibble_read_data = parport_ieee1284_read_nibble,
	.byte_read_data = parport_ieee1284_read_byte,
	.owner = NULL,	/* devices on the port do not pin this module */
};

static int __init fp_init(void)
{
	fp_port = parport_register_port(0, irq, PARPORT_DMA_NONE, &fp_ops);
	if (!fp_port)
		return -ENOMEM;
	fp_port->modes = PARPORT_MODE_PCSPP;
	pr_info("irqloop_fakeport: %s registered (irq %d, never requested)\n", fp_port->name, irq);
	parport_announce_port(fp_port);
	return 0;
}

static void __exit fp_exit(void)
{
	pr_info("irqloop_fakeport: removing %s\n", fp_port->name);
	parport_remove_port(fp_port);
	parport_del_port(fp_port);
}

module_init(fp_init);
module_exit(fp_exit);

MODULE_DESCRIPTION("irqloop testbed: a parallel port without hardware that can be removed");
MODULE_LICENSE("GPL");
