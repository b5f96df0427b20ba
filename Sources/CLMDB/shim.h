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
/* The run of entries whose keys are `length` bytes long and begin with the first `prefix` bytes
   of `start`, read into `keys` and `values` (at most `room`): from the first entry at or after
   `start` when `seek` is non-zero, else from the one after the cursor's. Returns how many were
   read (fewer than `room` only when the run ended or LMDB failed, its code then in `error`, else
   MDB_SUCCESS). One call for a whole run
   (a search term's posting blocks): a call through the Swift wrapper for each entry cost twice
   LMDB's own step. */
static inline int notes_cursor_run(
    MDB_cursor *cursor, const void *start, size_t startLength, size_t prefix, size_t length, int seek, MDB_val *keys,
    MDB_val *values, int room, int *error) {
    int n = 0;
    *error = MDB_SUCCESS;
    MDB_cursor_op op = seek ? MDB_SET_RANGE : MDB_NEXT;
    while (n < room) {
        MDB_val k = {startLength, (void *)start};
        MDB_val v = {0, NULL};
        int rc = mdb_cursor_get(cursor, &k, &v, op);
        if (rc == MDB_NOTFOUND) break;
        if (rc != MDB_SUCCESS) {
            *error = rc;
            break;
        }
        if (k.mv_size != length) break;
        /* A few bytes (a search term and a 0): compared here, not through a call to memcmp. */
        const unsigned char *a = (const unsigned char *)k.mv_data, *b = (const unsigned char *)start;
        size_t i = 0;
        while (i < prefix && a[i] == b[i]) i++;
        if (i < prefix) break;
        keys[n] = k;
        values[n] = v;
        n++;
        op = MDB_NEXT;
    }
    return n;
}
#endif
