/* The decoder's own parts (decode.c: operands, constants, reconvergence;
 * slots.c: register slots; insn.c: what each opcode takes; load.c: programs, layouts, windows) and
 * the scalar conversions every part shares (float.c). */
#ifndef FAB_PTX_DECODE_H
#define FAB_PTX_DECODE_H

#include "src/ptx/engine.h"

typedef struct fab__ptx_dc {
    fab__ptx_program_t *p;
    const fab__ptx_module_t *mod;
    const fab__ptx_func_t *f;
    fab__ptx_code_t *c;
    fab__ptx_diag_t *diag;
    const fab__ptx_insn_t *in;
    uint32_t *hi;          /* per PTX register: the slot of a .b128 one's high half, else NONE */
    uint32_t *hash;
    uint32_t hcap, ccap, callcap;
} fab__ptx_dc_t;

bool fab__ptx_op_runs(unsigned op);
uint32_t fab__ptx_type_bits(unsigned t);
bool fab__ptx_is_sint(unsigned t);
bool fab__ptx_is_int(unsigned t);
bool fab__ptx_is_float(unsigned t);

int fab__ptx_dc_fail(fab__ptx_dc_t *dc, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
int fab__ptx_dc_const(fab__ptx_dc_t *dc, const fab__ptx_const_t *k, uint32_t *slot_out);
int fab__ptx_dc_imm(fab__ptx_dc_t *dc, uint64_t v, uint32_t *slot_out);
int fab__ptx_dc_sym(fab__ptx_dc_t *dc, uint8_t symkind, uint32_t sym, int64_t off, uint8_t *space_out,
                    uint32_t *slot_out);
int fab__ptx_dc_src(fab__ptx_dc_t *dc, const fab__ptx_operand_t *o, unsigned t, uint32_t *slot_out);
int fab__ptx_dc_dst(fab__ptx_dc_t *dc, const fab__ptx_operand_t *o, unsigned t, uint32_t *slot_out);
/* A .b128 register (or _ as a destination): the slots of its low and high
 * 64-bit halves, two registers to the allocator. */
int fab__ptx_dc_src128(fab__ptx_dc_t *dc, const fab__ptx_operand_t *o, uint32_t *lo, uint32_t *hi);
int fab__ptx_dc_dst128(fab__ptx_dc_t *dc, const fab__ptx_operand_t *o, uint32_t *lo, uint32_t *hi);
int fab__ptx_dc_addr(fab__ptx_dc_t *dc, const fab__ptx_operand_t *o, unsigned space, fab__ptx_x_t *x);
int fab__ptx_dc_reconv(fab__ptx_code_t *c);
/* wide.c: mov.b128 and atom.{cas,exch}.b128 (nsrc: 2 or 1 sources) */
int fab__ptx_dc_mov128(fab__ptx_dc_t *dc, const fab__ptx_insn_t *in, fab__ptx_x_t *x);
int fab__ptx_dc_atom128(fab__ptx_dc_t *dc, const fab__ptx_insn_t *in, fab__ptx_x_t *x, unsigned nsrc);
/* slots.c: registers onto as few window slots as their live ranges allow
 * (c->nregs becomes the slots, c->nvregs the PTX registers). */
int fab__ptx_dc_slots(fab__ptx_code_t *c, const fab__ptx_func_t *f);
/* Whether op's handler was checked against exec.h's contract for shared slots. */
bool fab__ptx_slots_checked(unsigned op);
int fab__ptx_decode_func(fab__ptx_program_t *p, uint32_t fi, fab__ptx_diag_t *diag);
int fab__ptx_decode_insn(fab__ptx_dc_t *dc, const fab__ptx_insn_t *in, fab__ptx_x_t *x);

/* float.c: half and bfloat16 conversions with a rounding word. */
uint16_t fab__ptx_f32_to_f16(float f, unsigned rnd);
uint16_t fab__ptx_f32_to_bf16(float f, unsigned rnd);
uint16_t fab__ptx_f64_to_f16(double d, unsigned rnd);
float fab__ptx_f16_to_f32(uint16_t h);
float fab__ptx_bf16_to_f32(uint16_t h);

#endif /* FAB_PTX_DECODE_H */
