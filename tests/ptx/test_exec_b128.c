/* 128-bit registers (src/ptx/wide.c): .b128 values packed from and unpacked
 * to .b64 and .b32 registers in every lane, moved through global, shared,
 * local, parameter and generic memory, kept whole across a divergent branch
 * while their halves share slots with other registers, swapped and compared
 * by atom.cas/exch.b128, faulting on a 16-byte boundary they miss, never seen
 * torn by a reader in another block, in each of the ways the engine makes a
 * 16-byte access atomic; NCCL's pattern of them loading; the forms PTX has no
 * .b128 for refused, naming it; and (label nvcc) what nvcc makes of
 * atomicCAS on an unsigned __int128. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ptx_test.h"
#include "src/ptx/decode.h"
#include "src/ptx/ptx.h"

#define HEAD ".version 9.0\n.target sm_90\n.address_size 64\n"

extern char **environ;

__extension__ typedef unsigned __int128 u128;

static fab__ptx_program_t *prog;

static void load(const char *text)
{
    prog = ptx_load(text);
}

static int teardown(void **state)
{
    (void)state;
    fab__ptx_program_free(prog);
    prog = NULL;
    fab__ptx_wide_use(-1);
    return 0;
}

static fab__ptx_status_t run_k(const char *name, uint32_t grid, uint32_t block, unsigned workers,
                               const void *params, fab__ptx_fault_t *f)
{
    fab__ptx_launch_t la = {.kernel = fab__ptx_program_kernel(prog, name), .grid = {grid, 1, 1},
                            .block = {block, 1, 1}, .params = params, .workers = workers};
    assert_non_null(la.kernel);
    fab__ptx_fault_t mine;
    fab__ptx_status_t st = fab__ptx_run(&la, f ? f : &mine);
    if (st)
        print_message("%s: %s\n", name, (f ? f : &mine)->report);
    return st;
}

/* Whether the engine now makes 16-byte accesses atomic in way how (this CPU
 * may lack it: then the caller leaves it out, saying so). */
static bool use_way(int how)
{
    fab__ptx_wide_use(how);
    if (fab__ptx_wide_mode() == how)
        return true;
    print_message("this CPU cannot make 16-byte accesses atomic in way %d; left out\n", how);
    return false;
}

static uint64_t rot32(uint64_t x)
{
    return x >> 32 | x << 32;
}

/* Two .b64 packed into a .b128 (the first the low half), copied, unpacked
 * (under a guard in the odd lanes, the even ones keeping theirs), and four
 * .b32 the same way, in the 64 lanes of two warps. */
static void b128_pack_and_unpack_round_trip_in_every_lane(void **state)
{
    (void)state;
    load(HEAD ".visible .entry pk(.param .u64 out)\n{\n"
              ".reg .u64 %o, %a, %rd<8>;\n.reg .b32 %t, %r<6>;\n.reg .b128 %v, %w, %q;\n.reg .pred %p;\n"
              "ld.param.u64 %o, [out];\nmov.u32 %t, %tid.x;\ncvt.u64.u32 %rd0, %t;\n"
              "mul.lo.u64 %rd1, %rd0, 72340172838076673;\nnot.b64 %rd2, %rd1;\nxor.b64 %rd2, %rd2, 90;\n"
              "mov.b128 %v, {%rd1, %rd2};\n"
              "mov.b128 %w, %v;\n"
              "and.b32 %r0, %t, 1;\nsetp.eq.u32 %p, %r0, 1;\n"
              "@%p mov.b128 %w, {%rd2, %rd1};\n"
              "mov.b128 {%rd3, %rd4}, %w;\n"
              "mov.b128 {%r1, %r2, %r3, %r4}, %v;\n"
              "mov.b128 %q, {%r4, %r3, %r2, %r1};\n"
              "mov.b128 {%rd5, %rd6}, %q;\n"
              "mov.b128 {_, %rd7}, %v;\n"
              "mul.wide.u32 %a, %t, 48;\nadd.u64 %a, %o, %a;\n"
              "st.global.v2.u64 [%a], {%rd3, %rd4};\nst.global.v2.u64 [%a+16], {%rd5, %rd6};\n"
              "st.global.u64 [%a+32], %rd7;\n"
              "ret;\n}\n");
    _Alignas(16) uint64_t out[64][6];
    memset(out, 0, sizeof(out));
    void *p = out;
    assert_int_equal(run_k("pk", 1, 64, 1, &p, NULL), FAB__PTX_OK);
    for (uint64_t t = 0; t < 64; t++) {
        uint64_t lo = t * 0x0101010101010101ull, hi = ~lo ^ 90;
        assert_true(out[t][0] == (t & 1 ? hi : lo));
        assert_true(out[t][1] == (t & 1 ? lo : hi));
        assert_true(out[t][2] == rot32(hi));
        assert_true(out[t][3] == rot32(lo));
        assert_true(out[t][4] == hi);
    }
}

