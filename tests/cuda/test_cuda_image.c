/* The image parser inside libcuda (src/cuda/image*.c), tested directly, from
 * its source (it needs nothing else of the library): PTX declarations and
 * initializers, comments that hide directives, a compressed fatbin entry, a
 * fatbin without code, and every truncation of valid images, which must be
 * refused or read, never crash. Like test_cuda_containers.c, this one
 * includes a project header, as it must. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "src/cuda/image.h"

#include "fabtest.h"

static const fab__cu_image_global_t *global(const fab__cu_image_t *img, const char *name)
{
    for (size_t i = 0; i < img->nglobals; i++) {
        if (strcmp(img->globals[i].name, name) == 0)
            return &img->globals[i];
    }
    return NULL;
}

static bool has_kernel(const fab__cu_image_t *img, const char *name)
{
    for (size_t i = 0; i < img->nkernels; i++) {
        if (strcmp(img->kernels[i], name) == 0)
            return true;
    }
    return false;
}

static CUresult parse_text(const char *text, fab__cu_image_t *img)
{
    return fab__cu_image_parse(text, strlen(text), img);
}

static void ptx_initializers_give_globals_their_bytes(void **state)
{
    (void)state;
    const char *ptx = ".version 8.0\n.target sm_90\n.address_size 64\n"
                      ".global .u32 dec = 42;\n"
                      ".global .u32 hex = 0x10;\n"
                      ".global .u16 oct = 017;\n"
                      ".global .u8 bin = 0b101;\n"
                      ".global .s32 neg[2] = {-3, 4};\n"
                      ".global .f32 half = 0.5;\n"
                      ".global .f64 one = 0d3FF0000000000000;\n"
                      ".global .b8 open[] = {1, 2, 3, 4, 5};\n"
                      ".global .v4 .f32 quad[2];\n"
                      ".global .u32 two[2][3] = {{1, 2, 3}, {4, 5, 6}};\n"
                      ".global .u64 addr = generic(dec);\n"
                      ".global .f32 big = 1.5e-3;\n";
    fab__cu_image_t img;
    assert_int_equal(parse_text(ptx, &img), CUDA_SUCCESS);
    const fab__cu_image_global_t *g;
    assert_non_null(g = global(&img, "dec"));
    assert_int_equal(g->size, 4);
    assert_int_equal(g->init[0], 42);
    assert_non_null(g = global(&img, "hex"));
    assert_int_equal(g->init[0], 16);
    assert_non_null(g = global(&img, "oct"));
    assert_int_equal(g->init[0], 15);
    assert_non_null(g = global(&img, "bin"));
    assert_int_equal(g->init[0], 5);
    assert_non_null(g = global(&img, "neg"));
    int32_t n[2];
    memcpy(n, g->init, 8);
    assert_int_equal(n[0], -3);
    assert_int_equal(n[1], 4);
    assert_non_null(g = global(&img, "half"));
    float f;
    memcpy(&f, g->init, 4);
    assert_true(f == 0.5f);
    assert_non_null(g = global(&img, "one"));
    double d;
    memcpy(&d, g->init, 8);
    assert_true(d == 1.0);
    assert_non_null(g = global(&img, "open"));
    assert_int_equal(g->size, 5); /* sized by its initializer */
    assert_int_equal(g->init[4], 5);
    assert_non_null(g = global(&img, "quad"));
    assert_int_equal(g->size, 32);
    assert_null(g->init);
    assert_non_null(g = global(&img, "two"));
    assert_int_equal(g->size, 24);
    assert_int_equal(g->init[20], 6);
    assert_non_null(g = global(&img, "addr"));
    assert_int_equal(g->size, 8);
    assert_non_null(g = global(&img, "big"));
    memcpy(&f, g->init, 4);
    assert_true(f == 1.5e-3f);
    fab__cu_image_free(&img);
}

