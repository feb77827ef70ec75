/* Profiles (fab__ptx_program_profile*): per instruction, the times a warp
 * ran it with at least one lane's guard true, and the spin yields it ended;
 * counted only once asked for, added to by every launch after, read as a
 * snapshot sorted by runs, with the PTX line, opcode and function of each. */
#include <string.h>

#include "ptx_exec_test.h"

#define HEAD ".version 8.0\n.target sm_90\n.address_size 64\n"

/* Lines 4-15: a loop of ten rounds, then a store guarded off in every lane. */
static const char loop_ptx[] = HEAD
    ".visible .entry loop(.param .u64 out)\n"              /* 4 */
    "{\n"                                                  /* 5 */
    ".reg .u64 %o; .reg .b32 %i; .reg .pred %p, %q;\n"      /* 6 */
    "ld.param.u64 %o, [out];\n"                            /* 7 */
    "mov.b32 %i, 0;\n"                                     /* 8 */
    "L: add.s32 %i, %i, 1;\n"                              /* 9 */
    "setp.lt.s32 %p, %i, 10;\n"                            /* 10 */
    "@%p bra L;\n"                                         /* 11 */
    "setp.eq.s32 %q, %i, 99;\n"                            /* 12 */
    "@%q st.global.u32 [%o+4], %i;\n"                      /* 13 */
    "st.global.u32 [%o], %i;\n"                            /* 14 */
    "ret;\n"                                               /* 15 */
    "}\n";

static uint64_t runs_at(const fab__ptx_profile_line_t *lines, size_t n, uint32_t line)
{
    for (size_t i = 0; i < n; i++)
        if (lines[i].line == line)
            return lines[i].runs;
    return 0;
}

static size_t read_all(fab__ptx_profile_line_t **lines_out, uint64_t *total)
{
    size_t cap = fab__ptx_program_ninsns(prog);
    assert_true(cap > 0);
    fab__ptx_profile_line_t *lines = calloc(cap, sizeof(*lines));
    assert_non_null(lines);
    size_t n = fab__ptx_program_profile_read(prog, lines, cap, total);
    *lines_out = lines;
    return n;
}

static void profile_counts_each_instruction_once_a_warp_runs_it(void **state)
{
    (void)state;
    load(loop_ptx);
    assert_int_equal(fab__ptx_program_profile(prog), FAB__PTX_OK);
    uint32_t out[2] = {0, 0};
    run_shared("loop", 2, 64, 0, out); /* 4 warps */
    assert_int_equal(out[0], 10);
    fab__ptx_profile_line_t *lines;
    uint64_t total = 0;
    size_t n = read_all(&lines, &total);
    assert_int_equal(runs_at(lines, n, 7), 4);
    assert_int_equal(runs_at(lines, n, 8), 4);
    assert_int_equal(runs_at(lines, n, 9), 40);  /* ten rounds in each of 4 warps */
    assert_int_equal(runs_at(lines, n, 10), 40);
    assert_int_equal(runs_at(lines, n, 11), 36); /* the last round's guard is false in every lane */
    assert_int_equal(runs_at(lines, n, 12), 4);
    assert_int_equal(runs_at(lines, n, 13), 0);  /* guarded off in every lane: not run */
    assert_int_equal(runs_at(lines, n, 14), 4);
    assert_int_equal(runs_at(lines, n, 15), 4);
    assert_int_equal(n, 8);                      /* only what ran is listed */
    assert_int_equal(total, 4 + 4 + 40 + 40 + 36 + 4 + 4 + 4);
    /* the most run first; equal runs by line */
    assert_int_equal(lines[0].line, 9);
    assert_string_equal(fab__ptx_op_name(lines[0].op), "add");
    assert_string_equal(lines[0].func, "loop");
    assert_int_equal(lines[1].line, 10);
    assert_string_equal(fab__ptx_op_name(lines[1].op), "setp");
    assert_int_equal(lines[2].line, 11);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(lines[i].spins, 0);
    free(lines);
}