/* Each thread's 16 bytes from global memory to shared, another thread's back
 * from shared through .local to global, and the same bytes through every
 * ordering a load or store takes, .nc, a kernel parameter and a generic
 * address of shared memory, and ldu. */
static void b128_loads_and_stores_move_16_bytes_in_every_state_space(void **state)
{
    (void)state;
    load(HEAD ".shared .align 16 .b8 sh[1024];\n"
              ".visible .entry ls(.param .u64 in, .param .u64 out, .param .align 16 .b8 pv[16])\n{\n"
              ".reg .u64 %i, %o, %a, %s, %x<4>;\n.reg .b32 %t, %u;\n.reg .b128 %v, %w;\n"
              ".local .align 16 .b8 loc[16];\n"
              "ld.param.u64 %i, [in];\nld.param.u64 %o, [out];\nmov.u32 %t, %tid.x;\n"
              "mul.wide.u32 %a, %t, 16;\nadd.u64 %x0, %i, %a;\nadd.u64 %x2, %o, %a;\n"
              "ld.global.b128 %v, [%x0];\n"
              "mov.u64 %s, sh;\nadd.u64 %s, %s, %a;\nst.shared.b128 [%s], %v;\n"
              "bar.sync 0;\n"
              "add.u32 %u, %t, 1;\nand.b32 %u, %u, 63;\nmul.wide.u32 %x1, %u, 16;\n"
              "mov.u64 %s, sh;\nadd.u64 %s, %s, %x1;\nld.shared.b128 %w, [%s];\n"
              "st.local.b128 [loc], %w;\nld.local.b128 %v, [loc];\n"
              "st.relaxed.sys.global.b128 [%x2], %v;\n"
              "ld.relaxed.gpu.global.b128 %w, [%x0];\nst.release.sys.global.b128 [%x2+1024], %w;\n"
              "ld.volatile.global.b128 %v, [%x0];\nst.volatile.global.b128 [%x2+2048], %v;\n"
              "ld.acquire.sys.global.b128 %w, [%x0];\nst.global.b128 [%x2+3072], %w;\n"
              "ld.global.nc.b128 %v, [%x0];\nldu.global.b128 %w, [%x0];\nst.global.b128 [%x2+4096], %v;\n"
              "st.global.b128 [%x2+7168], %w;\n"
              "ld.param.b128 %w, [pv];\nst.global.b128 [%x2+5120], %w;\n"
              "mov.u64 %s, sh;\ncvta.shared.u64 %s, %s;\nadd.u64 %s, %s, %a;\n"
              "ld.b128 %v, [%s];\nst.b128 [%x2+6144], %v;\n"
              "ret;\n}\n");
    enum { T = 64 };
    static _Alignas(16) uint64_t in[T][2], out[8][T][2];
    for (uint64_t t = 0; t < T; t++)
        in[t][0] = t * 0x9E3779B97F4A7C15ull, in[t][1] = ~t * 0xBF58476D1CE4E5B9ull;
    memset(out, 0, sizeof(out));
    struct { void *in, *out; _Alignas(16) uint64_t pv[2]; } prm = {in, out, {0x1122334455667788ull, 0x99aabbccddeeff00ull}};
    assert_int_equal(run_k("ls", 1, T, 1, &prm, NULL), FAB__PTX_OK);
    for (unsigned t = 0; t < T; t++) {
        assert_memory_equal(out[0][t], in[(t + 1) % T], 16);
        for (unsigned k = 1; k <= 4; k++)
            assert_memory_equal(out[k][t], in[t], 16);
        assert_memory_equal(out[5][t], prm.pv, 16);
        assert_memory_equal(out[6][t], in[t], 16);
        assert_memory_equal(out[7][t], in[t], 16);
    }
}

/* A .b128 argument and result of a .func travel through .param memory as
 * 16 bytes (st.param.b128, ld.param.b128 on both sides of the call). */
