/* bench_model: the model's cycle, export -> 64 bytes -> decode -> import ->
 * map -> retire, next to a baseline measured in the same run. Not a timed
 * test: run it by hand.
 *
 *   model     fab_memory_export, the bytes copied out, fab_handle_from_bytes,
 *             fab_importer_import, fab_import_map_writable,
 *             fab_memory_retire_export: every integrity check on
 *   baseline  the same cycle as bare struct copies: the 64 bytes copied out
 *             and back, the import's fields read from them, the export count
 *             up and down; no check at all
 *
 * The seed implementation this model was written against is not part of the
 * repository, so the baseline stands in for it: the floor that any
 * implementation of the cycle, checked or not, has to pay. The two loops
 * alternate round by round on one pinned core; each line is min / median /
 * max over the rounds, and the ratio is taken per round.
 *
 * The model remembers, per thread, the last handle it made or found intact,
 * so that the same handle checked again is compared instead of summed again.
 * The first line cycles one allocation's own handle (export, then decode and
 * import it: both checks compare); the second decodes and imports bytes this
 * thread did not just make, as an importing peer always does (two
 * allocations in turn, each cycle taking the handle exported the cycle
 * before: the decode sums the CRC, the import compares).
 *
 * Usage: bench_model [cycles per round, default 1000000] [rounds, default 9] */
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fabmem/model.h"

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void print_row(const char *what, double *v, int n, const char *unit)
{
    qsort(v, (size_t)n, sizeof(double), cmp_double);
    printf("  %-28s %8.2f%s %8.2f%s %8.2f%s\n", what, v[0], unit, v[n / 2], unit, v[n - 1], unit);
}

/* Where the 64 bytes travel between exporter and importer. The barrier
 * makes the compiler store and load them as a real channel would, without
 * turning the copy into 64 separate byte accesses. */
static uint8_t wire[FAB_HANDLE_BYTES];
#define BARRIER() __asm__ __volatile__("" ::: "memory")

/* One round of the cycle. lag 0: the handle exported is the one decoded and
 * imported, so the model's memory of the last handle it made makes both
 * checks compares. lag 1: two allocations in turn, and each cycle decodes
 * and imports the handle exported the cycle before, from the other one: the
 * bytes are not the last this thread made, as a peer's never are, so the
 * decode sums the CRC (and the import then compares). */
static double model_round(fab_memory_t **memories, int lag, fab_importer_t *importer, long cycles)
{
    fab_handle_t out;
    if (lag && fab_memory_export(memories[1], &out) != FAB_SUCCESS)
        exit(1);
    memcpy(wire, out.bytes, sizeof(wire));
    double t0 = now_ns();
    for (long i = 0; i < cycles; i++) {
        fab_memory_t *memory = memories[lag ? i & 1 : 0];
        fab_handle_t in;
        fab_import_t import;
        uint8_t raw[FAB_HANDLE_BYTES];
        if (lag)
            memcpy(raw, wire, sizeof(raw)); /* the other allocation's, from the cycle before */
        if (fab_memory_export(memory, &out) != FAB_SUCCESS)
            exit(1);
        memcpy(wire, out.bytes, sizeof(wire));
        BARRIER();
        if (!lag)
            memcpy(raw, wire, sizeof(raw));
        if (fab_handle_from_bytes(raw, sizeof(raw), &in) != FAB_SUCCESS ||
            fab_importer_import(importer, &in, &import) != FAB_SUCCESS ||
            fab_import_map_writable(&import) != FAB_SUCCESS ||
            fab_memory_retire_export(memories[lag ? (i + 1) & 1 : 0]) != FAB_SUCCESS)
            exit(1);
    }
    double t = (now_ns() - t0) / (double)cycles;
    if (lag && fab_memory_retire_export(memories[(cycles + 1) & 1]) != FAB_SUCCESS)
        exit(1);
    return t;
}

/* The baseline's state: an allocation's encoded handle and export count, and
 * the import's fields, as plain structs. */
