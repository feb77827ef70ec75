/* The PTX front end's refusals (ptx.<test>): malformed text is
 * FAB__PTX_E_SYNTAX with the line of the fault and a sentence naming the
 * rule broken, never a crash and never a read past the length given. */
#include "ptx_test.h"

static void unknown_instructions_and_modifiers_are_named(void **state)
{
    (void)state;
    ptx_bad(PTX_HEAD ".entry k()\n{\n\tfrobnicate.u32 1;\n}\n", 6, "'frobnicate' is no PTX instruction");
    ptx_bad(PTX_HEAD ".entry k()\n{\n\t.reg .b32 %r;\n\tadd.s33 %r, %r, 1;\n}\n", 7, "'.s33'");
    ptx_bad(PTX_HEAD ".entry k()\n{\n\t.reg .b32 %r;\n\tld.global.bogus.u32 %r, [0];\n}\n", 7, "'.bogus'");
}

static void undeclared_names_are_named(void **state)
{
    (void)state;
    ptx_bad(PTX_HEAD ".entry k()\n{\n\tmov.u32 %nope, 1;\n}\n", 6, "register %nope is not declared");
    ptx_bad(PTX_HEAD ".entry k()\n{\n\tbra.uni away;\n}\n", 6, "label away is not declared");
    ptx_bad(PTX_HEAD ".entry k()\n{\n\t.reg .b64 %a;\n\tmov.u64 %a, ghost;\n}\n", 7, "ghost is not declared");
    ptx_bad(PTX_HEAD ".entry k()\n{\n\t@%q ret;\n}\n", 6, "%q is not a declared register");
}

static void names_declared_twice_in_one_scope_are_refused(void **state)
{
    (void)state;
    ptx_bad(PTX_HEAD ".entry k()\n{\n\t.reg .b32 %r<2>;\n\t.reg .b32 %r1;\n}\n", 7, "%r1 is declared twice");
    ptx_bad(PTX_HEAD ".global .u32 x;\n.global .u32 x;\n", 5, "x is declared twice");
    ptx_bad(PTX_HEAD ".entry k() { ret; }\n.entry k() { ret; }\n", 5, "k is defined twice");
    ptx_bad(PTX_HEAD ".entry k() { L: L: ret; }\n", 4, "L is declared twice");
}

static void structure_errors_name_their_line(void **state)
{
    (void)state;
    ptx_bad(PTX_HEAD ".entry k()\n{\n\tret\n}\n", 7, "';' expected");
    ptx_bad(PTX_HEAD ".entry k()\n{\n\tret;\n", 5, "the body of k is not closed");
    ptx_bad(PTX_HEAD ".entry k(.param .u64 p { ret; }\n", 4, "')' after a parameter");
    ptx_bad(PTX_HEAD "}\n", 4, "out of place at module scope");
    ptx_bad(PTX_HEAD "/* open\n\ncomment\n", 4, "a comment that is not closed");
    ptx_bad(".target sm_90\n", 1, "starts with .version");
    ptx_bad(".version 9\n", 1, ".version takes a major.minor number");
    ptx_bad(".version 9.0\n.target gfx90a\n", 2, "'gfx90a' is no .target option");
    ptx_bad(".version 9.0\n.target sm_9x\n", 2, "no target architecture");
    ptx_bad(".version 9.0\n.address_size 48\n", 2, ".address_size is 32 or 64");
    ptx_bad(PTX_HEAD ".entry k()\n{\n\t.reg .b32 %r;\n\tadd.s32 %r, %r, ;\n}\n", 7, "an operand expected");
}

