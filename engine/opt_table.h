/* opt_table.h — a command line from one table of options: each entry holds an option's name, argument, default, help
 * and parser, and from the table come getopt_long's table, the defaults, the positional arguments and --help's
 * lines. Every error is one line naming the option and the bad value. Used by `scaling` (bench/options.c) and
 * `scaling report` (report/report.c). Host-only. */
#pragma once
#include <stddef.h>
#include <stdio.h>

typedef struct opt opt_t;
/* Stores arg into the options struct o (the member at opt->field); 0, or 2 with the one-line message in err. */
typedef int (*opt_parse_t)(void *o, const opt_t *opt, const char *arg, char *err, size_t errlen);

struct opt {
    const char *name;               /* --name */
    const char *arg;                /* its argument as --help shows it; NULL: takes none */
    const char *def;                /* the default, as typed on the command line: parsed before argv is */
    const char *def_help;           /* the default as --help says it where not def (derived later), else NULL */
    opt_parse_t parse;              /* NULL: --help (also -h) */
    size_t field, count;            /* offsetof the options struct's member, and of a list's count */
    const char *what;               /* the value's name in messages: "unknown <what>", "empty <what>" */
    const char *const *choices;     /* the valid values: checked, and listed by --help */
    const char *help;               /* wrapped to OPT_HELP_WIDTH by --help (opt_wrap): '\n' is a blank there */
};

/* At most this many values in a list option, and this many options in a table (one bit each in `given`). */
#define OPT_LIST_MAX 32
#define OPT_TABLE_MAX 64

/* A table and how its command takes positional arguments. */
typedef struct {
    const opt_t *opt;
    int n;
    int max_positional;             /* 0: none (the first is an error, and options end there); else at most this
                                     * many, anywhere among the options */
} opt_table_t;

/* Parses each option's default into o. 0, or 2 with the message (a table's bug). */
int opt_defaults(const opt_table_t *t, void *o, char *err, size_t errlen);
/* Parses argv[1..] into o (defaults first), bit i of *given set for option i met. The positional arguments go to
 * pos[0..*npos). 0; 1 when --help was asked (nothing printed); 2 with a one-line message in err. */
int opt_parse(const opt_table_t *t, void *o, unsigned long long *given, int argc, char **argv, const char **pos,
              int *npos, char *err, size_t errlen);
/* The index of option `name` (without dashes), or -1. */
int opt_index(const opt_table_t *t, const char *name);
/* The option a mistyped name (its first n characters, without dashes) most likely meant: the nearest name, within a
 * third of its letters (at least one) of edits; -1 where none is that near. */
int opt_suggest(const opt_table_t *t, const char *word, size_t n);
/* --help's lines for every option: the option and its argument, its help (continuation lines aligned), its choices
 * and its default; none wider than OPT_HELP_WIDTH but a single word that is. */
void opt_usage(FILE *f, const opt_table_t *t);
/* A terminal's width, which --help fits. */
#define OPT_HELP_WIDTH 80
/* Writes text word-wrapped to OPT_HELP_WIDTH: its first line goes on at column col (what is already printed of
 * it), the next lines start at column indent. Blanks between words stay as they are (aligned columns keep their
 * alignment); a '\n' is a blank, two end a paragraph. Returns the column it ends at; writes no final newline. */
int opt_wrap(FILE *f, const char *text, int col, int indent);

/* The parsers an entry may name. */
int opt_str(void *o, const opt_t *opt, const char *arg, char *err, size_t errlen);         /* non-empty text */
int opt_choice(void *o, const opt_t *opt, const char *arg, char *err, size_t errlen);      /* one of choices */
/* int: the index of one of choices, where choices is an enum's name table (value = index): the name parsed once. */
int opt_enum(void *o, const opt_t *opt, const char *arg, char *err, size_t errlen);
int opt_flag(void *o, const opt_t *opt, const char *arg, char *err, size_t errlen);        /* int: choices[0] */
int opt_set(void *o, const opt_t *opt, const char *arg, char *err, size_t errlen);         /* int 1; no argument */
int opt_pos_int(void *o, const opt_t *opt, const char *arg, char *err, size_t errlen);     /* int > 0 */
int opt_count(void *o, const opt_t *opt, const char *arg, char *err, size_t errlen);       /* int >= 0 */
int opt_number(void *o, const opt_t *opt, const char *arg, char *err, size_t errlen);      /* double >= 0 */
int opt_pos_number(void *o, const opt_t *opt, const char *arg, char *err, size_t errlen);  /* double > 0 */
/* Comma-separated lists into an array member with an int count member (opt->count): ints > 0, doubles > 0,
 * unsigned 64-bit integers, names of an enum's choices (stored as ints, their indices). No value twice. */
int opt_int_list(void *o, const opt_t *opt, const char *arg, char *err, size_t errlen);
int opt_double_list(void *o, const opt_t *opt, const char *arg, char *err, size_t errlen);
int opt_u64_list(void *o, const opt_t *opt, const char *arg, char *err, size_t errlen);
int opt_enum_list(void *o, const opt_t *opt, const char *arg, char *err, size_t errlen);
/* A list of items parsed by item (the item's text, where it goes, err) into dst, elements of `size` bytes, *n set;
 * two items that parse to the same bytes are refused. */
int opt_list(const opt_t *opt, const char *arg, int (*item)(const opt_t *, const char *, void *, char *, size_t),
             void *dst, size_t size, int *n, char *err, size_t errlen);

/* "a, b, c" of names (NULL-terminated) into buf; and whether s is among them (its index, or -1). */
void opt_join_names(char *buf, size_t len, const char *const *names);
int opt_name_index(const char *const *names, const char *s);
/* "--<opt>: unknown <what> "s" (valid: a, b)" unless s is one of names: 0, or 2. */
int opt_check_choice(const char *opt, const char *what, const char *const *names, const char *s, char *err,
                     size_t errlen);
