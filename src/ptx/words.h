/* The modifier words of PTX instructions other than types, state spaces and
 * vector widths (module.h pulls those out), one row each: X(id, ".text"):
 * every word of the PTX ISA 9.0 instruction descriptions, those of the
 * instructions the engine does not run included (matrix, texture, bulk
 * copies), so that a load names the instruction it refuses rather than a
 * word. Types the enum lacks (.u4, .e2m1, ...) are words; so is .b1, which is
 * a byte selector to the video instructions and a type to mma.
 * The parser refuses a word this list lacks ("unknown modifier"); what a
 * word means depends on the opcode and is the loader's to say (decode.c).
 * Rows follow no order but are grouped by the ISA section that introduces
 * them; add a word where its group is. */
#ifndef FAB_PTX_WORDS_H
#define FAB_PTX_WORDS_H

#define FAB__PTX_WORDS(X)                                                               \
    /* integer and float arithmetic */                                                  \
    X(LO, ".lo") X(HI, ".hi") X(WIDE, ".wide") X(SAT, ".sat") X(CC, ".cc")              \
    X(FTZ, ".ftz") X(APPROX, ".approx") X(FULL, ".full") X(NAN_, ".NaN")                \
    X(XORSIGN, ".xorsign") X(ABS, ".abs") X(RELU, ".relu") X(SATFINITE, ".satfinite")   \
    X(SHIFTAMT, ".shiftamt") X(CLAMP, ".clamp") X(WRAP, ".wrap") X(L, ".l") X(R, ".r")  \
    X(B0, ".b0") X(B1, ".b1") X(B2, ".b2") X(B3, ".b3") X(H0, ".h0") X(H1, ".h1")       \
    X(F4E, ".f4e") X(B4E, ".b4e") X(RC8, ".rc8") X(ECL, ".ecl") X(ECR, ".ecr")          \
    X(RC16, ".rc16")                                                                    \
    /* rounding */                                                                      \
    X(RN, ".rn") X(RZ, ".rz") X(RM, ".rm") X(RP, ".rp") X(RNA, ".rna") X(RS, ".rs")     \
    X(RNI, ".rni") X(RZI, ".rzi") X(RMI, ".rmi") X(RPI, ".rpi")                         \
    /* comparison (setp, set, slct) and testp */                                        \
    X(EQ, ".eq") X(NE, ".ne") X(LT, ".lt") X(LE, ".le") X(GT, ".gt") X(GE, ".ge")       \
    X(LS, ".ls") X(HS, ".hs") X(EQU, ".equ") X(NEU, ".neu") X(LTU, ".ltu")              \
    X(LEU, ".leu") X(GTU, ".gtu") X(GEU, ".geu") X(NUM, ".num") X(NAN, ".nan")          \
    X(FINITE, ".finite") X(INFINITE, ".infinite") X(NUMBER, ".number")                  \
    X(NOTANUMBER, ".notanumber") X(NORMAL, ".normal") X(SUBNORMAL, ".subnormal")        \
    /* boolean combination, atomic and reduction operations */                          \
    X(AND, ".and") X(OR, ".or") X(XOR, ".xor") X(ADD, ".add") X(MIN, ".min")            \
    X(MAX, ".max") X(INC, ".inc") X(DEC, ".dec") X(EXCH, ".exch") X(CAS, ".cas")        \
    X(POPC, ".popc") X(NOFTZ, ".noftz")                                                 \
    /* shuffles, votes, matches */                                                      \
    X(UP, ".up") X(DOWN, ".down") X(BFLY, ".bfly") X(IDX, ".idx") X(ALL, ".all")        \
    X(ANY, ".any") X(UNI, ".uni") X(BALLOT, ".ballot")                                  \
    /* memory consistency: semantics, scopes, proxies */                                \
    X(WEAK, ".weak") X(VOLATILE, ".volatile") X(RELAXED, ".relaxed")                    \
    X(ACQUIRE, ".acquire") X(RELEASE, ".release") X(ACQ_REL, ".acq_rel") X(SC, ".sc")   \
    X(MMIO, ".mmio") X(CTA, ".cta") X(CLUSTER, ".cluster") X(GPU, ".gpu") X(SYS, ".sys") \
    X(GL, ".gl") X(PROXY, ".proxy") X(ASYNC, ".async") X(ALIAS, ".alias")               \
    X(TO, ".to") X(NC, ".nc") X(ALIGNED, ".aligned") X(SYNC, ".sync")                   \
    X(ARRIVE, ".arrive") X(RED, ".red") X(WAIT, ".wait")                                \
    /* cache operators and hints */                                                     \
    X(CA, ".ca") X(CG, ".cg") X(CS, ".cs") X(LU, ".lu") X(CV, ".cv") X(WB, ".wb")       \
    X(WT, ".wt") X(L1_EVICT_NORMAL, ".L1::evict_normal")                                \
    X(L1_EVICT_UNCHANGED, ".L1::evict_unchanged") X(L1_EVICT_FIRST, ".L1::evict_first") \
    X(L1_EVICT_LAST, ".L1::evict_last") X(L1_NO_ALLOCATE, ".L1::no_allocate")           \
    X(L2_EVICT_NORMAL, ".L2::evict_normal") X(L2_EVICT_FIRST, ".L2::evict_first")       \
    X(L2_EVICT_LAST, ".L2::evict_last") X(L2_CACHE_HINT, ".L2::cache_hint")             \
    X(L2_64B, ".L2::64B") X(L2_128B, ".L2::128B") X(L2_256B, ".L2::256B")               \
    X(L1, ".L1") X(L2, ".L2")                                                           \
    /* more arithmetic and conversion words; types module.h's enum lacks */             \
    X(OOB, ".oob") X(U4, ".u4") X(S4, ".s4") X(U2, ".u2") X(S2, ".s2")                  \
    X(E2M1, ".e2m1") X(E2M3, ".e2m3") X(E3M2, ".e3m2") X(UE8M0, ".ue8m0")               \
    X(UE4M3, ".ue4m3") X(E2M1X2, ".e2m1x2") X(E2M3X2, ".e2m3x2") X(E3M2X2, ".e3m2x2")   \
    X(UE8M0X2, ".ue8m0x2") X(E2M1X4, ".e2m1x4") X(E4M3X4, ".e4m3x4")                    \
    X(E5M2X4, ".e5m2x4") X(E2M3X4, ".e2m3x4") X(E3M2X4, ".e3m2x4")                      \
    X(S2F6X2, ".s2f6x2") X(F32X2, ".f32x2") X(S16X2, ".s16x2") X(U16X2, ".u16x2")       \
    X(SCALED_N2_UE8M0, ".scaled::n2::ue8m0")                                            \
    /* memory: cache and eviction hints, policies, bulk copies and proxies */           \
    X(L2_EVICT_UNCHANGED, ".L2::evict_unchanged") X(UNIFIED, ".unified")                \
    X(FRACTIONAL, ".fractional") X(RANGE, ".range") X(TENSORMAP, ".tensormap")          \
    X(NOINC, ".noinc") X(MBARRIER, ".mbarrier")                                         \
    X(MBARRIER_COMPLETE_TX_BYTES, ".mbarrier::complete_tx::bytes")                      \
    X(MBARRIER_ARRIVE_ONE, ".mbarrier::arrive::one")                                    \
    X(MULTICAST_CLUSTER, ".multicast::cluster")                                         \
    X(MULTICAST_CLUSTER_ALL, ".multicast::cluster::all") X(BULK_GROUP, ".bulk_group")   \
    X(BULK, ".bulk") X(TENSOR, ".tensor") X(W1D, ".1d") X(W2D, ".2d") X(W3D, ".3d")     \
    X(W4D, ".4d") X(W5D, ".5d") X(TILE, ".tile") X(IM2COL, ".im2col")                   \
    X(IM2COL_NO_OFFS, ".im2col_no_offs") X(TILE_GATHER4, ".tile::gather4")              \
    X(TILE_SCATTER4, ".tile::scatter4") X(IM2COL_W, ".im2col::w")                       \
    X(IM2COL_W_128, ".im2col::w::128") X(CTA_GROUP_1, ".cta_group::1")                  \
    X(CTA_GROUP_2, ".cta_group::2") X(PREFETCH, ".prefetch") X(READ, ".read")           \
    X(CP_MASK, ".cp_mask") X(COMMIT_GROUP, ".commit_group")                             \
    X(WAIT_GROUP, ".wait_group") X(TENSORMAP_GENERIC, ".tensormap::generic")            \
    X(ASYNC_GENERIC, ".async::generic") X(GENERIC_ASYNC, ".generic::async")             \
    X(MBARRIER_INIT, ".mbarrier_init") X(OP_RESTRICT, ".op_restrict")                   \
    X(SYNC_RESTRICT_SHARED_CLUSTER, ".sync_restrict::shared::cluster")                  \
    X(SYNC_RESTRICT_SHARED_CTA, ".sync_restrict::shared::cta") X(ACC_F32, ".acc::f32")  \
    X(ACC_F16, ".acc::f16") X(GLOBAL_ADDRESS, ".global_address") X(RANK, ".rank")       \
    X(BOX_DIM, ".box_dim") X(GLOBAL_DIM, ".global_dim")                                 \
    X(GLOBAL_STRIDE, ".global_stride") X(ELEMENT_STRIDE, ".element_stride")             \
    X(ELEMTYPE, ".elemtype") X(INTERLEAVE_LAYOUT, ".interleave_layout")                 \
    X(SWIZZLE_MODE, ".swizzle_mode") X(SWIZZLE_ATOMICITY, ".swizzle_atomicity")         \
    X(FILL_MODE, ".fill_mode") X(B1024, ".b1024") X(IS_CANCELED, ".is_canceled")        \
    X(GET_FIRST_CTAID, ".get_first_ctaid") X(GET_FIRST_CTAID_X, ".get_first_ctaid::x")  \
    X(GET_FIRST_CTAID_Y, ".get_first_ctaid::y")                                         \
    X(GET_FIRST_CTAID_Z, ".get_first_ctaid::z")                                         \
    /* barriers, mbarriers, grid dependencies, register limits */                       \
    X(PARITY, ".parity") X(NOCOMPLETE, ".noComplete") X(EXPECT_TX, ".expect_tx")        \
    X(LAUNCH_DEPENDENTS, ".launch_dependents") X(MASK, ".mask")                         \
                                                                                        \
    /* textures and surfaces */                                                         \
    X(A1D, ".a1d") X(A2D, ".a2d") X(CUBE, ".cube") X(ACUBE, ".acube")                   \
    X(W2DMS, ".2dms") X(A2DMS, ".a2dms") X(LEVEL, ".level") X(GRAD, ".grad")            \
    X(BASE, ".base") X(WIDTH, ".width") X(HEIGHT, ".height") X(DEPTH, ".depth")         \
    X(CHANNEL_DATA_TYPE, ".channel_data_type") X(CHANNEL_ORDER, ".channel_order")       \
    X(NORMALIZED_COORDS, ".normalized_coords") X(FILTER_MODE, ".filter_mode")           \
    X(ADDR_MODE_0, ".addr_mode_0") X(ADDR_MODE_1, ".addr_mode_1")                       \
    X(ADDR_MODE_2, ".addr_mode_2") X(SAMPLES, ".samples") X(ARRAY_SIZE, ".array_size")  \
    X(NUM_MIPMAP_LEVELS, ".num_mipmap_levels") X(NUM_SAMPLES, ".num_samples")           \
    X(FORCE_UNNORMALIZED_COORDS, ".force_unnormalized_coords") X(B, ".b") X(P, ".p")    \
    X(TRAP, ".trap") X(ZERO, ".zero") X(TEXREF, ".texref")                              \
    X(SAMPLERREF, ".samplerref") X(SURFREF, ".surfref") X(G, ".g") X(A, ".a")           \
    X(C, ".c") X(D, ".d")                                                               \
    /* matrix instructions (wmma, mma, ldmatrix, wgmma, tcgen05): parsed so that a load can name the instruction it refuses */\
    X(ROW, ".row") X(COL, ".col") X(TRANS, ".trans") X(X1, ".x1") X(X2, ".x2")          \
    X(X4, ".x4") X(X8, ".x8") X(X16, ".x16") X(X32, ".x32") X(X64, ".x64")              \
    X(X128, ".x128") X(M8N8, ".m8n8") X(M16N16, ".m16n16") X(M8N16, ".m8n16")           \
    X(M16N8, ".m16n8") X(M8N8K4, ".m8n8k4") X(M8N8K16, ".m8n8k16")                      \
    X(M8N8K32, ".m8n8k32") X(M8N8K128, ".m8n8k128") X(M16N8K4, ".m16n8k4")              \
    X(M16N8K8, ".m16n8k8") X(M16N8K16, ".m16n8k16") X(M16N8K32, ".m16n8k32")            \
    X(M16N8K64, ".m16n8k64") X(M16N8K128, ".m16n8k128") X(M16N8K256, ".m16n8k256")      \
    X(M16N16K16, ".m16n16k16") X(M32N8K16, ".m32n8k16") X(M8N32K16, ".m8n32k16")        \
    X(M16N16K8, ".m16n16k8") X(SP, ".sp")                                               \
    X(SP_ORDERED_METADATA, ".sp::ordered_metadata") X(KIND_F16, ".kind::f16")           \
    X(KIND_TF32, ".kind::tf32") X(KIND_F8F6F4, ".kind::f8f6f4")                         \
    X(KIND_I8, ".kind::i8") X(KIND_MXF8F6F4, ".kind::mxf8f6f4")                         \
    X(KIND_MXF4, ".kind::mxf4") X(KIND_MXF4NVF4, ".kind::mxf4nvf4")                     \
    X(BLOCK_SCALE, ".block_scale") X(SCALE_VEC_1X, ".scale_vec::1X")                    \
    X(SCALE_VEC_2X, ".scale_vec::2X") X(SCALE_VEC_4X, ".scale_vec::4X")                 \
    X(B8X16, ".b8x16") X(B6X16_P32, ".b6x16_p32") X(B4X16_P64, ".b4x16_p64")            \
    X(ALLOC, ".alloc") X(DEALLOC, ".dealloc")                                           \
    X(RELINQUISH_ALLOC_PERMIT, ".relinquish_alloc_permit") X(LD, ".ld") X(ST, ".st")    \
    X(WAIT_LD, ".wait::ld") X(WAIT_ST, ".wait::st") X(CP, ".cp") X(SHIFT, ".shift")     \
    X(MMA, ".mma") X(WS, ".ws") X(COMMIT, ".commit")                                    \
    X(FENCE_BEFORE_THREAD_SYNC, ".fence::before_thread_sync")                           \
    X(FENCE_AFTER_THREAD_SYNC, ".fence::after_thread_sync") X(W16X64B, ".16x64b")       \
    X(W16X128B, ".16x128b") X(W16X256B, ".16x256b") X(W32X32B, ".32x32b")               \
    X(W16X32BX2, ".16x32bx2") X(W128X256B, ".128x256b") X(W4X256B, ".4x256b")           \
    X(W128X128B, ".128x128b") X(W64X128B, ".64x128b") X(PACK_16B, ".pack::16b")         \
    X(UNPACK_16B, ".unpack::16b") X(WARPX2_02_13, ".warpx2::02_13")                     \
    X(WARPX2_01_23, ".warpx2::01_23") X(WARPX4, ".warpx4")                              \
    X(COLLECTOR_A_FILL, ".collector::a::fill")                                          \
    X(COLLECTOR_A_USE, ".collector::a::use")                                            \
    X(COLLECTOR_A_LASTUSE, ".collector::a::lastuse")                                    \
    X(COLLECTOR_A_DISCARD, ".collector::a::discard")                                    \
    X(COLLECTOR_B0_FILL, ".collector::b0::fill")                                        \
    X(COLLECTOR_B0_USE, ".collector::b0::use")                                          \
    X(COLLECTOR_B0_LASTUSE, ".collector::b0::lastuse")                                  \
    X(COLLECTOR_B0_DISCARD, ".collector::b0::discard") X(ASHIFT, ".ashift")             \
    X(WEIGHT_STATIONARY, ".weight_stationary") X(MMA_ASYNC, ".mma_async")               \
    /* wgmma shapes */                                                                  \
    X(M64N8K8, ".m64n8k8") X(M64N16K8, ".m64n16k8") X(M64N24K8, ".m64n24k8")            \
    X(M64N32K8, ".m64n32k8") X(M64N40K8, ".m64n40k8") X(M64N48K8, ".m64n48k8")          \
    X(M64N56K8, ".m64n56k8") X(M64N64K8, ".m64n64k8") X(M64N72K8, ".m64n72k8")          \
    X(M64N80K8, ".m64n80k8") X(M64N88K8, ".m64n88k8") X(M64N96K8, ".m64n96k8")          \
    X(M64N104K8, ".m64n104k8") X(M64N112K8, ".m64n112k8") X(M64N120K8, ".m64n120k8")    \
    X(M64N128K8, ".m64n128k8") X(M64N136K8, ".m64n136k8") X(M64N144K8, ".m64n144k8")    \
    X(M64N152K8, ".m64n152k8") X(M64N160K8, ".m64n160k8") X(M64N168K8, ".m64n168k8")    \
    X(M64N176K8, ".m64n176k8") X(M64N184K8, ".m64n184k8") X(M64N192K8, ".m64n192k8")    \
    X(M64N200K8, ".m64n200k8") X(M64N208K8, ".m64n208k8") X(M64N216K8, ".m64n216k8")    \
    X(M64N224K8, ".m64n224k8") X(M64N232K8, ".m64n232k8") X(M64N240K8, ".m64n240k8")    \
    X(M64N248K8, ".m64n248k8") X(M64N256K8, ".m64n256k8") X(M64N8K16, ".m64n8k16")      \
    X(M64N16K16, ".m64n16k16") X(M64N24K16, ".m64n24k16") X(M64N32K16, ".m64n32k16")    \
    X(M64N40K16, ".m64n40k16") X(M64N48K16, ".m64n48k16") X(M64N56K16, ".m64n56k16")    \
    X(M64N64K16, ".m64n64k16") X(M64N72K16, ".m64n72k16") X(M64N80K16, ".m64n80k16")    \
    X(M64N88K16, ".m64n88k16") X(M64N96K16, ".m64n96k16") X(M64N104K16, ".m64n104k16")  \
    X(M64N112K16, ".m64n112k16") X(M64N120K16, ".m64n120k16")                           \
    X(M64N128K16, ".m64n128k16") X(M64N136K16, ".m64n136k16")                           \
    X(M64N144K16, ".m64n144k16") X(M64N152K16, ".m64n152k16")                           \
    X(M64N160K16, ".m64n160k16") X(M64N168K16, ".m64n168k16")                           \
    X(M64N176K16, ".m64n176k16") X(M64N184K16, ".m64n184k16")                           \
    X(M64N192K16, ".m64n192k16") X(M64N200K16, ".m64n200k16")                           \
    X(M64N208K16, ".m64n208k16") X(M64N216K16, ".m64n216k16")                           \
    X(M64N224K16, ".m64n224k16") X(M64N232K16, ".m64n232k16")                           \
    X(M64N240K16, ".m64n240k16") X(M64N248K16, ".m64n248k16")                           \
    X(M64N256K16, ".m64n256k16") X(M64N8K32, ".m64n8k32") X(M64N16K32, ".m64n16k32")    \
    X(M64N24K32, ".m64n24k32") X(M64N32K32, ".m64n32k32") X(M64N40K32, ".m64n40k32")    \
    X(M64N48K32, ".m64n48k32") X(M64N56K32, ".m64n56k32") X(M64N64K32, ".m64n64k32")    \
    X(M64N72K32, ".m64n72k32") X(M64N80K32, ".m64n80k32") X(M64N88K32, ".m64n88k32")    \
    X(M64N96K32, ".m64n96k32") X(M64N104K32, ".m64n104k32")                             \
    X(M64N112K32, ".m64n112k32") X(M64N120K32, ".m64n120k32")                           \
    X(M64N128K32, ".m64n128k32") X(M64N136K32, ".m64n136k32")                           \
    X(M64N144K32, ".m64n144k32") X(M64N152K32, ".m64n152k32")                           \
    X(M64N160K32, ".m64n160k32") X(M64N168K32, ".m64n168k32")                           \
    X(M64N176K32, ".m64n176k32") X(M64N184K32, ".m64n184k32")                           \
    X(M64N192K32, ".m64n192k32") X(M64N200K32, ".m64n200k32")                           \
    X(M64N208K32, ".m64n208k32") X(M64N216K32, ".m64n216k32")                           \
    X(M64N224K32, ".m64n224k32") X(M64N232K32, ".m64n232k32")                           \
    X(M64N240K32, ".m64n240k32") X(M64N248K32, ".m64n248k32")                           \
    X(M64N256K32, ".m64n256k32") X(M64N8K256, ".m64n8k256")                             \
    X(M64N16K256, ".m64n16k256") X(M64N24K256, ".m64n24k256")                           \
    X(M64N32K256, ".m64n32k256") X(M64N40K256, ".m64n40k256")                           \
    X(M64N48K256, ".m64n48k256") X(M64N56K256, ".m64n56k256")                           \
    X(M64N64K256, ".m64n64k256") X(M64N72K256, ".m64n72k256")                           \
    X(M64N80K256, ".m64n80k256") X(M64N88K256, ".m64n88k256")                           \
    X(M64N96K256, ".m64n96k256") X(M64N104K256, ".m64n104k256")                         \
    X(M64N112K256, ".m64n112k256") X(M64N120K256, ".m64n120k256")                       \
    X(M64N128K256, ".m64n128k256") X(M64N136K256, ".m64n136k256")                       \
    X(M64N144K256, ".m64n144k256") X(M64N152K256, ".m64n152k256")                       \
    X(M64N160K256, ".m64n160k256") X(M64N168K256, ".m64n168k256")                       \
    X(M64N176K256, ".m64n176k256") X(M64N184K256, ".m64n184k256")                       \
    X(M64N192K256, ".m64n192k256") X(M64N200K256, ".m64n200k256")                       \
    X(M64N208K256, ".m64n208k256") X(M64N216K256, ".m64n216k256")                       \
    X(M64N224K256, ".m64n224k256") X(M64N232K256, ".m64n232k256")                       \
    X(M64N240K256, ".m64n240k256") X(M64N248K256, ".m64n248k256")                       \
    X(M64N256K256, ".m64n256k256")

typedef enum fab__ptx_word {
    FAB__PTX_W_NONE = 0,
#define FAB__PTX_WORD_ENUM(id, text) FAB__PTX_W_##id,
    FAB__PTX_WORDS(FAB__PTX_WORD_ENUM)
#undef FAB__PTX_WORD_ENUM
    FAB__PTX_W_COUNT
} fab__ptx_word_t;

#endif /* FAB_PTX_WORDS_H */
