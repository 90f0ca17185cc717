/* allreduce_bench.h — `scaling --bench allreduce --gpus 2,4`: each data-parallel strategy's gradient reduction on
 * raw buffers from 4 KB to 256 MB, checked exactly and timed, as an nccl-tests all_reduce_perf table and a CSV. */
#pragma once
#include <stddef.h>
#include "../strategies/naive_path.h"

/* What the benchmark takes from the command line. */
typedef struct {
    const int *gpus;            /* the GPU counts to run, n_gpus of them */
    int n_gpus;
    const char *strategy;       /* only this strategy where it has a reduction, else every one that has */
    const char *out;            /* the CSV appended to */
    naive_path_t naive_path;    /* naive's copy path */
} allreduce_bench_t;

/* Runs the benchmark over b->gpus (every strategy with a reduction, or only b->strategy if it has one), prints the
 * table to stdout and appends rows to b->out (results/scaling_allreduce.csv while --out is the training default).
 * Returns the exit status: 0, 1 if any sum was wrong or a reduction could not be set up, 2 on bad input. */
int allreduce_bench_main(const allreduce_bench_t *b);
/* Read-only, before any device is looked for: an existing CSV at path must be empty or have the benchmark's header.
 * 0, or 2 with one line in err. */
int allreduce_bench_check(const char *path, char *err, size_t errlen);
