#ifndef CLMDB_SHIM_H
#define CLMDB_SHIM_H
#include <errno.h>
#include <lmdb.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

/* fallocate(2) of the bytes [0, length) of fd, without glibc's posix_fallocate emulation (which
   writes into the file where the file system cannot allocate ahead): 0, or the errno. */
static inline int notes_allocate(int fd, off_t length) {
    return syscall(SYS_fallocate, fd, 0, (off_t)0, length) == 0 ? 0 : errno;
}
#endif
