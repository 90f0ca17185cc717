/* test_results.c — the results CSV read back with libcsv's parser: every field and its quoting, empty cells,
 * header checks on append, repair of a missing final newline; and the nccl-tests-style table. */
#define _POSIX_C_SOURCE 200809L
#include "study/writer.h"
#include "study/reader.h"
#include "bench/table.h"
#include "test.h"

#include <csv.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAXF 96
#define MAXR 16

/* What libcsv's parser saw: rows of fields, copied out of the callbacks. */
typedef struct {
    char *f[MAXR][MAXF];
    int nf[MAXR];
    int nrows;
} parsed_t;

static void on_field(void *s, size_t len, void *data) {
    parsed_t *p = data;
    if (p->nrows >= MAXR || p->nf[p->nrows] >= MAXF) return;
    char *c = malloc(len + 1);
    memcpy(c, s ? s : "", len);
    c[len] = '\0';
    p->f[p->nrows][p->nf[p->nrows]++] = c;
}

static void on_row(int term, void *data) {
    (void)term;
    parsed_t *p = data;
    if (p->nrows < MAXR) p->nrows++;
}

static void parsed_free(parsed_t *p) {
    for (int r = 0; r < MAXR; r++)
        for (int i = 0; i < p->nf[r]; i++) free(p->f[r][i]);
    memset(p, 0, sizeof *p);
}

static int parse_text(const char *text, size_t len, parsed_t *p) {
    struct csv_parser cp;
    memset(p, 0, sizeof *p);
    if (csv_init(&cp, CSV_STRICT | CSV_STRICT_FINI) != 0) return -1;
    size_t n = csv_parse(&cp, text, len, on_field, on_row, p);
    int rc = n == len ? 0 : -1;
    if (csv_fini(&cp, on_field, on_row, p) != 0) rc = -1;
    csv_free(&cp);
    return rc;
}


static int parse_file(const char *path, parsed_t *p) {
    size_t len;
    char *text = test_slurp(path, &len);
    int rc = text ? parse_text(text, len, p) : -1;
    free(text);
    return rc;
}

static void write_file(const char *path, const char *text) {
    FILE *f = fopen(path, "wb");
    fputs(text, f);
    fclose(f);
}

static const study_env_t env = {
    .gpu_name = "NVIDIA H100 80GB HBM3, \"SXM5\"",     /* a comma: quoted; quotes: not a name's, written as '_' */
    .driver = "580.65.06", .cuda = "13.0", .cudnn = "9.12.0", .nccl = "2.27.7",
    .host = "node-1", .git_commit = "abc1234-dirty",
};

static study_row_t full_row(int epoch) {
    study_row_t r;
    study_row_init(&r);
    r.strategy = "nccl", r.model = "resnet18", r.dataset = "fashion-mnist", r.math = "tf32", r.init = "normal";
    r.grad_dtype = "bf16", r.seed = 18446744073709551615ULL, r.gpus = 2, r.global_batch = 512, r.per_gpu_batch = 256;
    r.lr = 0.2, r.momentum = 0.9, r.weight_decay = 5e-4, r.epoch = epoch, r.phase = epoch == 1 ? "warmup" : "steady";
    r.lr_schedule = "cosine", r.warmup_epochs = 1.5, r.lr_epochs = 10, r.lr_scaling = "sqrt", r.lr_base_batch = 256;
    r.optimizer = "lars", r.gns_every = 25, r.target_acc = 0.92, r.eval_s = 0.125, r.stats.lr_now = 0.1875;
    r.stats.gns_small_sq = 2.5, r.stats.gns_big_sq = 1.25, r.stats.gns_b_small = 128, r.stats.gns_b_big = 256;
    r.stats.steps = 117, r.stats.epoch_s = 12.3456789, r.images_per_s = 41234.5, r.stats.step_ms = 45.678912;
    r.stats.train_loss = 0.25, r.stats.train_acc = 0.91, r.test_acc = 0.9, r.status = "ok";
    r.tokens_per_s = 41234.5 * 1024, r.test_loss = 3.25;     /* a language model's: never both, but each written */
    r.stats.loss_scale = 32768, r.stats.skipped_steps = 3;
    r.reason = "x.cu:1: f(a, \"b\") -> out of memory", r.mem_free_mb = 812, r.mem_total_mb = 81559;
    r.stats.compute_ms = 40.5, r.stats.comm_ms = 6.25, r.stats.exposed_comm_ms = 1.5, r.stats.idle_ms = 3.67891;
    r.stats.bytes_per_step = 44696872, r.stats.algbw_gbs = 120.5, r.stats.busbw_gbs = 120.5;
    snprintf(r.stats.nccl_algo, sizeof r.stats.nccl_algo, "Ring");
    r.stats.replicas_identical = 1, r.stats.peak_mem_mb = 2048.5, r.nodes = 2, r.gpus_per_node = 1, r.timeout_s = 300;
    r.env = env;
    snprintf(r.env.nccl_transport, sizeof r.env.nccl_transport, "NCCL_HOSTID=h-node0|h-node1;NCCL_SOCKET_IFNAME=lo,eth0");
    snprintf(r.env.nccl_env, sizeof r.env.nccl_env, "NCCL_ALGO=Ring;NCCL_NVLS_ENABLE=0");
    snprintf(r.run_id, sizeof r.run_id, "20260101T000000Z-3-4242");
    snprintf(r.timestamp, sizeof r.timestamp, "2026-01-01T00:00:%02dZ", epoch);
    return r;
}

