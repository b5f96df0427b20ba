#ifndef NOTES_PREFETCH_H
#define NOTES_PREFETCH_H

/// Asks the processor to bring the cache line holding `address` closer, for a read soon.
/// A hint only: it never faults, and an invalid address is ignored.
static inline void notes_prefetch(const void *address) { __builtin_prefetch(address, 0, 3); }

#endif
