/* The PTX front end's instructions (ptx.<test>): mnemonics split into
 * opcode, spaces, vector width, types and words; every operand form of
 * module.h; call's one form; labels and target lists; and scopes, whose
 * names are registers of their own. One behaviour each. */
#include "ptx_test.h"

/* One entry k with the given body (declarations and instructions). */
static fab__ptx_module_t *body(const char *text)
{
    char buf[4096];
    snprintf(buf, sizeof(buf), PTX_HEAD ".global .u32 gv[4];\n.func gf() { ret; }\n"
                               ".entry k()\n{\n\t.reg .pred %%p<3>;\n\t.reg .b32 %%r<4>;\n"
                               "\t.reg .b64 %%rd<3>;\n\t.reg .f32 %%f<2>;\n%s\n}\n", text);
    return ptx_ok(buf);
}

static void mnemonic_is_the_longest_prefix_the_opcode_list_holds(void **state)
{
    (void)state;
    fab__ptx_module_t *m = body("bar.warp.sync -1;\nbar.sync 0;\nshfl.sync.down.b32 %r0|%p0, %r1, 1, 31, -1;\n"
                                "add.cc.u32 %r0, %r1, 1;\nmatch.any.sync.b32 %r0, %r1, -1;\n");
    const fab__ptx_func_t *k = ptx_func(m, "k");
    assert_int_equal(k->insns[0].op, FAB__PTX_OP_BAR_WARP_SYNC);
    assert_int_equal(k->insns[1].op, FAB__PTX_OP_BAR_SYNC);
    assert_int_equal(k->insns[2].op, FAB__PTX_OP_SHFL_SYNC);
    assert_int_equal(k->insns[2].nwords, 1);
    assert_int_equal(k->insns[2].words[0], FAB__PTX_W_DOWN);
    assert_int_equal(k->insns[2].types[0], FAB__PTX_T_B32);
    assert_int_equal(k->insns[3].op, FAB__PTX_OP_ADD_CC);
    assert_int_equal(k->insns[4].op, FAB__PTX_OP_MATCH_SYNC); /* its second word comes after .any */
    assert_int_equal(k->insns[4].words[0], FAB__PTX_W_ANY);
    fab__ptx_module_free(m);
}

static void modifiers_are_spaces_vector_widths_types_and_words(void **state)
{
    (void)state;
    fab__ptx_module_t *m = body("ld.global.nc.L1::no_allocate.v4.f32 {%f0, %f1, %f0, %f1}, [%rd0];\n"
                                "cvt.rn.f32.s32 %f0, %r0;\ncp.async.ca.shared.global [%r0], [%rd0], 16;\n"
                                "cvta.to.shared::cta.u32 %r0, %r1;\natom.acquire.gpu.global.add.u32 %r0, [%rd0], 1;\n");
    const fab__ptx_func_t *k = ptx_func(m, "k");
    const fab__ptx_insn_t *ld = &k->insns[0];
    assert_int_equal(ld->op, FAB__PTX_OP_LD);
    assert_int_equal(ld->space, FAB__PTX_S_GLOBAL);
    assert_int_equal(ld->vec, 4);
    assert_int_equal(ld->ntypes, 1);
    assert_int_equal(ld->types[0], FAB__PTX_T_F32);
    assert_int_equal(ld->nwords, 2);
    assert_int_equal(ld->words[0], FAB__PTX_W_NC);
    assert_int_equal(ld->words[1], FAB__PTX_W_L1_NO_ALLOCATE);
    assert_int_equal(k->insns[1].ntypes, 2);
    assert_int_equal(k->insns[1].types[0], FAB__PTX_T_F32); /* in the order written */
    assert_int_equal(k->insns[1].types[1], FAB__PTX_T_S32);
    assert_int_equal(k->insns[1].words[0], FAB__PTX_W_RN);
    assert_int_equal(k->insns[2].op, FAB__PTX_OP_CP_ASYNC);
    assert_int_equal(k->insns[2].space, FAB__PTX_S_SHARED);
    assert_int_equal(k->insns[2].space2, FAB__PTX_S_GLOBAL);
    assert_int_equal(k->insns[3].space, FAB__PTX_S_SHARED);
    assert_int_equal(k->insns[3].words[0], FAB__PTX_W_TO);
    const fab__ptx_insn_t *at = &k->insns[4];
    assert_int_equal(at->nwords, 3);
    assert_int_equal(at->words[0], FAB__PTX_W_ACQUIRE);
    assert_int_equal(at->words[1], FAB__PTX_W_GPU);
    assert_int_equal(at->words[2], FAB__PTX_W_ADD);
    fab__ptx_module_free(m);
}