/* The expected cells of full_row(2), in column order. */
static const char *const full_cells[] = {
    "20260101T000000Z-3-4242", "2026-01-01T00:00:02Z", "nccl", "resnet18", "fashion-mnist",
    "18446744073709551615", "2", "512", "256", "0.2", "0.9", "0.0005", "tf32", "bf16", "normal", "cosine", "1.5", "10",
    "sqrt", "256", "lars", "25", "0.92", "2", "steady", "117", "12.345679", "41234.5", "45.6789", "0.25", "0.91", "0.9",
    "0.125000", "0.1875", "2.5", "1.25", "128", "256", "32768", "3", "ok", "x.cu:1: f(a, \"b\") -> out of memory",
    "40.5", "6.25", "1.5", "3.67891", "44696872", "120.5", "120.5", "Ring", "identical",
    "", "", "", "", "", "", "", "", "2048.5", "812", "81559", "2", "1",
    "NCCL_HOSTID=h-node0|h-node1;NCCL_SOCKET_IFNAME=lo,eth0", "NCCL_ALGO=Ring;NCCL_NVLS_ENABLE=0", "300",
    "NVIDIA H100 80GB HBM3, _SXM5_", "580.65.06", "13.0", "9.12.0", "2.27.7", "node-1", "abc1234-dirty", "4.22241e+07",
    "3.25",
};

static const char *const brief_columns =
    "run_id,timestamp,strategy,model,dataset,seed,gpus,global_batch,per_gpu_batch,lr,momentum,weight_decay,math,"
    "grad_dtype,init,lr_schedule,warmup_epochs,lr_epochs,lr_scaling,lr_base_batch,optimizer,gns_every,target_acc,"
    "epoch,phase,steps,epoch_s,images_per_s,step_ms,train_loss,train_acc,test_acc,eval_s,lr_now,gns_small_sq,gns_big_sq,"
    "gns_b_small,gns_b_big,loss_scale,skipped_steps,status,reason,"
    "compute_ms,comm_ms,exposed_comm_ms,idle_ms,bytes_per_step,algbw_gbs,busbw_gbs,nccl_algo,replicas,stages,"
    "micro_batches,schedule,split,bubble,bubble_ideal,stage_busy_ms,stage_balance,peak_mem_mb,mem_free_mb,"
    "mem_total_mb,nodes,gpus_per_node,nccl_transport,nccl_env,timeout_s,gpu_name,driver,cuda,cudnn,nccl,host,"
    "git_commit,tokens_per_s,test_loss";
#define NCOLS 76

