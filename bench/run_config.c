/* run_config.c — a sweep point's configuration as its rows and --resume see it, before anything runs
 * (run_config.h). */
#include "run_config.h"
#include "../engine/math_mode.h"
#include "../engine/weight_init.h"
#include "../strategies/naive_path.h"
#include <stdio.h>

void run_row_of(const options_t *o, const strategy_info_t *info, const sweep_point_t *pt, const study_env_t *env,
                const dist_t *dist, study_row_t *row) {
    study_row_init(row);
    row->strategy = info->name;
    row->model = options_model_cell(o);
    row->dataset = o->dataset;
    row->math = math_name(pt->math);
    /* Only a strategy with a gradient reduction has gradients on a wire; the others' cell stays empty. */
    row->grad_dtype = info->reduces ? dtype_name(pt->grad_dtype) : "";
    row->init = init_name(o->init);
    row->seed = pt->seed;
    row->gpus = pt->gpus;
    row->global_batch = pt->global_batch;
    row->per_gpu_batch = pt->per_gpu_batch;
    row->lr = pt->lr;
    row->momentum = o->momentum;
    row->weight_decay = o->weight_decay;
    row->lr_schedule = lr_kind_names[o->lr_schedule];
    row->warmup_epochs = o->warmup_epochs;
    row->lr_epochs = o->lr_schedule == LR_CONSTANT ? -1 : o->epochs;   /* a constant rate spans no epochs */
    row->lr_scaling = lr_scaling_names[o->lr_scaling];
    row->lr_base_batch = pt->lr_base_batch;
    row->optimizer = optim_names[o->optimizer];
    row->target_acc = o->target_acc > 0 ? o->target_acc : -1;
    row->gns_every = o->gns_every;   /* 0 written: a run that measured none is not one that did (the key) */
    row->env = *env;
    if (!info->uses_nccl) row->env.nccl_transport[0] = '\0';
    row->nodes = dist ? dist->n_nodes : 1;
    row->gpus_per_node = dist ? dist->gpus_per_node : pt->gpus;
    row->timeout_s = o->timeout_s;
}

void run_key_of(const options_t *o, const strategy_info_t *info, const sweep_point_t *pt, const idx_dataset_t *data,
                const study_row_t *row, study_key_t *key) {
    study_row_t want = *row;
    int full = data->train.n / pt->global_batch;
    want.stats.steps = o->steps > 0 && o->steps < full ? o->steps : full;
    want.stats.micro_batches = pt->micro_batches > 0 ? pt->micro_batches : -1;   /* auto: whatever it picked */
    snprintf(want.stats.schedule, sizeof want.stats.schedule, "%s", o->schedule);
    /* A copy path the user chose is the run's algorithm; otherwise (auto, NCCL's own choice) it is not known before
     * setup and the key leaves it open. */
    if (info->path_is_algo && o->naive_path != NAIVE_PATH_AUTO)
        snprintf(want.stats.nccl_algo, sizeof want.stats.nccl_algo, "%s", naive_path_name(o->naive_path));
    study_key_of_row(&want, key);
}
