/* opt_table.c — a command line from one option table (opt_table.h): getopt_long's table made from it, the defaults
 * parsed from it, the parsers its entries name, and --help's lines written from it. */
#include "opt_table.h"
#include "errmsg.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

void opt_join_names(char *buf, size_t len, const char *const *names) {
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 0; names && names[i]; i++) {
        int n = snprintf(buf + used, len - used, "%s%s", i ? ", " : "", names[i]);
        if (n < 0 || (size_t)n >= len - used) break;
        used += (size_t)n;
    }
}

int opt_name_index(const char *const *names, const char *s) {
    for (int i = 0; names && names[i]; i++)
        if (strcmp(names[i], s) == 0) return i;
    return -1;
}

int opt_check_choice(const char *opt, const char *what, const char *const *names, const char *s, char *err,
                     size_t errlen) {
    if (opt_name_index(names, s) >= 0) return 0;
    char valid[256];
    opt_join_names(valid, sizeof valid, names);
    return errmsg(2, err, errlen, "--%s: unknown %s \"%s\" (valid: %s)", opt, what, s, valid);
}

/* strtol/strtod accept leading blanks and signs we do not want to silently take, so items must start
 * with a digit (or '.', or '-' for numbers where the sign earns its own message). */
static int starts_number(const char *s, int allow_minus) {
    if (allow_minus && *s == '-') s++;
    return (*s >= '0' && *s <= '9') || (*s == '.' && s[1] >= '0' && s[1] <= '9');
}

static int parse_pos_int(const char *opt, const char *s, int *out, char *err, size_t errlen) {
    char *end;
    errno = 0;
    long v = starts_number(s, 1) ? strtol(s, &end, 10) : 0;
    if (!starts_number(s, 1) || *end || errno || v <= 0 || v > INT_MAX)
        return errmsg(2, err, errlen, "--%s: \"%s\" is not a positive integer", opt, s);
    *out = (int)v;
    return 0;
}

static int parse_u64(const char *opt, const char *s, unsigned long long *out, char *err, size_t errlen) {
    char *end;
    errno = 0;
    unsigned long long v = starts_number(s, 0) ? strtoull(s, &end, 10) : 0;
    if (!starts_number(s, 0) || *end || errno)
        return errmsg(2, err, errlen, "--%s: \"%s\" is not an unsigned integer", opt, s);
    *out = v;
    return 0;
}

/* positive: > 0 required, otherwise >= 0. */
static int parse_number(const char *opt, const char *s, int positive, double *out, char *err, size_t errlen) {
    char *end;
    errno = 0;
    double v = starts_number(s, 1) ? strtod(s, &end) : 0;
    /* decimal only: strtod also reads hexadecimal ("0x10" is 16), which no option means */
    if (!starts_number(s, 1) || *end || strpbrk(s, "xX"))
        return errmsg(2, err, errlen, "--%s: \"%s\" is not a number", opt, s);
    if (!isfinite(v) || errno == ERANGE) return errmsg(2, err, errlen, "--%s: \"%s\" is not a finite number", opt, s);
    if (positive ? !(v > 0) : !(v >= 0))
        return errmsg(2, err, errlen, "--%s: \"%s\" must be a %s number", opt, s, positive ? "positive" : "non-negative");
    *out = v;
    return 0;
}

#define AT(o, opt, T) ((T *)((char *)(o) + (opt)->field))

int opt_str(void *o, const opt_t *opt, const char *arg, char *err, size_t errlen) {
    *AT(o, opt, const char *) = arg;
    return *arg ? 0 : errmsg(2, err, errlen, "--%s: empty %s", opt->name, opt->what);
}

/* The choice's own string is stored, so it outlives argv and any scratch copy. */
int opt_choice(void *o, const opt_t *opt, const char *arg, char *err, size_t errlen) {
    if (opt_check_choice(opt->name, opt->what, opt->choices, arg, err, errlen)) return 2;
    *AT(o, opt, const char *) = opt->choices[opt_name_index(opt->choices, arg)];
    return 0;
}

