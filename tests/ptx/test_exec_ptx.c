/* The interpreter on PTX written by hand, through the front end: rounding
 * modes and special values, conversions, bit operations, vectors, generic
 * addressing, barriers and collectives at their edges, multimem through the
 * host's callbacks, and what the loader refuses (with its line). Skipped,
 * saying so, while the front end is not there. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fabtest.h"
#include "src/ptx/ptx.h"

#define HEAD ".version 9.0\n.target sm_90\n.address_size 64\n"


/* Under valgrind (FABTEST_UNDER_VALGRIND, set by tests/ptx/CMakeLists.txt):
 * memcheck reports the bad access a fault test makes on purpose, and does
 * not honour fesetround. */
static int under_valgrind(void)
{
    const char *v = getenv("FABTEST_UNDER_VALGRIND");
    return v && *v == '1';
}

static fab__ptx_program_t *prog;

static fab__ptx_status_t try_load(const char *text, fab__ptx_diag_t *d)
{
    fab__ptx_module_t *m = NULL;
    fab__ptx_status_t st = fab__ptx_parse(text, strlen(text), &m, d);
    if (st == FAB__PTX_OK && !m) {
        fab_test_skip("the PTX front end is not there yet");
    }
    if (st) {
        print_message("parse: line %u: %s\n", d->line, d->msg);
        return st;
    }
    st = fab__ptx_program_load(m, &prog, d);
    if (st)
        fab__ptx_module_free(m);
    return st;
}

static void load(const char *text)
{
    fab__ptx_diag_t d;
    fab__ptx_status_t st = try_load(text, &d);
    if (st)
        print_error("load: line %u: %s\n", d.line, d.msg);
    assert_int_equal(st, FAB__PTX_OK);
}

static int teardown(void **state)
{
    (void)state;
    fab__ptx_program_free(prog);
    prog = NULL;
    return 0;
}

static fab__ptx_status_t run_k(const char *name, uint32_t grid, uint32_t block, const void *params,
                               const fab__ptx_host_t *host, fab__ptx_fault_t *f)
{
    fab__ptx_launch_t la = {.kernel = fab__ptx_program_kernel(prog, name), .grid = {grid, 1, 1},
                            .block = {block, 1, 1}, .params = params, .host = host};
    assert_non_null(la.kernel);
    fab__ptx_status_t st = fab__ptx_run(&la, f);
    if (st)
        print_message("%s: %s\n", name, f->report);
    return st;
}

static void run1(const char *name, uint32_t block, void *out)
{
    fab__ptx_fault_t f;
    assert_int_equal(run_k(name, 1, block, &out, NULL, &f), FAB__PTX_OK);
}

static uint32_t fbits(float x)
{
    uint32_t u;
    memcpy(&u, &x, 4);
    return u;
}

static void float_rounding_modes_and_special_values(void **state)
{
    (void)state;
    if (under_valgrind())
        fab_test_skip("valgrind does not honour fesetround");
    load(HEAD ".visible .entry k(.param .u64 out)\n{\n"
              ".reg .u64 %o; .reg .f32 %f<8>; .reg .b32 %r<4>; .reg .f64 %d<4>;\n"
              "ld.param.u64 %o, [out];\n"
              "mov.f32 %f1, 0f3F800000;\n"          /* 1 */
              "mov.f32 %f2, 0f33800000;\n"          /* 2^-24: 1 + it is a tie at f32 precision? no: below half an ulp */
              "add.rp.f32 %f3, %f1, %f2;\n"         /* up: 1 + 2^-23 */
              "st.global.f32 [%o], %f3;\n"
              "add.rm.f32 %f3, %f1, %f2;\n"         /* down: 1 */
              "st.global.f32 [%o+4], %f3;\n"
              "mov.f32 %f4, 0f7F800000;\n"          /* inf */
              "sub.f32 %f5, %f4, %f4;\n"            /* inf - inf: the canonical NaN */
              "st.global.f32 [%o+8], %f5;\n"
              "min.f32 %f6, %f5, %f1;\n"            /* NaN and 1: 1 */
              "st.global.f32 [%o+12], %f6;\n"
              "min.NaN.f32 %f6, %f5, %f1;\n"        /* .NaN: NaN */
              "st.global.f32 [%o+16], %f6;\n"
              "mov.f32 %f7, 0f00000001;\n"          /* the least subnormal */
              "add.ftz.f32 %f6, %f7, %f7;\n"        /* flushed: 0 */
              "st.global.f32 [%o+20], %f6;\n"
              "add.f32 %f6, %f7, %f7;\n"            /* kept: 2 ulp */
              "st.global.f32 [%o+24], %f6;\n"
              "mov.f32 %f6, 0f40000000;\n"
              "add.sat.f32 %f6, %f6, %f1;\n"        /* 3, saturated: 1 */
              "st.global.f32 [%o+28], %f6;\n"
              "cvt.rzi.s32.f32 %r1, 0fC0600000;\n"  /* -3.5 toward zero: -3 */
              "st.global.s32 [%o+32], %r1;\n"
              "cvt.rni.s32.f32 %r1, 0f40200000;\n"  /* 2.5 to nearest even: 2 */
              "st.global.s32 [%o+36], %r1;\n"
              "cvt.rmi.s32.f32 %r1, 0fC0200000;\n"  /* -2.5 down: -3 */
              "st.global.s32 [%o+40], %r1;\n"
              "cvt.rzi.s32.f32 %r1, %f4;\n"         /* inf saturates */
              "st.global.s32 [%o+44], %r1;\n"
              "cvt.rzi.u32.f32 %r1, %f5;\n"         /* NaN: 0 */
              "st.global.u32 [%o+48], %r1;\n"
              "div.rn.f64 %d1, 0d3FF0000000000000, 0d4008000000000000;\n"
              "st.global.f64 [%o+56], %d1;\n"
              "cvt.rz.f32.f64 %f6, %d1;\n"
              "st.global.f32 [%o+64], %f6;\n"
              "cvt.rp.f32.f64 %f6, %d1;\n"
              "st.global.f32 [%o+68], %f6;\n"
              "ret;\n}\n");
    unsigned char out[72] = {0};
    run1("k", 1, out);
    float f[18];
    int32_t *i = (int32_t *)(void *)out;
    memcpy(f, out, sizeof(f));
    assert_int_equal(fbits(f[0]), 0x3f800001u);
    assert_int_equal(fbits(f[1]), 0x3f800000u);
    assert_int_equal(fbits(f[2]), 0x7fffffffu);
    assert_true(f[3] == 1.0f);
    assert_int_equal(fbits(f[4]), 0x7fffffffu);
    assert_int_equal(fbits(f[5]), 0);
    assert_int_equal(fbits(f[6]), 2);
    assert_true(f[7] == 1.0f);
    assert_int_equal(i[8], -3);
    assert_int_equal(i[9], 2);
    assert_int_equal(i[10], -3);
    assert_int_equal(i[11], INT32_MAX);
    assert_int_equal(i[12], 0);
    double d;
    memcpy(&d, out + 56, 8);
    assert_true(d == 1.0 / 3.0);
    float rz, rp;
    memcpy(&rz, out + 64, 4);
    memcpy(&rp, out + 68, 4);
    assert_true(rz < rp && (double)rz < d && (double)rp > d);
    assert_int_equal(fbits(rp) - fbits(rz), 1);
}

