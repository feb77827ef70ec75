/* The loader's register slots (src/ptx/slots.c): PTX registers packed onto
 * as few window slots as their live ranges allow, read back through
 * fab__ptx_program_func_slots, and kernels whose registers share slots
 * computing what they compute with one slot each: values live across a
 * divergent branch and a loop's back edge, across calls, and a register read
 * before it is written, which starts as the block before left it; and that
 * every instruction the engine runs has had its handler checked against the
 * contract shared slots rely on (src/ptx/exec.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptx_test.h"
#include "src/ptx/decode.h"
#include "src/ptx/ptx.h"

#include "ptx_exec_test.h"

#define HEAD ".version 9.0\n.target sm_90\n.address_size 64\n"

static void run(const char *name, uint32_t grid, uint32_t block, void *out)
{
    run_shared(name, grid, block, 0, out);
}

static void slots_of(const char *name, uint32_t *regs, uint32_t *slots)
{
    assert_true(fab__ptx_program_func_slots(prog, name, regs, slots));
    print_message("%s: %u PTX registers on %u slots\n", name, *regs, *slots);
}

/* 256 registers, each read once by the next instruction: a handful of slots. */
static void short_lived_registers_share_a_few_slots(void **state)
{
    (void)state;
    enum { N = 256 };
    size_t cap = 64 * N + 1024, n = 0;
    char *t = malloc(cap);
    assert_non_null(t);
    n += (size_t)snprintf(t + n, cap - n, HEAD ".visible .entry chain(.param .u64 out)\n{\n"
                          ".reg .u64 %%o, %%a;\n.reg .b32 %%r<%d>;\n"
                          "ld.param.u64 %%o, [out];\nmov.u32 %%r0, %%tid.x;\n"
                          "mul.wide.u32 %%a, %%r0, 4;\nadd.u64 %%a, %%o, %%a;\n", N + 1);
    for (int i = 1; i <= N; i++)
        n += (size_t)snprintf(t + n, cap - n, "add.u32 %%r%d, %%r%d, %d;\n", i, i - 1, i);
    n += (size_t)snprintf(t + n, cap - n, "st.global.u32 [%%a], %%r%d;\nret;\n}\n", N);
    assert_true(n < cap);
    load(t);
    free(t);
    uint32_t regs, slots;
    slots_of("chain", &regs, &slots);
    assert_int_equal(regs, N + 3);
    assert_true(slots <= 4); /* %a, the register read, the one written, and one spare at most */
    uint32_t out[64];
    run("chain", 1, 64, out);
    for (uint32_t l = 0; l < 64; l++)
        assert_int_equal(out[l], l + N * (N + 1) / 2);
}

/* Even lanes branch over the odd lanes' side, which runs first: the odd
 * side's temporaries may take the slots of %side and %ps, which only the
 * even side reads, and must not change them for the even lanes. Lanes leave
 * the loop after 2 to 5 trips; %keep lives across the whole loop, and %k11,
 * read only at the loop's top, across its back edge. */
