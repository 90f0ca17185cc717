/* fuzz_report.c — a seeded fuzz test of `scaling report`: each case is a committed CSV (results/, tests/fixtures/)
 * mutated (cells replaced by payloads aimed at gnuplot and the shell: quotes, backslashes, newlines, system(,
 * backticks, ;, |; extreme numbers; bytes flipped, inserted, cut; lines doubled, dropped, swapped; a BOM, CRLF),
 * under a file name and an output folder that may hold the same payloads, with a mutated all-reduce CSV beside it at
 * times, and gnuplot on the PATH for one case in SCALING_FUZZ_GNUPLOT (default 5). Every case must exit 0 or 2
 * within CASE_DEADLINE_S (never a signal, never a hang); exit 2 must write nothing and say one line; nothing but the
 * output folder may appear; no temporary file may be left; and a canary folder beside the cases is hashed before and
 * after every case. Bounded by SCALING_FUZZ_SECONDS (default 60).
 *
 *   fuzz_report SCALING ROOT        (SCALING: `scaling`, of either build; ROOT: the source tree)
 *   SCALING_FUZZ_SEED=N replays a run (the seed is printed first); SCALING_FUZZ_CASE=K runs its case K alone. */
#define _GNU_SOURCE     /* nftw, mkdtemp */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#define CASE_DEADLINE_S 30
#define MAX_FAILURES 3

typedef struct {
    char *s;
    size_t n, cap;
} buf_t;

static void buf_put(buf_t *b, size_t at, size_t cut, const char *s, size_t n) {
    if (at > b->n) at = b->n;
    if (cut > b->n - at) cut = b->n - at;
    if (b->n - cut + n + 1 > b->cap) {
        b->cap = (b->n - cut + n + 1) * 2;
        b->s = realloc(b->s, b->cap);
        if (!b->s) abort();
    }
    memmove(b->s + at + n, b->s + at + cut, b->n - at - cut);
    memcpy(b->s + at, s, n);
    b->n = b->n - cut + n;
    b->s[b->n] = '\0';
}

// ---- the generator: splitmix64, one stream per case so that a case replays alone