static void comparisons_ordered_and_unordered(void **state)
{
    (void)state;
    load(HEAD ".visible .entry k(.param .u64 out)\n{\n"
              ".reg .u64 %o; .reg .f32 %n, %one; .reg .pred %p<9>; .reg .u32 %r<9>;\n"
              "ld.param.u64 %o, [out];\n"
              "mov.f32 %one, 0f3F800000;\n"
              "mov.b32 %n, 0x7fc00000;\n"
              "setp.lt.f32 %p1, %n, %one;\n"
              "setp.ltu.f32 %p2, %n, %one;\n"
              "setp.nan.f32 %p3, %n, %one;\n"
              "setp.num.f32 %p4, %one, %one;\n"
              "setp.ne.f32 %p5, %n, %n;\n"
              "setp.neu.f32 %p6, %n, %n;\n"
              "setp.lt.s32 %p7, -1, 1;\n"
              "setp.lo.u32 %p8, -1, 1;\n"
              "selp.u32 %r1, 1, 0, %p1; st.global.u32 [%o], %r1;\n"
              "selp.u32 %r2, 1, 0, %p2; st.global.u32 [%o+4], %r2;\n"
              "selp.u32 %r3, 1, 0, %p3; st.global.u32 [%o+8], %r3;\n"
              "selp.u32 %r4, 1, 0, %p4; st.global.u32 [%o+12], %r4;\n"
              "selp.u32 %r5, 1, 0, %p5; st.global.u32 [%o+16], %r5;\n"
              "selp.u32 %r6, 1, 0, %p6; st.global.u32 [%o+20], %r6;\n"
              "selp.u32 %r7, 1, 0, %p7; st.global.u32 [%o+24], %r7;\n"
              "selp.u32 %r8, 1, 0, %p8; st.global.u32 [%o+28], %r8;\n"
              "testp.notanumber.f32 %p1, %n; selp.u32 %r1, 1, 0, %p1; st.global.u32 [%o+32], %r1;\n"
              "testp.finite.f32 %p1, %one; selp.u32 %r1, 1, 0, %p1; st.global.u32 [%o+36], %r1;\n"
              "setp.gt.and.s32 %p1|%p2, 5, 3, %p7;\n"
              "selp.u32 %r1, 1, 0, %p1; st.global.u32 [%o+40], %r1;\n"
              "selp.u32 %r1, 1, 0, %p2; st.global.u32 [%o+44], %r1;\n"
              "set.lt.u32.s32 %r1, -4, 2; st.global.u32 [%o+48], %r1;\n"
              "slct.s32.s32 %r1, 10, 20, -1; st.global.u32 [%o+52], %r1;\n"
              "copysign.f32 %n, 0fBF800000, 0f40000000; st.global.f32 [%o+56], %n;\n"
              "ret;\n}\n");
    uint32_t out[15] = {0};
    run1("k", 1, out);
    uint32_t want[14] = {0, 1, 1, 1, 0, 1, 1, 0, 1, 1, 1, 0, 0xffffffffu, 20};
    for (int i = 0; i < 14; i++)
        assert_int_equal(out[i], want[i]);
    float c;
    memcpy(&c, &out[14], 4);
    assert_true(c == -2.0f);
}

static void half_precision_and_packed_forms(void **state)
{
    (void)state;
    load(HEAD ".visible .entry k(.param .u64 out)\n{\n"
              ".reg .u64 %o; .reg .b16 %h<4>; .reg .b32 %r<4>; .reg .f32 %f<3>;\n"
              "ld.param.u64 %o, [out];\n"
              "cvt.rn.f16.f32 %h1, 0f3FC00000;\n"     /* 1.5 */
              "cvt.rn.f16.f32 %h2, 0f40100000;\n"     /* 2.25 */
              "add.f16 %h3, %h1, %h2;\n"               /* 3.75 */
              "st.global.b16 [%o], %h3;\n"
              "mov.b32 %r1, {%h1, %h2};\n"
              "mul.f16x2 %r2, %r1, %r1;\n"             /* {2.25, 5.0625} */
              "st.global.b32 [%o+4], %r2;\n"
              "cvt.f32.f16 %f1, %h3;\n"
              "st.global.f32 [%o+8], %f1;\n"
              "cvt.rn.bf16.f32 %h1, 0f40490FDB;\n"    /* pi in bf16: 0x4049 */
              "st.global.b16 [%o+12], %h1;\n"
              "cvt.rn.f16.f32 %h1, 0f47800000;\n"     /* 65536 overflows f16: inf */
              "st.global.b16 [%o+14], %h1;\n"
              "cvt.rz.f16.f32 %h1, 0f47800000;\n"     /* toward zero: the largest finite */
              "st.global.b16 [%o+16], %h1;\n"
              "mov.b32 {%h1, %h2}, %r2;\n"
              "st.global.b16 [%o+18], %h2;\n"
              "cvt.rn.f16x2.f32 %r3, 0f3FC00000, 0f40100000;\n"   /* {1.5 high, 2.25 low} */
              "st.global.b32 [%o+20], %r3;\n"
              "cvt.rn.bf16x2.f32 %r3, 0f40490FDB, 0fC0000000;\n"
              "st.global.b32 [%o+24], %r3;\n"
              "ret;\n}\n");
    uint16_t out[14] = {0};
    run1("k", 1, out);
    assert_int_equal(out[10], 0x4080);
    assert_int_equal(out[11], 0x3e00);
    assert_int_equal(out[12], 0xc000);
    assert_int_equal(out[13], 0x4049);
    assert_int_equal(out[0], 0x4380);                 /* 3.75 */
    assert_int_equal(out[2], 0x4080);                 /* 2.25 */
    assert_int_equal(out[3], 0x4510);                 /* 5.0625 */
    float f;
    memcpy(&f, &out[4], 4);
    assert_true(f == 3.75f);
    assert_int_equal(out[6], 0x4049);
    assert_int_equal(out[7], 0x7c00);
    assert_int_equal(out[8], 0x7bff);
    assert_int_equal(out[9], 0x4510);
}

