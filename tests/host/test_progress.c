/* test_progress.c — a study's progress line: the run number over every sweep and the ETA from the mean setup and
 * epoch so far, applied to what is left, with skipped and diverged runs taken out. */
#include "bench/progress.h"
#include "test.h"

#include <string.h>

static int near(double a, double b) { return fabs(a - b) < 1e-12; }

static void test_progress(void) {
    progress_t p;
    progress_init(&p, 3, 6);    /* 3 runs of 2 epochs */
    EXPECT(progress_eta(&p) < 0, "no estimate before an epoch is timed");
    EXPECT(progress_next_run(&p) == 1, "run 1");
    progress_setup_done(&p, 2.0);
    progress_epoch_done(&p, 1.0);
    /* 5 epochs at 1 s and 2 setups at 2 s are left */
    EXPECT(near(progress_eta(&p), 9.0), "eta %g, want 9", progress_eta(&p));
    progress_epoch_done(&p, 3.0);
    EXPECT(near(progress_eta(&p), 4 * 2.0 + 2 * 2.0), "eta %g, want 12", progress_eta(&p));
    EXPECT(progress_next_run(&p) == 2, "run 2");
    progress_drop(&p, 2, 1);    /* run 2 skipped: neither its setup nor its epochs come */
    EXPECT(near(progress_eta(&p), 2 * 2.0 + 1 * 2.0), "eta %g after a skip, want 6", progress_eta(&p));
    EXPECT(progress_next_run(&p) == 3 && p.runs == 3, "run 3 of 3");
    progress_setup_done(&p, 4.0);
    progress_epoch_done(&p, 2.0);
    progress_drop(&p, 5, 0);    /* diverged: the rest of it is not run (more than is left clamps at 0) */
    EXPECT(near(progress_eta(&p), 0), "eta %g at the end, want 0", progress_eta(&p));
}

static void test_lines(void) {
    progress_t p;
    char line[256];
    progress_init(&p, 2, 4);    /* 2 runs of 2 epochs: the first epoch of the study, nothing timed yet */
    progress_next_run(&p);
    /* 1200 of 5004 steps finished in 48 s of GPU time (40 ms a step, batch 256: 6400 images/s): 3804 left, 152 s;
     * the study: this epoch's 152 s, then 3 epochs at this pace (200.16 s each) */
    progress_step_t s = {.run = 1, .runs = 2, .epoch = 1, .epochs = 2, .launched = 1300, .done = 1200, .steps = 5004,
                         .gpu_ms = 48000, .host_s = 50, .global_batch = 256};
    progress_step_line(line, sizeof line, &p, &s);
    EXPECT(strcmp(line, "[run 1/2  epoch 1/2] step 1200/5004  6400 images/s  epoch ETA 2m32s  study ETA 12m32s") == 0,
           "step line: %s", line);
    /* an epoch timed (100 s) and a setup (20 s): the study's ETA takes the means; a run's setup still to come */
    progress_setup_done(&p, 20);
    progress_epoch_done(&p, 100);
    s.epoch = 2;
    progress_step_line(line, sizeof line, &p, &s);
    EXPECT(strstr(line, "epoch ETA 2m32s  study ETA 6m12s") != NULL, "152 + 2 x 100 + 20 s: %s", line);
    /* no GPU count: the host's launched steps and clock, said so */
    s.done = -1;
    s.launched = 100, s.host_s = 4;
    progress_step_line(line, sizeof line, &p, &s);
    EXPECT(strstr(line, "step 100/5004  6400 images/s (launched)") != NULL, "host's count: %s", line);
    s.launched = 0;
    progress_step_line(line, sizeof line, &p, &s);
    EXPECT(strstr(line, "? images/s  epoch ETA ?") != NULL, "nothing yet: %s", line);
}

/* The setup's line: k of N layers over the GPUs begun, the searches run; the seconds alone before any layer. */
static void test_setup_line(void) {
    char line[256], full[256], small[40];
    progress_setup_line(line, sizeof line, 3, 8, 10, 1, NULL);
    EXPECT(strcmp(line, "[run 3/8] setup 10 s") == 0, "no counter: %s", line);
    setup_count_now_t c = {0};
    progress_setup_line(line, sizeof line, 3, 8, 10, 2, &c);
    EXPECT(strcmp(line, "[run 3/8] setup 10 s") == 0, "no layer begun: %s", line);
    c = (setup_count_now_t){.layers = 53, .layers_done = 23, .conv_searches = 12, .gpus = 1};
    progress_setup_line(line, sizeof line, 3, 8, 25.4, 1, &c);
    EXPECT(strcmp(line, "[run 3/8] setup 25 s: 23 of 53 layers set up, 12 convolution searches") == 0, "%s", line);
    /* two GPUs, the second not begun: the total covers one, and the line says so */
    c = (setup_count_now_t){.layers = 53, .layers_done = 40, .conv_searches = 1, .gpus = 1};
    progress_setup_line(line, sizeof line, 1, 3, 20, 2, &c);
    EXPECT(strcmp(line, "[run 1/3] setup 20 s: 40 of 53 layers set up on 1 of 2 GPUs, 1 convolution search") == 0,
           "%s", line);
    c = (setup_count_now_t){.layers = 106, .layers_done = 61, .conv_searches = 14, .bn_searches = 3, .gpus = 2};
    progress_setup_line(full, sizeof full, 1, 3, 30, 2, &c);
    EXPECT(strcmp(full, "[run 1/3] setup 30 s: 61 of 106 layers set up on 2 of 2 GPUs, 14 convolution searches, "
                        "3 batch-norm searches") == 0, "%s", full);
    /* a cache that held every algorithm: no search, said as 0 */
    c = (setup_count_now_t){.layers = 53, .layers_done = 53, .gpus = 1};
    progress_setup_line(line, sizeof line, 1, 1, 12, 1, &c);
    EXPECT(strstr(line, "53 of 53 layers set up, 0 convolution searches") != NULL && !strstr(line, "batch-norm"),
           "%s", line);
    /* a buffer too short: cut, terminated, never overrun */
    memset(small, 'x', sizeof small);
    c = (setup_count_now_t){.layers = 106, .layers_done = 61, .conv_searches = 14, .bn_searches = 3, .gpus = 2};
    progress_setup_line(small, 32, 1, 3, 30, 2, &c);
    EXPECT(strlen(small) == 31 && strncmp(small, full, 31) == 0 && small[32] == 'x', "cut: %s", small);
}

int main(void) {
    test_progress();
    test_lines();
    test_setup_line();
    return test_summary();
}
