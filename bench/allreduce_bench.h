/* allreduce_bench.h — `scaling --bench allreduce --gpus 2,4`: each data-parallel strategy's gradient reduction on
 * raw buffers from 4 KB to 256 MB, checked exactly and timed, as an nccl-tests all_reduce_perf table and a CSV. */
#pragma once
#include "options.h"

/* Runs the benchmark over o->gpus (every strategy with a reduction, or only o->strategy if it has one), prints the
 * table to stdout and appends rows to o->out (results/allreduce.csv while --out is the training default).
 * Returns the exit status: 0, 1 if any sum was wrong or a reduction could not be set up, 2 on bad input. */
int allreduce_bench_main(const options_t *o);