/* NCCL's fp8 reductions convert pairs through f16x2: byte i is half i, to fp8 with
 * round-to-nearest-even and .satfinite (beyond the largest finite is the largest). */
static void fp8_pairs_convert_to_and_from_f16x2(void **state)
{
    (void)state;
    load(HEAD ".visible .entry k(.param .u64 out)\n{\n"
              ".reg .u64 %o; .reg .b16 %h<2>; .reg .b32 %r<2>;\n"
              "ld.param.u64 %o, [out];\n"
              "mov.b16 %h1, 0x7e38;\n"                       /* e4m3 {448 high, 1.0 low} */
              "cvt.rn.f16x2.e4m3x2 %r1, %h1;\n"
              "st.global.b32 [%o], %r1;\n"
              "mov.b16 %h1, 0xff01;\n"                       /* {NaN, 2^-9 (subnormal)} */
              "cvt.rn.f16x2.e4m3x2 %r1, %h1;\n"
              "st.global.b32 [%o+4], %r1;\n"
              "mov.b16 %h1, 0x7cbc;\n"                       /* e5m2 {inf, -1.0} */
              "cvt.rn.f16x2.e5m2x2 %r1, %h1;\n"
              "st.global.b32 [%o+8], %r1;\n"
              "mov.b32 %r1, 0x63d03c40;\n"                   /* f16 {1000, 1.0625: a tie} */
              "cvt.rn.satfinite.e4m3x2.f16x2 %h1, %r1;\n"
              "st.global.b16 [%o+12], %h1;\n"
              "mov.b32 %r1, 0x7c003cc0;\n"                   /* {inf, 1.1875: a tie} */
              "cvt.rn.satfinite.e4m3x2.f16x2 %h1, %r1;\n"
              "st.global.b16 [%o+14], %h1;\n"
              "mov.b32 %r1, 0xfc007e00;\n"                   /* {-inf, NaN} */
              "cvt.rn.satfinite.e5m2x2.f16x2 %h1, %r1;\n"
              "st.global.b16 [%o+16], %h1;\n"
              "cvt.rn.satfinite.e4m3x2.f32 %h1, 0f40000000, 0fBF000000;\n" /* 2.0 high, -0.5 low */
              "st.global.b16 [%o+18], %h1;\n"
              "cvt.rn.satfinite.relu.e4m3x2.f32 %h1, 0f3B000000, 0fBF000000;\n" /* 2^-9, relu(-0.5) */
              "st.global.b16 [%o+20], %h1;\n"
              "ret;\n}\n");
    uint16_t out[11] = {0};
    run1("k", 1, out);
    assert_int_equal(out[0], 0x3c00);            /* 1.0 */
    assert_int_equal(out[1], 0x5f00);            /* 448 */
    assert_int_equal(out[2], 0x1800);            /* 2^-9 */
    assert_true((out[3] & 0x7c00) == 0x7c00 && (out[3] & 0x3ff));   /* NaN */
    assert_int_equal(out[4], 0xbc00);            /* -1.0 */
    assert_int_equal(out[5], 0x7c00);            /* inf */
    assert_int_equal(out[6], 0x7e38);            /* 448 (saturated), 1.0 (even) */
    assert_int_equal(out[7], 0x7e3a);            /* 448 (saturated), 1.25 (even) */
    assert_int_equal(out[8], 0xfb7f);            /* -57344 (saturated), NaN */
    assert_int_equal(out[9], 0x40b0);            /* 2.0, -0.5 */
    assert_int_equal(out[10], 0x0100);           /* 2^-9 (subnormal), 0 */
}

/* ptxas takes one register in braces as a scalar operand of ld and st (NCCL's network
 * unpack loads its head so: ld.relaxed.gpu.u64 {%0}, [%1]). */
static void a_register_in_braces_is_a_scalar_operand_of_ld_and_st(void **state)
{
    (void)state;
    load(HEAD ".visible .entry k(.param .u64 out)\n{\n"
              ".reg .u64 %o, %v;\n"
              "ld.param.u64 %o, [out];\n"
              "ld.relaxed.gpu.u64 {%v}, [%o];\n"
              "add.u64 %v, %v, 1;\n"
              "st.relaxed.gpu.u64 [%o+8], {%v};\n"
              "ret;\n}\n");
    uint64_t out[2] = {41, 0};
    run1("k", 1, out);
    assert_int_equal(out[1], 42);
}

