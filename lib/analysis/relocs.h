/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Internals of the offline analysis: data and relocations compared between
 * builds, and which code refers to a field (relocs.c).
 */
#ifndef XK_ANALYSIS_RELOCS_H
#define XK_ANALYSIS_RELOCS_H

#include "table.h"

/* The functions and data objects of an object, by section and address. */
struct gen_sym_index {
	const struct xk_obj *o;
	const struct xk_sym **sym;
	size_t nr;
};
int gen_index_symbols(const struct xk_obj *o, struct gen_sym_index *x);
/* Whether y is a named data object: STT_OBJECT in an allocated section
 * that holds no code, metadata sections excepted. */
bool gen_data_object(const struct xk_sym *y);
/* The data object named like y (and in a section of the same name) in o. */
const struct xk_sym *gen_find_object(const struct xk_obj *o,
				     const struct xk_sym *y);
/* The named function or object of sec's object that holds byte at of sec,
 * or NULL. */
const struct xk_sym *gen_holder_in(const struct xk_sec *sec, int64_t at);
/*
 * Whether the relocations of symbol a (in base) and b (in variant), at the
 * same offsets, point at the same places; the first that differs in why.
 */
int gen_same_relas(const struct gen_sym_index *base, const struct xk_sym *a,
		   const struct gen_sym_index *var, const struct xk_sym *b,
		   char *why, size_t size);
/* Whether the bytes of objects a and b agree outside their relocations;
 * else the first that differs in *at. */
bool gen_same_bytes(const struct xk_sym *a, const struct xk_sym *b,
		    uint64_t *at);
/* Whether instructions a of fa and b of fb (the same text) relocate the
 * same fields to the same places; else why. */
bool gen_same_relocs(const struct xk_sym *fa, const struct xk_insn *a,
		     const struct xk_sym *fb, const struct xk_insn *b,
		     char *why, size_t size);
/*
 * What gen_field_refs() asks of one reference of code to a field:
 * instruction n of function f (code), whose relocation r points into it,
 * arg the caller's. True when it is the reference sought (why naming it), which
 * ends the walk.
 */
typedef bool (*gen_field_ref_fn)(const struct xk_obj *o, const struct xk_sym *f,
				 const struct xk_func_code *code, size_t n,
				 const struct xk_rela *r, const void *arg,
				 char *why, size_t size);
/*
 * Walks the instructions of the functions of object o that refer to bytes
 * [from, to) of data object y, each given to fn until it returns true
 * (*found then). boot_only: only boot-time code (.init.text).
 */
int gen_field_refs(const struct xk_obj *o, const struct xk_sym *y,
		   uint64_t from, uint64_t to, bool boot_only,
		   gen_field_ref_fn fn, const void *arg, char *why, size_t size,
		   bool *found);
/*
 * Whether code of object o but function skip (NULL: none) stores to bytes
 * [from, to) of data object y or takes an address in them, the variable's
 * own interface (a setter, a sysctl handler) aside; why names the first.
 */
int gen_code_writes(const struct xk_obj *o, const struct xk_sym *y,
		    uint64_t from, uint64_t to, const struct xk_sym *skip,
		    char *why, size_t size, bool *writes);

/* Whether instruction in of f names per-CPU data (a %gs operand, or a
 * relocation to __per_cpu_offset, this_cpu_off or .data..percpu). */
bool gen_insn_per_cpu(const struct xk_sym *f, const struct xk_insn *in);

#endif
