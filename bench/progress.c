/* progress.c — a study's run count and ETA: means of the setups and epochs timed so far, applied to what is left, so
 * the estimate covers the whole study (every sweep, setup included) and not only the current run; and the lines that
 * say where an epoch or a setup stands. */
#include "progress.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>

void progress_init(progress_t *p, int runs, long epochs) {
    *p = (progress_t){.runs = runs, .epochs_left = epochs, .setups_left = runs};
}

int progress_next_run(progress_t *p) { return ++p->run; }

void progress_setup_done(progress_t *p, double seconds) {
    p->setups++;
    p->setup_s += seconds;
    if (p->setups_left > 0) p->setups_left--;
}

void progress_epoch_done(progress_t *p, double seconds) {
    p->epochs++;
    p->epoch_s += seconds;
    if (p->epochs_left > 0) p->epochs_left--;
}

void progress_drop(progress_t *p, int epochs, int setup) {
    p->epochs_left = p->epochs_left > epochs ? p->epochs_left - epochs : 0;
    if (setup && p->setups_left > 0) p->setups_left--;
}

double progress_eta(const progress_t *p) {
    if (p->epochs == 0) return -1;
    return (double)p->epochs_left * p->epoch_s / p->epochs + (p->setups ? p->setups_left * p->setup_s / p->setups : 0);
}

void progress_duration(char *buf, size_t len, double s) {
    if (s < 0 || !isfinite(s)) snprintf(buf, len, "?");
    else if (s < 60) snprintf(buf, len, "%.0fs", s);
    else if (s < 3600) snprintf(buf, len, "%dm%02ds", (int)s / 60, (int)s % 60);
    else snprintf(buf, len, "%dh%02dm", (int)s / 3600, ((int)s % 3600) / 60);
}

void progress_step_line(char *buf, size_t len, const progress_t *p, const progress_step_t *s) {
    int gpu = s->done > 0 && s->gpu_ms > 0;
    int at = gpu ? s->done : s->launched;
    double secs = gpu ? s->gpu_ms / 1e3 : s->host_s;
    double per_step = at > 0 && secs > 0 ? secs / at : -1;
    double ips = per_step > 0 ? s->global_batch / per_step : -1;
    double epoch_eta = per_step > 0 ? (s->steps - at) * per_step : -1;
    /* the study: its epochs still to come after this one at the mean epoch so far (this epoch's pace before one is
     * timed), and its setups at the mean setup */
    double epoch_s = p->epochs ? p->epoch_s / p->epochs : per_step > 0 ? per_step * s->steps : -1;
    long after = p->epochs_left > 0 ? p->epochs_left - 1 : 0;
    double study_eta = epoch_eta >= 0 && epoch_s >= 0
                           ? epoch_eta + after * epoch_s + (p->setups ? p->setups_left * p->setup_s / p->setups : 0)
                           : -1;
    char e1[32], e2[32], rate[48];
    progress_duration(e1, sizeof e1, epoch_eta);
    progress_duration(e2, sizeof e2, study_eta);
    if (ips > 0) snprintf(rate, sizeof rate, "%.0f images/s%s", ips, gpu ? "" : " (launched)");
    else snprintf(rate, sizeof rate, "? images/s");
    snprintf(buf, len, "[run %d/%d  epoch %d/%d] step %d/%d  %s  epoch ETA %s  study ETA %s", s->run, s->runs,
             s->epoch, s->epochs, at, s->steps, rate, e1, e2);
}

/* Appends to buf (n characters so far) what fmt says, unless buf is full already. */
__attribute__((format(printf, 4, 5))) static void append(char *buf, size_t len, int *n, const char *fmt, ...) {
    if (*n < 0 || (size_t)*n >= len) return;
    va_list ap;
    va_start(ap, fmt);
    *n += vsnprintf(buf + *n, len - (size_t)*n, fmt, ap);
    va_end(ap);
}

void progress_setup_line(char *buf, size_t len, int run, int runs, double seconds, int gpus,
                         const setup_count_now_t *now) {
    int n = snprintf(buf, len, "[run %d/%d] setup %.0f s", run, runs, seconds);
    if (!now || now->layers <= 0) return;
    append(buf, len, &n, ": %d of %d layers set up", now->layers_done, now->layers);
    if (gpus > 1) append(buf, len, &n, " on %d of %d GPUs", now->gpus, gpus);
    append(buf, len, &n, ", %d convolution search%s", now->conv_searches, now->conv_searches == 1 ? "" : "es");
    if (now->bn_searches > 0)
        append(buf, len, &n, ", %d batch-norm search%s", now->bn_searches, now->bn_searches == 1 ? "" : "es");
}