int opt_enum(void *o, const opt_t *opt, const char *arg, char *err, size_t errlen) {
    if (opt_check_choice(opt->name, opt->what, opt->choices, arg, err, errlen)) return 2;
    *AT(o, opt, int) = opt_name_index(opt->choices, arg);
    return 0;
}

/* An on/off-like pair: the member is 1 for the first choice, 0 for the second. */
int opt_flag(void *o, const opt_t *opt, const char *arg, char *err, size_t errlen) {
    if (opt_check_choice(opt->name, opt->what, opt->choices, arg, err, errlen)) return 2;
    *AT(o, opt, int) = strcmp(arg, opt->choices[0]) == 0;
    return 0;
}

int opt_set(void *o, const opt_t *opt, const char *arg, char *err, size_t errlen) {
    (void)arg, (void)err, (void)errlen;
    *AT(o, opt, int) = 1;
    return 0;
}

int opt_pos_int(void *o, const opt_t *opt, const char *arg, char *err, size_t errlen) {
    return parse_pos_int(opt->name, arg, AT(o, opt, int), err, errlen);
}

/* 0 allowed (--steps 0: the whole epoch), unlike opt_pos_int. */
int opt_count(void *o, const opt_t *opt, const char *arg, char *err, size_t errlen) {
    unsigned long long v = 0;
    if (parse_u64(opt->name, arg, &v, err, errlen)) return 2;
    if (v > INT_MAX) return errmsg(2, err, errlen, "--%s: \"%s\" is too large", opt->name, arg);
    *AT(o, opt, int) = (int)v;
    return 0;
}

int opt_number(void *o, const opt_t *opt, const char *arg, char *err, size_t errlen) {
    return parse_number(opt->name, arg, 0, AT(o, opt, double), err, errlen);
}

int opt_pos_number(void *o, const opt_t *opt, const char *arg, char *err, size_t errlen) {
    return parse_number(opt->name, arg, 1, AT(o, opt, double), err, errlen);
}

/* Splits a comma list into a scratch copy, so the message can quote the bad item alone. */
int opt_list(const opt_t *opt, const char *arg, int (*item)(const opt_t *, const char *, void *, char *, size_t),
             void *dst, size_t size, int *n, char *err, size_t errlen) {
    char buf[128];
    int count = 0;
    if (!*arg) return errmsg(2, err, errlen, "--%s: empty list", opt->name);
    for (const char *p = arg;;) {
        const char *comma = strchr(p, ',');
        size_t ilen = comma ? (size_t)(comma - p) : strlen(p);
        if (ilen == 0) return errmsg(2, err, errlen, "--%s: empty item in list \"%s\"", opt->name, arg);
        if (count == OPT_LIST_MAX)
            return errmsg(2, err, errlen, "--%s: more than %d values in \"%s\"", opt->name, OPT_LIST_MAX, arg);
        /* No valid item is this long; cutting it would change its value (1 and 200 zeros is not 1e126). */
        if (ilen >= sizeof buf)
            return errmsg(2, err, errlen, "--%s: item \"%.24s...\" is longer than %d characters", opt->name, p,
                          (int)sizeof buf - 1);
        memcpy(buf, p, ilen);
        buf[ilen] = '\0';
        char *at = (char *)dst + (size_t)count * size;
        int rc = item(opt, buf, at, err, errlen);
        if (rc) return rc;
        /* A value twice is a slip: in a sweep it would run one configuration twice, and summaries keep one run. The
         * parsed values are compared, so 0.1 and 0.10 are one value. */
        for (int j = 0; j < count; j++)
            if (memcmp((char *)dst + (size_t)j * size, at, size) == 0)
                return errmsg(2, err, errlen, "--%s: \"%s\" repeats an earlier value in \"%s\"", opt->name, buf, arg);
        count++;
        if (!comma) break;
        p = comma + 1;
    }
    *n = count;
    return 0;
}

