// SPDX-License-Identifier: GPL-2.0
/*
 * xkernel.ko: the runtime half of Scoped Indirect Execution.
 *
 * This file holds the control interface: a misc device, /dev/xkernel, whose
 * ioctls are the only way user space talks to the module. Opening it needs
 * CAP_SYS_ADMIN in the initial user namespace.
 */
#define pr_fmt(fmt) "xkernel: " fmt

#include <linux/capability.h>
#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/uaccess.h>

#include "xk/xk_ioctl.h"

#define XK_MODULE_VERSION "0.1.0"

/*
 * Runs on every open of /dev/xkernel, in process context, no lock held.
 * The capability check is here (not per ioctl) so that a descriptor handed to
 * a less privileged process was still opened by an administrator.
 */
static int xk_open(struct inode *inode, struct file *file)
{
	if (!capable(CAP_SYS_ADMIN)) {
		pr_notice("open refused: %s[%d] (uid %u) lacks CAP_SYS_ADMIN\n",
			  current->comm, task_pid_nr(current),
			  from_kuid(&init_user_ns, current_uid()));
		return -EPERM;
	}
	return 0;
}

/* Runs in process context for each ioctl; no lock held on entry. */
static long xk_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	void __user *uarg = (void __user *)arg;

	switch (cmd) {
	case XK_IOC_VERSION: {
		struct xk_ioc_version v = {
			.abi_version = XK_ABI_VERSION,
			.nr_tables = 0,
		};

		strscpy(v.module_version, XK_MODULE_VERSION,
			sizeof(v.module_version));
		return copy_to_user(uarg, &v, sizeof(v)) ? -EFAULT : 0;
	}
	default:
		return -ENOTTY;
	}
}

static const struct file_operations xk_fops = {
	.owner = THIS_MODULE,
	.open = xk_open,
	.unlocked_ioctl = xk_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
};

static struct miscdevice xk_misc = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = "xkernel",
	.fops = &xk_fops,
	.mode = 0600,
};

static int __init xk_init(void)
{
	int err = misc_register(&xk_misc);

	if (err)
		return err;
	pr_info("loaded, control device /dev/%s (ABI %d)\n", xk_misc.name,
		XK_ABI_VERSION);
	return 0;
}

static void __exit xk_exit(void)
{
	misc_deregister(&xk_misc);
	pr_info("unloaded\n");
}

module_init(xk_init);
module_exit(xk_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("xkernel: live retuning of compiled-in kernel constants");
MODULE_VERSION(XK_MODULE_VERSION);
