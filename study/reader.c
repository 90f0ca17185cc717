/* reader.c — reading any CSV of this schema or an older one into rows, by column name (the committed studies
 * have older headers): each cell parsed by its column's type from the schema table, a missing column left as
 * study_row_init leaves it. */
#define _POSIX_C_SOURCE 200809L
#include "reader.h"
#include "bytes.h"
#include "grow.h"
#include "../engine/errmsg.h"

#include <csv.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define NCOLS study_ncolumns()
#define RESULTS_MAX_COLUMNS 256

/* One record as libcsv delivers it, every field kept whole (NUL-terminated, one after another in buf). */
typedef struct {
    bytes_t b;                  /* the fields, each followed by its NUL */
    size_t *off;
    int nf, cap_f;
} record_t;

typedef struct {
    study_pass_t *t;
    record_t rec;
    int header_done;
    int *map, nmap;             /* file column -> schema column, or -1 */
    long records;               /* data records seen, for messages */
    char refused[256];          /* the first name cell outside its character set or over RESULTS_NAME_MAX, or a
                                 * count outside its range: the whole CSV is refused */
    int (*want)(const char *, void *);
    void (*fn)(const study_row_t *, void *);
    void *fn_ctx;
    int id_field;               /* the file column of run_id, -1: none */
} read_ctx_t;

static void record_field(void *data, size_t len, void *ctx_) {
    record_t *r = &((read_ctx_t *)ctx_)->rec;
    if (r->b.oom) return;
    size_t *off = grow(r->off, &r->cap_f, r->nf, sizeof *r->off, 64);
    if (!off) { r->b.oom = 1; return; }
    r->off = off;
    size_t at = r->b.len;
    bytes_add(&r->b, data, len);
    bytes_add(&r->b, "", 1);    /* the field's NUL, kept as content */
    if (!r->b.oom) r->off[r->nf++] = at;
}

/* One cell into its member; 0, or -1 when it does not parse as the column's type (the row is skipped). */
static int cell_parse(study_row_t *row, const study_column_t *c, const char *s) {
    char *end;
    switch (c->type) {
    case RESULTS_TEXT:
        if (strlen(s) >= c->size) return -1;
        strcpy(RESULTS_MEMBER(row, c, char), s);
        return 0;
    case RESULTS_STR:
        *RESULTS_MEMBER(row, c, const char *) = s;     /* the record's field: the row lives as long */
        return 0;
    case RESULTS_U64:
        if (!*s) return 0;
        errno = 0;
        *RESULTS_MEMBER(row, c, unsigned long long) = strtoull(s, &end, 10);
        return *end || errno || *s == '-' ? -1 : 0;
    case RESULTS_INT:
    case RESULTS_COUNT: {
        if (!*s) return 0;
        errno = 0;
        long v = strtol(s, &end, 10);
        if (*end || errno || v < 0 || v > 2147483647L) return -1;
        *RESULTS_MEMBER(row, c, int) = (int)v;
        return 0;
    }
    case RESULTS_NUM: {
        if (!*s) return 0;
        /* decimal or "nan" (the writer's NaN, a diverged loss); strtod's hexadecimal is no number here, and an
         * infinity no measurement: it reads as NaN, and 1 tells the caller to mark the row */
        double v = strtod(s, &end);
        if (*end || strpbrk(s, "xX")) return -1;
        *RESULTS_MEMBER(row, c, double) = isinf(v) ? NAN : v;
        return isinf(v) ? 1 : 0;
    }
    case RESULTS_REPLICAS:
        if (!*s) return 0;
        if (strcmp(s, "identical") != 0 && strcmp(s, "DIFFER") != 0) return -1;
        *RESULTS_MEMBER(row, c, int) = strcmp(s, "identical") == 0;
        return 0;
    }
    return -1;
}

/* A NAME or SET cell holding a byte outside its set, or a NAME of a STR column over RESULTS_NAME_MAX bytes, refuses
 * the CSV: the message names the record, the column and the byte (as a number: the byte itself may be a newline) or
 * the length. len: the cell's bytes as read, so that a NUL inside it is such a byte rather than the name's end. */
static void check_name(read_ctx_t *c, const study_column_t *col, const char *s, size_t len) {
    if (!(col->flags & (RESULTS_F_NAME | RESULTS_F_SET)) || c->refused[0]) return;
    if (col->type == RESULTS_STR && strlen(s) > RESULTS_NAME_MAX) {
        snprintf(c->refused, sizeof c->refused, "record %ld, column %s: a name of %zu bytes (at most %d)", c->records,
                 col->name, strlen(s), RESULTS_NAME_MAX);
        return;
    }
    for (const unsigned char *p = (const unsigned char *)s; p < (const unsigned char *)s + len; p++) {
        if (study_name_byte_ok(col->flags, *p)) continue;
        snprintf(c->refused, sizeof c->refused,
                 "record %ld, column %s: byte 0x%02x is not allowed in a name (" RESULTS_NAME_WORDS ")",
                 c->records, col->name, *p);
        return;
    }
}

