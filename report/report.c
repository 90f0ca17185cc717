/* report.c — `scaling report STUDY.csv [--out DIR] [options]`: its options (one table, engine/opt_table.h, as the
 * command's), its arguments and inputs checked before anything is written, then the figures' data files, the
 * figures (gnuplot, where it is) and REPORT.md; with --runs it prints the reported runs instead (runs.c). */
#define _POSIX_C_SOURCE 200809L
#include "report.h"
#include "outdir.h"
#include "../engine/errmsg.h"
#include "../engine/opt_table.h"
#include "../study/one_gpu.h"
#include "../study/paths.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The command line, as the option table fills it. */
typedef struct {
    const char *out, *allreduce, *net_allreduce, *baseline;
    double net_gbs, net_lat, threshold;
    int gpn, runs, any_gpu;
} report_opts_t;

static int p_gpus_per_node(void *o, const opt_t *opt, const char *arg, char *err, size_t errlen) {
    int *g = (int *)((char *)o + opt->field);
    if (arg[0] == '0' || opt_pos_int(o, opt, arg, err, errlen) || *g > 1024 || (*g & (*g - 1)) != 0)
        return errmsg(2, err, errlen, "--%s: \"%s\" is not a power of two from 1 to 1024", opt->name, arg);
    return 0;
}

/* A percentage the gate can fire at: a plain decimal in (0, 100) (100 or more could never fire). */
static int p_threshold(void *o, const opt_t *opt, const char *arg, char *err, size_t errlen) {
    double *t = (double *)((char *)o + opt->field);
    if (opt_pos_number(o, opt, arg, err, errlen) || !(*t < 100))
        return errmsg(2, err, errlen, "--%s: \"%s\" is not a percentage above 0 and below 100", opt->name, arg);
    return 0;
}

#define FIELD(m) offsetof(report_opts_t, m)
static const opt_t opts[] = {
    {"out", "DIR", NULL, "the CSV's path less .csv", opt_str, FIELD(out), 0, "directory", NULL,
     "where REPORT.md, the figures' data files (*.dat) and the figures go"},
    {"allreduce", "FILE", NULL, "STUDY_allreduce.csv where present", opt_str, FIELD(allreduce), 0, "path", NULL,
     "`scaling --bench allreduce` CSV: the α-β fits, the model columns and the\nprojection"},
    {"net-allreduce", "FILE", NULL, "STUDY_allreduce_net.csv where present", opt_str, FIELD(net_allreduce), 0, "path",
     NULL, "the same benchmark over NCCL's network transport: the projection's\ninter-node path"},
    {"net-gbs", "GBS", NULL, NULL, opt_pos_number, FIELD(net_gbs), 0, NULL, NULL,
     "inter-node bandwidth per GPU in GB/s (replaces the network fit's)"},
    {"net-latency-us", "US", NULL, NULL, opt_pos_number, FIELD(net_lat), 0, NULL, NULL,
     "inter-node latency per all-reduce step in µs (replaces the network fit's)"},
    {"gpus-per-node", "G", "8", NULL, p_gpus_per_node, FIELD(gpn), 0, NULL, NULL,
     "GPUs per node of the projected cluster, a power of two up to 1024"},
    {"baseline", "OLD.csv", NULL, NULL, opt_str, FIELD(baseline), 0, "path", NULL,
     "a study to compare with: the configurations both ran, the change of images/s\n"
     "and efficiency beside each side's spread; exit 1 on a regression"},
    {"threshold", "PCT", "5", NULL, p_threshold, FIELD(threshold), 0, NULL, NULL,
     "with --baseline: a fall of images/s past PCT % (and past both sides' spread) is a\n"
     "regression; a decimal above 0 and below 100"},
    {"baseline-any-gpu", NULL, NULL, NULL, opt_set, FIELD(any_gpu), 0, NULL, NULL,
     "with --baseline: compare with a study of another GPU model (refused otherwise),\n"
     "the comparison labelled \"across GPUs\""},
    {"runs", NULL, NULL, NULL, opt_set, FIELD(runs), 0, NULL, NULL,
     "writes nothing: prints the reported runs to stdout, one tab-separated line\n"
     "each with their steady medians (doc/report.md lists the columns); takes no other option"},
    {"help", NULL, NULL, NULL, NULL, 0, 0, NULL, NULL, "print this help and exit"},
};
static const opt_table_t table = {opts, (int)(sizeof opts / sizeof opts[0]), 1};

