/* allreduce.h — the all-reduce benchmark's CSV (`scaling --bench allreduce`) in one table (ALLREDUCE_SCHEMA): its
 * columns in file order, the row struct written from it, its header, and the names the report reads it by.
 * Host-only. */
#pragma once
#include <stddef.h>
#include <stdio.h>

/* X(name, type, format, flags, older name): name is the column's name as an identifier. Types: STR a const char *
 * written quoted (csv_fwrite: a host or GPU name is free text), WORD a const char * written bare (one of the
 * benchmark's own names), INT an int, SIZE a size_t, U64, NUM a double in the format. Flags: FIT, a column the
 * report's α-β fit cannot do without (its absence makes the file no benchmark's). The older name is what an earlier
 * version of the benchmark called the column, read where the name is missing. Any change of names or order makes an
 * older CSV's header differ, so appending to it is refused; the report still reads it, by column name. */
#define ALLREDUCE_SCHEMA(X)                                                                                            \
    X(strategy,   STR,  NULL,   FIT, NULL)                                                                             \
    X(gpus,       INT,  NULL,   FIT, NULL)                                                                             \
    X(algo,       STR,  NULL,   0,   NULL)                                                                             \
    X(size_bytes, SIZE, NULL,   FIT, "bytes")   /* on the wire: count x 2 for bfloat16 */                             \
    X(count,      SIZE, NULL,   0,   NULL)                                                                             \
    X(type,       WORD, NULL,   0,   NULL)      /* nccl-tests' name of the element type; empty reads as float */      \
    X(redop,      WORD, NULL,   0,   NULL)                                                                             \
    X(time_us,    NUM,  "%.3f", FIT, NULL)                                                                             \
    X(algbw_gbs,  NUM,  "%.4f", 0,   NULL)                                                                             \
    X(busbw_gbs,  NUM,  "%.4f", 0,   NULL)                                                                             \
    X(wrong,      U64,  NULL,   0,   NULL)                                                                             \
    X(gpu_name,   STR,  NULL,   0,   NULL)                                                                             \
    X(driver,     STR,  NULL,   0,   NULL)                                                                             \
    X(cuda,       STR,  NULL,   0,   NULL)                                                                             \
    X(nccl,       STR,  NULL,   0,   NULL)                                                                             \
    X(host,       STR,  NULL,   0,   NULL)                                                                             \
    X(git_commit, STR,  NULL,   0,   NULL)                                                                             \
    X(timestamp,  STR,  NULL,   0,   NULL)

#define ALLREDUCE_CTYPE_STR const char *
#define ALLREDUCE_CTYPE_WORD const char *
#define ALLREDUCE_CTYPE_INT int
#define ALLREDUCE_CTYPE_SIZE size_t
#define ALLREDUCE_CTYPE_U64 unsigned long long
#define ALLREDUCE_CTYPE_NUM double

/* One row, a member per column, named as the column. */
#define ALLREDUCE_MEMBER(name, type, fmt, flags, old) ALLREDUCE_CTYPE_##type name;
typedef struct {
    ALLREDUCE_SCHEMA(ALLREDUCE_MEMBER)
} allreduce_row_t;
#undef ALLREDUCE_MEMBER

/* Every column as a constant, ALLREDUCE_COL_<name>, in file order: its index in allreduce_columns. */
#define ALLREDUCE_COL_ENUM(name, type, fmt, flags, old) ALLREDUCE_COL_##name,
typedef enum { ALLREDUCE_SCHEMA(ALLREDUCE_COL_ENUM) ALLREDUCE_NCOLS } allreduce_col_t;
#undef ALLREDUCE_COL_ENUM

enum { ALLREDUCE_F_0 = 0, ALLREDUCE_F_FIT = 1 };
typedef struct {
    const char *name;
    int flags;                  /* ALLREDUCE_F_* */
    const char *old;            /* the name an older CSV gave it, or NULL */
} allreduce_column_t;
extern const allreduce_column_t allreduce_columns[ALLREDUCE_NCOLS];

/* The header line, without its newline. */
const char *allreduce_header(void);
/* Writes one row and its newline. */
void allreduce_write_row(FILE *f, const allreduce_row_t *r);