static void values_live_across_a_divergent_branch_and_a_loop_keep_them(void **state)
{
    (void)state;
    load(HEAD ".visible .entry div(.param .u64 out)\n{\n"
              ".reg .u64 %o, %a;\n.reg .b32 %t, %keep, %k11, %n, %side, %acc, %i, %e, %x<9>, %y<4>;\n"
              ".reg .pred %p, %q, %ps, %pp;\n"
              "ld.param.u64 %o, [out];\nmov.u32 %t, %tid.x;\n"
              "mad.lo.u32 %keep, %t, 7, 3;\nmov.u32 %k11, 11;\nand.b32 %n, %t, 3;\nadd.u32 %n, %n, 2;\n"
              "mov.u32 %acc, 0;\nmov.u32 %i, 0;\n"
              "LOOP:\n"
              "mul.lo.u32 %side, %t, %k11;\n"
              "setp.gt.u32 %ps, %t, 15;\n"
              "and.b32 %e, %t, 1;\nsetp.eq.u32 %p, %e, 0;\n"
              "@%p bra EVEN;\n"
              "add.u32 %x1, %i, 5;\nmul.lo.u32 %x2, %x1, 3;\nxor.b32 %x3, %x2, 85;\n"
              "add.u32 %x4, %x3, %t;\nsetp.lt.u32 %pp, %x4, 40;\nselp.u32 %x5, 7, 9, %pp;\n"
              "add.u32 %x6, %x5, %x4;\nshl.b32 %x7, %x6, 1;\nadd.u32 %x8, %x7, %x1;\n"
              "add.u32 %acc, %acc, %x8;\nbra JOIN;\n"
              "EVEN:\n"
              "add.u32 %y1, %side, %i;\nselp.u32 %y2, 1000, 0, %ps;\nadd.u32 %y3, %y1, %y2;\n"
              "add.u32 %acc, %acc, %y3;\n"
              "JOIN:\n"
              "add.u32 %i, %i, 1;\nsetp.lt.u32 %q, %i, %n;\n@%q bra LOOP;\n"
              "mul.wide.u32 %a, %t, 8;\nadd.u64 %a, %o, %a;\nst.global.v2.u32 [%a], {%keep, %acc};\n"
              "ret;\n}\n");
    uint32_t regs, slots;
    slots_of("div", &regs, &slots);
    assert_true(slots < regs);
    uint32_t out[64];
    run("div", 1, 32, out);
    for (uint32_t t = 0; t < 32; t++) {
        uint32_t acc = 0;
        for (uint32_t i = 0; i < 2 + (t & 3); i++) {
            if (t & 1) {
                uint32_t x1 = i + 5, x4 = ((x1 * 3) ^ 85) + t, x6 = (x4 < 40 ? 7 : 9) + x4;
                acc += (x6 << 1) + x1;
            } else {
                acc += t * 11 + i + (t > 15 ? 1000 : 0);
            }
        }
        assert_int_equal(out[2 * t], t * 7 + 3);
        assert_int_equal(out[2 * t + 1], acc);
    }
}

/* A loop that calls a function with many temporaries of its own, from one
 * side of a divergent branch: the caller's values live across each call. */
static void values_live_across_calls_keep_them(void **state)
{
    (void)state;
    load(HEAD ".func (.param .b32 r) f(.param .b32 a)\n{\n"
              ".reg .b32 %a, %b<9>;\n.reg .pred %p;\n"
              "ld.param.b32 %a, [a];\nadd.u32 %b1, %a, 1;\nmul.lo.u32 %b2, %b1, 3;\n"
              "setp.gt.u32 %p, %b2, 30;\n@%p bra BIG;\n"
              "add.u32 %b3, %b2, 2;\nmov.u32 %b8, %b3;\nbra DONE;\n"
              "BIG:\nsub.u32 %b4, %b2, 30;\nshl.b32 %b5, %b4, 2;\nadd.u32 %b6, %b5, %b1;\nmov.u32 %b8, %b6;\n"
              "DONE:\nst.param.b32 [r], %b8;\nret;\n}\n"
              ".visible .entry calls(.param .u64 out)\n{\n"
              ".reg .u64 %o, %a;\n.reg .b32 %t, %k1, %k2, %i, %v, %w, %acc;\n.reg .pred %odd, %q;\n"
              "ld.param.u64 %o, [out];\nmov.u32 %t, %tid.x;\n"
              "mad.lo.u32 %k1, %t, 3, 1;\nmad.lo.u32 %k2, %t, 5, 2;\nmov.u32 %acc, 0;\nmov.u32 %i, 0;\n"
              "and.b32 %w, %t, 1;\nsetp.eq.u32 %odd, %w, 1;\n"
              "LOOP:\n"
              "@!%odd bra SKIP;\n"
              "add.u32 %w, %i, %t;\n"
              "{\n.param .b32 pa;\n.param .b32 pr;\nst.param.b32 [pa], %w;\n"
              "call (pr), f, (pa);\nld.param.b32 %v, [pr];\n}\n"
              "add.u32 %acc, %acc, %v;\n"
              "SKIP:\n"
              "add.u32 %acc, %acc, %k1;\nadd.u32 %i, %i, 1;\nsetp.lt.u32 %q, %i, 5;\n@%q bra LOOP;\n"
              "mul.wide.u32 %a, %t, 8;\nadd.u64 %a, %o, %a;\nst.global.v2.u32 [%a], {%k2, %acc};\n"
              "ret;\n}\n");
    uint32_t regs, slots;
    slots_of("f", &regs, &slots);
    assert_true(slots < regs);
    slots_of("calls", &regs, &slots);
    uint32_t out[128];
    run("calls", 1, 64, out);
    for (uint32_t t = 0; t < 64; t++) {
        uint32_t acc = 0;
        for (uint32_t i = 0; i < 5; i++) {
            if (t & 1) {
                uint32_t b1 = i + t + 1, b2 = b1 * 3;
                acc += b2 > 30 ? ((b2 - 30) << 2) + b1 : b2 + 2;
            }
            acc += t * 3 + 1;
        }
        assert_int_equal(out[2 * t], t * 5 + 2);
        assert_int_equal(out[2 * t + 1], acc);
    }
}