static int item_int(const opt_t *opt, const char *s, void *dst, char *err, size_t errlen) {
    return parse_pos_int(opt->name, s, dst, err, errlen);
}
static int item_double(const opt_t *opt, const char *s, void *dst, char *err, size_t errlen) {
    return parse_number(opt->name, s, 1, dst, err, errlen);
}
static int item_u64(const opt_t *opt, const char *s, void *dst, char *err, size_t errlen) {
    return parse_u64(opt->name, s, dst, err, errlen);
}
static int item_enum(const opt_t *opt, const char *s, void *dst, char *err, size_t errlen) {
    if (opt_check_choice(opt->name, opt->what, opt->choices, s, err, errlen)) return 2;
    *(int *)dst = opt_name_index(opt->choices, s);
    return 0;
}

#define COUNT(o, opt) ((int *)((char *)(o) + (opt)->count))
int opt_int_list(void *o, const opt_t *opt, const char *arg, char *err, size_t errlen) {
    return opt_list(opt, arg, item_int, AT(o, opt, void), sizeof(int), COUNT(o, opt), err, errlen);
}
int opt_double_list(void *o, const opt_t *opt, const char *arg, char *err, size_t errlen) {
    return opt_list(opt, arg, item_double, AT(o, opt, void), sizeof(double), COUNT(o, opt), err, errlen);
}
int opt_u64_list(void *o, const opt_t *opt, const char *arg, char *err, size_t errlen) {
    return opt_list(opt, arg, item_u64, AT(o, opt, void), sizeof(unsigned long long), COUNT(o, opt), err, errlen);
}
int opt_enum_list(void *o, const opt_t *opt, const char *arg, char *err, size_t errlen) {
    return opt_list(opt, arg, item_enum, AT(o, opt, void), sizeof(int), COUNT(o, opt), err, errlen);
}

// ---- the table

#define OPT_HELP 'h'
#define OPT_CODE(i) (256 + (i))     /* long-only options get codes above any char: optopt names them exactly */

int opt_index(const opt_table_t *t, const char *name) {
    for (int i = 0; i < t->n; i++)
        if (strcmp(t->opt[i].name, name) == 0) return i;
    return -1;
}

static int code_index(const opt_table_t *t, int c) {
    for (int i = 0; c == OPT_HELP && i < t->n; i++)
        if (!t->opt[i].parse) return i;
    return c >= 256 && c < 256 + t->n ? c - 256 : -1;
}

int opt_defaults(const opt_table_t *t, void *o, char *err, size_t errlen) {
    for (int i = 0; i < t->n; i++)
        if (t->opt[i].def && t->opt[i].parse(o, &t->opt[i], t->opt[i].def, err, errlen) != 0) return 2;
    return 0;
}

/* Edits (insert, delete, substitute, swap two neighbours) from a to b, the first n characters of a: how far a typo
 * is from a name. */
static int edits(const char *a, size_t n, const char *b) {
    size_t m = strlen(b);
    if (n > 64 || m > 64) return 99;
    int d[66][66];
    for (size_t i = 0; i <= n; i++) d[i][0] = (int)i;
    for (size_t j = 0; j <= m; j++) d[0][j] = (int)j;
    for (size_t i = 1; i <= n; i++)
        for (size_t j = 1; j <= m; j++) {
            int v = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
            if (d[i - 1][j] + 1 < v) v = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < v) v = d[i][j - 1] + 1;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] && d[i - 2][j - 2] + 1 < v)
                v = d[i - 2][j - 2] + 1;
            d[i][j] = v;
        }
    return d[n][m];
}

