/* render.c — the figures drawn: each plot of report_figures (figures.c) given to gnuplot with the scripts of plots/,
 * its strings passed as escaped gnuplot strings (data, never code), under a deadline, its figure renamed into place;
 * and the list of plots itself, which the figures, the batch section, the baseline and the projection add to. */
#define _POSIX_C_SOURCE 200809L
#include "report.h"
#include "outdir.h"
#include "../study/paths.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

/* A gnuplot string assignment that no byte can end: double-quoted, with every byte outside a plain set written as
 * an octal escape (gnuplot reassembles the bytes, UTF-8 included). A file name or a CSV cell is data here, never
 * code: a quote, a backslash or a newline in it stays inside the string. */
static void gq(FILE *f, const char *var, const char *s) {
    fprintf(f, "%s = \"", var);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        if (isalnum(*p) || strchr(" ._,:/()+=@-", *p)) fputc(*p, f);
        else fprintf(f, "\\%03o", *p);
    fprintf(f, "\"\n");
}

/* A data file's path as gnuplot must get it: gnuplot runs a file name that starts with '<' as a shell command and
 * reads "-", "+", "$name" and "~/" as something other than a file, so a relative path (the output folder derives
 * from the CSV's name or --out, both data) gets "./" before it; an absolute one starts with '/' already. */
static void gq_file(FILE *f, const char *var, const char *path) {
    char *p = *path && *path != '/' ? mem_printf("./%s", path) : NULL;
    gq(f, var, p ? p : path);
    free(p);
}

/* f emptied for the next figure. 0, or -1. */
static int empty(FILE *f) {
    fflush(f);
    rewind(f);
    return ftruncate(fileno(f), 0);
}

/* Waits for gnuplot, at most GNUPLOT_DEADLINE_S: a figure that takes longer is a stuck process, killed. 0 when it
 * exited 0. */
#define GNUPLOT_DEADLINE_S 120
static int gnuplot_wait(pid_t pid) {
    int status = 0;
    struct timespec t0, now, nap = {0, 10 * 1000 * 1000};
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (;;) {
        pid_t w = waitpid(pid, &status, WNOHANG);
        if (w == pid) return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
        if (w < 0 && errno != EINTR) return -1;
        if (outdir_interrupted()) {     /* a held SIGINT or SIGTERM: the report stops, its folder as it was */
            kill(pid, SIGKILL);
            while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
            return -1;
        }
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (now.tv_sec - t0.tv_sec >= GNUPLOT_DEADLINE_S) {
            kill(pid, SIGKILL);
            while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
            fprintf(stderr, "scaling report: gnuplot ran past %d s: stopped\n", GNUPLOT_DEADLINE_S);
            return -1;
        }
        nanosleep(&nap, NULL);
    }
}

/* Draws one plot in one format (0: PNG, 1: SVG) into <out>/<name>.<fmt>. gnuplot reads its variables from its
 * stdin ("-", the unnamed file vars) and writes the figure to its stdout, a temporary file beside the target that is
 * renamed into place when gnuplot succeeds (study/paths.h): gnuplot opens no path in the output folder, so a symlink
 * planted there is never followed, and a figure cut short never replaces a whole one. Its stderr goes to errf (also
 * unnamed). 0, -1 when the figure cannot be written, 1 when gnuplot failed. */