/* A SIZE or POS cell that is not an integer in its range refuses the CSV: the message names the record, the column
 * and the value (echoed only where it is a short run of plain characters). */
static void check_size(read_ctx_t *c, const study_column_t *col, const char *s) {
    if (!(col->flags & (RESULTS_F_SIZE | RESULTS_F_POS)) || c->refused[0] || !*s) return;
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    long long max = col->flags & RESULTS_F_SIZE ? RESULTS_SIZE_MAX : 2147483647LL;
    if (!*end && !errno && v >= 1 && v <= max) return;
    int plain = strlen(s) <= 24 && strspn(s, "0123456789+-.eE") == strlen(s);
    snprintf(c->refused, sizeof c->refused, "record %ld, column %s: %s%s%s is not an integer from 1 to %lld",
             c->records, col->name, plain ? "\"" : "", plain ? s : "the cell", plain ? "\"" : "", max);
}

static void read_header(read_ctx_t *c) {
    record_t *r = &c->rec;
    c->map = malloc((size_t)(r->nf ? r->nf : 1) * sizeof *c->map);
    if (!c->map) { r->b.oom = 1; return; }
    c->nmap = r->nf;
    int have[RESULTS_MAX_COLUMNS] = {0};
    for (int j = 0; j < r->nf; j++) {
        c->map[j] = study_column_index(r->b.s + r->off[j]);
        if (c->map[j] >= 0 && have[c->map[j]]++) c->map[j] = -1;    /* a repeated name: the first counts */
        if (c->map[j] >= 0 && c->map[j] == RESULTS_COL_run_id) c->id_field = j;
        if (c->map[j] < 0) c->t->unknown++;
    }
    for (int i = 0; i < NCOLS; i++) c->t->missing += !have[i];
}

/* A data record into a row handed to the pass's fn; a cell that does not parse, or no run_id, skips the record as a
 * bad row. */
static void read_row(read_ctx_t *c) {
    record_t *r = &c->rec;
    if (c->want && c->id_field >= 0 && !c->want(r->b.s + r->off[c->id_field], c->fn_ctx)) return;
    study_row_t row;
    study_row_init(&row);
    for (int i = 0; i < NCOLS; i++)
        if (study_schema[i].type == RESULTS_STR) *RESULTS_MEMBER(&row, &study_schema[i], const char *) = "";
    int bad = 0, infinite = 0;
    for (int j = 0; j < r->nf && !bad; j++)
        if (c->map[j] >= 0) {
            /* each field is followed by its NUL (record_field) */
            size_t len = (j + 1 < r->nf ? r->off[j + 1] : r->b.len) - r->off[j] - 1;
            check_name(c, &study_schema[c->map[j]], r->b.s + r->off[j], len);
            check_size(c, &study_schema[c->map[j]], r->b.s + r->off[j]);
            int k = cell_parse(&row, &study_schema[c->map[j]], r->b.s + r->off[j]);
            bad = k < 0;
            infinite |= k > 0;
        }
    /* An ok row holding an infinity measured nothing: failed, so that no table shows it as a speedup (a diverged
     * row's infinite loss is what diverged means, and stays so). */
    if (infinite && strcmp(row.status, study_status_name(RUN_OK)) == 0) row.status = study_status_name(RUN_FAILED);
    if (bad || !row.run_id[0]) {
        c->t->bad_rows++;
        return;
    }
    c->t->rows++;
    c->fn(&row, c->fn_ctx);
}

static void read_record(int term, void *ctx_) {
    (void)term;
    read_ctx_t *c = ctx_;
    record_t *r = &c->rec;
    if (!r->b.oom) {
        if (!c->header_done) {
            c->header_done = 1;
            read_header(c);
        } else if (++c->records, r->nf != c->nmap) {
            c->t->bad_rows++;   /* a line cut short by a kill */
        } else {
            read_row(c);
        }
    }
    r->nf = 0;
    r->b.len = 0;
}

/* study_csv_feed reading at most limit bytes (< 0: all); *used gets the bytes read. */
static int feed(FILE *f, const char *path, long long limit, void (*field)(void *, size_t, void *),
                void (*row)(int, void *), void *ctx, long long *used, char *err, size_t errlen) {
    /* Not CSV_STRICT: a line cut by a kill is one short record to skip, not a reason to stop reading. */
    struct csv_parser p;
    if (csv_init(&p, 0) != 0) return errmsg(2, err, errlen, "%s: cannot initialise the CSV parser", path);
    int rc = 0;
    char buf[65536];
    *used = 0;
    for (;;) {
        size_t want = sizeof buf, n;
        if (limit >= 0 && limit - *used < (long long)want) want = (size_t)(limit - *used);
        if (rc || !want || (n = fread(buf, 1, want, f)) == 0) break;
        *used += (long long)n;
        if (csv_parse(&p, buf, n, field, row, ctx) != n)
            rc = errmsg(2, err, errlen, "%s: %s", path, csv_strerror(csv_error(&p)));
    }
    if (!rc && ferror(f)) rc = errmsg(2, err, errlen, "%s: read error: %s", path, strerror(errno));
    if (!rc) csv_fini(&p, field, row, ctx);
    csv_free(&p);
    return rc;
}