static void expect_full_row(const parsed_t *p, int row) {
    int n = (int)(sizeof full_cells / sizeof full_cells[0]);
    EXPECT(p->nf[row] == n, "row %d has %d fields, want %d", row, p->nf[row], n);
    for (int i = 0; i < n && i < p->nf[row]; i++)
        EXPECT(strcmp(p->f[row][i], full_cells[i]) == 0, "row %d column %d (%s): got '%s' want '%s'", row, i + 1,
               study_columns[i], p->f[row][i], full_cells[i]);
}

static void test_columns(void) {
    char joined[2048] = "";
    for (int i = 0; study_columns[i]; i++) {
        if (i) strcat(joined, ",");
        strcat(joined, study_columns[i]);
    }
    EXPECT(strcmp(joined, brief_columns) == 0, "column order:\n%s", joined);
    EXPECT(study_ncolumns() == NCOLS, "%d columns: %d", NCOLS, study_ncolumns());
    EXPECT((int)(sizeof full_cells / sizeof full_cells[0]) == study_ncolumns(), "test table matches");
}

static void test_format(void) {
    study_row_t r = full_row(2);
    char line[2048];
    int n = study_format(&r, line, sizeof line);
    EXPECT(n > 0 && (size_t)n == strlen(line), "format length %d", n);
    EXPECT(strchr(line, '\n') == NULL, "no newline in a formatted row");
    EXPECT(strstr(line, ",\"NVIDIA H100 80GB HBM3, _SXM5_\",") != NULL, "quoted gpu name: %s", line);
    EXPECT(strstr(line, ",0.2,0.9,0.0005,") != NULL, "bare numbers: %s", line);
    parsed_t p;
    EXPECT(parse_text(line, strlen(line), &p) == 0 && p.nrows == 1, "formatted row parses");
    expect_full_row(&p, 0);
    parsed_free(&p);

    char tiny[16];
    EXPECT(study_format(&r, tiny, sizeof tiny) == -1 && tiny[0] == '\0', "too small a buffer is refused");

    /* Not-applicable values: negative numbers and NULL/empty strings are empty cells; an empty env too. */
    study_row_t e;
    study_row_init(&e);
    e.seed = 7, e.momentum = 0, e.epoch = 1, e.stats.steps = 0, e.stats.train_loss = NAN, e.status = "diverged";
    e.reason = "the loss is not finite", e.stats.stages = 4, e.stats.micro_batches = 8, e.mem_free_mb = 0;
    snprintf(e.stats.schedule, sizeof e.stats.schedule, "gpipe");
    snprintf(e.stats.split, sizeof e.stats.split, "0-3,4-7");
    snprintf(e.stats.stage_busy_ms, sizeof e.stats.stage_busy_ms, "1.5;2.25");
    e.stats.bubble = 0.27, e.stats.bubble_ideal = 0.2727, e.stats.stage_balance = 1.0375;
    n = study_format(&e, line, sizeof line);
    EXPECT(parse_text(line, strlen(line), &p) == 0 && p.nrows == 1 && p.nf[0] == NCOLS, "sparse row: %s", line);
    if (p.nf[0] == NCOLS) {
        static const struct { int col; const char *want; } cells[] = {
            {0, ""}, {2, ""}, {5, "7"}, {6, ""}, {9, ""}, {10, "0"}, {11, ""}, {13, ""}, {23, "1"}, {25, "0"},
            {26, ""}, {28, ""}, {29, "nan"}, {30, ""}, {38, ""}, {39, ""}, {40, "diverged"},
            {41, "the loss is not finite"}, {45, ""}, {46, ""}, {49, ""}, {50, ""}, {51, "4"}, {52, "8"},
            {53, "gpipe"}, {54, "0-3,4-7"}, {55, "0.27"}, {56, "0.2727"}, {57, "1.5;2.25"}, {58, "1.038"}, {59, ""},
            {60, "0"}, {61, ""}, {62, ""}, {63, ""}, {64, ""}, {65, ""}, {66, ""}, {72, ""},
        };
        for (size_t i = 0; i < sizeof cells / sizeof cells[0]; i++)
            EXPECT(strcmp(p.f[0][cells[i].col], cells[i].want) == 0, "column %s: got '%s' want '%s'",
                   study_columns[cells[i].col], p.f[0][cells[i].col], cells[i].want);
    }
    parsed_free(&p);
}

