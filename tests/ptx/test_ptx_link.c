/* The PTX front end's linker (ptx.<test>): modules merged into one, each
 * .extern resolved to the definition another module makes, .visible over
 * .weak, .common merged to the largest, internal names kept apart, and the
 * errors that name the symbol. One behaviour each. */
#include "ptx_test.h"

static fab__ptx_module_t *link2(const char *a, const char *b, fab__ptx_status_t want, const char *msg)
{
    fab__ptx_module_t *ma = ptx_ok(a), *mb = ptx_ok(b), *out = NULL;
    const fab__ptx_module_t *mods[2] = {ma, mb};
    fab__ptx_diag_t d;
    fab__ptx_status_t st = fab__ptx_link(mods, 2, &out, &d);
    fab__ptx_module_free(ma); /* the result is a module of its own */
    fab__ptx_module_free(mb);
    if (st != want)
        fail_msg("link: %d (%s), not %d", (int)st, d.msg, (int)want);
    if (msg && !strstr(d.msg, msg))
        fail_msg("link said '%s', not '%s'", d.msg, msg);
    return out;
}

static uint32_t count_named(const fab__ptx_module_t *m, const char *name, bool func)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < (func ? m->nfuncs : m->nvars); i++)
        n += strcmp(func ? m->funcs[i].name : m->vars[i].name, name) == 0;
    return n;
}

static void an_extern_function_resolves_to_its_definition(void **state)
{
    (void)state;
    fab__ptx_module_t *m = link2(PTX_HEAD ".extern .func (.param .b32 r) f(.param .b32 a);\n"
                                 ".entry k() { .param .b32 a0; .param .b32 r0; call (r0), f, (a0); ret; }\n",
                                 PTX_HEAD ".visible .func (.param .b32 r) f(.param .b32 a) { st.param.b32 [r], 1; ret; }\n",
                                 FAB__PTX_OK, NULL);
    assert_int_equal(count_named(m, "f", true), 1);
    const fab__ptx_func_t *f = ptx_func(m, "f");
    assert_true(f->defined);
    assert_int_equal(f->linkage, FAB__PTX_L_VISIBLE);
    const fab__ptx_func_t *k = ptx_func(m, "k");
    assert_int_equal(ptx_opd(k, 0, 1)->sym, ptx_func_index(m, "f"));
    /* the definition's own operands follow it: its return variable */
    assert_int_equal(ptx_opd(f, 0, 0)->sym, f->rets[0].var);
    assert_string_equal(m->vars[f->rets[0].var].name, "r");
    fab__ptx_module_free(m);
}

static void an_extern_variable_resolves_to_its_definition(void **state)
{
    (void)state;
    fab__ptx_module_t *m = link2(PTX_HEAD ".extern .global .u32 x;\n.global .u64 px = x;\n"
                                 ".entry k() { .reg .b32 %r; ld.global.u32 %r, [x]; ret; }\n",
                                 PTX_HEAD ".global .u32 pad;\n.visible .global .u32 x = 9;\n",
                                 FAB__PTX_OK, NULL);
    assert_int_equal(count_named(m, "x", false), 1);
    uint32_t x = ptx_var_index(m, "x", FAB__PTX_NONE);
    assert_int_equal(m->vars[x].init[0], 9);
    assert_int_equal(ptx_opd(ptx_func(m, "k"), 0, 1)->sym, x);
    assert_int_equal(ptx_var(m, "px", FAB__PTX_NONE)->relocs[0].sym, x);
    fab__ptx_module_free(m);
}

static void visible_wins_over_weak(void **state)
{
    (void)state;
    fab__ptx_module_t *m = link2(PTX_HEAD ".weak .global .u32 w = 1;\n.weak .func g() { exit; }\n",
                                 PTX_HEAD ".visible .global .u32 w = 2;\n.visible .func g() { ret; }\n",
                                 FAB__PTX_OK, NULL);
    assert_int_equal(count_named(m, "w", false), 1);
    assert_int_equal(ptx_var(m, "w", FAB__PTX_NONE)->init[0], 2);
    assert_int_equal(ptx_var(m, "w", FAB__PTX_NONE)->linkage, FAB__PTX_L_VISIBLE);
    assert_int_equal(ptx_func(m, "g")->insns[0].op, FAB__PTX_OP_RET);
    fab__ptx_module_free(m);
}

