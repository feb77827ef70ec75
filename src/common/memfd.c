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
