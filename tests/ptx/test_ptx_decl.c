/* The PTX front end's declarations (ptx.<test>): module directives,
 * entries and functions with their parameters and performance directives,
 * registers, variables in every state space with linkage, and initializers
 * as bytes and relocations. One behaviour each. */
#include "ptx_test.h"

static void module_directives_are_read(void **state)
{
    (void)state;
    fab__ptx_module_t *m = ptx_ok("// a comment first\n.version 8.7\n.target sm_100a, texmode_independent, debug\n"
                                  ".address_size 32\n");
    assert_int_equal(m->version_major, 8);
    assert_int_equal(m->version_minor, 7);
    assert_int_equal(m->sm, 100);
    assert_true(m->sm_arch_specific);
    assert_int_equal(m->address_size, 32);
    fab__ptx_module_free(m);
    m = ptx_ok(".version 9.0\n.target sm_75\n");
    assert_int_equal(m->sm, 75);
    assert_false(m->sm_arch_specific);
    assert_int_equal(m->address_size, 64); /* when not written */
    fab__ptx_module_free(m);
}

static void entry_params_have_types_sizes_and_alignment(void **state)
{
    (void)state;
    fab__ptx_module_t *m = ptx_ok(PTX_HEAD ".visible .entry k(\n"
                                  "\t.param .u64 a,\n"
                                  "\t.param .align 8 .b8 s[24],\n"
                                  "\t.param .u64 .ptr .global .align 16 p,\n"
                                  "\t.param .f32 f\n)\n{\n\tret;\n}\n");
    const fab__ptx_func_t *k = ptx_func(m, "k");
    assert_true(k->entry && k->defined);
    assert_int_equal(k->linkage, FAB__PTX_L_VISIBLE);
    assert_int_equal(k->nparams, 4);
    assert_int_equal(k->params[0].type, FAB__PTX_T_U64);
    assert_int_equal(k->params[0].size, 8);
    assert_int_equal(k->params[0].align, 8);
    assert_int_equal(k->params[1].size, 24);
    assert_int_equal(k->params[1].align, 8);
    assert_int_equal(k->params[1].type, FAB__PTX_T_B8);
    assert_true(k->params[2].ptr);
    assert_int_equal(k->params[2].ptr_space, FAB__PTX_S_GLOBAL);
    assert_int_equal(k->params[2].align, 16);
    assert_int_equal(k->params[3].type, FAB__PTX_T_F32);
    /* each is a .param variable of the entry, named as written */
    uint32_t ki = ptx_func_index(m, "k");
    const fab__ptx_var_t *s = &m->vars[k->params[1].var];
    assert_string_equal(s->name, "s");
    assert_int_equal(s->space, FAB__PTX_S_PARAM);
    assert_int_equal(s->func, ki);
    assert_int_equal(s->size, 24);
    fab__ptx_module_free(m);
}

static void function_return_values_are_param_variables(void **state)
{
    (void)state;
    fab__ptx_module_t *m = ptx_ok(PTX_HEAD ".func (.param .b32 func_retval0) f(.param .b32 x)\n{\n"
                                  "\t.reg .b32 %r;\n\tld.param.b32 %r, [x];\n"
                                  "\tst.param.b32 [func_retval0+0], %r;\n\tret;\n}\n");
    const fab__ptx_func_t *f = ptx_func(m, "f");
    assert_false(f->entry);
    assert_int_equal(f->nrets, 1);
    assert_int_equal(f->nparams, 1);
    const fab__ptx_operand_t *a = ptx_opd(f, 1, 0);
    assert_int_equal(a->kind, FAB__PTX_OPD_ADDR);
    assert_int_equal(a->symkind, FAB__PTX_SYM_VAR);
    assert_int_equal(a->sym, f->rets[0].var);
    assert_int_equal(a->imm, 0);
    assert_int_equal(ptx_opd(f, 0, 1)->sym, f->params[0].var);
    fab__ptx_module_free(m);
}