static void immediates_in_every_base_and_sign(void **state)
{
    (void)state;
    fab__ptx_module_t *m = body("add.s32 %r0, -5, 0x1F;\nadd.s32 %r0, 017, 0b110;\nmov.u32 %r0, WARP_SZ;\n"
                                "mov.u64 %rd0, 0xFFFFFFFFFFFFFFFF;\nadd.s32 %r0, %r1, 4U;\n");
    const fab__ptx_func_t *k = ptx_func(m, "k");
    assert_int_equal(ptx_opd(k, 0, 1)->kind, FAB__PTX_OPD_IMM);
    assert_int_equal(ptx_opd(k, 0, 1)->imm, -5);
    assert_int_equal(ptx_opd(k, 0, 2)->imm, 31);
    assert_int_equal(ptx_opd(k, 1, 1)->imm, 15);
    assert_int_equal(ptx_opd(k, 1, 2)->imm, 6);
    assert_int_equal(ptx_opd(k, 2, 1)->imm, 32);
    assert_int_equal(ptx_opd(k, 3, 1)->imm, -1); /* two's complement */
    assert_int_equal(ptx_opd(k, 4, 2)->imm, 4);
    fab__ptx_module_free(m);
}

static void float_literals_keep_their_bits_and_width(void **state)
{
    (void)state;
    fab__ptx_module_t *m = body("add.f32 %f0, %f1, 0f3F800000;\nadd.f32 %f0, %f1, -0f3F800000;\n"
                                "add.f64 %rd0, %rd1, 0d4000000000000000;\nadd.f32 %f0, %f1, 1.5;\n");
    const fab__ptx_func_t *k = ptx_func(m, "k");
    const fab__ptx_operand_t *a = ptx_opd(k, 0, 2);
    assert_int_equal(a->kind, FAB__PTX_OPD_FIMM);
    assert_int_equal(a->fwidth, 4);
    assert_true(a->fbits == 0x3F800000u);
    assert_true(ptx_opd(k, 1, 2)->fbits == 0xBF800000u);
    assert_int_equal(ptx_opd(k, 2, 2)->fwidth, 8);
    assert_true(ptx_opd(k, 2, 2)->fbits == 0x4000000000000000ull);
    double d;
    uint64_t bits = ptx_opd(k, 3, 2)->fbits;
    memcpy(&d, &bits, 8);
    assert_int_equal(ptx_opd(k, 3, 2)->fwidth, 8); /* a decimal literal is a double */
    assert_true(d == 1.5);
    fab__ptx_module_free(m);
}

static void special_registers_and_their_components(void **state)
{
    (void)state;
    fab__ptx_module_t *m = body("mov.u32 %r0, %tid.x;\nmov.u32 %r0, %ctaid.z;\nmov.u32 %r0, %laneid;\n"
                                "mov.u64 %rd0, %clock64;\nmov.u32 %r0, %envreg7;\nmov.u32 %r0, %nctaid.y;\n"
                                "mov.u32 %r0, %lanemask_lt;\nmov.u32 %r0, %dynamic_smem_size;\n");
    const fab__ptx_func_t *k = ptx_func(m, "k");
    const fab__ptx_operand_t *t = ptx_opd(k, 0, 1);
    assert_int_equal(t->kind, FAB__PTX_OPD_SREG);
    assert_int_equal(t->sreg, FAB__PTX_SR_TID);
    assert_int_equal(t->sreg_comp, 0);
    assert_int_equal(ptx_opd(k, 1, 1)->sreg, FAB__PTX_SR_CTAID);
    assert_int_equal(ptx_opd(k, 1, 1)->sreg_comp, 2);
    assert_int_equal(ptx_opd(k, 2, 1)->sreg, FAB__PTX_SR_LANEID);
    assert_int_equal(ptx_opd(k, 3, 1)->sreg, FAB__PTX_SR_CLOCK64);
    assert_int_equal(ptx_opd(k, 4, 1)->sreg, FAB__PTX_SR_ENVREG);
    assert_int_equal(ptx_opd(k, 4, 1)->sreg_comp, 7);
    assert_int_equal(ptx_opd(k, 5, 1)->sreg_comp, 1);
    assert_int_equal(ptx_opd(k, 6, 1)->sreg, FAB__PTX_SR_LANEMASK_LT);
    assert_int_equal(ptx_opd(k, 7, 1)->sreg, FAB__PTX_SR_DYNAMIC_SMEM_SIZE);
    fab__ptx_module_free(m);
}

