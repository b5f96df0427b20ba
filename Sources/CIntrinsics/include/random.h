#ifndef NOTES_RANDOM_H
#define NOTES_RANDOM_H
#include <stddef.h>
#include <sys/random.h>
#include <sys/types.h>

/// Fills `count` bytes (at most 256, which the kernel never cuts short once its generator is
/// seeded) from the system's secure generator; returns the bytes written or -1 (errno set).
static inline ssize_t notes_getrandom(void *buffer, size_t count) { return getrandom(buffer, count, 0); }

#endif
