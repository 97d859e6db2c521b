/* SPDX-License-Identifier: GPL-2.0 */
/* Links vm/guest-init.sh into libxk as the bytes xk_guest_init..._end. */
	.section .rodata
	.global xk_guest_init
	.global xk_guest_init_end
xk_guest_init:
	.incbin "vm/guest-init.sh"
xk_guest_init_end:
	.section .note.GNU-stack, "", @progbits
