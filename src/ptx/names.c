/* The names of the PTX engine's enumerations, from their one lists
 * (opcodes.h, words.h, module.h), for messages and docs. */
#include "src/ptx/ptx.h"

static const char *const fab__ptx_op_names[] = {
#define FAB__PTX_OP_NAME(id, mnemonic, section, runs) mnemonic,
    FAB__PTX_OPCODES(FAB__PTX_OP_NAME)
#undef FAB__PTX_OP_NAME
};

static const char *const fab__ptx_word_names[] = {
    "",
#define FAB__PTX_WORD_NAME(id, text) text,
    FAB__PTX_WORDS(FAB__PTX_WORD_NAME)
#undef FAB__PTX_WORD_NAME
};

static const char *const fab__ptx_type_names[] = {
    "", ".b8", ".b16", ".b32", ".b64", ".b128", ".u8", ".u16", ".u32", ".u64",
    ".s8", ".s16", ".s32", ".s64", ".f16", ".f16x2", ".bf16", ".bf16x2",
    ".tf32", ".f32", ".f64", ".e4m3", ".e5m2", ".e4m3x2", ".e5m2x2", ".pred",
};
_Static_assert(sizeof(fab__ptx_type_names) / sizeof(fab__ptx_type_names[0]) == FAB__PTX_T_COUNT,
               "a name for every type");

static const char *const fab__ptx_space_names[] = {
    "", ".reg", ".sreg", ".const", ".global", ".local", ".param", ".shared",
    ".shared::cluster", ".tex",
};
_Static_assert(sizeof(fab__ptx_space_names) / sizeof(fab__ptx_space_names[0]) == FAB__PTX_S_COUNT,
               "a name for every state space");

const char *fab__ptx_op_name(unsigned op)
{
    return op < FAB__PTX_OP_COUNT ? fab__ptx_op_names[op] : "?";
}

const char *fab__ptx_word_name(unsigned word)
{
    return word < FAB__PTX_W_COUNT ? fab__ptx_word_names[word] : "?";
}

const char *fab__ptx_type_name(unsigned type)
{
    return type < FAB__PTX_T_COUNT ? fab__ptx_type_names[type] : "?";
}

const char *fab__ptx_space_name(unsigned space)
{
    return space < FAB__PTX_S_COUNT ? fab__ptx_space_names[space] : "?";
}
