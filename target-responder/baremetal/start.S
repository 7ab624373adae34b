/* SPDX-License-Identifier: MIT */
/*
 * Entry of the bare-metal responder: an arm64 Linux Image (the 64-byte
 * header of the kernel's Documentation/arch/arm64/booting.rst), so QEMU's
 * -kernel, Xen's dom0less loader and U-Boot's booti take it and pass the
 * device tree's address in x0.
 *
 * The image is linked at 0 as a static PIE and relocates itself (its
 * R_AARCH64_RELATIVE entries), so it runs wherever the loader put it.
 * At EL2 it drops to EL1; at EL1 it continues. The MMU is off until
 * bm_main() turns it on: -mstrict-align keeps the C code from unaligned
 * accesses, which fault on Device memory.
 */
#define SPSR_EL1H_DAIF 0x3c5 /* EL1h, D, A, I and F masked */
#define SCTLR_EL1_RES1 0x30d00800
#define HCR_EL2_RW (1 << 31)
#define ICC_SRE_EL2 S3_4_C12_C9_5
#define ICH_HCR_EL2 S3_4_C12_C11_0

	/* code0; the rest of the header is written by link.ld (its image_size is a link-time sum). */
	.section .text.head, "ax"
	.globl _start
_start:
	b	bm_entry

	.text
bm_entry:
	mov	x21, x0			/* the DTB */
	mov	x20, #1			/* the EL we started at, for the banner */
	mrs	x1, CurrentEL
	lsr	x1, x1, #2
	cmp	x1, #1
	b.eq	bm_el1
	cmp	x1, #2
	b.ne	bm_hang			/* EL3 (or EL0): not supported */

	/* EL2 on a bare board: give EL1 the counter and the timer. */
	mov	x20, #2
	mrs	x1, cnthctl_el2
	orr	x1, x1, #3		/* EL1PCTEN, EL1PCEN */
	msr	cnthctl_el2, x1
	msr	cntvoff_el2, xzr
	/* A GICv3 CPU interface: let EL1 use its system registers. */
	mrs	x1, id_aa64pfr0_el1
	ubfx	x1, x1, #24, #4
	cbz	x1, 1f
	mrs	x1, ICC_SRE_EL2
	mov	x2, #0x9		/* SRE, Enable (EL1 access) */
	orr	x1, x1, x2
	msr	ICC_SRE_EL2, x1
	isb
	msr	ICH_HCR_EL2, xzr
1:	mov	x1, #HCR_EL2_RW		/* EL1 is AArch64, nothing trapped */
	msr	hcr_el2, x1
	mov	x1, #0x33ff		/* CPTR_EL2: RES1 bits, no traps */
	msr	cptr_el2, x1
	msr	hstr_el2, xzr
	mrs	x1, midr_el1
	msr	vpidr_el2, x1
	mrs	x1, mpidr_el1
	msr	vmpidr_el2, x1
	ldr	x1, =SCTLR_EL1_RES1	/* MMU and caches off */
	msr	sctlr_el1, x1
	mov	x1, #SPSR_EL1H_DAIF
	msr	spsr_el2, x1
	adr	x1, bm_el1
	msr	elr_el2, x1
	eret

bm_el1:
	msr	daifset, #0xf
	msr	spsel, #1
	adrp	x1, bm_stack_top
	add	x1, x1, :lo12:bm_stack_top
	mov	sp, x1

	/* Relocate: each RELATIVE entry gets the load address added. */
	adr	x1, _start
	adrp	x2, __rela_start
	add	x2, x2, :lo12:__rela_start
	adrp	x3, __rela_end
	add	x3, x3, :lo12:__rela_end
2:	cmp	x2, x3
	b.hs	3f
	ldp	x4, x5, [x2], #16	/* r_offset, r_info */
	ldr	x6, [x2], #8		/* r_addend */
	cmp	w5, #1027		/* R_AARCH64_RELATIVE */
	b.ne	bm_hang
	add	x6, x6, x1
	str	x6, [x1, x4]
	b	2b

	/* Clear bss (16-byte aligned by the linker script). */
3:	adrp	x2, __bss_start
	add	x2, x2, :lo12:__bss_start
	adrp	x3, __bss_end
	add	x3, x3, :lo12:__bss_end
4:	cmp	x2, x3
	b.hs	5f
	stp	xzr, xzr, [x2], #16
	b	4b

5:	adr	x1, bm_vectors
	msr	vbar_el1, x1
	isb
	mov	x0, x21
	mov	x1, x20
	bl	bm_main
bm_hang:
	wfe
	b	bm_hang

/* Exceptions the responder does not expect: report and stop. */
	.macro	bm_vec_bad n
	.balign	0x80
	mov	x0, #\n
	b	bm_bad_entry
	.endm

	.balign	2048
bm_vectors:
	bm_vec_bad 0		/* current EL, SP0 */
	bm_vec_bad 1
	bm_vec_bad 2
	bm_vec_bad 3
	bm_vec_bad 4		/* current EL, SPx: sync */
	.balign	0x80
	b	bm_irq_entry	/* current EL, SPx: IRQ */
	bm_vec_bad 6
	bm_vec_bad 7
	bm_vec_bad 8		/* lower EL, AArch64 */
	bm_vec_bad 9
	bm_vec_bad 10
	bm_vec_bad 11
	bm_vec_bad 12		/* lower EL, AArch32 */
	bm_vec_bad 13
	bm_vec_bad 14
	bm_vec_bad 15

bm_bad_entry:
	mrs	x1, esr_el1
	mrs	x2, elr_el1
	mrs	x3, far_el1
	bl	bm_exception
	b	bm_hang

/*
 * IRQ: save what a C call may clobber (x0-x18, x29, x30), run bm_irq().
 * Interrupts stay masked until eret: handlers do not nest.
 */
bm_irq_entry:
	sub	sp, sp, #176
	stp	x0, x1, [sp, #0]
	stp	x2, x3, [sp, #16]
	stp	x4, x5, [sp, #32]
	stp	x6, x7, [sp, #48]
	stp	x8, x9, [sp, #64]
	stp	x10, x11, [sp, #80]
	stp	x12, x13, [sp, #96]
	stp	x14, x15, [sp, #112]
	stp	x16, x17, [sp, #128]
	stp	x18, x29, [sp, #144]
	str	x30, [sp, #160]
	bl	bm_irq
	ldp	x0, x1, [sp, #0]
	ldp	x2, x3, [sp, #16]
	ldp	x4, x5, [sp, #32]
	ldp	x6, x7, [sp, #48]
	ldp	x8, x9, [sp, #64]
	ldp	x10, x11, [sp, #80]
	ldp	x12, x13, [sp, #96]
	ldp	x14, x15, [sp, #112]
	ldp	x16, x17, [sp, #128]
	ldp	x18, x29, [sp, #144]
	ldr	x30, [sp, #160]
	add	sp, sp, #176
	eret

	.bss
	.balign	16
bm_stack:
	.skip	16384
bm_stack_top:
