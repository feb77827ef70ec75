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

#include <stdbool.h>
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

/* Holes: a memfd's page that was never written (or was punched) reads as
 * zeros and holds no memory; reading it through a mapping would allocate
 * it. These let a copy or a comparison of large, mostly unwritten memory
 * skip what is zero on both sides, in the cost of what was written.
 *
 * Each takes a descriptor of its own (fab__memfd_reopen_read_only), since
 * lseek moves the offset every descriptor of one open file shares, those a
 * peer holds included.
 *
 * The first offset in [off, end) of fd that may hold data (lseek SEEK_DATA;
 * swapped-out pages count as data), or end where none does. Where the
 * kernel cannot say, off: everything counts as data, as if it had no
 * holes. */
uint64_t fab__memfd_data_from(int fd, uint64_t off, uint64_t end);

/* The first hole at or after off in fd (SEEK_HOLE), at most end; end where
 * the kernel cannot say. off itself where off is in a hole. */
uint64_t fab__memfd_hole_from(int fd, uint64_t off, uint64_t end);

/* The next stretch [*lo, *hi) at or after from, in [0, len), where either
 * of two memfds may hold data (a from base_a on, b from base_b on; either
 * descriptor -1: that side counts as written everywhere): outside such
 * stretches neither was ever written, so both read as zeros there, equal.
 * The stretch is aligned to page (a power of two) from 0; false when none
 * is left. A loop from 0, each turn from the last *hi, visits every byte
 * where the two could differ. */
bool fab__memfd_written(int a, uint64_t base_a, int b, uint64_t base_b, uint64_t from,
                        uint64_t len, uint64_t page, uint64_t *lo, uint64_t *hi);

/* Zeros [p, +len) of a read-write shared mapping of a memfd: its whole
 * pages are given back (MADV_REMOVE, which the size seals allow), what is
 * left of a page at either end is written; where the kernel refuses, all
 * of it is written. */
void fab__memfd_zero_mapped(uint8_t *p, uint64_t len);

#endif /* FABMEM_COMMON_MEMFD_H */
