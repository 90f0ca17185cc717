/* test_report_run.c — how the default study runs `scaling report` in a child process: the real binary on a copy of the
 * fixture study in a folder whose name needs quoting; a failing program's exit status, with the CSV left as it was;
 * a killed or unstartable one. */
#define _POSIX_C_SOURCE 200809L   /* mkdtemp */
#include "bench/report_run.h"
#include "test.h"

#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int exists(const char *path) {
    struct stat st;
    return stat(path, &st) == 0;
}

static void write_file(const char *path, const char *text, mode_t mode) {
    FILE *f = fopen(path, "w");
    if (f) {
        fputs(text, f);
        fclose(f);
    }
    chmod(path, mode);
}

static void test_run(const char *tmp) {
    char dir[600], csv[700], md[700], err[1300], cmd[1600];
    /* A folder name with a space and a quote: it reaches the script as one argument, no shell in between */
    snprintf(dir, sizeof dir, "%s/it's a study", tmp);
    mkdir(dir, 0777);
    snprintf(csv, sizeof csv, "%s/study.csv", dir);
    snprintf(cmd, sizeof cmd, "cp '%s/study.csv' \"%s\"", FIXTURES, csv);
    EXPECT(system(cmd) == 0, "copy the fixture");
    int rc = report_run(SCALING_BIN, csv, dir, err, sizeof err);
    snprintf(md, sizeof md, "%s/REPORT.md", dir);
    EXPECT(rc == 0, "scaling report: rc %d: %s", rc, err);
    size_t len;
    char *text = test_slurp(md, &len);
    EXPECT(text && strstr(text, "# Scaling study:") && strstr(text, "#### nccl"), "REPORT.md in the folder");
    free(text);

    /* A script that fails: its status comes back, the CSV is untouched */
    char fail_sh[700], before[700];
    snprintf(fail_sh, sizeof fail_sh, "%s/fail.sh", tmp);
    write_file(fail_sh, "#!/bin/sh\necho 'report: cannot' >&2\nexit 3\n", 0755);
    snprintf(before, sizeof before, "%s/before.csv", tmp);
    snprintf(cmd, sizeof cmd, "cp \"%s\" \"%s\"", csv, before);
    EXPECT(system(cmd) == 0, "keep a copy");
    rc = report_run(fail_sh, csv, dir, err, sizeof err);
    EXPECT(rc == 3 && strstr(err, "exited with status 3"), "failing script: rc %d: %s", rc, err);
    snprintf(cmd, sizeof cmd, "cmp -s \"%s\" \"%s\"", csv, before);
    EXPECT(system(cmd) == 0, "the CSV is unchanged");

    /* Killed, and not executable: -1 with a message */
    char kill_sh[700];
    snprintf(kill_sh, sizeof kill_sh, "%s/kill.sh", tmp);
    write_file(kill_sh, "#!/bin/sh\nkill -9 $$\n", 0755);
    rc = report_run(kill_sh, csv, dir, err, sizeof err);
    EXPECT(rc == -1 && strstr(err, "killed by signal 9"), "killed: rc %d: %s", rc, err);
    write_file(kill_sh, "#!/bin/sh\nexit 0\n", 0644);
    rc = report_run(kill_sh, csv, dir, err, sizeof err);
    EXPECT(rc == -1 && strstr(err, "cannot start"), "not executable: rc %d: %s", rc, err);
    EXPECT(exists(csv), "the CSV is still there");
}

int main(void) {
    char tmp[] = "/tmp/test_report_run.XXXXXX";
    if (!mkdtemp(tmp)) { perror("mkdtemp"); return 1; }
    test_run(tmp);
    test_scratch_remove(tmp);
    return test_summary();
}
