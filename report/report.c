/* report.c — `scaling report STUDY.csv [--out DIR] [options]`: checks its arguments and inputs before writing
 * anything, then writes the figures' data files, draws them (gnuplot, where it is), and writes REPORT.md; with --runs
 * it prints the reported runs instead (runs.c). */
#define _POSIX_C_SOURCE 200809L
#include "report.h"

#include <errno.h>
#include <stdarg.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char usage_text[] =
    "usage: scaling report STUDY.csv [--out DIR] [--allreduce FILE] [--net-allreduce FILE] [--net-gbs GBS]\n"
    "                      [--net-latency-us US] [--gpus-per-node G]\n"
    "       scaling report STUDY.csv --runs\n"
    "Writes DIR/REPORT.md (default: the CSV's path less .csv), one data file per figure (*.dat) and, where gnuplot "
    "is,\n"
    "the figures (PNG and SVG). doc/report.md says what each section and figure means.\n"
    "  --out DIR             where the report goes\n"
    "  --allreduce FILE      `scaling --bench allreduce` CSV: the α-β fits, the model columns and the projection\n"
    "                        (default STUDY_allreduce.csv where present)\n"
    "  --net-allreduce FILE  the same benchmark over NCCL's network transport: the projection's inter-node path\n"
    "                        (default STUDY_allreduce_net.csv where present)\n"
    "  --net-gbs GBS         inter-node bandwidth per GPU in GB/s (replaces the network fit's)\n"
    "  --net-latency-us US   inter-node latency per all-reduce step in µs (replaces the network fit's)\n"
    "  --gpus-per-node G     GPUs per node of the projected cluster, a power of two up to 1024 (default 8)\n"
    "  --runs                writes nothing: prints the reported runs to stdout, one tab-separated line each with\n"
    "                        their steady medians (doc/report.md lists the columns); takes no other option\n";

__attribute__((format(printf, 1, 2))) static int die(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "report: ");
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return 2;
}

/* A positive finite decimal number. */
static int positive(const char *s, double *v) {
    char *end;
    if (!isnum(s)) return 0;
    errno = 0;
    *v = strtod(s, &end);
    return !errno && *end == '\0' && *v > 0 && isfinite(*v);
}

static int readable(const char *p) {
    struct stat st;
    return stat(p, &st) == 0 && S_ISREG(st.st_mode) && access(p, R_OK) == 0;
}

static int mkdirs(const char *dir) {
    char p[1024];
    snprintf(p, sizeof p, "%s", dir);
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
    char dir[1024];
    for (const char *p = path; *p;) {
        size_t n = strcspn(p, ":");
        snprintf(dir, sizeof dir, "%.*s/%s", (int)n, p, prog);
        if (n && access(dir, X_OK) == 0) return 1;
        p += n;
        if (*p) p++;
    }
    return 0;
}

/* plots/ of the source tree the binary was built from, else beside the binary (../plots); "" without one. */
static void find_plots(char *out, size_t len, const char *source_dir, const char *exe) {
    char p[1100];
    out[0] = '\0';
    if (source_dir && *source_dir) {
        snprintf(p, sizeof p, "%s/plots/common.gp", source_dir);
        if (readable(p)) {
            snprintf(out, len, "%s/plots", source_dir);
            return;
        }
    }
    const char *slash = exe ? strrchr(exe, '/') : NULL;
    if (slash) {
        snprintf(p, sizeof p, "%.*s/../plots/common.gp", (int)(slash - exe), exe);
        if (readable(p)) snprintf(out, len, "%.*s/../plots", (int)(slash - exe), exe);
    }
}

/* "X.csv" less ".csv" plus suffix. */
static void beside(char *out, size_t len, const char *csv, const char *suffix) {
    size_t n = strlen(csv);
    if (n > 4 && strcmp(csv + n - 4, ".csv") == 0) n -= 4;
    snprintf(out, len, "%.*s%s", (int)n, csv, suffix);
}

/* s as one shell word. */
static void quoted(FILE *f, const char *s) {
    fputc('\'', f);
    for (; *s; s++) {
        if (*s == '\'')
            fputs("'\\''", f);
        else
            fputc(*s, f);
    }
    fputc('\'', f);
}

