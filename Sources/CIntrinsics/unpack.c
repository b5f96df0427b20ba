// The doc numbers of a posting block, eight at a time with AVX2: a query decodes a block of
// 128 for each window it intersects, and the scalar loop (a load, a shift, a mask and two adds
// a number, the adds one chain) was a fifth of a two-word query's time.
//
// Eight deltas of width w (at most 16) lie in the first w bytes of their group, so one 16-byte
// load holds them all: a byte shuffle gives each 32-bit lane the four bytes from its delta's
// first byte, a shift by lane moves the delta down, a mask cuts it. The running sum is a prefix
// sum over the lanes (two shifted adds per 128-bit half, then the low half's last into the
// high half) plus the last doc of the group before.
#include "unpack.h"

#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>
#include <pthread.h>

// One CPUID and XGETBV when first asked (see crc32c.c for why not __builtin_cpu_supports).
int notes_unpack_vector(void) {
    unsigned int eax, ebx, ecx, edx;
    if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx)) return 0;
    // OSXSAVE and AVX: the system saves the 256-bit registers.
    if (!(ecx & bit_OSXSAVE) || !(ecx & bit_AVX)) return 0;
    unsigned int lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    if ((lo & 0x6) != 0x6) return 0;
    if (!__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx)) return 0;
    return (ebx & bit_AVX2) ? 1 : 0;
}

// For each width 1 to 16, where lane u's delta starts (bit u * width): the byte shuffle that
// gives the lane the four bytes from the delta's first byte, and the shift within them. Made
// once, when first needed (a block of 128 docs is 16 groups: building them per call cost as
// much as unpacking).
static uint8_t shuffles[17][32];
static uint32_t shifts[17][8];
static pthread_once_t tables_once = PTHREAD_ONCE_INIT;

static void make_tables(void) {
    for (int width = 1; width <= 16; width++) {
        for (int u = 0; u < 8; u++) {
            int bit = u * width;
            int byte = bit >> 3;
            for (int b = 0; b < 4; b++) {
                int from = byte + b;
                // The shuffle reads within a 128-bit half; both halves hold the same 16 bytes.
                shuffles[width][u * 4 + b] = (uint8_t)(from < 16 ? from : 0x80);
            }
            shifts[width][u] = (uint32_t)(bit & 7);
        }
    }
}

__attribute__((target("avx2"))) uint32_t notes_unpack_doc_groups(
    const uint8_t *column, int groups, int bits, uint32_t doc, uint32_t *out) {
    pthread_once(&tables_once, make_tables);
    const __m256i pick = _mm256_loadu_si256((const __m256i *)shuffles[bits]);
    const __m256i shift = _mm256_loadu_si256((const __m256i *)shifts[bits]);
    const __m256i mask = _mm256_set1_epi32((int)((1u << bits) - 1));
    const __m256i one = _mm256_set1_epi32(1);
    const __m256i lastOfLow = _mm256_set1_epi32(3);
    const __m256i lastOfAll = _mm256_set1_epi32(7);
    __m256i carry = _mm256_set1_epi32((int)doc);
    for (int g = 0; g < groups; g++) {
        __m128i raw = _mm_loadu_si128((const __m128i *)(column + (size_t)g * (size_t)bits));
        __m256i both = _mm256_broadcastsi128_si256(raw);
        __m256i d = _mm256_shuffle_epi8(both, pick);
        d = _mm256_and_si256(_mm256_srlv_epi32(d, shift), mask);
        d = _mm256_add_epi32(d, one);
        // Prefix sum within each half, then the low half's total into the high half.
        d = _mm256_add_epi32(d, _mm256_slli_si256(d, 4));
        d = _mm256_add_epi32(d, _mm256_slli_si256(d, 8));
        __m256i low = _mm256_permutevar8x32_epi32(d, lastOfLow);
        d = _mm256_add_epi32(d, _mm256_blend_epi32(_mm256_setzero_si256(), low, 0xF0));
        d = _mm256_add_epi32(d, carry);
        _mm256_storeu_si256((__m256i *)(out + (size_t)g * 8), d);
        carry = _mm256_permutevar8x32_epi32(d, lastOfAll);
    }
    return (uint32_t)_mm256_cvtsi256_si32(carry);
}

#else

int notes_unpack_vector(void) { return 0; }

uint32_t notes_unpack_doc_groups(const uint8_t *column, int groups, int bits, uint32_t doc, uint32_t *out) {
    (void)column;
    (void)groups;
    (void)bits;
    (void)out;
    return doc;
}

#endif