static void declaration_then_definition_is_one_function(void **state)
{
    (void)state;
    fab__ptx_module_t *m = ptx_ok(PTX_HEAD ".func (.param .b32 r) g(.param .b32 a);\n"
                                  ".extern .func (.param .b32 r) vprintf(.param .b64 a, .param .b64 b);\n"
                                  ".entry k() { call.uni g; ret; }\n"
                                  ".func (.param .b32 r) g(.param .b32 a) { ret; }\n");
    assert_int_equal(m->nfuncs, 3);
    const fab__ptx_func_t *g = ptx_func(m, "g");
    assert_true(g->defined);
    assert_int_equal(g->params[0].var, ptx_var_index(m, "a", ptx_func_index(m, "g")));
    const fab__ptx_func_t *v = ptx_func(m, "vprintf");
    assert_false(v->defined);
    assert_int_equal(v->linkage, FAB__PTX_L_EXTERN);
    assert_int_equal(v->nparams, 2);
    assert_int_equal(v->params[0].var, FAB__PTX_NONE); /* a declaration has no variables */
    const fab__ptx_func_t *k = ptx_func(m, "k");
    assert_int_equal(ptx_opd(k, 0, 1)->sym, ptx_func_index(m, "g"));
    fab__ptx_module_free(m);
}

static void performance_directives_are_kept(void **state)
{
    (void)state;
    fab__ptx_module_t *m = ptx_ok(PTX_HEAD ".entry a() .maxntid 256 .minnctapersm 2 .maxnreg 40 { ret; }\n"
                                  ".entry b() .reqntid 32, 4 .reqnctapercluster 2, 1, 1 .maxclusterrank 8\n"
                                  ".explicitcluster .pragma \"nounroll\";\n{ ret; }\n"
                                  ".func c() .noreturn { trap; }\n");
    const fab__ptx_func_t *a = ptx_func(m, "a");
    assert_int_equal(a->maxntid[0], 256);
    assert_int_equal(a->maxntid[1], 1);
    assert_int_equal(a->maxntid[2], 1);
    assert_int_equal(a->minnctapersm, 2);
    assert_int_equal(a->maxnreg, 40);
    assert_int_equal(a->reqntid[0], 0);
    const fab__ptx_func_t *b = ptx_func(m, "b");
    assert_int_equal(b->reqntid[0], 32);
    assert_int_equal(b->reqntid[1], 4);
    assert_int_equal(b->reqntid[2], 1);
    assert_int_equal(b->reqnctapercluster[0], 2);
    assert_int_equal(b->maxclusterrank, 8);
    assert_true(ptx_func(m, "c")->noreturn);
    fab__ptx_module_free(m);
}

static void register_ranges_declare_numbered_registers(void **state)
{
    (void)state;
    fab__ptx_module_t *m = ptx_ok(PTX_HEAD ".entry k() {\n\t.reg .pred %p<2>;\n\t.reg .b32 %r<3>, %x;\n"
                                  "\tmov.b32 %r2, %x;\n\tret;\n}\n");
    const fab__ptx_func_t *k = ptx_func(m, "k");
    assert_int_equal(k->nregs, 6);
    assert_string_equal(k->regs[0].name, "%p0");
    assert_int_equal(k->regs[1].type, FAB__PTX_T_PRED);
    assert_string_equal(k->regs[4].name, "%r2");
    assert_int_equal(k->regs[4].type, FAB__PTX_T_B32);
    assert_string_equal(ptx_reg_name(k, ptx_opd(k, 0, 0)), "%r2");
    assert_string_equal(ptx_reg_name(k, ptx_opd(k, 0, 1)), "%x");
    fab__ptx_module_free(m);
}

static void vector_registers_are_split_into_elements(void **state)
{
    (void)state;
    fab__ptx_module_t *m = ptx_ok(PTX_HEAD ".entry k() {\n\t.reg .v4 .f32 %v;\n\t.reg .b64 %rd;\n"
                                  "\tmov.f32 %v.y, %v.w;\n\tld.global.v4.f32 %v, [%rd];\n\tret;\n}\n");
    const fab__ptx_func_t *k = ptx_func(m, "k");
    assert_int_equal(k->nregs, 5);
    assert_string_equal(k->regs[1].name, "%v.y");
    assert_int_equal(k->regs[3].type, FAB__PTX_T_F32);
    assert_string_equal(ptx_reg_name(k, ptx_opd(k, 0, 0)), "%v.y");
    assert_string_equal(ptx_reg_name(k, ptx_opd(k, 0, 1)), "%v.w");
    const fab__ptx_operand_t *v = ptx_opd(k, 1, 0); /* the whole vector: its elements */
    assert_int_equal(v->kind, FAB__PTX_OPD_VEC);
    assert_int_equal(v->elems, 4);
    assert_string_equal(ptx_reg_name(k, ptx_elem(k, v, 2)), "%v.z");
    fab__ptx_module_free(m);
}

