/* strategy_info.c — looking a strategy's properties up by name, for the host-only modules that are handed the
 * registry's infos (options, default plan, answer). */
#include "strategy_info.h"
#include <string.h>

const strategy_info_t *strategy_info_find(const strategy_info_t *const *infos, const char *name) {
    for (int i = 0; infos && name && infos[i]; i++)
        if (strcmp(infos[i]->name, name) == 0) return infos[i];
    return NULL;
}
