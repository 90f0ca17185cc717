/* test_models.c — the models as built on the host (no GPU: building only computes shapes): ResNet-50 and
 * ResNet-101 have torchvision's parameter counts, output shapes and multiply-adds; the model table agrees with the
 * builders and the option list; pipeline cut points where one tensor crosses are exactly a bottleneck network's
 * block boundaries, and with the shortcut crossing too every boundary inside a block; a split inside a block passes,
 * two in one block are refused (the stage between would pass the shortcut through), a cut between a convolution and
 * the batch norm that folds its bias is refused; balancing a fixture cost table over 2..8 stages cuts only at valid
 * points, and ResNet-50 on 8 stages, which block cuts cannot balance (1.16 x the mean stage by multiply-adds), is
 * balanced to the layers' granularity by cuts inside blocks (1.056). */
#include "engine/model.h"
#include "engine/model_info.h"
#include "bench/options.h"
#include "strategies/pipeline/partition.h"
#include "test.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static model_t *build(const char *name, int batch, model_input_t in) {
    model_t *m = calloc(1, sizeof *m);
    EXPECT(m && model_build_input(m, name, batch, in) == 0, "build %s", name);
    return m;
}

/* torchvision 0.2x: sum(p.numel() for p in resnet50().parameters()) and the GFLOPS column of its model table
 * (multiply-adds of one 224x224 forward through convolutions and the dense layer). */
static void test_torchvision_numbers(void) {
    static const struct { const char *name; size_t params; double gmac; } want[] = {
        {"resnet50", 25557032, 4.09},
        {"resnet101", 44549160, 7.80},
    };
    for (int i = 0; i < 2; i++) {
        model_t *m = build(want[i].name, 2, (model_input_t){0, 0, 0});
        size_t p = model_param_count(m);
        double gmac = model_macs_per_image(m) / 1e9;
        printf("%s: %zu parameters, %.4f GMAC, %d layers, flat buffer %zu floats\n", want[i].name, p, gmac,
               m->n_layers, m->n_params);
        EXPECT(p == want[i].params, "%s: %zu parameters, torchvision has %zu", want[i].name, p, want[i].params);
        EXPECT(fabs(gmac - want[i].gmac) < 0.01 * want[i].gmac, "%s: %.4f GMAC, torchvision says %.2f", want[i].name,
               gmac, want[i].gmac);
        shape_t in = m->tensors[m->input].shape, out = m->tensors[m->logits].shape;
        EXPECT(in.n == 2 && in.h == 224 && in.w == 224 && in.c == 3, "%s input (%d, %d, %d, %d)", want[i].name, in.n,
               in.h, in.w, in.c);
        EXPECT(out.n == 2 && out.h == 1 && out.w == 1 && out.c == 1000, "%s logits (%d, %d, %d, %d)", want[i].name,
               out.n, out.h, out.w, out.c);
        EXPECT(m->classes == 1000, "%s classes %d", want[i].name, m->classes);
        /* The last stage works on 7x7 maps of 2048 channels at 224, as torchvision's. */
        shape_t gap_in = m->layers[m->n_layers - 2].in_shape[0];
        EXPECT(gap_in.h == 7 && gap_in.w == 7 && gap_in.c == 2048, "%s: gap input %dx%dx%d", want[i].name, gap_in.h,
               gap_in.w, gap_in.c);
        free(m);
    }
}

/* One channel and 10 classes (Fashion-MNIST resized to 96): only the stem and the head change. */
static void test_other_input(void) {
    model_t *a = build("resnet50", 4, (model_input_t){0, 0, 0});
    model_t *b = build("resnet50", 4, (model_input_t){96, 1, 10});
    size_t want = model_param_count(a) - 64 * 49 * 2 - 2048 * 990 - 990;
    EXPECT(model_param_count(b) == want, "resnet50 1x96x96, 10 classes: %zu parameters, want %zu",
           model_param_count(b), want);
    shape_t in = b->tensors[b->input].shape, g = b->layers[b->n_layers - 2].in_shape[0];
    EXPECT(in.h == 96 && in.c == 1 && g.h == 3 && g.w == 3, "resnet50 at 96: input %dx%dx%d, last map %dx%d", in.h,
           in.w, in.c, g.h, g.w);
    /* The smallest side the table allows still leaves a 1x1 map; LeNet's table entry is what its builder takes. */
    model_t *c = build("resnet101", 2, (model_input_t){model_info("resnet101")->stride, 3, 1000});
    g = c->layers[c->n_layers - 2].in_shape[0];
    EXPECT(g.h == 1 && g.w == 1, "resnet101 at its smallest side: last map %dx%d", g.h, g.w);
    model_t *d = build("resnet18", 2, (model_input_t){model_info("resnet18")->stride, 1, 10});
    g = d->layers[d->n_layers - 2].in_shape[0];
    EXPECT(g.h == 1 && g.w == 1, "resnet18 at its smallest side: last map %dx%d", g.h, g.w);
    free(a); free(b); free(c); free(d);
}

