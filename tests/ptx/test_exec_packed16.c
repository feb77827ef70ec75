/* The packed 16-bit integer forms (PTX ISA 8.0, sm_90): add, sub, min and
 * max on .s16x2 and .u16x2, min.relu and max.relu on .s16x2 and .s32, as
 * the ISA gives them: half 0 is bits 0-15 and half 1 bits 16-31 of a .b32,
 * each computed on its own (no carry or borrow between them), signed or
 * not as the type says, .relu making a negative half (or .s32) 0; every
 * lane of a warp on its own, all active or some; and the forms the ISA
 * lacks refused at load, naming the instruction and the rule. */
#include <stdio.h>
#include <string.h>

#include "ptx_exec_test.h"

#define HEAD ".version 8.0\n.target sm_90\n.address_size 64\n"

/* One kernel "k" computing each of ops (one instruction text each, writing
 * %r1 from %r2 and %r3) on a and b, storing the results to out[0..n). */
static void run_ops(const char *const *ops, unsigned n, uint32_t a, uint32_t b, uint32_t *out)
{
    char text[4096];
    int len = snprintf(text, sizeof(text),
                       HEAD ".visible .entry k(.param .u64 out)\n{\n"
                            ".reg .u64 %%o; .reg .b32 %%r<4>;\n"
                            "ld.param.u64 %%o, [out];\n"
                            "mov.b32 %%r2, %u; mov.b32 %%r3, %u;\n",
                       a, b);
    for (unsigned i = 0; i < n; i++)
        len += snprintf(text + len, sizeof(text) - (size_t)len, "%s st.global.u32 [%%o+%u], %%r1;\n", ops[i],
                        4 * i);
    snprintf(text + len, sizeof(text) - (size_t)len, "ret;\n}\n");
    load(text);
    run_shared("k", 1, 1, 0, out);
    teardown(NULL);
}

static void packed16_add_and_sub_wrap_each_half_without_carry_or_borrow(void **state)
{
    (void)state;
    static const char *const ops[] = {
        "add.u16x2 %r1, %r2, %r3;", "add.s16x2 %r1, %r2, %r3;",
        "sub.u16x2 %r1, %r3, %r2;", "sub.s16x2 %r1, %r3, %r2;",
    };
    uint32_t out[4];
    /* a: half 1 0xffff, half 0 0xffff; b: 0x0001 and 0x0001 */
    run_ops(ops, 4, 0xffffffffu, 0x00010001u, out);
    assert_int_equal(out[0], 0x00000000u); /* each half wraps to 0, no carry out of half 0 */
    assert_int_equal(out[1], 0x00000000u);
    assert_int_equal(out[2], 0x00020002u); /* 1 - 0xffff in each half: 2, no borrow from half 1 */
    assert_int_equal(out[3], 0x00020002u);
    run_ops(ops, 4, 0x0000ffffu, 0x00000001u, out);
    assert_int_equal(out[0], 0x00000000u); /* half 0 wraps, half 1 stays 0 */
    assert_int_equal(out[2], 0x00000002u);
    run_ops(ops, 4, 0x12345678u, 0x11111111u, out);
    assert_int_equal(out[0], 0x23456789u);
    assert_int_equal(out[2], 0xfeddba99u); /* 0x1111 - 0x1234, 0x1111 - 0x5678, each mod 2^16 */
}

static void packed16_min_and_max_compare_signed_or_unsigned_per_half(void **state)
{
    (void)state;
    static const char *const ops[] = {
        "min.s16x2 %r1, %r2, %r3;", "min.u16x2 %r1, %r2, %r3;",
        "max.s16x2 %r1, %r2, %r3;", "max.u16x2 %r1, %r2, %r3;",
    };
    uint32_t out[4];
    /* a: half 1 0x8000 (-32768 or 32768), half 0 0x0001; b: 0x7fff, 0xffff (-1 or 65535) */
    run_ops(ops, 4, 0x80000001u, 0x7fffffffu, out);
    assert_int_equal(out[0], 0x8000ffffu);
    assert_int_equal(out[1], 0x7fff0001u);
    assert_int_equal(out[2], 0x7fff0001u);
    assert_int_equal(out[3], 0x8000ffffu);
    /* the halves choose independently: half 1 from a, half 0 from b */
    run_ops(ops, 4, 0x00010009u, 0x00050003u, out);
    assert_int_equal(out[0], 0x00010003u);
    assert_int_equal(out[1], 0x00010003u);
    assert_int_equal(out[2], 0x00050009u);
    assert_int_equal(out[3], 0x00050009u);
}

