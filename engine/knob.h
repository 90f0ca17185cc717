/* knob.h — benchmark knobs: environment variables that switch one implementation for another in the same binary, so
 * a benchmark can time both in one call (SCALING_BN, SCALING_CONV, SCALING_COMM_PRIORITY, SCALING_DP_UPDATE, ...;
 * doc/engine.md and doc/strategies.md list them). Read once where the object they configure is made. */
#pragma once

#ifdef __cplusplus
extern "C" {
#endif
/* The index in names[0..n) of the variable's value; unset or empty: dflt. Any other value stops the process with one
 * line naming the variable and the valid words, exit 2. */
int knob_choice(const char *var, const char *const *names, int n, int dflt);
/* The variable's value as a decimal integer in [lo, hi]; unset or empty: dflt. Anything else (a sign, a blank, a
 * suffix, a value out of range) stops the process with one line, exit 2. */
int knob_int(const char *var, int lo, int hi, int dflt);
/* A knob's old name: set at all (a recipe written for it would otherwise run the default silently), it stops the
 * process with one line naming the new one, exit 2. */
void knob_renamed(const char *old_var, const char *new_var);
#ifdef __cplusplus
}
#endif
