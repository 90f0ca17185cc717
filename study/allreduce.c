/* allreduce.c — the all-reduce benchmark's CSV from its schema (allreduce.h): the column table, the header and a row
 * written cell by cell. */
#include "allreduce.h"

#include <csv.h>
#include <string.h>

#define COLUMN_DESC(name, type, fmt, flags, old) {#name, ALLREDUCE_F_##flags, old},
const allreduce_column_t allreduce_columns[ALLREDUCE_NCOLS] = {ALLREDUCE_SCHEMA(COLUMN_DESC)};
#undef COLUMN_DESC

#define HEADER_CELL(name, type, fmt, flags, old) "," #name
static const char header[] = ALLREDUCE_SCHEMA(HEADER_CELL);
#undef HEADER_CELL

const char *allreduce_header(void) { return header + 1; }

static void cell_STR(FILE *f, const char *s, const char *fmt) {
    (void)fmt;
    if (!s) s = "";
    csv_fwrite(f, s, strlen(s));
}
static void cell_WORD(FILE *f, const char *s, const char *fmt) { (void)fmt, fputs(s ? s : "", f); }
static void cell_INT(FILE *f, int x, const char *fmt) { (void)fmt, fprintf(f, "%d", x); }
static void cell_SIZE(FILE *f, size_t x, const char *fmt) { (void)fmt, fprintf(f, "%zu", x); }
static void cell_U64(FILE *f, unsigned long long x, const char *fmt) { (void)fmt, fprintf(f, "%llu", x); }
static void cell_NUM(FILE *f, double x, const char *fmt) { fprintf(f, fmt, x); }

void allreduce_write_row(FILE *f, const allreduce_row_t *r) {
    int i = 0;
#define WRITE_CELL(name, type, fmt, flags, old)                                                                        \
    if (i++) fputc(',', f);                                                                                            \
    cell_##type(f, r->name, fmt);
    ALLREDUCE_SCHEMA(WRITE_CELL)
#undef WRITE_CELL
    fputc('\n', f);
}