static void usage(FILE *f) {
    fprintf(f, "Usage: scaling report STUDY.csv [options]\n"
               "       scaling report NEW.csv --baseline OLD.csv [--threshold PCT] [options]\n"
               "       scaling report STUDY.csv --runs\n"
               "Writes REPORT.md, one data file per figure (*.dat) and, where gnuplot is, the figures (PNG and SVG)\n"
               "of a study CSV. doc/report.md says what each section and figure means.\n\nOptions:\n");
    opt_usage(f, &table);
}

/* The error line on stderr, one line whatever the input holds (errmsg_line); returns 2. */
__attribute__((format(printf, 1, 2))) static int die(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    errmsg_vline(stderr, "scaling report: error: ", fmt, ap);
    va_end(ap);
    return 2;
}

static int readable(const char *p) {
    struct stat st;
    return stat(p, &st) == 0 && S_ISREG(st.st_mode) && access(p, R_OK) == 0;
}

/* Copies s into a PATH_MAX buffer: 0, or -1 where it does not fit (a path is never cut). */
static int path_set(char out[PATH_MAX], const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int path_set(char out[PATH_MAX], const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(out, PATH_MAX, fmt, ap);
    va_end(ap);
    return n >= 0 && n < PATH_MAX ? 0 : -1;
}

static int mkdirs(const char *dir) {
    char p[PATH_MAX];
    if (path_set(p, "%s", dir)) return errno = ENAMETOOLONG, -1;
    for (char *s = p + 1; *s; s++)
        if (*s == '/') {
            *s = '\0';
            if (mkdir(p, 0777) != 0 && errno != EEXIST) return -1;
            *s = '/';
        }
    return mkdir(p, 0777) != 0 && errno != EEXIST ? -1 : 0;
}

static int on_path(const char *prog) {
    const char *path = getenv("PATH");
    if (!path) return 0;
    for (const char *p = path; *p;) {
        size_t n = strcspn(p, ":");
        char dir[PATH_MAX];
        if (n && path_set(dir, "%.*s/%s", (int)n, p, prog) == 0 && access(dir, X_OK) == 0) return 1;
        p += n;
        if (*p) p++;
    }
    return 0;
}

/* plots/ of the source tree the binary was built from, else beside the binary (../plots); "" without one. */
static void find_plots(char out[PATH_MAX], const char *source_dir, const char *exe) {
    char p[PATH_MAX];
    out[0] = '\0';
    if (source_dir && *source_dir && path_set(p, "%s/plots/common.gp", source_dir) == 0 && readable(p)) {
        path_set(out, "%s/plots", source_dir);
        return;
    }
    const char *slash = exe ? strrchr(exe, '/') : NULL;
    if (slash && path_set(p, "%.*s/../plots/common.gp", (int)(slash - exe), exe) == 0 && readable(p))
        path_set(out, "%.*s/../plots", (int)(slash - exe), exe);
}

/* "X.csv" less ".csv" plus suffix (study/paths.h, the one definition of a file beside a study); -1 where it does not
 * fit. */
static int beside(char out[PATH_MAX], const char *csv, const char *suffix) {
    return paths_sibling(out, PATH_MAX, csv, suffix);
}

/* s as one shell word, on one line: a control byte (a newline in a file name) as bash's $'\xHH'. */
static void quoted(FILE *f, const char *s) {
    int ctl = 0;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) ctl |= *p < 0x20 || *p == 0x7f;
    if (ctl) {
        fputs("$'", f);
        for (const unsigned char *p = (const unsigned char *)s; *p; p++)
            if (*p < 0x20 || *p == 0x7f || *p == '\'' || *p == '\\') fprintf(f, "\\x%02x", *p);
            else fputc(*p, f);
        fputc('\'', f);
        return;
    }
    fputc('\'', f);
    for (; *s; s++) {
        if (*s == '\'') fputs("'\\''", f);
        else fputc(*s, f);
    }
    fputc('\'', f);
}

