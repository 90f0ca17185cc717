/* outdir.c — the report's folder holds one study's report at a time: a lock on it, the set written into a private
 * folder inside it, then the previous set removed and the new one moved in; SIGINT, SIGTERM and SIGHUP wait until the
 * set is whole or gone, so that neither a reader nor a signal ever leaves two studies mixed or a temporary file. */
#define _GNU_SOURCE     /* renameat, unlinkat with AT_* */
#include "outdir.h"
#include "../study/mem.h"
#include "../engine/errmsg.h"
#include "../study/paths.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

/* The names the last report wrote in the folder, one a line: what the next report removes, and nothing else. */
#define OUTDIR_LIST ".scaling-report"
/* The private folder a report writes into, inside the output folder: ".report.tmp-XXXXXX". */
#define OUTDIR_TMP ".report.tmp-"

int outdir_writes(const char *name) {
    static const char *const ext[] = {".dat", ".png", ".svg"};
    size_t n = strlen(name);
    if (strchr(name, '/') || name[0] == '.') return 0;
    if (strcmp(name, "REPORT.md") == 0 || strcmp(name, "summary.csv") == 0) return 1;
    for (size_t i = 0; i < sizeof ext / sizeof *ext; i++)
        if (n > 4 && strcmp(name + n - 4, ext[i]) == 0) return 1;
    return 0;
}

/* A temporary file of paths_replace_begin: "." NAME ".tmp-XXXXXX" for a name the report writes (or its list). */
static int temp_name(const char *name) {
    const char *t = strstr(name, ".tmp-");
    if (name[0] != '.' || !t || strlen(t) != 11) return 0;
    char *base = mem_printf("%.*s", (int)(t - name - 1), name + 1);
    int ours = outdir_writes(base) || strcmp(base, OUTDIR_LIST + 1) == 0;
    free(base);
    return ours;
}

static int interrupts(sigset_t *s) {
    sigemptyset(s);
    sigaddset(s, SIGINT);
    sigaddset(s, SIGTERM);
    return sigaddset(s, SIGHUP);
}

int outdir_interrupted(void) {
    sigset_t p;
    if (sigpending(&p) != 0) return 0;
    return sigismember(&p, SIGINT) == 1 || sigismember(&p, SIGTERM) == 1 || sigismember(&p, SIGHUP) == 1;
}

/* The regular files of folder fd that keep(name) accepts, into *v (names the caller frees). */
static int list_dir(int fd, int (*keep)(const char *), char ***v, int *n) {
    int cap = 0, d = dup(fd);
    DIR *dir = d >= 0 ? fdopendir(d) : NULL;
    if (!dir) {
        if (d >= 0) close(d);
        return -1;
    }
    *n = 0;
    for (struct dirent *e; (e = readdir(dir));) {
        struct stat st;
        if (keep(e->d_name) && fstatat(fd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode))
            *MEM_PUSH(*v, *n, cap) = mem_printf("%s", e->d_name);
    }
    closedir(dir);
    return 0;
}

static void names_drop(char **v, int n) {
    for (int i = 0; i < n; i++) free(v[i]);
    free(v);
}