static void addresses_take_a_register_a_symbol_or_an_integer(void **state)
{
    (void)state;
    fab__ptx_module_t *m = body("ld.global.u32 %r0, [%rd0];\nld.global.u32 %r0, [%rd0+8];\n"
                                "ld.global.u32 %r0, [%rd0+-4];\nld.global.u32 %r0, [gv];\n"
                                "ld.global.u32 %r0, [gv+12];\nld.global.u32 %r0, [256];\n");
    const fab__ptx_func_t *k = ptx_func(m, "k");
    const fab__ptx_operand_t *a = ptx_opd(k, 0, 1);
    assert_int_equal(a->kind, FAB__PTX_OPD_ADDR);
    assert_string_equal(ptx_reg_name(k, a), "%rd0");
    assert_int_equal(a->sym, FAB__PTX_NONE);
    assert_int_equal(a->imm, 0);
    assert_int_equal(ptx_opd(k, 1, 1)->imm, 8);
    assert_int_equal(ptx_opd(k, 2, 1)->imm, -4);
    const fab__ptx_operand_t *s = ptx_opd(k, 4, 1);
    assert_int_equal(s->reg, FAB__PTX_NONE);
    assert_int_equal(s->symkind, FAB__PTX_SYM_VAR);
    assert_int_equal(s->sym, ptx_var_index(m, "gv", FAB__PTX_NONE));
    assert_int_equal(s->imm, 12);
    const fab__ptx_operand_t *i = ptx_opd(k, 5, 1);
    assert_int_equal(i->reg, FAB__PTX_NONE);
    assert_int_equal(i->sym, FAB__PTX_NONE);
    assert_int_equal(i->imm, 256);
    fab__ptx_module_free(m);
}

static void symbols_name_variables_and_functions(void **state)
{
    (void)state;
    fab__ptx_module_t *m = body(".shared .align 4 .b8 sh[64];\nmov.u64 %rd0, gv;\nmov.u32 %r0, sh+4;\n"
                                "mov.u64 %rd0, gf;\n");
    const fab__ptx_func_t *k = ptx_func(m, "k");
    const fab__ptx_operand_t *g = ptx_opd(k, 0, 1);
    assert_int_equal(g->kind, FAB__PTX_OPD_SYM);
    assert_int_equal(g->symkind, FAB__PTX_SYM_VAR);
    assert_int_equal(g->sym, ptx_var_index(m, "gv", FAB__PTX_NONE));
    const fab__ptx_operand_t *s = ptx_opd(k, 1, 1);
    assert_int_equal(s->sym, ptx_var_index(m, "sh", ptx_func_index(m, "k")));
    assert_int_equal(s->imm, 4);
    assert_int_equal(ptx_opd(k, 2, 1)->symkind, FAB__PTX_SYM_FUNC);
    assert_int_equal(ptx_opd(k, 2, 1)->sym, ptx_func_index(m, "gf"));
    fab__ptx_module_free(m);
    /* a module-scope name declared further on resolves at the module's end */
    m = ptx_ok(PTX_HEAD ".entry e() { .reg .b64 %a; mov.u64 %a, later; ld.global.u32 %a, [later+4]; }\n"
                        ".global .u32 later;\n");
    k = ptx_func(m, "e");
    assert_int_equal(ptx_opd(k, 0, 1)->sym, ptx_var_index(m, "later", FAB__PTX_NONE));
    assert_int_equal(ptx_opd(k, 1, 1)->sym, ptx_var_index(m, "later", FAB__PTX_NONE));
    assert_int_equal(ptx_opd(k, 1, 1)->imm, 4);
    fab__ptx_module_free(m);
}