static void declaration_errors_name_the_rule(void **state)
{
    (void)state;
    ptx_bad(PTX_HEAD ".global .u32 x[0];\n", 4, "an array dimension of 0");
    ptx_bad(PTX_HEAD ".global .u32 x[2][] = {1};\n", 4, "only an array's first dimension may be left open");
    ptx_bad(PTX_HEAD ".global .u32 x[2] = {1, 2, 3};\n", 4, "more initial values than the variable holds");
    ptx_bad(PTX_HEAD ".global .u8 x = 256;\n", 4, "does not fit in 1 bytes");
    ptx_bad(PTX_HEAD ".global .align 3 .u32 x;\n", 4, ".align takes a power of two");
    ptx_bad(PTX_HEAD ".global x;\n", 4, "a variable's type expected");
    ptx_bad(PTX_HEAD ".extern .global .u32 x = 1;\n", 4, ".extern x has an initializer");
    ptx_bad(PTX_HEAD ".shared .u32 x = 1;\n", 4, "only .global and .const variables take initializers");
    ptx_bad(PTX_HEAD ".global .u16 p = g;\n.global .u32 g;\n", 4, "in a 2-byte element");
    ptx_bad(PTX_HEAD ".global .u64 p = nothere;\n", 4, "nothere is not declared");
}

static void literal_errors_name_the_rule(void **state)
{
    (void)state;
    ptx_bad(PTX_HEAD ".global .u64 x = 99999999999999999999999;\n", 4, "does not fit in 64 bits");
    ptx_bad(PTX_HEAD ".global .f32 x = 0f3F80;\n", 4, "exactly 8 hex digits");
    ptx_bad(PTX_HEAD ".global .u32 x = 09;\n", 4, "the digit '9' in a base-8 literal");
    ptx_bad(PTX_HEAD ".global .u32 x\x01;\n", 4, "the byte 0x01");
    ptx_bad(PTX_HEAD ".global .u32 x\xc3\xa9;\n", 4, "the byte 0xc3");
    ptx_bad(PTX_HEAD ".pragma \"open\n;\n", 4, "a string that is not closed");
}

/* Every prefix of a valid text parses or is refused; none reads past its
 * length (the copy is exactly that long, for the sanitizers and valgrind). */
static void no_prefix_reads_past_its_length(void **state)
{
    (void)state;
    static const char text[] = PTX_HEAD ".global .align 8 .u64 p[2] = {generic(g)+4, 0d3FF0000000000000};\n"
                               ".global .u32 g[2] = {1, 0x2};\n"
                               ".entry k(.param .u64 a)\n{\n\t.reg .b32 %r<2>;\n\t.reg .pred %p;\n"
                               "\tmov.u32 %r0, %tid.x;\n\tsetp.eq.u32 %p, %r0, 0;\n\t@!%p bra L;\n"
                               "\t{ .reg .f32 t; mov.f32 t, 0f3F800000; }\nL:\n\tret;\n}\n";
    size_t n = sizeof(text) - 1, ok = 0;
    for (size_t len = 0; len <= n; len++) {
        char *copy = malloc(len ? len : 1);
        assert_non_null(copy);
        memcpy(copy, text, len);
        fab__ptx_module_t *m = NULL;
        fab__ptx_diag_t d;
        fab__ptx_status_t st = fab__ptx_parse(copy, len, &m, &d);
        assert_true(st == FAB__PTX_OK || st == FAB__PTX_E_SYNTAX);
        if (st == FAB__PTX_OK)
            ok++;
        else
            assert_true(d.msg[0] != '\0');
        fab__ptx_module_free(m);
        free(copy);
    }
    assert_true(ok > 0);
}

static void a_nul_ends_the_text(void **state)
{
    (void)state;
    static const char text[] = PTX_HEAD ".global .u32 a;\n\0this is not PTX {{{";
    fab__ptx_module_t *m = NULL;
    fab__ptx_diag_t d;
    assert_int_equal(fab__ptx_parse(text, sizeof(text), &m, &d), FAB__PTX_OK);
    assert_int_equal(m->nvars, 1);
    fab__ptx_module_free(m);
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test(unknown_instructions_and_modifiers_are_named),
    cmocka_unit_test(undeclared_names_are_named),
    cmocka_unit_test(names_declared_twice_in_one_scope_are_refused),
    cmocka_unit_test(structure_errors_name_their_line),
    cmocka_unit_test(declaration_errors_name_the_rule),
    cmocka_unit_test(literal_errors_name_the_rule),
    cmocka_unit_test(no_prefix_reads_past_its_length),
    cmocka_unit_test(a_nul_ends_the_text),
};

FAB_TEST_MAIN_NO_HELPERS("ptx", tests)