static char tmp_root[256];

static void path_in_tmp(char *buf, size_t len, const char *rel) {
    snprintf(buf, len, "%s/%s", tmp_root, rel);
}

static void test_write_and_append(void) {
    char path[512], err[512];
    path_in_tmp(path, sizeof path, "new/dir/study.csv");
    study_csv_t r;
    EXPECT(study_open(&r, path, err, sizeof err) == 0, "open creates parent dirs: %s", err);
    for (int e = 1; e <= 2; e++) {
        study_row_t row = full_row(e);
        EXPECT(study_write(&r, &row, err, sizeof err) == 0, "write: %s", err);
    }
    study_close(&r);

    /* Reopen with the same header: rows append, the header is not repeated. */
    EXPECT(study_open(&r, path, err, sizeof err) == 0, "reopen: %s", err);
    study_row_t row = full_row(2);
    EXPECT(study_write(&r, &row, err, sizeof err) == 0, "append: %s", err);
    study_close(&r);

    parsed_t p;
    EXPECT(parse_file(path, &p) == 0, "file parses");
    EXPECT(p.nrows == 4, "header + 3 rows: %d", p.nrows);
    EXPECT(p.nf[0] == NCOLS, "header fields %d", p.nf[0]);
    for (int i = 0; i < p.nf[0] && i < NCOLS; i++)
        EXPECT(strcmp(p.f[0][i], study_columns[i]) == 0, "header column %d: %s", i + 1, p.f[0][i]);
    EXPECT(p.nf[1] == NCOLS && strcmp(p.f[1][24], "warmup") == 0 && strcmp(p.f[1][23], "1") == 0, "epoch 1 row");
    expect_full_row(&p, 2);
    expect_full_row(&p, 3);
    parsed_free(&p);

    /* An existing empty file gets the header. */
    path_in_tmp(path, sizeof path, "empty.csv");
    write_file(path, "");
    EXPECT(study_open(&r, path, err, sizeof err) == 0, "empty file: %s", err);
    study_close(&r);
    EXPECT(parse_file(path, &p) == 0 && p.nrows == 1 && p.nf[0] == NCOLS, "header written to an empty file");
    parsed_free(&p);

    EXPECT(study_write(&r, &row, err, sizeof err) == -1, "write after close fails");
}

static void test_header_mismatch(void) {
    char path[512], err[512];
    study_csv_t r;
    /* Column 5 renamed: the message names it and the file is left byte-identical. */
    char old[2048];
    snprintf(old, sizeof old, "%s\nsome,old,row\n", brief_columns);
    char *at = strstr(old, ",dataset,");
    memmove(at + 14, at + 9, strlen(at + 9) + 1);
    memcpy(at, ",dataset_name,", 14);
    path_in_tmp(path, sizeof path, "old.csv");
    write_file(path, old);
    EXPECT(study_open(&r, path, err, sizeof err) == 2, "mismatch returns 2");
    char want[1024];
    snprintf(want, sizeof want, "%s: existing header differs from this version's columns (first difference at "
             "column 5: 'dataset_name' vs 'dataset'); write to a new --out file", path);
    EXPECT(strcmp(err, want) == 0, "got '%s'", err);
    EXPECT(r.f == NULL, "no handle on failure");
    size_t len;
    char *after = test_slurp(path, &len);
    EXPECT(after && len == strlen(old) && memcmp(after, old, len) == 0, "file unchanged");
    free(after);

    /* A header with one column fewer (an older version): the first missing column is named. */
    snprintf(old, sizeof old, "%s", brief_columns);
    *strrchr(old, ',') = '\0';
    strcat(old, "\n");
    write_file(path, old);
    EXPECT(study_open(&r, path, err, sizeof err) == 2 &&
           strstr(err, "(first difference at column 76: '(none)' vs 'test_loss')") != NULL, "got '%s'", err);
    /* One column more. */
    snprintf(old, sizeof old, "%s,extra\n", brief_columns);
    write_file(path, old);
    EXPECT(study_open(&r, path, err, sizeof err) == 2 &&
           strstr(err, "(first difference at column 77: 'extra' vs '(none)')") != NULL, "got '%s'", err);
    after = test_slurp(path, &len);
    EXPECT(after && strcmp(after, old) == 0, "file unchanged");
    free(after);
    /* Something that is not our CSV at all. */
    write_file(path, "hello world\n");
    EXPECT(study_open(&r, path, err, sizeof err) == 2 && strstr(err, "column 1: 'hello world' vs 'run_id'"),
           "got '%s'", err);
    /* A directory where the file should be. */
    path_in_tmp(path, sizeof path, "new");
    EXPECT(study_open(&r, path, err, sizeof err) == 2 && strstr(err, path) != NULL, "directory: '%s'", err);
}

