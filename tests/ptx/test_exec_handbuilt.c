/* The interpreter on modules built by hand (mbuild.h), independent of the
 * parser: a vector add, a shared-memory tree reduction with bar.sync, and
 * atomics under contention across blocks. */
#include <stdlib.h>
#include <string.h>

#include "fabtest.h"
#include "mbuild.h"

#define T(x) FAB__PTX_T_##x
#define W(x) FAB__PTX_W_##x
#define O(x) FAB__PTX_OP_##x
#define S(x) FAB__PTX_S_##x
#define SR(x) FAB__PTX_SR_##x

static fab__ptx_program_t *load(mb_t *b)
{
    fab__ptx_program_t *p = NULL;
    fab__ptx_diag_t d;
    fab__ptx_status_t st = fab__ptx_program_load(&b->m, &p, &d);
    if (st)
        print_error("load: %d line %u: %s\n", st, d.line, d.msg);
    assert_int_equal(st, FAB__PTX_OK);
    return p;
}

static fab__ptx_status_t run(const fab__ptx_program_t *p, const char *k, uint32_t grid, uint32_t block,
                             const void *params, fab__ptx_fault_t *f)
{
    fab__ptx_launch_t la = {.kernel = fab__ptx_program_kernel(p, k), .grid = {grid, 1, 1},
                            .block = {block, 1, 1}, .params = params};
    assert_non_null(la.kernel);
    return fab__ptx_run(&la, f);
}

/* c[i] = a[i] + b[i] for i < n */
static void build_vadd(mb_t *b)
{
    mb_init(b);
    mb_func(b, "vadd", true);
    uint32_t pa = mb_param(b, "a", T(U64), 8), pb = mb_param(b, "b", T(U64), 8), pc = mb_param(b, "c", T(U64), 8),
             pn = mb_param(b, "n", T(U32), 4);
    uint32_t rd1 = mb_reg(b, T(U64)), rd2 = mb_reg(b, T(U64)), rd3 = mb_reg(b, T(U64)), r1 = mb_reg(b, T(U32));
    uint32_t r2 = mb_reg(b, T(U32)), r3 = mb_reg(b, T(U32)), r4 = mb_reg(b, T(U32)), r5 = mb_reg(b, T(U32));
    uint32_t p1 = mb_reg(b, T(PRED)), rd4 = mb_reg(b, T(U64)), rd5 = mb_reg(b, T(U64)), f1 = mb_reg(b, T(F32)),
             f2 = mb_reg(b, T(F32)), f3 = mb_reg(b, T(F32));
    mb_ins(b, O(LD), NOG, S(PARAM), 1, TY(T(U64)), NULL, 2, R_(rd1), AS_(pa, 0));
    mb_ins(b, O(LD), NOG, S(PARAM), 1, TY(T(U64)), NULL, 2, R_(rd2), AS_(pb, 0));
    mb_ins(b, O(LD), NOG, S(PARAM), 1, TY(T(U64)), NULL, 2, R_(rd3), AS_(pc, 0));
    mb_ins(b, O(LD), NOG, S(PARAM), 1, TY(T(U32)), NULL, 2, R_(r1), AS_(pn, 0));
    mb_ins(b, O(MOV), NOG, 0, 1, TY(T(U32)), NULL, 2, R_(r2), SR_(SR(CTAID), 0));
    mb_ins(b, O(MOV), NOG, 0, 1, TY(T(U32)), NULL, 2, R_(r3), SR_(SR(NTID), 0));
    mb_ins(b, O(MOV), NOG, 0, 1, TY(T(U32)), NULL, 2, R_(r4), SR_(SR(TID), 0));
    mb_ins(b, O(MAD), NOG, 0, 1, TY(T(S32)), WD(W(LO)), 4, R_(r5), R_(r2), R_(r3), R_(r4));
    mb_ins(b, O(SETP), NOG, 0, 1, TY(T(S32)), WD(W(GE)), 3, R_(p1), R_(r5), R_(r1));
    mb_ins(b, O(BRA), p1, false, 0, 1, NULL, NULL, 1, L_(0));
    mb_ins(b, O(MUL), NOG, 0, 1, TY(T(S32)), WD(W(WIDE)), 3, R_(rd4), R_(r5), I_(4));
    mb_ins(b, O(ADD), NOG, 0, 1, TY(T(S64)), NULL, 3, R_(rd5), R_(rd1), R_(rd4));
    mb_ins(b, O(LD), NOG, S(GLOBAL), 1, TY(T(F32)), NULL, 2, R_(f1), AR_(rd5, 0));
    mb_ins(b, O(ADD), NOG, 0, 1, TY(T(S64)), NULL, 3, R_(rd5), R_(rd2), R_(rd4));
    mb_ins(b, O(LD), NOG, S(GLOBAL), 1, TY(T(F32)), NULL, 2, R_(f2), AR_(rd5, 0));
    mb_ins(b, O(ADD), NOG, 0, 1, TY(T(F32)), NULL, 3, R_(f3), R_(f1), R_(f2));
    mb_ins(b, O(ADD), NOG, 0, 1, TY(T(S64)), NULL, 3, R_(rd5), R_(rd3), R_(rd4));
    mb_ins(b, O(ST), NOG, S(GLOBAL), 1, TY(T(F32)), NULL, 2, AR_(rd5, 0), R_(f3));
    mb_label(b, 0);
    mb_ins(b, O(RET), NOG, 0, 1, NULL, NULL, 0);
}