static uint64_t rnd_next(uint64_t *x) {
    uint64_t z = (*x += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
static size_t rnd(uint64_t *x, size_t n) { return n ? (size_t)(rnd_next(x) % n) : 0; }

/* What a cell, a file name or a folder may be set to. "CANARY" is replaced by the canary folder's path. */
static const char *const PAYLOADS[] = {
    "x'\n!touch PWNED\n#", "x\" . system(\"touch PWNED\") . \"", "`touch PWNED`", "$(touch PWNED)",
    "a;touch PWNED", "a|touch PWNED", "a\\b", "\\", "\"", "'", "x\nsystem('touch PWNED')\n",
    "'; system(\"touch CANARY/hit\"); '", "\"; system(\"touch CANARY/hit\"); \"", "!touch CANARY/hit",
    "x\r\ny", "%s%n%s", "../../CANARY/REPORT.md", "\xef\xbb\xbf", "\xc3\xa9t\xc3\xa9", "\x01\x7f\x1b[2J", "",
    " ", "nan", "-nan", "inf", "-inf", "0", "-1", "-0", "2147483647", "2147483648", "-2147483648",
    "99999999999999999999999", "1e308", "1e309", "4.9e-324", "0x10", "1,2", "\"\"", "a\"b", "set output 'CANARY/x'",
    "load 'CANARY/x'", "\\n", "\\\n", "${HOME}", "*", "?",
};
#define NPAY (sizeof PAYLOADS / sizeof *PAYLOADS)

/* PAYLOADS[i] with CANARY replaced, into out. */
static void payload(char *out, size_t len, size_t i, const char *canary) {
    const char *p = PAYLOADS[i], *c = strstr(p, "CANARY");
    if (c) snprintf(out, len, "%.*s%s%s", (int)(c - p), p, canary, c + 6);
    else snprintf(out, len, "%s", p);
}

/* Start and end of line k of b (k past the last: the last). */
static void line_at(const buf_t *b, size_t k, size_t *s, size_t *e) {
    size_t i = 0;
    for (size_t l = 0; l < k; l++) {
        const char *nl = memchr(b->s + i, '\n', b->n - i);
        if (!nl || (size_t)(nl - b->s) + 1 >= b->n) break;
        i = (size_t)(nl - b->s) + 1;
    }
    const char *nl = memchr(b->s + i, '\n', b->n - i);
    *s = i;
    *e = nl ? (size_t)(nl - b->s) : b->n;
}

static size_t lines(const buf_t *b) {
    size_t n = 0;
    for (size_t i = 0; i < b->n; i++) n += b->s[i] == '\n';
    return n ? n : 1;
}

/* One mutation of b. */
static void mutate(buf_t *b, uint64_t *x, const char *canary) {
    char p[1600];
    size_t s, e, nl = lines(b);
    line_at(b, rnd(x, 8) ? 1 + rnd(x, nl - 1 ? nl - 1 : 1) : 0, &s, &e);
    switch (rnd(x, 10)) {
    case 0: case 1: case 2: case 3: {   /* a cell replaced by a payload, CSV-quoted or raw */
        size_t cell = rnd(x, 60), a = s;
        for (size_t c = 0; c < cell && a < e; a++) c += b->s[a] == ',';
        size_t z = a;
        while (z < e && b->s[z] != ',') z++;
        payload(p, sizeof p, rnd(x, NPAY), canary);
        if (rnd(x, 2)) {
            char q[3300];
            size_t k = 0;
            q[k++] = '"';
            for (const char *c = p; *c && k < sizeof q - 3; c++) {
                if (*c == '"') q[k++] = '"';
                q[k++] = *c;
            }
            q[k++] = '"';
            buf_put(b, a, z - a, q, k);
        } else {
            buf_put(b, a, z - a, p, strlen(p));
        }
        break;
    }
    case 4:     /* bytes flipped */
        for (int i = 0, n = 1 + (int)rnd(x, 8); i < n && b->n; i++) b->s[rnd(x, b->n)] ^= (char)(1 + rnd(x, 255));
        break;
    case 5: {   /* a random byte run inserted, or a range cut */
        if (rnd(x, 2)) {
            char r[16];
            size_t n = 1 + rnd(x, sizeof r);
            for (size_t i = 0; i < n; i++) r[i] = (char)rnd_next(x);
            buf_put(b, rnd(x, b->n + 1), 0, r, n);
        } else {
            size_t at = rnd(x, b->n + 1);
            buf_put(b, at, 1 + rnd(x, 200), "", 0);
        }
        break;
    }
    case 6: {   /* a line doubled (many times, at times), or dropped */
        char *l = strndup(b->s + s, e - s + (e < b->n));
        size_t n = strlen(l), times = rnd(x, 4) ? 1 : 1 + rnd(x, 2000);
        if (rnd(x, 3)) for (size_t t = 0; t < times; t++) buf_put(b, s, 0, l, n);
        else buf_put(b, s, n, "", 0);
        free(l);
        break;
    }
    case 7:     /* cut short */
        b->n = rnd(x, b->n + 1);
        b->s[b->n] = '\0';
        break;
    case 8:     /* a BOM, CRLF ends, or a NUL */
        if (rnd(x, 3) == 0) buf_put(b, 0, 0, "\xef\xbb\xbf", 3);
        else if (rnd(x, 2)) {
            for (size_t i = 0; i < b->n; i++)
                if (b->s[i] == '\n') buf_put(b, i, 0, "\r", 1), i++;
        } else buf_put(b, rnd(x, b->n + 1), 0, "\0", 1);
        break;
    default: {  /* a very long cell */
        size_t n = 1000 + rnd(x, 70000);
        char *l = malloc(n);
        memset(l, rnd(x, 2) ? 'A' : '9', n);
        buf_put(b, s + rnd(x, e - s + 1), 0, l, n);
        free(l);
    }
    }
}

// ---- the committed CSVs

typedef struct {
    char *path;
    buf_t text;
    int bench;      /* the all-reduce benchmark's */
} source_t;
static source_t *g_src;     /* only nftw's callback fills it (it takes no context) */
static int g_nsrc;

static int collect(const char *path, const struct stat *st, int type, struct FTW *ftw) {
    (void)ftw;
    size_t n = strlen(path);
    if (type != FTW_F || n < 4 || strcmp(path + n - 4, ".csv") != 0 || st->st_size > (4 << 20)) return 0;
    FILE *f = fopen(path, "rb");
    if (!f) return 0;
    buf_t b = {0};
    char chunk[65536];
    size_t k;
    while ((k = fread(chunk, 1, sizeof chunk, f)) > 0) buf_put(&b, b.n, 0, chunk, k);
    fclose(f);
    int study = b.n > 7 && strncmp(b.s, "run_id,", 7) == 0, bench = b.n > 9 && strncmp(b.s, "strategy,", 9) == 0;
    if (!study && !bench) return free(b.s), 0;
    g_src = realloc(g_src, (size_t)(g_nsrc + 1) * sizeof *g_src);
    g_src[g_nsrc++] = (source_t){strdup(path), b, bench};
    return 0;
}

// ---- the folders

static int rm_one(const char *path, const struct stat *st, int type, struct FTW *ftw) {
    (void)st, (void)ftw;
    return (type == FTW_DP ? rmdir(path) : unlink(path)) != 0 && errno != ENOENT;
}
static void rm_tree(const char *dir) { nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS); }

static uLong g_hash;
static int g_dir_times;
static int hash_one(const char *path, const struct stat *st, int type, struct FTW *ftw) {
    (void)type, (void)ftw;
    g_hash = crc32(g_hash, (const Bytef *)path, (uInt)strlen(path));
    uint64_t t = (uint64_t)st->st_mtim.tv_nsec ^ (uint64_t)st->st_mtime;
    uint64_t meta[3] = {st->st_mode, S_ISDIR(st->st_mode) ? 0 : (uint64_t)st->st_size,
                        S_ISDIR(st->st_mode) && !g_dir_times ? 0 : t};
    g_hash = crc32(g_hash, (const Bytef *)meta, sizeof meta);
    char buf[65536];
    ssize_t k;
    if (S_ISLNK(st->st_mode) && (k = readlink(path, buf, sizeof buf)) > 0)
        g_hash = crc32(g_hash, (Bytef *)buf, (uInt)k);
    int fd = S_ISREG(st->st_mode) ? open(path, O_RDONLY) : -1;
    while (fd >= 0 && (k = read(fd, buf, sizeof buf)) > 0) g_hash = crc32(g_hash, (Bytef *)buf, (uInt)k);
    if (fd >= 0) close(fd);
    return 0;
}
/* The names, kinds, sizes, times and bytes of everything under dir, as one number; a directory's time only with
 * dir_times (a file made and removed there since changes it). */
static uLong tree_hash(const char *dir, int dir_times) {
    g_hash = crc32(0, NULL, 0);
    g_dir_times = dir_times;
    nftw(dir, hash_one, 16, FTW_PHYS);
    return g_hash;
}

static void write_file(const char *path, const buf_t *b) {
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(b->s, 1, b->n, f) != b->n || fclose(f) != 0) {
        fprintf(stderr, "fuzz_report: %s: cannot write: %s\n", path, strerror(errno));
        exit(1);
    }
}

