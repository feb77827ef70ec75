/* Little-endian integers in byte buffers: the one set of helpers every layer
 * uses for its wire formats (the handle, the protocol). Header-only and below
 * every layer: it knows nothing of fabmem.
 *
 * Each is one load or store (memcpy, byte-swapped on a big-endian host):
 * at -O2 the compiler left the byte-by-byte loops they used to be as loops,
 * and on the daemon's import path they came to a tenth of its instructions. */
#ifndef FABMEM_BASE_LE_H
#define FABMEM_BASE_LE_H

#include <stdint.h>
#include <string.h>

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define FAB__LE16(v) __builtin_bswap16(v)
#define FAB__LE32(v) __builtin_bswap32(v)
#define FAB__LE64(v) __builtin_bswap64(v)
#else
#define FAB__LE16(v) (v)
#define FAB__LE32(v) (v)
#define FAB__LE64(v) (v)
#endif

static inline void fab__le_put16(uint8_t *p, uint16_t v)
{
    v = FAB__LE16(v);
    memcpy(p, &v, sizeof(v));
}

static inline void fab__le_put32(uint8_t *p, uint32_t v)
{
    v = FAB__LE32(v);
    memcpy(p, &v, sizeof(v));
}

static inline void fab__le_put64(uint8_t *p, uint64_t v)
{
    v = FAB__LE64(v);
    memcpy(p, &v, sizeof(v));
}

static inline uint16_t fab__le_get16(const uint8_t *p)
{
    uint16_t v;
    memcpy(&v, p, sizeof(v));
    return FAB__LE16(v);
}

static inline uint32_t fab__le_get32(const uint8_t *p)
{
    uint32_t v;
    memcpy(&v, p, sizeof(v));
    return FAB__LE32(v);
}

static inline uint64_t fab__le_get64(const uint8_t *p)
{
    uint64_t v;
    memcpy(&v, p, sizeof(v));
    return FAB__LE64(v);
}

#endif /* FABMEM_BASE_LE_H */
