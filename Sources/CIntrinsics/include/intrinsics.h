#ifndef NOTES_INTRINSICS_H
#define NOTES_INTRINSICS_H
#include <stddef.h>
#include <stdint.h>

// The processor's own instructions the store uses, checked at run time where they may be
// missing: CRC-32C (SSE 4.2) and a cache prefetch hint; and the system's random bytes in bulk.
// SHA-256 comes from libcrypto (CCrypto).
#include "prefetch.h"
#include "random.h"
#include "memory.h"
#include "faults.h"
#include "termination.h"
#include "uuid.h"
#include "unpack.h"
#include "intersect.h"
#include "filesystem.h"

/// Whether the processor computes CRC-32C itself (SSE 4.2 on x86-64).
int notes_crc32c_hardware(void);

/// Updates a CRC-32C register (no pre/post inversion) with `count` bytes, using the
/// processor's crc32 instruction. Only call it when `notes_crc32c_hardware()` returns 1.
uint32_t notes_crc32c_update(uint32_t crc, const void *bytes, size_t count);

#endif
