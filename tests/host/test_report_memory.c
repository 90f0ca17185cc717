/* test_report_memory.c — `scaling report` holds what its configurations need, not every row: the fixture study's rows
 * repeated as later runs of the same configurations (10 000, then 100 000 rows), each reported by the binary, whose
 * peak RSS may grow by a few hundred bytes a row at most. `test_report_memory ROWS PATH` only writes such a CSV. */
#include "test.h"

#include <fcntl.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

/* The most the peak may grow per row added. What stays per row is its run's id, time, progress and key (the
 * first pass); a whole row in memory, as before, was about 2 300 bytes. At this bound 1M rows stay under 1 GB. */
#define MAX_BYTES_PER_ROW 512

/* Writes the fixture's header and then its rows again and again until `rows` are written, copy k's run ids ending in
 * "-k": every copy is a later run of the same configurations, which supersedes the one before. 0, or -1. */
static int write_csv(const char *path, long rows) {
    size_t len;
    char *text = test_slurp(FIXTURES "/study.csv", &len);
    FILE *f = fopen(path, "w");
    char *body = text ? strchr(text, '\n') : NULL;
    if (!f || !body || !body[1]) {
        free(text);
        if (f) fclose(f);
        return -1;
    }
    fwrite(text, 1, (size_t)(body + 1 - text), f);
    long n = 0;
    for (long k = 1; n < rows; k++)
        for (char *line = body + 1, *end; *line && n < rows; line = end + 1, n++) {
            end = strchr(line, '\n');
            char *comma = strchr(line, ',');
            if (!end || !comma || comma > end) break;
            fprintf(f, "%.*s-%ld%.*s\n", (int)(comma - line), line, k, (int)(end - comma), comma);
            if (!end[1]) break;
        }
    free(text);
    return fclose(f) == 0 && n == rows ? 0 : -1;
}

/* The peak RSS in KiB of `scaling report csv --out out`, or -1 where it did not exit 0. No gnuplot on its PATH: the
 * peak is the report's own, not a figure's (the figures' data files are still written). Under AddressSanitizer (the
 * sanitize build runs this test too) no quarantine: freed memory held back would count as the report's. */
static long report_peak_kib(const char *csv, const char *out) {
    pid_t pid = fork();
    if (pid == 0) {
        int null = open("/dev/null", O_WRONLY);
        dup2(null, 1), dup2(null, 2);
        const char *asan = getenv("ASAN_OPTIONS");
        char opts[1024];
        snprintf(opts, sizeof opts, "%s%squarantine_size_mb=0", asan ? asan : "", asan && *asan ? ":" : "");
        setenv("ASAN_OPTIONS", opts, 1);
        setenv("PATH", "/nonexistent", 1);
        execl(SCALING_BIN, SCALING_BIN, "report", csv, "--out", out, (char *)NULL);
        _exit(127);
    }
    int status;
    struct rusage ru;
    if (pid < 0 || wait4(pid, &status, 0, &ru) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) return -1;
    return ru.ru_maxrss;
}

int main(int argc, char **argv) {
    if (argc == 3) return write_csv(argv[2], atol(argv[1])) == 0 ? 0 : 1;
    char tmp[] = "/tmp/test_report_memory.XXXXXX";
    EXPECT(mkdtemp(tmp) != NULL, "scratch folder");
    long rows[2] = {10000, 100000}, peak[2];
    for (int i = 0; i < 2; i++) {
        char csv[128], out[128];
        snprintf(csv, sizeof csv, "%s/rows%ld.csv", tmp, rows[i]);
        snprintf(out, sizeof out, "%s/rows%ld", tmp, rows[i]);
        EXPECT(write_csv(csv, rows[i]) == 0, "write %ld rows", rows[i]);
        peak[i] = report_peak_kib(csv, out);
        EXPECT(peak[i] > 0, "scaling report on %ld rows exits 0", rows[i]);
        printf("%ld rows: peak RSS %ld KiB\n", rows[i], peak[i]);
    }
    double per_row = (double)(peak[1] - peak[0]) * 1024 / (double)(rows[1] - rows[0]);
    EXPECT(peak[0] > 0 && peak[1] > 0 && per_row <= MAX_BYTES_PER_ROW,
           "peak RSS grew by %.0f bytes a row from %ld to %ld rows (%ld to %ld KiB), at most %d", per_row, rows[0],
           rows[1], peak[0], peak[1], MAX_BYTES_PER_ROW);
    test_scratch_remove(tmp);
    return test_summary();
}
