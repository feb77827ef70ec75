/* Code objects and launches, against cuda.h only: modules and libraries
 * loaded from PTX text, a cubin and a fatbin built here byte by byte; their
 * functions and globals (present and absent); globals that copies read and
 * write, initialised from the image; malformed images; the launch checks; and
 * launches, in this process and in a helper process on imported memory. Built
 * twice: cuda.* runs the kernels' CPU implementations (kernels_for_tests.c,
 * which FABMEM_KERNELS names), cuda.as_written.* the same tests with no
 * plugin, the kernels' PTX on the PTX engine. */
#include "cuda_test.h"

#include <stdbool.h>
#include <stdlib.h>
#include <unistd.h>

/* Hand-written PTX: what a load must find and what it must not. */
static const char test_ptx[] =
    "//\n// written for fabmem's tests\n//\n"
    ".version 8.0\n"
    ".target sm_80\n"
    ".address_size 64\n"
    "\n"
    ".global .align 4 .u32 counter = 7;\n"
    ".visible .global .align 8 .b8 table[20] = {1, 2, 3};\n"
    ".const .align 4 .f32 scale = 0f3FC00000; /* 1.5 */\n"
    ".extern .global .u32 elsewhere;\n"
    ".weak .global .v2 .u32 pair[3];\n"
    ".global .s32 negs[] = {-1, -2};\n"
    ".extern .entry imported(.param .u64 p);\n"
    "\n"
    ".visible .entry fill(\n"
    "    .param .u64 fill_param_0,\n"
    "    .param .u32 fill_param_1\n"
    ")\n"
    ".maxntid 1024, 1, 1\n"
    "{\n"
    "    .reg .b32 %r<12>;\n"
    "    .reg .b64 %rd<4>;\n"
    "    { .reg .pred %p; }\n"
    "    // out[i] = base + i, i the thread's number in the grid, x fastest\n"
    "    mov.u32 %r1, %ctaid.z;\n    mov.u32 %r2, %nctaid.y;\n    mov.u32 %r3, %ctaid.y;\n"
    "    mad.lo.u32 %r1, %r1, %r2, %r3;\n"
    "    mov.u32 %r2, %nctaid.x;\n    mov.u32 %r3, %ctaid.x;\n"
    "    mad.lo.u32 %r1, %r1, %r2, %r3;\n"
    "    mov.u32 %r4, %tid.z;\n    mov.u32 %r5, %ntid.y;\n    mov.u32 %r6, %tid.y;\n"
    "    mad.lo.u32 %r4, %r4, %r5, %r6;\n"
    "    mov.u32 %r5, %ntid.x;\n    mov.u32 %r6, %tid.x;\n"
    "    mad.lo.u32 %r4, %r4, %r5, %r6;\n"
    "    mov.u32 %r7, %ntid.y;\n    mov.u32 %r8, %ntid.z;\n"
    "    mul.lo.u32 %r7, %r7, %r8;\n    mul.lo.u32 %r7, %r7, %r5;\n"
    "    mad.lo.u32 %r9, %r1, %r7, %r4;\n"
    "    ld.param.u64 %rd1, [fill_param_0];\n"
    "    ld.param.u32 %r10, [fill_param_1];\n"
    "    add.u32 %r11, %r10, %r9;\n"
    "    mul.wide.u32 %rd2, %r9, 4;\n"
    "    add.s64 %rd3, %rd1, %rd2;\n"
    "    st.global.u32 [%rd3], %r11;\n"
    "    ret;\n"
    "}\n"
    "// record(out): what a kernel can see of its launch, from thread 0 of\n"
    "// block 0: grid, block, dynamic shared bytes, and 1 for its own name;\n"
    "// cooperative, device and extra (out[7..9]) only the plugin sees\n"
    ".weak .entry record(.param .u64 out)\n"
    "{\n"
    "    .reg .b32 %q<4>;\n"
    "    .reg .b64 %o;\n"
    "    .reg .pred %first;\n"
    "    mov.u32 %q1, %tid.x;\n    mov.u32 %q2, %tid.y;\n    or.b32 %q1, %q1, %q2;\n"
    "    mov.u32 %q2, %tid.z;\n    or.b32 %q1, %q1, %q2;\n"
    "    mov.u32 %q2, %ctaid.x;\n    or.b32 %q1, %q1, %q2;\n"
    "    mov.u32 %q2, %ctaid.y;\n    or.b32 %q1, %q1, %q2;\n"
    "    mov.u32 %q2, %ctaid.z;\n    or.b32 %q1, %q1, %q2;\n"
    "    setp.ne.u32 %first, %q1, 0;\n"
    "    @%first bra DONE;\n"
    "    ld.param.u64 %o, [out];\n"
    "    mov.u32 %q3, %nctaid.x;\n    st.global.u32 [%o], %q3;\n"
    "    mov.u32 %q3, %nctaid.y;\n    st.global.u32 [%o+4], %q3;\n"
    "    mov.u32 %q3, %nctaid.z;\n    st.global.u32 [%o+8], %q3;\n"
    "    mov.u32 %q3, %ntid.x;\n    st.global.u32 [%o+12], %q3;\n"
    "    mov.u32 %q3, %ntid.y;\n    st.global.u32 [%o+16], %q3;\n"
    "    mov.u32 %q3, %ntid.z;\n    st.global.u32 [%o+20], %q3;\n"
    "    mov.u32 %q3, %dynamic_smem_size;\n    st.global.u32 [%o+24], %q3;\n"
    "    st.global.u32 [%o+40], 1;\n"
    "DONE:\n"
    "    ret;\n"
    "}\n"
    ".entry _Z7missingPi(.param .u64 p) { ret; }\n"
    ".func helper() { ret; }\n";

#define OUT_SIZE (2u << 20)

/* What only a plugin sees of a launch (whether it was cooperative, whether
 * its arguments came packed in extra): asserted where the plugin runs the
 * kernel, not where its PTX does (the cuda.as_written variant). */
#ifdef FAB_AS_WRITTEN
#define PLUGIN_SEES(check) ((void)0)
#else
#define PLUGIN_SEES(check) check
#endif

typedef struct out_mem {
    CUmemGenericAllocationHandle h;
    CUdeviceptr ptr;
} out_mem_t;

static out_mem_t out_alloc(void)
{
    out_mem_t m;
    CUmemAllocationProp prop = cut_prop(CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0);
    CU_OK(cuMemCreate(&m.h, OUT_SIZE, &prop, 0));
    m.ptr = cut_map_rw(m.h, OUT_SIZE);
    CU_OK(cuMemsetD8(m.ptr, 0, OUT_SIZE));
    return m;
}

static void out_free(out_mem_t m)
{
    cut_unmap_free(m.ptr, OUT_SIZE);
    CU_OK(cuMemRelease(m.h));
}

static CUmodule load_test_ptx(void)
{
    CUmodule mod = NULL;
    CU_OK(cuModuleLoadData(&mod, test_ptx));
    assert_non_null(mod);
    return mod;
}

/* ---- a cubin and a fatbin, built here ------------------------------------------- */

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