// ---- one case

typedef struct {
    const char *scaling, *work, *canary, *gnuplot_path;
    uint64_t seed;
    int gnuplot_every;
    int rc_count[3], with_gnuplot;
} fuzz_t;

static int g_tmp_seen;
static int tmp_one(const char *path, const struct stat *st, int type, struct FTW *ftw) {
    (void)st, (void)type;
    g_tmp_seen |= ftw->level > 0 && strstr(path + ftw->base, ".tmp-") != NULL;
    return 0;
}
/* 1 when a file under dir has ".tmp-" in its name (study/paths.c's ".<name>.tmp-XXXXXX"): one left behind. */
static int has_tmp(const char *dir) {
    g_tmp_seen = 0;
    nftw(dir, tmp_one, 16, FTW_PHYS);
    return g_tmp_seen;
}

/* A name from a payload: what a file name cannot hold ('/', NUL) dropped; "" where nothing is left. */
static void name_from(char *out, size_t len, const char *p) {
    size_t k = 0;
    for (; *p && k + 1 < len; p++)
        if (*p != '/') out[k++] = *p;
    out[k] = '\0';
}

/* Runs case k in <work>/case; 0, or 1 with what went wrong said (the case's files kept). */
static int run_case(fuzz_t *fz, long k) {
    uint64_t x = fz->seed ^ (0xD1B54A32D192ED03ull * (uint64_t)(k + 1));
    char dir[1100], csv[600], out[600], name[300], path[2400], pl[1600];
    snprintf(dir, sizeof dir, "%s/case", fz->work);
    rm_tree(dir);
    mkdir(dir, 0700);
    int studies = 0;
    for (int i = 0; i < g_nsrc; i++) studies += !g_src[i].bench;
    const source_t *src = NULL;
    for (int i = 0, pick = (int)rnd(&x, (size_t)studies); i < g_nsrc && !src; i++)
        if (!g_src[i].bench && pick-- == 0) src = &g_src[i];
    buf_t b = {0};
    buf_put(&b, 0, 0, src->text.s, src->text.n);
    for (int m = 0, n = 1 + (int)rnd(&x, 6); m < n; m++) mutate(&b, &x, fz->canary);
    /* the file name and the output folder: plain, or a payload in them */
    payload(pl, sizeof pl, rnd(&x, NPAY), fz->canary);
    name_from(name, sizeof name, pl);
    snprintf(csv, sizeof csv, rnd(&x, 3) ? "study.csv" : "s%s.csv", name);
    payload(pl, sizeof pl, rnd(&x, NPAY), fz->canary);
    name_from(name, sizeof name, pl);
    snprintf(out, sizeof out, rnd(&x, 3) ? "out" : "out%s", name);
    snprintf(path, sizeof path, "%s/%s", dir, csv);
    write_file(path, &b);
    int benches = g_nsrc - studies;
    if (benches && rnd(&x, 3) == 0) {   /* the all-reduce benchmark beside it, mutated at times */
        const source_t *ar = NULL;
        for (int i = 0, pick = (int)rnd(&x, (size_t)benches); i < g_nsrc && !ar; i++)
            if (g_src[i].bench && pick-- == 0) ar = &g_src[i];
        b.n = 0;
        buf_put(&b, 0, 0, ar->text.s, ar->text.n);
        if (rnd(&x, 2)) mutate(&b, &x, fz->canary);
        snprintf(path, sizeof path, "%s/%.*s_allreduce.csv", dir, (int)(strlen(csv) - 4), csv);
        write_file(path, &b);
    }
    free(b.s);
    int gnuplot = fz->gnuplot_path && rnd(&x, (size_t)fz->gnuplot_every) == 0;
    fz->with_gnuplot += gnuplot;
    uLong inputs = tree_hash(dir, 0), canary = tree_hash(fz->canary, 1);

    char logf[1100];
    snprintf(logf, sizeof logf, "%s/stderr", fz->work);
    pid_t pid = fork();
    if (pid == 0) {
        setpgid(0, 0);  /* gnuplot too: the deadline kills the group */
        int fd = open(logf, O_WRONLY | O_CREAT | O_TRUNC, 0600), nul = open("/dev/null", O_WRONLY);
        if (fd < 0 || nul < 0 || chdir(dir) != 0) _exit(127);
        dup2(nul, STDOUT_FILENO), dup2(fd, STDERR_FILENO);
        setenv("PATH", gnuplot ? fz->gnuplot_path : "/nonexistent", 1);
        execl(fz->scaling, fz->scaling, "report", csv, "--out", out, (char *)NULL);
        _exit(127);
    }
    int status = 0, hung = 0;
    struct timespec t0, now, nap = {0, 2 * 1000 * 1000};
    clock_gettime(CLOCK_MONOTONIC, &t0);
    while (waitpid(pid, &status, WNOHANG) == 0) {
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (now.tv_sec - t0.tv_sec >= CASE_DEADLINE_S) {
            hung = 1;
            kill(-pid, SIGKILL);
            waitpid(pid, &status, 0);
            break;
        }
        nanosleep(&nap, NULL);
    }
    int rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    if (rc == 0 || rc == 2) fz->rc_count[rc]++;

    /* the verdict */
    char why[1400] = "";
    struct stat st;
    snprintf(path, sizeof path, "%s/%s", dir, out);
    int out_there = lstat(path, &st) == 0;
    FILE *lf = fopen(logf, "r");
    int nlines = 0, c;
    while (lf && (c = fgetc(lf)) != EOF) nlines += c == '\n';
    if (lf) fclose(lf);
    if (hung) snprintf(why, sizeof why, "still running after %d s", CASE_DEADLINE_S);
    else if (WIFSIGNALED(status)) snprintf(why, sizeof why, "killed by signal %d", WTERMSIG(status));
    else if (rc != 0 && rc != 2) snprintf(why, sizeof why, "exit %d (0 or 2 wanted)", rc);
    else if (rc == 2 && out_there) snprintf(why, sizeof why, "exit 2 (bad input) but %s was written", out);
    else if (rc == 2 && nlines != 1) snprintf(why, sizeof why, "exit 2 with %d stderr lines (one wanted)", nlines);
    else if (tree_hash(fz->canary, 1) != canary) snprintf(why, sizeof why, "the canary folder changed");
    if (!*why && out_there) {   /* the output folder holds no temporary file; moved aside, the inputs alone are left */
        if (has_tmp(path)) snprintf(why, sizeof why, "a temporary file was left in %s", out);
        char aside[1100];
        snprintf(aside, sizeof aside, "%s/out", fz->work);
        rm_tree(aside);
        rename(path, aside);
    }
    if (!*why && tree_hash(dir, 0) != inputs)
        snprintf(why, sizeof why, "a file beside the inputs was written or changed");
    if (!*why) return 0;
    char kept[1100];
    snprintf(kept, sizeof kept, "%s/failed-%ld", fz->work, k);
    rename(dir, kept);
    snprintf(path, sizeof path, "%s/stderr", kept);
    rename(logf, path);
    fprintf(stderr,
            "fuzz_report: FAIL case %ld (seed %llu): %s\n  input kept in %s (%s, --out %s, gnuplot %s)\n  replay: "
            "SCALING_FUZZ_SEED=%llu SCALING_FUZZ_CASE=%ld %s\n",
            k, (unsigned long long)fz->seed, why, kept, csv, out, gnuplot ? "on" : "off",
            (unsigned long long)fz->seed, k, "fuzz_report SCALING ROOT");
    return 1;
}