static void integer_edges_and_bit_fields(void **state)
{
    (void)state;
    load(HEAD ".visible .entry k(.param .u64 out)\n{\n"
              ".reg .u64 %o, %w; .reg .b32 %r<6>;\n"
              "ld.param.u64 %o, [out];\n"
              "div.s32 %r1, 0x80000000, -1; st.global.u32 [%o], %r1;\n"       /* MIN / -1: MIN */
              "div.u32 %r1, 7, 0; st.global.u32 [%o+4], %r1;\n"               /* / 0: all ones */
              "add.sat.s32 %r1, 0x7fffffff, 5; st.global.u32 [%o+8], %r1;\n"
              "bfe.s32 %r1, 0x0000f000, 12, 4; st.global.u32 [%o+12], %r1;\n" /* 0xf sign-extended: -1 */
              "bfe.u32 %r1, 0x0000f000, 12, 4; st.global.u32 [%o+16], %r1;\n"
              "bfi.b32 %r1, 0x5, 0xffffffff, 4, 4; st.global.u32 [%o+20], %r1;\n"
              "prmt.b32.f4e %r1, 0x33221100, 0x77665544, 1; st.global.u32 [%o+24], %r1;\n"
              "prmt.b32 %r1, 0x000000f0, 0, 0x8880; st.global.u32 [%o+28], %r1;\n"
              "shl.b32 %r1, 1, 40; st.global.u32 [%o+32], %r1;\n"             /* shift past the width: 0 */
              "shr.s32 %r1, -16, 40; st.global.u32 [%o+36], %r1;\n"           /* sign fill: -1 */
              "bfind.u32 %r1, 0; st.global.u32 [%o+40], %r1;\n"               /* none: all ones */
              "bfind.shiftamt.u32 %r1, 0x100; st.global.u32 [%o+44], %r1;\n"
              "lop3.b32 %r1, 0xf0, 0xcc, 0xaa, 0x96; st.global.u32 [%o+48], %r1;\n" /* a ^ b ^ c */
              "mul.hi.u64 %w, -1, -1; st.global.u64 [%o+56], %w;\n"
              "mad.wide.s32 %w, -2, 3, 100; st.global.u64 [%o+64], %w;\n"
              "add.cc.u32 %r1, 0xffffffff, 2; addc.u32 %r2, 0, 0;\n"
              "st.global.u32 [%o+72], %r1; st.global.u32 [%o+76], %r2;\n"
              "ret;\n}\n");
    uint32_t out[20] = {0};
    run1("k", 1, out);
    assert_int_equal(out[0], 0x80000000u);
    assert_int_equal(out[1], 0xffffffffu);
    assert_int_equal(out[2], 0x7fffffffu);
    assert_int_equal(out[3], 0xffffffffu);
    assert_int_equal(out[4], 0xf);
    assert_int_equal(out[5], 0xffffff5fu);
    assert_int_equal(out[6], 0x44332211u);
    assert_int_equal(out[7], 0xfffffff0u);
    assert_int_equal(out[8], 0);
    assert_int_equal(out[9], 0xffffffffu);
    assert_int_equal(out[10], 0xffffffffu);
    assert_int_equal(out[11], 23);
    assert_int_equal(out[12], 0xf0 ^ 0xcc ^ 0xaa);
    uint64_t hi, wide;
    memcpy(&hi, &out[14], 8);
    memcpy(&wide, &out[16], 8);
    assert_true(hi == 0xfffffffffffffffeull);
    assert_true((int64_t)wide == 94);
    assert_int_equal(out[18], 1);
    assert_int_equal(out[19], 1);
}

static void vectors_and_generic_shared_addresses(void **state)
{
    (void)state;
    load(HEAD ".shared .align 16 .b8 sh[64];\n"
              ".visible .entry k(.param .u64 out)\n{\n"
              ".reg .u64 %o, %g, %s; .reg .b32 %r<5>; .reg .pred %p; .reg .b64 %x<3>;\n"
              "ld.param.u64 %o, [out];\n"
              "st.shared.v4.u32 [sh], {1, 2, 3, 4};\n"
              "mov.u64 %s, sh;\n"
              "cvta.shared.u64 %g, %s;\n"
              "ld.v4.u32 {%r1, %r2, %r3, %r4}, [%g];\n"           /* generic load of shared memory */
              "st.global.v4.u32 [%o], {%r4, %r3, %r2, %r1};\n"
              "isspacep.shared %p, %g; selp.u32 %r1, 1, 0, %p; st.global.u32 [%o+16], %r1;\n"
              "isspacep.global %p, %g; selp.u32 %r1, 1, 0, %p; st.global.u32 [%o+20], %r1;\n"
              "cvta.to.shared.u64 %s, %g; cvt.u32.u64 %r1, %s; st.global.u32 [%o+24], %r1;\n"
              "ld.shared.v2.b64 {%x1, %x2}, [sh];\n"
              "st.global.v2.b64 [%o+32], {%x2, %x1};\n"
              "ret;\n}\n");
    uint32_t out[12] = {0};
    run1("k", 1, out);
    assert_int_equal(out[0], 4);
    assert_int_equal(out[3], 1);
    assert_int_equal(out[4], 1);
    assert_int_equal(out[5], 0);
    assert_int_equal(out[6], 0);
    assert_int_equal(out[8], 3);
    assert_int_equal(out[9], 4);
    assert_int_equal(out[10], 1);
}

/* Vector loads of signed elements into wider registers sign-extend each
 * element; a vector access misaligned for its whole width faults. */
static void signed_vector_elements_sign_extend_and_vectors_align_to_their_width(void **state)
{
    (void)state;
    load(HEAD ".visible .entry k(.param .u64 out)\n{\n"
              ".reg .u64 %o; .reg .b64 %x<3>; .reg .b32 %r<5>;\n"
              "ld.param.u64 %o, [out];\n"
              "ld.global.v2.s32 {%x1, %x2}, [%o];\n"
              "st.global.v2.u64 [%o+16], {%x1, %x2};\n"
              "ld.global.v2.u32 {%x1, %x2}, [%o];\n"
              "st.global.v2.u64 [%o+32], {%x2, %x1};\n"
              "ld.global.v4.u32 {%r1, %r2, %r3, %r4}, [%o+16];\n"
              "st.global.v4.u32 [%o+48], {%r4, %r3, %r2, %r1};\n"
              "ret;\n}\n"
              ".visible .entry skew(.param .u64 out)\n{\n"
              ".reg .u64 %o; .reg .b32 %r<5>;\n"
              "ld.param.u64 %o, [out];\n"
              "ld.global.v4.u32 {%r1, %r2, %r3, %r4}, [%o+8];\n"
              "ret;\n}\n");
    _Alignas(16) int32_t buf[16] = {-1, 5};
    void *p = buf;
    assert_int_equal(run_k("k", 1, 1, &p, NULL, NULL), FAB__PTX_OK);
    int64_t se[2];
    uint64_t ze[2];
    memcpy(se, &buf[4], 16);
    memcpy(ze, &buf[8], 16);
    assert_true(se[0] == -1 && se[1] == 5);
    assert_true(ze[0] == 5 && ze[1] == 0xffffffffull);
    /* v4.u32 of {-1 lo, -1 hi, 5, 0} reversed */
    assert_int_equal(buf[12], 0);
    assert_int_equal(buf[13], 5);
    assert_int_equal(buf[14], -1);
    assert_int_equal(buf[15], -1);
    fab__ptx_fault_t f;
    assert_int_equal(run_k("skew", 1, 1, &p, NULL, &f), FAB__PTX_E_MISALIGNED);
    assert_int_equal(f.address, (uintptr_t)buf + 8);
}

