#ifndef NOTES_UUID_H
#define NOTES_UUID_H
#include <stdint.h>

/// Reads the 36 bytes at `text` as a UUID in canonical lowercase form
/// (`xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx`, digits 0-9 and a-f): 1 and the two halves (the first
/// digit in the top bits of `high`) when they are one, 0 when they are not, -1 when the
/// processor lacks SSSE3 and the caller must read them itself. Reads exactly 36 bytes.
int notes_uuid_parse_lowercase(const uint8_t *text, uint64_t *high, uint64_t *low);

#endif