/* A minimal cubin: ELF64 for EM_CUDA (190) declaring the kernel "fill"
 * (a global function marked as an entry), "answer" = 42 and "nine" = 9 in
 * .nv.global.init, and 16 zero bytes "zeros" in .nv.global (NOBITS).
 * Returns its size; buf holds at least 1024 bytes. */
static unsigned char fill_binding = 1; /* GLOBAL; 0 makes "fill" LOCAL (a static kernel) */
static unsigned char fill_other = 0x10; /* the entry mark; 0 leaves it unmarked */
static size_t build_cubin(unsigned char *buf)
{
    memset(buf, 0, 1024);
    static const char shstr[] = "\0.shstrtab\0.strtab\0.symtab\0.text.fill\0.nv.global.init\0.nv.global";
    static const char str[] = "\0fill\0answer\0nine\0zeros";
    /* section name offsets in shstr */
    enum { N_SHSTRTAB = 1, N_STRTAB = 11, N_SYMTAB = 19, N_TEXT = 27, N_INIT = 38, N_GLOBAL = 54 };
    size_t off = 64;
    size_t shstr_off = off;
    memcpy(buf + off, shstr, sizeof(shstr));
    off += sizeof(shstr);
    size_t str_off = off;
    memcpy(buf + off, str, sizeof(str));
    off += sizeof(str);
    off = (off + 7) & ~(size_t)7;
    size_t sym_off = off;
    unsigned char *s = buf + sym_off; /* 5 symbols of 24 bytes; symbol 0 is null */
    put32(s + 24, 1);                 /* fill */
    s[24 + 4] = (unsigned char)((fill_binding << 4) | 2); /* GLOBAL (or LOCAL) FUNC */
    s[24 + 5] = fill_other;
    put16(s + 24 + 6, 4);
    put64(s + 24 + 16, 16);
    put32(s + 48, 6); /* answer */
    s[48 + 4] = 1;    /* LOCAL OBJECT */
    put16(s + 48 + 6, 5);
    put64(s + 48 + 16, 4);
    put32(s + 72, 13); /* nine */
    s[72 + 4] = 1;
    put16(s + 72 + 6, 5);
    put64(s + 72 + 8, 4);
    put64(s + 72 + 16, 4);
    put32(s + 96, 18); /* zeros */
    s[96 + 4] = 1;
    put16(s + 96 + 6, 6);
    put64(s + 96 + 16, 16);
    off = sym_off + 5 * 24;
    size_t text_off = off;
    off += 16;
    size_t init_off = off;
    put32(buf + init_off, 42);
    put32(buf + init_off + 4, 9);
    off += 8;
    off = (off + 7) & ~(size_t)7;
    size_t shoff = off;
    struct {
        unsigned name, type;
        size_t offset, size;
        unsigned link;
    } sec[7] = {
        {0, 0, 0, 0, 0},
        {N_SHSTRTAB, 3, shstr_off, sizeof(shstr), 0},
        {N_STRTAB, 3, str_off, sizeof(str), 0},
        {N_SYMTAB, 2, sym_off, 5 * 24, 2},
        {N_TEXT, 1, text_off, 16, 0},
        {N_INIT, 1, init_off, 8, 0},
        {N_GLOBAL, 8, init_off + 8, 16, 0},
    };
    for (int i = 0; i < 7; i++) {
        unsigned char *h = buf + shoff + (size_t)i * 64;
        put32(h, sec[i].name);
        put32(h + 4, sec[i].type);
        put64(h + 24, sec[i].offset);
        put64(h + 32, sec[i].size);
        put32(h + 40, sec[i].link);
    }
    memcpy(buf, "\x7f" "ELF", 4);
    buf[4] = 2; /* 64-bit */
    buf[5] = 1; /* little-endian */
    buf[6] = 1;
    put16(buf + 16, 2);   /* executable */
    put16(buf + 18, 190); /* EM_CUDA */
    put32(buf + 20, 1);
    put64(buf + 40, shoff);
    put16(buf + 52, 64);
    put16(buf + 58, 64);
    put16(buf + 60, 7);
    put16(buf + 62, 1);
    return shoff + 7 * 64;
}

/* A fatbin container holding the cubin above and the test PTX, uncompressed.
 * Returns its size; buf holds at least 8192 bytes. */
static size_t build_fatbin(unsigned char *buf)
{
    memset(buf, 0, 8192);
    unsigned char cubin[1024];
    size_t cubin_len = build_cubin(cubin);
    size_t ptx_len = (sizeof(test_ptx) + 7) & ~(size_t)7; /* with its NUL, padded */
    size_t off = 16;
    const struct {
        unsigned kind;
        const void *data;
        size_t len, padded;
    } entries[2] = {{2, cubin, cubin_len, (cubin_len + 7) & ~(size_t)7},
                    {1, test_ptx, sizeof(test_ptx), ptx_len}};
    for (int i = 0; i < 2; i++) {
        unsigned char *h = buf + off;
        put16(h, entries[i].kind);
        put16(h + 2, 0x0101);
        put32(h + 4, 64);
        put64(h + 8, entries[i].padded);
        put32(h + 28, 80); /* sm_80 */
        put64(h + 40, 0x11); /* 64-bit, Linux */
        memcpy(h + 64, entries[i].data, entries[i].len);
        off += 64 + entries[i].padded;
    }
    put32(buf, 0xBA55ED50u);
    put16(buf + 4, 1);
    put16(buf + 6, 16);
    put64(buf + 8, off - 16);
    return off;
}

/* A fatbin of one uncompressed PTX entry (text with its NUL); buf holds at
 * least 80 + the text's size rounded up to 8. */
static size_t one_ptx_fatbin(unsigned char *buf, const char *ptx)
{
    size_t len = strlen(ptx) + 1, padded = (len + 7) & ~(size_t)7;
    memset(buf, 0, 80 + padded);
    unsigned char *h = buf + 16;
    put16(h, 1);
    put16(h + 2, 0x0101);
    put32(h + 4, 64);
    put64(h + 8, padded);
    put32(h + 28, 90);
    put64(h + 40, 0x11);
    memcpy(h + 64, ptx, len);
    put32(buf, 0xBA55ED50u);
    put16(buf + 4, 1);
    put16(buf + 6, 16);
    put64(buf + 8, 64 + padded);
    return 80 + padded;
}

/* ---- modules -------------------------------------------------------------------------- */

static void module_finds_declared_kernels_only(void **state)
{
    (void)state;
    cut_init(0);
    CUmodule mod = load_test_ptx();
    CUfunction f;
    CU_OK(cuModuleGetFunction(&f, mod, "fill"));
    CU_OK(cuModuleGetFunction(&f, mod, "record"));
    CU_OK(cuModuleGetFunction(&f, mod, "_Z7missingPi"));
    CU_IS(cuModuleGetFunction(&f, mod, "imported"), CUDA_ERROR_NOT_FOUND); /* .extern */
    CU_IS(cuModuleGetFunction(&f, mod, "helper"), CUDA_ERROR_NOT_FOUND);   /* a .func */
    CU_IS(cuModuleGetFunction(&f, mod, "absent"), CUDA_ERROR_NOT_FOUND);
    CU_IS(cuModuleGetFunction(NULL, mod, "fill"), CUDA_ERROR_INVALID_VALUE);
    CU_IS(cuModuleGetFunction(&f, mod, NULL), CUDA_ERROR_INVALID_VALUE);
    CU_OK(cuModuleUnload(mod));
    CU_IS(cuModuleGetFunction(&f, mod, "fill"), CUDA_ERROR_INVALID_HANDLE);
    CU_IS(cuModuleUnload(mod), CUDA_ERROR_INVALID_HANDLE);
}

