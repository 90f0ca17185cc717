/* registry_host.c — the registry of the host-only build (no CUDA: the report, `scaling tsv`, --dry-run): the
 * command's strategies' properties (strategy_info.c) in the registry's order, without their code. */
#include "strategy_info.h"
#include <stddef.h>

#define STRATEGY_INFO_ENTRY(name) &strategy_info_##name,
static const strategy_info_t *const info_table[] = {STRATEGY_LIST(STRATEGY_INFO_ENTRY) NULL};

int strategy_infos(const strategy_info_t **out, int max) {
    int n = 0;
    for (int i = 0; info_table[i] && n + 1 < max; i++) out[n++] = info_table[i];
    out[n] = NULL;
    return n;
}
