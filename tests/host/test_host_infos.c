/* test_host_infos.c — the host-only report's strategy properties (host_infos.c) are the registry's, field by field
 * and in its order (the summaries aside: the report never shows them); a negative control changes one field. */
#include "host_infos.h"
#include "test.h"

#include <string.h>

/* 1 when a and b have the same name and properties. */
static int same(const strategy_info_t *a, const strategy_info_t *b) {
    return strcmp(a->name, b->name) == 0 && a->reference == b->reference && a->reduces == b->reduces &&
           a->staged == b->staged && a->t1_global_batch == b->t1_global_batch && a->multi_process == b->multi_process &&
           a->uses_nccl == b->uses_nccl && a->path_is_algo == b->path_is_algo && a->no_gpu == b->no_gpu &&
           a->allreduce == b->allreduce;
}

int main(void) {
    const strategy_info_t *reg[32];
    int n = strategy_infos(reg, 32), k = 0;
    while (host_infos[k]) k++;
    EXPECT(n == k, "the registry has %d strategies, host_infos %d", n, k);
    for (int i = 0; i < n && i < k; i++)
        EXPECT(same(reg[i], host_infos[i]), "strategy %d: the registry's %s differs from host_infos' %s", i,
               reg[i]->name, host_infos[i]->name);
    strategy_info_t changed = *host_infos[0];
    changed.reference = !changed.reference;
    EXPECT(!same(&changed, reg[0]), "negative control: a changed property is seen");
    return test_summary();
}
