/* The fabric handle's wire form: encoding, the integrity check, and readers.
 * The layout is the table in include/fabmem/handle.h. The CRC is zlib's CRC-32:
 * a single changed byte is an error burst of at most 8 bits, which CRC-32 always
 * detects, so every one-byte corruption is refused without any key.
 *
 * Speed: the CRC is computed here, table-driven eight bytes at a time
 * (slice-by-8: eight 256-entry tables, made once at load) in two halves at
 * once, which gives zlib's values bit for bit without a call into zlib for
 * 60 bytes. And each thread remembers the last 64 bytes it found (or made)
 * intact: the same handle checked again (decoded, then imported; or imported
 * many times) is compared, in constant time, instead of summed again. The
 * memory is a pure function of the bytes, so it changes no verdict. */
#include "src/core/handle_format.h"

#include "src/base/hot.h"
#include "src/base/le.h"

#include <string.h>

static const uint8_t fab__magic[8] = {'O', 'X', 'I', 'F', 'A', 'B', 'R', 'C'};

/* A little-endian 32-bit load in one instruction where the compiler can
 * (le.h's byte loop is not unrolled at -O2). */
static inline uint32_t fab__load32(const uint8_t *p)
{
    uint32_t v;
    memcpy(&v, p, sizeof(v));
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    v = __builtin_bswap32(v);
#endif
    return v;
}

/* zlib's CRC-32 (reflected polynomial 0xEDB88320) of a handle's first 60
 * bytes, slice-by-8, in two independent halves whose dependency chains run
 * side by side: bytes [0, 32) from the usual start, bytes [32, 60) from zero,
 * joined by the CRC's linearity (the register after both halves is the
 * first half's register carried through 28 zero bytes, xor the second
 * half's): carrying through 28 zero bytes is a linear map of the 32-bit
 * register, applied as four 256-entry tables, one per byte of it. */
static uint32_t fab__crc_table[8][256];
static uint32_t fab__crc_skip28[4][256];

_Static_assert(FAB__HANDLE_OFF_CRC == 60, "the CRC's halves are laid out for 60 bytes");

__attribute__((constructor)) static void fab__crc_tables(void)
{
    for (uint32_t n = 0; n < 256; n++) {
        uint32_t c = n;
        for (int k = 0; k < 8; k++)
            c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
        fab__crc_table[0][n] = c;
    }
    for (uint32_t n = 0; n < 256; n++) {
        uint32_t c = fab__crc_table[0][n];
        for (int t = 1; t < 8; t++) {
            c = fab__crc_table[0][c & 0xff] ^ (c >> 8);
            fab__crc_table[t][n] = c;
        }
    }
    for (int k = 0; k < 4; k++) {
        for (uint32_t n = 0; n < 256; n++) {
            uint32_t c = n << (8 * k);
            for (int zero = 0; zero < 28; zero++)
                c = fab__crc_table[0][c & 0xff] ^ (c >> 8);
            fab__crc_skip28[k][n] = c;
        }
    }
}

/* The register after eight more bytes at p. */
static inline uint32_t fab__crc8(uint32_t c, const uint8_t *p)
{
    uint32_t lo = c ^ fab__load32(p);
    uint32_t hi = fab__load32(p + 4);
    return fab__crc_table[7][lo & 0xff] ^ fab__crc_table[6][(lo >> 8) & 0xff] ^
           fab__crc_table[5][(lo >> 16) & 0xff] ^ fab__crc_table[4][lo >> 24] ^
           fab__crc_table[3][hi & 0xff] ^ fab__crc_table[2][(hi >> 8) & 0xff] ^
           fab__crc_table[1][(hi >> 16) & 0xff] ^ fab__crc_table[0][hi >> 24];
}

static uint32_t fab__crc(const uint8_t *bytes)
{
    uint32_t a = 0xffffffffu, b = 0;
    a = fab__crc8(a, bytes);
    b = fab__crc8(b, bytes + 32);
    a = fab__crc8(a, bytes + 8);
    b = fab__crc8(b, bytes + 40);
    a = fab__crc8(a, bytes + 16);
    b = fab__crc8(b, bytes + 48);
    a = fab__crc8(a, bytes + 24);
    b ^= fab__load32(bytes + 56); /* the last four bytes in one step */
    b = fab__crc_table[3][b & 0xff] ^ fab__crc_table[2][(b >> 8) & 0xff] ^
        fab__crc_table[1][(b >> 16) & 0xff] ^ fab__crc_table[0][b >> 24];
    a = fab__crc_skip28[0][a & 0xff] ^ fab__crc_skip28[1][(a >> 8) & 0xff] ^
        fab__crc_skip28[2][(a >> 16) & 0xff] ^ fab__crc_skip28[3][a >> 24];
    return (a ^ b) ^ 0xffffffffu;
}