/* In a full warp whose lanes all load (or store) at once, the one lane
 * with a bad address is the one the report names. */
static void one_bad_lane_of_a_full_warp_is_the_one_reported(void **state)
{
    (void)state;
    load(HEAD ".visible .entry k(.param .u64 out, .param .u32 bad, .param .u32 store)\n{\n"
              ".reg .u64 %o, %a; .reg .b32 %t, %b, %s, %v; .reg .pred %p, %q;\n"
              "ld.param.u64 %o, [out];\n"
              "ld.param.u32 %b, [bad];\n"
              "ld.param.u32 %s, [store];\n"
              "mov.u32 %t, %tid.x;\n"
              "mul.wide.u32 %a, %t, 8;\n"
              "add.u64 %a, %o, %a;\n"
              "setp.eq.u32 %p, %t, %b;\n"
              "@%p add.u64 %a, %a, 2;\n"
              "setp.ne.u32 %q, %s, 0;\n"
              "@%q bra STORE;\n"
              "ld.global.u32 %v, [%a];\n"
              "ret;\n"
              "STORE:\n"
              "st.global.u64 [%a], 1;\n"
              "ret;\n}\n");
    _Alignas(8) uint64_t buf[32] = {0};
    for (uint32_t store = 0; store < 2; store++) {
        struct { void *p; uint32_t bad, store; } prm = {buf, 17, store};
        fab__ptx_fault_t f;
        assert_int_equal(run_k("k", 1, 32, &prm, NULL, &f), FAB__PTX_E_MISALIGNED);
        assert_int_equal(f.thread[0], 17);
        assert_int_equal(f.address, (uintptr_t)&buf[17] + 2);
    }
    /* with no bad lane every lane's access is done */
    struct { void *p; uint32_t bad, store; } ok = {buf, 99, 1};
    assert_int_equal(run_k("k", 1, 32, &ok, NULL, NULL), FAB__PTX_OK);
    for (unsigned i = 0; i < 32; i++)
        assert_true(buf[i] == 1);
}

static void a_misaligned_access_is_reported(void **state)
{
    (void)state;
    load(HEAD ".visible .entry k(.param .u64 out)\n{\n.reg .u64 %o;\n"
              "ld.param.u64 %o, [out];\n"
              "st.global.u32 [%o+2], 1;\n"
              "ret;\n}\n");
    uint32_t buf[4];
    void *p = buf;
    fab__ptx_fault_t f;
    assert_int_equal(run_k("k", 1, 32, &p, NULL, &f), FAB__PTX_E_MISALIGNED);
    assert_int_equal(f.address, (uintptr_t)buf + 2);
    assert_int_equal(f.line, 8);
}

static void exit_in_some_lanes_lets_the_rest_reach_a_barrier(void **state)
{
    (void)state;
    load(HEAD ".visible .entry k(.param .u64 out)\n{\n"
              ".reg .u64 %o, %a; .reg .u32 %t, %c; .reg .pred %p;\n"
              "ld.param.u64 %o, [out];\n"
              "mov.u32 %t, %tid.x;\n"
              "setp.ge.u32 %p, %t, 40;\n"
              "@%p exit;\n"                               /* warps 1 (partly) and 2, 3 leave */
              "bar.sync 0;\n"
              "bar.red.popc.u32 %c, 0, %p;\n"
              "mul.wide.u32 %a, %t, 4; add.u64 %a, %o, %a;\n"
              "st.global.u32 [%a], %c;\n"
              "ret;\n}\n");
    uint32_t out[128];
    memset(out, 0xff, sizeof(out));
    run1("k", 128, out);
    for (int t = 0; t < 40; t++)
        assert_int_equal(out[t], 0);
    for (int t = 40; t < 128; t++)
        assert_int_equal(out[t], 0xffffffffu);
}

static void shfl_clamps_and_segments(void **state)
{
    (void)state;
    load(HEAD ".visible .entry k(.param .u64 out)\n{\n"
              ".reg .u64 %o, %a; .reg .b32 %t, %v, %w; .reg .pred %p;\n"
              "ld.param.u64 %o, [out];\n"
              "mov.u32 %t, %laneid;\n"
              "mul.lo.u32 %v, %t, 10;\n"
              "shfl.sync.down.b32 %w|%p, %v, 3, 0x1f, -1;\n"   /* lanes 29..31 keep their own */
              "selp.b32 %v, 1000, 0, %p; add.u32 %w, %w, %v;\n"
              "mul.wide.u32 %a, %t, 4; add.u64 %a, %o, %a;\n"
              "st.global.u32 [%a], %w;\n"
              "ret;\n}\n");
    uint32_t out[32];
    run1("k", 32, out);
    for (uint32_t t = 0; t < 32; t++)
        assert_int_equal(out[t], t + 3 <= 31 ? (t + 3) * 10 + 1000 : t * 10);
}

/* vote.sync with .sync after the mode, as CUB's PTX writes it
 * (vote.ballot.sync.b32), is vote.sync: it takes the member mask and
 * gives what the ISA's order (vote.sync.ballot.b32) gives. */
static void vote_sync_takes_sync_after_its_mode(void **state)
{
    (void)state;
    load(HEAD ".visible .entry k(.param .u64 out)\n{\n"
              ".reg .u64 %o, %a; .reg .b32 %t, %b1, %b2, %x, %y; .reg .pred %p, %q, %r;\n"
              "ld.param.u64 %o, [out];\n"
              "mov.u32 %t, %laneid;\n"
              "and.b32 %x, %t, 3; setp.eq.u32 %p, %x, 1;\n"
              "vote.ballot.sync.b32 %b1, %p, 0xffffffff;\n"
              "vote.sync.ballot.b32 %b2, %p, 0xffffffff;\n"
              "vote.any.sync.pred %q, %p, 0xffffffff; vote.all.sync.pred %r, %p, 0xffffffff;\n"
              "selp.b32 %x, 1, 0, %q; selp.b32 %y, 1, 0, %r;\n"
              "mul.wide.u32 %a, %t, 16; add.u64 %a, %o, %a;\n"
              "st.global.v4.u32 [%a], {%b1, %b2, %x, %y};\n"
              "ret;\n}\n");
    uint32_t out[32 * 4];
    run1("k", 32, out);
    for (uint32_t t = 0; t < 32; t++) {
        assert_int_equal(out[t * 4], 0x22222222u);
        assert_int_equal(out[t * 4 + 1], 0x22222222u);
        assert_int_equal(out[t * 4 + 2], 1);
        assert_int_equal(out[t * 4 + 3], 0);
    }
}

