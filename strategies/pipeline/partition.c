/* partition.c — balancing pipeline stages over a model's valid cut points (exact, by dynamic programming; copies
 * across the cuts weighed against the slowest stage). */
#include "partition.h"
#include "../../engine/errmsg.h"
#include "../../engine/split.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>


static double range_cost(const double *cost, int a, int b) {
    double c = 0;
    for (int i = a; i < b; i++) c += cost[i];
    return c;
}

double partition_stage_cost(const double *cost, int n_layers, const int *starts, int p, int k) {
    return range_cost(cost, starts[k], k + 1 < p ? starts[k + 1] : n_layers);
}

void partition_format(const int *starts, int p, char *buf, size_t len) {
    size_t used = 0;
    if (len) buf[0] = '\0';
    for (int k = 0; k < p; k++) {
        int n = snprintf(buf + used, len - used, "%s%d", k ? "," : "", starts[k]);
        if (n < 0 || (size_t)n >= len - used) break;
        used += (size_t)n;
    }
}

double partition_imbalance(const double *cost, int n_layers, const int *starts, int p) {
    double worst = 0, sum = 0;
    for (int k = 0; k < p; k++) {
        double c = partition_stage_cost(cost, n_layers, starts, p, k);
        sum += c;
        if (c > worst) worst = c;
    }
    return sum > 0 ? worst * p / sum : 1;
}

/* The positions a stage may start or end at (0, the cuts, n_layers), prefix sums of the costs, and which position
 * pairs form an allowed stage. */
typedef struct {
    int npos, *pos;
    double *prefix;         /* prefix[i]: the cost of layers [0, i) */
    char *ok;               /* ok[j * npos + k]: positions j < k form an allowed stage */
    double weight;          /* M - 1, at least 1 */
} dp_t;

static double seg(const dp_t *d, int j, int k) { return d->prefix[d->pos[k]] - d->prefix[d->pos[j]]; }

/* The best split into p stages of at most `cap` each (cap < 0: no cap) by `mode`: 0 the smallest slowest stage, 1
 * the cheapest cuts. Fills starts; returns the split's slowest stage, or -1 where none fits. */
static double dp_solve(const dp_t *d, const partition_t *pb, int p, int mode, double cap, double *best, int *from,
                       int *starts) {
    int npos = d->npos;
#define BEST(q, k) best[(size_t)(q) * npos + (k)]
#define FROM(q, k) from[(size_t)(q) * npos + (k)]
    for (int q = 1; q <= p; q++)
        for (int k = 0; k < npos; k++) {
            BEST(q, k) = -1;
            FROM(q, k) = -1;
            for (int j = q == 1 ? 0 : q - 1; j < (q == 1 ? 1 : k); j++) {
                if (!d->ok[(size_t)j * npos + k] || (q > 1 && BEST(q - 1, j) < 0) || j >= k) continue;
                double c = seg(d, j, k);
                if (cap >= 0 && c > cap) continue;
                double v = mode == 0 ? (q == 1 || c > BEST(q - 1, j) ? c : BEST(q - 1, j))
                                     : (q == 1 ? 0 : BEST(q - 1, j) + pb->cut_cost[j - 1]);
                if (BEST(q, k) < 0 || v < BEST(q, k)) {
                    BEST(q, k) = v;
                    FROM(q, k) = j;
                }
            }
        }
    if (BEST(p, npos - 1) < 0) return -1;
    double worst = 0;
    for (int q = p, k = npos - 1; q >= 1; q--) {
        int j = FROM(q, k);
        starts[q - 1] = d->pos[j];
        if (seg(d, j, k) > worst) worst = seg(d, j, k);
        k = j;
    }
#undef BEST
#undef FROM
    return worst;
}

static double cuts_cost(const partition_t *pb, const int *starts, int p) {
    double t = 0;
    for (int k = 1; pb->cut_cost && k < p; k++)
        for (int c = 0; c < pb->n_cuts; c++)
            if (pb->cuts[c] == starts[k]) t += pb->cut_cost[c];
    return t;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

#define PARTITION_MAX_CAPS 4096   /* slowest-stage caps tried for cheaper cuts: bounds the time on fine cut lists */

int partition_balance(const partition_t *pb, int p, int *starts, char *err, size_t errlen) {
    if (split_feasible(p, pb->n_layers, pb->n_cuts, err, errlen)) return -1;
    dp_t d = {.npos = pb->n_cuts + 2, .weight = pb->micro > 2 ? pb->micro - 1 : 1};
    int npos = d.npos, rc = -1;
    d.pos = malloc((size_t)npos * sizeof *d.pos);
    d.prefix = malloc(((size_t)pb->n_layers + 1) * sizeof *d.prefix);
    d.ok = malloc((size_t)npos * npos);
    double *best = malloc((size_t)(p + 1) * npos * sizeof *best), *caps = NULL;
    int *from = malloc((size_t)(p + 1) * npos * sizeof *from), *trial = malloc((size_t)p * sizeof *trial);
    if (!d.pos || !d.prefix || !d.ok || !best || !from || !trial) {
        errmsg(-1, err, errlen, "pipeline: out of host memory balancing stages");
        goto out;
    }
    d.pos[0] = 0;
    for (int i = 0; i < pb->n_cuts; i++) d.pos[i + 1] = pb->cuts[i];
    d.pos[npos - 1] = pb->n_layers;
    d.prefix[0] = 0;
    for (int i = 0; i < pb->n_layers; i++) d.prefix[i + 1] = d.prefix[i] + pb->cost[i];
    for (int j = 0; j < npos; j++)
        for (int k = 0; k < npos; k++)
            d.ok[(size_t)j * npos + k] = j < k && (!pb->stage_ok || pb->stage_ok(pb->ctx, d.pos[j], d.pos[k]));
    double opt = dp_solve(&d, pb, p, 0, -1, best, from, starts);
    if (opt < 0) {
        errmsg(-1, err, errlen, "pipeline: no split into %d stages at the model's cut points (a residual block is cut "
               "at most once)", p);
        goto out;
    }
    rc = 0;
    if (!pb->cut_cost) goto out;
    /* Cheaper cuts may be worth a slower slowest stage: try each stage cost from the optimum up as a cap, the
     * cheapest cuts under it, until the cap alone costs more than the best so far. */
    double best_obj = d.weight * opt + cuts_cost(pb, starts, p);
    int ncap = 0;
    caps = malloc((size_t)npos * npos * sizeof *caps);
    if (!caps) goto out;
    for (int j = 0; j < npos; j++)
        for (int k = j + 1; k < npos; k++)
            if (d.ok[(size_t)j * npos + k] && seg(&d, j, k) >= opt && d.weight * seg(&d, j, k) < best_obj)
                caps[ncap++] = seg(&d, j, k);
    qsort(caps, (size_t)ncap, sizeof *caps, cmp_double);
    for (int i = 0, tried = 0; i < ncap && tried < PARTITION_MAX_CAPS; i++) {
        if (i > 0 && caps[i] == caps[i - 1]) continue;
        if (d.weight * caps[i] >= best_obj) break;
        tried++;
        double worst = dp_solve(&d, pb, p, 1, caps[i], best, from, trial);
        if (worst < 0) continue;
        double obj = d.weight * worst + cuts_cost(pb, trial, p);
        if (obj < best_obj - 1e-12 * best_obj) {
            best_obj = obj;
            memcpy(starts, trial, (size_t)p * sizeof *starts);
        }
    }
out:
    free(d.pos); free(d.prefix); free(d.ok); free(best); free(from); free(trial); free(caps);
    return rc;
}
