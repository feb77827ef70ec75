// Inline PTX with its own scopes, labels, predicates and vector registers,
// as libraries (NCCL, CUTLASS) write it.
__device__ __forceinline__ unsigned ld_acquire(const unsigned *p)
{
    unsigned v;
    asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}
__device__ __forceinline__ void st_release(unsigned *p, unsigned v)
{
    asm volatile("st.release.sys.global.u32 [%0], %1;" :: "l"(p), "r"(v) : "memory");
}
__global__ void asm_kernel(unsigned *p, unsigned long long *q)
{
    unsigned r;
    asm volatile("{\n\t.reg .pred P1;\n\t.reg .u32 t<2>;\n\tsetp.eq.u32 P1, %1, 0;\n\t@P1 mov.u32 t0, 1;\n\t@!P1 mov.u32 t0, 2;\n\tadd.u32 %0, t0, %1;\n}" : "=r"(r) : "r"(p[0]));
    asm volatile("{\n\t.reg .pred P1;\n\tsetp.ne.u32 P1, %0, 0;\n\t@P1 st.volatile.global.u32 [%1], %0;\n}" :: "r"(r), "l"(p));
    unsigned a, b, c, d;
    asm volatile("ld.volatile.global.v4.u32 {%0, %1, %2, %3}, [%4];" : "=r"(a), "=r"(b), "=r"(c), "=r"(d) : "l"(p));
    asm volatile("{\n\t.reg .b64 tmp;\n\tmov.b64 tmp, {%1, %2};\n\tmov.b64 %0, tmp;\n}" : "=l"(q[0]) : "r"(a), "r"(b));
    asm volatile("red.release.gpu.global.add.u64 [%0], %1;" :: "l"(q), "l"((unsigned long long)c));
    asm volatile("fence.acq_rel.sys;");
    asm volatile("membar.gl;");
    unsigned lo, hi;
    asm volatile("mov.b64 {%0, %1}, %2;" : "=r"(lo), "=r"(hi) : "l"(q[1]));
    unsigned x;
    asm volatile("lop3.b32 %0, %1, %2, %3, 0x96;" : "=r"(x) : "r"(lo), "r"(hi), "r"(d));
    asm volatile("shf.l.wrap.b32 %0, %1, %2, %3;" : "=r"(x) : "r"(x), "r"(lo), "r"(hi));
    asm volatile("prmt.b32 %0, %1, %2, 0x5410;" : "=r"(x) : "r"(x), "r"(lo));
    asm volatile("bfe.u32 %0, %1, 4, 8;" : "=r"(x) : "r"(x));
    asm volatile("bfi.b32 %0, %1, %2, 8, 4;" : "=r"(x) : "r"(x), "r"(lo));
    asm volatile("{ .reg .b32 a<2>; cvt.rn.f16x2.f32 a0, %1, %2; mov.b32 %0, a0; }" : "=r"(x) : "f"(1.0f), "f"(2.0f));
    asm volatile("{\n\t.reg .pred %%q;\n$Lloop%=:\n\tld.volatile.global.u32 %0, [%1];\n\tsetp.eq.u32 %%q, %0, 0;\n\t@%%q bra $Lloop%=;\n}" : "=r"(x) : "l"(p));
    st_release(p + 1, ld_acquire(p + 2) + x);
    asm volatile("trap;");
}