int opt_suggest(const opt_table_t *t, const char *word, size_t n) {
    int best = -1, best_d = 99;
    for (int i = 0; i < t->n; i++) {
        int d = edits(word, n, t->opt[i].name);
        if (d < best_d) best = i, best_d = d;
    }
    /* A third of the word's letters, at least one: "--stratgy" is --strategy, "--foo" is nothing. */
    int allow = (int)n / 3 > 1 ? (int)n / 3 : 1;
    return best_d <= allow ? best : -1;
}

/* getopt reports '?' for unknown, ambiguous and argument-taking-no-argument options alike; the offending
 * word is argv[optind - 1] for long options, optopt for short ones. */
static int unknown_option(const opt_table_t *t, int argc, char **argv, char *err, size_t errlen) {
    const char *word = optind >= 1 && optind <= argc ? argv[optind - 1] : NULL;
    if (word && strncmp(word, "--", 2) == 0) {
        const char *eq = strchr(word, '=');
        size_t n = eq ? (size_t)(eq - word - 2) : strlen(word + 2);
        for (int i = 0; eq && i < t->n; i++)
            if (!t->opt[i].arg && strlen(t->opt[i].name) == n && strncmp(t->opt[i].name, word + 2, n) == 0)
                return errmsg(2, err, errlen, "--%s: takes no argument (got \"%s\")", t->opt[i].name, word);
        char which[256] = "";   /* getopt_long takes a prefix of one name: of several, it is ambiguous */
        int k = 0;
        for (int i = 0; n && i < t->n; i++)
            if (strncmp(t->opt[i].name, word + 2, n) == 0 && ++k)
                snprintf(which + strlen(which), sizeof which - strlen(which), "%s--%s", k > 1 ? ", " : "",
                         t->opt[i].name);
        if (k > 1) return errmsg(2, err, errlen, "ambiguous option \"%.*s\" (%s)", (int)n + 2, word, which);
        int i = opt_suggest(t, word + 2, n);
        if (i >= 0) return errmsg(2, err, errlen, "unknown option \"%.*s\" (did you mean --%s?)", (int)n + 2, word,
                                  t->opt[i].name);
        return errmsg(2, err, errlen, "unknown option \"%s\" (see --help)", word);
    }
    if (optopt > 0 && optopt < 256) return errmsg(2, err, errlen, "unknown option \"-%c\" (see --help)", optopt);
    return errmsg(2, err, errlen, "unknown option \"%s\" (see --help)", word ? word : "?");
}

