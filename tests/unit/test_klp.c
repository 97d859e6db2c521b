// SPDX-License-Identifier: GPL-2.0
/*
 * The livepatch klp-build makes for bench/compare.sh (lib/klp/klp.c),
 * on the stock kernel's real objects: how each relocation of the changed
 * functions is resolved (exported, a livepatch symbol, a copied section, or
 * refused), and the module's livepatch ELF form.
 */
#include <stdlib.h>
#include <unistd.h>

#include "klp.h"
#include "unit.h"
#include "unit_kernel.h"

#define DIR "/tmp/xk-unit-klp"

static struct klp_vmlinux vm;
static struct xk_klp_result res;
static int built = -1;

/* One build of BLK_MAX_REQUEST_COUNT = 4, shared by the tests. */
static int build_once(void)
{
	struct xk_constant c;
	struct xk_scope t;

	if (built >= 0)
		return built;
	built = 1;
	if (gen(STOCK, "BLK_MAX_REQUEST_COUNT", &t))
		return built;
	if (xk_constant_resolve(STOCK, "BLK_MAX_REQUEST_COUNT", &c) ||
	    xk_klp_build(&kernel, &c, &t, 4, DIR, &res))
		printf("#   klp build: %s\n", xk_last_error());
	else
		built = 0;
	xk_scope_free(&t);
	return built;
}

/* The relocations of one section of o, each classified. */
struct seen {
	int exported, klp, section, refused;
	char klp_names[512];
};

static void classify_all(const struct xk_obj *o, const struct xk_sec *s,
			 const bool *copied, struct seen *r)
{
	memset(r, 0, sizeof(*r));
	for (size_t i = 0; i < s->nr_relas; i++) {
		struct klp_ref ref;

		if (klp_classify(&vm, o, NULL, copied, &s->relas[i], &ref)) {
			r->refused++;
			continue;
		}
		if (ref.kind == KLP_REF_EXPORTED)
			r->exported++;
		else if (ref.kind == KLP_REF_SECTION)
			r->section++;
		else {
			size_t n = strlen(r->klp_names);

			r->klp++;
			snprintf(r->klp_names + n, sizeof(r->klp_names) - n, "%s ",
				 ref.name);
		}
	}
}

static const struct xk_sec *section(const struct xk_obj *o, const char *name)
{
	for (size_t i = 0; i < o->nr_secs; i++)
		if (!strcmp(o->secs[i].name, name))
			return &o->secs[i];
	return NULL;
}

static int the_span_functions_are_the_changed_ones(void)
{
	CHECK(build_once() == 0);
	CHECK(res.nr_funcs == 2);
	CHECK(!strcmp(res.func[0], "blk_add_rq_to_plug"));
	CHECK(!strcmp(res.object[0], "block/blk-mq.o"));
	CHECK(!strcmp(res.func[1], "blk_start_plug_nr_ios"));
	CHECK(res.relocs_klp > 0 && res.relocs_exported > 0);
	return 0;
}

/* blk_add_rq_to_plug: calls and data of vmlinux, exported or not */
static int relocations_of_blk_add_rq_to_plug(void)
{
	struct xk_obj o;
	const struct xk_sec *text;
	struct seen r;
	bool *copied;

	CHECK(build_once() == 0);
	CHECK(xk_obj_open(&o, DIR "/blk-mq.new.o") == 0);
	text = section(&o, ".text.blk_add_rq_to_plug");
	CHECK(text);
	copied = calloc(o.nr_secs, sizeof(*copied));
	CHECK(copied);
	copied[text->index] = true;
	classify_all(&o, text, copied, &r);
	printf("#   exported %d, livepatch %d (%s), refused %d\n", r.exported,
	       r.klp, r.klp_names, r.refused);
	CHECK(r.refused == 0);
	/* __fentry__, pcpu_hot, const_pcpu_hot, __cpu_online_mask,
	 * __SCT__preempt_schedule_notrace, __x86_return_thunk: exported */
	CHECK(r.exported == 14);
	/* a global of the same object, a tracepoint and its static call,
	 * none exported: livepatch symbols, unique in vmlinux (position 0) */
	CHECK(r.klp == 5);
	CHECK(strstr(r.klp_names, ".klp.sym.vmlinux.blk_mq_flush_plug_list,0 "));
	CHECK(strstr(r.klp_names, ".klp.sym.vmlinux.__tracepoint_block_plug,0 "));
	CHECK(strstr(r.klp_names, ".klp.sym.vmlinux.__SCT__tp_func_block_plug,0 "));
	/* the keys of its jump labels (PC64 in __jump_table) go the same way */
	{
		const struct xk_sec *jt = section(&o, "__jump_table");
		int keys = 0;

		CHECK(jt);
		for (size_t i = 0; i < jt->nr_relas; i++) {
			const struct xk_rela *key = &jt->relas[i], *code = NULL;
			struct klp_ref ref;

			for (size_t j = 0; j < jt->nr_relas; j++)
				if (jt->relas[j].offset + 8 == key->offset)
					code = &jt->relas[j];
			if (key->type != R_X86_64_PC64 || !code ||
			    code->sym->sec != text)
				continue;
			CHECK(klp_classify(&vm, &o, NULL, copied, key, &ref) == 0);
			CHECK(ref.kind == KLP_REF_KLP);
			CHECK(!strcmp(ref.name, ".klp.sym.vmlinux.__tracepoint_block_plug,0"));
			keys++;
		}
		CHECK(keys == 2);
	}
	free(copied);
	xk_obj_close(&o);
	return 0;
}

