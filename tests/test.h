/* test.h — a minimal test harness shared by host and GPU tests: EXPECT checks that count and continue,
 * a closing "N passed, N failed" line, and the exit-77 skip that ctest reports as skipped. */
#pragma once
#include <stdio.h>
#include <stdlib.h>
#include <math.h>

static int test_passed_ = 0, test_failed_ = 0;

#define EXPECT(cond, ...) do { if (cond) test_passed_++; else { test_failed_++; \
    fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond); fprintf(stderr, __VA_ARGS__); \
    fputc('\n', stderr); } } while (0)

/* Prints the closing line that CI reads and returns the process exit status. */
static inline int test_summary(void) {
    printf("%d passed, %d failed\n", test_passed_, test_failed_);
    return test_failed_ ? 1 : 0;
}

#define TEST_SKIP_CODE 77

/* A whole file as a NUL-terminated string (malloc'd; NULL and *len 0 if it cannot be opened). */
static inline char *test_slurp(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) { *len = 0; return NULL; }
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = (char *)malloc((size_t)(n > 0 ? n : 0) + 1);   /* the cast: CUDA tests include this as C++ */
    if (!buf) { fclose(f); *len = 0; return NULL; }
    *len = fread(buf, 1, (size_t)(n > 0 ? n : 0), f);
    buf[*len] = '\0';
    fclose(f);
    return buf;
}

/* Removes a scratch folder (made with mkdtemp) and everything in it; says so on stderr where it cannot. */
static inline void test_scratch_remove(const char *dir) {
    char cmd[1100];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);      /* mkdtemp names hold no quote */
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
}