static void two_visible_definitions_are_an_error(void **state)
{
    (void)state;
    assert_null(link2(PTX_HEAD ".visible .global .u32 twice;\n", PTX_HEAD ".visible .global .u32 twice;\n",
                      FAB__PTX_E_LINK, "twice is defined in two modules"));
    assert_null(link2(PTX_HEAD ".visible .func f2() { ret; }\n", PTX_HEAD ".visible .func f2() { ret; }\n",
                      FAB__PTX_E_LINK, "f2 is defined in two modules"));
}

static void an_extern_variable_that_is_used_and_never_defined_is_an_error(void **state)
{
    (void)state;
    assert_null(link2(PTX_HEAD ".extern .global .u32 lost;\n.entry k() { .reg .b64 %a; mov.u64 %a, lost; ret; }\n",
                      PTX_HEAD ".global .u32 other;\n", FAB__PTX_E_LINK, "lost is defined by no module"));
    /* one that nothing names stays a declaration */
    fab__ptx_module_t *m = link2(PTX_HEAD ".extern .global .u32 unused;\n", PTX_HEAD "\n", FAB__PTX_OK, NULL);
    assert_int_equal(ptx_var(m, "unused", FAB__PTX_NONE)->linkage, FAB__PTX_L_EXTERN);
    fab__ptx_module_free(m);
}

static void an_extern_function_no_module_defines_stays_a_declaration(void **state)
{
    (void)state;
    fab__ptx_module_t *m = link2(PTX_HEAD ".extern .func (.param .b32 r) vprintf(.param .b64 a, .param .b64 b);\n"
                                 ".entry k() { call.uni vprintf; ret; }\n",
                                 PTX_HEAD ".extern .func (.param .b32 r) vprintf(.param .b64 a, .param .b64 b);\n",
                                 FAB__PTX_OK, NULL);
    assert_int_equal(count_named(m, "vprintf", true), 1);
    assert_false(ptx_func(m, "vprintf")->defined);
    assert_int_equal(ptx_func(m, "vprintf")->nparams, 2);
    fab__ptx_module_free(m);
}

static void an_unsized_extern_shared_array_needs_no_definition(void **state)
{
    (void)state;
    fab__ptx_module_t *m = link2(PTX_HEAD ".extern .shared .align 16 .b8 dyn[];\n"
                                 ".entry k() { .reg .b32 %r; mov.u32 %r, dyn; ret; }\n",
                                 PTX_HEAD ".extern .shared .align 8 .b8 dyn[];\n", FAB__PTX_OK, NULL);
    assert_int_equal(count_named(m, "dyn", false), 1);
    assert_true(ptx_var(m, "dyn", FAB__PTX_NONE)->unsized);
    fab__ptx_module_free(m);
}

static void common_variables_merge_into_the_largest(void **state)
{
    (void)state;
    fab__ptx_module_t *m = link2(PTX_HEAD ".common .global .align 4 .b8 c[8];\n",
                                 PTX_HEAD ".common .global .align 16 .b8 c[64];\n", FAB__PTX_OK, NULL);
    assert_int_equal(count_named(m, "c", false), 1);
    assert_int_equal(ptx_var(m, "c", FAB__PTX_NONE)->size, 64);
    assert_int_equal(ptx_var(m, "c", FAB__PTX_NONE)->align, 16);
    fab__ptx_module_free(m);
}

