/* loss_scale.h — dynamic loss scaling for fp16 training, with torch.amp's GradScaler semantics: the loss's gradient
 * is multiplied by `scale`; a step whose gradients hold an inf or a NaN is skipped and halves the scale; after
 * `interval` clean steps in a row the scale doubles (where the doubled value is finite). One definition of the
 * schedule, compiled for the host (tests/host/test_loss_scale.c) and for the device, where the state lives and the
 * decision is taken (engine/loss_scale.cu): no host synchronisation, so CUDA-graph steps and data-parallel steps need
 * none either. In data parallel the check runs on the all-reduced gradients: an inf or NaN of any replica survives
 * the sum, so every replica skips together. */
#pragma once
#ifdef __CUDACC__
#define LOSS_SCALE_HD __host__ __device__
#else
#define LOSS_SCALE_HD
#endif
#include <math.h>

/* The schedule's constants: torch.amp.GradScaler's defaults (init_scale 2^16, growth_factor 2, backoff_factor 0.5,
 * growth_interval 2000). */
typedef struct {
    float init, growth, backoff;
    int interval;
} loss_scale_cfg_t;

static inline LOSS_SCALE_HD loss_scale_cfg_t loss_scale_torch(void) {
    loss_scale_cfg_t c = {65536.0f, 2.0f, 0.5f, 2000};
    return c;
}

/* The state a run carries from step to step (on the device while training). */
typedef struct {
    float scale;        /* what the loss's gradient is multiplied by, and the gradients divided by before the update */
    int clean;          /* clean steps since the last change of the scale (torch's growth tracker) */
    int skipped;        /* steps skipped for an inf or NaN, since the start */
    int found_inf;      /* this step's gradients held an inf or a NaN (set by the check, read by the update) */
} loss_scale_t;

static inline LOSS_SCALE_HD loss_scale_t loss_scale_start(loss_scale_cfg_t c) {
    loss_scale_t s = {c.init, 0, 0, 0};
    return s;
}

/* After a step's check: the next scale, as torch's _amp_update_scale_ computes it, and the skip counted. Returns 1
 * where the step's update was applied (no inf or NaN), 0 where it was skipped. Clears found_inf for the next step. */
static inline LOSS_SCALE_HD int loss_scale_update(loss_scale_t *s, loss_scale_cfg_t c) {
    const int clean = !s->found_inf;
    if (!clean) {
        s->scale *= c.backoff;
        s->clean = 0;
        s->skipped++;
    } else if (s->clean + 1 >= c.interval) {
        const float grown = s->scale * c.growth;
        if (isfinite(grown)) s->scale = grown;
        s->clean = 0;
    } else {
        s->clean++;
    }
    s->found_inf = 0;
    return clean;
}
