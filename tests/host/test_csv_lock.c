/* test_csv_lock.c — sweeps started together on one new CSV: study_open and study_write hold an exclusive flock
 * while the header or a row is written, so 6 processes released at once into a new file leave exactly one header and
 * every row whole, in 10 tries out of 10. */
#define _POSIX_C_SOURCE 200809L
#include "study/writer.h"
#include "study/reader.h"
#include "test.h"

#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define WRITERS 6
#define ROWS 40
#define TRIES 10

/* One writer: waits on the barrier (a pipe the parent closes), opens the new file and appends its rows. */
static void writer(const char *path, int barrier, int id) {
    char c, err[512];
    if (read(barrier, &c, 1) < 0) _exit(3);
    study_csv_t r;
    if (study_open(&r, path, err, sizeof err) != 0) { fprintf(stderr, "%s\n", err); _exit(1); }
    study_row_t row;
    study_row_init(&row);
    row.strategy = "nccl", row.model = "resnet18", row.status = "ok", row.gpus = 2;
    /* Long cells, so a row is more than one small write could carry whole by luck. */
    memset(row.env.nccl_transport, 'x', sizeof row.env.nccl_transport - 1);
    snprintf(row.env.gpu_name, sizeof row.env.gpu_name, "NVIDIA H200, writer %d", id);
    for (int i = 0; i < ROWS; i++) {
        snprintf(row.run_id, sizeof row.run_id, "w%d-%d", id, i);
        row.epoch = i;
        if (study_write(&r, &row, err, sizeof err) != 0) { fprintf(stderr, "%s\n", err); _exit(2); }
    }
    study_close(&r);
    _exit(0);
}

int main(void) {
    char dir[] = "/tmp/test_csv_lock_XXXXXX";
    if (!mkdtemp(dir)) { perror("mkdtemp"); return 1; }
    for (int t = 0; t < TRIES; t++) {
        char path[300];
        snprintf(path, sizeof path, "%s/sub%d/study.csv", dir, t);     /* new, in a folder not there yet */
        int p[2];
        if (pipe(p) != 0) { perror("pipe"); return 1; }
        pid_t pid[WRITERS];
        for (int w = 0; w < WRITERS; w++) {
            pid[w] = fork();
            if (pid[w] == 0) {
                close(p[1]);
                writer(path, p[0], w);
            }
        }
        close(p[0]);
        close(p[1]);    /* releases every writer at once */
        int ok = 1;
        for (int w = 0; w < WRITERS; w++) {
            int st = 0;
            waitpid(pid[w], &st, 0);
            ok &= WIFEXITED(st) && WEXITSTATUS(st) == 0;
        }
        EXPECT(ok, "try %d: every writer exited 0", t);
        size_t len;
        char *text = test_slurp(path, &len);
        int headers = 0;
        for (char *s = text; s && (s = strstr(s, "run_id,timestamp,")); s++) headers++;
        EXPECT(headers == 1, "try %d: %d header lines", t, headers);
        free(text);
        study_rows_t rows;
        char err[512];
        EXPECT(study_read(path, &rows, err, sizeof err) == 0, "try %d: read: %s", t, err);
        EXPECT(rows.n == WRITERS * ROWS && rows.bad_rows == 0, "try %d: %d whole rows (want %d), %d bad", t, rows.n,
               WRITERS * ROWS, rows.bad_rows);
        int seen[WRITERS][ROWS] = {{0}};
        for (int i = 0; i < rows.n; i++) {
            int w, k;
            if (sscanf(rows.row[i].run_id, "w%d-%d", &w, &k) == 2 && w >= 0 && w < WRITERS && k >= 0 && k < ROWS &&
                rows.row[i].epoch == k && strlen(rows.row[i].env.nccl_transport) == 255)
                seen[w][k]++;
        }
        int each_once = 1;
        for (int w = 0; w < WRITERS; w++)
            for (int k = 0; k < ROWS; k++) each_once &= seen[w][k] == 1;
        EXPECT(each_once, "try %d: every row once, intact", t);
        study_rows_free(&rows);
    }
    test_scratch_remove(dir);
    return test_summary();
}