static void vectors_pairs_sinks_and_negated_predicates(void **state)
{
    (void)state;
    fab__ptx_module_t *m = body("st.global.v2.b32 [%rd0], {%r0, _};\nsetp.lt.s32 %p0|%p1, %r0, %r1;\n"
                                "and.pred %p0, %p1, !%p2;\n@!%p0 bra L;\n@%p1 ret;\nL: ret;\n");
    const fab__ptx_func_t *k = ptx_func(m, "k");
    const fab__ptx_operand_t *v = ptx_opd(k, 0, 1);
    assert_int_equal(v->kind, FAB__PTX_OPD_VEC);
    assert_int_equal(v->elems, 2);
    assert_string_equal(ptx_reg_name(k, ptx_elem(k, v, 0)), "%r0");
    assert_int_equal(ptx_elem(k, v, 1)->kind, FAB__PTX_OPD_SINK);
    const fab__ptx_operand_t *pair = ptx_opd(k, 1, 0);
    assert_int_equal(pair->kind, FAB__PTX_OPD_PAIR);
    assert_string_equal(k->regs[pair->reg].name, "%p0");
    assert_string_equal(k->regs[pair->reg2].name, "%p1");
    const fab__ptx_operand_t *n = ptx_opd(k, 2, 2);
    assert_int_equal(n->kind, FAB__PTX_OPD_REG);
    assert_true(n->neg);
    assert_true(k->insns[3].guard_neg);
    assert_string_equal(k->regs[k->insns[3].guard].name, "%p0");
    assert_false(k->insns[4].guard_neg);
    assert_string_equal(k->regs[k->insns[4].guard].name, "%p1");
    assert_int_equal(k->insns[0].guard, FAB__PTX_NONE);
    fab__ptx_module_free(m);
}

static void labels_resolve_forward_and_backward(void **state)
{
    (void)state;
    fab__ptx_module_t *m = body("bra.uni FWD;\nBACK:\nadd.s32 %r0, %r0, 1;\nFWD:\n@%p0 bra BACK;\nret;\nEND:\n");
    const fab__ptx_func_t *k = ptx_func(m, "k");
    assert_int_equal(k->nlabels, 3);
    const fab__ptx_operand_t *f = ptx_opd(k, 0, 0);
    assert_int_equal(f->kind, FAB__PTX_OPD_LABEL);
    assert_string_equal(k->label_names[f->label], "FWD");
    assert_int_equal(k->labels[f->label], 2);
    const fab__ptx_operand_t *b = ptx_opd(k, 2, 0);
    assert_string_equal(k->label_names[b->label], "BACK");
    assert_int_equal(k->labels[b->label], 1);
    assert_int_equal(k->labels[2], k->ninsns);
    fab__ptx_module_free(m);
}

