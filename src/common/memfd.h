/* Memory that leaves the process: every memfd fabmem hands to another process
 * is made here, and every memfd a peer hands back (ADOPT) is checked here.
 *
 * What such a memfd promises its holders:
 *   - its size never changes: F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL are set
 *     once it is sized, so no holder can truncate it under another's mapping
 *     (which would kill that process with SIGBUS on its next access);
 *   - its inode grants nothing beyond what a descriptor carries: mode 0400, so
 *     nobody but root can reopen /proc/PID/fd/N writable, and only its owner
 *     (the daemon, which makes read-only descriptors for read-only importers
 *     that way) can reopen it at all. */
#ifndef FABMEM_COMMON_MEMFD_H
#define FABMEM_COMMON_MEMFD_H

#include <stddef.h>
#include <stdint.h>

#include "fabmem/status.h"

#define FAB__MEMFD_SEALS_REQUIRED_NAME "F_SEAL_SHRINK|F_SEAL_GROW|F_SEAL_SEAL"

/* A sealed memfd of size bytes, close-on-exec. FAB_SUCCESS, or
 * FAB_ERROR_OUT_OF_MEMORY (no memory or no descriptor left). *fd_out is
 * written only on success. */
fab_status_t fab__memfd_create(const char *name, uint64_t size, int *fd_out);

/* Whether fd is such a memfd of exactly size bytes, opened read-write when
 * writable is set. FAB_SUCCESS, or FAB_ERROR_INVALID_VALUE with a sentence
 * naming the broken rule in why (cap bytes; why may be NULL). */
fab_status_t fab__memfd_check(int fd, uint64_t size, int writable, char *why, size_t cap);

/* A new read-only descriptor of the memfd fd, opened without blocking (a
 * lease on the file makes this fail at once instead of waiting for the lease
 * to break). -1 with errno on failure. */
int fab__memfd_reopen_read_only(int fd);

#endif /* FABMEM_COMMON_MEMFD_H */
