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
#include <linux/ktime.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/security.h>
#include <linux/uaccess.h>

#include <linux/slab.h>

#include "xk_internal.h"

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

DEFINE_MUTEX(xk_lock);

/*
 * Lockdown: a table or a policy writes kernel state at places user space
 * chooses, which is what integrity lockdown forbids of /dev/mem; so both
 * are refused, as is a new value for a constant already loaded (unload,
 * back to the compiled-in values, stays allowed). Runs in process context
 * before any kernel state changes, xk_lock held or not. The lockdown LSM
 * logs its own line too.
 */
int xk_refuse_locked_down(char *error)
{
	int err = security_locked_down(LOCKDOWN_DEV_MEM);

	if (err)
		xk_error(error, "the kernel is locked down (lockdown: integrity or "
			 "confidentiality): xkernel writes kernel state, so it loads "
			 "no table or policy and sets no value");
	return err;
}

/*
 * Copies a request in, checking its size field against ours, and clears
 * its error line (an out field, whatever user space left there).
 */
static int copy_req(void *req, size_t size, const void __user *uarg,
		    char *error)
{
	u32 usize;

	if (get_user(usize, (const u32 __user *)uarg))
		return -EFAULT;
	if (usize != size)
		return -EINVAL;
	if (copy_from_user(req, uarg, size))
		return -EFAULT;
	if (error)
		memset(error, 0, XK_ERROR_MAX);
	return 0;
}

/* Copies a request back out (its error line, its results); err, or -EFAULT. */
static long reply(void __user *uarg, const void *req, size_t size, long err)
{
	return copy_to_user(uarg, req, size) ? -EFAULT : err;
}

/*
 * A request whose work runs under xk_lock: copied in (size checked, error
 * line cleared), run, copied back out. A global or per-task transition
 * drops xk_lock while it scans and waits (its constants are busy
 * meanwhile, xk_transition_busy), so the lock is only held for short
 * work; it is still taken killable. Process context.
 */
static long locked_request(void __user *uarg, void *req, size_t size,
			   char *error, int (*run)(void *req))
{
	int err = copy_req(req, size, uarg, error);

	if (err)
		return err;
	if (mutex_lock_killable(&xk_lock))
		return -EINTR;
	err = run(req);
	mutex_unlock(&xk_lock);
	return reply(uarg, req, size, err);
}

static int run_load(void *r)
{
	struct xk_ioc_load *req = r;

	return xk_table_load(req, u64_to_user_ptr(req->spans));
}

/*
 * The constant a set names, if its value may be changed: loaded, not
 * driven by a policy, not disarmed by a fault. Runs under xk_lock; used by
 * ioctl_set and ioctl_set_many.
 */
static int settable(const char *name, char *error, struct xk_const **out)
{
	struct xk_const *c = xk_find_const(name);

	*out = c;
	if (!c)
		return xk_error(error, "%s is not loaded (xk load first)", name),
		       -ENOENT;
	if (c->policy[0])
		return xk_error(error, "%s: its values are chosen by policy %s (xk "
				"unload it first)", name, c->policy), -EBUSY;
	if (READ_ONCE(c->faulted))
		return xk_error(error, "%s was disarmed after a write to memory "
				"faulted (xk unload it)", name), -EIO;
	/* a transition under way (its ioctl waits without xk_lock) */
	return xk_transition_busy(c, error);
}

static int run_set(void *r)
{
	struct xk_ioc_set *req = r;
	struct xk_const *c;
	int err;

	req->name[XK_NAME_MAX - 1] = '\0';
	err = xk_refuse_locked_down(req->error) ?:
	      settable(req->name, req->error, &c);
	if (err)
		return err;
	req->old_value = c->value;
	/* a request the transition would refuse changes nothing, not even
	 * the settled text */
	if (req->value < c->min || req->value > c->max)
		return xk_error(req->error, "%s: value %lld is out of bounds [%lld, "
				"%lld]", c->name, req->value, c->min, c->max), -ERANGE;
	if (req->mode > XK_MODE_PER_TASK)
		return xk_error(req->error, "unknown mode %u", req->mode), -EINVAL;
	err = xk_check_timeout(req->timeout_ms, req->error) ?:
	      xk_value_prepared(c, req->value, req->error);
	if (err)
		return err;
	/* settled spans are probed again first: the text back as compiled */
	err = xk_settle_undo(c, req->error);
	if (err)
		return err;
	err = xk_transition(c, req->value, req->mode, req->timeout_ms,
			    req->error, &req->transition_ns);
	if (!err)	/* out: the mode used (replayed, call state: never immediate) */
		req->mode = c->last_mode;
	return err;
}

