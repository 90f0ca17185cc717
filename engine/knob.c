/* knob.c — the benchmark knobs (knob.h), one table: a value is a word from a fixed list or a bounded integer,
 * checked whole; a bad one is the user's mistake, reported in one line before anything runs with it. */
#include "knob.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    const char *var;
    const char *words[4];   /* a word knob's values, NULL after the last; none: an integer knob in [lo, hi] */
    int lo, hi, dflt;
    const char *old_var;    /* a name it had: set, a recipe written for it would silently run the default */
} knob_spec_t;

static const knob_spec_t KNOBS[KNOB_COUNT] = {
    [KNOB_BN] = {"SCALING_BN", {"own", "cudnn", "auto"}, .dflt = 2},
    [KNOB_CONV] = {"SCALING_CONV", {"auto", "legacy", "backend"}, .dflt = 0},
    [KNOB_COMM_PRIORITY] = {"SCALING_COMM_PRIORITY", {"high", "normal"}, .dflt = 0},
    [KNOB_WGRAD] = {"SCALING_WGRAD", {"direct", "widen"}, .dflt = 0, .old_var = "SCALING_DP_WGRAD"},
    [KNOB_DP_UPDATE] = {"SCALING_DP_UPDATE", {"bucket", "step"}, .dflt = 0},
    [KNOB_NCCL_CTAS] = {"SCALING_NCCL_CTAS", {NULL}, .lo = 0, .hi = 64, .dflt = 0},
    [KNOB_PIPE_SPLIT] = {"SCALING_PIPE_SPLIT", {"balance", "step"}, .dflt = 0},
    [KNOB_PROFILE_STEPS] = {"SCALING_PROFILE_STEPS", {NULL}, .lo = 0, .hi = 1000000, .dflt = 0},
};

/* Knob k's value in *out; -1 with the line (no newline) where its value or its old name is refused. */
static int knob_parse(knob_t k, int *out, char *err, size_t len) {
    const knob_spec_t *s = &KNOBS[k];
    const char *old = s->old_var ? getenv(s->old_var) : NULL;
    if (old && *old) {
        snprintf(err, len, "%s: renamed %s", s->old_var, s->var);
        return -1;
    }
    const char *v = getenv(s->var);
    *out = s->dflt;
    if (!v || !*v) return 0;
    if (s->words[0]) {
        for (int i = 0; i < 4 && s->words[i]; i++)
            if (strcmp(v, s->words[i]) == 0) return *out = i, 0;
        int n = snprintf(err, len, "%s=%s: expected", s->var, v);
        for (int i = 0; i < 4 && s->words[i] && n >= 0 && (size_t)n < len; i++)
            n += snprintf(err + n, len - (size_t)n, "%s %s", i == 0 ? "" : i + 1 == 4 || !s->words[i + 1] ? " or" : ",",
                          s->words[i]);
        return -1;
    }
    long x = 0;
    int ok = 1;
    for (const char *p = v; *p && ok; p++) {
        ok = *p >= '0' && *p <= '9' && p - v < 9;
        x = x * 10 + (*p - '0');
    }
    if (!ok || x < s->lo || x > s->hi) {
        snprintf(err, len, "%s=%s: expected an integer from %d to %d", s->var, v, s->lo, s->hi);
        return -1;
    }
    *out = (int)x;
    return 0;
}

int knob_get(knob_t k) {
    char err[256];
    int v;
    if (knob_parse(k, &v, err, sizeof err) == 0) return v;
    fprintf(stderr, "%s\n", err);
    exit(2);
}

const char *knob_word(knob_t k, int i) {
    return k >= 0 && k < KNOB_COUNT && i >= 0 && i < 4 && KNOBS[k].words[0] && KNOBS[k].words[i] ? KNOBS[k].words[i]
                                                                                                 : "?";
}

int knob_check(char *err, size_t len) {
    for (int k = 0; k < KNOB_COUNT; k++) {
        int v;
        if (knob_parse((knob_t)k, &v, err, len) != 0) return -1;
    }
    return 0;
}