static void variables_in_every_state_space(void **state)
{
    (void)state;
    fab__ptx_module_t *m = ptx_ok(PTX_HEAD ".global .align 16 .v4 .f32 g[2];\n.const .u32 c;\n"
                                  ".shared .align 8 .b8 s[100];\n"
                                  ".entry k() {\n\t.local .align 4 .b8 depot[12];\n"
                                  "\t.shared .u64 ks;\n\t.param .b32 p0;\n\tret;\n}\n");
    const fab__ptx_var_t *g = ptx_var(m, "g", FAB__PTX_NONE);
    assert_int_equal(g->space, FAB__PTX_S_GLOBAL);
    assert_int_equal(g->vec, 4);
    assert_int_equal(g->type, FAB__PTX_T_F32);
    assert_int_equal(g->size, 32);
    assert_int_equal(g->align, 16);
    assert_null(g->init);
    assert_int_equal(ptx_var(m, "c", FAB__PTX_NONE)->space, FAB__PTX_S_CONST);
    assert_int_equal(ptx_var(m, "c", FAB__PTX_NONE)->align, 4); /* the type's size when not written */
    assert_int_equal(ptx_var(m, "s", FAB__PTX_NONE)->size, 100);
    uint32_t k = ptx_func_index(m, "k");
    assert_int_equal(ptx_var(m, "depot", k)->space, FAB__PTX_S_LOCAL);
    assert_int_equal(ptx_var(m, "ks", k)->space, FAB__PTX_S_SHARED);
    assert_int_equal(ptx_var(m, "p0", k)->space, FAB__PTX_S_PARAM);
    fab__ptx_module_free(m);
}

static void linkage_directives_are_kept(void **state)
{
    (void)state;
    fab__ptx_module_t *m = ptx_ok(PTX_HEAD ".visible .global .u32 v;\n.extern .global .u32 e;\n"
                                  ".weak .global .u32 w;\n.common .global .u32 c;\n.global .u32 i;\n"
                                  ".global .attribute(.managed) .align 8 .u64 mg;\n"
                                  ".weak .func wf() { ret; }\n");
    assert_int_equal(ptx_var(m, "v", FAB__PTX_NONE)->linkage, FAB__PTX_L_VISIBLE);
    assert_int_equal(ptx_var(m, "e", FAB__PTX_NONE)->linkage, FAB__PTX_L_EXTERN);
    assert_int_equal(ptx_var(m, "w", FAB__PTX_NONE)->linkage, FAB__PTX_L_WEAK);
    assert_int_equal(ptx_var(m, "c", FAB__PTX_NONE)->linkage, FAB__PTX_L_COMMON);
    assert_int_equal(ptx_var(m, "i", FAB__PTX_NONE)->linkage, FAB__PTX_L_INTERNAL);
    assert_true(ptx_var(m, "mg", FAB__PTX_NONE)->managed);
    assert_false(ptx_var(m, "i", FAB__PTX_NONE)->managed);
    assert_int_equal(ptx_func(m, "wf")->linkage, FAB__PTX_L_WEAK);
    fab__ptx_module_free(m);
}

static void unsized_extern_shared_is_dynamic_shared_memory(void **state)
{
    (void)state;
    fab__ptx_module_t *m = ptx_ok(PTX_HEAD ".extern .shared .align 16 .b8 dyn[];\n");
    const fab__ptx_var_t *d = ptx_var(m, "dyn", FAB__PTX_NONE);
    assert_true(d->unsized);
    assert_int_equal(d->size, 0);
    assert_int_equal(d->align, 16);
    fab__ptx_module_free(m);
}

