/* bytes.h — a growing byte buffer, NUL-terminated after its contents, for rows and records of any length: what the
 * CSV writer builds a line in and the reader keeps a record's fields in. Host-only. */
#pragma once
#include <stdlib.h>
#include <string.h>

typedef struct {
    char *s;
    size_t len, cap;
    int oom;                    /* an allocation failed: later calls do nothing, the caller reports it */
} bytes_t;

/* Room for `extra` more bytes and a NUL; 0, or -1 (and oom set) when memory ran out. */
static inline int bytes_reserve(bytes_t *b, size_t extra) {
    if (b->oom) return -1;
    if (b->len + extra + 1 <= b->cap) return 0;
    size_t cap = b->cap ? b->cap : 512;
    while (cap < b->len + extra + 1) cap *= 2;
    char *s = (char *)realloc(b->s, cap);
    if (!s) {
        b->oom = 1;
        return -1;
    }
    b->s = s;
    b->cap = cap;
    return 0;
}

/* Appends n bytes and keeps the NUL after them. */
static inline void bytes_add(bytes_t *b, const void *p, size_t n) {
    if (bytes_reserve(b, n) != 0) return;
    if (n) memcpy(b->s + b->len, p, n);
    b->len += n;
    b->s[b->len] = '\0';
}