/* A kernel's .shared is the module's variables and its own, not every
 * kernel's: two kernels with 600000 bytes each of their own (1.2 MB
 * together, over the 1 MiB a block may have) both run, their own arrays
 * at one offset, after the module's variable, which each sees at its own. */
static void kernels_own_shared_variables_overlap_after_the_modules(void **state)
{
    (void)state;
    static const char body[] =
        "{\n.reg .u64 %%o, %%a, %%b, %%c; .reg .b32 %%r<3>;\n"
        ".shared .align 16 .b8 big%c[600000];\n"
        "ld.param.u64 %%o, [out];\n"
        "st.shared.u32 [common], %d; st.shared.u8 [big%c+599999], %d;\n"
        "ld.shared.u32 %%r1, [common]; ld.shared.u8 %%r2, [big%c+599999];\n"
        "mov.u64 %%a, big%c; mov.u64 %%c, common;\n"
        "st.global.u32 [%%o], %%r1; st.global.u32 [%%o+4], %%r2;\n"
        "st.global.u64 [%%o+8], %%a; st.global.u64 [%%o+16], %%c;\n"
        "ret;\n}\n";
    char ka[1024], kb[1024], text[4096];
    snprintf(ka, sizeof(ka), body, 'a', 5, 'a', 6, 'a', 'a');
    snprintf(kb, sizeof(kb), body, 'b', 7, 'b', 8, 'b', 'b');
    snprintf(text, sizeof(text),
             HEAD ".shared .align 4 .u32 common;\n"
                  ".visible .entry a(.param .u64 out)\n%s.visible .entry b(.param .u64 out)\n%s",
             ka, kb);
    load(text);
    uint64_t outa[3] = {0}, outb[3] = {0};
    run1("a", 32, outa);
    run1("b", 32, outb);
    assert_int_equal((uint32_t)outa[0], 5);
    assert_int_equal((uint32_t)(outa[0] >> 32), 6);
    assert_int_equal((uint32_t)outb[0], 7);
    assert_int_equal((uint32_t)(outb[0] >> 32), 8);
    assert_true(outa[1] == outb[1]); /* big_a and big_b: one offset */
    assert_true(outa[2] == outb[2] && outa[2] < outa[1]);
    fab__ptx_kernel_info_t ki;
    fab__ptx_kernel_info(fab__ptx_program_kernel(prog, "a"), &ki);
    assert_int_equal(ki.static_shared, 16 + 600000);
}

static void special_registers(void **state)
{
    (void)state;
    load(HEAD ".visible .entry k(.param .u64 out)\n{\n"
              ".reg .u64 %o, %a, %c1, %c2; .reg .u32 %t, %r<4>;\n"
              "ld.param.u64 %o, [out];\n"
              "mov.u32 %t, %tid.x;\n"
              "mul.wide.u32 %a, %t, 16; add.u64 %a, %o, %a;\n"
              "mov.u32 %r1, %warpid; mov.u32 %r2, %lanemask_lt; mov.u32 %r3, %nwarpid;\n"
              "mov.u64 %c1, %clock64; mov.u64 %c2, %globaltimer;\n"
              "st.global.v4.u32 [%a], {%r1, %r2, %r3, %t};\n"
              "ret;\n}\n");
    uint32_t out[64 * 4];
    run1("k", 64, out);
    for (uint32_t t = 0; t < 64; t++) {
        assert_int_equal(out[t * 4], t / 32);
        assert_int_equal(out[t * 4 + 1], (1u << (t % 32)) - 1);
        assert_int_equal(out[t * 4 + 2], 2);
        assert_int_equal(out[t * 4 + 3], t);
    }
}

/* multimem: one "multicast object" of two buffers, in the test */
typedef struct {
    uint32_t a[4], b[4];
    uint32_t handle[4];
} mc_t;

static bool mc_is(void *ctx, uintptr_t addr)
{
    mc_t *mc = ctx;
    return addr >= (uintptr_t)mc->handle && addr < (uintptr_t)(mc->handle + 4);
}

static int mc_ld_reduce(void *ctx, uintptr_t addr, unsigned type, unsigned op, void *out, size_t count)
{
    mc_t *mc = ctx;
    size_t i = (addr - (uintptr_t)mc->handle) / 4;
    if (type != FAB__PTX_T_U32 || op != FAB__PTX_W_ADD)
        return FAB__PTX_E_FAULT;
    for (size_t k = 0; k < count; k++)
        ((uint32_t *)out)[k] = mc->a[i + k] + mc->b[i + k];
    return 0;
}

static int mc_st(void *ctx, uintptr_t addr, unsigned type, const void *in, size_t count)
{
    mc_t *mc = ctx;
    (void)type;
    size_t i = (addr - (uintptr_t)mc->handle) / 4;
    for (size_t k = 0; k < count; k++)
        mc->a[i + k] = mc->b[i + k] = ((const uint32_t *)in)[k];
    return 0;
}

static void multimem_goes_through_the_host_callbacks(void **state)
{
    (void)state;
    load(HEAD ".visible .entry k(.param .u64 mc, .param .u64 out)\n{\n"
              ".reg .u64 %m, %o; .reg .b32 %r<3>;\n"
              "ld.param.u64 %m, [mc]; ld.param.u64 %o, [out];\n"
              "multimem.ld_reduce.relaxed.sys.global.add.u32 %r1, [%m];\n"
              "st.global.u32 [%o], %r1;\n"
              "multimem.st.relaxed.sys.global.u32 [%m+4], 9;\n"
              "ret;\n}\n");
    mc_t mc = {.a = {1, 2, 3, 4}, .b = {10, 20, 30, 40}};
    fab__ptx_host_t host = {.ctx = &mc, .mc_is = mc_is, .mc_ld_reduce = mc_ld_reduce, .mc_st = mc_st};
    uint32_t out = 0;
    struct { void *m, *o; } prm = {mc.handle, &out};
    fab__ptx_fault_t f;
    assert_int_equal(run_k("k", 1, 1, &prm, &host, &f), FAB__PTX_OK);
    assert_int_equal(out, 11);
    assert_int_equal(mc.a[1], 9);
    assert_int_equal(mc.b[1], 9);
    /* an address no multicast object maps is a fault */
    prm.m = &out;
    assert_int_equal(run_k("k", 1, 1, &prm, &host, &f), FAB__PTX_E_FAULT);
}

