/* mem.c — the loaded study's and the report's allocations, growing arrays, formatted text and string map (mem.h). */
#include "mem.h"
#include "grow.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void *checked(void *p) {
    if (p) return p;
    fprintf(stderr, "scaling report: error: out of host memory\n");
    exit(1);
}

void *mem_alloc(size_t n) { return checked(malloc(n ? n : 1)); }
void *mem_zalloc(size_t count, size_t size) { return checked(calloc(count ? count : 1, size ? size : 1)); }
void *mem_realloc(void *p, size_t n) { return checked(realloc(p, n ? n : 1)); }

void mem_reserve(void **p, int *cap, int need, size_t size) {
    if (need > *cap) *p = checked(grow_to(*p, cap, need, size, 8));   /* study/grow.h's doubling */
}

char *mem_printf(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char *s = mem_alloc((size_t)(n > 0 ? n : 0) + 1);
    va_start(ap, fmt);
    vsnprintf(s, (size_t)(n > 0 ? n : 0) + 1, fmt, ap);
    va_end(ap);
    return s;
}

void text_printf(bytes_t *b, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    if (bytes_reserve(b, (size_t)n) != 0) checked(NULL);
    va_start(ap, fmt);
    vsnprintf(b->s + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

const char *text_str(const bytes_t *b) { return b->s ? b->s : ""; }

void text_clear(bytes_t *b) {
    b->len = 0;
    if (b->s) b->s[0] = '\0';
}

unsigned long long mem_hash(unsigned long long h, const void *p, size_t n) {
    const unsigned char *c = p;
    for (size_t i = 0; i < n; i++) h = (h ^ c[i]) * 1099511628211ull;
    return h;
}

static int slot(const smap_t *m, const char *key) {
    size_t mask = (size_t)m->cap - 1, i = (size_t)mem_hash(MEM_HASH_SEED, key, strlen(key)) & mask;
    while (m->key[i] && strcmp(m->key[i], key) != 0) i = (i + 1) & mask;
    return (int)i;
}

int smap_get(const smap_t *m, const char *key) {
    if (!m->cap) return -1;
    int i = slot(m, key);
    return m->key[i] ? m->val[i] : -1;
}

void smap_put(smap_t *m, const char *key, int val) {
    if (2 * (m->n + 1) > m->cap) {   /* at most half full: probes stay short */
        smap_t g = {.cap = m->cap ? 2 * m->cap : 64};
        if (g.cap > (1 << 30)) checked(NULL);
        g.key = mem_zalloc((size_t)g.cap, sizeof *g.key);
        g.val = mem_alloc((size_t)g.cap * sizeof *g.val);
        for (int i = 0; i < m->cap; i++)
            if (m->key[i]) {
                int j = slot(&g, m->key[i]);
                g.key[j] = m->key[i], g.val[j] = m->val[i], g.n++;
            }
        smap_free(m);
        *m = g;
    }
    int i = slot(m, key);
    if (!m->key[i]) m->key[i] = key, m->n++;
    m->val[i] = val;
}

void smap_free(smap_t *m) {
    free(m->key);
    free(m->val);
    memset(m, 0, sizeof *m);
}

int names_add(names_t *l, const char *s) {
    if (!s || smap_get(&l->seen, s) >= 0) return 0;
    smap_put(&l->seen, s, l->n);
    *MEM_PUSH(l->v, l->n, l->cap) = s;
    return 1;
}

void names_join(bytes_t *b, const names_t *l, const char *sep) {
    for (int i = 0; i < l->n; i++) text_printf(b, "%s%s", i ? sep : "", l->v[i]);
}

/* A block holds many small allocations; a larger one gets a block of its own. */
#define POOL_BLOCK ((size_t)1 << 16)

void *pool_alloc(pool_t *p, size_t n) {
    size_t at = (p->used + 15) & ~(size_t)15;
    if (!p->nb || at + n > p->size) {
        size_t size = n > POOL_BLOCK ? n : POOL_BLOCK;
        mem_reserve((void **)&p->block, &p->capb, p->nb + 1, sizeof *p->block);
        p->block[p->nb++] = mem_alloc(size);
        p->size = size, at = 0;
    }
    p->used = at + n;
    return p->block[p->nb - 1] + at;
}

const char *pool_copy(pool_t *p, const char *s) {
    size_t n = strlen(s) + 1;
    char *c;
    if (p->nb && p->used + n <= p->size) c = p->block[p->nb - 1] + p->used, p->used += n;   /* no alignment needed */
    else c = pool_alloc(p, n);
    memcpy(c, s, n);
    return c;
}

const char *pool_str(pool_t *p, const char *s) {
    if (p->seen.cap) {
        int i = slot(&p->seen, s);
        if (p->seen.key[i]) return p->seen.key[i];
    }
    const char *c = pool_copy(p, s);
    smap_put(&p->seen, c, 0);
    return c;
}

void pool_free(pool_t *p) {
    for (int i = 0; i < p->nb; i++) free(p->block[i]);
    free(p->block);
    smap_free(&p->seen);
    memset(p, 0, sizeof *p);
}

void names_free(names_t *l) {
    free(l->v);
    smap_free(&l->seen);
    memset(l, 0, sizeof *l);
}