/* what cannot be a livepatch relocation is refused, never guessed */
static int refusals(void)
{
	struct xk_obj o;
	struct xk_rela fake;
	struct klp_ref ref;
	const struct xk_sym *dup = NULL;
	bool *copied;

	CHECK(build_once() == 0);
	CHECK(xk_obj_open(&o, DIR "/blk-mq.new.o") == 0);
	copied = calloc(o.nr_secs, sizeof(*copied));
	CHECK(copied);
	/* a symbol vmlinux has more than once: which one is unknown */
	for (size_t i = 0; i < o.nr_syms && !dup; i++) {
		const struct xk_ksym *first;
		const struct xk_sym *y = &o.syms[i];

		if (y->name[0] && GELF_ST_TYPE(y->sym.st_info) != STT_SECTION &&
		    !klp_exported(&vm, y->name) &&
		    xk_kallsyms_lookup(&vm.ks, y->name, &first) > 1)
			dup = y;
	}
	CHECK(dup);
	printf("#   a name vmlinux lists twice: %s\n", dup->name);
	fake = (struct xk_rela){ .offset = 0x10, .type = R_X86_64_PC32, .addend = -4,
				 .sym = (struct xk_sym *)dup };
	CHECK(klp_classify(&vm, &o, NULL, copied, &fake, &ref) == -ENOTSUP);
	CHECK(strstr(xk_last_error(), "cannot tell its position"));
	/* a relocation type the module loader does not apply */
	fake.type = R_X86_64_GOTPCREL;
	CHECK(klp_classify(&vm, &o, NULL, copied, &fake, &ref) == -ENOTSUP);
	CHECK(strstr(xk_last_error(), "not one the module loader applies"));
	free(copied);
	xk_obj_close(&o);
	return 0;
}

/*
 * A local name vmlinux lists more than once: its position comes from the
 * object as the kernel compiled it (blk-mq.orig.o), checked here against a
 * global function of the same section, which vmlinux lists once
 */
static int a_repeated_name_gets_its_position_from_the_object_as_built(void)
{
	struct xk_obj o, orig;
	const struct xk_sym *dup = NULL, *at = NULL, *anchor = NULL;
	const struct xk_ksym *first, *ka;
	struct xk_rela rel;
	struct klp_ref ref;
	unsigned long long want;
	size_t n, pos;
	bool *copied;

	CHECK(build_once() == 0);
	CHECK(xk_obj_open(&o, DIR "/blk-mq.new.o") == 0);
	CHECK(xk_obj_open(&orig, DIR "/blk-mq.orig.o") == 0);
	copied = calloc(o.nr_secs, sizeof(*copied));
	CHECK(copied);
	/* a name vmlinux lists more than once, with another symbol of its
	 * section in the object as built that vmlinux lists once */
	for (size_t i = 0; i < o.nr_syms && !anchor; i++) {
		const struct xk_sym *y = &o.syms[i];

		if (!y->name[0] || (GELF_ST_TYPE(y->sym.st_info) != STT_FUNC &&
				    GELF_ST_TYPE(y->sym.st_info) != STT_OBJECT) ||
		    klp_exported(&vm, y->name) ||
		    xk_kallsyms_lookup(&vm.ks, y->name, &first) < 2)
			continue;
		dup = y;
		at = NULL;
		for (size_t j = 0; j < orig.nr_syms; j++)
			if (!strcmp(orig.syms[j].name, y->name) &&
			    GELF_ST_TYPE(orig.syms[j].sym.st_info) ==
			    GELF_ST_TYPE(y->sym.st_info))
				at = &orig.syms[j];
		for (size_t j = 0; at && j < orig.nr_syms && !anchor; j++) {
			const struct xk_sym *a = &orig.syms[j];

			if (a->sec == at->sec && a != at && a->name[0] &&
			    GELF_ST_TYPE(a->sym.st_info) != STT_SECTION &&
			    GELF_ST_BIND(a->sym.st_info) != STB_WEAK &&
			    xk_kallsyms_lookup(&vm.ks, a->name, &ka) == 1 && !ka->module)
				anchor = a;
		}
	}
	CHECK(anchor);
	xk_kallsyms_lookup(&vm.ks, anchor->name, &ka);
	want = ka->addr - anchor->sym.st_value + at->sym.st_value;
	rel = (struct xk_rela){ .offset = 0x10, .type = R_X86_64_PLT32, .addend = -4,
				.sym = (struct xk_sym *)dup };
	CHECK(klp_classify(&vm, &o, &orig, copied, &rel, &ref) == 0);
	CHECK(ref.kind == KLP_REF_KLP);
	CHECK(sscanf(strrchr(ref.name, ',') + 1, "%zu", &pos) == 1);
	n = xk_kallsyms_lookup(&vm.ks, dup->name, &first);
	printf("#   %s (%s): %zu in vmlinux, position %zu, where %s places it: 0x%llx\n",
	       dup->name, at->sec->name, n, pos, anchor->name, want);
	CHECK(pos >= 1 && pos <= n);
	CHECK(first[pos - 1].addr == want);
	free(copied);
	xk_obj_close(&orig);
	xk_obj_close(&o);
	return 0;
}