static void test_missing_newline(void) {
    char path[512], err[512];
    study_csv_t r;
    study_row_t row = full_row(2);
    char line[2048];
    study_format(&row, line, sizeof line);

    /* A whole row whose newline never made it to disk. */
    char text[8192];
    snprintf(text, sizeof text, "%s\n%s", brief_columns, line);
    path_in_tmp(path, sizeof path, "cut.csv");
    write_file(path, text);
    EXPECT(study_open(&r, path, err, sizeof err) == 0, "open: %s", err);
    EXPECT(study_write(&r, &row, err, sizeof err) == 0, "write: %s", err);
    study_close(&r);
    parsed_t p;
    EXPECT(parse_file(path, &p) == 0 && p.nrows == 3, "header + 2 rows: %d", p.nrows);
    expect_full_row(&p, 1);
    expect_full_row(&p, 2);
    parsed_free(&p);

    /* A writer killed mid-row: the partial line stays a short record of its own, the new row is intact. */
    snprintf(text, sizeof text, "%s\n%s\n20260101T000000Z-9-1,2026-01-", brief_columns, line);
    write_file(path, text);
    EXPECT(study_open(&r, path, err, sizeof err) == 0, "open: %s", err);
    EXPECT(study_write(&r, &row, err, sizeof err) == 0, "write: %s", err);
    study_close(&r);
    EXPECT(parse_file(path, &p) == 0 && p.nrows == 4, "header + row + partial + row: %d", p.nrows);
    EXPECT(p.nf[2] == 2, "partial record keeps its 2 fields: %d", p.nf[2]);
    expect_full_row(&p, 1);
    expect_full_row(&p, 3);
    parsed_free(&p);

    /* Killed inside a quoted cell (the GPU name has a comma): the quote is closed before the newline, so the
     * next row is not swallowed into that cell. */
    char cut[2048];
    snprintf(cut, sizeof cut, "%s", line);
    *strstr(cut, "HBM3, ") = '\0';
    snprintf(text, sizeof text, "%s\n%s\n%s", brief_columns, line, cut);
    write_file(path, text);
    EXPECT(study_open(&r, path, err, sizeof err) == 0, "open: %s", err);
    EXPECT(study_write(&r, &row, err, sizeof err) == 0, "write: %s", err);
    study_close(&r);
    EXPECT(parse_file(path, &p) == 0 && p.nrows == 4, "header + row + partial + row: %d", p.nrows);
    EXPECT(p.nf[2] == 68, "partial record ends at the cut gpu_name: %d fields", p.nf[2]);
    expect_full_row(&p, 1);
    expect_full_row(&p, 3);
    parsed_free(&p);

    /* Only a header, without its newline. */
    write_file(path, brief_columns);
    EXPECT(study_open(&r, path, err, sizeof err) == 0, "open: %s", err);
    EXPECT(study_write(&r, &row, err, sizeof err) == 0, "write: %s", err);
    study_close(&r);
    EXPECT(parse_file(path, &p) == 0 && p.nrows == 2 && p.nf[0] == NCOLS, "header repaired");
    expect_full_row(&p, 1);
    parsed_free(&p);
}