static void module_globals_have_their_declared_sizes(void **state)
{
    (void)state;
    cut_init(0);
    CUmodule mod = load_test_ptx();
    static const struct {
        const char *name;
        size_t size;
    } want[] = {{"counter", 4}, {"table", 20}, {"scale", 4}, {"pair", 24}, {"negs", 8}};
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
        CUdeviceptr p = 0;
        size_t bytes = 0;
        CU_OK(cuModuleGetGlobal(&p, &bytes, mod, want[i].name));
        assert_true(p != 0);
        assert_int_equal(bytes, want[i].size);
    }
    CUdeviceptr p;
    size_t bytes;
    CU_IS(cuModuleGetGlobal(&p, &bytes, mod, "elsewhere"), CUDA_ERROR_NOT_FOUND);
    CU_IS(cuModuleGetGlobal(&p, &bytes, mod, "nothing"), CUDA_ERROR_NOT_FOUND);
    CU_OK(cuModuleGetGlobal(NULL, &bytes, mod, "counter")); /* either output may be NULL */
    CU_OK(cuModuleGetGlobal(&p, NULL, mod, "counter"));
    CU_IS(cuModuleGetGlobal(&p, &bytes, mod, NULL), CUDA_ERROR_INVALID_VALUE);
    CU_OK(cuModuleUnload(mod));
    CU_IS(cuModuleGetGlobal(&p, &bytes, mod, "counter"), CUDA_ERROR_INVALID_HANDLE);
}

static void module_globals_are_initialised_and_copyable(void **state)
{
    (void)state;
    cut_init(0);
    CUmodule mod = load_test_ptx();
    CUdeviceptr counter, table, scale, negs;
    size_t bytes;
    CU_OK(cuModuleGetGlobal(&counter, &bytes, mod, "counter"));
    CU_OK(cuModuleGetGlobal(&table, &bytes, mod, "table"));
    CU_OK(cuModuleGetGlobal(&scale, &bytes, mod, "scale"));
    CU_OK(cuModuleGetGlobal(&negs, &bytes, mod, "negs"));
    unsigned v = 0;
    CU_OK(cuMemcpyDtoH(&v, counter, sizeof(v)));
    assert_int_equal(v, 7);
    unsigned char t[20];
    CU_OK(cuMemcpyDtoH(t, table, sizeof(t)));
    static const unsigned char want_t[20] = {1, 2, 3};
    assert_memory_equal(t, want_t, sizeof(t));
    float f = 0;
    CU_OK(cuMemcpyDtoH(&f, scale, sizeof(f)));
    assert_true(f == 1.5f);
    int n[2];
    CU_OK(cuMemcpyDtoH(n, negs, sizeof(n)));
    assert_int_equal(n[0], -1);
    assert_int_equal(n[1], -2);

    v = 1234;
    CU_OK(cuMemcpyHtoD(counter, &v, sizeof(v)));
    v = 0;
    CU_OK(cuMemcpyDtoH(&v, counter, sizeof(v)));
    assert_int_equal(v, 1234);
    CU_OK(cuMemsetD32(counter, 0xabcdef, 1));
    CU_OK(cuMemcpyDtoH(&v, counter, sizeof(v)));
    assert_int_equal(v, 0xabcdef);
    /* device to device, between a global and mapped memory */
    out_mem_t m = out_alloc();
    CU_OK(cuMemcpyDtoD(m.ptr, counter, sizeof(v)));
    v = 0;
    CU_OK(cuMemcpyDtoH(&v, m.ptr, sizeof(v)));
    assert_int_equal(v, 0xabcdef);
    out_free(m);
    /* a global is driver memory: no user call may unmap or free it */
    CU_IS(cuMemUnmap(counter, 4096), CUDA_ERROR_INVALID_VALUE);
    CU_IS(cuMemAddressFree(counter, 4096), CUDA_ERROR_INVALID_VALUE);
    CU_OK(cuModuleUnload(mod));
    CU_IS(cuMemcpyDtoH(&v, counter, sizeof(v)), CUDA_ERROR_INVALID_VALUE); /* gone with it */
}

static void module_globals_are_per_module(void **state)
{
    (void)state;
    cut_init(0);
    CUmodule a = load_test_ptx(), b = load_test_ptx();
    CUdeviceptr pa, pb;
    size_t bytes;
    CU_OK(cuModuleGetGlobal(&pa, &bytes, a, "counter"));
    CU_OK(cuModuleGetGlobal(&pb, &bytes, b, "counter"));
    assert_true(pa != pb);
    unsigned v = 99;
    CU_OK(cuMemcpyHtoD(pa, &v, sizeof(v)));
    CU_OK(cuMemcpyDtoH(&v, pb, sizeof(v)));
    assert_int_equal(v, 7);
    CU_OK(cuModuleUnload(a));
    CU_OK(cuModuleUnload(b));
}

static void module_loads_a_cubin(void **state)
{
    (void)state;
    cut_init(0);
    unsigned char cubin[1024];
    build_cubin(cubin);
    CUmodule mod;
    CU_OK(cuModuleLoadData(&mod, cubin));
    CUfunction f;
    CU_OK(cuModuleGetFunction(&f, mod, "fill"));
    CUdeviceptr p;
    size_t bytes;
    unsigned v = 0;
    CU_OK(cuModuleGetGlobal(&p, &bytes, mod, "answer"));
    assert_int_equal(bytes, 4);
    CU_OK(cuMemcpyDtoH(&v, p, 4));
    assert_int_equal(v, 42);
    CU_OK(cuModuleGetGlobal(&p, &bytes, mod, "nine"));
    CU_OK(cuMemcpyDtoH(&v, p, 4));
    assert_int_equal(v, 9);
    unsigned char z[16];
    memset(z, 0xff, sizeof(z));
    CU_OK(cuModuleGetGlobal(&p, &bytes, mod, "zeros"));
    assert_int_equal(bytes, 16);
    CU_OK(cuMemcpyDtoH(z, p, 16));
    static const unsigned char zero[16];
    assert_memory_equal(z, zero, 16);
    CU_OK(cuModuleUnload(mod));
}

static void module_loads_a_fatbin_bare_and_wrapped(void **state)
{
    (void)state;
    cut_init(0);
    static unsigned char fatbin[8192];
    build_fatbin(fatbin);
    /* The struct nvcc's host code registers (fatbinary_section.h). */
    struct {
        int magic;
        int version;
        const unsigned long long *data;
        void *filename_or_fatbins;
    } wrapper = {0x466243B1, 1, (const unsigned long long *)fatbin, NULL};
    CUmodule mods[3];
    CU_OK(cuModuleLoadFatBinary(&mods[0], fatbin));
    CU_OK(cuModuleLoadFatBinary(&mods[1], &wrapper));
    CU_OK(cuModuleLoadData(&mods[2], fatbin));
    for (int i = 0; i < 3; i++) {
        CUfunction f;
        CU_OK(cuModuleGetFunction(&f, mods[i], "fill"));   /* in both entries */
        CU_OK(cuModuleGetFunction(&f, mods[i], "record")); /* in the PTX only */
        CUdeviceptr p;
        size_t bytes;
        CU_OK(cuModuleGetGlobal(&p, &bytes, mods[i], "answer")); /* the cubin's */
        CU_OK(cuModuleGetGlobal(&p, &bytes, mods[i], "table"));  /* the PTX's */
        assert_int_equal(bytes, 20);
        CU_OK(cuModuleUnload(mods[i]));
    }
}

