/* fake_registry.c — the command's registry plus one line, the test-only strategies fake and fake_ref
 * (fake_strategy.c): linked with the driver into build/tests/scaling_fake, nothing else edited. */
extern const struct strategy strategy_fake, strategy_fake_ref;
#define STRATEGY_EXTRA &strategy_fake, &strategy_fake_ref,
#include "strategies/registry.c"