static void test_table(void) {
    int n = 0;
    for (int i = 0; model_infos[i].name; i++, n++) {
        const model_info_t *mi = &model_infos[i];
        EXPECT(model_info(mi->name) == mi, "model_info(%s)", mi->name);
        int listed = 0;
        for (int k = 0; options_models[k]; k++) listed |= strcmp(options_models[k], mi->name) == 0;
        EXPECT(listed, "%s is in the model table but not in options_models", mi->name);
        if (model_info_lm(mi)) {   /* a language model is no graph of layers: the builders refuse it */
            model_t *lm = calloc(1, sizeof *lm);
            EXPECT(lm && model_build_input(lm, mi->name, 1, (model_input_t){0, 0, 0}) == -1 && mi->size &&
                   model_info_context(mi, mi->size) > 0, "%s: a language model, of sizes", mi->name);
            free(lm);
            continue;
        }
        model_t *m = build(mi->name, 1, (model_input_t){0, 0, 0});
        shape_t in = m->tensors[m->input].shape;
        EXPECT(in.h == mi->image && in.c == mi->synth_channels && m->classes == mi->synth_classes,
               "%s: default build %dx%dx%d, %d classes; the table says %d, %d, %d", mi->name, in.c, in.h, in.w,
               m->classes, mi->image, mi->synth_channels, mi->synth_classes);
        EXPECT(m->n_layers <= MODEL_MAX_LAYERS, "%s: %d layers", mi->name, m->n_layers);
        free(m);
    }
    int k = 0;
    while (options_models[k]) k++;
    EXPECT(k == n, "options_models has %d names, the model table %d", k, n);
    EXPECT(model_info("vgg16") == NULL, "unknown model found");
}

/* Cut points of a bottleneck network: the stem's boundaries, every block's first layer, gap and fc; nothing inside a
 * block (its input is read again by the projection or the residual add). */
/* Whether layers [first, end) may form a stage (partition_t's stage_ok over model_spans_t), and the same through the
 * model's own check (the two must agree). */
static int stage_ok(const void *ctx, int first, int end) { return model_spans_stage_valid(ctx, first, end, NULL); }

