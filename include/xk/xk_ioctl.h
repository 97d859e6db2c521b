/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * The control ABI between xk and xkernel.ko: ioctls on /dev/xkernel.
 * Opening the device requires CAP_SYS_ADMIN.
 */
#ifndef XK_IOCTL_H
#define XK_IOCTL_H

#ifdef __KERNEL__
#include <linux/ioctl.h>
#include <linux/types.h>
#else
#include <linux/ioctl.h>
#include <linux/types.h>
#endif

#define XK_DEVICE "/dev/xkernel"
#define XK_ABI_VERSION 1

struct xk_ioc_version {
	__u32 abi_version;	/* out: XK_ABI_VERSION */
	__u32 nr_tables;	/* out: scope tables loaded */
	char module_version[32];/* out */
};

#define XK_IOC_MAGIC 'X'
#define XK_IOC_VERSION _IOR(XK_IOC_MAGIC, 0x00, struct xk_ioc_version)

#endif