// ---- the run

/* The folder of PATH that holds gnuplot, or NULL. */
static char *gnuplot_dir(void) {
    const char *p = getenv("PATH");
    for (; p && *p;) {
        size_t n = strcspn(p, ":");
        char f[4200];
        snprintf(f, sizeof f, "%.*s/gnuplot", (int)n, p);
        if (n && access(f, X_OK) == 0) return strndup(p, n);
        p += n + (p[n] == ':');
    }
    return NULL;
}

static void canary_make(const char *canary) {
    char p[1200];
    mkdir(canary, 0700);
    const char *files[] = {"REPORT.md", "study.csv", "a.dat", "x"};
    for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
        snprintf(p, sizeof p, "%s/%s", canary, files[i]);
        buf_t b = {0};
        buf_put(&b, 0, 0, "canary: nothing may write here\n", 31);
        write_file(p, &b);
        free(b.s);
    }
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: fuzz_report SCALING ROOT (SCALING_FUZZ_SEED, _CASE, _SECONDS, _GNUPLOT)\n");
        return 2;
    }
    signal(SIGPIPE, SIG_IGN);
    fuzz_t fz = {.scaling = argv[1], .gnuplot_every = 5};
    const char *e;
    fz.seed = (e = getenv("SCALING_FUZZ_SEED")) ? strtoull(e, NULL, 10)
                                               : (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
    long only = (e = getenv("SCALING_FUZZ_CASE")) ? atol(e) : -1;
    double seconds = (e = getenv("SCALING_FUZZ_SECONDS")) ? atof(e) : 60;
    if ((e = getenv("SCALING_FUZZ_GNUPLOT")) && atoi(e) > 0) fz.gnuplot_every = atoi(e);
    printf("fuzz_report: seed %llu (replay: SCALING_FUZZ_SEED=%llu), %.0f s, gnuplot in 1 case of %d\n",
           (unsigned long long)fz.seed, (unsigned long long)fz.seed, seconds, fz.gnuplot_every);
    fflush(stdout);
    char dirs[2][4200];
    snprintf(dirs[0], sizeof dirs[0], "%s/results", argv[2]);
    snprintf(dirs[1], sizeof dirs[1], "%s/tests/fixtures", argv[2]);
    for (int i = 0; i < 2; i++) nftw(dirs[i], collect, 16, FTW_PHYS);
    int studies = 0;
    for (int i = 0; i < g_nsrc; i++) studies += !g_src[i].bench;
    if (!studies) {
        fprintf(stderr, "fuzz_report: no study CSV under %s or %s\n", dirs[0], dirs[1]);
        return 1;
    }
    const char *tmpdir = getenv("TMPDIR");
    char work[1024], canary[1100];
    if (snprintf(work, sizeof work, "%s/fuzz_report.XXXXXX", tmpdir && *tmpdir ? tmpdir : "/tmp") >= 1000)
        return fprintf(stderr, "fuzz_report: TMPDIR is too long\n"), 1;
    if (!mkdtemp(work)) return perror("fuzz_report: mkdtemp"), 1;
    snprintf(canary, sizeof canary, "%s/canary", work);
    canary_make(canary);
    fz.work = work, fz.canary = canary, fz.gnuplot_path = gnuplot_dir();
    /* negative control: the hash sees a canary file touched */
    uLong h = tree_hash(canary, 1);
    char p[1200];
    snprintf(p, sizeof p, "%s/hit", canary);
    close(open(p, O_WRONLY | O_CREAT, 0600));
    int seen = tree_hash(canary, 1) != h;
    unlink(p);
    if (!seen) {
        fprintf(stderr, "fuzz_report: the canary's hash does not see a new file (negative control)\n");
        return 1;
    }
    struct timespec t0, now;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    long k = only >= 0 ? only : 0, cases = 0;
    int failures = 0;
    do {
        failures += run_case(&fz, k++);
        cases++;
        clock_gettime(CLOCK_MONOTONIC, &now);
    } while (only < 0 && failures < MAX_FAILURES &&
             (double)(now.tv_sec - t0.tv_sec) + 1e-9 * (double)(now.tv_nsec - t0.tv_nsec) < seconds);
    printf("fuzz_report: seed %llu: %ld case(s) of %d committed CSV(s) (%d with gnuplot): %d exit 0, %d exit 2, %d "
           "failed\n", (unsigned long long)fz.seed, cases, studies, fz.with_gnuplot, fz.rc_count[0], fz.rc_count[2],
           failures);
    free((char *)fz.gnuplot_path);
    if (!failures) rm_tree(work);
    else fprintf(stderr, "fuzz_report: the failing inputs are kept under %s\n", work);
    return failures ? 1 : 0;
}
