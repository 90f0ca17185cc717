/* ar_model.c — the all-reduce cost model the projection uses: NCCL's own formula (src/graph/tuning.cc) for ring
 * and tree over an intra-node and an inter-node α-β path, and where the inter-node path's parameters come from. */
#include "report.h"

#include <math.h>
#include <string.h>
#include <strings.h>

static int log2i(double x) {
    int k = 0;
    for (; x >= 2; x /= 2) k++;
    return k;
}

/* All-reduce time (ms) of S bytes over N nodes × g GPUs by ring (tree = 0), intra-node fit ki. NAN past one node
 * without an inter-node path. */
double project_ar_ms(int tree, int N, int g, double S, double ai, double bi, double ae, double be) {
    int n = N * g;
    if (n < 2) return 0;
    if (N > 1 && (isnan(ae) || isnan(be))) return NAN;
    if (N == 1) ae = be = 0; /* no inter-node term on one node */
    double b = N > 1 ? fmax(bi, be / g) : bi, lat;
    if (!tree)
        lat = (2.0 * (n - 1) - 2.0 * (N - 1)) * ai + 2.0 * (N - 1) * ae;
    else
        lat = 2.0 * ((g - 1) * ai + log2i(N) * ae);
    return (lat + (!tree ? 2.0 * (n - 1) / n : 2.0) * S * b) / 1e3;
}

double ar_path_ms(const ar_path_t *p, int tree, int N, int g, double S, const fit_t *ki) {
    return project_ar_ms(tree, N, g, S, ki->alpha, ki->beta, p->inter ? p->ae : NAN, p->inter ? p->be : NAN);
}

/* The all-reduce a row's algorithm runs (Ring, Tree; NCCL's choice, the faster, otherwise). */
double ar_path_row_ms(const ar_path_t *p, const char *algo, int N, int g, double S, const fit_t *ki) {
    double r = ar_path_ms(p, 0, N, g, S, ki), t = ar_path_ms(p, 1, N, g, S, ki);
    if (strcasecmp(algo, "ring") == 0 || isnan(r)) return r;
    if (strcasecmp(algo, "tree") == 0) return t;
    return fmin(r, t);
}

/* The inter-node path: the network benchmark's nccl fit, each parameter replaced where given. */
void ar_path_inter(ar_path_t *p, report_t *r) {
    p->ae = p->be = NAN;
    text_clear(&r->inter_src), text_clear(&r->inter_cap), text_clear(&r->inter_note);
    if (*r->net_src) {
        char err[REPORT_ERR] = "";
        int rc = fits_read(&r->fits, r->net_src, "net ", r->st.infos, err, sizeof err);
        const fit_t *k = rc ? NULL : fit_nccl(&r->fits, "net ", "float");
        char *src = report_md_code(r->net_src, 0), *why = rc ? report_md_code(err, 0) : NULL;
        if (rc)
            text_printf(&r->inter_note, "%s: %s", src, why);
        else if (!fit_usable(k))
            text_printf(&r->inter_note, "%s: no nccl rows that fit α ≥ 0 and β > 0", src);
        else {
            p->ae = k->alpha;
            p->be = k->beta;
            char *cell = report_md_code(r->net_src, 1);   /* inter_src is a table cell */
            text_printf(&r->inter_src, "ring fit to %s", cell);
            text_printf(&r->inter_cap, "fit");
            free(cell);
        }
        free(src), free(why);
    }
    if (!isnan(r->net_lat)) {
        p->ae = r->net_lat;
        text_printf(&r->inter_src, "%sα from --net-latency-us", r->inter_src.len ? ", " : "");
        text_printf(&r->inter_cap, "%s--net-latency-us", r->inter_cap.len ? ", " : "");
    }
    if (!isnan(r->net_gbs)) {
        p->be = 1 / (r->net_gbs * 1e3);
        text_printf(&r->inter_src, "%sbandwidth from --net-gbs", r->inter_src.len ? ", " : "");
        text_printf(&r->inter_cap, "%s--net-gbs", r->inter_cap.len ? ", " : "");
    }
    p->inter = !isnan(p->ae) && !isnan(p->be);
}