static void profile_adds_every_later_launch_and_reads_what_fits(void **state)
{
    (void)state;
    load(loop_ptx);
    assert_int_equal(fab__ptx_program_profile(prog), FAB__PTX_OK);
    assert_int_equal(fab__ptx_program_profile(prog), FAB__PTX_OK); /* twice: still on, nothing reset */
    uint32_t out[2] = {0, 0};
    run_shared("loop", 1, 32, 0, out);
    run_shared("loop", 1, 32, 0, out);
    run_shared("loop", 1, 32, 0, out);
    fab__ptx_profile_line_t top[2];
    uint64_t total = 0;
    assert_int_equal(fab__ptx_program_profile_read(prog, top, 2, &total), 2);
    assert_int_equal(top[0].runs, 30); /* 3 launches of one warp */
    assert_int_equal(top[1].runs, 30); /* the two tens of rounds: add and setp */
    assert_int_equal(top[0].line, 9);
    assert_int_equal(top[1].line, 10);
    assert_int_equal(total, 3 * 34);   /* the total counts the lines left out */
}

static void profile_counts_nothing_until_asked(void **state)
{
    (void)state;
    load(loop_ptx);
    uint32_t out[2] = {0, 0};
    run_shared("loop", 1, 32, 0, out);
    fab__ptx_profile_line_t lines[16];
    uint64_t total = 7;
    assert_int_equal(fab__ptx_program_profile_read(prog, lines, 16, &total), 0);
    assert_int_equal(total, 0);
    assert_int_equal(fab__ptx_program_profile(prog), FAB__PTX_OK);
    assert_int_equal(fab__ptx_program_profile_read(prog, lines, 16, &total), 0); /* nothing run since */
    run_shared("loop", 1, 32, 0, out);
    assert_int_equal(fab__ptx_program_profile_read(prog, lines, 16, &total), 8);
    assert_int_equal(total, 34);
}

/* Warp 0 polls a flag (line 13) that warp 1 sets after a loop of 5,000
 * rounds, longer than a quantum: whichever runs first, warp 0 polls while
 * the flag is 0 and yields there at least once. */
static const char spin_ptx[] = HEAD
    ".visible .entry spin(.param .u64 out)\n"               /* 4 */
    "{\n"                                                   /* 5 */
    ".reg .u64 %o; .reg .b32 %t, %i, %v; .reg .pred %p, %w;\n" /* 6 */
    "ld.param.u64 %o, [out];\n"                             /* 7 */
    "mov.u32 %t, %tid.x;\n"                                 /* 8 */
    "setp.lt.u32 %w, %t, 32;\n"                             /* 9 */
    "@!%w bra WRITER;\n"                                    /* 10 */
    "mov.b32 %i, 0;\n"                                      /* 11 */
    "POLL:\n"                                               /* 12 */
    "ld.volatile.global.u32 %v, [%o];\n"                    /* 13 */
    "setp.eq.u32 %p, %v, 0;\n"                              /* 14 */
    "@%p bra POLL;\n"                                       /* 15 */
    "ret;\n"                                                /* 16 */
    "WRITER: mov.b32 %i, 0;\n"                              /* 17 */
    "W: add.s32 %i, %i, 1;\n"                               /* 18 */
    "setp.lt.s32 %p, %i, 5000;\n"                           /* 19 */
    "@%p bra W;\n"                                          /* 20 */
    "st.volatile.global.u32 [%o], %i;\n"                    /* 21 */
    "ret;\n"                                                /* 22 */
    "}\n";

static void profile_counts_spin_yields_at_the_polling_load(void **state)
{
    (void)state;
    load(spin_ptx);
    assert_int_equal(fab__ptx_program_profile(prog), FAB__PTX_OK);
    uint32_t out[1] = {0};
    run_shared("spin", 1, 64, 0, out);
    assert_int_equal(out[0], 5000);
    fab__ptx_profile_line_t *lines;
    uint64_t total = 0;
    size_t n = read_all(&lines, &total);
    uint64_t spins_at_load = 0, spins_elsewhere = 0;
    for (size_t i = 0; i < n; i++) {
        if (lines[i].line == 13)
            spins_at_load += lines[i].spins;
        else
            spins_elsewhere += lines[i].spins;
    }
    assert_true(spins_at_load >= 1);
    assert_int_equal(spins_elsewhere, 0);
    assert_true(runs_at(lines, n, 13) >= 3 * spins_at_load); /* each yield after repeated polls */
    assert_int_equal(runs_at(lines, n, 18), 5000);
    free(lines);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(profile_counts_each_instruction_once_a_warp_runs_it, teardown),
        cmocka_unit_test_teardown(profile_adds_every_later_launch_and_reads_what_fits, teardown),
        cmocka_unit_test_teardown(profile_counts_nothing_until_asked, teardown),
        cmocka_unit_test_teardown(profile_counts_spin_yields_at_the_polling_load, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
