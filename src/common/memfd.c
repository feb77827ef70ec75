/* Sealed, mode-0400 memfds, made and checked (see memfd.h). */
#include "src/common/memfd.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define FAB__MEMFD_SEALS (F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL)
#define FAB__MEMFD_MODE 0400

fab_status_t fab__memfd_create(const char *name, uint64_t size, int *fd_out)
{
    if (size > (uint64_t)INT64_MAX)
        return FAB_ERROR_INVALID_VALUE;
    int fd = memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (fd < 0)
        return FAB_ERROR_OUT_OF_MEMORY;
    if (ftruncate(fd, (off_t)size) != 0 || fcntl(fd, F_ADD_SEALS, FAB__MEMFD_SEALS) != 0 ||
        fchmod(fd, FAB__MEMFD_MODE) != 0) {
        close(fd);
        return FAB_ERROR_OUT_OF_MEMORY;
    }
    *fd_out = fd;
    return FAB_SUCCESS;
}

#define FAB__WHY(...) (why != NULL ? (void)snprintf(why, cap, __VA_ARGS__) : (void)0)

fab_status_t fab__memfd_check(int fd, uint64_t size, int writable, char *why, size_t cap)
{
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        FAB__WHY("no open descriptor came with it");
        return FAB_ERROR_INVALID_VALUE;
    }
    /* Only shared memory can carry seals, and only a memfd made with
     * MFD_ALLOW_SEALING can gain the size seals: files on disk, pipes,
     * sockets and plain tmpfs files all fail here. */
    int seals = fcntl(fd, F_GET_SEALS);
    if (!S_ISREG(st.st_mode) || seals < 0 || (seals & FAB__MEMFD_SEALS) != FAB__MEMFD_SEALS) {
        FAB__WHY("not a memfd sealed with " FAB__MEMFD_SEALS_REQUIRED_NAME);
        return FAB_ERROR_INVALID_VALUE;
    }
    if ((st.st_mode & 07777) != FAB__MEMFD_MODE) {
        FAB__WHY("memfd mode %04o, not %04o", (unsigned)(st.st_mode & 07777), FAB__MEMFD_MODE);
        return FAB_ERROR_INVALID_VALUE;
    }
    if ((uint64_t)st.st_size != size) {
        FAB__WHY("memfd of %lld bytes, the handle says %llu", (long long)st.st_size,
                 (unsigned long long)size);
        return FAB_ERROR_INVALID_VALUE;
    }
    if (writable && (fcntl(fd, F_GETFL) & O_ACCMODE) != O_RDWR) {
        FAB__WHY("memfd descriptor is not read-write");
        return FAB_ERROR_INVALID_VALUE;
    }
    return FAB_SUCCESS;
}

int fab__memfd_reopen_read_only(int fd)
{
    char path[64];
    snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
    return open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
}

uint64_t fab__memfd_data_from(int fd, uint64_t off, uint64_t end)
{
    if (off >= end)
        return end;
    off_t at = lseek(fd, (off_t)off, SEEK_DATA);
    if (at < 0)
        return errno == ENXIO ? end : off; /* ENXIO: nothing but holes after off */
    return (uint64_t)at < end ? (uint64_t)at : end;
}

uint64_t fab__memfd_hole_from(int fd, uint64_t off, uint64_t end)
{
    if (off >= end)
        return end;
    off_t at = lseek(fd, (off_t)off, SEEK_HOLE);
    if (at < 0)
        return end;
    return (uint64_t)at < end ? (uint64_t)at : end;
}

bool fab__memfd_written(int a, uint64_t base_a, int b, uint64_t base_b, uint64_t from,
                        uint64_t len, uint64_t page, uint64_t *lo, uint64_t *hi)
{
    if (from >= len)
        return false;
    uint64_t da = fab__memfd_data_from(a, base_a + from, base_a + len) - base_a;
    uint64_t db = fab__memfd_data_from(b, base_b + from, base_b + len) - base_b;
    uint64_t d = da < db ? da : db;
    if (d >= len)
        return false;
    /* Where one side has data at d, it has data up to its next hole: the
     * stretch ends at the later of the two. */
    uint64_t ha = da == d ? fab__memfd_hole_from(a, base_a + d, base_a + len) - base_a : d;
    uint64_t hb = db == d ? fab__memfd_hole_from(b, base_b + d, base_b + len) - base_b : d;
    uint64_t h = ha > hb ? ha : hb;
    *lo = d & ~(page - 1);
    if (*lo < from)
        *lo = from;
    *hi = h >= len - (len % page) ? len : (h + page - 1) & ~(page - 1);
    if (*hi > len || *hi <= *lo)
        *hi = len; /* not reached: a side with data at d has no hole there */
    return true;
}

void fab__memfd_zero_mapped(uint8_t *p, uint64_t len)
{
    long page = sysconf(_SC_PAGESIZE);
    uintptr_t lo = ((uintptr_t)p + (uintptr_t)page - 1) & ~((uintptr_t)page - 1);
    uintptr_t hi = ((uintptr_t)p + len) & ~((uintptr_t)page - 1);
    if (page <= 0 || lo >= hi || madvise((void *)lo, hi - lo, MADV_REMOVE) != 0) {
        memset(p, 0, len);
        return;
    }
    memset(p, 0, lo - (uintptr_t)p);
    memset((void *)hi, 0, (uintptr_t)p + len - hi);
}
