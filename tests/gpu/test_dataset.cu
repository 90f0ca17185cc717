/* test_dataset.cu — the GPU-resident data set against a host computation of the same thing: normalisation,
 * the seeded per-epoch permutation, and train/test gathers must match byte / 255 at the same indices exactly. */
#include "engine/check.h"
#include "engine/dataset.h"
#include "engine/rng.h"
#include "gpu_test.h"
#include "bf16_ref.h"
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#define SEED 7ull

/* Bitwise equality: the GPU and the host both divide by 255 in IEEE float, so there is no tolerance. */
static int same_float(float a, float b) { return memcmp(&a, &b, sizeof a) == 0; }

static void host_perm(int *p, int n, unsigned long long seed, int epoch) {
    rng_t r;
    rng_seed(&r, seed * 1000003ull + (unsigned long long)epoch);   /* the formula documented in dataset.h */
    rng_permutation(&r, p, n);
}

static void read_perm(const dataset_t *ds, int *p, cudaStream_t s) {
    CHECK_CUDA(cudaMemcpyAsync(p, ds->perm, (size_t)ds->n_train * sizeof(int), cudaMemcpyDeviceToHost, s));
    CHECK_CUDA(cudaStreamSynchronize(s));
}

/* Compares a gathered batch (already on the host, as floats) with rows[i] of split s; returns the number of
 * mismatches. bf16: the gather's output must be byte / 255 rounded to nearest even. */
static long compare_batch(const idx_split_t *s, const int *rows, int n, const float *x, const int *y, int bf16) {
    long bad = 0;
    int pix = s->rows * s->cols;
    for (int i = 0; i < n; i++) {
        const uint8_t *src = s->images + (size_t)rows[i] * pix;
        for (int k = 0; k < pix; k++) {
            float want = (float)src[k] / 255.0f;
            bad += !same_float(x[(size_t)i * pix + k], bf16 ? bf16_ref_round(want) : want);
        }
        bad += y[i] != s->labels[rows[i]];
    }
    return bad;
}

/* Gathers n train rows from `first` into x_dev + offset elements of type t (offset 1 exercises the unaligned
 * path), and compares them with the host's. */
static void check_train_gather(const dataset_t *ds, const idx_split_t *s, const int *perm, int first, int n,
                               int offset, dtype_t t, void *x_dev, int *y_dev, float *x, int *y, cudaStream_t st,
                               const char *what) {
    size_t count = (size_t)n * ds->pixels, esz = dtype_size(t);
    char *dst = (char *)x_dev + offset * esz;
    dataset_gather_train(ds, first, n, dst, t, y_dev, st);
    CHECK_CUDA(cudaMemcpyAsync(x, dst, count * esz, cudaMemcpyDeviceToHost, st));
    CHECK_CUDA(cudaMemcpyAsync(y, y_dev, (size_t)n * sizeof(int), cudaMemcpyDeviceToHost, st));
    CHECK_CUDA(cudaStreamSynchronize(st));
    if (t == DTYPE_BF16)   /* widen in place, from the end: bf16 element k sits in the first half of the buffer */
        for (size_t k = count; k-- > 0;) x[k] = bf16_ref_widen(((const unsigned short *)x)[k]);
    long bad = compare_batch(s, perm + first, n, x, y, t == DTYPE_BF16);
    EXPECT(bad == 0, "%s (%s): %ld values differ from the host (first %d, n %d, offset %d)", what, dtype_name(t), bad,
           first, n, offset);
}

static void check_test_gather(const dataset_t *ds, const idx_split_t *s, int first, int n, float *x_dev,
                              int *y_dev, float *x, int *y, cudaStream_t st) {
    dataset_gather_test(ds, first, n, x_dev, DTYPE_FP32, y_dev, st);
    CHECK_CUDA(cudaMemcpyAsync(x, x_dev, (size_t)n * ds->pixels * sizeof(float), cudaMemcpyDeviceToHost, st));
    CHECK_CUDA(cudaMemcpyAsync(y, y_dev, (size_t)n * sizeof(int), cudaMemcpyDeviceToHost, st));
    CHECK_CUDA(cudaStreamSynchronize(st));
    int *rows = (int *)malloc((size_t)n * sizeof(int));
    for (int i = 0; i < n; i++) rows[i] = first + i < s->n ? first + i : s->n - 1;   /* the documented clamp */
    long bad = compare_batch(s, rows, n, x, y, 0);
    EXPECT(bad == 0, "gather_test first %d n %d: %ld values differ", first, n, bad);
    free(rows);
}