static char *capture(void (*fn)(FILE *, const study_row_t *, int), const study_row_t *rows, int n) {
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    fn(f, rows, n);
    fclose(f);
    return text;
}

static void header_fn(FILE *f, const study_row_t *rows, int n) { (void)rows; (void)n; table_header(f); }
static void row_fn(FILE *f, const study_row_t *rows, int n) { (void)n; table_row(f, rows); }

static void test_table(void) {
    study_row_t rows[3] = {full_row(1), full_row(2), full_row(3)};
    rows[1].stats.epoch_s = 10.0;
    rows[2].stats.epoch_s = 12.0;
    rows[2].test_acc = 0.925;
    char *h = capture(header_fn, rows, 0);
    EXPECT(h[0] == '#', "header starts with '#': %s", h);
    static const char *const cols[] = {"gpus", "gbatch", "lr", "math", "grads", "epoch", "phase", "epoch_s", "img/s",
                                       "loss", "train_acc", "test_acc", "status"};
    for (size_t i = 0; i < sizeof cols / sizeof cols[0]; i++)
        EXPECT(strstr(h, cols[i]) != NULL, "header names %s", cols[i]);
    char *row = capture(row_fn, &rows[1], 1);
    EXPECT(strlen(row) == strlen(h), "row and header line up: %zu vs %zu\n%s%s", strlen(row), strlen(h), h, row);
    EXPECT(strstr(row, "steady") && strstr(row, "10.000") && strstr(row, "512"), "row: %s", row);
    EXPECT(strstr(row, "  tf32  bf16 ") != NULL, "math and gradient dtype: %s", row);
    free(row);
    study_row_t na = rows[0];
    na.test_acc = -1;
    na.grad_dtype = "";     /* a strategy without a gradient reduction */
    row = capture(row_fn, &na, 1);
    EXPECT(strlen(row) == strlen(h) && strstr(row, " - ") != NULL, "n/a printed as '-': %s", row);
    EXPECT(strstr(row, "  tf32     - ") != NULL, "no gradient dtype printed as '-': %s", row);
    free(row);
    free(h);

    char *s = capture(table_summary, rows, 3);
    EXPECT(s[0] == '#', "summary is a comment line: %s", s);
    EXPECT(strstr(s, "median 11.000") && strstr(s, "10.000-12.000") && strstr(s, "over 2 steady epochs"),
           "summary: %s", s);
    EXPECT(strstr(s, "test_acc 0.9250") != NULL, "final test accuracy: %s", s);
    EXPECT(strstr(s, "# summary gpus 2 gbatch 512 lr 0.2 math tf32 grads bf16: ") == s, "precision named: %s", s);
    free(s);
    rows[0].grad_dtype = "";
    s = capture(table_summary, rows, 1);
    EXPECT(strstr(s, "lr 0.2 math tf32: ") != NULL, "no grads without a gradient reduction: %s", s);
    free(s);
    /* the median, as the report's: steady epochs 10, 12 and 20 s give 12 (their mean would be 14) */
    study_row_t three[4] = {rows[0], rows[1], rows[2], rows[2]};
    three[3].stats.epoch_s = 20.0;
    s = capture(table_summary, three, 4);
    EXPECT(strstr(s, "median 12.000 min-max 10.000-20.000") && strstr(s, "over 3 steady epochs"), "median: %s", s);
    free(s);
    s = capture(table_summary, rows, 1);
    EXPECT(strstr(s, "no steady epoch") != NULL, "warmup only: %s", s);
    free(s);
    s = capture(table_summary, rows, 0);
    EXPECT(strstr(s, "no steady epoch") != NULL, "no rows: %s", s);
    free(s);
}

/* The reader: what the writer wrote reads back cell for cell; an older file's header, by name, in another order, with
 * a column this version dropped; short, unparsable and id-less records skipped and counted; not a CSV of ours. */