int opt_parse(const opt_table_t *t, void *o, unsigned long long *given, int argc, char **argv, const char **pos,
              int *npos, char *err, size_t errlen) {
    if (err && errlen) err[0] = '\0';
    *given = 0;
    if (npos) *npos = 0;
    if (t->n > OPT_TABLE_MAX) return errmsg(2, err, errlen, "more than %d options in a table", OPT_TABLE_MAX);
    if (opt_defaults(t, o, err, errlen)) return 2;
    struct option long_opts[OPT_TABLE_MAX + 1];
    for (int i = 0; i < t->n; i++)
        long_opts[i] = (struct option){t->opt[i].name, t->opt[i].arg ? required_argument : no_argument, NULL,
                                       t->opt[i].parse ? OPT_CODE(i) : OPT_HELP};
    long_opts[t->n] = (struct option){NULL, 0, NULL, 0};
    /* optind = 0 makes glibc reinitialise completely, so tests (and sweeps) can parse many argv in turn. Without
     * positional arguments '+' keeps argv unpermuted and stops at the first one, which we then reject; with them,
     * '-' hands each over in place (code 1). ':' makes a missing argument distinguishable from an unknown option. */
    optind = 0;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, t->max_positional ? "-:h" : "+:h", long_opts, NULL)) != -1) {
        if (c == 1) {
            if (!npos || *npos == t->max_positional)
                return errmsg(2, err, errlen, "unexpected argument \"%s\"%s", optarg,
                              t->max_positional == 1 ? " (one is taken)" : "");
            pos[(*npos)++] = optarg;
            continue;
        }
        if (c == OPT_HELP) return 1;
        if (c == ':') {
            int i = code_index(t, optopt);
            if (optopt == OPT_HELP || i < 0) return errmsg(2, err, errlen, "missing argument");
            return errmsg(2, err, errlen, "--%s: missing argument", t->opt[i].name);
        }
        if (c == '?') return unknown_option(t, argc, argv, err, errlen);
        const opt_t *opt = &t->opt[code_index(t, c)];
        /* "--gpus --batch 4" would otherwise parse "--batch" as the GPU list and report a confusing value. */
        if (optarg && strncmp(optarg, "--", 2) == 0 && optarg[2])
            return errmsg(2, err, errlen, "--%s: missing argument (got option \"%s\")", opt->name, optarg);
        int rc = opt->parse(o, opt, optarg ? optarg : "", err, errlen);
        if (rc) return rc;
        *given |= 1ull << (opt - t->opt);
    }
    for (; t->max_positional && npos && optind < argc && *npos < t->max_positional; optind++)
        pos[(*npos)++] = argv[optind];  /* after "--": positional, whatever they look like */
    /* `scaling help`, `scaling gpus 2`: an option's name without its dashes */
    int meant = optind < argc ? opt_suggest(t, argv[optind], strlen(argv[optind])) : -1;
    if (meant >= 0)
        return errmsg(2, err, errlen, "unexpected argument \"%s\" (did you mean --%s?)", argv[optind],
                      t->opt[meant].name);
    if (optind < argc)
        return errmsg(2, err, errlen, "unexpected argument \"%s\" (options take the form --name VALUE)", argv[optind]);
    return 0;
}

int opt_wrap(FILE *f, const char *text, int col, int indent) {
    for (const char *p = text; *p;) {
        size_t gap = strspn(p, " \n"), len = strcspn(p + gap, " \n");
        if (!len) break;    /* trailing blanks */
        /* A break where a word would pass the width, or where the text asks for one ("\n\n": a paragraph's end) */
        int asked = memchr(p, '\n', gap) != NULL && gap > 1 && p[gap - 1] == '\n' && p[gap - 2] == '\n';
        if (col > indent && (asked || col + (int)gap + (int)len > OPT_HELP_WIDTH)) {
            fprintf(f, "\n%s%*s", asked ? "\n" : "", indent, "");
            col = indent;
        } else {
            for (size_t i = 0; i < gap; i++) fputc(p[i] == '\n' ? ' ' : p[i], f);
            col += (int)gap;
        }
        fwrite(p + gap, 1, len, f);
        col += (int)len;
        p += gap + len;
    }
    return col;
}

void opt_usage(FILE *f, const opt_table_t *t) {
    enum { COL = 28 };
    for (int i = 0; i < t->n; i++) {
        const opt_t *h = &t->opt[i];
        char head[64];
        snprintf(head, sizeof head, "  %s--%s%s%s", h->parse ? "    " : "-h, ", h->name, h->arg ? " " : "",
                 h->arg ? h->arg : "");
        fprintf(f, "%-*s", COL, head);
        if ((int)strlen(head) >= COL) fprintf(f, "\n%*s", COL, "");
        opt_wrap(f, h->help, COL, COL);
        char line[320];
        if (h->choices) {
            char valid[256];
            opt_join_names(valid, sizeof valid, h->choices);
            snprintf(line, sizeof line, "one of: %s", valid);
            fprintf(f, "\n%*s", COL, "");
            opt_wrap(f, line, COL, COL + 2);
        }
        const char *def = h->def_help ? h->def_help : h->def;
        if (def) {
            snprintf(line, sizeof line, "(default: %s)", def);
            fprintf(f, "\n%*s", COL, "");
            opt_wrap(f, line, COL, COL + 2);
        }
        fputc('\n', f);
    }
}
