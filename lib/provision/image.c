// SPDX-License-Identifier: GPL-2.0
/*
 * libxk provision: what identifies a kernel image, and what it ships. The
 * GNU build id of a cached image's vmlinux and of the running kernel
 * (/sys/kernel/notes): equal, the host runs that very build (host mode,
 * shipped tables); a module of the image package, decompressed once into
 * the cache (the identity check of a module's objects, the guest's
 * initramfs).
 */
#define _GNU_SOURCE
#include <gelf.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include "image.h"
#include "internal.h"
#include "xk/provision.h"

#define NT_GNU_BUILD_ID_TYPE 3

static void hex_of(const uint8_t *b, size_t n, char *out, size_t size)
{
	size_t k = 0;

	for (size_t i = 0; i < n && k + 3 <= size; i++, k += 2)
		snprintf(out + k, 3, "%02x", b[i]);
	out[k] = '\0';
}

/*
 * The GNU build id in a run of ELF notes (a .notes section, or the
 * kernel's /sys/kernel/notes, which is that section as linked): 0 with it
 * in hex, -ENOENT when there is none.
 */
static int build_id_in_notes(const uint8_t *p, size_t len, char *hex,
			     size_t size)
{
	size_t at = 0;

	while (at + 12 <= len) {
		uint32_t namesz, descsz, type;
		size_t name_at = at + 12, desc_at;

		memcpy(&namesz, p + at, 4);
		memcpy(&descsz, p + at + 4, 4);
		memcpy(&type, p + at + 8, 4);
		if (namesz > len || descsz > len)
			break;
		desc_at = name_at + ((namesz + 3) & ~3u);
		if (desc_at > len || desc_at + descsz > len)
			break;
		if (type == NT_GNU_BUILD_ID_TYPE && namesz == 4 &&
		    !memcmp(p + name_at, "GNU", 4) && descsz && 2 * descsz < size) {
			hex_of(p + desc_at, descsz, hex, size);
			return 0;
		}
		at = desc_at + ((descsz + 3) & ~3u);
	}
	return -ENOENT;
}

static int build_id_file_impl(const char *path, char *hex, size_t size)
{
	int fd, err = -ENOENT;
	Elf *e;
	Elf_Scn *scn = NULL;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return xk_err(-EINVAL, "libelf: %s", elf_errmsg(-1));
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return xk_err(-errno, "%s: %s", path, strerror(errno));
	e = elf_begin(fd, ELF_C_READ, NULL);
	if (!e) {
		close(fd);
		return xk_err(-EINVAL, "%s: not an ELF file (%s)", path,
			      elf_errmsg(-1));
	}
	while (err == -ENOENT && (scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		d = elf_getdata(scn, NULL);
		if (d && d->d_buf)
			err = build_id_in_notes(d->d_buf, d->d_size, hex, size);
	}
	elf_end(e);
	close(fd);
	return err == -ENOENT ? xk_err(err, "%s: no build id note", path) : err;
}

int xk_build_id_file(const char *path, char *hex, size_t size)
{
	xk_err_clear();
	return xk_api_return(__func__, build_id_file_impl(path, hex, size));
}

int image_kernel_build_id(const struct xk_kernel *k, char *hex, size_t size)
{
	char path[XK_PATH_MAX + 16];

	return xk_snprintf(path, sizeof(path), "%s/vmlinux", k->dir) ?:
	       build_id_file_impl(path, hex, size);
}

int xk_kernel_build_id(const struct xk_kernel *k, char *hex, size_t size)
{
	xk_err_clear();
	return xk_api_return(__func__, image_kernel_build_id(k, hex, size));
}

int image_running_build_id(const char *root, char *hex, size_t size)
{
	char path[XK_PATH_MAX], *buf;
	size_t len;
	int err;

	err = xk_snprintf(path, sizeof(path), "%s/sys/kernel/notes", root);
	if (err)
		return err;
	err = xk_read_file(path, &buf, &len);
	if (err)
		return err;
	err = build_id_in_notes((const uint8_t *)buf, len, hex, size);
	free(buf);
	return err;
}

int xk_build_id_running(char *hex, size_t size)
{
	int err;

	xk_err_clear();
	err = image_running_build_id("", hex, size);
	if (err)
		err = xk_err(err, "/sys/kernel/notes: %s", err == -ENOENT ?
			     "no build id of the running kernel" : strerror(-err));
	return xk_api_return(__func__, err);
}

/*
 * The shipped module, decompressed once into the cache (the image package
 * ships .ko.xz; a plain, .zst or .gz one is taken too). The identity check
 * of a module's objects and the guest's initramfs read it.
 */
int xk_shipped_module(const struct xk_kernel *k, const char *ko, char *out,
		      size_t size)
{
	static const struct { const char *ext; const char *tool; } forms[] = {
		{ ".xz", "xz" }, { ".zst", "zstd" }, { ".gz", "gzip" },
		{ "", NULL },
	};
	char src[XK_PATH_MAX], dir[XK_PATH_MAX];
	int err;

	err = xk_snprintf(dir, sizeof(dir), "%s/xk-build/modules", k->dir) ?:
	      xk_mkdir_p(dir) ?:
	      xk_snprintf(out, size, "%s/%s", dir, strrchr(ko, '/') ?
			  strrchr(ko, '/') + 1 : ko);
	if (err)
		return xk_err(err, "%s: path too long", ko);
	if (xk_exists(out))
		return 0;
	for (size_t i = 0; i < ARRAY_SIZE(forms); i++) {
		char script[XK_PATH_MAX * 3];

		if (xk_snprintf(src, sizeof(src), "%s/kernel/%s%s", k->modules, ko,
				forms[i].ext) || !xk_exists(src))
			continue;
		if (!forms[i].tool)
			return xk_copy_file(src, out, 0644);
		err = xk_snprintf(script, sizeof(script),
				  "%s -dc '%s' > '%s.tmp' && mv '%s.tmp' '%s'",
				  forms[i].tool, src, out, out, out);
		if (!err) {
			const char *argv[] = { "/bin/sh", "-c", script, NULL };
			struct xk_cmd cmd = { .argv = argv };

			err = xk_run_step("decompressing the shipped module", &cmd);
		}
		return err;
	}
	return xk_err(-ENOENT, "the image package ships no %s under %s/kernel: "
			       "is the module built in this configuration?",
		      ko, k->modules);
}
