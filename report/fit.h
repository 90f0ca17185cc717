/* fit.h — the α-β model of an all-reduce benchmark (`scaling --bench allreduce`): one least-squares fit per strategy,
 * algorithm and element type, on the relative error so the small sizes set α and the large ones β:
 *   ring (NCCL's, and any other):  t(n, S) = 2(n-1) α + 2(n-1)/n S β
 *   central (every byte into and out of GPU 0, as naive's):  t(n, S) = 2(n-1) α + 2(n-1) S β
 * The form is the benchmark strategy's property (strategy_info.h: allreduce), the ring's for a strategy not known.
 * Host-only. */
#pragma once
#include "../strategies/strategy_info.h"

#include <stddef.h>

typedef struct {
    char *name;          /* "strategy (algo)", "strategy (algo, type)" for a type other than float */
    char *strategy, *algo, *type;   /* the strategy's name prefixed by tag; the cells algo and type */
    const char *tag;     /* fits_read's tag: "" or "net " */
    int ring;            /* the ring form (every strategy but one whose all-reduce is STRATEGY_AR_CENTRAL) */
    int nccl;            /* NCCL's all-reduce (STRATEGY_AR_NCCL): the projection's cost model applies */
    int n, bad;          /* points; bad: the points cannot separate α from β */
    double alpha, beta;  /* µs, µs per byte */
    double err;          /* the largest relative error over the points */
    double bmin, bmax;   /* sizes, bytes */
    char *gpus;          /* GPU counts, "2, 4" (NULL before the first point) */
    double *x1, *x2, *t; /* the points: t ≈ α x1 + β x2 */
    int cap;
} fit_t;

typedef struct {
    fit_t *fit;
    int n, cap;
} fits_t;

/* Fits every strategy, algorithm and type of a benchmark CSV, the strategy's name prefixed by tag, its form from its
 * properties in infos (the registry's, NULL-terminated). 0; 2 with a one-line message for a file that cannot be
 * read; 1 with "no columns ..." in err for a file that is not one. */
int fits_read(fits_t *f, const char *path, const char *tag, const strategy_info_t *const *infos, char *err,
              size_t errlen);
/* Least squares of the points added so far (fit_add): sets alpha, beta, err, or bad. */
void fit_solve(fit_t *k);
/* Adds a point: n GPUs, S bytes, t µs. */
void fit_add(fit_t *k, int n, double S, double t);
/* The memory of one fit (fits_free frees every fit's). */
void fit_free(fit_t *k);
void fits_free(fits_t *f);
/* The fit for strategy s whose rows record algorithm algo and reduce elements of type ("" = float): that algorithm's,
 * else the strategy's first of that type; NULL without one. */
const fit_t *fit_of(const fits_t *f, const char *s, const char *algo, const char *type);
/* The fit for rows whose gradients travel as gd ("bf16" or "fp16", or "fp32"/"" for float): 2-byte rows pay the
 * cast, so the "+cast" bfloat16 table first (the row's algorithm's, else the strategy's first; fp16 moves the same
 * bytes through the same kernels and has no table of its own), then bfloat16, then the float fit at their bytes
 * with *lent = 1. */
const fit_t *fit_of_grads(const fits_t *f, const char *s, const char *algo, const char *gd, int *lent);
/* The fit of type read under tag of the first strategy with NCCL's all-reduce (its fit without an algorithm, else
 * its first): the projection's path; NULL without one. */
const fit_t *fit_nccl(const fits_t *f, const char *tag, const char *type);
/* All-reduce time (ms) of fit k on n GPUs and S bytes; 0 for n < 2; NAN without a fit. */
double fit_allreduce_ms(const fit_t *k, int n, double S);
/* A fit the projection can use: α ≥ 0 and β > 0. */
int fit_usable(const fit_t *k);