static void packed16_relu_makes_a_negative_half_zero_and_keeps_the_other(void **state)
{
    (void)state;
    static const char *const ops[] = {
        "min.relu.s16x2 %r1, %r2, %r3;", "max.relu.s16x2 %r1, %r2, %r3;",
        "min.s16x2.relu %r1, %r2, %r3;", /* the ISA's example writes .relu last */
        "min.relu.s32 %r1, %r2, %r3;", "max.relu.s32 %r1, %r2, %r3;",
    };
    uint32_t out[5];
    /* a: half 1 3, half 0 -16 (0xfff0); b: half 1 -2 (0xfffe), half 0 4 */
    run_ops(ops, 5, 0x0003fff0u, 0xfffe0004u, out);
    assert_int_equal(out[0], 0x00000000u); /* min: -2 and -16, both to 0 */
    assert_int_equal(out[1], 0x00030004u); /* max: 3 and 4 */
    assert_int_equal(out[2], 0x00000000u);
    assert_int_equal(out[3], 0);           /* .s32: the minimum is b, negative: 0 */
    assert_int_equal(out[4], 0x0003fff0u); /* the maximum, a, positive: kept */
    /* min.relu.s32 of a positive and a negative: 0; max.relu.s32 of two negatives: 0 */
    run_ops(ops, 5, 0x00000007u, 0xfffffffbu, out);
    assert_int_equal(out[3], 0);
    assert_int_equal(out[4], 7);
    run_ops(ops, 5, 0xfffffff0u, 0xfffffffbu, out);
    assert_int_equal(out[3], 0);
    assert_int_equal(out[4], 0);
    assert_int_equal(out[0], 0); /* half 1 -1, half 0 -16: both negative */
    assert_int_equal(out[1], 0x00000000u);
}

/* The reference the lanes are checked against: the ISA's semantics, half by half. */
static uint32_t ref16x2(int op, int sgn, int relu, uint32_t a, uint32_t b)
{
    uint32_t d = 0;
    for (int h = 0; h < 2; h++) {
        uint16_t ua = (uint16_t)(a >> 16 * h), ub = (uint16_t)(b >> 16 * h), r;
        int lt = sgn ? (int16_t)ua < (int16_t)ub : ua < ub;
        r = op == 0 ? (uint16_t)(ua + ub) : op == 1 ? (uint16_t)(ua - ub) : op == 2 ? (lt ? ua : ub) : (lt ? ub : ua);
        if (relu && (int16_t)r < 0)
            r = 0;
        d |= (uint32_t)r << 16 * h;
    }
    return d;
}

/* 64 threads, each with its own a and b; the threads whose id is a multiple
 * of 3 branch past, so the instructions run with all lanes and with some. */
static void packed16_every_lane_computes_its_own_halves_with_all_or_some_active(void **state)
{
    (void)state;
    load(HEAD ".visible .entry k(.param .u64 out)\n{\n"
              ".reg .u64 %o, %p, %q; .reg .b32 %r<12>; .reg .pred %s;\n"
              "ld.param.u64 %o, [out];\n"
              "mov.u32 %r0, %tid.x;\n"
              "mul.wide.u32 %p, %r0, 8; add.u64 %p, %o, %p;\n"
              "mul.wide.u32 %q, %r0, 32; add.u64 %q, %o, %q; add.u64 %q, %q, 512;\n"
              "ld.global.u32 %r2, [%p]; ld.global.u32 %r3, [%p+4];\n"
              "add.u16x2 %r4, %r2, %r3; sub.s16x2 %r5, %r2, %r3;\n"
              "min.u16x2 %r6, %r2, %r3; max.s16x2 %r7, %r2, %r3;\n"
              "rem.u32 %r1, %r0, 3; setp.eq.u32 %s, %r1, 0;\n"
              "@%s bra DONE;\n"
              "min.s16x2 %r8, %r2, %r3; max.u16x2 %r9, %r2, %r3;\n"
              "min.relu.s16x2 %r10, %r2, %r3; max.relu.s16x2 %r11, %r2, %r3;\n"
              "st.global.v4.u32 [%q+16], {%r8, %r9, %r10, %r11};\n"
              "DONE:\n"
              "st.global.v4.u32 [%q], {%r4, %r5, %r6, %r7};\n"
              "ret;\n}\n");
    enum { N = 64 };
    static uint32_t buf[128 + 8 * N];
    memset(buf, 0xab, sizeof(buf));
    uint32_t x = 0x9e3779b9u;
    for (unsigned t = 0; t < 2 * N; t++) {
        x ^= x << 13, x ^= x >> 17, x ^= x << 5;
        buf[t] = x;
    }
    run_shared("k", 1, N, 0, buf);
    for (unsigned t = 0; t < N; t++) {
        uint32_t a = buf[2 * t], b = buf[2 * t + 1], *o = &buf[128 + 8 * t];
        assert_int_equal(o[0], ref16x2(0, 0, 0, a, b));
        assert_int_equal(o[1], ref16x2(1, 1, 0, a, b));
        assert_int_equal(o[2], ref16x2(2, 0, 0, a, b));
        assert_int_equal(o[3], ref16x2(3, 1, 0, a, b));
        if (t % 3 == 0) {
            assert_int_equal(o[4], 0xababababu); /* branched past: untouched */
            continue;
        }
        assert_int_equal(o[4], ref16x2(2, 1, 0, a, b));
        assert_int_equal(o[5], ref16x2(3, 0, 0, a, b));
        assert_int_equal(o[6], ref16x2(2, 1, 1, a, b));
        assert_int_equal(o[7], ref16x2(3, 1, 1, a, b));
    }
}