static void module_load_from_a_file(void **state)
{
    (void)state;
    cut_init(0);
    char *dir = fab_test_tempdir();
    assert_non_null(dir);
    char path[512];
    snprintf(path, sizeof(path), "%s/test.ptx", dir);
    fab_test_write_file(path, test_ptx);
    CUmodule mod;
    CU_OK(cuModuleLoad(&mod, path));
    CUfunction f;
    CU_OK(cuModuleGetFunction(&f, mod, "fill"));
    CU_OK(cuModuleUnload(mod));
    snprintf(path, sizeof(path), "%s/absent.ptx", dir);
    CU_IS(cuModuleLoad(&mod, path), CUDA_ERROR_FILE_NOT_FOUND);
    CU_IS(cuModuleLoad(NULL, path), CUDA_ERROR_INVALID_VALUE);
    CU_IS(cuModuleLoad(&mod, NULL), CUDA_ERROR_INVALID_VALUE);
    fab_test_rmtree(dir);
    free(dir);
}

static void malformed_images_are_refused(void **state)
{
    (void)state;
    cut_init(0);
    CUmodule mod = NULL;
    static const unsigned char garbage[] = {0x01, 0x02, 0x03, 0xff, 0x00};
    CU_IS(cuModuleLoadData(&mod, garbage), CUDA_ERROR_INVALID_IMAGE);
    CU_IS(cuModuleLoadData(&mod, "not an image at all"), CUDA_ERROR_INVALID_IMAGE);
    CU_IS(cuModuleLoadData(&mod, ".version 8.0\n.entry open(.param .u64 p) { ret;\n"),
          CUDA_ERROR_INVALID_PTX);
    CU_IS(cuModuleLoadData(&mod, ".version 8.0\n.global .u32 x = {1, 2;\n"),
          CUDA_ERROR_INVALID_PTX);
    CU_IS(cuModuleLoadData(&mod, ".version 8.0\n.global .u32 x[2] = {1, 2, 3};\n"),
          CUDA_ERROR_INVALID_PTX);
    CU_IS(cuModuleLoadData(&mod, ".version 8.0\n}\n"), CUDA_ERROR_INVALID_PTX);
    /* a cubin whose symbol table lies past its end */
    unsigned char cubin[1024];
    size_t cubin_len = build_cubin(cubin);
    put64(cubin + (cubin_len - 4 * 64) + 24, 1u << 20);
    CU_IS(cuModuleLoadData(&mod, cubin), CUDA_ERROR_INVALID_IMAGE);
    /* an ELF file for another machine */
    build_cubin(cubin);
    put16(cubin + 18, 62);
    CU_IS(cuModuleLoadData(&mod, cubin), CUDA_ERROR_INVALID_IMAGE);
    /* a fatbin whose entry runs past its container */
    static unsigned char fatbin[8192];
    build_fatbin(fatbin);
    put64(fatbin + 16 + 8, 1u << 20);
    CU_IS(cuModuleLoadData(&mod, fatbin), CUDA_ERROR_INVALID_IMAGE);
    CU_IS(cuModuleLoadData(&mod, NULL), CUDA_ERROR_INVALID_VALUE);
    CU_IS(cuModuleLoadData(NULL, test_ptx), CUDA_ERROR_INVALID_VALUE);
    assert_null(mod); /* nothing was written by a refused load */
}

static void jit_error_log_says_why(void **state)
{
    (void)state;
    cut_init(0);
    char log[256] = "untouched";
    CUjit_option opts[2] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
    void *vals[2] = {log, (void *)(uintptr_t)sizeof(log)};
    CUmodule mod;
    CU_IS(cuModuleLoadDataEx(&mod, ".version 8.0\n.entry open(.param .u64 p) { ret;\n", 2, opts,
                             vals),
          CUDA_ERROR_INVALID_PTX);
    assert_non_null(strstr(log, "open"));
    CU_IS(cuModuleLoadDataEx(&mod, test_ptx, 2, NULL, vals), CUDA_ERROR_INVALID_VALUE);
    CUjit_option bad = (CUjit_option)1000;
    CU_IS(cuModuleLoadDataEx(&mod, test_ptx, 1, &bad, vals), CUDA_ERROR_INVALID_VALUE);
    CU_OK(cuModuleLoadDataEx(&mod, test_ptx, 2, opts, vals));
    CU_OK(cuModuleUnload(mod));
}

static void loading_needs_a_context(void **state)
{
    (void)state;
    CU_OK(cuInit(0));
    CU_OK(cuCtxSetCurrent(NULL));
    CUmodule mod;
    CU_IS(cuModuleLoadData(&mod, test_ptx), CUDA_ERROR_INVALID_CONTEXT);
    CUmoduleLoadingMode mode;
    CU_OK(cuModuleGetLoadingMode(&mode));
    assert_true(mode == CU_MODULE_LAZY_LOADING || mode == CU_MODULE_EAGER_LOADING);
    CU_IS(cuModuleGetLoadingMode(NULL), CUDA_ERROR_INVALID_VALUE);
}

/* ---- launches --------------------------------------------------------------------------- */

static void launch_runs_the_cpu_implementation_over_the_grid(void **state)
{
    (void)state;
    cut_init(0);
    CUmodule mod = load_test_ptx();
    CUfunction fill;
    CU_OK(cuModuleGetFunction(&fill, mod, "fill"));
    out_mem_t m = out_alloc();
    unsigned base = 1000;
    void *params[] = {&m.ptr, &base};
    CU_OK(cuLaunchKernel(fill, 2, 3, 1, 4, 2, 1, 0, NULL, params, NULL));
    CU_OK(cuCtxSynchronize());
    unsigned got[49];
    CU_OK(cuMemcpyDtoH(got, m.ptr, sizeof(got)));
    for (unsigned i = 0; i < 48; i++)
        assert_int_equal(got[i], 1000 + i);
    assert_int_equal(got[48], 0); /* not one thread more */
    out_free(m);
    CU_OK(cuModuleUnload(mod));
}

static void launch_passes_dimensions_and_shared_memory(void **state)
{
    (void)state;
    cut_init(0);
    CUmodule mod = load_test_ptx();
    CUfunction record;
    CU_OK(cuModuleGetFunction(&record, mod, "record"));
    out_mem_t m = out_alloc();
    void *params[] = {&m.ptr};
    CUstream s;
    CU_OK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    CU_OK(cuLaunchKernel(record, 5, 6, 7, 8, 4, 2, 1024, s, params, NULL));
    CU_OK(cuStreamSynchronize(s));
    unsigned got[11];
    CU_OK(cuMemcpyDtoH(got, m.ptr, sizeof(got)));
    const unsigned want[11] = {5, 6, 7, 8, 4, 2, 1024, 0, 0, 0, 1};
    assert_memory_equal(got, want, sizeof(want));
    CU_OK(cuStreamDestroy(s));
    out_free(m);
    CU_OK(cuModuleUnload(mod));
}