/* The last handle this thread found intact, and whether there is one. */
static _Thread_local uint8_t fab__intact[FAB_HANDLE_BYTES];
static _Thread_local bool fab__intact_set;

/* Whether the first n bytes (a multiple of 4) of a and b are equal.
 * Constant time: in the daemon the remembered handle may be another
 * client's. Eight bytes at a time while they last; n is a constant at every
 * call, so the loops unroll. */
static inline bool fab__same(const uint8_t *a, const uint8_t *b, size_t n)
{
    uint64_t diff = 0;
    size_t i = 0;
#pragma GCC unroll 8
    for (; i + 8 <= n; i += 8) {
        uint64_t x, y;
        memcpy(&x, a + i, sizeof(x));
        memcpy(&y, b + i, sizeof(y));
        diff |= x ^ y;
    }
    for (; i < n; i += 4) {
        uint32_t x, y;
        memcpy(&x, a + i, sizeof(x));
        memcpy(&y, b + i, sizeof(y));
        diff |= x ^ y;
    }
    return diff == 0;
}

/* Whether bytes are the remembered intact handle. */
static bool fab__intact_is(const uint8_t *bytes)
{
    const uint8_t *intact = fab__intact; /* one TLS lookup */
    return fab__intact_set && fab__same(bytes, intact, FAB_HANDLE_BYTES);
}

static void fab__intact_remember(const uint8_t *bytes)
{
    memcpy(fab__intact, bytes, FAB_HANDLE_BYTES);
    fab__intact_set = true;
}

void fab__handle_made(const uint8_t bytes[FAB_HANDLE_BYTES])
{
    fab__intact_remember(bytes);
}

static void fab__handle_seal_crc(fab_handle_t *handle)
{
    /* The same fields as the handle remembered: the same CRC (exporting one
     * allocation again and again sums it once). */
    const uint8_t *intact = fab__intact;
    uint32_t crc = fab__intact_set && fab__same(handle->bytes, intact, FAB__HANDLE_OFF_CRC)
                       ? fab__load32(intact + FAB__HANDLE_OFF_CRC)
                       : fab__crc(handle->bytes);
    for (int i = 0; i < 4; i++)
        handle->bytes[FAB__HANDLE_OFF_CRC + i] = (uint8_t)(crc >> (8 * i));
    fab__intact_remember(handle->bytes);
}

void fab__handle_encode(fab_handle_t *handle, fab_uuid_t uuid, uint64_t size, fab_access_t access,
                        fab_handle_origin_t origin, uint64_t domain)
{
    memset(handle->bytes, 0, sizeof(handle->bytes));
    memcpy(handle->bytes + FAB__HANDLE_OFF_MAGIC, fab__magic, sizeof(fab__magic));
    memcpy(handle->bytes + FAB__HANDLE_OFF_UUID, uuid.bytes, sizeof(uuid.bytes));
    fab__le_put64(handle->bytes + FAB__HANDLE_OFF_SIZE, size);
    handle->bytes[FAB__HANDLE_OFF_ACCESS] = (uint8_t)access;
    handle->bytes[FAB__HANDLE_OFF_VERSION] = FAB_HANDLE_VERSION;
    handle->bytes[FAB__HANDLE_OFF_ORIGIN] = (uint8_t)origin;
    fab__le_put64(handle->bytes + FAB__HANDLE_OFF_DOMAIN, domain);
    fab__handle_seal_crc(handle);
}

void fab__handle_set_tag(fab_handle_t *handle, const uint8_t tag[FAB_HANDLE_TAG_BYTES])
{
    memcpy(handle->bytes + FAB__HANDLE_OFF_TAG, tag, FAB_HANDLE_TAG_BYTES);
    fab__handle_seal_crc(handle);
}

static bool fab__all_zero(const uint8_t *p, size_t n);

fab_status_t fab_handle_encode(fab_uuid_t uuid, uint64_t size, fab_access_t access,
                               fab_handle_origin_t origin, uint64_t domain, const uint8_t *tag,
                               fab_handle_t *handle_out)
{
    if (handle_out == NULL || (unsigned)access > FAB_ACCESS_READ_WRITE ||
        (origin != FAB_HANDLE_ORIGIN_MODEL && origin != FAB_HANDLE_ORIGIN_FABRIC))
        return FAB_ERROR_INVALID_VALUE;
    if (origin == FAB_HANDLE_ORIGIN_MODEL &&
        (domain != 0 || (tag != NULL && !fab__all_zero(tag, FAB_HANDLE_TAG_BYTES))))
        return FAB_ERROR_INVALID_VALUE;
    fab_handle_t handle;
    fab__handle_encode(&handle, uuid, size, access, origin, domain);
    if (tag != NULL)
        fab__handle_set_tag(&handle, tag);
    *handle_out = handle;
    return FAB_SUCCESS;
}

static bool fab__all_zero(const uint8_t *p, size_t n)
{
    uint8_t acc = 0;
    for (size_t i = 0; i < n; i++)
        acc |= p[i];
    return acc == 0;
}

