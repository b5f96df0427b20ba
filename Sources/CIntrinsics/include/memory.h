#ifndef NOTES_MEMORY_H
#define NOTES_MEMORY_H
#include <malloc.h>

/// Gives the heap's free memory back to the system (glibc's `malloc_trim`), so that the
/// resident memory measured next is what is alive.
static inline void notes_trim_heap(void) { malloc_trim(0); }

#endif
