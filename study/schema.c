/* schema.c — the schema table from RESULTS_SCHEMA (schema.h): the column descriptions the writer and the readers walk,
 * the names in file order, a row with every cell "not applicable", and the bytes a name cell may hold. */
#include "schema.h"

#include <string.h>

#define COLUMN_DESC(name, type, member, fmt, flags) \
    {#name, RESULTS_##type, RESULTS_F_##flags, offsetof(results_row_t, member), sizeof(((results_row_t *)0)->member), fmt},
const results_column_t results_schema[] = {RESULTS_SCHEMA(COLUMN_DESC)};
#define NCOLS ((int)(sizeof results_schema / sizeof results_schema[0]))
_Static_assert(sizeof results_schema / sizeof results_schema[0] == RESULTS_NCOLS, "one entry per column");
_Static_assert(sizeof results_schema / sizeof results_schema[0] <= 128, "the runs' scan (runs.c) keeps at most 128 columns");

#define COLUMN_NAME(name, type, member, fmt, flags) #name,
const char *const results_columns[] = {RESULTS_SCHEMA(COLUMN_NAME) NULL};

int results_ncolumns(void) {
    return NCOLS;
}

void results_row_init(results_row_t *row) {
    memset(row, 0, sizeof *row);
    for (int i = 0; i < NCOLS; i++) {
        const results_column_t *c = &results_schema[i];
        if (c->type == RESULTS_INT || c->type == RESULTS_COUNT || c->type == RESULTS_REPLICAS)
            *RESULTS_MEMBER(row, c, int) = -1;
        else if (c->type == RESULTS_NUM) *RESULTS_MEMBER(row, c, double) = -1;
    }
}

int results_name_byte_ok(int flags, unsigned char b) {
    if (!(flags & (RESULTS_F_NAME | RESULTS_F_SET))) return 1;
    return (b && strchr(RESULTS_NAME_CHARS, b)) || (b == '|' && (flags & RESULTS_F_SET));
}

int results_column_index(const char *name) {
    for (int i = 0; results_columns[i]; i++)
        if (strcmp(results_columns[i], name) == 0) return i;
    return -1;
}
