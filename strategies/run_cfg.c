/* run_cfg.c — what a run's configuration sets up that more than one strategy trains with: a language model's
 * trainer, the same for the one GPU of single and for each replica of data parallelism. */
#include "strategy.h"
#include "../engine/gpt2/gpt2_train.h"
#include <stdio.h>

int run_cfg_lm_init(struct gpt2_train *g, const run_cfg_t *cfg, int device, int B, int first, char *err,
                    size_t errlen) {
    if (!cfg->data->corpus) {
        snprintf(err, errlen, "model %s learns from tokens, and the data set holds none", cfg->model);
        return -1;
    }
    optim_cfg_t oc = run_cfg_optim(cfg);
    if (gpt2_train_init(g, device, cfg->model_size, B, cfg->global_batch, first, cfg->math, &oc,
                        (float)cfg->weight_decay, cfg->data->corpus, cfg->seed, err, errlen) != 0) {
        gpt2_train_free(g);
        return -1;
    }
    g->use_graph = cfg->cuda_graph;
    g->trace = cfg->trace;
    return 0;
}