/* The option table's parse, then what it cannot check: the CSV, --runs alone. 0, 1 (--help printed), or 2. */
static int parse(report_opts_t *o, int argc, char **argv, const char **csv) {
    memset(o, 0, sizeof *o);
    unsigned long long given;
    const char *pos[1];
    int npos = 0;
    char err[REPORT_ERR];
    int rc = opt_parse(&table, o, &given, argc, argv, pos, &npos, err, sizeof err);
    if (rc == 1) return usage(stdout), 1;
    if (rc) return die("%s", err);
    if (!(given >> opt_index(&table, "net-gbs") & 1)) o->net_gbs = NAN;
    if (!(given >> opt_index(&table, "net-latency-us") & 1)) o->net_lat = NAN;
    for (int i = 0; o->runs && i < table.n; i++)   /* the first option that shapes a report: --runs writes none */
        if ((given >> i & 1) && strcmp(opts[i].name, "runs") != 0)
            return die("--runs prints the runs and writes no report: it takes no --%s", opts[i].name);
    if ((given >> opt_index(&table, "threshold") & 1) && !o->baseline)
        return die("--threshold is a regression's size against --baseline: give --baseline OLD.csv");
    if (o->any_gpu && !o->baseline)
        return die("--baseline-any-gpu is a comparison's setting: give --baseline OLD.csv");
    if (!npos) return die("no study CSV: scaling report STUDY.csv [--out DIR] [options] (--help says more)");
    *csv = pos[0];
    if (paths_check_read("", *csv, err, sizeof err)) return die("%s", err);
    if (o->baseline && paths_check_read("(--baseline)", o->baseline, err, sizeof err)) return die("%s", err);
    return 0;
}

/* The output folder a directory (or to be made under one), writable, short enough for any file name in it, its
 * REPORT.md a file or absent, and no input (the study, the benchmarks, the baseline) where the report would write
 * one of its files. 0, or 2. */
static int check_out(const report_t *r, const char *baseline) {
    static const char *const names[] = {REPORT_MD, REPORT_SUMMARY_CSV, NULL};
    char err[REPORT_ERR];
    if (paths_check_dir("--out", r->out, NAME_MAX, names, err, sizeof err)) return die("%s", err);
    const char *in[] = {r->src, r->bench_src, r->net_src, baseline ? baseline : ""};
    for (size_t i = 0; i < sizeof in / sizeof *in; i++) {
        char name[NAME_MAX + 1];    /* where the input resolves to: a link's target, not the link's own name */
        if (*in[i] && paths_in_dir(in[i], r->out, name) && outdir_writes(name))
            return die("--out %s: the input %s is there (as %s), a name the report writes: it would be replaced", r->out,
                       in[i], name);
    }
    return 0;
}

/* The inputs beside the CSV or named, and the output folder; every path whole or an error. 0, or 2. */
static int resolve(report_t *r, const report_opts_t *o, const char *csv) {
    r->src = csv;
    r->net_gbs = o->net_gbs;
    r->net_lat = o->net_lat;
    r->gpn = o->gpn;
    char def[PATH_MAX];
    if (beside(r->bench_default, csv, PATHS_ALLREDUCE_SUFFIX) || beside(def, csv, "_allreduce_net.csv"))
        return die("%s: path too long", csv);
    const char *bench = o->allreduce ? o->allreduce : readable(r->bench_default) ? r->bench_default : "";
    if (path_set(r->bench_src, "%s", bench)) return die("--allreduce: path too long");
    char err[REPORT_ERR];
    if (*r->bench_src && paths_check_read("(--allreduce)", r->bench_src, err, sizeof err)) return die("%s", err);
    const char *net = o->net_allreduce ? o->net_allreduce : readable(def) ? def : "";
    if (path_set(r->net_src, "%s", net)) return die("--net-allreduce: path too long");
    if (*r->net_src && paths_check_read("(--net-allreduce)", r->net_src, err, sizeof err)) return die("%s", err);
    if (!*r->net_src && (isnan(r->net_gbs) != isnan(r->net_lat)))
        return die("--net-gbs and --net-latency-us go together when there is no network benchmark (--net-allreduce)");
    int long_out = o->out ? path_set(r->out, "%s", o->out) : beside(r->out, csv, "");
    if (!long_out && !o->out && strcmp(r->out, csv) == 0) long_out = path_set(r->out, "%s.plots", csv);
    if (long_out) return die("--out: path longer than the limit of %d characters", PATH_MAX - 1);
    return check_out(r, o->baseline);
}

