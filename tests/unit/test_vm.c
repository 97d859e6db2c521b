// SPDX-License-Identifier: GPL-2.0
/*
 * The guest harness's initramfs: the modules the busybox guest loads before
 * it can reach the host's files, from the target's modules.dep.
 */
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"
#include "unit.h"
#include "vm.h"

static struct xk_kernel k;

/* A module tree of its own, holding modules.dep with text. */
static int tree_with(const char *text)
{
	char path[XK_PATH_MAX + 16];

	memset(&k, 0, sizeof(k));
	snprintf(k.modules, sizeof(k.modules), "/tmp/xk-test-vm-XXXXXX");
	if (!mkdtemp(k.modules))
		return -errno;
	snprintf(path, sizeof(path), "%s/modules.dep", k.modules);
	return xk_write_file(path, text, strlen(text), 0644);
}

/*
 * Debian 12's 6.1 cloud kernel (its modules.dep, in part): virtio PCI and
 * virtiofs are modules; each loads after what it needs, the last of its
 * list first, as modprobe does, and a module two need loads once.
 */
static int modules_of_6_1_load_in_order(void)
{
	static const char *const want[] = {
		"kernel/drivers/virtio/virtio_ring.ko",
		"kernel/drivers/virtio/virtio.ko",
		"kernel/drivers/virtio/virtio_pci_modern_dev.ko",
		"kernel/drivers/virtio/virtio_pci_legacy_dev.ko",
		"kernel/drivers/virtio/virtio_pci.ko",
		"kernel/fs/fuse/fuse.ko",
		"kernel/fs/fuse/virtiofs.ko",
	};
	char order[MAX_EARLY_MODULES][XK_PATH_MAX];
	int nr = -1;

	CHECK(tree_with(
		"kernel/fs/fuse/cuse.ko: kernel/fs/fuse/fuse.ko\n"
		"kernel/fs/fuse/virtiofs.ko: kernel/drivers/virtio/virtio.ko "
		"kernel/drivers/virtio/virtio_ring.ko kernel/fs/fuse/fuse.ko\n"
		"kernel/fs/fuse/fuse.ko:\n"
		"kernel/drivers/virtio/virtio.ko: kernel/drivers/virtio/virtio_ring.ko\n"
		"kernel/drivers/virtio/virtio_ring.ko:\n"
		"kernel/drivers/virtio/virtio_pci.ko: "
		"kernel/drivers/virtio/virtio_pci_legacy_dev.ko "
		"kernel/drivers/virtio/virtio_pci_modern_dev.ko "
		"kernel/drivers/virtio/virtio.ko kernel/drivers/virtio/virtio_ring.ko\n"
		"kernel/drivers/virtio/virtio_pci_modern_dev.ko:\n"
		"kernel/drivers/virtio/virtio_pci_legacy_dev.ko:\n") == 0);
	CHECK(early_module_order(&k, order, &nr) == 0);
	xk_rm_rf(k.modules);
	CHECK(nr == (int)(sizeof(want) / sizeof(want[0])));
	for (int i = 0; i < nr; i++)
		CHECK(!strcmp(order[i], want[i]));
	return 0;
}

/* Built in (Debian 12's 6.12 cloud kernel): nothing to carry, whatever
 * else the tree holds; a compressed module is found by its name. */
static int built_in_needs_none(void)
{
	char order[MAX_EARLY_MODULES][XK_PATH_MAX];
	int nr = -1;

	CHECK(tree_with("kernel/fs/overlayfs/overlay.ko.xz:\n"
			"kernel/drivers/virtio/virtio_pci_foo.ko.xz:\n") == 0);
	CHECK(early_module_order(&k, order, &nr) == 0 && nr == 0);
	xk_rm_rf(k.modules);
	CHECK(tree_with("kernel/fs/fuse/virtiofs.ko.xz: kernel/fs/fuse/fuse.ko.xz\n"
			"kernel/fs/fuse/fuse.ko.xz:\n") == 0);
	CHECK(early_module_order(&k, order, &nr) == 0 && nr == 2);
	xk_rm_rf(k.modules);
	CHECK(!strcmp(order[0], "kernel/fs/fuse/fuse.ko.xz") &&
	      !strcmp(order[1], "kernel/fs/fuse/virtiofs.ko.xz"));
	return 0;
}

/* No modules.dep: named, not taken for "all built in". */
static int missing_dep_is_an_error(void)
{
	char order[MAX_EARLY_MODULES][XK_PATH_MAX];
	int nr;

	memset(&k, 0, sizeof(k));
	snprintf(k.modules, sizeof(k.modules), "/tmp/xk-test-vm-none");
	CHECK(early_module_order(&k, order, &nr) == -ENOENT);
	CHECK(strstr(xk_last_error(), "modules.dep"));
	return 0;
}

UNIT_MAIN("vm", T(modules_of_6_1_load_in_order), T(built_in_needs_none),
	  T(missing_dep_is_an_error))
