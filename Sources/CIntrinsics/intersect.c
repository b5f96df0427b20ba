// The docs two posting blocks share, for a two-word query whose blocks are too sparse for the
// table of slots (see SearchIndex.runTwo). A merge takes one step per doc of either list, each
// waiting on the comparison before it; here four docs of each list are compared with all four
// of the other's in a few vector operations, and the list whose fourth doc is smaller (or both)
// moves on by four, so a step waits on one comparison for up to eight docs.
#include "intersect.h"

#if defined(__x86_64__)
#include <emmintrin.h>
#endif

// The rest of the two lists, one doc at a time.
static int merge_tail(
    const uint32_t *a, int i, int na, const uint32_t *b, int j, int nb, int32_t aBase, int32_t bBase,
    int32_t *outA, int32_t *outB, int room, int m) {
    while (i < na && j < nb) {
        uint32_t u = a[i], v = b[j];
        if (u == v) {
            if (m == room) return m;
            outA[m] = aBase + i;
            outB[m] = bBase + j;
            m++;
        }
        i += u <= v;
        j += v <= u;
    }
    return m;
}

int notes_intersect_sorted(
    const uint32_t *a, int na, const uint32_t *b, int nb, int32_t aBase, int32_t bBase, int32_t *outA,
    int32_t *outB, int room) {
    int i = 0, j = 0, m = 0;
#if defined(__x86_64__)
    // Signed comparisons would misorder docs of 2^31 and above; only equality is compared in
    // vectors, and the order of the fourth docs is compared as unsigned scalars.
    while (i + 4 <= na && j + 4 <= nb) {
        __m128i va = _mm_loadu_si128((const __m128i *)(a + i));
        __m128i vb = _mm_loadu_si128((const __m128i *)(b + j));
        __m128i e0 = _mm_cmpeq_epi32(va, vb);
        __m128i e1 = _mm_cmpeq_epi32(va, _mm_shuffle_epi32(vb, _MM_SHUFFLE(0, 3, 2, 1)));
        __m128i e2 = _mm_cmpeq_epi32(va, _mm_shuffle_epi32(vb, _MM_SHUFFLE(1, 0, 3, 2)));
        __m128i e3 = _mm_cmpeq_epi32(va, _mm_shuffle_epi32(vb, _MM_SHUFFLE(2, 1, 0, 3)));
        int hits = _mm_movemask_ps(_mm_castsi128_ps(_mm_or_si128(_mm_or_si128(e0, e1), _mm_or_si128(e2, e3))));
        while (hits) {
            // Lane k of a matched one of b's four: find which (rare, so a short scan).
            int k = __builtin_ctz((unsigned)hits);
            hits &= hits - 1;
            uint32_t d = a[i + k];
            int l = 0;
            while (b[j + l] != d) l++;
            if (m == room) return m;
            outA[m] = aBase + i + k;
            outB[m] = bBase + j + l;
            m++;
        }
        uint32_t lastA = a[i + 3], lastB = b[j + 3];
        i += (lastA <= lastB) ? 4 : 0;
        j += (lastB <= lastA) ? 4 : 0;
    }
#endif
    return merge_tail(a, i, na, b, j, nb, aBase, bBase, outA, outB, room, m);
}
