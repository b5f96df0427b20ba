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

#endif