static void b128_values_pass_to_and_from_a_function(void **state)
{
    (void)state;
    load(HEAD ".func (.param .b128 r) swap(.param .b128 a)\n{\n"
              ".reg .b64 %x<2>;\n.reg .b128 %v;\n"
              "ld.param.b128 %v, [a];\nmov.b128 {%x0, %x1}, %v;\nmov.b128 %v, {%x1, %x0};\n"
              "st.param.b128 [r], %v;\nret;\n}\n"
              ".visible .entry cl(.param .u64 out)\n{\n"
              ".reg .u64 %o, %a, %lo, %hi;\n.reg .b32 %t;\n.reg .b128 %v, %w;\n"
              "ld.param.u64 %o, [out];\nmov.u32 %t, %tid.x;\ncvt.u64.u32 %lo, %t;\nnot.b64 %hi, %lo;\n"
              "mov.b128 %v, {%lo, %hi};\n"
              "{\n.param .b128 pa;\n.param .b128 pr;\nst.param.b128 [pa], %v;\n"
              "call (pr), swap, (pa);\nld.param.b128 %w, [pr];\n}\n"
              "mul.wide.u32 %a, %t, 16;\nadd.u64 %a, %o, %a;\nst.global.b128 [%a], %w;\n"
              "ret;\n}\n");
    static _Alignas(16) uint64_t out[64][2];
    void *p = out;
    assert_int_equal(run_k("cl", 1, 64, 1, &p, NULL), FAB__PTX_OK);
    for (uint64_t t = 0; t < 64; t++)
        assert_true(out[t][0] == ~t && out[t][1] == t);
}

static uint64_t mix(uint64_t x, unsigned k)
{
    x = (x + 7 * k) * 3;
    x ^= 99;
    return x + k;
}

/* %v is packed before a divergent branch and unpacked after it; both sides
 * run a chain of short-lived .b64 temporaries that may take any slot %v's
 * halves do not hold, and make a .b128 of their own. */
static void b128_value_live_across_a_divergent_branch_keeps_both_halves(void **state)
{
    (void)state;
    char text[8192];
    size_t n = (size_t)snprintf(text, sizeof(text),
                                HEAD ".visible .entry dv(.param .u64 out)\n{\n"
                                ".reg .u64 %%o, %%a, %%lo, %%hi, %%x<12>, %%y<12>, %%r<4>;\n.reg .b32 %%t, %%e;\n"
                                ".reg .pred %%p;\n.reg .b128 %%v, %%z;\n"
                                "ld.param.u64 %%o, [out];\nmov.u32 %%t, %%tid.x;\n"
                                "cvt.u64.u32 %%lo, %%t;\nmul.lo.u64 %%lo, %%lo, 1000003;\nnot.b64 %%hi, %%lo;\n"
                                "mov.b128 %%v, {%%lo, %%hi};\n"
                                "and.b32 %%e, %%t, 1;\nsetp.eq.u32 %%p, %%e, 0;\n"
                                "@%%p bra EVEN;\ncvt.u64.u32 %%x0, %%t;\n");
    for (unsigned k = 1; k < 12; k++)
        n += (size_t)snprintf(text + n, sizeof(text) - n,
                              "add.u64 %%x%u, %%x%u, %u;\nmul.lo.u64 %%x%u, %%x%u, 3;\nxor.b64 %%x%u, %%x%u, 99;\n"
                              "add.u64 %%x%u, %%x%u, %u;\n", k, k - 1, 7 * k, k, k, k, k, k, k, k);
    n += (size_t)snprintf(text + n, sizeof(text) - n, "mov.b128 %%z, {%%x11, %%x10};\nbra JOIN;\n"
                          "EVEN:\ncvt.u64.u32 %%y0, %%t;\nadd.u64 %%y0, %%y0, 500;\n");
    for (unsigned k = 1; k < 12; k++)
        n += (size_t)snprintf(text + n, sizeof(text) - n,
                              "add.u64 %%y%u, %%y%u, %u;\nmul.lo.u64 %%y%u, %%y%u, 3;\nxor.b64 %%y%u, %%y%u, 99;\n"
                              "add.u64 %%y%u, %%y%u, %u;\n", k, k - 1, 7 * k, k, k, k, k, k, k, k);
    n += (size_t)snprintf(text + n, sizeof(text) - n,
                          "mov.b128 %%z, {%%y11, %%y10};\n"
                          "JOIN:\nmov.b128 {%%r0, %%r1}, %%v;\nmov.b128 {%%r2, %%r3}, %%z;\n"
                          "mul.wide.u32 %%a, %%t, 32;\nadd.u64 %%a, %%o, %%a;\n"
                          "st.global.v2.u64 [%%a], {%%r0, %%r1};\nst.global.v2.u64 [%%a+16], {%%r2, %%r3};\n"
                          "ret;\n}\n");
    assert_true(n < sizeof(text));
    load(text);
    uint32_t regs, slots;
    assert_true(fab__ptx_program_func_slots(prog, "dv", &regs, &slots));
    print_message("dv: %u PTX registers on %u slots\n", regs, slots);
    assert_true(slots < regs);
    uint64_t out[32][4];
    void *p = out;
    assert_int_equal(run_k("dv", 1, 32, 1, &p, NULL), FAB__PTX_OK);
    for (uint64_t t = 0; t < 32; t++) {
        uint64_t lo = t * 1000003, x = t & 1 ? t : t + 500, prev = x;
        for (unsigned k = 1; k < 12; k++)
            prev = x, x = mix(x, k);
        assert_true(out[t][0] == lo);
        assert_true(out[t][1] == ~lo);
        assert_true(out[t][2] == x);
        assert_true(out[t][3] == prev);
    }
}