static void launch_takes_packed_arguments_from_extra(void **state)
{
    (void)state;
    cut_init(0);
    CUmodule mod = load_test_ptx();
    CUfunction record;
    CU_OK(cuModuleGetFunction(&record, mod, "record"));
    out_mem_t m = out_alloc();
    CUdeviceptr buf = m.ptr;
    size_t size = sizeof(buf);
    void *extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, &buf, CU_LAUNCH_PARAM_BUFFER_SIZE, &size,
                     CU_LAUNCH_PARAM_END};
    CU_OK(cuLaunchKernel(record, 1, 1, 1, 32, 1, 1, 0, NULL, NULL, extra));
    unsigned got[11];
    CU_OK(cuMemcpyDtoH(got, m.ptr, sizeof(got)));
    assert_int_equal(got[3], 32);
    PLUGIN_SEES(assert_int_equal(got[9], 1)); /* it came through extra */
    /* a size without its buffer pointer, or an unknown key, is refused */
    void *half[] = {CU_LAUNCH_PARAM_BUFFER_SIZE, &size, CU_LAUNCH_PARAM_END};
    CU_IS(cuLaunchKernel(record, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, half), CUDA_ERROR_INVALID_VALUE);
    void *unknown[] = {(void *)(uintptr_t)7, &buf, CU_LAUNCH_PARAM_END};
    CU_IS(cuLaunchKernel(record, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, unknown),
          CUDA_ERROR_INVALID_VALUE);
    out_free(m);
    CU_OK(cuModuleUnload(mod));
}

static void launch_checks_its_arguments(void **state)
{
    (void)state;
    cut_init(0);
    CUmodule mod = load_test_ptx();
    CUfunction record;
    CU_OK(cuModuleGetFunction(&record, mod, "record"));
    out_mem_t m = out_alloc();
    void *params[] = {&m.ptr};
    CU_IS(cuLaunchKernel(record, 0, 1, 1, 1, 1, 1, 0, NULL, params, NULL), CUDA_ERROR_INVALID_VALUE);
    CU_IS(cuLaunchKernel(record, 1, 65536, 1, 1, 1, 1, 0, NULL, params, NULL),
          CUDA_ERROR_INVALID_VALUE);
    CU_IS(cuLaunchKernel(record, 1, 1, 1, 1, 1, 0, 0, NULL, params, NULL), CUDA_ERROR_INVALID_VALUE);
    CU_IS(cuLaunchKernel(record, 1, 1, 1, 1025, 1, 1, 0, NULL, params, NULL),
          CUDA_ERROR_INVALID_VALUE);
    CU_IS(cuLaunchKernel(record, 1, 1, 1, 1, 1, 65, 0, NULL, params, NULL), CUDA_ERROR_INVALID_VALUE);
    CU_IS(cuLaunchKernel(record, 1, 1, 1, 64, 32, 1, 0, NULL, params, NULL),
          CUDA_ERROR_INVALID_VALUE); /* 2048 threads in a block */
    CU_IS(cuLaunchKernel(record, 1, 1, 1, 1, 1, 1, 64 * 1024, NULL, params, NULL),
          CUDA_ERROR_INVALID_VALUE); /* more than 48 KiB without opting in */
    CU_OK(cuFuncSetAttribute(record, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 64 * 1024));
    CU_OK(cuLaunchKernel(record, 1, 1, 1, 1, 1, 1, 64 * 1024, NULL, params, NULL));
    void *extra[] = {CU_LAUNCH_PARAM_END};
    CU_IS(cuLaunchKernel(record, 1, 1, 1, 1, 1, 1, 0, NULL, params, extra), CUDA_ERROR_INVALID_VALUE);
    CU_IS(cuLaunchKernel(NULL, 1, 1, 1, 1, 1, 1, 0, NULL, params, NULL), CUDA_ERROR_INVALID_HANDLE);
    CU_IS(cuLaunchKernel((CUfunction)&m, 1, 1, 1, 1, 1, 1, 0, NULL, params, NULL),
          CUDA_ERROR_INVALID_HANDLE);
    CU_IS(cuLaunchKernel(record, 1, 1, 1, 1, 1, 1, 0, (CUstream)&m, params, NULL),
          CUDA_ERROR_INVALID_HANDLE);
    CU_IS(cuLaunchKernelEx(NULL, record, params, NULL), CUDA_ERROR_INVALID_VALUE);
    /* nothing ran: the record is still zero */
    unsigned got[11];
    CU_OK(cuMemcpyDtoH(got, m.ptr, sizeof(got)));
    assert_int_equal(got[0], 1); /* only the one launch that was allowed */
    assert_int_equal(got[6], 64 * 1024);
    out_free(m);
    CU_OK(cuModuleUnload(mod));
    CU_IS(cuLaunchKernel(record, 1, 1, 1, 1, 1, 1, 0, NULL, params, NULL), CUDA_ERROR_INVALID_HANDLE);
}

/* With no plugin for it, a kernel runs as written: its PTX, on the PTX
 * engine (its body here is a bare ret). */
static void launch_without_implementation_runs_its_ptx(void **state)
{
    (void)state;
    cut_init(0);
    CUmodule mod = load_test_ptx();
    CUfunction missing;
    CU_OK(cuModuleGetFunction(&missing, mod, "_Z7missingPi"));
    CUdeviceptr p = 0;
    void *params[] = {&p};
    CU_OK(cuLaunchKernel(missing, 1, 1, 1, 1, 1, 1, 0, NULL, params, NULL));
    CU_OK(cuCtxSynchronize());
    CU_OK(cuModuleUnload(mod));
}

