/* test_pipeline_gpt2.c — the pipeline strategy trains GPT-2 as single does: the tiny GPT-2 on random tokens, K AdamW
 * steps at global batch B, its stages on GPU 0 (or on GPUs 0, 1, ... where present): 1 stage at 2 micro-batches, 2
 * stages under GPipe and 1F1B, 3 and 4 stages (each unit a stage), the stages balanced by FLOPs or split by hand;
 * fp32 and bf16 at dp_common.h's bounds on the parameters, the update, the training loss and the held-out loss.
 * Negative control: single at half the batch is rejected. Zero bubble is refused with a message.
 * Run: ./test_pipeline_gpt2   (exits 77 without a CUDA device) */
#include "dp_common.h"
#include "../../engine/tokens.h"
#include "../../strategies/pipeline/pipe_schedule.h"

#define B 8
#define K 4
#define T 32

int main(void) {
    gpu_test_require(1);
    int n_dev;
    tokens_corpus_t corpus;
    idx_dataset_t data = dp_test_lm_data(&corpus, T, &n_dev);
    /* stage k on GPU k where present, else on GPU 0 (the links then copy within it) */
    int devices[4];
    for (int k = 0; k < 4; k++) devices[k] = k < n_dev ? k : 0;
    static const int hand[1] = {3};   /* 2 stages: the embeddings and both blocks; the head */
    static const struct { const char *label; int p, micro, schedule; const int *split; } variants[] = {
        {"1 stage, M 2", 1, 2, SCHED_1F1B, NULL},
        {"2 stages, M 2, gpipe", 2, 2, SCHED_GPIPE, NULL},
        {"2 stages, M 4, 1f1b", 2, 4, SCHED_1F1B, NULL},
        {"2 stages split 3, M 2, 1f1b", 2, 2, SCHED_1F1B, hand},
        {"3 stages, M 4, 1f1b", 3, 4, SCHED_1F1B, NULL},
        {"4 stages (a unit each), M 2, gpipe", 4, 2, SCHED_GPIPE, NULL},
    };
    const math_t maths[2] = {MATH_FP32, MATH_BF16};
    const strategy_t *pipe = strategy_find("pipeline");
    for (int mi = 0; mi < 2; mi++) {
        dp_lm_ref_t r = dp_test_lm_reference(maths[mi], &data, devices, B, K);
        for (size_t v = 0; v < sizeof variants / sizeof variants[0]; v++) {
            run_cfg_t c = r.cfg;
            c.n_gpus = variants[v].p;
            c.micro_batches = variants[v].micro;
            c.schedule = variants[v].schedule;
            c.split = variants[v].split;
            c.n_split = variants[v].split ? variants[v].p - 1 : 0;
            epoch_stats_t s;
            double held;
            size_t np;
            float *p = dp_test_lm(pipe, &c, K, &s, &held, &np);
            char label[96];
            snprintf(label, sizeof label, "%s: %s", math_name(maths[mi]), variants[v].label);
            EXPECT(dp_test_lm_near(&r, label, p, np, s.train_loss, held), "%s: not single's training", label);
            EXPECT(s.train_acc < 0 && s.steps == K && s.stages == variants[v].p,
                   "%s: accuracy %g, steps %d, stages %d in a language model's row", label, s.train_acc, s.steps,
                   s.stages);
            free(p);
        }
        run_cfg_t zb = r.cfg;
        zb.n_gpus = 2;
        zb.micro_batches = 2;
        zb.schedule = SCHED_ZB;
        char err[512] = "";
        void *state = NULL;
        EXPECT(pipe->setup(&state, &zb, err, sizeof err) != 0 && strstr(err, "zb"), "zero bubble: \"%s\"", err);
        dp_test_lm_reference_free(&r);
    }
    tokens_corpus_free(&corpus);
    return test_summary();
}
