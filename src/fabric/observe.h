/* What libcuda's lifetime checker (src/cuda/check.c) learns from the
 * client's replies (client.c implements it): the daemon's word, on a
 * RELEASE, that the allocation had exported handles never imported
 * (docs/fabric.md, "The seed's stricter rule"). Internal to fabmem: not in
 * the public headers.
 *
 * A RELEASE's reply is read later than the call that sent it (by the next
 * request, or by fab__client_flush), so the news comes through a hook. */
#ifndef FABMEM_FABRIC_OBSERVE_H
#define FABMEM_FABRIC_OBSERVE_H

#include <stdint.h>

#include "fabmem/fabric.h"

/* Called with the client's lock held, from whichever call reads the reply:
 * it must not call the client. */
typedef void (*fab__client_unimported_fn)(const fab_uuid_t *uuid, uint32_t unimported);

/* Set once for the process (NULL: none), before any client may read a
 * RELEASE's reply. */
void fab__client_set_unimported_hook(fab__client_unimported_fn fn);

/* Read the replies not read yet (RELEASEs') now, so that their news is
 * heard before the process ends. */
void fab__client_flush(fab_client_t *client);

#endif /* FABMEM_FABRIC_OBSERVE_H */