/* The study, the baseline and the benchmark read: a CSV that is not a study's leaves no folder behind. 0, or 2. */
static int load(report_t *r, const report_opts_t *o, const strategy_info_t *const *infos) {
    char err[REPORT_ERR] = "";
    int runs = o->runs;
    if (study_load(&r->st, r->src, infos, err, sizeof err)) return die("%s", err);
    if (o->baseline) {
        r->base = mem_zalloc(1, sizeof *r->base);
        if (baseline_load(r->base, o->baseline, o->threshold, o->any_gpu, &r->st, infos, err, sizeof err)) return die("%s", err);
    }
    if (*r->bench_src && !runs) {
        r->have_bench = 1;
        int b = fits_read(&r->fits, r->bench_src, "", infos, r->bench_err, sizeof r->bench_err);
        if (b == 2) return die("%s", r->bench_err);
        if (b != 1) r->bench_err[0] = '\0';
        r->nfit_bench = r->fits.n;
    }
    if (r->st.leftout)
        fprintf(stderr,
                "scaling report: %d run(s) left out: killed part-way and run again later, or superseded by a later "
                "run of the same configuration\n",
                r->st.leftout);
    if (r->st.bad_rows)
        errmsg_line(stderr, "scaling report: ", "%s: %d record(s) with the wrong number of fields or a cell that does "
                    "not parse skipped (a line cut short by a kill?)", r->src, r->st.bad_rows);
    return 0;
}

/* Where gnuplot or plots/ is missing: why the report has no figures, and the command that makes them. */
static void no_figures(report_t *r, int argc, char **argv, const char *exe) {
    r->figs_note = !*r->plots ? "plots/ not found beside the binary"
                              : "gnuplot not found; for them install gnuplot-nox (scripts/setup.sh does) and run "
                                "scaling report again";
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n >= (ssize_t)sizeof self - 1) n = 0;     /* maybe cut: the name it was started by instead */
    self[n > 0 ? n : 0] = '\0';
    fprintf(stderr, "scaling report: %s: the report has no figures; for them install gnuplot-nox (scripts/setup.sh "
                    "does) and run ", !*r->plots ? "plots/ not found" : "gnuplot not found");
    quoted(stderr, n > 0 ? self : exe);
    fputs(" report", stderr);
    for (int i = 1; i < argc; i++) fputc(' ', stderr), quoted(stderr, argv[i]);
    fputc('\n', stderr);
}

static int write_summary_csv(report_t *r) {
    char *path = mem_printf("%s/%s", r->out, REPORT_SUMMARY_CSV), err[REPORT_ERR];
    paths_replace_t f;      /* written whole, then renamed into place (study/paths.h) */
    int rc = paths_replace_begin(&f, path, err, sizeof err) != 0;
    if (!rc && report_summary_csv(&r->st, f.f)) {
        paths_replace_abort(&f);
        rc = 1, snprintf(err, sizeof err, "%s: %s", path, strerror(errno));
    } else if (!rc) {
        rc = paths_replace_end(&f, err, sizeof err) != 0;
    }
    if (rc) die("cannot write %s", err);
    free(path);
    return rc;
}

