// CRC-32C with the processor's own instruction: the checksum of every stored event is
// verified on every read, and a table-driven CRC is the slowest step of a log scan.
#include "crc32c.h"
#include <string.h>

#if defined(__x86_64__)
#include <nmmintrin.h>

int notes_crc32c_hardware(void) {
    __builtin_cpu_init();
    return __builtin_cpu_supports("sse4.2") ? 1 : 0;
}

__attribute__((target("sse4.2")))
uint32_t notes_crc32c_update(uint32_t crc, const void *bytes, size_t count) {
    const unsigned char *p = bytes;
    uint64_t c = crc;
    while (count >= 8) {
        uint64_t word;
        memcpy(&word, p, 8);
        c = _mm_crc32_u64(c, word);
        p += 8;
        count -= 8;
    }
    uint32_t c32 = (uint32_t)c;
    while (count > 0) {
        c32 = _mm_crc32_u8(c32, *p);
        p++;
        count--;
    }
    return c32;
}
#else
int notes_crc32c_hardware(void) { return 0; }
uint32_t notes_crc32c_update(uint32_t crc, const void *bytes, size_t count) {
    (void)bytes;
    (void)count;
    return crc;
}
#endif
