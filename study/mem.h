/* mem.h — the memory of the loaded study (table.h) and the report: allocations that end the command with one line when the host has none left (a report
 * with a number missing would be wrong, not shorter), arrays that grow, formatted text of any length, and a map from
 * strings to indices (run ids, distinct names) so that gathering a study stays linear in its rows. Host-only. */
#pragma once
#include <stddef.h>

#include "bytes.h"

#if defined(__GNUC__)
#define MEM_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define MEM_PRINTF(a, b)
#endif

/* malloc, calloc and realloc that never return NULL: out of memory, one stderr line and exit 1. */
void *mem_alloc(size_t n);
void *mem_zalloc(size_t count, size_t size);
void *mem_realloc(void *p, size_t n);
/* Room for `need` elements of `size` bytes in *p (capacity *cap, doubled as it grows). */
void mem_reserve(void **p, int *cap, int need, size_t size);
/* Appends one element to the array arr of n elements (cap its capacity) and returns a pointer to it, zeroed. */
#define MEM_PUSH(arr, n, cap) \
    (mem_reserve((void **)&(arr), &(cap), (n) + 1, sizeof *(arr)), memset(&(arr)[(n)], 0, sizeof *(arr)), &(arr)[(n)++])

/* A new string formatted as printf would (freed by the caller). */
char *mem_printf(const char *fmt, ...) MEM_PRINTF(1, 2);
/* Appends to b as printf would; b->s stays NUL-terminated. */
void text_printf(bytes_t *b, const char *fmt, ...) MEM_PRINTF(2, 3);
/* Empties b (its memory kept). */
void text_clear(bytes_t *b);
/* b's text, "" while nothing was written. */
const char *text_str(const bytes_t *b);

/* A map from strings to indices: the strings are the caller's and must outlive the map. */
typedef struct {
    const char **key;
    int *val;
    int n, cap;     /* entries, slots (a power of two) */
} smap_t;
/* The index stored for key, or -1. */
int smap_get(const smap_t *m, const char *key);
/* Stores val for key (a new key: added; a known one: replaced). */
void smap_put(smap_t *m, const char *key, int val);
void smap_free(smap_t *m);

/* Distinct strings in the order first seen (pointers to the caller's strings). */
typedef struct {
    const char **v;
    int n, cap;
    smap_t seen;
} names_t;
/* Adds s when new; 1 when it was new. */
int names_add(names_t *l, const char *s);
/* The names joined with sep into b ("" for none). */
void names_join(bytes_t *b, const names_t *l, const char *sep);
void names_free(names_t *l);

/* Memory handed out in large blocks and freed at once, and strings kept there once each: the loaded study's rows,
 * names and cells, which repeat from row to row (one block per copy would cost more than the copies). */
typedef struct {
    char **block;
    int nb, capb;
    size_t used, size;      /* of the current block */
    smap_t seen;            /* pool_str's strings */
} pool_t;
/* n bytes, aligned for any member of a row; they live until pool_free. */
void *pool_alloc(pool_t *p, size_t n);
/* A copy of s, one per distinct string (equal strings give one pointer). */
const char *pool_str(pool_t *p, const char *s);
/* A copy of s of its own, for strings that seldom repeat (run ids): no entry in the map. */
const char *pool_copy(pool_t *p, const char *s);
void pool_free(pool_t *p);

/* The FNV-1a hash of n bytes, continuing from h (start with MEM_HASH_SEED). */
#define MEM_HASH_SEED 1469598103934665603ull
unsigned long long mem_hash(unsigned long long h, const void *p, size_t n);