static void ptx_declarator_lists_and_linkage(void **state)
{
    (void)state;
    const char *ptx = ".version 8.0\n"
                      "// .entry commented_out(.param .u64 p) { ret; }\n"
                      "/* .global .u32 hidden; */\n"
                      ".global .u32 a, b[4], c;\n"
                      ".extern .global .u32 ext;\n"
                      ".weak .const .align 8 .u64 w;\n"
                      ".global .texref tex;\n"
                      ".visible .entry proto(.param .u64 p);\n"
                      ".extern .entry other(.param .u64 p);\n"
                      ".visible .entry k1(.param .u64 p) .maxntid 64, 1, 1 { { ret; } }\n"
                      ".func (.reg .b32 r) f(.reg .b32 x) { ret; }\n"
                      ".section .debug_str { .b8 0 }\n";
    fab__cu_image_t img;
    assert_int_equal(parse_text(ptx, &img), CUDA_SUCCESS);
    assert_int_equal(img.nkernels, 1);
    assert_true(has_kernel(&img, "k1"));
    assert_non_null(global(&img, "a"));
    assert_int_equal(global(&img, "b")->size, 16);
    assert_non_null(global(&img, "c"));
    assert_non_null(global(&img, "w"));
    assert_null(global(&img, "ext"));
    assert_null(global(&img, "hidden"));
    assert_null(global(&img, "tex"));
    assert_int_equal(img.nglobals, 4);
    fab__cu_image_free(&img);
}

static void ptx_errors_are_invalid_ptx(void **state)
{
    (void)state;
    static const char *const bad[] = {
        ".version 8.0\n.entry (.param .u64 p) { ret; }\n",
        ".version 8.0\n.entry k(.param .u64 p { ret; }\n",
        ".version 8.0\n.global .u32 x[0];\n",
        ".version 8.0\n.global .u32 x[2][] = {1};\n",
        ".version 8.0\n.global .u32 x = 1 2;\n",
        ".version 8.0\n.global .u32 x = zz(;\n",
        ".version 8.0\n.global x;\n",
        ".version 8.0\n.global .u32 x = 99999999999999999999999;\n",
        ".version 8.0\n.global .u32 x\x01;\n",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        fab__cu_image_t img;
        CUresult r = parse_text(bad[i], &img);
        if (r != CUDA_ERROR_INVALID_PTX)
            fail_msg("case %zu: %d (%s)", i, (int)r, img.error);
        assert_true(img.error[0] != '\0');
        assert_int_equal(img.nkernels + img.nglobals, 0);
    }
}

static void put16(unsigned char *p, unsigned v)
{
    p[0] = (unsigned char)v;
    p[1] = (unsigned char)(v >> 8);
}

static void put32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