/*
 * IORING_MAX_ENTRIES = 4096: io_uring_setup's lock class keys (__key.N,
 * dozens in vmlinux, of size 0) become the patch's own, as kpatch does
 */
static int once_flags_and_keys_are_the_patchs_own(void)
{
	struct xk_constant c;
	struct xk_scope t;
	struct xk_klp_result r;
	int err;

	CHECK(gen(STOCK, "IORING_MAX_ENTRIES", &t) == 0);
	CHECK(xk_constant_resolve(STOCK, "IORING_MAX_ENTRIES", &c) == 0);
	err = xk_klp_build(&kernel, &c, &t, 4096, DIR "-ioring", &r);
	if (err)
		printf("#   klp build: %s\n", xk_last_error());
	xk_scope_free(&t);
	CHECK(err == 0);
	printf("#   %d functions, %d fresh statics, %d livepatch relocations\n",
	       r.nr_funcs, r.fresh_statics, r.relocs_klp);
	CHECK(r.fresh_statics >= 1);
	return 0;
}

/* the module: SHN_LIVEPATCH symbols, SHF_RELA_LIVEPATCH sections */
static int the_module_is_in_livepatch_form(void)
{
	struct xk_obj o;
	int klp_syms = 0, undefined_klp = 0, klp_relas = 0;
	bool text_rela = false;

	CHECK(build_once() == 0);
	CHECK(xk_obj_open(&o, res.ko) == 0);
	for (size_t i = 0; i < o.nr_syms; i++) {
		if (strncmp(o.syms[i].name, ".klp.sym.", 9))
			continue;
		klp_syms++;
		undefined_klp += o.syms[i].sym.st_shndx != 0xff20;
	}
	for (size_t i = 0; i < o.nr_secs; i++) {
		const struct xk_sec *s = &o.secs[i];

		if (strncmp(s->name, ".klp.rela.vmlinux.", 18))
			continue;
		CHECK(s->sh.sh_type == SHT_RELA);
		CHECK(s->sh.sh_flags & 0x00100000);	/* SHF_RELA_LIVEPATCH */
		CHECK(s->sh.sh_flags & SHF_ALLOC);
		text_rela |= !strcmp(s->name, ".klp.rela.vmlinux..text.blk_add_rq_to_plug");
		klp_relas += s->sh.sh_size / s->sh.sh_entsize;
	}
	printf("#   %d livepatch symbols, %d livepatch relocations\n", klp_syms,
	       klp_relas);
	CHECK(klp_syms == 3 && undefined_klp == 0);
	CHECK(text_rela);
	CHECK(klp_relas == res.relocs_klp);
	xk_obj_close(&o);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct unit_test tests[] = {
		T(the_span_functions_are_the_changed_ones),
		T(relocations_of_blk_add_rq_to_plug), T(refusals),
		T(the_module_is_in_livepatch_form),
		T(a_repeated_name_gets_its_position_from_the_object_as_built),
		T(once_flags_and_keys_are_the_patchs_own),
	};
	int err;

	if (find_kernel())
		return 1;
	if (klp_vmlinux_load(&kernel, &vm)) {
		printf("Bail out! %s\n", xk_last_error());
		return 1;
	}
	err = unit_main("klp", tests, sizeof(tests) / sizeof(tests[0]), argc, argv);
	klp_vmlinux_free(&vm);
	return err;
}
