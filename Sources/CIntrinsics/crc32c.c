// CRC-32C with the processor's own instruction: the checksum of every stored event is
// verified on every read, and a table-driven CRC is the slowest step of a log scan.
//
// The crc32 instruction has a latency of three cycles and a throughput of one, so one chain of
// instructions leaves two thirds of the unit idle. Blocks are therefore split in three lanes
// computed side by side, and the lanes' registers are joined by "shifting" the first two over
// the bytes that follow them: appending n zero bytes to a CRC register is a linear map, kept
// as four 256-entry tables per lane length (the zlib/Adler construction).
#include "intrinsics.h"
#include <pthread.h>
#include <string.h>

#if defined(__x86_64__)
#include <cpuid.h>
#include <nmmintrin.h>

#define POLY 0x82F63B78u

// One CPUID, when first asked (SSE4.2 is bit 20 of ECX in leaf 1). Not __builtin_cpu_supports:
// that links libgcc's processor probe, a constructor that runs a dozen CPUIDs at every start of
// every process, each a trap to the hypervisor on a virtual machine (a few percent of the time
// `notes --version` takes).
int notes_crc32c_hardware(void) {
    unsigned int eax, ebx, ecx, edx;
    if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx)) return 0;
    return (ecx & bit_SSE4_2) ? 1 : 0;
}

// The operator "append n zero bytes" for the two lane lengths (short and long blocks) and
// twice those lengths.
enum { SHORT_LANE = 64, LONG_LANE = 512 };
static uint32_t shift_short[4][256], shift_short2[4][256], shift_long[4][256], shift_long2[4][256];
static pthread_once_t tables_once = PTHREAD_ONCE_INIT;

static uint32_t apply(const uint32_t table[4][256], uint32_t c) {
    return table[0][c & 0xFF] ^ table[1][(c >> 8) & 0xFF] ^ table[2][(c >> 16) & 0xFF] ^ table[3][c >> 24];
}

// Fills `table` from the images of the 32 unit registers.
static void fill(uint32_t table[4][256], const uint32_t basis[32]) {
    for (int k = 0; k < 4; k++) {
        for (int b = 0; b < 256; b++) {
            uint32_t v = 0;
            for (int i = 0; i < 8; i++) {
                if ((b >> i) & 1) v ^= basis[8 * k + i];
            }
            table[k][b] = v;
        }
    }
}

// The table of `first` followed by `second` (both already filled).
static void compose(uint32_t out[4][256], const uint32_t first[4][256], const uint32_t second[4][256]) {
    uint32_t basis[32];
    for (int i = 0; i < 32; i++) basis[i] = apply(second, apply(first, 1u << i));
    fill(out, basis);
}

static void build_tables(void) {
    // One zero byte, bit by bit, then doubled up to the short lane.
    static uint32_t one[4][256], two[4][256];
    uint32_t basis[32];
    for (int i = 0; i < 32; i++) {
        uint32_t c = 1u << i;
        for (int bit = 0; bit < 8; bit++) c = (c >> 1) ^ ((c & 1) ? POLY : 0);
        basis[i] = c;
    }
    fill(one, basis);
    for (int n = 1; n < SHORT_LANE; n *= 2) {
        compose(two, one, one);
        memcpy(one, two, sizeof one);
    }
    memcpy(shift_short, one, sizeof one);
    compose(shift_short2, shift_short, shift_short);
    memcpy(one, shift_short2, sizeof one);
    for (int n = 2 * SHORT_LANE; n < LONG_LANE; n *= 2) {
        compose(two, one, one);
        memcpy(one, two, sizeof one);
    }
    memcpy(shift_long, one, sizeof one);
    compose(shift_long2, shift_long, shift_long);
}

__attribute__((target("sse4.2"))) static inline uint64_t lanes(
    uint64_t a, const unsigned char *p, size_t lane, const uint32_t shift1[4][256], const uint32_t shift2[4][256]) {
    uint64_t b = 0, c = 0;
    for (size_t i = 0; i < lane; i += 8) {
        uint64_t w1, w2, w3;
        memcpy(&w1, p + i, 8);
        memcpy(&w2, p + lane + i, 8);
        memcpy(&w3, p + 2 * lane + i, 8);
        a = _mm_crc32_u64(a, w1);
        b = _mm_crc32_u64(b, w2);
        c = _mm_crc32_u64(c, w3);
    }
    return apply(shift2, (uint32_t)a) ^ apply(shift1, (uint32_t)b) ^ (uint32_t)c;
}

__attribute__((target("sse4.2")))
uint32_t notes_crc32c_update(uint32_t crc, const void *bytes, size_t count) {
    const unsigned char *p = bytes;
    uint64_t c = crc;
    if (count >= 3 * SHORT_LANE) {
        pthread_once(&tables_once, build_tables);
        while (count >= 3 * LONG_LANE) {
            c = lanes(c, p, LONG_LANE, shift_long, shift_long2);
            p += 3 * LONG_LANE;
            count -= 3 * LONG_LANE;
        }
        while (count >= 3 * SHORT_LANE) {
            c = lanes(c, p, SHORT_LANE, shift_short, shift_short2);
            p += 3 * SHORT_LANE;
            count -= 3 * SHORT_LANE;
        }
    }
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