static void internal_names_of_two_modules_stay_apart(void **state)
{
    (void)state;
    fab__ptx_module_t *m = link2(PTX_HEAD ".global .u32 g = 1;\n.func h() { ret; }\n"
                                 ".entry a() { .reg .b32 %r; ld.global.u32 %r, [g]; call.uni h; ret; }\n",
                                 PTX_HEAD ".global .u32 g = 2;\n.func h() { exit; }\n"
                                 ".entry b() { .reg .b32 %r; ld.global.u32 %r, [g]; call.uni h; ret; }\n",
                                 FAB__PTX_OK, NULL);
    assert_int_equal(count_named(m, "g", false), 2);
    assert_int_equal(count_named(m, "h", true), 2);
    const fab__ptx_func_t *a = ptx_func(m, "a"), *b = ptx_func(m, "b");
    assert_int_equal(m->vars[ptx_opd(a, 0, 1)->sym].init[0], 1);
    assert_int_equal(m->vars[ptx_opd(b, 0, 1)->sym].init[0], 2);
    assert_int_equal(m->funcs[ptx_opd(a, 1, 1)->sym].insns[0].op, FAB__PTX_OP_RET);
    assert_int_equal(m->funcs[ptx_opd(b, 1, 1)->sym].insns[0].op, FAB__PTX_OP_EXIT);
    fab__ptx_module_free(m);
}

static void prototypes_of_each_module_are_kept(void **state)
{
    (void)state;
    fab__ptx_module_t *m = link2(PTX_HEAD ".entry a() { .reg .b64 %f; p: .callprototype _ (.param .b32 _); call %f, p; ret; }\n",
                                 PTX_HEAD ".entry b() { .reg .b64 %f; q: .callprototype _ (.param .b64 _, .param .b64 _); call %f, q; ret; }\n",
                                 FAB__PTX_OK, NULL);
    assert_int_equal(m->nprotos, 2);
    const fab__ptx_operand_t *q = ptx_opd(ptx_func(m, "b"), 0, 3);
    assert_int_equal(q->kind, FAB__PTX_OPD_PROTO);
    assert_string_equal(m->protos[q->sym].name, "q");
    assert_int_equal(m->protos[q->sym].nparams, 2);
    fab__ptx_module_free(m);
}

static void one_module_links_into_a_copy_of_its_own(void **state)
{
    (void)state;
    fab__ptx_module_t *m = ptx_ok(PTX_HEAD ".global .u32 t[2] = {3, 4};\n.entry k(.param .u64 p) { .reg .b32 %r<2>; L: bra L; }\n");
    const fab__ptx_module_t *one[1] = {m};
    fab__ptx_module_t *c = NULL;
    fab__ptx_diag_t d;
    assert_int_equal(fab__ptx_link(one, 1, &c, &d), FAB__PTX_OK);
    fab__ptx_module_free(m);
    assert_int_equal(c->version_major, 9);
    assert_int_equal(c->sm, 90);
    assert_int_equal(ptx_var(c, "t", FAB__PTX_NONE)->init[4], 4);
    const fab__ptx_func_t *k = ptx_func(c, "k");
    assert_string_equal(k->regs[1].name, "%r1");
    assert_string_equal(k->label_names[0], "L");
    assert_string_equal(c->vars[k->params[0].var].name, "p");
    fab__ptx_module_free(c);
}

static void modules_of_different_address_sizes_do_not_link(void **state)
{
    (void)state;
    assert_null(link2(".version 9.0\n.address_size 32\n", ".version 9.0\n.address_size 64\n", FAB__PTX_E_LINK,
                      ".address_size 32 and 64"));
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test(an_extern_function_resolves_to_its_definition),
    cmocka_unit_test(an_extern_variable_resolves_to_its_definition),
    cmocka_unit_test(visible_wins_over_weak),
    cmocka_unit_test(two_visible_definitions_are_an_error),
    cmocka_unit_test(an_extern_variable_that_is_used_and_never_defined_is_an_error),
    cmocka_unit_test(an_extern_function_no_module_defines_stays_a_declaration),
    cmocka_unit_test(an_unsized_extern_shared_array_needs_no_definition),
    cmocka_unit_test(common_variables_merge_into_the_largest),
    cmocka_unit_test(internal_names_of_two_modules_stay_apart),
    cmocka_unit_test(prototypes_of_each_module_are_kept),
    cmocka_unit_test(one_module_links_into_a_copy_of_its_own),
    cmocka_unit_test(modules_of_different_address_sizes_do_not_link),
};

FAB_TEST_MAIN_NO_HELPERS("ptx", tests)
