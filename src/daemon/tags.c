/* The keyed values the daemon mints and checks with its key (the state
 * file's): a handle's tag, the creator token, a live allocation's handle
 * minted, and the uuid's epoch that says this daemon made it. */
#include "src/daemon/registry_impl.h"

#include <sodium.h>
#include <string.h>

#include "src/base/hot.h"
#include "src/base/le.h"

FAB__HOT
uint64_t fab__uuid_key(const fab_uuid_t *uuid)
{
    return fab__le_get64(uuid->bytes);
}

/* Whether this daemon minted uuid: its epoch in bytes 8..11. One that did
 * and that it does not hold live was freed (an authentic handle carries a
 * uuid this key minted; another daemon of this key picked another epoch,
 * but for a chance of 2^-32 per restart). So an allocation this daemon
 * made needs no tombstone: only those adopted from an earlier daemon do. */
bool fab__uuid_ours(const fab__registry_t *daemon, const fab_uuid_t *uuid)
{
    return fab__le_get32(uuid->bytes + 8) == daemon->epoch;
}

/* The tag: keyed BLAKE2b over the bytes it covers, cut to 16 bytes. */
void fab__handle_tag(const fab__registry_t *daemon, const uint8_t *bytes,
                     uint8_t tag[FAB_HANDLE_TAG_BYTES])
{
    crypto_generichash(tag, FAB_HANDLE_TAG_BYTES, bytes, FAB_HANDLE_TAG_OFFSET, daemon->key,
                       sizeof(daemon->key));
}

/* The creator token: keyed BLAKE2b over a label and the uuid. Only the ALLOC
 * reply carries it, so holding it proves having made the allocation; the
 * label keeps it from ever equalling a tag. */
void fab__creator_token(const fab__registry_t *daemon, const fab_uuid_t *uuid,
                        uint8_t token[FAB__TOKEN_BYTES])
{
    uint8_t in[8 + 16] = {'c', 'r', 'e', 'a', 't', 'o', 'r', 0};
    memcpy(in + 8, uuid->bytes, 16);
    crypto_generichash(token, FAB__TOKEN_BYTES, in, sizeof(in), daemon->key, sizeof(daemon->key));
}

/* The daemon's handle for an allocation: the model's layout with origin
 * FABRIC, the exporter's IMEX domain and the tag. Minted once, as the
 * allocation goes live; ALLOC and EXPORT replies carry the copy. */
fab_handle_t fab__alloc_mint(const fab__registry_t *daemon, const fab__alloc_t *alloc)
{
    fab_handle_t handle;
    fab_alloc_props_t props = fab_memory_props(alloc->memory);
    fab_uuid_t uuid = fab_memory_uuid(alloc->memory);
    uint64_t domain = daemon->domain_ids[alloc->node];
    uint8_t tag[FAB_HANDLE_TAG_BYTES];
    /* The model vouches for the fields, so neither call can fail. */
    (void)fab_handle_encode(uuid, props.size, props.peer_access, FAB_HANDLE_ORIGIN_FABRIC, domain,
                            NULL, &handle);
    fab__handle_tag(daemon, handle.bytes, tag);
    (void)fab_handle_encode(uuid, props.size, props.peer_access, FAB_HANDLE_ORIGIN_FABRIC, domain,
                            tag, &handle);
    return handle;
}