static void test_read(void) {
    char path[512], err[512];
    path_in_tmp(path, sizeof path, "read/study.csv");
    study_csv_t w;
    EXPECT(study_open(&w, path, err, sizeof err) == 0, "open: %s", err);
    study_row_t rows[3] = {full_row(1), full_row(2), full_row(3)};
    rows[2].status = "oom", rows[2].reason = "cudaMalloc: out of memory, \"quoted\"", rows[2].mem_free_mb = 1.5;
    rows[2].mem_total_mb = 143771, rows[2].stats.train_loss = NAN, rows[2].stats.replicas_identical = 0;
    rows[2].stats.steps = 0, rows[0].stats.steps = -1;   /* an INT column without a range: 0 and empty read apart */
    rows[1].reason = NULL;
    for (int i = 0; i < 3; i++) EXPECT(study_write(&w, &rows[i], err, sizeof err) == 0, "write: %s", err);
    study_close(&w);
    study_rows_t t;
    EXPECT(study_read(path, &t, err, sizeof err) == 0, "read: %s", err);
    EXPECT(t.n == 3 && t.bad_rows == 0 && t.missing == 0 && t.unknown == 0, "3 rows: %d, bad %d, missing %d", t.n,
           t.bad_rows, t.missing);
    for (int i = 0; i < t.n && i < 3; i++) {
        char want[4096], got[4096];
        study_format(&rows[i], want, sizeof want);
        study_format(&t.row[i], got, sizeof got);
        EXPECT(strcmp(want, got) == 0, "row %d reads back as written:\n%s\n%s", i + 1, want, got);
    }
    if (t.n == 3) {
        EXPECT(isnan(t.row[2].stats.train_loss) && t.row[2].stats.replicas_identical == 0 &&
               t.row[2].stats.steps == 0 && t.row[0].stats.steps == -1 && strcmp(t.row[2].reason, "cudaMalloc: out "
               "of memory, \"quoted\"") == 0 && t.row[1].reason[0] == '\0', "types: nan, DIFFER, 0 vs empty, quoted");
        EXPECT(t.row[0].seed == 18446744073709551615ULL && strcmp(t.row[0].env.gpu_name, "NVIDIA H100 80GB HBM3, _SXM5_") == 0, "seed, env");
    }
    study_rows_free(&t);

    /* An older version's file: fewer columns, another order, a column since dropped; one record cut short, one with
     * a number that does not parse, one without a run_id. */
    path_in_tmp(path, sizeof path, "read/old.csv");
    write_file(path, "strategy,run_id,gpus,epoch,phase,epoch_s,status,dropped_column,nccl_algo\n"
                     "nccl,A-1-1,2,2,steady,1.25,ok,x,Ring\n"
                     "nccl,A-1-1,2,3,steady\n"
                     "nccl,A-1-1,2,three,steady,1.5,ok,x,Ring\n"
                     "nccl,,2,3,steady,1.5,ok,x,Ring\n"
                     "single,B-1-1,1,0,setup,,failed,,\n");
    EXPECT(study_read(path, &t, err, sizeof err) == 0, "old file: %s", err);
    EXPECT(t.n == 2 && t.bad_rows == 3 && t.unknown == 1 && t.missing == NCOLS - 8, "old: %d rows, %d bad, %d unknown, "
           "%d missing", t.n, t.bad_rows, t.unknown, t.missing);
    if (t.n == 2) {
        const study_row_t *a = &t.row[0], *b = &t.row[1];
        EXPECT(strcmp(a->strategy, "nccl") == 0 && strcmp(a->run_id, "A-1-1") == 0 && a->gpus == 2 && a->epoch == 2 &&
               a->stats.epoch_s == 1.25 && strcmp(a->stats.nccl_algo, "Ring") == 0, "old row's cells by name");
        EXPECT(a->lr == -1 && a->per_gpu_batch == -1 && a->seed == 0 && strcmp(a->model, "") == 0 &&
               a->reason[0] == '\0' && a->timeout_s == -1 && a->env.gpu_name[0] == '\0', "missing columns: -1 and empty");
        EXPECT(b->epoch == 0 && b->stats.epoch_s == -1 && strcmp(b->status, "failed") == 0, "setup row");
    }
    study_rows_free(&t);

    write_file(path, "hello,world\n1,2\n");
    EXPECT(study_read(path, &t, err, sizeof err) == 2 && strstr(err, "no run_id column"), "not ours: %s", err);
    write_file(path, "");
    EXPECT(study_read(path, &t, err, sizeof err) == 2 && strstr(err, "empty file"), "empty: %s", err);
    path_in_tmp(path, sizeof path, "read/none.csv");
    EXPECT(study_read(path, &t, err, sizeof err) == 2 && strstr(err, "cannot read"), "missing: %s", err);
}