static void an_extern_variable_defined_later_is_one_variable(void **state)
{
    (void)state;
    fab__ptx_module_t *m = ptx_ok(PTX_HEAD ".extern .global .u32 x;\n.visible .global .u32 x = 5;\n");
    assert_int_equal(m->nvars, 1);
    assert_int_equal(m->vars[0].linkage, FAB__PTX_L_VISIBLE);
    assert_int_equal(m->vars[0].init[0], 5);
    fab__ptx_module_free(m);
}

static void integer_initializers_are_little_endian_bytes(void **state)
{
    (void)state;
    fab__ptx_module_t *m = ptx_ok(PTX_HEAD ".global .u32 a[5] = {42, 0x10, 017, 0b101, -2};\n"
                                  ".global .s8 b[3] = {-1, -128, 127};\n.global .u64 c = 0xFFFFFFFFFFFFFFFF;\n"
                                  ".global .align 4 .b8 g[16] = {1, 0, 0, 0, 2};\n");
    const fab__ptx_var_t *a = ptx_var(m, "a", FAB__PTX_NONE);
    uint32_t u[5];
    memcpy(u, a->init, sizeof(u));
    assert_int_equal(u[0], 42);
    assert_int_equal(u[1], 16);
    assert_int_equal(u[2], 15);
    assert_int_equal(u[3], 5);
    assert_int_equal(u[4], 0xFFFFFFFEu);
    const fab__ptx_var_t *b = ptx_var(m, "b", FAB__PTX_NONE);
    assert_int_equal(b->init[0], 0xFF);
    assert_int_equal(b->init[1], 0x80);
    assert_int_equal(b->init[2], 0x7F);
    uint64_t c;
    memcpy(&c, ptx_var(m, "c", FAB__PTX_NONE)->init, 8);
    assert_true(c == UINT64_MAX);
    const fab__ptx_var_t *g = ptx_var(m, "g", FAB__PTX_NONE);
    assert_int_equal(g->size, 16);
    assert_int_equal(g->init[4], 2);
    assert_int_equal(g->init[15], 0); /* zeros after the last value */
    fab__ptx_module_free(m);
}

static void float_initializers_take_every_literal_form(void **state)
{
    (void)state;
    fab__ptx_module_t *m = ptx_ok(PTX_HEAD ".global .f32 f[5] = {0f3FC00000, 0.5, -2.5e3, 3, 0d4000000000000000};\n"
                                  ".global .f64 d[3] = {1, 0d4000000000000000, -0.25};\n"
                                  ".global .f16 h[2] = {0x3C00, 1.0};\n");
    float f[5];
    memcpy(f, ptx_var(m, "f", FAB__PTX_NONE)->init, sizeof(f));
    assert_true(f[0] == 1.5f);
    assert_true(f[1] == 0.5f);
    assert_true(f[2] == -2500.0f);
    assert_true(f[3] == 3.0f);
    assert_true(f[4] == 2.0f);
    double d[3];
    memcpy(d, ptx_var(m, "d", FAB__PTX_NONE)->init, sizeof(d));
    assert_true(d[0] == 1.0 && d[1] == 2.0 && d[2] == -0.25);
    const unsigned char *h = ptx_var(m, "h", FAB__PTX_NONE)->init;
    assert_int_equal(h[0] | h[1] << 8, 0x3C00); /* as written */
    assert_int_equal(h[2] | h[3] << 8, 0x3C00); /* 1.0 converted */
    fab__ptx_module_free(m);
}

static void an_open_array_is_sized_by_its_initializer(void **state)
{
    (void)state;
    fab__ptx_module_t *m = ptx_ok(PTX_HEAD ".global .b8 s[] = {104, 105, 0};\n"
                                  ".global .u16 rows[][3] = {{1, 2, 3}, {4}};\n");
    assert_int_equal(ptx_var(m, "s", FAB__PTX_NONE)->size, 3);
    assert_false(ptx_var(m, "s", FAB__PTX_NONE)->unsized);
    assert_int_equal(ptx_var(m, "rows", FAB__PTX_NONE)->size, 12);
    fab__ptx_module_free(m);
}

