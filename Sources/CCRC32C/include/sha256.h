#ifndef NOTES_SHA256_H
#define NOTES_SHA256_H
#include <stddef.h>
#include <stdint.h>

/// The 64 round constants of SHA-256 (FIPS 180-4, 4.2.2).
extern const uint32_t notes_sha256_round_constants[64];

/// Whether the processor has the SHA extensions (SHA-NI) used by `notes_sha256_blocks`.
int notes_sha256_hardware(void);

/// Runs the SHA-256 compression function over `count` 64-byte blocks, updating the eight
/// words of `state` in place. Only call it when `notes_sha256_hardware()` returns 1.
void notes_sha256_blocks(uint32_t state[8], const void *blocks, size_t count);

#endif
