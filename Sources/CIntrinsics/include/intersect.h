#ifndef NOTES_INTERSECT_H
#define NOTES_INTERSECT_H
#include <stdint.h>

/// The numbers both `a` (`na` of them) and `b` (`nb`) hold, each list rising without repeats:
/// for the m-th shared number, its index in `a` plus `aBase` goes to `outA[m]` and its index in
/// `b` plus `bBase` to `outB[m]`, in rising order, at most `room` of them (lists that do not
/// rise, which damage could make, may share more than the shorter holds). Returns how many.
/// Four numbers of each list
/// are compared at once (SSE2, which every x86-64 processor has; a plain merge elsewhere).
int notes_intersect_sorted(
    const uint32_t *a, int na, const uint32_t *b, int nb, int32_t aBase, int32_t bBase, int32_t *outA,
    int32_t *outB, int room);

/// The first index in `from..<to` of `p` (rising) whose number is `d` or above (`to` when none),
/// or, with `above` non-zero, whose number is above `d`. Branch-free: the halving steps depend
/// only on the length, and each picks its half with a conditional move. A query's searches in
/// its blocks land at random, so a branch on each comparison was mispredicted about half the
/// time (a tenth of a two-word query's time went to them).
static inline int notes_bound(const uint32_t *p, int from, int to, uint32_t d, int above) {
    if (to <= from) return from;
    const uint32_t *base = p + from;
    int n = to - from;
    // With `above`, "number <= d" is "number < d + 1" (d + 1 wraps to 0 only for d = UINT32_MAX,
    // where every number is <= d: the whole range).
    if (above && d == UINT32_MAX) return to;
    uint32_t key = above ? d + 1 : d;
    while (n > 1) {
        int half = n >> 1;
        base = base[half - 1] < key ? base + half : base;
        n -= half;
    }
    return (int)(base - p) + (*base < key);
}

#endif