struct plain_memory {
    fab_handle_t handle;
    uint32_t exports;
};

struct plain_import {
    uint64_t id;
    uint8_t uuid[16];
    uint64_t size;
    uint8_t access;
    int mapped;
};

static volatile uint64_t sink;

static double baseline_round(struct plain_memory *memory, long cycles)
{
    uint64_t next_id = 1;
    double t0 = now_ns();
    for (long i = 0; i < cycles; i++) {
        memory->exports++;
        fab_handle_t out = memory->handle;
        memcpy(wire, out.bytes, sizeof(wire));
        BARRIER();
        fab_handle_t in;
        memcpy(in.bytes, wire, sizeof(in.bytes));
        struct plain_import import;
        import.id = next_id++;
        memcpy(import.uuid, in.bytes + 8, 16);
        memcpy(&import.size, in.bytes + 24, 8);
        import.access = in.bytes[32];
        import.mapped = 1;
        memory->exports--;
        sink = import.id + import.size + import.access + (uint64_t)import.mapped + import.uuid[0];
    }
    return (now_ns() - t0) / (double)cycles;
}

int main(int argc, char **argv)
{
    long cycles = argc > 1 ? atol(argv[1]) : 1000000;
    int rounds = argc > 2 ? atoi(argv[2]) : 9;
    if (cycles <= 0 || rounds <= 0 || rounds > 99)
        return 2;
    int cpu = sched_getcpu();
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu < 0 ? 0 : cpu, &set);
    (void)sched_setaffinity(0, sizeof(set), &set);

    const fab_uuid_t uuid = {{0xfa, 0xb0, 0x00, 0x01, 0xde, 0xad, 0xbe, 0xef, 0x10, 0x20, 0x30,
                              0x40, 0x50, 0x60, 0x70, 0x80}};
    fab_alloc_props_t props = fab_alloc_props_read_write(0, (size_t)2 << 20);
    fab_memory_t *memory, *memories[2];
    fab_importer_t *importer;
    fab_uuid_t other = uuid;
    other.bytes[15] ^= 1;
    if (fab_memory_allocate(1, uuid, &props, &memories[0]) != FAB_SUCCESS ||
        fab_memory_allocate(2, other, &props, &memories[1]) != FAB_SUCCESS ||
        fab_importer_create(0, &importer) != FAB_SUCCESS)
        return 1;
    memory = memories[0];
    struct plain_memory plain = {.exports = 0};
    if (fab_memory_export(memory, &plain.handle) != FAB_SUCCESS ||
        fab_memory_retire_export(memory) != FAB_SUCCESS)
        return 1;

    double model[99], base[99], ratio[99], two[99], ratio_two[99];
    model_round(memories, 0, importer, cycles / 10 + 1); /* warm all three */
    model_round(memories, 1, importer, cycles / 10 + 1);
    baseline_round(&plain, cycles / 10 + 1);
    for (int r = 0; r < rounds; r++) {
        model[r] = model_round(memories, 0, importer, cycles);
        base[r] = baseline_round(&plain, cycles);
        two[r] = model_round(memories, 1, importer, cycles);
        ratio[r] = model[r] / base[r];
        ratio_two[r] = two[r] / base[r];
    }
    printf("model cycle (export, bytes, decode, import, map, retire), %ld cycles x %d rounds,\n"
           "one core, alternating; min / median / max\n", cycles, rounds);
    print_row("model, own handle, ns", model, rounds, "");
    print_row("model, a peer's bytes, ns", two, rounds, "");
    print_row("baseline (no checks), ns", base, rounds, "");
    print_row("ratio, own handle", ratio, rounds, "x");
    print_row("ratio, a peer's bytes", ratio_two, rounds, "x");
    fab_importer_destroy(importer);
    fab_memory_destroy(memories[1]);
    fab_memory_destroy(memory);
    return sink == 0; /* never: every cycle stores a nonzero id */
}
