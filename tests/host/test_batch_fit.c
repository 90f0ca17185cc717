/* test_batch_fit.c — the critical-batch fit (report/batch.c) on synthetic curves with a known answer: exact steps of
 * S = S_min + E_min / B, the same with a known perturbation, a curve that never flattens and one that does not fall
 * (no critical batch inside the batches run, said so rather than a number); then REPORT.md's section on a study
 * written here: the curve of single's runs, and the projected time to target of an nccl configuration that ran no
 * training to the target (inside the fitted batches only). */
#include "report/report.h"
#include "strategies/strategy_info.h"
#include "test.h"

#include <string.h>
#include <unistd.h>

/* single at batch b (lr 0.1 at 256, grown linearly), reaching 93 % (target 92 %) at epoch e of e epochs, 1 s an epoch;
 * steps per epoch 60000 / b. */
static void single_run(FILE *f, int id, int b, int e) {
    for (int k = 1; k <= e; k++)
        fprintf(f, "s%d,2026-01-05T08:00:00Z,single,resnet18,fashion-mnist,1,1,%d,%d,%g,bf16,%d,%d,%s,1.0,%d,%.4f,"
                   "%.4f,ok,0.92,cosine,sgd,2,linear,256\n", id, b, b, 0.1 * b / 256, 60000 / b, k,
                k == 1 ? "warmup" : "steady",
                60000 / b * b, 1000.0 / (60000 / b), k == e ? 0.93 : 0.5);
}

static void test_section(void) {
    char dir[] = "/tmp/test_batch_fit.XXXXXX", path[600];
    EXPECT(mkdtemp(dir) != NULL, "mkdtemp");
    snprintf(path, sizeof path, "%s/study.csv", dir);
    FILE *f = fopen(path, "w");
    EXPECT(f != NULL, "%s", path);
    if (!f) return;
    fputs("run_id,timestamp,strategy,model,dataset,seed,gpus,global_batch,per_gpu_batch,lr,math,steps,epoch,phase,"
          "epoch_s,images_per_s,step_ms,test_acc,status,target_acc,lr_schedule,optimizer,warmup_epochs,lr_scaling,"
          "lr_base_batch\n", f);
    /* steps to target 5 x 234, 6 x 117, 9 x 58, 16 x 29: 1170, 702, 522, 464 */
    single_run(f, 1, 256, 5), single_run(f, 2, 512, 6), single_run(f, 3, 1024, 9), single_run(f, 4, 2048, 16);
    /* nccl on 2 GPUs at 1024 and 4096, 3 ms a step, no target (a throughput sweep) */
    for (int b = 1024; b <= 4096; b *= 4)
        for (int k = 1; k <= 2; k++)
            fprintf(f, "n%d,2026-01-05T08:00:00Z,nccl,resnet18,fashion-mnist,1,2,%d,%d,0.1,bf16,%d,%d,%s,1.0,1,3.0,,"
                       "ok,,,,,,\n", b, b, b / 2, 60000 / b, k, k == 1 ? "warmup" : "steady");
    fclose(f);
    const strategy_info_t *infos[16];
    strategy_infos(infos, 16);
    report_t *r = calloc(1, sizeof *r);
    char err[600];
    EXPECT(study_load(&r->st, path, infos, err, sizeof err) == 0, "load: %s", err);
    char *text = NULL;
    size_t len = 0;
    FILE *md = open_memstream(&text, &len);
    report_batch_section(r, md, 0);
    fclose(md);
    /* the fit over 1/B (least squares by hand on these points): S_min 328.6, E_min 210,748: B_crit 641.3 */
    double b[4] = {256, 512, 1024, 2048}, s[4] = {1170, 702, 522, 464};
    batch_fit_t fit;
    report_batch_fit(b, s, 4, &fit);
    double se, at = report_batch_steps(&fit, 1024, &se);
    char want[160];
    snprintf(want, sizeof want, "| nccl | 2 | 1024 | 3.000 | %.0f ± %.0f | %.2f ± %.2f (projected) |", at, se,
             at * 3 / 1000, se * 3 / 1000);
    EXPECT(fit.ok && fabs(fit.bcrit - 641.3) < 0.5, "B_crit %g", fit.bcrit);
    /* at 1024: 328.6 + 210,748 / 1024 = 534.4 steps, by hand */
    EXPECT(fabs(at - 534.4) < 0.1, "projected steps at 1024: %g", at);
    EXPECT(text && strstr(text, "critical batch B_crit = E_min / S_min = ") && strstr(text, want),
           "section with the projection row %s:\n%s", want, text);
    EXPECT(text && !strstr(text, "| nccl | 2 | 4096 |"), "4096 lies past the fitted batches: not projected");
    EXPECT(text && !strstr(text, "| single | 1 | 512 |"), "a configuration that measured its time is not projected");
    free(text);
    study_free(&r->st);
    free(r);
    snprintf(path, sizeof path, "rm -rf '%s'", dir);
    if (system(path) != 0) fprintf(stderr, "could not remove %s\n", dir);
}

int main(void) {
    const double b[5] = {256, 512, 1024, 2048, 4096};
    double s[5];
    batch_fit_t f;
    for (int i = 0; i < 5; i++) s[i] = 1000 + 512000 / b[i];   /* S_min 1000, E_min 512000: B_crit 512 */
    EXPECT(report_batch_fit(b, s, 5, &f) == 0 && f.ok && fabs(f.smin - 1000) < 1e-6 && fabs(f.emin - 512000) < 1e-3 &&
               fabs(f.bcrit - 512) < 1e-6 && f.se < 1e-6 && fabs(f.r2 - 1) < 1e-12,
           "exact curve: S_min %g, E_min %g, B_crit %g (se %g, R2 %g)", f.smin, f.emin, f.bcrit, f.se, f.r2);
    const double wiggle[5] = {1.03, 0.97, 1.02, 0.99, 1.01};
    for (int i = 0; i < 5; i++) s[i] *= wiggle[i];
    EXPECT(report_batch_fit(b, s, 5, &f) == 0 && f.ok && fabs(f.bcrit - 512) < 0.15 * 512 && f.se > 0 && f.r2 < 1,
           "perturbed by up to 3 %%: B_crit %g ± %g", f.bcrit, f.se);
    for (int i = 0; i < 5; i++) s[i] = 512000 / b[i];   /* perfect scaling: no flattening seen */
    EXPECT(report_batch_fit(b, s, 5, &f) == 0 && !f.ok && f.emin > 0 && isnan(f.bcrit),
           "steps that halve with each doubling: no critical batch below 4096 (S_min %g)", f.smin);
    for (int i = 0; i < 5; i++) s[i] = 700;   /* flat from the start */
    EXPECT(report_batch_fit(b, s, 5, &f) == 0 && !f.ok && isnan(f.bcrit), "flat steps: no critical batch above 256");
    EXPECT(report_batch_fit(b, s, 1, &f) == -1, "one batch fits nothing");
    test_section();
    return test_summary();
}