/* atom.cas.b128 that matches (it stores, and returns the old value), one
 * that misses in the high half only (it stores nothing), atom.exch.b128; then
 * every thread of two blocks adds to one 128-bit counter in global memory
 * and one in its block's shared memory through compare-and-swap loops. Run
 * in each way the engine makes 16-byte accesses atomic. */
static void b128_compare_and_swap_stores_only_what_matches(void **state)
{
    (void)state;
    load(HEAD ".shared .align 16 .b8 sh[16];\n"
              ".visible .entry cas(.param .u64 m, .param .u64 out)\n{\n"
              ".reg .u64 %m, %o, %a, %x<8>;\n.reg .b32 %t, %c;\n.reg .b128 %e, %n, %d;\n.reg .pred %q;\n"
              "ld.param.u64 %m, [m];\nld.param.u64 %o, [out];\nmov.u32 %t, %tid.x;\nmov.u32 %c, %ctaid.x;\n"
              "or.b32 %c, %c, %t;\nsetp.ne.u32 %q, %c, 0;\n@%q bra COUNT;\n"
              "mov.b64 %x0, 1;\nmov.b64 %x1, 2;\nmov.b128 %e, {%x0, %x1};\n"
              "mov.b64 %x2, 3;\nmov.b64 %x3, 4;\nmov.b128 %n, {%x2, %x3};\n"
              "atom.global.cas.b128 %d, [%m], %e, %n;\n"
              "mov.b128 {%x4, %x5}, %d;\nst.global.v2.u64 [%o], {%x4, %x5};\n"
              "mov.b64 %x0, 3;\nmov.b128 %e, {%x0, %x1};\nmov.b128 %n, {%x1, %x1};\n"
              "atom.relaxed.gpu.global.cas.b128 %d, [%m], %e, %n;\n"
              "mov.b128 {%x4, %x5}, %d;\nst.global.v2.u64 [%o+16], {%x4, %x5};\n"
              "ld.global.b128 %d, [%m];\nmov.b128 {%x4, %x5}, %d;\nst.global.v2.u64 [%o+32], {%x4, %x5};\n"
              "mov.b64 %x6, 9;\nmov.b128 %n, {%x6, %x6};\n"
              "atom.acq_rel.sys.exch.b128 %d, [%m], %n;\n"
              "mov.b128 {%x4, %x5}, %d;\nst.global.v2.u64 [%o+48], {%x4, %x5};\n"
              "ld.global.b128 %d, [%m];\nmov.b128 {%x4, %x5}, %d;\nst.global.v2.u64 [%o+64], {%x4, %x5};\n"
              "COUNT:\n"
              "ld.global.b128 %e, [%m+16];\n"
              "GLOOP:\nmov.b128 {%x0, %x1}, %e;\nadd.u64 %x2, %x0, 1;\nadd.u64 %x3, %x1, 3;\n"
              "mov.b128 %n, {%x2, %x3};\natom.global.cas.b128 %d, [%m+16], %e, %n;\n"
              "mov.b128 {%x4, %x5}, %d;\nsetp.ne.u64 %q, %x4, %x0;\nsetp.ne.or.u64 %q, %x5, %x1, %q;\n"
              "mov.b128 %e, %d;\n@%q bra GLOOP;\n"
              "mov.b64 %x0, 0;\nmov.b128 %e, {%x0, %x0};\n"
              "SLOOP:\nmov.b128 {%x0, %x1}, %e;\nadd.u64 %x2, %x0, 5;\nadd.u64 %x3, %x1, 1;\n"
              "mov.b128 %n, {%x2, %x3};\natom.shared.cas.b128 %d, [sh], %e, %n;\n"
              "mov.b128 {%x4, %x5}, %d;\nsetp.ne.u64 %q, %x4, %x0;\nsetp.ne.or.u64 %q, %x5, %x1, %q;\n"
              "mov.b128 %e, %d;\n@%q bra SLOOP;\n"
              "bar.sync 0;\nsetp.ne.u32 %q, %t, 0;\n@%q ret;\n"
              "ld.shared.b128 %d, [sh];\nmov.u32 %c, %ctaid.x;\nmul.wide.u32 %a, %c, 16;\nadd.u64 %a, %o, %a;\n"
              "st.global.b128 [%a+80], %d;\n"
              "ret;\n}\n");
    enum { BLOCKS = 2, THREADS = 96 };
    for (int how = FAB__PTX_WIDE_SSE; how <= FAB__PTX_WIDE_LOCK; how++) {
        if (!use_way(how))
            continue;
        static _Alignas(16) uint64_t mem[4], out[5 + BLOCKS][2];
        mem[0] = 1, mem[1] = 2, mem[2] = 1000, mem[3] = 1ull << 63;
        memset(out, 0, sizeof(out));
        struct { void *m, *out; } prm = {mem, out};
        assert_int_equal(run_k("cas", BLOCKS, THREADS, 2, &prm, NULL), FAB__PTX_OK);
        assert_true(out[0][0] == 1 && out[0][1] == 2); /* matched: the old value */
        assert_true(out[1][0] == 3 && out[1][1] == 4); /* missed: what is there */
        assert_true(out[2][0] == 3 && out[2][1] == 4); /* and nothing stored */
        assert_true(out[3][0] == 3 && out[3][1] == 4); /* exch: the old value */
        assert_true(out[4][0] == 9 && out[4][1] == 9);
        assert_true(mem[2] == 1000 + BLOCKS * THREADS);
        assert_true(mem[3] == (1ull << 63) + 3 * BLOCKS * THREADS);
        for (int b = 0; b < BLOCKS; b++)
            assert_true(out[5 + b][0] == 5 * THREADS && out[5 + b][1] == THREADS);
    }
}

