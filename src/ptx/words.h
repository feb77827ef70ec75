/* The modifier words of PTX instructions other than types, state spaces and
 * vector widths (module.h pulls those out), one row each: X(id, ".text").
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
    X(L1, ".L1") X(L2, ".L2")

typedef enum fab__ptx_word {
    FAB__PTX_W_NONE = 0,
#define FAB__PTX_WORD_ENUM(id, text) FAB__PTX_W_##id,
    FAB__PTX_WORDS(FAB__PTX_WORD_ENUM)
#undef FAB__PTX_WORD_ENUM
    FAB__PTX_W_COUNT
} fab__ptx_word_t;

#endif /* FAB_PTX_WORDS_H */