static void launch_ex_and_cooperative_launches(void **state)
{
    (void)state;
    cut_init(0);
    CUmodule mod = load_test_ptx();
    CUfunction record;
    CU_OK(cuModuleGetFunction(&record, mod, "record"));
    out_mem_t m = out_alloc();
    void *params[] = {&m.ptr};
    CUlaunchAttribute attr;
    memset(&attr, 0, sizeof(attr));
    attr.id = CU_LAUNCH_ATTRIBUTE_COOPERATIVE;
    attr.value.cooperative = 1;
    CUlaunchConfig cfg;
    memset(&cfg, 0, sizeof(cfg));
    cfg.gridDimX = 3;
    cfg.gridDimY = cfg.gridDimZ = 1;
    cfg.blockDimX = 64;
    cfg.blockDimY = cfg.blockDimZ = 1;
    cfg.attrs = &attr;
    cfg.numAttrs = 1;
    CU_OK(cuLaunchKernelEx(&cfg, record, params, NULL));
    unsigned got[11];
    CU_OK(cuMemcpyDtoH(got, m.ptr, sizeof(got)));
    assert_int_equal(got[0], 3);
    assert_int_equal(got[3], 64);
    PLUGIN_SEES(assert_int_equal(got[7], 1));
    cfg.numAttrs = 0;
    CU_OK(cuLaunchKernelEx(&cfg, record, params, NULL));
    CU_OK(cuMemcpyDtoH(got, m.ptr, sizeof(got)));
    PLUGIN_SEES(assert_int_equal(got[7], 0));
    cfg.attrs = NULL;
    cfg.numAttrs = 1;
    CU_IS(cuLaunchKernelEx(&cfg, record, params, NULL), CUDA_ERROR_INVALID_VALUE);

    CU_OK(cuLaunchCooperativeKernel(record, 2, 1, 1, 128, 1, 1, 0, NULL, params));
    CU_OK(cuMemcpyDtoH(got, m.ptr, sizeof(got)));
    assert_int_equal(got[0], 2);
    PLUGIN_SEES(assert_int_equal(got[7], 1));
    /* all of a cooperative grid must be resident at once */
    int sms = 0, per_sm = 0;
    CU_OK(cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, 0));
    CU_OK(cuOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, record, 1024, 0));
    assert_true(per_sm > 0);
    CU_IS(cuLaunchCooperativeKernel(record, (unsigned)(sms * per_sm + 1), 1, 1, 1024, 1, 1, 0, NULL,
                                    params),
          CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE);
    CU_OK(cuLaunchCooperativeKernel(record, (unsigned)(sms * per_sm), 1, 1, 1024, 1, 1, 0, NULL,
                                    params));
    /* the launch is asynchronous: its kernel still writes m until it ends */
    CU_OK(cuCtxSynchronize());
    out_free(m);
    CU_OK(cuModuleUnload(mod));
}

/* ---- libraries, attributes, occupancy ------------------------------------------------------ */

static void library_kernels_globals_and_module(void **state)
{
    (void)state;
    cut_init(0);
    CUlibrary lib;
    CU_OK(cuLibraryLoadData(&lib, test_ptx, NULL, NULL, 0, NULL, NULL, 0));
    CUkernel k;
    CU_OK(cuLibraryGetKernel(&k, lib, "fill"));
    CU_IS(cuLibraryGetKernel(&k, lib, "absent"), CUDA_ERROR_NOT_FOUND);
    CUfunction f;
    CU_OK(cuKernelGetFunction(&f, k));
    CUdeviceptr p;
    size_t bytes;
    CU_OK(cuLibraryGetGlobal(&p, &bytes, lib, "counter"));
    assert_int_equal(bytes, 4);
    unsigned v = 0;
    CU_OK(cuMemcpyDtoH(&v, p, 4));
    assert_int_equal(v, 7);
    CU_IS(cuLibraryGetGlobal(&p, &bytes, lib, "absent"), CUDA_ERROR_NOT_FOUND);
    CUmodule mod;
    CU_OK(cuLibraryGetModule(&mod, lib));
    CUfunction g;
    CU_OK(cuModuleGetFunction(&g, mod, "fill"));
    assert_ptr_equal(f, g);
    CU_IS(cuModuleUnload(mod), CUDA_ERROR_INVALID_HANDLE); /* the library's, not the caller's */
    /* the kernel launches through its function, and as itself */
    out_mem_t m = out_alloc();
    unsigned base = 5;
    void *params[] = {&m.ptr, &base};
    CU_OK(cuLaunchKernel(f, 1, 1, 1, 4, 1, 1, 0, NULL, params, NULL));
    CU_OK(cuLaunchKernel((CUfunction)k, 1, 1, 1, 4, 1, 1, 0, NULL, params, NULL));
    unsigned got[4];
    CU_OK(cuMemcpyDtoH(got, m.ptr, sizeof(got)));
    assert_int_equal(got[3], 8);
    int attr = 0;
    CU_OK(cuKernelGetAttribute(&attr, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, k, 0));
    assert_int_equal(attr, 1024);
    CU_OK(cuKernelSetAttribute(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 100000, k, 0));
    CU_OK(cuKernelGetAttribute(&attr, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, k, 0));
    assert_int_equal(attr, 100000);
    CU_IS(cuKernelGetAttribute(&attr, CU_FUNC_ATTRIBUTE_NUM_REGS, k, 99), CUDA_ERROR_INVALID_DEVICE);
    out_free(m);
    CUlibraryOption opt = CU_LIBRARY_BINARY_IS_PRESERVED;
    void *val = NULL;
    CU_IS(cuLibraryLoadFromFile(&lib, "/nonexistent", NULL, NULL, 0, &opt, &val, 1),
          CUDA_ERROR_INVALID_VALUE); /* documented invalid for a file */
    CU_OK(cuLibraryUnload(lib));
    CU_IS(cuLibraryUnload(lib), CUDA_ERROR_INVALID_HANDLE);
    CU_IS(cuLibraryGetKernel(&k, lib, "fill"), CUDA_ERROR_INVALID_HANDLE);
    CU_IS(cuKernelGetFunction(&f, k), CUDA_ERROR_INVALID_HANDLE);
    CU_IS(cuLibraryLoadData(&lib, "garbage", NULL, NULL, 0, NULL, NULL, 0),
          CUDA_ERROR_INVALID_IMAGE);
}

static void function_attributes_and_occupancy(void **state)
{
    (void)state;
    cut_init(0);
    CUmodule mod = load_test_ptx();
    CUfunction f;
    CU_OK(cuModuleGetFunction(&f, mod, "fill"));
    int v = -5;
    CU_OK(cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, f));
    assert_int_equal(v, 1024);
    CU_OK(cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, f));
    assert_int_equal(v, 0);
    CU_OK(cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, f));
    assert_int_equal(v, -1);
    CU_OK(cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, 50));
    CU_OK(cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, f));
    assert_int_equal(v, 50);
    CU_IS(cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, 101),
          CUDA_ERROR_INVALID_VALUE);
    CU_IS(cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_NUM_REGS, 8), CUDA_ERROR_INVALID_VALUE);
    CU_IS(cuFuncGetAttribute(&v, (CUfunction_attribute)99, f), CUDA_ERROR_INVALID_VALUE);
    CU_IS(cuFuncGetAttribute(NULL, CU_FUNC_ATTRIBUTE_NUM_REGS, f), CUDA_ERROR_INVALID_VALUE);
    CU_IS(cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_NUM_REGS, NULL), CUDA_ERROR_INVALID_HANDLE);
    CU_OK(cuFuncSetCacheConfig(f, CU_FUNC_CACHE_PREFER_L1));
    CU_IS(cuFuncSetCacheConfig(f, (CUfunc_cache)9), CUDA_ERROR_INVALID_VALUE);

    int blocks = 0;
    CU_OK(cuOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, f, 256, 0));
    assert_int_equal(blocks, 8); /* 2048 threads a multiprocessor */
    CU_OK(cuOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, f, 32, 0));
    assert_int_equal(blocks, 32); /* 32 blocks a multiprocessor */
    CU_OK(cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(&blocks, f, 128, 100 * 1024,
                                                               CU_OCCUPANCY_DISABLE_CACHING_OVERRIDE));
    assert_int_equal(blocks, 2); /* shared memory bounds it */
    CU_OK(cuOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, f, 2048, 0));
    assert_int_equal(blocks, 0);
    CU_IS(cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(&blocks, f, 128, 0, 8),
          CUDA_ERROR_INVALID_VALUE);
    int min_grid = 0, block = 0, sms = 0;
    CU_OK(cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, 0));
    CU_OK(cuOccupancyMaxPotentialBlockSize(&min_grid, &block, f, NULL, 0, 0));
    assert_true(block > 0 && block <= 1024 && block % 32 == 0);
    assert_int_equal(min_grid, sms * (2048 / block));
    CU_OK(cuOccupancyMaxPotentialBlockSize(&min_grid, &block, f, NULL, 0, 100));
    assert_true(block <= 100);
    CU_OK(cuModuleUnload(mod));
}

