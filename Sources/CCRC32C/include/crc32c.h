#ifndef NOTES_CRC32C_H
#define NOTES_CRC32C_H
#include <stddef.h>
#include <stdint.h>

// The module's umbrella header: SHA-256 and a prefetch hint live beside CRC-32C.
#include "prefetch.h"
#include "sha256.h"

/// Whether the processor computes CRC-32C itself (SSE 4.2 on x86-64).
int notes_crc32c_hardware(void);

/// Updates a CRC-32C register (no pre/post inversion) with `count` bytes, using the
/// processor's crc32 instruction. Only call it when `notes_crc32c_hardware()` returns 1.
uint32_t notes_crc32c_update(uint32_t crc, const void *bytes, size_t count);

#endif