static void test_cuts(const char *name) {
    model_t *m = build(name, 1, (model_input_t){0, 0, 0});
    int cuts[MODEL_MAX_LAYERS], fine[MODEL_MAX_LAYERS];
    int n = model_cut_points(m, 1, cuts), n_fine = model_cut_points(m, MODEL_MAX_CROSS, fine);
    int blocks = 0, bad = 0;
    model_spans_t *spans = malloc(sizeof *spans);
    model_spans(m, spans);
    int disagree = 0;   /* the spans' check and the model's, on every range of cut points */
    for (int a = 0; a < n_fine; a += 7)
        for (int b = a + 1; b < n_fine; b += 5)
            disagree += stage_ok(spans, fine[a], fine[b]) != model_stage_valid(m, fine[a], fine[b], NULL);
    EXPECT(disagree == 0, "%s: %d ranges where model_spans_stage_valid and model_stage_valid disagree", name,
           disagree);
    char is_cut[MODEL_MAX_LAYERS] = {0};
    for (int i = 0; i < n; i++) is_cut[cuts[i]] = 1;
    for (int i = 1; i < m->n_layers; i++) {
        const char *lb = m->layers[i].label;
        int block_start = strlen(lb) > 6 && strcmp(lb + strlen(lb) - 6, ".conv1") == 0;
        int want = block_start || strncmp(lb, "stem.", 5) == 0 || strcmp(lb, "gap") == 0 || strcmp(lb, "fc") == 0;
        blocks += block_start;
        if (want != is_cut[i]) {
            bad++;
            printf("%s: layer %d (%s) is %sa cut point\n", name, i, lb, is_cut[i] ? "" : "not ");
        }
    }
    EXPECT(bad == 0, "%s: %d layers where cut points and block boundaries differ", name, bad);
    EXPECT(n == blocks + 4, "%s: %d cut points for %d blocks", name, n, blocks);
    /* With the shortcut crossing beside the branch, every boundary is one (no biases, so no folds). */
    EXPECT(n_fine == m->n_layers - 1, "%s: %d cut points inside and between blocks, want %d", name, n_fine,
           m->n_layers - 1);
    int two = 0;
    for (int i = 0; i < n_fine; i++) two += model_crossing(m, fine[i], NULL, 0) == 2;
    EXPECT(two == n_fine - n, "%s: %d cuts with two tensors crossing, want %d", name, two, n_fine - n);
    /* A hand split at a block start passes, and one inside a block; two inside one block name the stage between. */
    char err[512] = "";
    int first_block = -1, inside = -1;
    for (int i = 0; i < m->n_layers && inside < 0; i++)
        if (first_block >= 0 && strstr(m->layers[i].label, ".conv2")) inside = i;
        else if (strstr(m->layers[i].label, ".conv1")) first_block = i;
    int split_ok[1] = {first_block}, split_in[1] = {inside}, split_twice[2] = {inside, inside + 1};
    EXPECT(model_split_check(name, split_ok, 1, err, sizeof err) == 0, "%s: split at %d: %s", name, first_block, err);
    EXPECT(model_split_check(name, split_in, 1, err, sizeof err) == 0, "%s: split inside a block at %d: %s", name,
           inside, err);
    EXPECT(model_split_check(name, split_twice, 2, err, sizeof err) == -1 && strstr(err, "stage 2 (layers") &&
               strstr(err, "through unread") && strstr(err, ".conv2") && !strchr(err, '\n'),
           "%s: two splits inside one block (layers %d, %d): \"%s\"", name, inside, inside + 1, err);

    /* Fixture cost table: each layer's forward multiply-adds (+1 for the memory-bound layers), balanced over 2..8
     * stages: every stage starts at a cut, and the slowest stage is no worse than an even share plus the largest
     * block (what cutting only at block boundaries can cost). */
    double cost[MODEL_MAX_LAYERS], total = 0;
    for (int i = 0; i < m->n_layers; i++) {
        const layer_t *l = &m->layers[i];
        cost[i] = 1e-6 + (l->ops == &layer_conv_ops ? (double)shape_per_sample(l->out_shape) * l->cfg.k * l->cfg.k *
                                                          l->in_shape[0].c / 1e6 : 0.0);
        total += cost[i];
    }
    double block_max = 0;
    for (int i = 0; i <= n; i++) {
        int a = i ? cuts[i - 1] : 0, b = i < n ? cuts[i] : m->n_layers;
        double c = 0;
        for (int j = a; j < b; j++) c += cost[j];
        if (c > block_max) block_max = c;
    }
    for (int p = 2; p <= 8; p++) {
        int starts[8];
        partition_t pb = {.cost = cost, .n_layers = m->n_layers, .cuts = cuts, .n_cuts = n, .micro = 8};
        EXPECT(partition_balance(&pb, p, starts, err, sizeof err) == 0, "%s %d stages: %s", name, p, err);
        double worst = 0;
        for (int k = 0; k < p; k++) {
            EXPECT(k == 0 ? starts[k] == 0 : is_cut[starts[k]], "%s %d stages: stage %d starts at %d, not a cut",
                   name, p, k, starts[k]);
            double c = partition_stage_cost(cost, m->n_layers, starts, p, k);
            if (c > worst) worst = c;
        }
        EXPECT(worst <= total / p + block_max, "%s %d stages: slowest %.1f > %.1f even + %.1f block", name, p, worst,
               total / p, block_max);
        /* Cuts inside blocks, each stage valid (a block cut at most once), never worse. */
        double blocks_only = partition_imbalance(cost, m->n_layers, starts, p);
        pb.cuts = fine, pb.n_cuts = n_fine, pb.stage_ok = stage_ok, pb.ctx = spans;
        EXPECT(partition_balance(&pb, p, starts, err, sizeof err) == 0, "%s %d stages inside blocks: %s", name, p, err);
        double finer = partition_imbalance(cost, m->n_layers, starts, p);
        char sp[128];
        partition_format(starts, p, sp, sizeof sp);
        EXPECT(finer <= blocks_only + 1e-12 && model_split_valid(m, starts, p, err, sizeof err) == 0,
               "%s %d stages: inside blocks %.3f vs blocks %.3f, split %s: %s", name, p, finer, blocks_only, sp, err);
        if (strcmp(name, "resnet50") == 0 && p == 8) {
            printf("resnet50, 8 stages, multiply-adds: block cuts max/mean %.3f, cuts inside blocks %.3f (%s)\n",
                   blocks_only, finer, sp);
            /* By multiply-adds alone a 3x3 convolution is a fifth of a stage: layer granularity allows 1.056. */
            EXPECT(blocks_only > 1.10 && finer <= 1.06, "resnet50 on 8 stages: blocks %.3f (want > 1.10: the case for "
                   "cuts inside blocks), inside %.3f (want <= 1.06)", blocks_only, finer);
        }
    }
    free(spans);
    free(m);
}