static int write_report(report_t *r) {
    char err[1500] = "", md_tmp[1100], md_path[1100];
    if (report_figures(r, err, sizeof err)) return die("%s", err), 1;
    if (r->gnuplot && report_render(r, 0, err, sizeof err)) return die("%s", err), 1;
    snprintf(md_tmp, sizeof md_tmp, "%s/.REPORT.md.tmp", r->out);
    snprintf(md_path, sizeof md_path, "%s/REPORT.md", r->out);
    FILE *md = fopen(md_tmp, "w");
    if (!md) return die("%s: cannot write: %s", md_tmp, strerror(errno)), 1;
    report_markdown(r, md);
    int from = r->nplot;
    if (!report_one_gpu_study(&r->st)) report_projection(r, md);   /* one GPU: its section says why none */
    if (fclose(md) != 0) return die("%s: cannot write: %s", md_tmp, strerror(errno)), 1;
    if (r->gnuplot && report_render(r, from, err, sizeof err)) return die("%s", err), 1;
    if (rename(md_tmp, md_path) != 0) return die("%s: %s", md_path, strerror(errno)), 1;
    printf("%s\n", md_path);
    return 0;
}

int report_main(int argc, char **argv, const char *source_dir, const char *exe, const strategy_info_t *const *infos) {
    report_t *r = calloc(1, sizeof *r);
    if (!r) return die("out of memory"), 1;
    const char *csv = NULL, *out = NULL, *bench = NULL, *net = NULL, *gpn = "8";
    r->net_gbs = r->net_lat = NAN;
    int rc = 0, runs = 0;
    const char *other = NULL; /* the first option that shapes a report: --runs writes none */
    for (int i = 1; i < argc && !rc; i++) {
        const char *a = argv[i], *v = NULL;
        static const char *const opts[] = {"--out",     "--allreduce",      "--net-allreduce",
                                           "--net-gbs", "--net-latency-us", "--gpus-per-node"};
        int o = -1;
        for (int k = 0; k < 6 && o < 0; k++) {
            size_t n = strlen(opts[k]);
            if (strcmp(a, opts[k]) == 0) {
                if (i + 1 >= argc) {
                    rc = die("%s needs a value", a);
                    break;
                }
                o = k, v = argv[++i];
            } else if (strncmp(a, opts[k], n) == 0 && a[n] == '=')
                o = k, v = a + n + 1;
        }
        if (rc) break;
        if (o >= 0 && !other) other = opts[o];
        if (o == 0)
            out = v;
        else if (o == 1)
            bench = v;
        else if (o == 2)
            net = v;
        else if (o == 3 && !positive(v, &r->net_gbs))
            rc = die("--net-gbs '%s': not a positive number", v);
        else if (o == 4 && !positive(v, &r->net_lat))
            rc = die("--net-latency-us '%s': not a positive number", v);
        else if (o == 5)
            gpn = v;
        else if (o < 0 && strcmp(a, "--runs") == 0)
            runs = 1;
        else if (o < 0 && (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0)) {
            fputs(usage_text, stdout);
            free(r);
            return 0;
        } else if (o < 0 && a[0] == '-' && a[1])
            rc = die("unknown option '%s'", a);
        else if (o < 0 && csv)
            rc = die("one study CSV only ('%s' and '%s')", csv, a);
        else if (o < 0)
            csv = a;
    }
    if (!rc && runs && other) rc = die("--runs prints the runs and writes no report: it takes no %s", other);
    if (!rc && !csv) rc = die("no study CSV: scaling report STUDY.csv [--out DIR] [options] (--help says more)");
    if (!rc && !readable(csv)) rc = die("%s: no such file", csv);
    char *end;
    long g = strtol(gpn, &end, 10);
    if (!rc && (*end || end == gpn || gpn[0] == '0' || g < 1 || g > 1024 || (g & (g - 1)) != 0))
        rc = die("--gpus-per-node '%s': not a power of two from 1 to 1024", gpn);
    r->gpn = (int)g;
    r->src = csv;
    if (!rc) {
        beside(r->bench_default, sizeof r->bench_default, csv, "_allreduce.csv");
        if (bench)
            snprintf(r->bench_src, sizeof r->bench_src, "%s", bench);
        else if (readable(r->bench_default))
            snprintf(r->bench_src, sizeof r->bench_src, "%s", r->bench_default);
        if (*r->bench_src && !readable(r->bench_src)) rc = die("%s: no such file (--allreduce)", r->bench_src);
    }
    if (!rc) {
        char d[1024];
        beside(d, sizeof d, csv, "_allreduce_net.csv");
        if (net)
            snprintf(r->net_src, sizeof r->net_src, "%s", net);
        else if (readable(d))
            snprintf(r->net_src, sizeof r->net_src, "%s", d);
        if (*r->net_src && !readable(r->net_src)) rc = die("%s: no such file (--net-allreduce)", r->net_src);
    }
    if (!rc && !*r->net_src && (isnan(r->net_gbs) != isnan(r->net_lat)))
        rc = die("--net-gbs and --net-latency-us go together when there is no network benchmark (--net-allreduce)");
    if (!rc) {
        if (out)
            snprintf(r->out, sizeof r->out, "%s", out);
        else {
            beside(r->out, sizeof r->out, csv, "");
            if (strcmp(r->out, csv) == 0) snprintf(r->out, sizeof r->out, "%s.plots", csv); /* named without .csv */
        }
    }
    char err[1500] = "";
    /* read and checked before anything is written: a CSV that is not a study's leaves no folder behind */
    if (!rc && (rc = study_load(&r->st, csv, infos, err, sizeof err))) fprintf(stderr, "report: %s\n", err);
    if (!rc && *r->bench_src && !runs) {
        r->have_bench = 1;
        int b = fits_read(&r->fits, r->bench_src, "", infos, r->bench_err, sizeof r->bench_err);
        if (b == 2) {
            fprintf(stderr, "report: %s\n", r->bench_err);
            rc = 2;
        }
        if (b != 1) r->bench_err[0] = '\0';
        r->nfit_bench = r->fits.n;
    }
    if (!rc && r->st.leftout)
        fprintf(stderr,
                "report: %d run(s) left out: killed part-way and run again later, or superseded by a later run "
                "of the same configuration\n",
                r->st.leftout);
    if (!rc && r->st.rows.bad_rows)
        fprintf(stderr,
                "report: %s: %d record(s) with the wrong number of fields or a cell that does not parse skipped (a "
                "line cut short by a kill?)\n",
                csv, r->st.rows.bad_rows);
    if (!rc && runs && report_runs(&r->st, stdout)) {
        fprintf(stderr, "report: stdout: cannot write: %s\n", strerror(errno));
        rc = 1;
    }
    if (!rc && !runs && mkdirs(r->out) != 0) {
        fprintf(stderr, "report: %s: cannot create: %s\n", r->out, strerror(errno));
        rc = 1;
    }
    if (!rc && !runs) {
        find_plots(r->plots, sizeof r->plots, source_dir, exe);
        r->gnuplot = *r->plots && on_path("gnuplot");
        if (!r->gnuplot) {
            r->figs_note =
                !*r->plots ? "plots/ not found beside the binary"
                           : "gnuplot not found; for the figures install gnuplot-nox (scripts/setup.sh does) and run "
                             "scaling report again";
            /* the command that makes them, runnable as it stands where gnuplot is */
            char self[1024];
            ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
            self[n > 0 ? n : 0] = '\0';
            fprintf(stderr,
                    "report: %s: the report has no figures; for them install gnuplot-nox (scripts/setup.sh "
                    "does) and run ",
                    !*r->plots ? "plots/ not found" : "gnuplot not found");
            quoted(stderr, n > 0 ? self : exe);
            fputs(" report", stderr);
            for (int i = 1; i < argc; i++) fputc(' ', stderr), quoted(stderr, argv[i]);
            fputc('\n', stderr);
        }
        rc = write_report(r);
    }
    study_free(&r->st);
    fits_free(&r->fits);
    free(r->plot);
    free(r);
    return rc;
}
