/* test_knob.c — the benchmark knobs' table (engine/knob.c): unset or empty gives the default, a listed word or an
 * integer in range its value, anything else (or an old name set) one line naming the variable and exit 2. */
#include "engine/knob.h"
#include "test.h"

#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* knob_get(k) in a child with var set to value (NULL: unset) and every knob's other variables unset: its exit status
 * (10 + the value, where the call returned) and its stderr in err. */
static int knob_in_child(knob_t k, const char *var, const char *value, char *err, size_t len) {
    int fd[2];
    if (pipe(fd) != 0) return -1;
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        dup2(fd[1], 2);
        close(fd[0]);
        if (value) setenv(var, value, 1);
        _exit(10 + knob_get(k));
    }
    close(fd[1]);
    size_t n = 0;
    ssize_t got;
    while (n + 1 < len && (got = read(fd[0], err + n, len - 1 - n)) > 0) n += (size_t)got;
    err[n] = '\0';
    close(fd[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* The knob's value where knob_get returned and said nothing, else -1. */
static int value_of(knob_t k, const char *var, const char *value) {
    char err[512];
    int rc = knob_in_child(k, var, value, err, sizeof err);
    return rc >= 10 && !err[0] ? rc - 10 : -1;
}

/* Whether knob_get stopped with exit 2 and exactly this line, and knob_check in this process gives the same line. */
static int refused(knob_t k, const char *var, const char *value, const char *line) {
    char err[512], checked[512] = "";
    int rc = knob_in_child(k, var, value, err, sizeof err);
    setenv(var, value, 1);
    int crc = knob_check(checked, sizeof checked);
    unsetenv(var);
    int ok = rc == 2 && strlen(err) > 0 && strncmp(err, line, strlen(line)) == 0 && strcmp(err + strlen(line), "\n") == 0
             && crc == -1 && strcmp(checked, line) == 0;
    if (!ok) fprintf(stderr, "  (exit %d, said \"%s\"; knob_check %d \"%s\")\n", rc, err, crc, checked);
    return ok;
}

int main(void) {
    const char *all[] = {"SCALING_BN", "SCALING_CONV", "SCALING_COMM_PRIORITY", "SCALING_WGRAD", "SCALING_DP_WGRAD",
                         "SCALING_DP_UPDATE", "SCALING_NCCL_CTAS", "SCALING_PIPE_SPLIT", "SCALING_PROFILE_STEPS"};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) unsetenv(all[i]);
    char err[512] = "";
    EXPECT(knob_check(err, sizeof err) == 0, "nothing set: every knob good: %s", err);

    /* a word knob */
    EXPECT(value_of(KNOB_PIPE_SPLIT, "SCALING_PIPE_SPLIT", NULL) == 0, "unset: its default (balance)");
    EXPECT(value_of(KNOB_PIPE_SPLIT, "SCALING_PIPE_SPLIT", "") == 0, "empty: its default");
    EXPECT(value_of(KNOB_PIPE_SPLIT, "SCALING_PIPE_SPLIT", "step") == 1, "a listed word: its index");
    EXPECT(value_of(KNOB_BN, "SCALING_BN", NULL) == 2 && value_of(KNOB_BN, "SCALING_BN", "own") == 0,
           "SCALING_BN: auto by default, own is 0 (gpu_bn_t's order)");
    EXPECT(refused(KNOB_PIPE_SPLIT, "SCALING_PIPE_SPLIT", "Step", "SCALING_PIPE_SPLIT=Step: expected balance or step"),
           "a word not listed (case counts): one line with the valid words, exit 2");
    EXPECT(refused(KNOB_BN, "SCALING_BN", "step ", "SCALING_BN=step : expected own, cudnn or auto"),
           "three words listed, a trailing blank is not a word");
    EXPECT(strcmp(knob_word(KNOB_CONV, 1), "legacy") == 0 && strcmp(knob_word(KNOB_CONV, 3), "?") == 0 &&
           strcmp(knob_word(KNOB_NCCL_CTAS, 0), "?") == 0, "knob_word: a word, none past the last, none for integers");

    /* an integer knob */
    EXPECT(value_of(KNOB_NCCL_CTAS, "SCALING_NCCL_CTAS", NULL) == 0, "unset: its default (0, NCCL's choice)");
    EXPECT(value_of(KNOB_NCCL_CTAS, "SCALING_NCCL_CTAS", "64") == 64, "its upper bound is in range");
    EXPECT(value_of(KNOB_NCCL_CTAS, "SCALING_NCCL_CTAS", "08") == 8, "leading zeros read as decimal, not octal");
    const char *bad[] = {"65", "-1", "+5", " 5", "5 ", "5x", "0x10", "1e1", "4294967299", "999999999999"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char line[128];
        snprintf(line, sizeof line, "SCALING_NCCL_CTAS=%s: expected an integer from 0 to 64", bad[i]);
        EXPECT(refused(KNOB_NCCL_CTAS, "SCALING_NCCL_CTAS", bad[i], line), "\"%s\": refused in one line", bad[i]);
    }

    /* SCALING_PROFILE_STEPS, read once where a sweep starts: checked as every knob, not atoi'd (where "abc" was no
     * capture and "5x" five steps, without a word) */
    EXPECT(value_of(KNOB_PROFILE_STEPS, "SCALING_PROFILE_STEPS", NULL) == 0 &&
           value_of(KNOB_PROFILE_STEPS, "SCALING_PROFILE_STEPS", "20") == 20, "profile steps: 0 unset, else K");
    EXPECT(refused(KNOB_PROFILE_STEPS, "SCALING_PROFILE_STEPS", "5x",
                   "SCALING_PROFILE_STEPS=5x: expected an integer from 0 to 1000000"), "profile steps: a suffix");
    EXPECT(refused(KNOB_PROFILE_STEPS, "SCALING_PROFILE_STEPS", "-1",
                   "SCALING_PROFILE_STEPS=-1: expected an integer from 0 to 1000000"), "profile steps: a sign");

    /* an old name */
    EXPECT(value_of(KNOB_WGRAD, "SCALING_WGRAD", "widen") == 1, "the new name read");
    EXPECT(refused(KNOB_WGRAD, "SCALING_DP_WGRAD", "direct", "SCALING_DP_WGRAD: renamed SCALING_WGRAD"),
           "the old name set: one line naming the new one, exit 2");
    EXPECT(value_of(KNOB_WGRAD, "SCALING_DP_WGRAD", "") == 0, "the old name empty: unset, as any knob's empty value");

    /* knob_check names the first bad knob whichever it is; the control: a good value of every knob passes */
    setenv("SCALING_CONV", "backend", 1), setenv("SCALING_NCCL_CTAS", "4", 1), setenv("SCALING_PIPE_SPLIT", "x", 1);
    EXPECT(knob_check(err, sizeof err) == -1 && strcmp(err, "SCALING_PIPE_SPLIT=x: expected balance or step") == 0,
           "a later knob bad, the others good: its line: %s", err);
    setenv("SCALING_PIPE_SPLIT", "step", 1);
    EXPECT(knob_check(err, sizeof err) == 0, "every knob good");
    return test_summary();
}
