/* grow.h — an array that grows, its capacity doubled: the one rule behind every list that grows as a file is read or
 * a report gathers (rows, runs, fields, series; mem.h's mem_reserve is it with an exit on no memory).
 * Host-only. */
#pragma once
#include <stdlib.h>

/* items (capacity *cap) with room for `need` elements of `size` bytes: items itself, or a larger copy (the capacity
 * doubled from *cap, or from `first` for a first allocation, until it holds need) with *cap updated; NULL when memory
 * ran out or need passes 2^30 elements (an int index would overflow), items and *cap then unchanged and still the
 * caller's. */
static inline void *grow_to(void *items, int *cap, int need, size_t size, int first) {
    if (need <= *cap) return items;
    int c = *cap > 0 ? *cap : first;
    while (c < need) {
        if (c > (1 << 29)) return NULL;
        c *= 2;
    }
    void *p = realloc(items, (size_t)c * size);
    if (p) *cap = c;
    return p;
}

/* Room for one more element after n:
 *     row_t *p = grow(t->rows, &t->cap, t->n, sizeof *t->rows, 64);
 *     if (!p) return -1;
 *     t->rows = p; */
static inline void *grow(void *items, int *cap, int n, size_t size, int first) {
    return grow_to(items, cap, n + 1, size, first);
}
