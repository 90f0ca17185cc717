/* nvtx.h — NVTX ranges in one domain ("scaling") for the project, so Nsight Systems groups them and
 * `nsys stats --report nvtx_sum` lists epoch, step, forward, backward, optimizer and evaluation. */
#pragma once
#include <stdarg.h>
#include <stdio.h>
#include <nvtx3/nvToolsExt.h>

static inline nvtxDomainHandle_t nvtx_domain(void) {
    /* Registration is idempotent and cheap after the first call; NVTX keeps the handle per process. */
    static nvtxDomainHandle_t d;   /* a cache of an immutable process-wide handle, not mutable state */
    if (!d) d = nvtxDomainCreateA("scaling");
    return d;
}

/* Push a range named by printf-style arguments, e.g. nvtx_push("step %d", i). */
static inline void nvtx_push(const char *fmt, ...) {
    char name[96];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(name, sizeof name, fmt, ap);
    va_end(ap);
    nvtxEventAttributes_t a = {0};
    a.version = NVTX_VERSION;
    a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    a.messageType = NVTX_MESSAGE_TYPE_ASCII;
    a.message.ascii = name;
    nvtxDomainRangePushEx(nvtx_domain(), &a);
}

static inline void nvtx_pop(void) { nvtxDomainRangePop(nvtx_domain()); }