static void put64(unsigned char *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

/* A fatbin of one entry: kind, flags, the payload's bytes (stored), and the
 * size it decompresses to (0: not compressed). Returns its length. */
static size_t one_entry_fatbin(unsigned char *buf, unsigned kind, uint64_t flags,
                               const void *payload, size_t len, size_t decompressed)
{
    size_t padded = (len + 7) & ~(size_t)7;
    memset(buf, 0, 16 + 64 + padded);
    put32(buf, 0xBA55ED50u);
    put16(buf + 4, 1);
    put16(buf + 6, 16);
    put64(buf + 8, 64 + padded);
    unsigned char *h = buf + 16;
    put16(h, kind);
    put16(h + 2, 0x0101);
    put32(h + 4, 64);
    put64(h + 8, padded);
    if (decompressed)
        put32(h + 16, (uint32_t)len);
    put64(h + 40, flags);
    put64(h + 56, decompressed);
    memcpy(h + 64, payload, len);
    return 16 + 64 + padded;
}

static const char small_ptx[] = ".version 8.0\n.target sm_80\n.address_size 64\n"
                                ".global .u32 g = 3;\n.entry lz(.param .u64 p) { ret; }\n";

static void fatbin_lz4_entry_is_decompressed(void **state)
{
    (void)state;
    /* One LZ4 block of literals only: a token (15 << 4), the length's
     * remainder in bytes of 255 and less, then the bytes themselves. */
    size_t n = sizeof(small_ptx);
    unsigned char block[512];
    size_t b = 0;
    block[b++] = 0xF0;
    size_t rest = n - 15;
    while (rest >= 255) {
        block[b++] = 255;
        rest -= 255;
    }
    block[b++] = (unsigned char)rest;
    memcpy(block + b, small_ptx, n);
    b += n;
    unsigned char fatbin[1024];
    size_t len = one_entry_fatbin(fatbin, 1, 0x2011, block, b, n);
    fab__cu_image_t img;
    CUresult r = fab__cu_image_parse(fatbin, len, &img);
    if (r == CUDA_ERROR_NOT_SUPPORTED)
        fab_test_skip("no liblz4.so.1 here: the refusal says so (img.error)");
    assert_int_equal(r, CUDA_SUCCESS);
    assert_true(has_kernel(&img, "lz"));
    assert_int_equal(global(&img, "g")->init[0], 3);
    fab__cu_image_free(&img);
    assert_int_equal(fab__cu_image_extent(fatbin), len);

    /* a size that does not match what the block holds */
    len = one_entry_fatbin(fatbin, 1, 0x2011, block, b, n + 1);
    assert_int_equal(fab__cu_image_parse(fatbin, len, &img), CUDA_ERROR_INVALID_IMAGE);
    /* both compressions at once: not a format anyone writes */
    len = one_entry_fatbin(fatbin, 1, 0xA011, block, b, n);
    assert_int_equal(fab__cu_image_parse(fatbin, len, &img), CUDA_ERROR_NOT_SUPPORTED);
}

static void fatbin_without_code_has_no_binary(void **state)
{
    (void)state;
    unsigned char fatbin[256];
    size_t len = one_entry_fatbin(fatbin, 8, 0x11, "opaque", 6, 0);
    fab__cu_image_t img;
    assert_int_equal(fab__cu_image_parse(fatbin, len, &img), CUDA_ERROR_NO_BINARY_FOR_GPU);
    len = one_entry_fatbin(fatbin, 1, 0x11, small_ptx, sizeof(small_ptx), 0);
    assert_int_equal(fab__cu_image_parse(fatbin, len, &img), CUDA_SUCCESS);
    assert_true(has_kernel(&img, "lz"));
    fab__cu_image_free(&img);
    /* a PTX entry that is not PTX */
    len = one_entry_fatbin(fatbin, 1, 0x11, "\x01\x02garbage", 9, 0);
    assert_int_equal(fab__cu_image_parse(fatbin, len, &img), CUDA_ERROR_INVALID_PTX);
}

static void wrapper_is_unwrapped(void **state)
{
    (void)state;
    unsigned char fatbin[256];
    one_entry_fatbin(fatbin, 1, 0x11, small_ptx, sizeof(small_ptx), 0);
    struct {
        int magic, version;
        const void *data;
        void *names;
    } wrapper = {0x466243B1, 1, fatbin, NULL};
    assert_ptr_equal(fab__cu_image_unwrap(&wrapper), fatbin);
    assert_ptr_equal(fab__cu_image_unwrap(fatbin), fatbin);
    assert_int_equal(fab__cu_image_extent(small_ptx), sizeof(small_ptx));
}

/* Every prefix of a valid image is refused or read, never a crash (under
 * the sanitizers, never an out-of-bounds read). */
/* What small_ptx declares, whole: the kernel lz and the global g. */
static void whole_image_parses(CUresult r, const fab__cu_image_t *img)
{
    assert_int_equal(r, CUDA_SUCCESS);
    assert_int_equal(img->nkernels, 1);
    assert_string_equal(img->kernels[0], "lz");
    assert_int_equal(img->nglobals, 1);
    assert_string_equal(img->globals[0].name, "g");
}

static void truncated_images_never_crash(void **state)
{
    (void)state;
    unsigned char fatbin[256];
    size_t len = one_entry_fatbin(fatbin, 1, 0x11, small_ptx, sizeof(small_ptx), 0);
    for (size_t n = 0; n <= len; n++) {
        unsigned char *copy = malloc(n ? n : 1);
        memcpy(copy, fatbin, n);
        fab__cu_image_t img;
        CUresult r = fab__cu_image_parse(copy, n, &img);
        if (n == len) /* the whole image: its kernel and its global */
            whole_image_parses(r, &img);
        if (r == CUDA_SUCCESS)
            fab__cu_image_free(&img);
        free(copy);
    }
    for (size_t n = 0; n <= sizeof(small_ptx); n++) {
        char *copy = malloc(n ? n : 1);
        memcpy(copy, small_ptx, n);
        fab__cu_image_t img;
        CUresult r = fab__cu_image_parse(copy, n, &img);
        if (n == sizeof(small_ptx))
            whole_image_parses(r, &img);
        if (r == CUDA_SUCCESS)
            fab__cu_image_free(&img);
        free(copy);
    }
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test(ptx_initializers_give_globals_their_bytes),
    cmocka_unit_test(ptx_declarator_lists_and_linkage),
    cmocka_unit_test(ptx_errors_are_invalid_ptx),
    cmocka_unit_test(fatbin_lz4_entry_is_decompressed),
    cmocka_unit_test(fatbin_without_code_has_no_binary),
    cmocka_unit_test(wrapper_is_unwrapped),
    cmocka_unit_test(truncated_images_never_crash),
};

FAB_TEST_MAIN_NO_HELPERS("cuda", tests)
