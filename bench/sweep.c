/* sweep.c — expands the option lists into the runs of a study (gpus x batch x lr x seed x math x grad dtype x
 * micro-batches), applying weak or strong scaling to the global batch and learning rate. */
#include "sweep.h"
#include "../engine/errmsg.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>


/* Checks everything first, so a bad combination late in the sweep fails before the first run starts. */
static int sweep_check(const options_t *o, char *err, size_t errlen) {
    if (o->n_gpus < 1 || o->n_batch < 1 || o->n_lr < 1 || o->n_seeds < 1 || o->n_micro < 1 || o->n_math < 1 ||
        o->n_grad_dtype < 1)
        return errmsg(-1, err, errlen, "empty sweep: --gpus, --batch, --lr, --seed, --math, --grad-dtype and "
                    "--micro-batches each need at least one value");
    if (o->n_gpus > OPT_LIST_MAX || o->n_batch > OPT_LIST_MAX || o->n_lr > OPT_LIST_MAX || o->n_seeds > OPT_LIST_MAX ||
        o->n_micro > OPT_LIST_MAX || o->n_math > OPT_LIST_MAX || o->n_grad_dtype > OPT_LIST_MAX)
        return errmsg(-1, err, errlen, "sweep list longer than %d values", OPT_LIST_MAX);
    for (int m = 0; m < o->n_micro; m++)
        if (o->micro[m] < 1 && o->micro[m] != OPT_MICRO_AUTO)
            return errmsg(-1, err, errlen, "--micro-batches: \"%d\" is not a positive integer", o->micro[m]);
    for (int g = 0; g < o->n_gpus; g++) {
        int gpus = o->gpus[g];
        if (gpus < 1) return errmsg(-1, err, errlen, "--gpus: \"%d\" is not a positive integer", gpus);
        for (int b = 0; b < o->n_batch; b++) {
            int batch = o->batch[b];
            if (batch < 1) return errmsg(-1, err, errlen, "--batch: \"%d\" is not a positive integer", batch);
            if (o->weak && batch > INT_MAX / gpus)
                return errmsg(-1, err, errlen, "--batch %d x %d GPUs overflows the global batch", batch, gpus);
            if (!o->weak && batch % gpus)
                return errmsg(-1, err, errlen, "--batch %d is not divisible by %d GPU%s (strong scaling)", batch, gpus,
                            gpus == 1 ? "" : "s");
            int global = o->weak ? batch * gpus : batch;
            for (int m = 0; m < o->n_micro; m++)
                if (o->micro[m] != OPT_MICRO_AUTO && global % o->micro[m])
                    return errmsg(-1, err, errlen, "--micro-batches %d does not divide the global batch %d (%d GPU%s, "
                                "%s scaling)", o->micro[m], global, gpus, gpus == 1 ? "" : "s",
                                o->weak ? "weak" : "strong");
        }
    }
    for (int l = 0; l < o->n_lr; l++)
        if (!(o->lr[l] > 0)) return errmsg(-1, err, errlen, "--lr: \"%g\" must be a positive number", o->lr[l]);
    return 0;
}

int sweep_expand(const options_t *o, sweep_point_t **points, char *err, size_t errlen) {
    *points = NULL;
    if (err && errlen) err[0] = '\0';
    if (sweep_check(o, err, errlen)) return -1;
    /* Seven lists of up to OPT_LIST_MAX values can multiply past INT_MAX; a million runs is years of device time,
     * so a longer sweep is a mistake in the lists. */
    long long total = (long long)o->n_gpus * o->n_batch * o->n_lr * o->n_seeds * o->n_math * o->n_grad_dtype *
                      o->n_micro;
    if (total > 1000000) return errmsg(-1, err, errlen, "a sweep of %lld runs is too many", total);
    int n = (int)total;
    sweep_point_t *p = calloc((size_t)n, sizeof *p);
    if (!p) return errmsg(-1, err, errlen, "out of memory expanding a sweep of %d runs", n);
    for (int k = 0; k < n; k++) {
        int r = k;      /* k in mixed radix: micro-batches the fastest digit, GPU counts the slowest */
        int mb = r % o->n_micro; r /= o->n_micro;
        int d = r % o->n_grad_dtype; r /= o->n_grad_dtype;
        int m = r % o->n_math; r /= o->n_math;
        int s = r % o->n_seeds; r /= o->n_seeds;
        int l = r % o->n_lr; r /= o->n_lr;
        int b = r % o->n_batch; r /= o->n_batch;
        int gpus = o->gpus[r];
        p[k].index = k;
        p[k].gpus = gpus;
        /* Weak scaling keeps the per-GPU work fixed, so the global batch grows and the rate with it by the scaling
         * rule (Goyal et al.'s linear one by default); strong scaling splits a fixed global batch, which is its own
         * base unless --lr-base-batch names another. */
        p[k].global_batch = o->weak ? o->batch[b] * gpus : o->batch[b];
        p[k].per_gpu_batch = p[k].global_batch / gpus;
        p[k].lr_base_batch = o->lr_base_batch > 0 ? o->lr_base_batch : o->batch[b];
        p[k].lr = lr_scale(o->lr[l], o->lr_scaling, p[k].global_batch, p[k].lr_base_batch);
        p[k].seed = o->seeds[s];
        p[k].math = o->math[m];
        p[k].grad_dtype = o->grad_dtype[d];
        p[k].micro_batches = o->micro[mb];
    }
    *points = p;
    return n;
}

int sweep_lr_warning(const options_t *o, const sweep_point_t *p, int n, char *msg, size_t len) {
    int worst = -1;
    double most = SWEEP_LR_WARN_RATIO;
    for (int k = 0; k < n; k++) {
        double grown = lr_scale(1.0, o->lr_scaling, p[k].global_batch, p[k].lr_base_batch);
        if (grown > most) most = grown, worst = k;
    }
    if (worst < 0) return 0;
    snprintf(msg, len, "--lr %g grows to %g at global batch %d (%.3gx, --lr-scaling %s), past %gx: such rates "
             "often diverge; --warmup-epochs, --lr-scaling sqrt or a smaller --lr temper it", p[worst].lr / most,
             p[worst].lr, p[worst].global_batch, most, lr_scaling_names[o->lr_scaling], SWEEP_LR_WARN_RATIO);
    return 1;
}
