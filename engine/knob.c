/* knob.c — reading the benchmark knobs (knob.h): a value is a word from a fixed list or a bounded integer, checked
 * whole; a bad one is the user's mistake, reported in one line before anything runs with it. */
#include "knob.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int knob_choice(const char *var, const char *const *names, int n, int dflt) {
    const char *v = getenv(var);
    if (!v || !*v) return dflt;
    for (int i = 0; i < n; i++)
        if (strcmp(v, names[i]) == 0) return i;
    fprintf(stderr, "%s=%s: expected", var, v);
    for (int i = 0; i < n; i++) fprintf(stderr, "%s %s", i == 0 ? "" : i == n - 1 ? " or" : ",", names[i]);
    fputc('\n', stderr);
    exit(2);
}

void knob_renamed(const char *old_var, const char *new_var) {
    if (!getenv(old_var)) return;
    fprintf(stderr, "%s: renamed %s\n", old_var, new_var);
    exit(2);
}

int knob_int(const char *var, int lo, int hi, int dflt) {
    const char *v = getenv(var);
    if (!v || !*v) return dflt;
    long x = 0;
    int ok = 1;
    for (const char *p = v; *p && ok; p++) {
        ok = *p >= '0' && *p <= '9' && p - v < 9;
        x = x * 10 + (*p - '0');
    }
    if (!ok || x < lo || x > hi) {
        fprintf(stderr, "%s=%s: expected an integer from %d to %d\n", var, v, lo, hi);
        exit(2);
    }
    return (int)x;
}