/* A private folder a killed report left: its files (ours by name) removed, then the folder. */
static void remove_stale(int fd, const char *name) {
    int d = openat(fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (d < 0) return;
    char **v = NULL;
    int n = 0;
    if (list_dir(d, outdir_writes, &v, &n) == 0)
        for (int i = 0; i < n; i++) unlinkat(d, v[i], 0);
    names_drop(v, n), v = NULL, n = 0;
    if (list_dir(d, temp_name, &v, &n) == 0)
        for (int i = 0; i < n; i++) unlinkat(d, v[i], 0);
    names_drop(v, n);
    close(d);
    unlinkat(fd, name, AT_REMOVEDIR);   /* fails, harmlessly, where someone else's file is in it */
}

/* What a report killed by SIGKILL (the one signal that cannot wait) left: private folders and temporary files. Run
 * under the lock, so none of them is a running report's. */
static void clean_stale(int fd) {
    int d = dup(fd);
    DIR *dir = d >= 0 ? fdopendir(d) : NULL;
    if (!dir) {
        if (d >= 0) close(d);
        return;
    }
    char **stale = NULL;
    int n = 0, cap = 0;
    for (struct dirent *e; (e = readdir(dir));)
        if (strncmp(e->d_name, OUTDIR_TMP, strlen(OUTDIR_TMP)) == 0 || temp_name(e->d_name))
            *MEM_PUSH(stale, n, cap) = mem_printf("%s", e->d_name);
    closedir(dir);
    for (int i = 0; i < n; i++) {
        struct stat st;
        if (fstatat(fd, stale[i], &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
        if (S_ISDIR(st.st_mode)) remove_stale(fd, stale[i]);
        else if (S_ISREG(st.st_mode) && temp_name(stale[i])) unlinkat(fd, stale[i], 0);
    }
    names_drop(stale, n);
}

int outdir_begin(outdir_t *d, const char *out, char *err, size_t errlen) {
    memset(d, 0, sizeof *d);
    d->fd = -1;
    snprintf(d->out, sizeof d->out, "%s", out);     /* fits: the caller's PATH_MAX buffer */
    d->fd = open(out, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (d->fd < 0) return errmsg(1, err, errlen, "%s: cannot open: %s", out, strerror(errno));
    if (flock(d->fd, LOCK_EX | LOCK_NB) != 0) {
        errmsg_line(stderr, "scaling report: ", "%s: another report is writing there: waiting for it", out);
        while (flock(d->fd, LOCK_EX) != 0)
            if (errno != EINTR) return errmsg(1, err, errlen, "%s: cannot lock: %s", out, strerror(errno));
    }
    /* From here a signal waits (outdir_end delivers it), so that it never cuts the folder's set in two. */
    sigset_t s;
    interrupts(&s);
    sigprocmask(SIG_BLOCK, &s, &d->mask);
    d->blocked = 1;
    clean_stale(d->fd);
    if (snprintf(d->tmp, sizeof d->tmp, "%s/" OUTDIR_TMP "XXXXXX", out) >= (int)sizeof d->tmp || !mkdtemp(d->tmp)) {
        d->tmp[0] = '\0';
        return errmsg(1, err, errlen, "%s: cannot create a private folder in it: %s", out, strerror(errno));
    }
    return 0;
}

/* The names of the list file, those the report writes only (the list is data another process could have written). */
static void list_read(int fd, char ***v, int *n) {
    int cap = 0, f = openat(fd, OUTDIR_LIST, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    FILE *in = f >= 0 ? fdopen(f, "r") : NULL;
    *n = 0;
    if (!in) {
        if (f >= 0) close(f);
        return;
    }
    char line[NAME_MAX + 2];
    while (fgets(line, sizeof line, in)) {
        line[strcspn(line, "\n")] = '\0';
        if (outdir_writes(line)) *MEM_PUSH(*v, *n, cap) = mem_printf("%s", line);
    }
    fclose(in);
}

/* The list file replaced by names a[0..na) and b[0..nb). 0, or -1. */
static int list_write(const outdir_t *d, char **a, int na, char **b, int nb) {
    char *path = mem_printf("%s/%s", d->out, OUTDIR_LIST);
    paths_replace_t w;
    int rc = paths_replace_begin(&w, path, NULL, 0);
    free(path);
    if (rc) return -1;
    for (int i = 0; i < na; i++) fprintf(w.f, "%s\n", a[i]);
    for (int i = 0; i < nb; i++) fprintf(w.f, "%s\n", b[i]);
    return paths_replace_end(&w, NULL, 0);
}

/* REPORT.md last: a reader who finds it finds the whole set beside it. */
static int by_report_last(const void *x, const void *y) {
    const char *a = *(const char *const *)x, *b = *(const char *const *)y;
    int ra = strcmp(a, "REPORT.md") == 0, rb = strcmp(b, "REPORT.md") == 0;
    return ra != rb ? ra - rb : strcmp(a, b);
}

int outdir_commit(outdir_t *d, char *err, size_t errlen) {
    if (outdir_interrupted()) return errmsg(1, err, errlen, "interrupted: %s left as it was", d->out);
    int t = open(d->tmp, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    char **now = NULL, **old = NULL;
    int nnow = 0, nold = 0, rc = 0;
    if (t < 0 || list_dir(t, outdir_writes, &now, &nnow) != 0) {
        if (t >= 0) close(t);
        return errmsg(1, err, errlen, "%s: cannot read: %s", d->tmp, strerror(errno));
    }
    if (nnow) qsort(now, (size_t)nnow, sizeof *now, by_report_last);
    list_read(d->fd, &old, &nold);
    if (nold) qsort(old, (size_t)nold, sizeof *old, by_report_last);     /* none: a first report here */
    /* The list names both sets while they change places, so that a report killed in between leaves nothing that the
     * next one would not remove. Then the old set goes (REPORT.md first), then the new one comes (REPORT.md last). */
    if (list_write(d, old, nold, now, nnow) != 0) rc = errmsg(1, err, errlen, "%s: cannot write its file list", d->out);
    for (int i = nold - 1; i >= 0 && !rc; i--) unlinkat(d->fd, old[i], 0);     /* backwards: REPORT.md first */
    for (int i = 0; i < nnow && !rc; i++)
        if (renameat(t, now[i], d->fd, now[i]) != 0)
            rc = errmsg(1, err, errlen, "%s/%s: cannot move into place: %s", d->out, now[i], strerror(errno));
    if (!rc && list_write(d, now, nnow, NULL, 0) != 0)
        rc = errmsg(1, err, errlen, "%s: cannot write its file list", d->out);
    close(t);
    names_drop(now, nnow);
    names_drop(old, nold);
    return rc;
}

void outdir_end(outdir_t *d) {
    if (*d->tmp) remove_stale(AT_FDCWD, d->tmp);
    if (d->fd >= 0) close(d->fd);   /* the lock goes with it */
    if (d->blocked) sigprocmask(SIG_SETMASK, &d->mask, NULL);   /* a signal that waited is delivered here */
    d->fd = -1;
    d->blocked = 0;
    d->tmp[0] = '\0';
}