static void calls_always_have_rets_target_and_args(void **state)
{
    (void)state;
    fab__ptx_module_t *m = body("call.uni gf;\n{\n.param .b32 a0;\n.param .b32 r0;\n"
                                "call (r0), gf, (a0, %r1);\ncall gf, (a0);\n"
                                "proto: .callprototype (.param .b32 _) _ (.param .b32 _);\n"
                                "call (r0), %rd0, (a0), proto;\n}\n");
    const fab__ptx_func_t *k = ptx_func(m, "k");
    const fab__ptx_insn_t *c = &k->insns[0];
    assert_int_equal(c->op, FAB__PTX_OP_CALL);
    assert_int_equal(c->words[0], FAB__PTX_W_UNI);
    assert_int_equal(c->nops, 3);
    assert_int_equal(ptx_opd(k, 0, 0)->kind, FAB__PTX_OPD_LIST);
    assert_int_equal(ptx_opd(k, 0, 0)->elems, 0);
    assert_int_equal(ptx_opd(k, 0, 1)->sym, ptx_func_index(m, "gf"));
    assert_int_equal(ptx_opd(k, 0, 2)->elems, 0);
    const fab__ptx_operand_t *args = ptx_opd(k, 1, 2);
    assert_int_equal(args->elems, 2);
    assert_int_equal(ptx_elem(k, args, 0)->kind, FAB__PTX_OPD_SYM);
    assert_string_equal(m->vars[ptx_elem(k, args, 0)->sym].name, "a0");
    assert_int_equal(ptx_elem(k, args, 1)->kind, FAB__PTX_OPD_REG);
    assert_int_equal(ptx_opd(k, 1, 0)->elems, 1);
    assert_int_equal(ptx_opd(k, 2, 0)->elems, 0); /* rets not written */
    assert_int_equal(ptx_opd(k, 2, 2)->elems, 1);
    assert_int_equal(k->insns[3].nops, 4);
    assert_int_equal(ptx_opd(k, 3, 1)->kind, FAB__PTX_OPD_REG);
    const fab__ptx_operand_t *p = ptx_opd(k, 3, 3);
    assert_int_equal(p->kind, FAB__PTX_OPD_PROTO);
    assert_int_equal(m->protos[p->sym].nparams, 1);
    assert_int_equal(m->protos[p->sym].nrets, 1);
    assert_int_equal(m->protos[p->sym].params[0].size, 4);
    fab__ptx_module_free(m);
}

static void target_lists_are_lists_of_labels_or_functions(void **state)
{
    (void)state;
    fab__ptx_module_t *m = body("ts: .branchtargets A, B;\nfs: .calltargets gf;\nbrx.idx %r0, ts;\n"
                                "A: call %rd0, fs;\nB: ret;\n");
    const fab__ptx_func_t *k = ptx_func(m, "k");
    const fab__ptx_operand_t *t = ptx_opd(k, 0, 1);
    assert_int_equal(k->insns[0].op, FAB__PTX_OP_BRX_IDX);
    assert_int_equal(t->kind, FAB__PTX_OPD_LIST);
    assert_int_equal(t->elems, 2);
    assert_string_equal(k->label_names[ptx_elem(k, t, 1)->label], "B");
    const fab__ptx_operand_t *f = ptx_opd(k, 1, 3);
    assert_int_equal(f->kind, FAB__PTX_OPD_LIST);
    assert_int_equal(ptx_elem(k, f, 0)->symkind, FAB__PTX_SYM_FUNC);
    assert_int_equal(ptx_elem(k, f, 0)->sym, ptx_func_index(m, "gf"));
    fab__ptx_module_free(m);
}

static void each_scope_declares_registers_of_its_own(void **state)
{
    (void)state;
    /* as nvcc writes inline asm twice, each in a block of its own */
    fab__ptx_module_t *m = body("{ .reg .u32 t; mov.u32 t, 1; mov.u32 %r0, t; }\n"
                                "{ .reg .u32 t; mov.u32 t, 2; mov.u32 %r1, t; }\n"
                                "{ .reg .b32 %r0; mov.b32 %r0, 3; }\nmov.u32 %r2, %r0;\n");
    const fab__ptx_func_t *k = ptx_func(m, "k");
    uint32_t t1 = ptx_opd(k, 0, 0)->reg, t2 = ptx_opd(k, 2, 0)->reg;
    assert_int_not_equal(t1, t2);
    assert_string_equal(k->regs[t1].name, "t");
    assert_string_equal(k->regs[t2].name, "t");
    assert_int_equal(ptx_opd(k, 1, 1)->reg, t1);
    /* an inner %r0 shadows the outer one, which comes back after the block */
    uint32_t inner = ptx_opd(k, 4, 0)->reg, outer = ptx_opd(k, 5, 1)->reg;
    assert_int_not_equal(inner, outer);
    assert_int_equal(outer, ptx_opd(k, 1, 0)->reg);
    fab__ptx_module_free(m);
}

