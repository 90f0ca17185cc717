/* fault.c — SCALING_FAULT, the test-only fault injection (fault.h): parsing, per-run counts, the failing call. */
#define _POSIX_C_SOURCE 200809L
#include "fault.h"
#include "errmsg.h"
#include "process.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const kind_names[FAULT_KINDS] = {"alloc", "cudnn", "cuda", "nccl", "collective", "stall"};

/* A decimal integer from min to INT_MAX (K, R and N are counted in ints), digits only: strtol's leading blanks and
 * sign are refused, and a value past its range too rather than taken as LONG_MAX (a fault that never fires). */
static int parse_long(const char *s, long min, long *out) {
    char *end;
    if (*s < '0' || *s > '9') return -1;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (*end || errno || v < min || v > INT_MAX) return -1;
    *out = v;
    return 0;
}

int fault_parse(const char *s, fault_spec_t *f, char *err, size_t errlen) {
#ifdef SCALING_NO_FAULT_INJECTION
    (void)f;
    return errmsg(2, err, errlen, "SCALING_FAULT: \"%.40s\": this build has no fault injection (it is test-only: "
                  "cmake -DSCALING_FAULT_INJECTION=ON)", s);
#endif
    char buf[128];
    if (strlen(s) >= sizeof buf) return errmsg(2, err, errlen, "SCALING_FAULT: \"%.40s...\" is too long", s);
    snprintf(buf, sizeof buf, "%s", s);
    memset(f, 0, sizeof *f);
    f->rank = -1;
    char *save = NULL, *kind = strtok_r(buf, ":", &save), *k = strtok_r(NULL, ":", &save);
    int found = 0;
    for (int i = 0; kind && i < FAULT_KINDS; i++)
        if (strcmp(kind, kind_names[i]) == 0) f->kind = (fault_kind_t)i, found = 1;
    if (!found)
        return errmsg(2, err, errlen, "SCALING_FAULT: \"%s\": want KIND:K[:rank=R][:run=N], KIND one of alloc, "
                      "cudnn, cuda, nccl, collective, stall", s);
    if (!k || parse_long(k, 1, &f->k))
        return errmsg(2, err, errlen, "SCALING_FAULT: \"%s\": K must be a positive integer", s);
    for (char *t; (t = strtok_r(NULL, ":", &save));) {
        long v;
        if (strncmp(t, "rank=", 5) == 0 && parse_long(t + 5, 0, &v) == 0) f->rank = (int)v;
        else if (strncmp(t, "run=", 4) == 0 && parse_long(t + 4, 1, &v) == 0) f->run = (int)v;
        else return errmsg(2, err, errlen, "SCALING_FAULT: \"%s\": \"%s\" is not rank=R or run=N", s, t);
    }
    return 0;
}

int fault_begin_run(int rank, int run, char *err, size_t errlen) {
    process_faults_t *f = &process_state.faults;
    f->armed = 0;
    memset(f->counts, 0, sizeof f->counts);
    const char *s = getenv("SCALING_FAULT");
    if (!s || !*s) return 0;
    if (fault_parse(s, &f->spec, err, errlen)) return 2;
    f->armed = (f->spec.rank < 0 || f->spec.rank == rank) && (f->spec.run == 0 || f->spec.run == run);
    return 0;
}

int fault_take(fault_kind_t kind) {
    process_faults_t *f = &process_state.faults;
    if (kind != f->spec.kind || ++f->counts[kind] != f->spec.k) return 0;
    fprintf(stderr, "scaling: SCALING_FAULT: injecting a fault at %s %ld (pid %d)\n", kind_names[kind], f->spec.k,
            (int)getpid());
    fflush(stderr);
    return 1;
}

void fault_stall(void) {
    for (;;) pause();
}