static void entry_points_are_reachable_through_get_proc_address(void **state)
{
    (void)state;
    static const char *const names[] = {
        "cuModuleLoad", "cuModuleLoadData", "cuModuleLoadDataEx", "cuModuleLoadFatBinary",
        "cuModuleUnload", "cuModuleGetFunction", "cuModuleGetGlobal", "cuModuleGetLoadingMode",
        "cuLibraryLoadData", "cuLibraryLoadFromFile", "cuLibraryUnload", "cuLibraryGetKernel",
        "cuLibraryGetGlobal", "cuLibraryGetModule", "cuKernelGetFunction", "cuKernelGetAttribute",
        "cuKernelSetAttribute", "cuFuncGetAttribute", "cuFuncSetAttribute", "cuFuncSetCacheConfig",
        "cuOccupancyMaxActiveBlocksPerMultiprocessor",
        "cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags", "cuOccupancyMaxPotentialBlockSize",
        "cuLaunchKernel", "cuLaunchKernelEx", "cuLaunchCooperativeKernel"};
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        void *fn = NULL;
        CUdriverProcAddressQueryResult q;
        CU_OK(cuGetProcAddress(names[i], &fn, 12000, CU_GET_PROC_ADDRESS_DEFAULT, &q));
        assert_int_equal(q, CU_GET_PROC_ADDRESS_SUCCESS);
        assert_non_null(fn);
    }
    void *fn = NULL;
    CUdriverProcAddressQueryResult q;
    CU_OK(cuGetProcAddress("cuModuleGetGlobal", &fn, 12000, CU_GET_PROC_ADDRESS_DEFAULT, &q));
    CUresult (*want)(CUdeviceptr *, size_t *, CUmodule, const char *) = cuModuleGetGlobal;
    void *v2 = NULL;
    memcpy(&v2, &want, sizeof(v2));
    assert_ptr_equal(fn, v2); /* cuda.h's name is the _v2 ABI */
}

/* The _ptsz launch ABI (what CUDA_API_PER_THREAD_DEFAULT_STREAM and the
 * per-thread flag of cuGetProcAddress give) reads a NULL stream as the
 * calling thread's default stream, which does not wait for a blocking
 * stream that is held; the plain ABI's legacy stream would (and this test
 * would then hang until ctest's timeout). */
static void launch_ptsz_null_stream_is_the_per_thread_stream(void **state)
{
    (void)state;
    cut_init(0);
    CUmodule mod = load_test_ptx();
    CUfunction fill;
    CU_OK(cuModuleGetFunction(&fill, mod, "fill"));
    void *fn = NULL, *plain = NULL;
    CUdriverProcAddressQueryResult q;
    CU_OK(cuGetProcAddress("cuLaunchKernel", &fn, 12000,
                           CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, &q));
    CU_OK(cuGetProcAddress("cuLaunchKernel", &plain, 12000, CU_GET_PROC_ADDRESS_DEFAULT, &q));
    assert_non_null(fn);
    assert_ptr_not_equal(fn, plain);
    CUresult (*launch)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                       unsigned, CUstream, void **, void **);
    memcpy(&launch, &fn, sizeof(fn));
    CU_OK(cuGetProcAddress("cuMemcpyDtoH", &fn, 12000,
                           CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, &q));
    CUresult (*copy_ptds)(void *, CUdeviceptr, size_t);
    memcpy(&copy_ptds, &fn, sizeof(fn));
    out_mem_t m = out_alloc(); /* its memset runs on the legacy stream: before the hold */

    uint32_t *gate = NULL;
    CU_OK(cuMemAllocHost((void **)&gate, sizeof(*gate)));
    *gate = 0;
    CUstream held;
    CU_OK(cuStreamCreate(&held, CU_STREAM_DEFAULT)); /* blocking */
    CU_OK(cuStreamWaitValue32(held, (CUdeviceptr)(uintptr_t)gate, 1, CU_STREAM_WAIT_VALUE_GEQ));

    unsigned base = 7;
    void *params[] = {&m.ptr, &base};
    CU_OK(launch(fill, 1, 1, 1, 4, 1, 1, 0, NULL, params, NULL));
    unsigned got[4];
    CU_OK(copy_ptds(got, m.ptr, sizeof(got))); /* the legacy one would wait for held */
    for (unsigned i = 0; i < 4; i++)
        assert_int_equal(got[i], 7 + i);
    assert_int_equal(cuStreamQuery(held), CUDA_ERROR_NOT_READY);

    __atomic_store_n(gate, 1, __ATOMIC_SEQ_CST);
    CU_OK(cuStreamSynchronize(held));
    CU_OK(cuStreamDestroy(held));
    CU_OK(cuMemFreeHost(gate));
    out_free(m);
    CU_OK(cuModuleUnload(mod));
}

/* ---- a launch on memory imported by another process --------------------------------------- */

/* helper "launcher": receive an fd, import and map it, load the test PTX and
 * launch fill over it with base 500, say "done". */
