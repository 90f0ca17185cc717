/* test_resize.c — the gather's two new paths against host references: the bilinear resize (--image-size) of
 * stored images against a CPU double-precision bilinear of PyTorch's definition (itself checked against values
 * F.interpolate prints), in fp32 and bf16, up and down, train (through the permutation) and test rows; and the
 * ImageNet-shaped set generated on the GPU against the same hash on the host. Negative control: the resize must
 * not match the align_corners=True convention. */
#include "engine/check.h"
#include "engine/dataset.h"
#include "engine/rng.h"
#include "gpu_test.h"
#include "bf16_ref.h"
#include <stdint.h>
#include <string.h>
#include "dev_io.h"

/* Pixel values are in [0, 1]: the GPU computes the coordinates and weights in fp32, the reference in double. */
#define TOL_ABS 2e-6

/* PyTorch's upsample_bilinear2d with align_corners=False (align 0), or True (align 1) for the control: one channel. */
static double bilinear_ref(const uint8_t *img, int side, int out, int oy, int ox, int align) {
    double s = align ? (out > 1 ? (double)(side - 1) / (out - 1) : 0.0) : (double)side / out;
    double sy = align ? s * oy : s * (oy + 0.5) - 0.5, sx = align ? s * ox : s * (ox + 0.5) - 0.5;
    if (sy < 0) sy = 0;
    if (sx < 0) sx = 0;
    int y0 = (int)sy, x0 = (int)sx;
    int y1 = y0 < side - 1 ? y0 + 1 : y0, x1 = x0 < side - 1 ? x0 + 1 : x0;
    double ly = sy - y0, lx = sx - x0;
#define P(y, x) ((double)((float)img[(size_t)(y) * side + (x)] / 255.0f))
    return (1 - ly) * ((1 - lx) * P(y0, x0) + lx * P(y0, x1)) + ly * ((1 - lx) * P(y1, x0) + lx * P(y1, x1));
#undef P
}


/* Largest |got - reference| over n gathered rows (rows[i] of split s, resized to out), and whether labels match.
 * bf16: less the rounding to bf16 (at most 2^-8 relative: the GPU rounds its fp32 value, which can sit on the other
 * side of a rounding boundary than the double reference, so the bound and not the rounded reference is compared). */
static double max_diff(const idx_split_t *s, const int *rows, int n, int out, const float *x, const int *y, dtype_t t,
                       int align, int *labels_ok) {
    double worst = 0;
    *labels_ok = 1;
    for (int i = 0; i < n; i++) {
        const uint8_t *img = s->images + (size_t)rows[i] * s->rows * s->cols;
        for (int oy = 0; oy < out; oy++)
            for (int ox = 0; ox < out; ox++) {
                double want = bilinear_ref(img, s->rows, out, oy, ox, align);
                double d = fabs(x[((size_t)i * out + oy) * out + ox] - want);
                if (t == DTYPE_BF16) d = fmax(0.0, d - BF16_U * fabs(want));
                if (!(d <= worst)) worst = d;   /* NaN sticks */
            }
        *labels_ok &= y[i] == s->labels[rows[i]];
    }
    return worst;
}

/* PyTorch 2.x: F.interpolate(torch.tensor([[[[0., 1.], [2., 3.]]]]), size=4, mode="bilinear") prints
 * [[0.00, 0.25, 0.75, 1.00], [0.50, 0.75, 1.25, 1.50], [1.50, 1.75, 2.25, 2.50], [2.00, 2.25, 2.75, 3.00]]. */
static void test_known_values(cudaStream_t st) {
    static const double want[16] = {0.00, 0.25, 0.75, 1.00, 0.50, 0.75, 1.25, 1.50,
                                     1.50, 1.75, 2.25, 2.50, 2.00, 2.25, 2.75, 3.00};
    uint8_t img[4] = {0, 1, 2, 3}, lab[1] = {7};
    idx_dataset_t d;
    memset(&d, 0, sizeof d);
    d.train = (idx_split_t){1, 2, 2, img, lab};
    d.test = d.train;
    d.image = 4;
    double ref_err = 0, gpu_err = 0;
    for (int k = 0; k < 16; k++) ref_err = fmax(ref_err, fabs(255.0 * bilinear_ref(img, 2, 4, k / 4, k % 4, 0) - want[k]));
    dataset_t ds;
    dataset_upload(&ds, &d);
    float *x, h[16];
    int *y, hy = -1;
    CHECK_CUDA(cudaMalloc((void **)&x, sizeof h));
    CHECK_CUDA(cudaMalloc((void **)&y, sizeof(int)));
    dataset_gather_test(&ds, 0, 1, x, DTYPE_FP32, y, st);
    CHECK_CUDA(cudaStreamSynchronize(st));
    download(h, x, 16, DTYPE_FP32);
    CHECK_CUDA(cudaMemcpy(&hy, y, sizeof hy, cudaMemcpyDeviceToHost));
    for (int k = 0; k < 16; k++) gpu_err = fmax(gpu_err, fabs(255.0 * h[k] - want[k]));
    printf("%-4s 2x2 -> 4x4 against F.interpolate's values: reference %.2e, GPU %.2e (x255)\n",
           ref_err < 1e-6 && gpu_err < 1e-4 && hy == 7 ? "ok" : "FAIL", ref_err, gpu_err);
    /* 1e-6: the reference scales by 1/255 in fp32 on its way (measured 1.2e-7 x 255 on an H200). */
    EXPECT(ref_err < 1e-6, "the host bilinear differs from PyTorch's values by %.3e", ref_err);
    EXPECT(gpu_err < 1e-4 && hy == 7, "GPU 2x2 -> 4x4 differs from PyTorch's values by %.3e (label %d)", gpu_err, hy);
    CHECK_CUDA(cudaFree(x));
    CHECK_CUDA(cudaFree(y));
    dataset_free(&ds);
}

