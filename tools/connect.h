/* The tools' connection to a running daemon: one that never starts a
 * daemon (the commands that use it observe or change what runs; they do not
 * create), and that says on stderr, naming the command, where no daemon
 * answers. */
#ifndef FABMEM_TOOLS_CONNECT_H
#define FABMEM_TOOLS_CONNECT_H

#include "fabmem.h"

/* A client, or NULL after the message "<who>: no daemon answers at ...". */
fab_client_t *fab__tool_connect(const char *who);

#endif /* FABMEM_TOOLS_CONNECT_H */
