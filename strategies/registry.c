/* registry.c — the one table of strategies, chosen at run time by --strategy NAME. Adding a strategy is one file, its
 * properties (strategy_info.c) and its name in STRATEGY_LIST (strategy_info.h). A test registers its own strategy by
 * defining STRATEGY_EXTRA (one more "&strategy_x," entry) before including this file (tests/host/fake_registry.c). */
#include "strategy.h"
#include <string.h>

#define STRATEGY_DECLARE(name) extern const strategy_t strategy_##name;
STRATEGY_LIST(STRATEGY_DECLARE)
#define STRATEGY_ENTRY(name) &strategy_##name,

#ifndef STRATEGY_EXTRA
#define STRATEGY_EXTRA
#endif

const strategy_t *const strategy_table[] = {
    STRATEGY_LIST(STRATEGY_ENTRY)
    STRATEGY_EXTRA
    NULL,
};

const strategy_t *strategy_find(const char *name) {
    for (int i = 0; strategy_table[i]; i++)
        if (strcmp(strategy_table[i]->info->name, name) == 0) return strategy_table[i];
    return NULL;
}

int strategy_infos(const strategy_info_t **out, int max) {
    int n = 0;
    for (int i = 0; strategy_table[i] && n + 1 < max; i++) out[n++] = strategy_table[i]->info;
    out[n] = NULL;
    return n;
}
