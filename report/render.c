/* render.c — the figures drawn: each plot of report_figures (figures.c) given to gnuplot with the scripts of plots/,
 * its strings passed as escaped gnuplot strings (data, never code), under a deadline. */
#define _POSIX_C_SOURCE 200809L
#include "report.h"

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

/* Draws one plot in one format (0: PNG, 1: SVG): the variables file, then gnuplot on common.gp and the script. */
static int draw(const report_t *r, const plot_t *p, int fmt, const char *vars, const char *errf) {
    FILE *v = fopen(vars, "w");
    if (!v) return -1;
    char *out = mem_printf("%s/%s", r->out, p->name);
    gq(v, "fmt", fmt ? "svg" : "png");
    gq(v, "out", out);
    gq(v, "data", p->data);
    gq(v, "data2", p->data2);
    gq(v, "subtitle", p->subtitle);
    gq(v, "caption", p->caption);
    free(out);
    if (fclose(v) != 0) return -1;
    char *common = mem_printf("%s/common.gp", r->plots), *script = mem_printf("%s/%s", r->plots, p->script);
    char *argv[] = {"gnuplot", (char *)vars, common, script, NULL};
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, errf, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    pid_t pid;
    int e = posix_spawnp(&pid, "gnuplot", &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    int failed = e != 0 || gnuplot_wait(pid) != 0;
    free(common), free(script);
    /* gnuplot warns on stderr without failing; a warning here is a script bug worth seeing */
    FILE *ef = fopen(errf, "r");
    if (ef) {
        char line[1024];
        while (fgets(line, sizeof line, ef))
            if (line[0] != '\n') fputs(line, stderr);
        fclose(ef);
    }
    return failed ? 1 : 0;
}

int report_render(report_t *r, int from, char *err, size_t errlen) {
    char *vars = mem_printf("%s/.gnuplot_vars.gp", r->out), *errf = mem_printf("%s/.gnuplot.err", r->out);
    int rc = 0;
    for (int i = from; i < r->nplot && !rc; i++) {
        const plot_t *p = &r->plot[i];
        if (p->skip) {
            fprintf(stderr, "scaling report: skip %.*s (%s): %s\n", (int)(strlen(p->script) - 3), p->script,
                    p->subtitle, p->skip);
            continue;
        }
        for (int fmt = 0; fmt < 2 && !rc; fmt++) {
            int d = draw(r, p, fmt, vars, errf);
            if (d < 0) rc = 1, snprintf(err, errlen, "%s: cannot write", vars);
            else if (d) rc = 1, snprintf(err, errlen, "gnuplot failed on plots/%s for %s", p->script, p->name);
        }
        if (!rc) *MEM_PUSH(r->fig, r->nfig, r->capfig) = mem_printf("%s.png", p->name);
    }
    unlink(vars);
    unlink(errf);
    free(vars);
    free(errf);
    return rc;
}