static int draw(const report_t *r, const plot_t *p, int fmt, FILE *vars, FILE *errf) {
    if (empty(vars) != 0) return -1;
    gq(vars, "fmt", fmt ? "svg" : "png");
    gq(vars, "out", "");    /* no file: plots/common.gp leaves the output on stdout */
    gq_file(vars, "data", p->data);
    gq_file(vars, "data2", p->data2);
    gq(vars, "subtitle", p->subtitle);
    gq(vars, "caption", p->caption);
    gq(vars, "unit", study_tput_unit(p->tokens));
    gq(vars, "samples", study_sample_unit(p->tokens));
    if (fflush(vars) != 0 || fseek(vars, 0, SEEK_SET) != 0) return -1;
    char *path = mem_printf("%s/%s.%s", r->out, p->name, fmt ? "svg" : "png");
    paths_replace_t out;
    int rc = paths_replace_begin(&out, path, NULL, 0) != 0 ? -1 : 0;
    free(path);
    if (rc) return rc;
    char *common = mem_printf("%s/common.gp", r->plots), *script = mem_printf("%s/%s", r->plots, p->script);
    char *argv[] = {"gnuplot", "-", common, script, NULL};
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fileno(vars), STDIN_FILENO);
    posix_spawn_file_actions_adddup2(&fa, fileno(out.f), STDOUT_FILENO);
    posix_spawn_file_actions_adddup2(&fa, fileno(errf), STDERR_FILENO);
    /* gnuplot starts with the signals the report holds (outdir.h) unheld and at their defaults */
    posix_spawnattr_t at;
    sigset_t none, dfl;
    sigemptyset(&none);
    sigemptyset(&dfl);
    sigaddset(&dfl, SIGINT), sigaddset(&dfl, SIGTERM), sigaddset(&dfl, SIGHUP);
    posix_spawnattr_init(&at);
    posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
    posix_spawnattr_setsigmask(&at, &none);
    posix_spawnattr_setsigdefault(&at, &dfl);
    pid_t pid;
    int e = posix_spawnp(&pid, "gnuplot", &fa, &at, argv, environ);
    posix_spawnattr_destroy(&at);
    posix_spawn_file_actions_destroy(&fa);
    int failed = e != 0 || gnuplot_wait(pid) != 0;
    free(common), free(script);
    if (failed) paths_replace_abort(&out);
    else if (paths_replace_end(&out, NULL, 0) != 0) rc = -1;
    return failed ? 1 : rc;
}

/* gnuplot's stderr since the last call: it warns there without failing, and a warning here is a script bug worth
 * seeing. */
static void pass_on(FILE *errf) {
    char line[1024];
    rewind(errf);
    while (fgets(line, sizeof line, errf))
        if (line[0] != '\n') fputs(line, stderr);
    if (empty(errf) != 0) clearerr(errf);
}

int report_render(report_t *r, int from, char *err, size_t errlen) {
    /* unnamed files (O_TMPFILE, or removed at once): nothing in the output folder */
    FILE *vars = tmpfile(), *errf = tmpfile();
    if (!vars || !errf) {
        snprintf(err, errlen, "gnuplot's input: cannot create a temporary file: %s", strerror(errno));
        if (vars) fclose(vars);
        if (errf) fclose(errf);
        return 1;
    }
    int rc = 0;
    for (int i = from; i < r->nplot && !rc; i++) {
        const plot_t *p = &r->plot[i];
        if (outdir_interrupted()) {
            rc = 1, snprintf(err, errlen, "interrupted");
            break;
        }
        if (p->skip) {
            fprintf(stderr, "scaling report: skip %.*s (%s): %s\n", (int)(strlen(p->script) - 3), p->script,
                    p->subtitle, p->skip);
            continue;
        }
        for (int fmt = 0; fmt < 2 && !rc; fmt++) {
            int d = draw(r, p, fmt, vars, errf);
            pass_on(errf);
            if (d < 0) rc = 1, snprintf(err, errlen, "%s/%s.%s: cannot write", r->out, p->name, fmt ? "svg" : "png");
            else if (d) rc = 1, snprintf(err, errlen, "gnuplot failed on plots/%s for %s", p->script, p->name);
        }
        if (!rc) *MEM_PUSH(r->fig, r->nfig, r->capfig) = mem_printf("%s.png", p->name);
    }
    fclose(vars);
    fclose(errf);
    return rc;
}

// ---- the list of plots

void report_emit(report_t *r, const char *script, const char *name, const char *data, const char *data2,
                 const study_group_t *g, const char *subtitle, const char *caption) {
    plot_t *p = report_plot_add(r);
    p->tokens = g->tokens;   /* the figure names its group's unit */
    p->script = mem_printf("%s", script);
    p->name = mem_printf("%s", name);
    p->data = mem_printf("%s", data);
    p->data2 = mem_printf("%s", data2);
    p->subtitle = mem_printf("%s", subtitle);
    p->caption = mem_printf("%s", caption);
}

void report_skip(report_t *r, const char *script, const study_group_t *g, const char *why) {
    plot_t *p = report_plot_add(r);
    p->script = mem_printf("%s", script);
    p->subtitle = mem_printf("%s", g->sub);
    p->skip = mem_printf("%s", why);
}

plot_t *report_plot_add(report_t *r) { return MEM_PUSH(r->plot, r->nplot, r->capplot); }

void report_plots_free(report_t *r) {
    for (int i = 0; i < r->nplot; i++) {
        plot_t *p = &r->plot[i];
        free(p->script), free(p->name), free(p->data), free(p->data2), free(p->subtitle), free(p->caption);
        free(p->skip);
    }
    free(r->plot);
    r->plot = NULL;
    r->nplot = r->capplot = 0;
}
