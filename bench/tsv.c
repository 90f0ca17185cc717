/* tsv.c — `scaling tsv` (tsv.h): a CSV to TSV through libcsv's parser (study/reader.h's pass), so no script parses
 * CSV a second way. */
#include "tsv.h"
#include "../engine/errmsg.h"
#include "../study/bytes.h"
#include "../study/reader.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

typedef struct {
    bytes_t line;       /* the record so far, cells joined by tabs */
    int nf;             /* its fields */
    int ncols;          /* the header's fields; 0 before the header */
    long dropped;       /* records with another field count */
    long records;       /* records read, the header included */
    long nul;           /* the first record holding a NUL byte (0: none): refused, as no line can hold it */
    int failed;         /* a write to stdout failed */
} tsv_t;

static void tsv_field(void *data, size_t len, void *ctx) {
    tsv_t *t = ctx;
    if (t->nf++) bytes_add(&t->line, "\t", 1);
    const char *s = data ? data : "";
    if (!t->nul && memchr(s, '\0', len)) t->nul = t->records + 1;
    for (size_t i = 0; i < len; i++) {
        char c = s[i] == '\t' || s[i] == '\r' || s[i] == '\n' ? ' ' : s[i];
        bytes_add(&t->line, &c, 1);
    }
}

static void tsv_record(int term, void *ctx) {
    (void)term;
    tsv_t *t = ctx;
    t->records++;
    if (!t->ncols) t->ncols = t->nf;
    if (t->nul || t->failed) {
        /* nothing more is written after a refusal or a failed write */
    } else if (t->nf == t->ncols && !t->line.oom) {
        if (t->line.len && fwrite(t->line.s, 1, t->line.len, stdout) != t->line.len) t->failed = 1;
        if (putchar('\n') == EOF) t->failed = 1;
    } else {
        t->dropped++;
    }
    t->nf = 0;
    t->line.len = 0;
    if (t->line.s) t->line.s[0] = '\0';
}

/* 1 when the file holds a NUL byte; f rewound. */
static int has_nul(FILE *f) {
    char buf[65536];
    size_t n;
    int nul = 0;
    while (!nul && (n = fread(buf, 1, sizeof buf, f)) > 0) nul = memchr(buf, '\0', n) != NULL;
    rewind(f);
    return nul;
}

int tsv_main(int argc, char **argv) {
    if (argc != 3 || strcmp(argv[2], "--help") == 0) {
        fprintf(argc == 3 ? stdout : stderr, "usage: scaling tsv FILE   (FILE a CSV, - for stdin): writes it as TSV "
                "to stdout (doc/cli.md)\n");
        return argc == 3 ? 0 : 2;
    }
    const char *path = argv[2];
    int in = strcmp(path, "-") == 0;
    FILE *f = in ? stdin : fopen(path, "rb");
    if (!f) {
        errmsg_line(stderr, "scaling tsv: ", "%s: cannot read", path);
        return 2;
    }
    if (!in && has_nul(f)) {   /* a file is refused before a line is written; stdin where the record comes */
        fclose(f);
        errmsg_line(stderr, "scaling tsv: ", "%s: a NUL byte, which no TSV line can hold: refused", path);
        return 2;
    }
    tsv_t t = {0};
    char err[512];
    int rc = study_csv_feed(f, in ? "stdin" : path, tsv_field, tsv_record, &t, err, sizeof err);
    if (!in) fclose(f);
    if (fflush(stdout) != 0 || ferror(stdout)) t.failed = 1;
    if (rc) errmsg_line(stderr, "scaling tsv: ", "%s", err);
    else if (t.nul) rc = 2, errmsg_line(stderr, "scaling tsv: ", "%s: record %ld holds a NUL byte, which no TSV line "
                                        "can: refused", in ? "stdin" : path, t.nul);
    else if (t.failed) rc = 1, errmsg_line(stderr, "scaling tsv: ", "stdout: cannot write: %s", strerror(errno));
    else if (t.line.oom) rc = 2, errmsg_line(stderr, "scaling tsv: ", "%s: out of memory", path);
    else if (t.dropped)
        errmsg_line(stderr, "scaling tsv: ", "%s: %ld record(s) with the wrong number of fields skipped (a line cut "
                    "short by a kill?)", in ? "stdin" : path, t.dropped);
    free(t.line.s);
    return rc;
}