FAB__HOT
fab_status_t fab__handle_check(const uint8_t bytes[FAB_HANDLE_BYTES])
{
    if (fab__intact_is(bytes))
        return FAB_SUCCESS;
    if (memcmp(bytes + FAB__HANDLE_OFF_MAGIC, fab__magic, sizeof(fab__magic)) != 0)
        return FAB_ERROR_INVALID_HANDLE;
    if (bytes[FAB__HANDLE_OFF_VERSION] != FAB_HANDLE_VERSION)
        return FAB_ERROR_INVALID_HANDLE;
    if (bytes[FAB__HANDLE_OFF_ACCESS] > FAB_ACCESS_READ_WRITE)
        return FAB_ERROR_INVALID_HANDLE;
    if (bytes[FAB__HANDLE_OFF_RESERVED] != 0)
        return FAB_ERROR_INVALID_HANDLE;
    switch (bytes[FAB__HANDLE_OFF_ORIGIN]) {
    case FAB_HANDLE_ORIGIN_MODEL:
        /* The model has no domain and no key: those bytes stay zero. */
        if (!fab__all_zero(bytes + FAB__HANDLE_OFF_DOMAIN, FAB__HANDLE_OFF_CRC - FAB__HANDLE_OFF_DOMAIN))
            return FAB_ERROR_INVALID_HANDLE;
        break;
    case FAB_HANDLE_ORIGIN_FABRIC:
        break;
    default:
        return FAB_ERROR_INVALID_HANDLE;
    }
    if (fab__load32(bytes + FAB__HANDLE_OFF_CRC) != fab__crc(bytes))
        return FAB_ERROR_INVALID_HANDLE;
    fab__intact_remember(bytes);
    return FAB_SUCCESS;
}

fab_status_t fab_handle_from_bytes(const void *raw, size_t len, fab_handle_t *handle_out)
{
    if (raw == NULL || handle_out == NULL || len != FAB_HANDLE_BYTES)
        return FAB_ERROR_INVALID_VALUE;
    fab_status_t status = fab__handle_check(raw);
    if (status != FAB_SUCCESS)
        return status;
    memcpy(handle_out->bytes, raw, FAB_HANDLE_BYTES);
    return FAB_SUCCESS;
}

FAB__HOT
fab_uuid_t fab_handle_uuid(const fab_handle_t *handle)
{
    fab_uuid_t uuid = {{0}};
    if (handle)
        memcpy(uuid.bytes, handle->bytes + FAB__HANDLE_OFF_UUID, sizeof(uuid.bytes));
    return uuid;
}

FAB__HOT
size_t fab_handle_size(const fab_handle_t *handle)
{
    return handle ? (size_t)fab__le_get64(handle->bytes + FAB__HANDLE_OFF_SIZE) : 0;
}

FAB__HOT
fab_access_t fab_handle_access(const fab_handle_t *handle)
{
    return handle ? fab__handle_access(handle->bytes) : FAB_ACCESS_NONE;
}

unsigned fab_handle_version(const fab_handle_t *handle)
{
    return handle ? handle->bytes[FAB__HANDLE_OFF_VERSION] : 0;
}

FAB__HOT
fab_handle_origin_t fab_handle_origin(const fab_handle_t *handle)
{
    if (handle && handle->bytes[FAB__HANDLE_OFF_ORIGIN] == FAB_HANDLE_ORIGIN_FABRIC)
        return FAB_HANDLE_ORIGIN_FABRIC;
    return FAB_HANDLE_ORIGIN_MODEL;
}

FAB__HOT
uint64_t fab_handle_domain(const fab_handle_t *handle)
{
    return handle ? fab__le_get64(handle->bytes + FAB__HANDLE_OFF_DOMAIN) : 0;
}

bool fab_uuid_equal(const fab_uuid_t *a, const fab_uuid_t *b)
{
    return a && b && memcmp(a->bytes, b->bytes, sizeof(a->bytes)) == 0;
}

FAB__HOT
bool fab_handle_equal(const fab_handle_t *a, const fab_handle_t *b)
{
    return a != NULL && b != NULL && fab__same(a->bytes, b->bytes, FAB_HANDLE_BYTES);
}

FAB__HOT
bool fab_access_is_mappable(fab_access_t access)
{
    return access == FAB_ACCESS_READ_ONLY || access == FAB_ACCESS_READ_WRITE;
}

bool fab_access_is_writable(fab_access_t access)
{
    return access == FAB_ACCESS_READ_WRITE;
}

fab_alloc_props_t fab_alloc_props_read_write(int device_ordinal, size_t size)
{
    fab_alloc_props_t props = {
        .device_ordinal = device_ordinal,
        .size = size,
        .peer_access = FAB_ACCESS_READ_WRITE,
        .handle_type = FAB_HANDLE_TYPE_FABRIC,
    };
    return props;
}
