/* fake_registry.c — the command's registry plus one line, the test-only strategy fake (fake_strategy.c): linked with
 * the driver into build/tests/scaling_fake, nothing else edited. */
extern const struct strategy strategy_fake;
#define STRATEGY_EXTRA &strategy_fake,
#include "strategies/registry.c"
