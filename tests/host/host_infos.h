/* host_infos.h — the registry's strategy properties without the strategies' code, for host-only programs that run
 * the report (tests/host/report_host.c): test_host_infos checks them field by field against strategies/registry.c. */
#pragma once
#include "strategies/strategy_info.h"

/* single, naive, nccl, pipeline, NULL: the command's registry in its order. */
extern const strategy_info_t *const host_infos[];