/* The committed fixture (an older CSV in future versions) reads whole. */
static void test_read_fixture(void) {
    study_rows_t t;
    char err[512];
    EXPECT(study_read(FIXTURES "/study.csv", &t, err, sizeof err) == 0, "fixture: %s", err);
    EXPECT(t.n > 100 && t.bad_rows == 0, "fixture rows %d, bad %d", t.n, t.bad_rows);
    study_rows_free(&t);
    /* A committed study of an older version (47 columns: no grad_dtype, idle_ms, nodes, nccl_env, stage_balance,
     * loss_scale, tokens_per_s, test_loss, ...) reads whole. */
    const char *old = FIXTURES "/../../results/study-h200x2-2026-11-22/study.csv";
    EXPECT(study_read(old, &t, err, sizeof err) == 0, "committed study: %s", err);
    EXPECT(t.n == 234 && t.bad_rows == 0 && t.missing == 29 && t.unknown == 0, "committed study: %d rows, %d bad, "
           "%d missing", t.n, t.bad_rows, t.missing);
    int ok = 0;
    for (int i = 0; i < t.n; i++) ok += strcmp(t.row[i].status, "ok") == 0 && t.row[i].stats.epoch_s > 0;
    EXPECT(ok > 200, "ok rows with a time: %d", ok);
    study_rows_free(&t);
}

static void count_row(const study_row_t *row, void *ctx) {
    (void)row;
    (*(int *)ctx)++;
}
static int want_none(const char *run_id, void *ctx) {
    (void)run_id, (void)ctx;
    return 0;
}

/* One row at a time: every row handed on; a second pass limited to the first's bytes reads the same rows though the
 * file has grown since (a sweep appending), and rows its want declines are not handed on. */
static void test_pass(void) {
    char path[512], err[512], cmd[1200];
    path_in_tmp(path, sizeof path, "pass.csv");
    snprintf(cmd, sizeof cmd, "cp '%s/study.csv' '%s'", FIXTURES, path);
    EXPECT(system(cmd) == 0, "copy the fixture");
    FILE *f = fopen(path, "rb");
    study_pass_t p, q;
    int n = 0, m = 0;
    EXPECT(f && study_pass(f, path, -1, NULL, count_row, &n, &p, err, sizeof err) == 0, "pass: %s", err);
    EXPECT(n > 100 && n == p.rows && p.bad_rows == 0, "rows handed on %d, counted %d", n, p.rows);
    snprintf(cmd, sizeof cmd, "tail -n 3 '%s/study.csv' >> '%s'", FIXTURES, path);
    EXPECT(system(cmd) == 0, "append");
    EXPECT(f && study_pass(f, path, p.bytes, NULL, count_row, &m, &q, err, sizeof err) == 0, "again: %s", err);
    EXPECT(m == n && q.bytes == p.bytes, "the same bytes again: %d rows (%d), %lld bytes", m, n, q.bytes);
    m = 0;
    EXPECT(f && study_pass(f, path, -1, want_none, count_row, &m, &q, err, sizeof err) == 0, "declined: %s", err);
    EXPECT(m == 0 && q.bytes > p.bytes, "rows declined: %d handed on", m);
    if (f) fclose(f);
}

int main(void) {
    snprintf(tmp_root, sizeof tmp_root, "%s/test_results.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(tmp_root)) { perror("mkdtemp"); return 1; }
    test_columns();
    test_format();
    test_write_and_append();
    test_header_mismatch();
    test_missing_newline();
    test_table();
    test_read();
    test_read_fixture();
    test_pass();
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp_root);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", tmp_root);
    return test_summary();
}
