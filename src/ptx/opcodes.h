/* The PTX instructions this engine knows, in the order of the PTX ISA
 * document's chapter 9 ("Instruction Set"), one row each:
 *
 *     X(id, "mnemonic", section, runs)
 *
 * id names the enumerator FAB__PTX_OP_<id>; mnemonic is the instruction's
 * name up to its first modifier (a dotted name such as "bar.warp.sync" is one
 * mnemonic: the parser takes the longest dotted prefix that this list holds);
 * section is the ISA's subsection (its title word); runs is 1 when the
 * engine executes the instruction and 0 when a load that uses it fails with
 * CUDA_ERROR_INVALID_PTX naming it (never runs wrong). From this one list come
 * the opcode enum, the names, the parser's mnemonic table, the loader's
 * "not supported" check and the table in docs/ptx.md. */
#ifndef FAB_PTX_OPCODES_H
#define FAB_PTX_OPCODES_H

#define FAB__PTX_OPCODES(X)                                   \
    /* 9.7.1 integer arithmetic */                            \
    X(ADD, "add", "integer", 1)                               \
    X(SUB, "sub", "integer", 1)                               \
    X(MUL, "mul", "integer", 1)                               \
    X(MAD, "mad", "integer", 1)                               \
    X(MUL24, "mul24", "integer", 1)                           \
    X(MAD24, "mad24", "integer", 1)                           \
    X(SAD, "sad", "integer", 1)                               \
    X(DIV, "div", "integer", 1)                               \
    X(REM, "rem", "integer", 1)                               \
    X(ABS, "abs", "integer", 1)                               \
    X(NEG, "neg", "integer", 1)                               \
    X(MIN, "min", "integer", 1)                               \
    X(MAX, "max", "integer", 1)                               \
    X(POPC, "popc", "integer", 1)                             \
    X(CLZ, "clz", "integer", 1)                               \
    X(BFIND, "bfind", "integer", 1)                           \
    X(FNS, "fns", "integer", 0)                               \
    X(BREV, "brev", "integer", 1)                             \
    X(BFE, "bfe", "integer", 1)                               \
    X(BFI, "bfi", "integer", 1)                               \
    X(SZEXT, "szext", "integer", 1)                           \
    X(BMSK, "bmsk", "integer", 1)                             \
    X(DP4A, "dp4a", "integer", 1)                             \
    X(DP2A, "dp2a", "integer", 1)                             \
    /* 9.7.2 extended-precision integer arithmetic */         \
    X(ADD_CC, "add.cc", "extended", 1)                        \
    X(ADDC, "addc", "extended", 1)                            \
    X(SUB_CC, "sub.cc", "extended", 1)                        \
    X(SUBC, "subc", "extended", 1)                            \
    X(MAD_CC, "mad.cc", "extended", 1)                        \
    X(MADC, "madc", "extended", 1)                            \
    /* 9.7.3 floating point (and 9.7.4 half precision: the    \
     * same mnemonics with .f16/.bf16 types) */               \
    X(TESTP, "testp", "float", 1)                             \
    X(COPYSIGN, "copysign", "float", 1)                       \
    X(FMA, "fma", "float", 1)                                 \
    X(RCP, "rcp", "float", 1)                                 \
    X(SQRT, "sqrt", "float", 1)                               \
    X(RSQRT, "rsqrt", "float", 1)                             \
    X(SIN, "sin", "float", 1)                                 \
    X(COS, "cos", "float", 1)                                 \
    X(LG2, "lg2", "float", 1)                                 \
    X(EX2, "ex2", "float", 1)                                 \
    X(TANH, "tanh", "float", 1)                               \
    /* 9.7.6 comparison and selection */                      \
    X(SET, "set", "compare", 1)                               \
    X(SETP, "setp", "compare", 1)                             \
    X(SELP, "selp", "compare", 1)                             \
    X(SLCT, "slct", "compare", 1)                             \
    /* 9.7.7 logic and shift */                               \
    X(AND, "and", "logic", 1)                                 \
    X(OR, "or", "logic", 1)                                   \
    X(XOR, "xor", "logic", 1)                                 \
    X(NOT, "not", "logic", 1)                                 \
    X(CNOT, "cnot", "logic", 1)                               \
    X(LOP3, "lop3", "logic", 1)                               \
    X(SHF, "shf", "logic", 1)                                 \
    X(SHL, "shl", "logic", 1)                                 \
    X(SHR, "shr", "logic", 1)                                 \
    /* 9.7.8 data movement and conversion */                  \
    X(MOV, "mov", "data", 1)                                  \
    X(SHFL, "shfl", "data", 1)                                \
    X(SHFL_SYNC, "shfl.sync", "data", 1)                      \
    X(PRMT, "prmt", "data", 1)                                \
    X(LD, "ld", "data", 1)                                    \
    X(LDU, "ldu", "data", 1)                                  \
    X(ST, "st", "data", 1)                                    \
    X(ST_ASYNC, "st.async", "data", 0)                        \
    X(MULTIMEM_LD_REDUCE, "multimem.ld_reduce", "data", 1)    \
    X(MULTIMEM_ST, "multimem.st", "data", 1)                  \
    X(MULTIMEM_RED, "multimem.red", "data", 1)                \
    X(PREFETCH, "prefetch", "data", 1)                        \
    X(PREFETCHU, "prefetchu", "data", 1)                      \
    X(APPLYPRIORITY, "applypriority", "data", 1)              \
    X(DISCARD, "discard", "data", 1)                          \
    X(CREATEPOLICY, "createpolicy", "data", 0)                \
    X(ISSPACEP, "isspacep", "data", 1)                        \
    X(CVTA, "cvta", "data", 1)                                \
    X(CVT, "cvt", "data", 1)                                  \
    X(CVT_PACK, "cvt.pack", "data", 0)                        \
    X(MAPA, "mapa", "data", 0)                                \
    X(GETCTARANK, "getctarank", "data", 0)                    \
    X(CP_ASYNC, "cp.async", "data", 1)                        \
    X(CP_ASYNC_COMMIT_GROUP, "cp.async.commit_group", "data", 1) \
    X(CP_ASYNC_WAIT_GROUP, "cp.async.wait_group", "data", 1)  \
    X(CP_ASYNC_WAIT_ALL, "cp.async.wait_all", "data", 1)      \
    X(CP_ASYNC_BULK, "cp.async.bulk", "data", 0)              \
    X(CP_REDUCE_ASYNC_BULK, "cp.reduce.async.bulk", "data", 0) \
    X(TENSORMAP_REPLACE, "tensormap.replace", "data", 0)      \
    /* 9.7.9 texture, 9.7.10 surface */                       \
    X(TEX, "tex", "texture", 0)                               \
    X(TLD4, "tld4", "texture", 0)                             \
    X(TXQ, "txq", "texture", 0)                               \
    X(SULD, "suld", "surface", 0)                             \
    X(SUST, "sust", "surface", 0)                             \
    X(SURED, "sured", "surface", 0)                           \
    X(SUQ, "suq", "surface", 0)                               \
    /* 9.7.11 control flow */                                 \
    X(BRA, "bra", "control", 1)                               \
    X(BRX_IDX, "brx.idx", "control", 0)                       \
    X(CALL, "call", "control", 1)                             \
    X(RET, "ret", "control", 1)                               \
    X(EXIT, "exit", "control", 1)                             \
    /* 9.7.12 parallel synchronization and communication */   \
    X(BAR_SYNC, "bar.sync", "sync", 1)                        \
    X(BAR_ARRIVE, "bar.arrive", "sync", 1)                    \
    X(BAR_RED, "bar.red", "sync", 1)                          \
    X(BAR_CTA_SYNC, "bar.cta.sync", "sync", 1)                \
    X(BAR_CTA_ARRIVE, "bar.cta.arrive", "sync", 1)            \
    X(BAR_CTA_RED, "bar.cta.red", "sync", 1)                  \
    X(BARRIER_SYNC, "barrier.sync", "sync", 1)                \
    X(BARRIER_ARRIVE, "barrier.arrive", "sync", 1)            \
    X(BARRIER_RED, "barrier.red", "sync", 1)                  \
    X(BARRIER_CTA_SYNC, "barrier.cta.sync", "sync", 1)        \
    X(BARRIER_CTA_ARRIVE, "barrier.cta.arrive", "sync", 1)    \
    X(BARRIER_CTA_RED, "barrier.cta.red", "sync", 1)          \
    X(BARRIER_CLUSTER_ARRIVE, "barrier.cluster.arrive", "sync", 0) \
    X(BARRIER_CLUSTER_WAIT, "barrier.cluster.wait", "sync", 0) \
    X(BAR_WARP_SYNC, "bar.warp.sync", "sync", 1)              \
    X(MEMBAR, "membar", "sync", 1)                            \
    X(FENCE, "fence", "sync", 1)                              \
    X(ATOM, "atom", "sync", 1)                                \
    X(RED, "red", "sync", 1)                                  \
    X(RED_ASYNC, "red.async", "sync", 0)                      \
    X(VOTE, "vote", "sync", 1)                                \
    X(VOTE_SYNC, "vote.sync", "sync", 1)                      \
    X(MATCH_SYNC, "match", "sync", 1) /* written match.any.sync, match.all.sync */                    \
    X(ACTIVEMASK, "activemask", "sync", 1)                    \
    X(REDUX_SYNC, "redux.sync", "sync", 1)                    \
    X(GRIDDEPCONTROL, "griddepcontrol", "sync", 1)            \
    X(ELECT_SYNC, "elect.sync", "sync", 1)                    \
    X(MBARRIER_INIT, "mbarrier.init", "sync", 0)              \
    X(MBARRIER_INVAL, "mbarrier.inval", "sync", 0)            \
    X(MBARRIER_ARRIVE, "mbarrier.arrive", "sync", 0)          \
    X(MBARRIER_ARRIVE_DROP, "mbarrier.arrive_drop", "sync", 0) \
    X(MBARRIER_TEST_WAIT, "mbarrier.test_wait", "sync", 0)    \
    X(MBARRIER_TRY_WAIT, "mbarrier.try_wait", "sync", 0)      \
    X(MBARRIER_PENDING_COUNT, "mbarrier.pending_count", "sync", 0) \
    X(MBARRIER_EXPECT_TX, "mbarrier.expect_tx", "sync", 0)    \
    X(MBARRIER_COMPLETE_TX, "mbarrier.complete_tx", "sync", 0) \
    /* 9.7.13-9.7.16 warp-level and warpgroup matrix, tensor   \
     * memory: not done yet, refused at load */               \
    X(WMMA_LOAD, "wmma.load", "matrix", 0)                    \
    X(WMMA_STORE, "wmma.store", "matrix", 0)                  \
    X(WMMA_MMA, "wmma.mma", "matrix", 0)                      \
    X(MMA, "mma", "matrix", 0)                                \
    X(MMA_SP, "mma.sp", "matrix", 0)                          \
    X(LDMATRIX, "ldmatrix", "matrix", 0)                      \
    X(STMATRIX, "stmatrix", "matrix", 0)                      \
    X(MOVMATRIX, "movmatrix", "matrix", 0)                    \
    X(WGMMA_FENCE, "wgmma.fence", "matrix", 0)                \
    X(WGMMA_MMA_ASYNC, "wgmma.mma_async", "matrix", 0)        \
    X(WGMMA_COMMIT_GROUP, "wgmma.commit_group", "matrix", 0)  \
    X(WGMMA_WAIT_GROUP, "wgmma.wait_group", "matrix", 0)      \
    X(TCGEN05, "tcgen05", "matrix", 0)                        \
    /* 9.7.18 video instructions */                           \
    X(VADD, "vadd", "video", 0)                               \
    X(VSUB, "vsub", "video", 0)                               \
    X(VABSDIFF, "vabsdiff", "video", 0)                       \
    X(VMIN, "vmin", "video", 0)                               \
    X(VMAX, "vmax", "video", 0)                               \
    X(VSHL, "vshl", "video", 0)                               \
    X(VSHR, "vshr", "video", 0)                               \
    X(VMAD, "vmad", "video", 0)                               \
    X(VSET, "vset", "video", 0)                               \
    /* 9.7.19 miscellaneous */                                \
    X(BRKPT, "brkpt", "misc", 1)                              \
    X(NANOSLEEP, "nanosleep", "misc", 1)                      \
    X(PMEVENT, "pmevent", "misc", 1)                          \
    X(TRAP, "trap", "misc", 1)                                \
    X(SETMAXNREG, "setmaxnreg", "misc", 1)                    \
    /* rows the front end added after the ISA's order: what    \
     * the sections above lack and nvcc or inline PTX writes   \
     * (stack and alloca, istypep, bulk copies and tensor maps, \
     * cluster launch control, SIMD video) */                  \
    X(STACKSAVE, "stacksave", "misc", 0)                      \
    X(STACKRESTORE, "stackrestore", "misc", 0)                \
    X(ALLOCA, "alloca", "misc", 0)                            \
    X(ISTYPEP, "istypep", "texture", 0)                       \
    X(CP_ASYNC_MBARRIER_ARRIVE, "cp.async.mbarrier.arrive", "data", 0)\
    X(CP_ASYNC_BULK_TENSOR, "cp.async.bulk.tensor", "data", 0)\
    X(CP_ASYNC_BULK_PREFETCH, "cp.async.bulk.prefetch", "data", 0)\
    X(CP_ASYNC_BULK_COMMIT_GROUP, "cp.async.bulk.commit_group", "data", 0)\
    X(CP_ASYNC_BULK_WAIT_GROUP, "cp.async.bulk.wait_group", "data", 0)\
    X(TENSORMAP_CP_FENCEPROXY, "tensormap.cp_fenceproxy", "data", 0)\
    X(ST_BULK, "st.bulk", "data", 0)                          \
    X(CLUSTERLAUNCHCONTROL_TRY_CANCEL, "clusterlaunchcontrol.try_cancel", "sync", 0)\
    X(CLUSTERLAUNCHCONTROL_QUERY_CANCEL, "clusterlaunchcontrol.query_cancel", "sync", 0)\
    X(VADD2, "vadd2", "video", 0)                             \
    X(VADD4, "vadd4", "video", 0)                             \
    X(VSUB2, "vsub2", "video", 0)                             \
    X(VSUB4, "vsub4", "video", 0)                             \
    X(VAVRG2, "vavrg2", "video", 0)                           \
    X(VAVRG4, "vavrg4", "video", 0)                           \
    X(VABSDIFF2, "vabsdiff2", "video", 0)                     \
    X(VABSDIFF4, "vabsdiff4", "video", 0)                     \
    X(VMIN2, "vmin2", "video", 0)                             \
    X(VMIN4, "vmin4", "video", 0)                             \
    X(VMAX2, "vmax2", "video", 0)                             \
    X(VMAX4, "vmax4", "video", 0)                             \
    X(VSET2, "vset2", "video", 0)                             \
    X(VSET4, "vset4", "video", 0)

typedef enum fab__ptx_op {
#define FAB__PTX_OP_ENUM(id, mnemonic, section, runs) FAB__PTX_OP_##id,
    FAB__PTX_OPCODES(FAB__PTX_OP_ENUM)
#undef FAB__PTX_OP_ENUM
    FAB__PTX_OP_COUNT
} fab__ptx_op_t;

#endif /* FAB_PTX_OPCODES_H */