static void vector_add_runs_every_thread_once(void **state)
{
    (void)state;
    mb_t *b = malloc(sizeof(*b));
    build_vadd(b);
    fab__ptx_program_t *p = load(b);
    enum { N = 1000 };
    float *a = malloc(N * 4), *bb = malloc(N * 4), *c = calloc(N + 64, 4);
    for (int i = 0; i < N; i++)
        a[i] = (float)i, bb[i] = 0.5f * (float)i;
    c[N] = 12345.0f;
    struct { float *a, *b, *c; uint32_t n; } prm = {a, bb, c, N};
    fab__ptx_fault_t f;
    fab__ptx_status_t st = run(p, "vadd", (N + 127) / 128, 128, &prm, &f);
    if (st)
        print_error("%s\n", f.report);
    assert_int_equal(st, FAB__PTX_OK);
    for (int i = 0; i < N; i++)
        assert_true(c[i] == 1.5f * (float)i);
    assert_true(c[N] == 12345.0f); /* the lanes past n stored nothing */
    fab__ptx_program_free(p);
    free(b);
    free(a), free(bb), free(c);
}

/* out[blockIdx] = sum of in[blockIdx*256 .. +256) through shared memory:
 *   s[t] = in[..]; bar.sync; for (k = 128; k > 0; k >>= 1) { if (t < k) s[t] += s[t+k]; bar.sync; }
 *   if (t == 0) out[b] = s[0]; and atom.add.u32 total, s[0] */
