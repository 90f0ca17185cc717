/* registry.c — the one table of strategies, chosen at run time by --strategy NAME.
 * Adding a strategy is one file and one line here. */
#include "strategy.h"
#include <string.h>

extern const strategy_t strategy_single;
extern const strategy_t strategy_naive;
extern const strategy_t strategy_nccl;
extern const strategy_t strategy_pipeline;

const strategy_t *const strategy_table[] = {
    &strategy_single,
    &strategy_naive,
    &strategy_nccl,
    &strategy_pipeline,
    NULL,
};

const strategy_t *strategy_find(const char *name) {
    for (int i = 0; strategy_table[i]; i++)
        if (strcmp(strategy_table[i]->name, name) == 0) return strategy_table[i];
    return NULL;
}

int strategy_names(const char **out, int max) {
    int n = 0;
    for (int i = 0; strategy_table[i] && n + 1 < max; i++) out[n++] = strategy_table[i]->name;
    out[n] = NULL;
    return n;
}
