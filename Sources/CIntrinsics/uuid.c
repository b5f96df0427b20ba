// UUID text in canonical lowercase form, read with byte shuffles: every event a replay folds
// names its stream by such a text, and the word-at-a-time reader of UUIDText took about 180
// instructions per name, 7% of a replay's (callgrind, 2026-12-06). This takes about 40.
#include "intrinsics.h"

#if defined(__x86_64__)
#include <cpuid.h>
#include <tmmintrin.h>

// 1 with SSSE3 (bit 9 of ECX in CPUID leaf 1), 0 without, -1 before the first call asks.
static int ssse3 = -1;

static int has_ssse3(void) {
    unsigned int eax, ebx, ecx, edx;
    if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx)) return 0;
    return (ecx & bit_SSSE3) ? 1 : 0;
}

// Each byte of `x` as a hex digit's value; `*valid` becomes 0 unless every byte is 0-9 or a-f.
__attribute__((target("ssse3"))) static inline __m128i digit_values(__m128i x, int *valid) {
    // Signed comparisons: a byte of 0x80 or more is negative, below every bound.
    __m128i digit = _mm_and_si128(_mm_cmpgt_epi8(x, _mm_set1_epi8('0' - 1)), _mm_cmplt_epi8(x, _mm_set1_epi8('9' + 1)));
    __m128i letter = _mm_and_si128(_mm_cmpgt_epi8(x, _mm_set1_epi8('a' - 1)), _mm_cmplt_epi8(x, _mm_set1_epi8('f' + 1)));
    if (_mm_movemask_epi8(_mm_or_si128(digit, letter)) != 0xFFFF) *valid = 0;
    // '0'-'9' carry their value in the low nibble, 'a'-'f' their value minus 9.
    return _mm_add_epi8(_mm_and_si128(x, _mm_set1_epi8(0x0F)), _mm_and_si128(letter, _mm_set1_epi8(9)));
}

// Pairs of digit values (first, second) as bytes first * 16 + second, in 16-bit lanes.
__attribute__((target("ssse3"))) static inline __m128i pairs(__m128i v) {
    return _mm_or_si128(_mm_slli_epi16(_mm_and_si128(v, _mm_set1_epi16(0x00FF)), 4), _mm_srli_epi16(v, 8));
}

__attribute__((target("ssse3"))) static int parse_ssse3(const uint8_t *p, uint64_t *high, uint64_t *low) {
    if (p[8] != '-' || p[13] != '-' || p[18] != '-' || p[23] != '-') return 0;
    __m128i a = _mm_loadu_si128((const __m128i *)p);         // bytes 0-15
    __m128i b = _mm_loadu_si128((const __m128i *)(p + 16));  // bytes 16-31
    __m128i c = _mm_loadu_si128((const __m128i *)(p + 20));  // bytes 20-35
    // The first 16 digits: bytes 0-7, 9-12 and 14-15 of a, then 16-17 (b's 0-1).
    __m128i hi = _mm_or_si128(
        _mm_shuffle_epi8(a, _mm_setr_epi8(0, 1, 2, 3, 4, 5, 6, 7, 9, 10, 11, 12, 14, 15, -1, -1)),
        _mm_shuffle_epi8(b, _mm_setr_epi8(-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, 0, 1)));
    // The last 16: bytes 19-22 and 24-31 (b's 3-6 and 8-15), then 32-35 (c's 12-15).
    __m128i lo = _mm_or_si128(
        _mm_shuffle_epi8(b, _mm_setr_epi8(3, 4, 5, 6, 8, 9, 10, 11, 12, 13, 14, 15, -1, -1, -1, -1)),
        _mm_shuffle_epi8(c, _mm_setr_epi8(-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, 12, 13, 14, 15)));
    int valid = 1;
    __m128i packed = _mm_packus_epi16(pairs(digit_values(hi, &valid)), pairs(digit_values(lo, &valid)));
    if (!valid) return 0;
    *high = __builtin_bswap64((uint64_t)_mm_cvtsi128_si64(packed));
    *low = __builtin_bswap64((uint64_t)_mm_cvtsi128_si64(_mm_unpackhi_epi64(packed, packed)));
    return 1;
}

int notes_uuid_parse_lowercase(const uint8_t *text, uint64_t *high, uint64_t *low) {
    int s = __atomic_load_n(&ssse3, __ATOMIC_RELAXED);
    if (__builtin_expect(s < 0, 0)) {
        s = has_ssse3();
        __atomic_store_n(&ssse3, s, __ATOMIC_RELAXED);
    }
    return s ? parse_ssse3(text, high, low) : -1;
}

#else

int notes_uuid_parse_lowercase(const uint8_t *text, uint64_t *high, uint64_t *low) {
    (void)text;
    (void)high;
    (void)low;
    return -1;
}

#endif