static void test_resize(const idx_dataset_t *src, int out, dtype_t t, cudaStream_t st) {
    enum { NB = 16 };
    idx_dataset_t d = *src;
    d.image = out;
    dataset_t ds;
    dataset_upload(&ds, &d);
    size_t n = (size_t)NB * out * out;
    void *x;
    int *y, hy[NB], rows[NB], *perm = malloc((size_t)ds.n_train * sizeof(int));
    float *h = malloc(n * sizeof(float));
    CHECK_CUDA(cudaMalloc(&x, n * sizeof(float)));
    CHECK_CUDA(cudaMalloc((void **)&y, NB * sizeof(int)));
    /* Test rows from the end (the last ones past n_test repeat the last row), then train rows through an epoch's
     * permutation. */
    int first = ds.n_test - NB / 2;
    for (int i = 0; i < NB; i++) rows[i] = first + i < ds.n_test ? first + i : ds.n_test - 1;
    dataset_gather_test(&ds, first, NB, x, t, y, st);
    CHECK_CUDA(cudaStreamSynchronize(st));
    download(h, x, n, t);
    CHECK_CUDA(cudaMemcpy(hy, y, sizeof hy, cudaMemcpyDeviceToHost));
    int lok = 0;
    double e = max_diff(&src->test, rows, NB, out, h, hy, t, 0, &lok);
    double ctrl = max_diff(&src->test, rows, NB, out, h, hy, t, 1, &lok);
    printf("%-4s resize 28 -> %d %s test rows: max |diff| %.2e (align_corners=True control %.2e), labels %s\n",
           e <= TOL_ABS && lok && ctrl > 100 * TOL_ABS ? "ok" : "FAIL", out, dtype_name(t), e, ctrl, lok ? "ok" : "DIFFER");
    EXPECT(e <= TOL_ABS && lok, "resize to %d (%s), test rows: max diff %.3e, labels %d", out, dtype_name(t), e, lok);
    /* Equal sides would make both conventions the identity: every size here differs from 28. */
    EXPECT(ctrl > 100 * TOL_ABS, "resize to %d (%s): the align_corners=True control is not rejected (%.3e)", out,
           dtype_name(t), ctrl);

    dataset_shuffle(&ds, 5, 2, st);
    CHECK_CUDA(cudaMemcpyAsync(perm, ds.perm, (size_t)ds.n_train * sizeof(int), cudaMemcpyDeviceToHost, st));
    int tf = ds.n_train / 3;
    dataset_gather_train(&ds, tf, NB, x, t, y, st);
    CHECK_CUDA(cudaStreamSynchronize(st));
    download(h, x, n, t);
    CHECK_CUDA(cudaMemcpy(hy, y, sizeof hy, cudaMemcpyDeviceToHost));
    e = max_diff(&src->train, perm + tf, NB, out, h, hy, t, 0, &lok);
    printf("%-4s resize 28 -> %d %s shuffled train rows: max |diff| %.2e, labels %s\n", e <= TOL_ABS && lok ? "ok" : "FAIL",
           out, dtype_name(t), e, lok ? "ok" : "DIFFER");
    EXPECT(e <= TOL_ABS && lok, "resize to %d (%s), train rows: max diff %.3e, labels %d", out, dtype_name(t), e, lok);
    CHECK_CUDA(cudaFree(x));
    CHECK_CUDA(cudaFree(y));
    free(h);
    free(perm);
    dataset_free(&ds);
}

/* The generated ImageNet-shaped set: every pixel and label of a gathered batch equals the host's hash, values are
 * uniform in [0, 1) and labels spread over the classes; splits and seeds give different images, and the two pixels
 * of one draw differ. Side 32 takes the 8-elements-a-thread kernel (rows of 3072), side 31 the general one. */