static int helper_launcher(int argc, char **argv, int sock)
{
    (void)argc;
    (void)argv;
    CUT_HELPER_READY(sock);
    int fd = fab_test_recv_fd(sock);
    if (fd < 0)
        return 14;
    CUmemGenericAllocationHandle h;
    HELPER_CU(cuMemImportFromShareableHandle(&h, (void *)(uintptr_t)fd,
                                             CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR), 15);
    close(fd);
    CUdeviceptr ptr;
    HELPER_CU(cuMemAddressReserve(&ptr, OUT_SIZE, 0, 0, 0), 16);
    HELPER_CU(cuMemMap(ptr, OUT_SIZE, 0, h, 0), 17);
    CUmemAccessDesc d = cut_access(0, CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
    HELPER_CU(cuMemSetAccess(ptr, OUT_SIZE, &d, 1), 18);
    CUmodule mod;
    HELPER_CU(cuModuleLoadData(&mod, test_ptx), 19);
    CUfunction fill;
    HELPER_CU(cuModuleGetFunction(&fill, mod, "fill"), 20);
    unsigned base = 500;
    void *params[] = {&ptr, &base};
    HELPER_CU(cuLaunchKernel(fill, 4, 1, 1, 64, 1, 1, 0, NULL, params, NULL), 21);
    HELPER_CU(cuCtxSynchronize(), 22);
    HELPER_CU(cuModuleUnload(mod), 23);
    HELPER_CU(cuMemUnmap(ptr, OUT_SIZE), 24);
    HELPER_CU(cuMemRelease(h), 25);
    HELPER_CU(cuMemAddressFree(ptr, OUT_SIZE), 26);
    return fab_test_send_word(sock, "done") == 0 ? 0 : 27;
}

static void launch_in_another_process_writes_shared_memory(void **state)
{
    (void)state;
    cut_init(0);
    out_mem_t m = out_alloc();
    int fd = -1;
    CU_OK(cuMemExportToShareableHandle(&fd, m.h, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
    fab_test_child_t child;
    assert_int_equal(fab_test_spawn("launcher", NULL, NULL, &child), 0);
    assert_int_equal(fab_test_expect_word(child.sock, "ready"), 0);
    assert_int_equal(fab_test_send_fd(child.sock, fd), 0);
    close(fd);
    assert_int_equal(fab_test_expect_word(child.sock, "done"), 0);
    assert_int_equal(fab_test_reap(&child), 0);
    unsigned got[256];
    CU_OK(cuMemcpyDtoH(got, m.ptr, sizeof(got)));
    for (unsigned i = 0; i < 256; i++)
        assert_int_equal(got[i], 500 + i);
    out_free(m);
}

/* nvcc writes a `static __global__` kernel, or one in an anonymous
 * namespace, as a LOCAL function symbol marked as an entry: it is a kernel
 * all the same. A LOCAL function without the mark, in a cubin where none is
 * marked, is a device function and no kernel. */
static void cubin_kernels_of_internal_linkage_are_found(void **state)
{
    (void)state;
    cut_init(0);
    static unsigned char cubin[1024];
    fill_binding = 0;
    build_cubin(cubin);
    CUmodule mod;
    CUfunction f;
    CU_OK(cuModuleLoadData(&mod, cubin));
    CU_OK(cuModuleGetFunction(&f, mod, "fill"));
    CU_OK(cuModuleUnload(mod));
    CUlibrary lib;
    CUkernel k;
    CU_OK(cuLibraryLoadData(&lib, cubin, NULL, NULL, 0, NULL, NULL, 0));
    CU_OK(cuLibraryGetKernel(&k, lib, "fill"));
    CU_OK(cuLibraryUnload(lib));
    fill_other = 0;
    build_cubin(cubin);
    CU_OK(cuModuleLoadData(&mod, cubin));
    CU_IS(cuModuleGetFunction(&f, mod, "fill"), CUDA_ERROR_NOT_FOUND);
    CU_OK(cuModuleUnload(mod));
    fill_binding = 1;
    fill_other = 0x10;
}

/* The wrapper of a -rdc=true build (crt/link.stub): version 2, the
 * device-linked fatbin, and the NULL-ended list of each translation unit's
 * prelinked fatbin. */
typedef struct {
    int magic;
    int version;
    const unsigned long long *data;
    void *filename_or_fatbins;
} wrapper_t;

static void version_2_wrapper_reads_the_prelinked_fatbins_when_the_linked_one_is_empty(void **state)
{
    (void)state;
    cut_init(0);
    static unsigned long long empty[2]; /* a container with no entries */
    put32((unsigned char *)empty, 0xBA55ED50u);
    put16((unsigned char *)empty + 4, 1);
    put16((unsigned char *)empty + 6, 16);
    static unsigned char a[8192], b[512];
    build_fatbin(a);
    one_ptx_fatbin(b, ".version 8.0\n.target sm_90\n.address_size 64\n"
                      ".visible .entry second_unit() { ret; }\n");
    const void *prelinked[3] = {a, b, NULL};
    wrapper_t w = {0x466243B1, 2, empty, (void *)prelinked};
    CUmodule mod;
    CUfunction f;
    CU_OK(cuModuleLoadData(&mod, &w));
    CU_OK(cuModuleGetFunction(&f, mod, "fill"));        /* the first unit's */
    CU_OK(cuModuleGetFunction(&f, mod, "second_unit")); /* the second's */
    CUdeviceptr p;
    size_t bytes;
    CU_OK(cuModuleGetGlobal(&p, &bytes, mod, "answer"));
    CU_OK(cuModuleUnload(mod));
    CUlibrary lib;
    CUkernel k;
    CU_OK(cuLibraryLoadData(&lib, &w, NULL, NULL, 0, NULL, NULL, 0));
    CU_OK(cuLibraryGetKernel(&k, lib, "second_unit"));
    CU_OK(cuLibraryUnload(lib));
    /* where the linked fatbin has code (nvlink's cubins), the prelinked
     * fatbins are read as well: their PTX is what the PTX engine runs */
    wrapper_t linked = {0x466243B1, 2, (const unsigned long long *)a, (void *)&prelinked[1]};
    CU_OK(cuModuleLoadData(&mod, &linked));
    CU_OK(cuModuleGetFunction(&f, mod, "fill"));
    CU_OK(cuModuleGetFunction(&f, mod, "second_unit"));
    CU_OK(cuModuleUnload(mod));
    /* nothing at all: no binary, as for an empty fatbin */
    const void *none[1] = {NULL};
    wrapper_t nothing = {0x466243B1, 2, empty, (void *)none};
    CU_IS(cuModuleLoadData(&mod, &nothing), CUDA_ERROR_NO_BINARY_FOR_GPU);
    /* a list entry that is not a fatbin is refused */
    const void *junk[2] = {test_ptx, NULL};
    wrapper_t bad = {0x466243B1, 2, empty, (void *)junk};
    CU_IS(cuModuleLoadData(&mod, &bad), CUDA_ERROR_INVALID_IMAGE);
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test(module_finds_declared_kernels_only),
    cmocka_unit_test(module_globals_have_their_declared_sizes),
    cmocka_unit_test(module_globals_are_initialised_and_copyable),
    cmocka_unit_test(module_globals_are_per_module),
    cmocka_unit_test(module_loads_a_cubin),
    cmocka_unit_test(module_loads_a_fatbin_bare_and_wrapped),
    cmocka_unit_test(module_load_from_a_file),
    cmocka_unit_test(malformed_images_are_refused),
    cmocka_unit_test(jit_error_log_says_why),
    cmocka_unit_test(loading_needs_a_context),
    cmocka_unit_test(launch_runs_the_cpu_implementation_over_the_grid),
    cmocka_unit_test(launch_passes_dimensions_and_shared_memory),
    cmocka_unit_test(launch_takes_packed_arguments_from_extra),
    cmocka_unit_test(launch_checks_its_arguments),
    cmocka_unit_test(launch_without_implementation_runs_its_ptx),
    cmocka_unit_test(launch_ex_and_cooperative_launches),
    cmocka_unit_test(launch_ptsz_null_stream_is_the_per_thread_stream),
    cmocka_unit_test(library_kernels_globals_and_module),
    cmocka_unit_test(function_attributes_and_occupancy),
    cmocka_unit_test(entry_points_are_reachable_through_get_proc_address),
    cmocka_unit_test(launch_in_another_process_writes_shared_memory),
    cmocka_unit_test(cubin_kernels_of_internal_linkage_are_found),
    cmocka_unit_test(version_2_wrapper_reads_the_prelinked_fatbins_when_the_linked_one_is_empty),
};

static const fab_test_helper_t helpers[] = {
    {"launcher", helper_launcher},
};

FAB_TEST_MAIN("cuda", tests, helpers)
