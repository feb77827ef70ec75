/* Where the engine puts a block's .local and .shared variables: each on the
 * boundary its .align asks, however large (64, 256), read back as generic
 * addresses from every lane of two warps and two blocks: the frames, the
 * lanes' windows and the block's memory all keep it, and so does the
 * dynamic .shared array that follows the static ones. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "ptx_test.h"
#include "src/ptx/ptx.h"

#include "ptx_exec_test.h"

#define HEAD ".version 9.0\n.target sm_90\n.address_size 64\n"

enum { BLOCKS = 2, THREADS = 64 };

static void run(const char *name, uint32_t dynamic_shared, void *out)
{
    run_shared(name, BLOCKS, THREADS, dynamic_shared, out);
}

/* Each thread writes, for its variable, the generic address modulo 256. */
static void variables_start_on_the_boundary_their_align_asks(void **state)
{
    (void)state;
    load(HEAD
         ".shared .align 4 .b8 s_small[12];\n"
         ".shared .align 256 .b8 s_big[40];\n"
         ".shared .align 64 .b8 s_mid[8];\n"
         ".extern .shared .align 128 .b8 s_dyn[];\n"
         ".visible .entry k(.param .u64 out)\n{\n"
         ".local .align 4 .b8 l_small[12];\n"
         ".local .align 256 .b8 l_big[40];\n"
         ".local .align 64 .b8 l_mid[24];\n"
         ".reg .u64 %o, %a, %t;\n.reg .b32 %r<4>;\n"
         "ld.param.u64 %o, [out];\n"
         "mov.u32 %r0, %ctaid.x;\nmov.u32 %r1, %ntid.x;\nmov.u32 %r2, %tid.x;\n"
         "mad.lo.u32 %r3, %r0, %r1, %r2;\n"
         "mul.wide.u32 %t, %r3, 48;\nadd.u64 %o, %o, %t;\n"
         "mov.u64 %a, l_small;\ncvta.local.u64 %a, %a;\nst.u32 [%a], %r3;\n"
         "mov.u64 %a, l_big;\ncvta.local.u64 %a, %a;\nst.u32 [%a], %r3;\nand.b64 %a, %a, 255;\nst.global.u64 [%o], %a;\n"
         "mov.u64 %a, l_mid;\ncvta.local.u64 %a, %a;\nand.b64 %a, %a, 63;\nst.global.u64 [%o+8], %a;\n"
         "mov.u64 %a, s_big;\ncvta.shared.u64 %a, %a;\nand.b64 %a, %a, 255;\nst.global.u64 [%o+16], %a;\n"
         "mov.u64 %a, s_mid;\ncvta.shared.u64 %a, %a;\nand.b64 %a, %a, 63;\nst.global.u64 [%o+24], %a;\n"
         "mov.u64 %a, s_dyn;\ncvta.shared.u64 %a, %a;\nand.b64 %a, %a, 127;\nst.global.u64 [%o+32], %a;\n"
         "mov.u64 %a, s_small;\ncvta.shared.u64 %a, %a;\nand.b64 %a, %a, 3;\nst.global.u64 [%o+40], %a;\n"
         "ret;\n}\n");
    static uint64_t out[BLOCKS * THREADS][6];
    memset(out, 0xff, sizeof(out));
    run("k", 256, out);
    static const char *const what[] = {".local .align 256", ".local .align 64", ".shared .align 256",
                                       ".shared .align 64", "the dynamic .shared .align 128",
                                       ".shared .align 4"};
    for (int t = 0; t < BLOCKS * THREADS; t++)
        for (int v = 0; v < 6; v++)
            if (out[t][v] != 0)
                fail_msg("thread %d: the %s variable is %llu bytes past its boundary", t, what[v],
                         (unsigned long long)out[t][v]);
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test_teardown(variables_start_on_the_boundary_their_align_asks, teardown),
};

FAB_TEST_MAIN_NO_HELPERS("ptx", tests)