static void test_generated(dtype_t t, int side, cudaStream_t st) {
    enum { NB = 8, CH = 3, CLS = 1000 };
    idx_dataset_t d;
    idx_synthetic_generated(&d, 11, side, CH, CLS);
    EXPECT(d.train.n == 1281167 && d.test.n == 50000 && d.generated && d.synthetic && !d.train.images,
           "generated set: %d/%d images", d.train.n, d.test.n);
    dataset_t ds;
    dataset_upload(&ds, &d);
    size_t per = (size_t)side * side * CH, n = NB * per;
    void *x;
    int *y, hy[NB], *perm = malloc((size_t)ds.n_train * sizeof(int));
    float *h = malloc(n * sizeof(float));
    CHECK_CUDA(cudaMalloc(&x, n * sizeof(float)));
    CHECK_CUDA(cudaMalloc((void **)&y, NB * sizeof(int)));
    dataset_shuffle(&ds, 3, 1, st);
    CHECK_CUDA(cudaMemcpyAsync(perm, ds.perm, (size_t)ds.n_train * sizeof(int), cudaMemcpyDeviceToHost, st));
    for (int split = 0; split < 2; split++) {
        int first = split ? ds.n_test - NB / 2 : ds.n_train - NB;
        if (split) dataset_gather_test(&ds, first, NB, x, t, y, st);
        else dataset_gather_train(&ds, first, NB, x, t, y, st);
        CHECK_CUDA(cudaStreamSynchronize(st));
        download(h, x, n, t);
        CHECK_CUDA(cudaMemcpy(hy, y, sizeof hy, cudaMemcpyDeviceToHost));
        long bad = 0, bad_y = 0;
        double sum = 0, lo = 1, hi = 0;
        for (int i = 0; i < NB; i++) {
            int r = split ? (first + i < ds.n_test ? first + i : ds.n_test - 1) : perm[first + i];
            for (size_t e = 0; e < per; e++) {
                float want = dataset_generated_pixel(11, split, r, (long long)e);
                if (t == DTYPE_BF16) want = bf16_ref_round(want);
                float v = h[i * per + e];
                bad += memcmp(&v, &want, sizeof v) != 0;
                sum += v;
                lo = fmin(lo, v);
                hi = fmax(hi, v);
            }
            bad_y += hy[i] != dataset_generated_label(11, split, r, CLS) || hy[i] < 0 || hy[i] >= CLS;
            bad_y += !split && r != first + i;   /* a generated set keeps the identity order (dataset_shuffle) */
        }
        double mean = sum / (double)n;
        int ok = bad == 0 && bad_y == 0 && fabs(mean - 0.5) < 0.01 && lo >= 0 && hi <= 1;
        printf("%-4s generated %dx%d %s %s rows: %ld pixels and %ld labels differ from the host; mean %.4f, "
               "range [%.4f, %.4f]\n", ok ? "ok" : "FAIL", side, side, dtype_name(t), split ? "test" : "train", bad,
               bad_y, mean, lo, hi);
        EXPECT(ok, "generated side %d %s split %d: %ld pixels, %ld labels differ; mean %.4f", side, dtype_name(t),
               split, bad, bad_y, mean);
    }
    /* Host-side properties of the hash: labels cover the classes, seeds and splits decorrelate. */
    int seen[CLS] = {0}, distinct = 0, same_seed = 0, same_split = 0, same_pair = 0;
    for (int r = 0; r < 20000; r++) seen[dataset_generated_label(11, 0, r, CLS)]++;
    for (int c = 0; c < CLS; c++) distinct += seen[c] > 0;
    for (int e = 0; e < 1000; e++) {
        same_seed += dataset_generated_pixel(11, 0, 5, e) == dataset_generated_pixel(12, 0, 5, e);
        same_split += dataset_generated_pixel(11, 0, 5, e) == dataset_generated_pixel(11, 1, 5, e);
        same_pair += dataset_generated_pixel(11, 0, 5, 2 * e) == dataset_generated_pixel(11, 0, 5, 2 * e + 1);
    }
    EXPECT(distinct == CLS && same_seed < 5 && same_split < 5 && same_pair < 5, "labels cover %d of %d classes; "
           "%d/%d/%d of 1000 pixels equal across seeds/splits/a draw's two halves", distinct, CLS, same_seed,
           same_split, same_pair);
    CHECK_CUDA(cudaFree(x));
    CHECK_CUDA(cudaFree(y));
    free(h);
    free(perm);
    dataset_free(&ds);
}

int main(void) {
    gpu_test_require(1);
    CHECK_CUDA(cudaSetDevice(0));
    cudaStream_t st;
    CHECK_CUDA(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    test_known_values(st);
    idx_dataset_t d;
    char err[512];
    if (idx_load_dataset(DATA_ROOT "/fashion-mnist", &d, err, sizeof err) != 0) {
        EXPECT(0, "%s (scripts/setup.sh places the data); continuing on synthetic data", err);
        idx_synthetic(&d, 1);
    }
    static const int sizes[] = {96, 224, 20, 41};   /* up (d2l's 96, ImageNet's 224), down, odd */
    for (int i = 0; i < 4; i++) {
        test_resize(&d, sizes[i], DTYPE_FP32, st);
        test_resize(&d, sizes[i], DTYPE_BF16, st);
    }
    idx_free(&d);
    for (int side = 31; side <= 32; side++) {
        test_generated(DTYPE_FP32, side, st);
        test_generated(DTYPE_BF16, side, st);
    }
    CHECK_CUDA(cudaStreamDestroy(st));
    return test_summary();
}