/* Holds the stream so that copies queued behind it are still pending when the next shuffle is called. */
static void CUDART_CB stall_stream(void *) { usleep(100 * 1000); }

static int is_permutation(const int *p, int n) {
    char *seen = (char *)calloc((size_t)n, 1);
    int ok = 1;
    for (int i = 0; i < n && ok; i++) {
        ok = p[i] >= 0 && p[i] < n && !seen[p[i]];
        if (ok) seen[p[i]] = 1;
    }
    free(seen);
    return ok;
}

static int count_differing(const int *a, const int *b, int n) {
    int d = 0;
    for (int i = 0; i < n; i++) d += a[i] != b[i];
    return d;
}

int main(void) {
    gpu_test_require(1);
    CHECK_CUDA(cudaSetDevice(0));

    /* Missing data is a failure, not a skip; synthetic data keeps the remaining checks meaningful. */
    idx_dataset_t d;
    char err[1024] = "";
    if (idx_load_dataset(DATA_ROOT "/fashion-mnist", &d, err, sizeof err) != 0) {
        EXPECT(0, "%s (scripts/setup.sh places the data); continuing on synthetic data", err);
        idx_synthetic(&d, 1);
    }
    const idx_split_t *tr = &d.train, *te = &d.test;

    dataset_t ds;
    dataset_upload(&ds, &d);
    EXPECT(ds.n_train == tr->n && ds.n_test == te->n && ds.pixels == 784, "sizes %d %d %d", ds.n_train, ds.n_test,
           ds.pixels);
    int dev = -1;
    CHECK_CUDA(cudaGetDevice(&dev));
    EXPECT(ds.device == dev, "device %d, current %d", ds.device, dev);

    cudaStream_t st;
    CHECK_CUDA(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    int n = ds.n_train;
    int *p0 = (int *)malloc((size_t)n * sizeof(int)), *p1 = (int *)malloc((size_t)n * sizeof(int));
    int *ref = (int *)malloc((size_t)n * sizeof(int));

    /* The whole upload, every value: normalisation and labels. */
    {
        size_t nx = (size_t)n * ds.pixels;
        float *x = (float *)malloc(nx * sizeof(float));
        int *y = (int *)malloc((size_t)n * sizeof(int));
        CHECK_CUDA(cudaMemcpy(x, ds.train_x, nx * sizeof(float), cudaMemcpyDeviceToHost));
        CHECK_CUDA(cudaMemcpy(y, ds.train_y, (size_t)n * sizeof(int), cudaMemcpyDeviceToHost));
        long bad = 0;
        for (size_t i = 0; i < nx; i++) bad += !same_float(x[i], (float)tr->images[i] / 255.0f);
        for (int i = 0; i < n; i++) bad += y[i] != tr->labels[i];
        EXPECT(bad == 0, "uploaded train set: %ld values differ from byte / 255", bad);
        float lo = 1, hi = 0;
        for (size_t i = 0; i < nx; i++) { lo = x[i] < lo ? x[i] : lo; hi = x[i] > hi ? x[i] : hi; }
        EXPECT(lo == 0.0f && hi == 1.0f, "train_x spans [%g, %g], expected [0, 1]", lo, hi);
        size_t tx = (size_t)ds.n_test * ds.pixels;
        CHECK_CUDA(cudaMemcpy(x, ds.test_x, tx * sizeof(float), cudaMemcpyDeviceToHost));
        CHECK_CUDA(cudaMemcpy(y, ds.test_y, (size_t)ds.n_test * sizeof(int), cudaMemcpyDeviceToHost));
        bad = 0;
        for (size_t i = 0; i < tx; i++) bad += !same_float(x[i], (float)te->images[i] / 255.0f);
        for (int i = 0; i < ds.n_test; i++) bad += y[i] != te->labels[i];
        EXPECT(bad == 0, "uploaded test set: %ld values differ", bad);
        free(x);
        free(y);
    }

    /* Before any shuffle the order is the identity. */
    read_perm(&ds, p0, st);
    int ident = 1;
    for (int i = 0; i < n; i++) ident &= p0[i] == i;
    EXPECT(ident, "perm before the first shuffle is not the identity");

    /* Shuffle: a permutation, the documented (seed, epoch) formula, reproducible, and new each epoch. */
    dataset_shuffle(&ds, SEED, 0, st);
    read_perm(&ds, p0, st);
    EXPECT(is_permutation(p0, n), "epoch 0 perm is not a permutation of 0..%d", n - 1);
    host_perm(ref, n, SEED, 0);
    EXPECT(count_differing(p0, ref, n) == 0, "epoch 0 perm differs from rng_seed(seed * 1000003 + epoch)");
    dataset_shuffle(&ds, SEED, 1, st);
    read_perm(&ds, p1, st);
    EXPECT(is_permutation(p1, n), "epoch 1 perm is not a permutation");
    EXPECT(count_differing(p0, p1, n) > n / 2, "epochs 0 and 1 agree at %d of %d places", n - count_differing(p0, p1, n), n);
    dataset_shuffle(&ds, SEED, 0, st);
    read_perm(&ds, p1, st);
    EXPECT(count_differing(p0, p1, n) == 0, "same (seed, epoch) gave a different perm");
    dataset_shuffle(&ds, SEED + 1, 0, st);
    read_perm(&ds, p1, st);
    EXPECT(count_differing(p0, p1, n) > n / 2, "seeds %llu and %llu give similar perms", SEED, SEED + 1);

    /* An order drawn ahead (at the epoch before's end) is the one a shuffle of that epoch draws itself; drawn for
     * (seed, epoch + 1), it is not used by a shuffle of another epoch; and drawing it while the last upload is still
     * queued leaves that upload's order intact (it goes to the other buffer). */
    dataset_shuffle(&ds, SEED, 7, st);
    dataset_shuffle_ahead(&ds);
    dataset_shuffle(&ds, SEED, 8, st);
    read_perm(&ds, p1, st);
    host_perm(ref, n, SEED, 8);
    EXPECT(count_differing(p1, ref, n) == 0, "epoch 8 drawn ahead differs from its own draw at %d places",
           count_differing(p1, ref, n));
    dataset_shuffle_ahead(&ds);   /* epoch 9's, not used by epoch 12 */
    dataset_shuffle(&ds, SEED, 12, st);
    read_perm(&ds, p1, st);
    host_perm(ref, n, SEED, 12);
    EXPECT(count_differing(p1, ref, n) == 0, "epoch 12 after epoch 9 was drawn ahead differs at %d places",
           count_differing(p1, ref, n));
    host_perm(ref, n, SEED, 9);
    EXPECT(count_differing(p1, ref, n) > n / 2, "epoch 12 took epoch 9's order drawn ahead");
    CHECK_CUDA(cudaLaunchHostFunc(st, stall_stream, NULL));
    dataset_shuffle(&ds, SEED, 13, st);   /* its upload waits behind the stall */
    dataset_shuffle_ahead(&ds);
    read_perm(&ds, p1, st);
    host_perm(ref, n, SEED, 13);
    EXPECT(count_differing(p1, ref, n) == 0, "epoch 13's pending upload changed by the draw ahead at %d places",
           count_differing(p1, ref, n));

    /* Gathers at the start, middle and very end of the epoch, aligned (float4) and one float off (scalar). */
    int batch = 512;
    float *x_dev, *x = (float *)malloc((size_t)batch * ds.pixels * sizeof(float));
    int *y_dev, *y = (int *)malloc((size_t)batch * sizeof(int));
    CHECK_CUDA(cudaMalloc((void **)&x_dev, ((size_t)batch * ds.pixels + 4) * sizeof(float)));
    CHECK_CUDA(cudaMalloc((void **)&y_dev, (size_t)batch * sizeof(int)));
    dataset_shuffle(&ds, SEED, 0, st);
    for (int t = DTYPE_FP32; t <= DTYPE_BF16; t++) {
        check_train_gather(&ds, tr, p0, 0, batch, 0, (dtype_t)t, x_dev, y_dev, x, y, st, "first batch");
        check_train_gather(&ds, tr, p0, 12345, 300, 0, (dtype_t)t, x_dev, y_dev, x, y, st, "middle batch");
        check_train_gather(&ds, tr, p0, n - 77, 77, 0, (dtype_t)t, x_dev, y_dev, x, y, st, "last partial batch");
        check_train_gather(&ds, tr, p0, 1000, 129, 1, (dtype_t)t, x_dev, y_dev, x, y, st, "unaligned output");
    }
    dataset_gather_train(&ds, 5, 0, x_dev, DTYPE_FP32, y_dev, st);   /* empty: no launch, no error */
    CHECK_CUDA(cudaStreamSynchronize(st));

    /* Shuffles queued back to back with gathers, all behind a stalled stream: each gather must see its own
     * epoch's order, which holds only if a shuffle waits for the previous copy before reusing perm_host. */
    {
        const int epochs = 4, first = 4096;
        size_t row_floats = (size_t)batch * ds.pixels;
        float *xs_dev;
        int *ys_dev;
        CHECK_CUDA(cudaMalloc((void **)&xs_dev, epochs * row_floats * sizeof(float)));
        CHECK_CUDA(cudaMalloc((void **)&ys_dev, (size_t)epochs * batch * sizeof(int)));
        CHECK_CUDA(cudaLaunchHostFunc(st, stall_stream, NULL));
        for (int ep = 0; ep < epochs; ep++) {
            dataset_shuffle(&ds, SEED, 100 + ep, st);
            dataset_gather_train(&ds, first, batch, xs_dev + ep * row_floats, DTYPE_FP32, ys_dev + ep * batch, st);
        }
        CHECK_CUDA(cudaStreamSynchronize(st));
        for (int ep = 0; ep < epochs; ep++) {
            CHECK_CUDA(cudaMemcpy(x, xs_dev + ep * row_floats, row_floats * sizeof(float), cudaMemcpyDeviceToHost));
            CHECK_CUDA(cudaMemcpy(y, ys_dev + ep * batch, (size_t)batch * sizeof(int), cudaMemcpyDeviceToHost));
            host_perm(ref, n, SEED, 100 + ep);
            long bad = compare_batch(tr, ref + first, batch, x, y, 0);
            EXPECT(bad == 0, "queued shuffle, epoch %d: gather saw another epoch's order (%ld values differ)",
                   100 + ep, bad);
        }
        CHECK_CUDA(cudaFree(xs_dev));
        CHECK_CUDA(cudaFree(ys_dev));
    }

    /* Test gathers: plain, straddling the end (clamped to the last row), and wholly past it. */
    check_test_gather(&ds, te, 0, batch, x_dev, y_dev, x, y, st);
    check_test_gather(&ds, te, ds.n_test - 10, 32, x_dev, y_dev, x, y, st);
    check_test_gather(&ds, te, ds.n_test, 8, x_dev, y_dev, x, y, st);
    check_test_gather(&ds, te, ds.n_test - batch, batch, x_dev, y_dev, x, y, st);

    CHECK_CUDA(cudaFree(x_dev));
    CHECK_CUDA(cudaFree(y_dev));
    CHECK_CUDA(cudaStreamDestroy(st));
    dataset_free(&ds);
    EXPECT(ds.train_x == NULL && ds.perm == NULL && ds.perm_host == NULL && ds.n_train == 0, "dataset_free left fields");
    dataset_free(&ds);   /* a second free is harmless */
    free(x);
    free(y);
    free(p0);
    free(p1);
    free(ref);
    idx_free(&d);
    return test_summary();
}
