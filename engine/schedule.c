/* schedule.c — the learning-rate schedule (schedule.h): one function of the step, which the device's table is made
 * of, so a CUDA-graph step and the host agree on every step's rate. */
#include "schedule.h"

#include <math.h>

double lr_scale(double lr, lr_scaling_t rule, double batch, double base_batch) {
    if (rule == LR_SCALE_NONE || !(base_batch > 0)) return lr;
    double k = batch / base_batch;
    return rule == LR_SCALE_SQRT ? lr * sqrt(k) : lr * k;
}

long lr_warmup_steps(const lr_schedule_t *s, long steps_per_epoch) {
    long total = (long)s->epochs * steps_per_epoch;
    long w = s->warmup_epochs > 0 ? lround(s->warmup_epochs * (double)steps_per_epoch) : 0;
    return w > total ? total : w;
}

double lr_schedule_at(const lr_schedule_t *s, long step, long steps_per_epoch) {
    long total = (long)s->epochs * steps_per_epoch, w = lr_warmup_steps(s, steps_per_epoch);
    if (step >= total) step = total - 1;
    if (step < 0) step = 0;
    /* Linear from peak / W at the first step to the peak at step W - 1: no step trains at a rate of 0. */
    if (step < w) return s->peak * (double)(step + 1) / (double)w;
    double t = (double)(step - w), T = (double)(total - w);
    switch (s->kind) {
    case LR_STEP: return s->peak * (t < 0.5 * T ? 1.0 : t < 0.75 * T ? 0.1 : 0.01);
    case LR_COSINE: return s->peak * 0.5 * (1.0 + cos(M_PI * t / T));
    case LR_LINEAR: return s->peak * (1.0 - t / T);
    default: return s->peak;
    }
}

void lr_schedule_table(const lr_schedule_t *s, long steps_per_epoch, float *out, long n) {
    for (long i = 0; i < n; i++) out[i] = (float)lr_schedule_at(s, i, steps_per_epoch);
}