/* A multicast object of 64 words that counts the host's calls. */
typedef struct {
    uint32_t word[64];
    unsigned calls, last_count;
    unsigned red_op, red_type;
} mc_calls_t;

static bool mcc_is(void *ctx, uintptr_t addr)
{
    mc_calls_t *mc = ctx;
    return addr >= (uintptr_t)mc->word && addr < (uintptr_t)(mc->word + 64);
}

static int mcc_st(void *ctx, uintptr_t addr, unsigned type, const void *in, size_t count)
{
    mc_calls_t *mc = ctx;
    memcpy((void *)addr, in, count * (type == FAB__PTX_T_B8 ? 1 : 4));
    mc->calls++;
    mc->last_count = (unsigned)count;
    return 0;
}

static int mcc_red(void *ctx, uintptr_t addr, unsigned type, unsigned op, const void *in, size_t count)
{
    mc_calls_t *mc = ctx;
    for (size_t k = 0; k < count; k++)
        ((uint32_t *)addr)[k] += ((const uint32_t *)in)[k];
    mc->calls++;
    mc->last_count = (unsigned)count;
    mc->red_op = op;
    mc->red_type = type;
    return 0;
}

/* A warp's multimem.st or .red of consecutive elements is one host call
 * (one round trip to the daemon in libcuda); lanes apart are one each. */
static void a_warps_multimem_run_of_consecutive_elements_is_one_host_call(void **state)
{
    (void)state;
    load(HEAD ".visible .entry k(.param .u64 mc, .param .u32 stride)\n{\n"
              ".reg .u64 %m, %a; .reg .b32 %t, %s, %o;\n"
              "ld.param.u64 %m, [mc]; ld.param.u32 %s, [stride];\n"
              "mov.u32 %t, %tid.x; mul.lo.u32 %o, %t, %s;\n"
              "cvt.u64.u32 %a, %o; add.u64 %a, %m, %a;\n"
              "multimem.st.relaxed.sys.global.u32 [%a], %t;\n"
              "ret;\n}\n"
              ".visible .entry r(.param .u64 mc)\n{\n"
              ".reg .u64 %m, %a; .reg .b32 %t;\n"
              "ld.param.u64 %m, [mc];\n"
              "mov.u32 %t, %tid.x; mul.wide.u32 %a, %t, 4; add.u64 %a, %m, %a;\n"
              "multimem.red.release.sys.global.add.u32 [%a], %t;\n"
              "ret;\n}\n");
    mc_calls_t mc;
    memset(&mc, 0, sizeof(mc));
    fab__ptx_host_t host = {.ctx = &mc, .mc_is = mcc_is, .mc_st = mcc_st, .mc_red = mcc_red};
    struct { void *m; uint32_t stride; } prm = {mc.word, 4};
    fab__ptx_fault_t f;
    assert_int_equal(run_k("k", 1, 32, &prm, &host, &f), FAB__PTX_OK);
    assert_int_equal(mc.calls, 1);
    assert_int_equal(mc.last_count, 32);
    for (uint32_t i = 0; i < 32; i++)
        assert_int_equal(mc.word[i], i);
    memset(&mc, 0, sizeof(mc));
    prm.stride = 8;
    assert_int_equal(run_k("k", 1, 8, &prm, &host, &f), FAB__PTX_OK);
    assert_int_equal(mc.calls, 8);
    assert_int_equal(mc.last_count, 1);
    assert_int_equal(mc.word[14], 7);
    assert_int_equal(mc.word[15], 0);
    memset(&mc, 0, sizeof(mc));
    struct { void *m; } rprm = {mc.word};
    assert_int_equal(run_k("r", 1, 32, &rprm, &host, &f), FAB__PTX_OK);
    assert_int_equal(run_k("r", 1, 32, &rprm, &host, &f), FAB__PTX_OK);
    assert_int_equal(mc.calls, 2);
    assert_int_equal(mc.last_count, 32);
    assert_int_equal(mc.red_op, FAB__PTX_W_ADD);
    assert_int_equal(mc.red_type, FAB__PTX_T_U32);
    assert_int_equal(mc.word[31], 62);
}

/* A GPU multicasts any store to a multicast address: an ordered one
 * (.relaxed, .release, .volatile) is handed to the host as a store of its
 * bytes, one call a lane; a weak one is left to the host's next
 * synchronisation. */
static void an_ordered_store_to_a_multicast_address_goes_to_the_host_a_weak_one_does_not(void **state)
{
    (void)state;
    load(HEAD ".visible .entry k(.param .u64 mc, .param .u32 ordered)\n{\n"
              ".reg .u64 %m, %a; .reg .b32 %t, %o; .reg .pred %p;\n"
              "ld.param.u64 %m, [mc]; ld.param.u32 %o, [ordered];\n"
              "setp.ne.u32 %p, %o, 0;\n"
              "mov.u32 %t, %tid.x; mul.wide.u32 %a, %t, 8; add.u64 %a, %m, %a;\n"
              "@%p st.relaxed.sys.global.u32 [%a], %t;\n"
              "@%p st.volatile.global.v2.u16 [%a+4], {%t, %t};\n"
              "@!%p st.global.u32 [%a], %t;\n"
              "ret;\n}\n");
    mc_calls_t mc;
    memset(&mc, 0, sizeof(mc));
    fab__ptx_host_t host = {.ctx = &mc, .mc_is = mcc_is, .mc_st = mcc_st};
    struct { void *m; uint32_t ordered; } prm = {mc.word, 1};
    fab__ptx_fault_t f;
    assert_int_equal(run_k("k", 1, 4, &prm, &host, &f), FAB__PTX_OK);
    assert_int_equal(mc.calls, 8); /* two stores, four lanes */
    assert_int_equal(mc.word[6], 3);
    assert_int_equal(mc.word[7], 0x30003);
    memset(&mc, 0, sizeof(mc));
    prm.ordered = 0;
    assert_int_equal(run_k("k", 1, 4, &prm, &host, &f), FAB__PTX_OK);
    assert_int_equal(mc.calls, 0);
    assert_int_equal(mc.word[6], 3);
}

