#ifndef NOTES_UNPACK_H
#define NOTES_UNPACK_H
#include <stdint.h>

/// Whether `notes_unpack_doc_groups` can run here (AVX2, with the system saving its registers).
int notes_unpack_vector(void);

/// Unpacks `groups` groups of eight doc-number deltas, each `bits` wide (1 to 16), bit-packed
/// least significant bit first from `column` (each group takes `bits` bytes and starts on a
/// byte; the 16 bytes from each group's start must be readable): each doc is the one before
/// plus its delta plus one, from `doc`, written to `out` (8 x `groups` numbers). Returns the
/// last doc, modulo 2^32. Only call it when `notes_unpack_vector()` returns 1.
uint32_t notes_unpack_doc_groups(const uint8_t *column, int groups, int bits, uint32_t doc, uint32_t *out);

#endif