static int run_settle(void *r)
{
	struct xk_ioc_settle *req = r;
	struct xk_const *c;
	ktime_t t0 = ktime_get();
	int err;

	req->name[XK_NAME_MAX - 1] = '\0';
	if (req->undo) {
		/* back to the compiled bytes: allowed for a disarmed constant */
		c = xk_find_const(req->name);
		err = c ? xk_transition_busy(c, req->error) :
			  (xk_error(req->error, "%s is not loaded", req->name), -ENOENT);
		err = err ?: xk_settle_undo(c, req->error);
	} else {
		err = settable(req->name, req->error, &c);
		if (err)
			goto out;
		/* the text is written: refused under lockdown like a value */
		err = xk_refuse_locked_down(req->error) ?:
		      xk_settle(c, req->error, &req->nr_settled, &req->nr_kept);
	}
out:
	req->settle_ns = ktime_to_ns(ktime_sub(ktime_get(), t0));
	return err;
}

static int run_unload(void *r)
{
	struct xk_ioc_unload *req = r;

	req->name[XK_NAME_MAX - 1] = '\0';
	return xk_table_unload(req->name, req->all, req->error,
			       &req->nr_unloaded);
}

static long ioctl_load(void __user *uarg)
{
	struct xk_ioc_load req;

	return locked_request(uarg, &req, sizeof(req), req.error, run_load);
}

static long ioctl_set(void __user *uarg)
{
	struct xk_ioc_set req;

	return locked_request(uarg, &req, sizeof(req), req.error, run_set);
}

static long ioctl_unload(void __user *uarg)
{
	struct xk_ioc_unload req;

	return locked_request(uarg, &req, sizeof(req), req.error, run_unload);
}

static int run_policy_prog(void *r)
{
	struct xk_ioc_policy_prog *req = r;

	return xk_policy_set_prog(req->cookie, req->prog_fd, req->error);
}

static long ioctl_policy_prog(void __user *uarg)
{
	struct xk_ioc_policy_prog req;

	return locked_request(uarg, &req, sizeof(req), req.error, run_policy_prog);
}

static int run_point(void *r)
{
	return xk_table_add_point(r);
}

static long ioctl_point(void __user *uarg)
{
	struct xk_ioc_point req;

	return locked_request(uarg, &req, sizeof(req), req.error, run_point);
}

static int run_replay(void *r)
{
	return xk_table_add_replay(r);
}

/* The request is ~10 KiB: on the heap, not the kernel stack. */
static long ioctl_replay(void __user *uarg)
{
	struct xk_ioc_replay *req = kzalloc(sizeof(*req), GFP_KERNEL);
	long err;

	if (!req)
		return -ENOMEM;
	err = locked_request(uarg, req, sizeof(*req), req->error, run_replay);
	kfree(req);
	return err;
}

static long ioctl_settle(void __user *uarg)
{
	struct xk_ioc_settle req;

	return locked_request(uarg, &req, sizeof(req), req.error, run_settle);
}

