// SPDX-License-Identifier: GPL-2.0
/*
 * libxk analysis: the span forms, in the order the pipeline asks them
 * (form.h). The variables form looks at the whole object. Then boot-time
 * code, the most specific form first: a note (the value only logged or
 * armed deadlines), the variables it derives, else refused; then a
 * function only the check build changes; last, the register forms claim
 * any function with seeds or changed regions. The call-state form claims
 * nothing: it finishes the spans of every function. Then, once every
 * object had its first analysis, the forms that build values of their own
 * take, in this order, what it refused: by shape (values of the default's
 * kind), replayed (other schedules, replayed region by region), the heap
 * of one call; the call-state form's check below the default comes first.
 * Last, the checks of the finished table, in this order: emulated spans
 * whose bytes hold another probe (register), the call-state bound, the
 * bounds a compare keeps.
 */
#include "form.h"

extern const struct gen_form form_variables, form_boot_note, form_boot_data,
	form_boot_code, form_check_only, form_register, form_call_state,
	form_by_shape, form_replayed, form_heap_call, form_compare_bounds;

const struct gen_form *const gen_forms[] = {
	&form_variables,
	&form_boot_note,
	&form_boot_data,
	&form_boot_code,
	&form_check_only,
	&form_register,
	&form_call_state,
	&form_by_shape,
	&form_replayed,
	&form_heap_call,
	&form_compare_bounds,
	NULL
};