static void an_instruction_not_run_is_refused_at_load_with_its_line(void **state)
{
    (void)state;
    fab__ptx_diag_t d;
    assert_int_equal(try_load(HEAD ".visible .entry k()\n{\n.reg .b32 %r<3>;\n"
                                   "add.u32 %r1, %r1, %r2;\n"
                                   "vadd.u32.u32.u32 %r1, %r1, %r2, %r1;\n"
                                   "ret;\n}\n", &d),
                     FAB__PTX_E_UNSUPPORTED);
    assert_int_equal(d.line, 8);
    assert_non_null(strstr(d.msg, "vadd"));
}

static void a_modifier_not_taken_is_refused_at_load(void **state)
{
    (void)state;
    fab__ptx_diag_t d;
    assert_int_equal(try_load(HEAD ".visible .entry k()\n{\n.reg .f32 %f<3>;\n"
                                   "min.xorsign.abs.f32 %f1, %f1, %f2;\n"
                                   "ret;\n}\n", &d),
                     FAB__PTX_E_UNSUPPORTED);
    assert_int_equal(d.line, 7);
    assert_non_null(strstr(d.msg, ".xorsign"));
}

static void a_call_to_an_undefined_function_is_a_link_error(void **state)
{
    (void)state;
    fab__ptx_diag_t d;
    assert_int_equal(try_load(HEAD ".extern .func nowhere();\n"
                                   ".visible .entry k()\n{\n"
                                   "call nowhere, ();\n"
                                   "ret;\n}\n", &d),
                     FAB__PTX_E_LINK);
    assert_non_null(strstr(d.msg, "nowhere"));
}

static void mbarrier_arrive_and_wait_orders_shared_memory(void **state)
{
    (void)state;
    load(HEAD ".shared .align 8 .b64 bar;\n.shared .align 4 .b32 data[64];\n"
              ".visible .entry k(.param .u64 out)\n{\n"
              ".reg .u64 %o, %st, %a; .reg .u32 %t, %v, %q, %sa, %c; .reg .pred %p, %done;\n"
              "ld.param.u64 %o, [out];\n"
              "mov.u32 %t, %tid.x;\n"
              "setp.ne.u32 %p, %t, 0;\n"
              "@%p bra SKIP;\n"
              "mbarrier.init.shared.b64 [bar], 64;\n"
              "SKIP:\n"
              "bar.sync 0;\n"
              "mov.u32 %sa, data; shl.b32 %q, %t, 2; add.u32 %sa, %sa, %q;\n"
              "mul.lo.u32 %v, %t, 7; st.shared.u32 [%sa], %v;\n"
              "mbarrier.arrive.shared.b64 %st, [bar];\n"
              "WAIT:\n"
              "mbarrier.try_wait.shared.b64 %done, [bar], %st;\n"
              "@!%done bra WAIT;\n"
              "add.u32 %c, %t, 32; and.b32 %c, %c, 63; shl.b32 %c, %c, 2; mov.u32 %q, data; add.u32 %c, %c, %q;\n"
              "ld.shared.u32 %v, [%c];\n"
              "mbarrier.pending_count.b64 %q, %st;\n"
              "mul.wide.u32 %a, %t, 8; add.u64 %a, %o, %a;\n"
              "st.global.v2.u32 [%a], {%v, %q};\n"
              "ret;\n}\n");
    uint32_t out[128];
    run1("k", 64, out);
    for (uint32_t t = 0; t < 64; t++) {
        assert_int_equal(out[2 * t], ((t + 32) % 64) * 7);
        assert_true(out[2 * t + 1] >= 1 && out[2 * t + 1] <= 64);
    }
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(float_rounding_modes_and_special_values, teardown),
        cmocka_unit_test_teardown(comparisons_ordered_and_unordered, teardown),
        cmocka_unit_test_teardown(half_precision_and_packed_forms, teardown),
        cmocka_unit_test_teardown(fp8_pairs_convert_to_and_from_f16x2, teardown),
        cmocka_unit_test_teardown(a_register_in_braces_is_a_scalar_operand_of_ld_and_st, teardown),
        cmocka_unit_test_teardown(integer_edges_and_bit_fields, teardown),
        cmocka_unit_test_teardown(vectors_and_generic_shared_addresses, teardown),
        cmocka_unit_test_teardown(signed_vector_elements_sign_extend_and_vectors_align_to_their_width, teardown),
        cmocka_unit_test_teardown(one_bad_lane_of_a_full_warp_is_the_one_reported, teardown),
        cmocka_unit_test_teardown(a_misaligned_access_is_reported, teardown),
        cmocka_unit_test_teardown(exit_in_some_lanes_lets_the_rest_reach_a_barrier, teardown),
        cmocka_unit_test_teardown(shfl_clamps_and_segments, teardown),
        cmocka_unit_test_teardown(vote_sync_takes_sync_after_its_mode, teardown),
        cmocka_unit_test_teardown(kernels_own_shared_variables_overlap_after_the_modules, teardown),
        cmocka_unit_test_teardown(special_registers, teardown),
        cmocka_unit_test_teardown(multimem_goes_through_the_host_callbacks, teardown),
        cmocka_unit_test_teardown(a_warps_multimem_run_of_consecutive_elements_is_one_host_call,
                                  teardown),
        cmocka_unit_test_teardown(an_ordered_store_to_a_multicast_address_goes_to_the_host_a_weak_one_does_not,
                                  teardown),
        cmocka_unit_test_teardown(mbarrier_arrive_and_wait_orders_shared_memory, teardown),
        cmocka_unit_test_teardown(an_instruction_not_run_is_refused_at_load_with_its_line, teardown),
        cmocka_unit_test_teardown(a_modifier_not_taken_is_refused_at_load, teardown),
        cmocka_unit_test_teardown(a_call_to_an_undefined_function_is_a_link_error, teardown),
    };
    return fab_test_main(argc, argv, "ptx", tests, sizeof(tests) / sizeof(tests[0]), NULL, 0);
}