static void labels_of_different_scopes_may_share_a_name(void **state)
{
    (void)state;
    fab__ptx_module_t *m = body("{ L: @%p0 bra L; }\n{ L: @%p1 bra L; }\n");
    const fab__ptx_func_t *k = ptx_func(m, "k");
    assert_int_equal(k->nlabels, 2);
    assert_int_equal(ptx_opd(k, 0, 0)->label, 0);
    assert_int_equal(ptx_opd(k, 1, 0)->label, 1);
    fab__ptx_module_free(m);
}

static void a_name_of_an_inner_scope_is_gone_after_it(void **state)
{
    (void)state;
    ptx_bad(PTX_HEAD ".entry k()\n{\n{ .reg .u32 t; }\nmov.u32 t, 1;\n}\n", 7, "t is not declared");
}

static void instruction_lines_are_their_lines_in_the_text(void **state)
{
    (void)state;
    fab__ptx_module_t *m = ptx_ok(PTX_HEAD "\n.entry k()\n{\n\tret;\n\n\t// two\n\texit;\n}\n");
    const fab__ptx_func_t *k = ptx_func(m, "k");
    assert_int_equal(k->insns[0].line, 7);
    assert_int_equal(k->insns[1].line, 10);
    assert_int_equal(k->line, 5);
    fab__ptx_module_free(m);
}

static void every_opcode_of_the_list_is_found_by_its_mnemonic(void **state)
{
    (void)state;
    for (unsigned op = 0; op < FAB__PTX_OP_COUNT; op++) {
        char buf[256];
        /* call alone takes a target: the entry itself */
        snprintf(buf, sizeof(buf), PTX_HEAD ".entry k() { %s%s; }\n", fab__ptx_op_name(op),
                 op == FAB__PTX_OP_CALL ? " k" : "");
        fab__ptx_module_t *m = ptx_ok(buf);
        if (m->funcs[0].insns[0].op != op)
            fail_msg("%s is opcode %u, not %u", fab__ptx_op_name(op), m->funcs[0].insns[0].op, op);
        fab__ptx_module_free(m);
    }
}

static void every_word_of_the_list_is_a_modifier(void **state)
{
    (void)state;
    for (unsigned w = 1; w < FAB__PTX_W_COUNT; w++) {
        char buf[256];
        snprintf(buf, sizeof(buf), PTX_HEAD ".entry k() { nanosleep%s.u32 1; }\n", fab__ptx_word_name(w));
        fab__ptx_module_t *m = ptx_ok(buf);
        const fab__ptx_insn_t *in = &m->funcs[0].insns[0];
        if (in->op != FAB__PTX_OP_NANOSLEEP || in->nwords != 1 || in->words[0] != w)
            fail_msg("%s is not read as a word", fab__ptx_word_name(w));
        fab__ptx_module_free(m);
    }
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test(every_opcode_of_the_list_is_found_by_its_mnemonic),
    cmocka_unit_test(every_word_of_the_list_is_a_modifier),
    cmocka_unit_test(mnemonic_is_the_longest_prefix_the_opcode_list_holds),
    cmocka_unit_test(modifiers_are_spaces_vector_widths_types_and_words),
    cmocka_unit_test(immediates_in_every_base_and_sign),
    cmocka_unit_test(float_literals_keep_their_bits_and_width),
    cmocka_unit_test(special_registers_and_their_components),
    cmocka_unit_test(addresses_take_a_register_a_symbol_or_an_integer),
    cmocka_unit_test(symbols_name_variables_and_functions),
    cmocka_unit_test(vectors_pairs_sinks_and_negated_predicates),
    cmocka_unit_test(labels_resolve_forward_and_backward),
    cmocka_unit_test(calls_always_have_rets_target_and_args),
    cmocka_unit_test(target_lists_are_lists_of_labels_or_functions),
    cmocka_unit_test(each_scope_declares_registers_of_its_own),
    cmocka_unit_test(labels_of_different_scopes_may_share_a_name),
    cmocka_unit_test(a_name_of_an_inner_scope_is_gone_after_it),
    cmocka_unit_test(instruction_lines_are_their_lines_in_the_text),
};

FAB_TEST_MAIN_NO_HELPERS("ptx", tests)