static void nested_braces_start_a_new_row(void **state)
{
    (void)state;
    fab__ptx_module_t *m = ptx_ok(PTX_HEAD ".global .u32 t[2][3] = {{1}, {4, 5}};\n"
                                  ".global .v2 .u32 vv[2] = {{7, 8}, {9}};\n");
    uint32_t t[6];
    memcpy(t, ptx_var(m, "t", FAB__PTX_NONE)->init, sizeof(t));
    assert_int_equal(t[0], 1);
    assert_int_equal(t[1], 0);
    assert_int_equal(t[3], 4);
    assert_int_equal(t[4], 5);
    uint32_t v[4];
    memcpy(v, ptx_var(m, "vv", FAB__PTX_NONE)->init, sizeof(v));
    assert_int_equal(v[1], 8);
    assert_int_equal(v[2], 9);
    assert_int_equal(v[3], 0);
    fab__ptx_module_free(m);
}

static void addresses_in_initializers_are_relocations(void **state)
{
    (void)state;
    fab__ptx_module_t *m = ptx_ok(PTX_HEAD ".global .u32 g[4];\n.func f() { ret; }\n"
                                  ".global .u64 p[4] = {7, generic(g)+8, g, f};\n"
                                  ".global .u64 later = fwd-4;\n.global .u32 fwd;\n");
    const fab__ptx_var_t *p = ptx_var(m, "p", FAB__PTX_NONE);
    assert_int_equal(p->nrelocs, 3);
    assert_int_equal(p->init[0], 7);
    assert_int_equal(p->relocs[0].offset, 8);
    assert_int_equal(p->relocs[0].width, 8);
    assert_true(p->relocs[0].generic);
    assert_int_equal(p->relocs[0].addend, 8);
    assert_int_equal(p->relocs[0].symkind, FAB__PTX_SYM_VAR);
    assert_int_equal(p->relocs[0].sym, ptx_var_index(m, "g", FAB__PTX_NONE));
    assert_false(p->relocs[1].generic);
    assert_int_equal(p->relocs[1].offset, 16);
    assert_int_equal(p->relocs[2].symkind, FAB__PTX_SYM_FUNC);
    assert_int_equal(p->relocs[2].sym, ptx_func_index(m, "f"));
    /* a name declared further on resolves at the module's end */
    const fab__ptx_var_t *l = ptx_var(m, "later", FAB__PTX_NONE);
    assert_int_equal(l->relocs[0].sym, ptx_var_index(m, "fwd", FAB__PTX_NONE));
    assert_int_equal(l->relocs[0].addend, -4);
    fab__ptx_module_free(m);
}

static void address_bytes_in_byte_arrays_are_relocations(void **state)
{
    (void)state;
    /* as nvcc writes a pointer inside a packed struct */
    fab__ptx_module_t *m = ptx_ok(PTX_HEAD ".global .u32 x[4];\n"
                                  ".global .align 1 .u8 pk[9] = {1, 0XFF(generic(x)+4), 0xFF00(generic(x)+4), "
                                  "0xFF0000(generic(x)+4), 0xFF000000(generic(x)+4), 0xFF00000000(generic(x)+4), "
                                  "0xFF0000000000(generic(x)+4), 0xFF000000000000(generic(x)+4), "
                                  "0xFF00000000000000(generic(x)+4)};\n"
                                  ".global .b8 part[2] = {0xFF00(x), 7};\n");
    const fab__ptx_var_t *pk = ptx_var(m, "pk", FAB__PTX_NONE);
    assert_int_equal(pk->nrelocs, 1); /* eight bytes in a row: one address */
    assert_int_equal(pk->relocs[0].offset, 1);
    assert_int_equal(pk->relocs[0].width, 8);
    assert_int_equal(pk->relocs[0].shift, 0);
    assert_true(pk->relocs[0].generic);
    assert_int_equal(pk->relocs[0].addend, 4);
    assert_int_equal(pk->init[0], 1);
    const fab__ptx_var_t *part = ptx_var(m, "part", FAB__PTX_NONE);
    assert_int_equal(part->nrelocs, 1);
    assert_int_equal(part->relocs[0].width, 1);
    assert_int_equal(part->relocs[0].shift, 1);
    assert_int_equal(part->relocs[0].offset, 0);
    assert_int_equal(part->init[1], 7);
    fab__ptx_module_free(m);
    ptx_bad(PTX_HEAD ".global .u32 x;\n.global .b8 b = 0xF0(x);\n", 5, "0xFF shifted by whole bytes");
}