static long ioctl_set_many(void __user *uarg)
{
	struct xk_ioc_set_many *req;
	struct xk_tx *tx;
	int err;

	req = kzalloc(sizeof(*req), GFP_KERNEL);
	tx = kzalloc(sizeof(*tx), GFP_KERNEL);
	err = req && tx ? copy_req(req, sizeof(*req), uarg, req->error) : -ENOMEM;
	if (err)
		goto out;
	if (req->nr < 1 || req->nr > XK_TX_MAX) {
		xk_error(req->error, "a transaction has 1 to %d constants", XK_TX_MAX);
		err = -EINVAL;
		goto copy_out;
	}
	if (mutex_lock_killable(&xk_lock)) {
		err = -EINTR;
		goto copy_out;
	}
	tx->nr = req->nr;
	err = xk_refuse_locked_down(req->error);
	for (u32 i = 0; i < req->nr && !err; i++) {
		req->names[i][XK_NAME_MAX - 1] = '\0';
		tx->value[i] = req->values[i];
		err = settable(req->names[i], req->error, &tx->c[i]) ?:
		      xk_value_prepared(tx->c[i], req->values[i], req->error);
		for (u32 j = 0; j < i && !err; j++) {
			if (tx->c[j] == tx->c[i]) {
				xk_error(req->error, "%s appears twice", req->names[i]);
				err = -EINVAL;
			}
		}
	}
	for (u32 i = 0; i < req->nr && !err; i++)
		err = xk_settle_undo(tx->c[i], req->error);
	if (!err)
		err = xk_transition_many(tx, req->mode, req->timeout_ms, req->error,
					 &req->transition_ns);
	if (!err)	/* out: the mode used (replayed, call state: never immediate) */
		req->mode = tx->c[0]->last_mode;
	mutex_unlock(&xk_lock);
copy_out:
	if (copy_to_user(uarg, req, sizeof(*req)))
		err = -EFAULT;
out:
	kfree(tx);
	kfree(req);
	return err;
}

/*
 * Whether the caller may see kernel addresses, as /proc/kallsyms decides
 * (kallsyms_show_value() is not exported): CAP_SYSLOG, unless kptr_restrict
 * is 2, where %pK prints zeros even for it. Process context (%pK's check
 * of the caller's credentials needs it). Status gives a probe's address to
 * such a caller only (it matches kprobes/list, which hides them the same
 * way); to anyone else the function and offset say where it is.
 */
static bool caller_sees_addresses(void)
{
	char buf[32];

	if (!has_capability_noaudit(current, CAP_SYSLOG))
		return false;
	snprintf(buf, sizeof(buf), "%pK", (void *)&xk_consts);
	return strspn(buf, "0x") != strlen(buf);
}

static long ioctl_status(void __user *uarg)
{
	bool show_addr = caller_sees_addresses();
	struct xk_ioc_status *req;
	struct xk_const *c;
	u32 idx = 0;
	int err;

	req = kzalloc(sizeof(*req), GFP_KERNEL);
	if (!req)
		return -ENOMEM;
	err = copy_req(req, sizeof(*req), uarg, NULL);
	if (err)
		goto out;
	/* only the index is input: every other field is ours to fill */
	idx = req->index;
	memset(req, 0, sizeof(*req));
	req->size = sizeof(*req);
	req->index = idx;
	idx = 0;
	if (mutex_lock_killable(&xk_lock)) {
		err = -EINTR;
		goto out;
	}
	list_for_each_entry(c, &xk_consts, node) {
		if (idx++ != req->index)
			continue;
		req->found = 1;
		strscpy(req->name, c->name, sizeof(req->name));
		/* disarmed after a fault: the compiled-in value is in force */
		req->value = READ_ONCE(c->faulted) ? c->def : c->value;
		if (READ_ONCE(c->faulted))
			req->flags |= XK_STATUS_FAULTED;
		req->def = c->def;
		req->min = c->min;
		req->max = c->max;
		req->loaded_ns = c->loaded_ns;
		req->last_transition_ns = c->last_transition_ns;
		req->last_mode = c->last_mode;
		req->nr_spans = c->nr_spans;
		for (int i = 0; i < c->nr_spans && i < XK_MAX_SPANS; i++) {
			struct xk_ioc_span_status *st = &req->spans[i];

			strscpy(st->func, c->spans[i].desc.func, sizeof(st->func));
			st->probe = c->spans[i].desc.probe;
			st->addr = show_addr ?
				   (unsigned long)c->spans[i].rewrite.addr : 0;
			st->hits = atomic64_read(&c->spans[i].hits);
			st->settle = c->spans[i].settle;
		}
		/* then the variables, as in the load's order */
		for (int i = 0; i < c->nr_vars; i++) {
			struct xk_ioc_span_status *st;

			if (c->nr_spans + i >= XK_MAX_SPANS)
				break;
			st = &req->spans[c->nr_spans + i];
			strscpy(st->func, c->vars[i].desc.func, sizeof(st->func));
			st->probe = c->vars[i].desc.start;
			st->addr = show_addr ? c->vars[i].addr : 0;
			st->hits = atomic64_read(&c->vars[i].writes);
			st->settle = READ_ONCE(c->vars[i].gone) ? XK_SETTLE_GONE :
				     XK_SETTLE_VARIABLE;
			st->variable = 1;
		}
		req->nr_spans = c->nr_spans + c->nr_vars;
		if (c->policy[0])
			xk_policy_status(c, req);
		break;
	}
	req->refused_outside = atomic64_read(&xk_refused_outside);
	mutex_unlock(&xk_lock);
	if (copy_to_user(uarg, req, sizeof(*req)))
		err = -EFAULT;
out:
	kfree(req);
	return err;
}