static void build_reduce(mb_t *b)
{
    mb_init(b);
    uint32_t sh = mb_var(b, "s", S(SHARED), 256 * 4, 4, false);
    mb_func(b, "reduce", true);
    uint32_t pin = mb_param(b, "in", T(U64), 8), pout = mb_param(b, "out", T(U64), 8), ptot = mb_param(b, "tot", T(U64), 8);
    uint32_t rin = mb_reg(b, T(U64)), rout = mb_reg(b, T(U64)), rt = mb_reg(b, T(U32)), rb = mb_reg(b, T(U32));
    uint32_t gi = mb_reg(b, T(U32)), off = mb_reg(b, T(U64)), addr = mb_reg(b, T(U64)), v = mb_reg(b, T(U32));
    uint32_t sa = mb_reg(b, T(U32)), k = mb_reg(b, T(U32)), p = mb_reg(b, T(PRED)), sb = mb_reg(b, T(U32));
    uint32_t v2 = mb_reg(b, T(U32)), q = mb_reg(b, T(PRED)), sbase = mb_reg(b, T(U32)), rtot = mb_reg(b, T(U64));
    mb_ins(b, O(LD), NOG, S(PARAM), 1, TY(T(U64)), NULL, 2, R_(rin), AS_(pin, 0));
    mb_ins(b, O(LD), NOG, S(PARAM), 1, TY(T(U64)), NULL, 2, R_(rout), AS_(pout, 0));
    mb_ins(b, O(LD), NOG, S(PARAM), 1, TY(T(U64)), NULL, 2, R_(rtot), AS_(ptot, 0));
    mb_ins(b, O(MOV), NOG, 0, 1, TY(T(U32)), NULL, 2, R_(rt), SR_(SR(TID), 0));
    mb_ins(b, O(MOV), NOG, 0, 1, TY(T(U32)), NULL, 2, R_(rb), SR_(SR(CTAID), 0));
    mb_ins(b, O(SHL), NOG, 0, 1, TY(T(B32)), NULL, 3, R_(gi), R_(rb), I_(8));
    mb_ins(b, O(ADD), NOG, 0, 1, TY(T(U32)), NULL, 3, R_(gi), R_(gi), R_(rt));
    mb_ins(b, O(MUL), NOG, 0, 1, TY(T(U32)), WD(W(WIDE)), 3, R_(off), R_(gi), I_(4));
    mb_ins(b, O(ADD), NOG, 0, 1, TY(T(U64)), NULL, 3, R_(addr), R_(rin), R_(off));
    mb_ins(b, O(LD), NOG, S(GLOBAL), 1, TY(T(U32)), NULL, 2, R_(v), AR_(addr, 0));
    mb_ins(b, O(MOV), NOG, 0, 1, TY(T(U32)), NULL, 2, R_(sbase), S_(sh));
    mb_ins(b, O(SHL), NOG, 0, 1, TY(T(B32)), NULL, 3, R_(sa), R_(rt), I_(2));
    mb_ins(b, O(ADD), NOG, 0, 1, TY(T(U32)), NULL, 3, R_(sa), R_(sa), R_(sbase));
    mb_ins(b, O(ST), NOG, S(SHARED), 1, TY(T(U32)), NULL, 2, AR_(sa, 0), R_(v));
    mb_ins(b, O(BAR_SYNC), NOG, 0, 1, NULL, NULL, 1, I_(0));
    mb_ins(b, O(MOV), NOG, 0, 1, TY(T(U32)), NULL, 2, R_(k), I_(128));
    mb_label(b, 0); /* loop */
    mb_ins(b, O(SETP), NOG, 0, 1, TY(T(U32)), WD(W(LT)), 3, R_(p), R_(rt), R_(k));
    mb_ins(b, O(BRA), p, true, 0, 1, NULL, NULL, 1, L_(1));
    mb_ins(b, O(SHL), NOG, 0, 1, TY(T(B32)), NULL, 3, R_(sb), R_(k), I_(2));
    mb_ins(b, O(ADD), NOG, 0, 1, TY(T(U32)), NULL, 3, R_(sb), R_(sb), R_(sa));
    mb_ins(b, O(LD), NOG, S(SHARED), 1, TY(T(U32)), NULL, 2, R_(v2), AR_(sb, 0));
    mb_ins(b, O(LD), NOG, S(SHARED), 1, TY(T(U32)), NULL, 2, R_(v), AR_(sa, 0));
    mb_ins(b, O(ADD), NOG, 0, 1, TY(T(U32)), NULL, 3, R_(v), R_(v), R_(v2));
    mb_ins(b, O(ST), NOG, S(SHARED), 1, TY(T(U32)), NULL, 2, AR_(sa, 0), R_(v));
    mb_label(b, 1); /* skip */
    mb_ins(b, O(BAR_SYNC), NOG, 0, 1, NULL, NULL, 1, I_(0));
    mb_ins(b, O(SHR), NOG, 0, 1, TY(T(U32)), NULL, 3, R_(k), R_(k), I_(1));
    mb_ins(b, O(SETP), NOG, 0, 1, TY(T(U32)), WD(W(NE)), 3, R_(q), R_(k), I_(0));
    mb_ins(b, O(BRA), q, false, 0, 1, NULL, NULL, 1, L_(0));
    mb_ins(b, O(SETP), NOG, 0, 1, TY(T(U32)), WD(W(NE)), 3, R_(q), R_(rt), I_(0));
    mb_ins(b, O(BRA), q, false, 0, 1, NULL, NULL, 1, L_(2));
    mb_ins(b, O(LD), NOG, S(SHARED), 1, TY(T(U32)), NULL, 2, R_(v), AS_(sh, 0));
    mb_ins(b, O(MUL), NOG, 0, 1, TY(T(U32)), WD(W(WIDE)), 3, R_(off), R_(rb), I_(4));
    mb_ins(b, O(ADD), NOG, 0, 1, TY(T(U64)), NULL, 3, R_(addr), R_(rout), R_(off));
    mb_ins(b, O(ST), NOG, S(GLOBAL), 1, TY(T(U32)), NULL, 2, AR_(addr, 0), R_(v));
    mb_ins(b, O(RED), NOG, S(GLOBAL), 1, TY(T(U32)), WD(W(ADD)), 2, AR_(rtot, 0), R_(v));
    mb_label(b, 2);
    mb_ins(b, O(RET), NOG, 0, 1, NULL, NULL, 0);
}

static void shared_reduction_sums_each_block(void **state)
{
    (void)state;
    mb_t *b = malloc(sizeof(*b));
    build_reduce(b);
    fab__ptx_program_t *p = load(b);
    enum { NB = 64 };
    uint32_t *in = malloc(NB * 256 * 4), out[NB] = {0}, tot = 0;
    uint32_t want_tot = 0;
    for (int i = 0; i < NB * 256; i++)
        in[i] = (uint32_t)(i * 7 + 1), want_tot += in[i];
    struct { uint32_t *in, *out, *tot; } prm = {in, out, &tot};
    fab__ptx_fault_t f;
    fab__ptx_status_t st = run(p, "reduce", NB, 256, &prm, &f);
    if (st)
        print_error("%s\n", f.report);
    assert_int_equal(st, FAB__PTX_OK);
    for (int bi = 0; bi < NB; bi++) {
        uint32_t s = 0;
        for (int t = 0; t < 256; t++)
            s += in[bi * 256 + t];
        assert_int_equal(out[bi], s);
    }
    assert_int_equal(tot, want_tot);
    fab__ptx_program_free(p);
    free(b);
    free(in);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(vector_add_runs_every_thread_once),
        cmocka_unit_test(shared_reduction_sums_each_block),
    };
    return fab_test_main(argc, argv, "ptx", tests, sizeof(tests) / sizeof(tests[0]), NULL, 0);
}
