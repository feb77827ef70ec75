/* The tools' connection to a running daemon (connect.h). */
#include "tools/connect.h"

#include <stdio.h>
#include <stdlib.h>

#include "src/base/env.h"

fab_client_t *fab__tool_connect(const char *who)
{
    fab_client_options_t options = {.socket_path = NULL, .node = NULL, .autostart = 0};
    fab_client_t *client = NULL;
    fab_status_t status = fab_client_connect(&options, &client);
    if (status != FAB_SUCCESS) {
        const char *where = getenv(FAB__ENV_SOCKET);
        fprintf(stderr, "%s: no daemon answers at %s: %s (%s)\n", who,
                where && *where ? where : "the per-user socket", fab_status_string(status),
                fab_status_name(status));
        return NULL;
    }
    return client;
}