/* %u is read before any write: it keeps a slot of its own, so the second
 * block (one worker: it runs after the first, in its memory) reads what the
 * first left there, although temporaries after it would fit its slot. */
static void a_register_read_before_written_starts_as_the_block_before_left_it(void **state)
{
    (void)state;
    load(HEAD ".visible .entry rbw(.param .u64 out)\n{\n"
              ".reg .u64 %o, %a;\n.reg .b32 %u, %c, %x<6>;\n"
              "ld.param.u64 %o, [out];\nmov.u32 %c, %ctaid.x;\n"
              "mul.wide.u32 %a, %c, 4;\nadd.u64 %a, %o, %a;\n"
              "st.global.u32 [%a], %u;\n"
              "add.u32 %u, %c, 100;\n"
              "bra NEXT;\nNEXT:\n"
              "add.u32 %x1, %c, 1;\nmul.lo.u32 %x2, %x1, 9;\nadd.u32 %x3, %x2, %x1;\n"
              "xor.b32 %x4, %x3, 7;\nadd.u32 %x5, %x4, %x2;\n"
              "st.global.u32 [%a+64], %x5;\n"
              "ret;\n}\n");
    uint32_t regs, slots;
    slots_of("rbw", &regs, &slots);
    assert_true(slots < regs);
    uint32_t out[32] = {0};
    run("rbw", 2, 32, out);
    assert_int_equal(out[1], 100);
    for (uint32_t c = 0; c < 2; c++)
        assert_int_equal(out[16 + c], (((c + 1) * 9 + c + 1) ^ 7) + (c + 1) * 9);
}

/* A new handler must be checked against exec.h's contract and listed in
 * slots.c (FAB__PTX_SLOTS_CHECKED); until then the functions that use it
 * keep one slot per register, which this says rather than leaves unseen. */
static void every_instruction_that_runs_is_checked_for_register_slots(void **state)
{
    (void)state;
    char missing[2048] = "";
    size_t n = 0;
#define ROW(id, mnemonic, section, runs)                                                           \
    if ((runs) && !fab__ptx_slots_checked(FAB__PTX_OP_##id) && n < sizeof(missing) - 40)       \
        n += (size_t)snprintf(missing + n, sizeof(missing) - n, " %s", mnemonic);
    FAB__PTX_OPCODES(ROW)
#undef ROW
    if (n)
        fail_msg("these run, but src/ptx/slots.c has not checked their handlers against "
                 "src/ptx/exec.h's contract (FAB__PTX_SLOTS_CHECKED):%s", missing);
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test_teardown(short_lived_registers_share_a_few_slots, teardown),
    cmocka_unit_test_teardown(values_live_across_a_divergent_branch_and_a_loop_keep_them, teardown),
    cmocka_unit_test_teardown(values_live_across_calls_keep_them, teardown),
    cmocka_unit_test_teardown(a_register_read_before_written_starts_as_the_block_before_left_it, teardown),
    cmocka_unit_test(every_instruction_that_runs_is_checked_for_register_slots),
};

FAB_TEST_MAIN_NO_HELPERS("ptx", tests)