static void reg_parameters_are_registers_of_the_function(void **state)
{
    (void)state;
    fab__ptx_module_t *m = ptx_ok(PTX_HEAD ".func (.reg .b32 r) f(.reg .b32 x) { add.s32 r, x, 1; ret; }\n");
    const fab__ptx_func_t *f = ptx_func(m, "f");
    assert_int_equal(f->params[0].space, FAB__PTX_S_REG);
    assert_int_equal(f->params[0].var, FAB__PTX_NONE);
    assert_int_equal(ptx_opd(f, 0, 1)->reg, f->params[0].reg);
    assert_int_equal(ptx_opd(f, 0, 0)->reg, f->rets[0].reg);
    fab__ptx_module_free(m);
}

static void an_alias_names_the_same_function(void **state)
{
    (void)state;
    fab__ptx_module_t *m = ptx_ok(PTX_HEAD ".func f() { ret; }\n.alias g, f;\n.entry k() { call.uni g; ret; }\n");
    assert_int_equal(m->nfuncs, 2);
    assert_int_equal(ptx_opd(ptx_func(m, "k"), 0, 1)->sym, ptx_func_index(m, "f"));
    fab__ptx_module_free(m);
}

static void register_ranges_past_the_bound_are_refused(void **state)
{
    (void)state;
    ptx_bad(PTX_HEAD ".entry k()\n{\n\t.reg .b32 %r<2000000>;\n}\n", 6, "a register range's count must be");
}

static void debug_sections_and_directives_are_skipped(void **state)
{
    (void)state;
    fab__ptx_module_t *m = ptx_ok(PTX_HEAD ".file 1 \"/src/k.cu\", 1700000000, 99\n"
                                  ".entry k()\n{\n\t.loc 1 5 3\n\tret;\n$Ltmp0:\n}\n"
                                  ".section .debug_info\n{\n.b32 120\n@@DWARF .byte 0x11 {{\n.b64 $Ltmp0\n}\n"
                                  ".section .debug_abbrev { .b8 1 }\n.global .u32 after;\n");
    assert_int_equal(ptx_func(m, "k")->ninsns, 1);
    assert_int_equal(ptx_func(m, "k")->nlabels, 1);
    assert_int_equal(ptx_func(m, "k")->labels[0], 1); /* a label at the end: ninsns */
    assert_non_null(ptx_var(m, "after", FAB__PTX_NONE));
    fab__ptx_module_free(m);
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test(module_directives_are_read),
    cmocka_unit_test(entry_params_have_types_sizes_and_alignment),
    cmocka_unit_test(function_return_values_are_param_variables),
    cmocka_unit_test(declaration_then_definition_is_one_function),
    cmocka_unit_test(performance_directives_are_kept),
    cmocka_unit_test(register_ranges_declare_numbered_registers),
    cmocka_unit_test(vector_registers_are_split_into_elements),
    cmocka_unit_test(variables_in_every_state_space),
    cmocka_unit_test(linkage_directives_are_kept),
    cmocka_unit_test(unsized_extern_shared_is_dynamic_shared_memory),
    cmocka_unit_test(an_extern_variable_defined_later_is_one_variable),
    cmocka_unit_test(integer_initializers_are_little_endian_bytes),
    cmocka_unit_test(float_initializers_take_every_literal_form),
    cmocka_unit_test(an_open_array_is_sized_by_its_initializer),
    cmocka_unit_test(nested_braces_start_a_new_row),
    cmocka_unit_test(addresses_in_initializers_are_relocations),
    cmocka_unit_test(address_bytes_in_byte_arrays_are_relocations),
    cmocka_unit_test(reg_parameters_are_registers_of_the_function),
    cmocka_unit_test(an_alias_names_the_same_function),
    cmocka_unit_test(register_ranges_past_the_bound_are_refused),
    cmocka_unit_test(debug_sections_and_directives_are_skipped),
};

FAB_TEST_MAIN_NO_HELPERS("ptx", tests)