/* A .b128 access off a 16-byte boundary is MISALIGNED, and one to a page
 * with no access a FAULT, each reporting an access of 16 bytes (what
 * FABMEM_CHECK's report names) and whether it writes. */
static void b128_access_off_its_boundary_faults_naming_16_bytes(void **state)
{
    (void)state;
    load(HEAD ".shared .align 16 .b8 sh[64];\n"
              ".visible .entry bad(.param .u64 p, .param .u32 which)\n{\n"
              ".reg .u64 %p, %x0;\n.reg .b32 %w;\n.reg .b128 %v;\n.reg .pred %q<4>;\n"
              "ld.param.u64 %p, [p];\nld.param.u32 %w, [which];\n"
              "mov.b64 %x0, 0;\nmov.b128 %v, {%x0, %x0};\n"
              "setp.eq.u32 %q0, %w, 0;\n@%q0 bra LD;\n"
              "setp.eq.u32 %q1, %w, 1;\n@%q1 bra ST;\n"
              "setp.eq.u32 %q2, %w, 2;\n@%q2 bra AT;\n"
              "st.shared.b128 [sh+24], %v;\nret;\n"
              "LD:\nld.global.b128 %v, [%p];\nret;\n"
              "ST:\nst.relaxed.sys.global.b128 [%p], %v;\nret;\n"
              "AT:\natom.global.cas.b128 %v, [%p], %v, %v;\nret;\n"
              "}\n");
    static _Alignas(16) unsigned char buf[64];
    long pg = sysconf(_SC_PAGESIZE);
    unsigned char *none = mmap(NULL, (size_t)pg, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    assert_true(none != MAP_FAILED);
    static const uint32_t line[] = {24, 27, 30};
    for (uint32_t which = 0; which < 3; which++) {
        struct { void *p; uint32_t which; } prm = {buf + 8, which};
        fab__ptx_fault_t f;
        assert_int_equal(run_k("bad", 1, 32, 1, &prm, &f), FAB__PTX_E_MISALIGNED);
        assert_int_equal(f.address, (uintptr_t)buf + 8);
        assert_int_equal(f.size, 16);
        assert_int_equal(f.write, which != 0);
        assert_int_equal(f.line, line[which]);
        /* Under valgrind memcheck reports the access to the PROT_NONE page
         * the engine makes on purpose (FABTEST_UNDER_VALGRIND, set by
         * tests/ptx/CMakeLists.txt): the misaligned half still runs. */
        const char *vg = getenv("FABTEST_UNDER_VALGRIND");
        if (vg && *vg == '1')
            continue;
        prm.p = none + 32;
        assert_int_equal(run_k("bad", 1, 32, 1, &prm, &f), FAB__PTX_E_FAULT);
        assert_int_equal(f.address, (uintptr_t)none + 32);
        assert_int_equal(f.size, 16);
        assert_int_equal(f.write, which != 0);
    }
    struct { void *p; uint32_t which; } prm = {buf, 3};
    fab__ptx_fault_t f;
    assert_int_equal(run_k("bad", 1, 32, 1, &prm, &f), FAB__PTX_E_MISALIGNED);
    assert_int_equal(f.size, 16);
    assert_int_equal(f.line, 21);
    munmap(none, (size_t)pg);
}

/* One block stores {i, ~i} for i = 1, 2, ... into one 16-byte word, every
 * lane in turn, from when the other block says it reads until it says it is
 * done; that block's lanes load the word n times each and count the values
 * whose halves do not belong together. Two workers, so both run at once. */
static void b128_reader_never_sees_a_torn_16_byte_value(void **state)
{
    (void)state;
    load(HEAD ".visible .entry tear(.param .u64 m, .param .u64 out, .param .u32 n)\n{\n"
              ".reg .u64 %m, %o, %i, %j, %lo, %hi, %torn, %seen, %last, %f;\n.reg .b32 %c, %t, %n, %k;\n"
              ".reg .b128 %v;\n.reg .pred %q, %r;\n"
              "ld.param.u64 %m, [m];\nld.param.u64 %o, [out];\nld.param.u32 %n, [n];\n"
              "mov.u32 %c, %ctaid.x;\nmov.u32 %t, %tid.x;\nmov.u32 %k, 0;\n"
              "setp.ne.u32 %q, %c, 0;\n@%q bra READ;\n"
              "GO:\nld.acquire.sys.global.u64 %f, [%m+16];\nsetp.eq.u64 %r, %f, 0;\n@%r bra GO;\n"
              "cvt.u64.u32 %i, %t;\n"
              "WRITE:\nadd.u64 %i, %i, 32;\nnot.b64 %j, %i;\nmov.b128 %v, {%i, %j};\n"
              "st.relaxed.sys.global.b128 [%m], %v;\n"
              "ld.acquire.sys.global.u64 %f, [%m+24];\nsetp.eq.u64 %r, %f, 0;\n@%r bra WRITE;\nret;\n"
              "READ:\nmov.u64 %torn, 0;\nmov.u64 %seen, 0;\nmov.u64 %last, 0;\n"
              "st.release.sys.global.u64 [%m+16], 1;\n"
              "RLOOP:\nld.relaxed.sys.global.b128 %v, [%m];\nmov.b128 {%lo, %hi}, %v;\n"
              "not.b64 %hi, %hi;\nsetp.ne.u64 %r, %lo, %hi;\n@%r add.u64 %torn, %torn, 1;\n"
              "setp.ne.u64 %r, %lo, %last;\n@%r add.u64 %seen, %seen, 1;\nmov.u64 %last, %lo;\n"
              "add.u32 %k, %k, 1;\nsetp.lt.u32 %r, %k, %n;\n@%r bra RLOOP;\n"
              "st.release.sys.global.u64 [%m+24], 1;\n"
              "red.global.add.u64 [%o], %torn;\nred.global.add.u64 [%o+8], %seen;\n"
              "ret;\n}\n");
    for (int how = FAB__PTX_WIDE_SSE; how <= FAB__PTX_WIDE_LOCK; how++) {
        if (!use_way(how))
            continue;
        static _Alignas(16) uint64_t mem[4];
        uint64_t out[2] = {0, 0};
        mem[0] = 0, mem[1] = ~0ull, mem[2] = mem[3] = 0;
        struct { void *m, *out; uint32_t n; } prm = {mem, out, 20000};
        assert_int_equal(run_k("tear", 2, 32, 2, &prm, NULL), FAB__PTX_OK);
        print_message("way %d: %llu loads saw a new value, %llu torn\n", how, (unsigned long long)out[1],
                      (unsigned long long)out[0]);
        assert_int_equal(out[0], 0);
    }
}

/* NCCL's symmetric-memory kernels, in small: two .b64 packed into a .b128
 * in an inline-asm scope and stored with st.relaxed.sys.global.b128, loaded
 * back with ld.relaxed.sys.global.b128 and unpacked. */
static void nccl_b128_pattern_loads_and_runs(void **state)
{
    (void)state;
    load(HEAD ".visible .entry AllGather_RailRing_LsaSTMC(.param .u64 dst, .param .u64 src)\n{\n"
              ".reg .b64 %rd<12>;\n.reg .b32 %r<2>;\n"
              "ld.param.u64 %rd1, [dst];\nld.param.u64 %rd2, [src];\n"
              "mov.u32 %r1, %tid.x;\nmul.wide.u32 %rd3, %r1, 16;\n"
              "add.s64 %rd4, %rd2, %rd3;\nadd.s64 %rd5, %rd1, %rd3;\n"
              "ld.global.v2.u64 {%rd6, %rd7}, [%rd4];\n"
              "{\n.reg .b128 %v;\nmov.b128 %v, {%rd6, %rd7};\nst.relaxed.sys.global.b128 [%rd5], %v;\n}\n"
              "{\n.reg .b128 %v;\nld.relaxed.sys.global.b128 %v, [%rd4];\nmov.b128 {%rd8, %rd9}, %v;\n}\n"
              "st.global.v2.u64 [%rd5+512], {%rd9, %rd8};\n"
              "ret;\n}\n");
    static _Alignas(16) uint64_t src[32][2], dst[64][2];
    for (uint64_t t = 0; t < 32; t++)
        src[t][0] = t + 1, src[t][1] = (t + 1) << 40;
    struct { void *dst, *src; } prm = {dst, src};
    assert_int_equal(run_k("AllGather_RailRing_LsaSTMC", 1, 32, 1, &prm, NULL), FAB__PTX_OK);
    for (unsigned t = 0; t < 32; t++) {
        assert_memory_equal(dst[t], src[t], 16);
        assert_true(dst[32 + t][0] == src[t][1] && dst[32 + t][1] == src[t][0]);
    }
}

/* Where PTX has no .b128 form, or a .b128 register is read as another
 * width, the load is refused with the instruction, the reason and its line. */
static void b128_forms_ptx_lacks_are_refused_naming_them(void **state)
{
    (void)state;
    static const struct { const char *insn, *why; } cases[] = {
        {"add.b128 %v, %v, %v;", "the type .b128 is not supported here"},
        {"atom.global.add.b128 %v, [%a], %v;", "the type .b128 is not supported here"},
        {"red.global.cas.b128 [%a], %v, %v;", "the modifier .cas is not supported here"},
        {"shfl.sync.idx.b128 %v, %v, 0, 31, -1;", "shfl needs a mode and .b32"},
        {"ld.global.v2.b128 {%v, %v}, [%a];", "a vector of .b128"},
        {"mov.b64 %a, %v;", "%v, a .b128 register, used as .b64"},
        {"mov.b128 %v, %a;", "%a used as .b128 (it is .b64)"},
        {"mov.b128 %v, 5;", "a .b128 operand that is not a .b128 register"},
        {"st.global.b128 [%v], %v;", "an address register that is not one"},
        {"mov.b128 %v, {%a, %a, %a};", "a .b128 of 3 elements"},
        {"multimem.st.global.b128 [%a], %v;", "the type .b128 is not supported here"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char text[512];
        snprintf(text, sizeof(text), HEAD ".visible .entry k()\n{\n.reg .b64 %%a;\n.reg .b128 %%v;\n%s\nret;\n}\n",
                 cases[i].insn);
        fab__ptx_diag_t d = {0};
        fab__ptx_status_t st = ptx_try_load(text, &prog, &d);
        print_message("%s -> line %u: %s\n", cases[i].insn, d.line, d.msg);
        assert_int_equal(st, FAB__PTX_E_UNSUPPORTED);
        assert_int_equal(d.line, 8);
        assert_non_null(strstr(d.msg, cases[i].why));
    }
}

/* atomicCAS on an unsigned __int128 (sm_90), as nvcc compiles it (it emits
 * .reg .b128, mov.b128 and atom.global.cas.b128): every thread of two
 * blocks adds to one 128-bit counter through it. SKIPPED without nvcc. */
static void nvcc_atomic_cas_on_an_unsigned_int128_runs(void **state)
{
    (void)state;
    const char *nvcc = getenv("FABMEM_NVCC");
    if (!nvcc || !*nvcc)
        nvcc = "/usr/local/cuda/bin/nvcc";
    if (access(nvcc, X_OK) != 0) {
        char why[1100];
        snprintf(why, sizeof(why), "no nvcc at %s (set FABMEM_NVCC to another)", nvcc);
        fab_test_skip(why);
    }
    char *dir = fab_test_tempdir();
    assert_non_null(dir);
    char src[1024], out[1024];
    snprintf(src, sizeof(src), "%s/cas128.cu", dir);
    snprintf(out, sizeof(out), "%s/cas128.ptx", dir);
    fab_test_write_file(src,
                        "extern \"C\" __global__ void cas128(unsigned __int128 *p, unsigned __int128 *old)\n{\n"
                        "    unsigned __int128 seen = *p, want;\n"
                        "    do {\n"
                        "        want = seen;\n"
                        "        seen = atomicCAS(p, want, want + (((unsigned __int128)3 << 64) | 1));\n"
                        "    } while (seen != want);\n"
                        "    old[blockIdx.x * blockDim.x + threadIdx.x] = seen;\n}\n");
    const char *argv[] = {nvcc, "-ptx", "-arch=sm_90", src, "-o", out, NULL};
    pid_t pid;
    assert_int_equal(posix_spawn(&pid, nvcc, NULL, NULL, (char *const *)argv, environ), 0);
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        fail_msg("nvcc -arch=sm_90 %s failed", src);
    FILE *f = fopen(out, "rb");
    assert_non_null(f);
    static char text[1 << 16];
    size_t n = fread(text, 1, sizeof(text) - 1, f);
    fclose(f);
    text[n] = 0;
    fab_test_rmtree(dir);
    free(dir);
    assert_non_null(strstr(text, "cas.b128"));
    load(text);
    enum { BLOCKS = 2, THREADS = 64 };
    static _Alignas(16) uint64_t counter[2], old[BLOCKS * THREADS][2];
    counter[0] = ~0ull - 10, counter[1] = 7; /* the low half carries into the high one */
    struct { void *p, *old; } prm = {counter, old};
    assert_int_equal(run_k("cas128", BLOCKS, THREADS, 2, &prm, NULL), FAB__PTX_OK);
    u128 start = (u128)7 << 64 | (~0ull - 10), step = (u128)3 << 64 | 1;
    u128 end = start + step * (BLOCKS * THREADS), got = (u128)counter[1] << 64 | counter[0];
    assert_true(got == end);
    /* each thread saw a different old value, every one a step from the start */
    static bool hit[BLOCKS * THREADS];
    memset(hit, 0, sizeof(hit));
    for (unsigned t = 0; t < BLOCKS * THREADS; t++) {
        u128 o = (u128)old[t][1] << 64 | old[t][0], k = (o - start) / step;
        assert_true((o - start) % step == 0 && k < BLOCKS * THREADS && !hit[k]);
        hit[k] = true;
    }
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test_teardown(b128_pack_and_unpack_round_trip_in_every_lane, teardown),
    cmocka_unit_test_teardown(b128_loads_and_stores_move_16_bytes_in_every_state_space, teardown),
    cmocka_unit_test_teardown(b128_values_pass_to_and_from_a_function, teardown),
    cmocka_unit_test_teardown(b128_value_live_across_a_divergent_branch_keeps_both_halves, teardown),
    cmocka_unit_test_teardown(b128_compare_and_swap_stores_only_what_matches, teardown),
    cmocka_unit_test_teardown(b128_access_off_its_boundary_faults_naming_16_bytes, teardown),
    cmocka_unit_test_teardown(b128_reader_never_sees_a_torn_16_byte_value, teardown),
    cmocka_unit_test_teardown(nccl_b128_pattern_loads_and_runs, teardown),
    cmocka_unit_test_teardown(b128_forms_ptx_lacks_are_refused_naming_them, teardown),
    cmocka_unit_test_teardown(nvcc_atomic_cas_on_an_unsigned_int128_runs, teardown),
};

FAB_TEST_MAIN_NO_HELPERS("ptx", tests)