int study_csv_feed(FILE *f, const char *path, void (*field)(void *, size_t, void *), void (*row)(int, void *),
                   void *ctx, char *err, size_t errlen) {
    long long used;
    return feed(f, path, -1, field, row, ctx, &used, err, errlen);
}

int study_pass(FILE *f, const char *path, long long limit, int (*want)(const char *, void *),
               void (*fn)(const study_row_t *, void *), void *ctx, study_pass_t *t, char *err, size_t errlen) {
    memset(t, 0, sizeof *t);
    if (err && errlen) err[0] = '\0';
    if (fseek(f, 0, SEEK_SET) != 0) return errmsg(2, err, errlen, "%s: cannot read from its start: %s", path,
                                                  strerror(errno));
    read_ctx_t c = {.t = t, .want = want, .fn = fn, .fn_ctx = ctx, .id_field = -1};
    int rc = feed(f, path, limit, record_field, read_record, &c, &t->bytes, err, errlen);
    int has_run_id = 0, has_epoch = 0;
    for (int j = 0; j < c.nmap; j++) {
        has_run_id |= c.map[j] == RESULTS_COL_run_id;
        has_epoch |= c.map[j] == RESULTS_COL_epoch;
    }
    if (!rc && c.rec.b.oom) rc = errmsg(2, err, errlen, "%s: out of memory reading", path);
    else if (!rc && !c.header_done) rc = errmsg(2, err, errlen, "%s: empty file", path);
    else if (!rc && !has_run_id) rc = errmsg(2, err, errlen, "%s: no run_id column: not a scaling CSV", path);
    else if (!rc && !has_epoch)    /* a report's summary.csv has run_id but one row per configuration, no epochs */
        rc = errmsg(2, err, errlen, "%s: no epoch column: not a study CSV (a report's summary.csv?)", path);
    else if (!rc && c.refused[0]) rc = errmsg(2, err, errlen, "%s: %s", path, c.refused);
    free(c.map);
    free(c.rec.b.s);
    free(c.rec.off);
    return rc;
}

/* study_read's copy of a passing row: the row, and its strings in one block of their own. */
static void keep_row(const study_row_t *row, void *ctx) {
    study_rows_t *t = ctx;
    if (t->oom) return;
    int cap_rows = t->cap, cap_text = t->cap;    /* rows and their blocks grow together: one capacity */
    study_row_t *rows = grow(t->row, &cap_rows, t->n, sizeof *rows, 256);
    if (rows) t->row = rows;
    char **text = rows ? grow(t->text, &cap_text, t->n, sizeof *text, 256) : NULL;
    if (text) t->text = text;
    size_t len = 0;
    for (int i = 0; i < NCOLS; i++)
        if (study_schema[i].type == RESULTS_STR) len += strlen(*RESULTS_CMEMBER(row, &study_schema[i], char *)) + 1;
    char *block = rows && text ? malloc(len) : NULL, *p = block;
    if (!block) { t->oom = 1; return; }
    t->cap = cap_rows;
    t->row[t->n] = *row;
    for (int i = 0; i < NCOLS; i++)
        if (study_schema[i].type == RESULTS_STR) {
            const char **m = RESULTS_MEMBER(&t->row[t->n], &study_schema[i], const char *);
            size_t n = strlen(*m) + 1;
            memcpy(p, *m, n);
            *m = p;
            p += n;
        }
    t->text[t->n++] = block;
}

int study_read(const char *path, study_rows_t *t, char *err, size_t errlen) {
    memset(t, 0, sizeof *t);
    if (err && errlen) err[0] = '\0';
    FILE *f = fopen(path, "rb");
    if (!f) return errmsg(2, err, errlen, "%s: cannot read: %s", path, strerror(errno));
    study_pass_t p;
    int rc = study_pass(f, path, -1, NULL, keep_row, t, &p, err, errlen);
    fclose(f);
    if (!rc && t->oom) rc = errmsg(2, err, errlen, "%s: out of memory reading", path);
    t->bad_rows = p.bad_rows, t->missing = p.missing, t->unknown = p.unknown;
    if (rc) study_rows_free(t);
    return rc;
}

void study_rows_free(study_rows_t *t) {
    for (int i = 0; i < t->n; i++) free(t->text[i]);
    free(t->text);
    free(t->row);
    memset(t, 0, sizeof *t);
}