/* What the ISA does not have is refused at load with its line: .relu on
 * .u16x2 or on add and sub, any other modifier on a packed form, a packed
 * word beside a type, a packed word on another instruction, .relu on an
 * integer other than min and max .s32, a predicate for an operand. */
static void packed16_forms_the_isa_lacks_are_refused_naming_them(void **state)
{
    (void)state;
    static const struct { const char *insn, *why; } cases[] = {
        {"min.relu.u16x2 %r1, %r2, %r3;", "take no modifier but .relu, on min and max .s16x2"},
        {"add.relu.s16x2 %r1, %r2, %r3;", "take no modifier but .relu, on min and max .s16x2"},
        {"add.sat.s16x2 %r1, %r2, %r3;", "take no modifier but .relu, on min and max .s16x2"},
        {"sub.cc.u16x2 %r1, %r2, %r3;", "the modifier .u16x2 is not supported here"},
        {"min.s16x2.s32 %r1, %r2, %r3;", "the type .s32 is not supported here"},
        {"min.s16x2.u16x2 %r1, %r2, %r3;", "the modifier .u16x2 is not supported here"},
        {"mul.lo.s16x2 %r1, %r2, %r3;", "the modifier .s16x2 is not supported here"},
        {"setp.lt.s16x2 %s, %r2, %r3;", "the modifier .s16x2 is not supported here"},
        {"min.relu.u32 %r1, %r2, %r3;", "the modifier .relu is not supported here"},
        {"add.relu.s32 %r1, %r2, %r3;", "the modifier .relu is not supported here"},
        {"max.s16x2 %r1, %s, %r3;", "%s used as a value"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char text[512];
        snprintf(text, sizeof(text),
                 HEAD ".visible .entry k()\n{\n.reg .b32 %%r<4>;\n.reg .pred %%s;\n%s\nret;\n}\n",
                 cases[i].insn);
        fab__ptx_diag_t d = {0};
        fab__ptx_status_t st = ptx_try_load(text, &prog, &d);
        print_message("%s -> line %u: %s\n", cases[i].insn, d.line, d.msg);
        assert_int_equal(st, FAB__PTX_E_UNSUPPORTED);
        assert_int_equal(d.line, 8);
        assert_non_null(strstr(d.msg, cases[i].why));
    }
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test_teardown(packed16_add_and_sub_wrap_each_half_without_carry_or_borrow, teardown),
    cmocka_unit_test_teardown(packed16_min_and_max_compare_signed_or_unsigned_per_half, teardown),
    cmocka_unit_test_teardown(packed16_relu_makes_a_negative_half_zero_and_keeps_the_other, teardown),
    cmocka_unit_test_teardown(packed16_every_lane_computes_its_own_halves_with_all_or_some_active, teardown),
    cmocka_unit_test_teardown(packed16_forms_the_isa_lacks_are_refused_naming_them, teardown),
};

FAB_TEST_MAIN_NO_HELPERS("ptx", tests)