/* The d2l ResNet-18's projection carries a bias its block's batch norm folds: the boundary between them is no cut. */
static void test_fold_cut(void) {
    model_t *m = build("resnet18", 1, (model_input_t){0, 0, 0});
    int fine[MODEL_MAX_LAYERS], n = model_cut_points(m, MODEL_MAX_CROSS, fine), bn2 = -1;
    for (int i = 0; i < m->n_layers && bn2 < 0; i++)
        if (m->layers[i].fold_from) bn2 = i;
    int found = 0;
    for (int i = 0; i < n; i++) found |= fine[i] == bn2;
    EXPECT(bn2 > 0 && !found && strcmp(m->layers[bn2 - 1].label, "s2.b0.proj") == 0,
           "resnet18: layer %d (%s) folds a bias, is %sa cut", bn2, bn2 >= 0 ? m->layers[bn2].label : "?",
           found ? "" : "not ");
    char err[512] = "";
    int split[1] = {bn2};
    EXPECT(model_split_check("resnet18", split, 1, err, sizeof err) == -1 &&
               strstr(err, "s2.b0.bn2) is not a valid cut"),
           "resnet18 --split %d: \"%s\"", bn2, err);
    free(m);
}

/* --image-size and the models through the option parser and validation. */
static void test_options(void) {
    options_t o;
    char err[512];
    char *a1[] = {"scaling", "--model", "resnet50"};
    EXPECT(options_parse(&o, 3, a1, err, sizeof err) == 0, "%s", err);
    EXPECT(o.batch[0] == 256 && o.n_batch == 1 && o.image_size == 224 && o.init == INIT_KAIMING,
           "resnet50 defaults: batch %d, image %d, init %s", o.batch[0], o.image_size, init_name(o.init));
    EXPECT(options_validate(&o, NULL, -1, err, sizeof err) == 0, "%s", err);
    char *a2[] = {"scaling", "--model", "resnet101", "--image-size", "96", "--batch", "64"};
    EXPECT(options_parse(&o, 7, a2, err, sizeof err) == 0 && o.image_size == 96 && o.batch[0] == 64, "%s", err);
    EXPECT(options_validate(&o, NULL, -1, err, sizeof err) == 0, "%s", err);
    char *a3[] = {"scaling", "--model", "resnet101"};
    EXPECT(options_parse(&o, 3, a3, err, sizeof err) == 0 && o.batch[0] == 128, "resnet101 batch %d", o.batch[0]);
    char *a4[] = {"scaling", "--model", "lenet"};
    EXPECT(options_parse(&o, 3, a4, err, sizeof err) == 0 && o.image_size == 28 && o.init == INIT_XAVIER &&
               o.batch[0] == 256 && options_validate(&o, NULL, -1, err, sizeof err) == 0,
           "lenet defaults: %s", err);
    static const struct { int argc; char *argv[8]; const char *msg; } bad[] = {
        {5, {"scaling", "--model", "resnet50", "--image-size", "0"}, "--image-size: \"0\" is not a positive integer"},
        {5, {"scaling", "--model", "resnet50", "--image-size", "-3"}, "--image-size: \"-3\" is not a positive integer"},
        {5, {"scaling", "--model", "resnet50", "--image-size", "9x"}, "--image-size: \"9x\" is not a positive integer"},
        {5, {"scaling", "--model", "resnet50", "--image-size", "31"},
         "--image-size 31 is too small for resnet50: it down-samples 32-fold, so its last feature map would be smaller "
         "than 1x1 (at least 32)"},
        {5, {"scaling", "--model", "resnet18", "--image-size", "7"}, "--image-size 7 is too small for resnet18"},
        {5, {"scaling", "--model", "lenet", "--image-size", "96"},
         "--image-size 96: model lenet has a fixed 28x28 input"},
        {5, {"scaling", "--model", "resnet50", "--image-size", "513"}, "--image-size 513 is larger than 512"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int rc = options_parse(&o, bad[i].argc, (char **)bad[i].argv, err, sizeof err);
        if (rc == 0) rc = options_validate(&o, NULL, -1, err, sizeof err);
        EXPECT(rc == 2 && strstr(err, bad[i].msg) && !strchr(err, '\n'), "%s %s: rc %d, \"%s\", want \"%s\"",
               bad[i].argv[3], bad[i].argv[4], rc, err, bad[i].msg);
    }
    /* --help lists every model with its default batch and image size. */
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    options_usage(f, "scaling");
    fclose(f);
    EXPECT(strstr(buf, "--image-size N") != NULL, "--help lacks --image-size");
    for (int i = 0; model_infos[i].name; i++) {
        char line[64];
        snprintf(line, sizeof line, model_info_lm(&model_infos[i]) ? "  %-10s batch %-4d sequences" :
                 "  %-10s batch %-4d image %d", model_infos[i].name, model_infos[i].batch, model_infos[i].image);
        EXPECT(strstr(buf, line) != NULL, "--help lacks \"%s\"", line);
    }
    free(buf);
}

int main(void) {
    test_torchvision_numbers();
    test_other_input();
    test_table();
    test_cuts("resnet50");
    test_cuts("resnet101");
    test_fold_cut();
    test_options();
    return test_summary();
}