/* Runs in process context for each ioctl; takes xk_lock where needed. */
static long xk_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	void __user *uarg = (void __user *)arg;

	switch (cmd) {
	case XK_IOC_VERSION: {
		struct xk_ioc_version v = { .abi_version = XK_ABI_VERSION,
					    .features = xk_policy_features() };
		struct xk_const *c;

		if (mutex_lock_killable(&xk_lock))
			return -EINTR;
		list_for_each_entry(c, &xk_consts, node)
			v.nr_constants++;
		mutex_unlock(&xk_lock);
		strscpy(v.module_version, XK_MODULE_VERSION,
			sizeof(v.module_version));
		return copy_to_user(uarg, &v, sizeof(v)) ? -EFAULT : 0;
	}
	case XK_IOC_LOAD:
		return ioctl_load(uarg);
	case XK_IOC_SET:
		return ioctl_set(uarg);
	case XK_IOC_UNLOAD:
		return ioctl_unload(uarg);
	case XK_IOC_STATUS:
		return ioctl_status(uarg);
	case XK_IOC_SET_MANY:
		return ioctl_set_many(uarg);
	case XK_IOC_SETTLE:
		return ioctl_settle(uarg);
	case XK_IOC_POLICY_PROG:
		return ioctl_policy_prog(uarg);
	case XK_IOC_POINT:
		return ioctl_point(uarg);
	case XK_IOC_REPLAY:
		return ioctl_replay(uarg);
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
	int err = xk_policy_init();

	if (err) {
		pr_err("cannot register the policy kfuncs (%d)\n", err);
		return err;
	}
	err = xk_transition_init();
	if (err)
		return err;
	err = xk_settle_init();
	if (err)
		goto err_transition;
	err = misc_register(&xk_misc);
	if (err)
		goto err_settle;
	pr_info("loaded, control device /dev/%s (ABI %d)\n", xk_misc.name,
		XK_ABI_VERSION);
	return 0;

err_settle:
	xk_settle_exit();
err_transition:
	xk_transition_exit();
	return err;
}

/*
 * Module unload: no ioctl can run (the device is gone first). Every loaded
 * constant holds a reference on the module (xk_table_load), so rmmod gets
 * here only once they are all unloaded; only a forced unload (rmmod -f, on
 * kernels built to allow it) finds one, and then nothing can keep the
 * module's text alive under probes that may refuse to go: said loudly.
 */
static void __exit xk_exit(void)
{
	char error[XK_ERROR_MAX];
	u32 nr;
	int err;

	misc_deregister(&xk_misc);
	/* the tables first: the module notifier guards what they hold */
	mutex_lock(&xk_lock);
	if (!list_empty(&xk_consts)) {
		err = xk_table_unload(NULL, true, error, &nr);
		if (err)
			pr_crit("forced unload with constants that cannot go: %s\n",
				error);
	}
	mutex_unlock(&xk_lock);
	xk_settle_exit();
	xk_transition_exit();
	pr_info("unloaded\n");
}

module_init(xk_init);
module_exit(xk_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("xkernel: live retuning of compiled-in kernel constants");
MODULE_VERSION(XK_MODULE_VERSION);