static int write_report(report_t *r) {
    char err[REPORT_ERR] = "";
    if (write_summary_csv(r)) return 1;
    if (report_figures(r, err, sizeof err)) return die("%s", err), 1;
    if (r->base && baseline_figure(r, err, sizeof err)) return die("%s", err), 1;
    if (r->gnuplot && report_render(r, 0, err, sizeof err)) return die("%s", err), 1;
    char *path = mem_printf("%s/%s", r->out, REPORT_MD);
    paths_replace_t md;     /* written whole, renamed into place after its last figure (study/paths.h) */
    int rc = paths_replace_begin(&md, path, err, sizeof err) ? (die("%s", err), 1) : 0;
    if (!rc) {
        report_markdown(r, md.f);
        int from = r->nplot;
        if (!study_one_gpu_study(&r->st)) report_projection(r, md.f);   /* one GPU: its section says why none */
        if (r->gnuplot && report_render(r, from, err, sizeof err)) rc = (die("%s", err), 1), paths_replace_abort(&md);
        else if (paths_replace_end(&md, err, sizeof err)) rc = (die("cannot write %s", err), 1);
    }
    free(path);
    return rc;
}

/* The whole set written into the folder's private folder, then swapped in for the previous one (outdir.h); every
 * file name of the report is r->out's, which is the private folder meanwhile. 0, or 1. */
static int write_folder(report_t *r) {
    outdir_t d;
    char err[REPORT_ERR] = "";
    int rc = outdir_begin(&d, r->out, err, sizeof err);
    if (!rc) {
        snprintf(r->out, sizeof r->out, "%s", d.tmp);
        rc = write_report(r);
        snprintf(r->out, sizeof r->out, "%s", d.out);
        if (!rc) rc = outdir_commit(&d, err, sizeof err);
        else if (outdir_interrupted()) snprintf(err, sizeof err, "interrupted: %s left as it was", d.out);
    }
    if (*err) errmsg_line(stderr, "scaling report: error: ", "%s", err);
    if (!rc) errmsg_line(stdout, "", "%s/%s", r->out, REPORT_MD);    /* a name is data: one line whatever it holds */
    fflush(stdout);
    outdir_end(&d);
    return rc;
}

static void report_free(report_t *r) {
    if (r->base) baseline_free(r->base);
    free(r->base);
    study_free(&r->st);
    fits_free(&r->fits);
    report_plots_free(r);
    for (int i = 0; i < r->nfig; i++) free(r->fig[i]);
    free(r->fig);
    free(r->inter_src.s), free(r->inter_cap.s), free(r->inter_note.s);
    free(r);
}

int report_main(int argc, char **argv, const char *source_dir, const char *exe, const strategy_info_t *const *infos) {
    report_opts_t o;
    const char *csv = NULL;
    int rc = parse(&o, argc, argv, &csv);
    if (rc) return rc == 1 ? 0 : rc;
    report_t *r = mem_zalloc(1, sizeof *r);
    rc = resolve(r, &o, csv);
    if (!rc) rc = load(r, &o, infos);
    if (!rc && o.runs && report_runs(&r->st, stdout))
        rc = (fprintf(stderr, "scaling report: error: stdout: cannot write: %s\n", strerror(errno)), 1);
    if (!rc && !o.runs && mkdirs(r->out) != 0)
        rc = (errmsg_line(stderr, "scaling report: error: ", "%s: cannot create: %s", r->out, strerror(errno)), 1);
    if (!rc && !o.runs) {
        find_plots(r->plots, source_dir, exe);
        r->gnuplot = *r->plots && on_path("gnuplot");
        if (!r->gnuplot) no_figures(r, argc, argv, exe);
        rc = write_folder(r);
    }
    if (!rc && r->base) {   /* after REPORT.md: a regression fails the command, never the report */
        baseline_print(r->base, &r->st, r->src, stdout);
        if (r->base->regressions) {
            errmsg_line(stderr, "scaling report: ", "%d regression(s) against %s: images/s fell past %s and both "
                        "spreads, or a configuration failed or is missing (REPORT.md, \"Against the baseline\")",
                        r->base->regressions, r->base->src, report_pct(r->base->threshold).s);
            rc = 1;
        }
    }
    report_free(r);
    return rc;
}
