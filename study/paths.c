/* paths.c — output files checked before anything is read or written (same file through two options, a FIFO, a
 * directory or device named as a file, an unwritable place, a path over the limit) and opened one way: appended files
 * created with O_EXCL, whole files written to a temporary file (O_EXCL | O_NOFOLLOW) and renamed into place. */
#define _GNU_SOURCE     /* O_TMPFILE */
#include "paths.h"
#include "../engine/errmsg.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Where a use lands: the file itself where it exists (device, inode), else its resolved directory and name. */
typedef struct {
    int exists;
    dev_t dev;
    ino_t ino;
    char where[PATH_MAX * 2];
} place_t;

static const char *kind_of(mode_t m) {
    return S_ISREG(m) ? "a file" : S_ISDIR(m) ? "a directory" : S_ISFIFO(m) ? "a FIFO" : S_ISCHR(m) ? "a character device"
         : S_ISBLK(m) ? "a block device" : S_ISSOCK(m) ? "a socket" : "not a regular file";
}

/* A writable directory: an unnamed temporary file there (O_TMPFILE) is the real test, for root and read-only
 * mounts alike, and leaves nothing behind; where the file system lacks O_TMPFILE, access(2). */
static int dir_writable(const char *dir) {
#ifdef O_TMPFILE
    int fd = open(dir, O_TMPFILE | O_WRONLY, 0600);
    if (fd >= 0) {
        close(fd);
        return 0;
    }
    if (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL) return -1;
#endif
    return access(dir, W_OK | X_OK);
}

/* path made lexical in place: empty and "." components dropped, each ".." taking the component before it (none above
 * "/"). Only for a path whose components may be taken at their word: a resolved directory (no symlink left in it)
 * followed by names none of which is a symlink (resolve_new checks with link_on_path). Reads no further than the
 * path's NUL, which the last component's '/' overwrites where nothing moved. */
static void normalise(char *path) {
    char *out = path + 1, *p = path + 1, *stop = path + strlen(path);  /* path starts with '/': realpath's */
    while (p < stop) {
        char *end = strchr(p, '/');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        if (n == 2 && p[0] == '.' && p[1] == '.') {
            while (out > path + 1 && out[-1] == '/') out--;
            while (out > path + 1 && out[-1] != '/') out--;
        } else if (n > 0 && !(n == 1 && p[0] == '.')) {
            memmove(out, p, n);
            out += n;
            *out++ = '/';
        }
        p += n;
        while (p < stop && *p == '/') p++;
    }
    if (out > path + 1) out--;   /* the last component's '/' */
    *out = '\0';
}

/* The first name of a lexical path (resolve_new's) that is a symbolic link: the path names its place only where
 * none is. Below the nearest existing folder a link is either one to nothing (to a folder that may appear later, as
 * --out's folders are made before a trace is written: lnk -> newdir makes lnk/x.csv newdir/x.csv then) or a folder
 * that a '..' after a missing name stepped past (gone/../lnk). 0 where there is none (the last name may be a link to
 * something: an existing file, which its caller compares by inode); 1 for a link to nothing and -1 for a folder
 * that links to something, its path in link (PATH_MAX bytes: a longer one cannot be looked at anyway). */
static int link_on_path(const char *where, char link[PATH_MAX]) {
    for (const char *s = where;;) {
        s = strchr(s + 1, '/');
        size_t n = s ? (size_t)(s - where) : strlen(where);
        struct stat st;
        if (n >= PATH_MAX) return 0;
        memcpy(link, where, n);
        link[n] = '\0';
        if (lstat(link, &st) != 0) return 0;    /* a missing name: nothing below it exists */
        if (S_ISLNK(st.st_mode)) {
            if (stat(link, &st) != 0) return 1;
            if (s) return -1;
        }
        if (!s) return 0;
    }
}

/* The nearest existing ancestor directory of path, resolved, into ancestor, and path's place as that directory and
 * the rest of path below it, made lexical (normalise), into out: d/sub/../sub/x.csv and d/sub/x.csv with d/sub not
 * there yet are one place. 0; -2 where a name on the way is a symbolic link to nothing (its path in ancestor); or -1
 * with errno (ENAMETOOLONG where it would not fit out). */
static int resolve_new(const char *path, char *out, size_t len, char *ancestor, size_t alen) {
    size_t end = strlen(path);              /* the part of path still to strip: path[0..end) */
    for (;;) {
        size_t i = end;
        while (i > 0 && path[i - 1] == '/') i--;
        while (i > 0 && path[i - 1] != '/') i--;
        const char *rest = path + i;        /* below the directory path[0..j) */
        char dir[PATH_MAX];
        size_t j = i;
        while (j > 0 && path[j - 1] == '/') j--;
        if (i == 0) snprintf(dir, sizeof dir, ".");
        else if (j == 0) snprintf(dir, sizeof dir, "/");
        else if (snprintf(dir, sizeof dir, "%.*s", (int)j, path) >= (int)sizeof dir) return errno = ENAMETOOLONG, -1;
        struct stat st;
        if (stat(dir, &st) == 0) {
            if (snprintf(ancestor, alen, "%s", dir) >= (int)alen) return errno = ENAMETOOLONG, -1;
            if (!S_ISDIR(st.st_mode)) { errno = ENOTDIR; return -1; }
            char real[PATH_MAX];
            if (!realpath(dir, real)) return -1;
            if (snprintf(ancestor, alen, "%s", real) >= (int)alen) return errno = ENAMETOOLONG, -1;
            if (snprintf(out, len, "%s/%s", strcmp(real, "/") ? real : "", rest) >= (int)len) {
                errno = ENAMETOOLONG;
                return -1;
            }
            normalise(out);
            char link[PATH_MAX];
            int l = link_on_path(out, link);
            if (l > 0) return snprintf(ancestor, alen, "%s", link), -2;
            if (l < 0) {    /* reached through gone/..: resolved again from the link, as out has no '..' left */
                char again[PATH_MAX * 2];
                snprintf(again, sizeof again, "%s", out);
                return resolve_new(again, out, len, ancestor, alen);
            }
            return 0;
        }
        if (errno != ENOENT && errno != ENOTDIR) return -1;
        if (i == 0 || j == 0) return -1;
        end = j;
    }
}

static int check_one(const paths_use_t *u, place_t *p, char *err, size_t errlen) {
    if (strlen(u->path) >= PATH_MAX - 32)   /* room for a temporary file's suffix */
        return errmsg(2, err, errlen, "%s: path of %zu characters is longer than the limit of %d", u->what,
                      strlen(u->path), PATH_MAX - 33);
    memset(p, 0, sizeof *p);
    struct stat st, lst;
    if (lstat(u->path, &lst) == 0) {
        if (stat(u->path, &st) != 0)
            return errmsg(2, err, errlen, "%s %s: a symbolic link to a missing file", u->what, u->path);
        if (!S_ISREG(st.st_mode))
            return errmsg(2, err, errlen, "%s %s: %s, not a regular file", u->what, u->path, kind_of(st.st_mode));
        p->exists = 1;
        p->dev = st.st_dev;
        p->ino = st.st_ino;
        if (!u->replaced && access(u->path, R_OK | W_OK) != 0)
            return errmsg(2, err, errlen, "%s %s: cannot write it: %s", u->what, u->path, strerror(errno));
    } else if (errno != ENOENT) {
        return errmsg(2, err, errlen, "%s %s: %s", u->what, u->path, strerror(errno));
    }
    char ancestor[PATH_MAX] = "";
    int r = resolve_new(u->path, p->where, sizeof p->where, ancestor, sizeof ancestor);
    if (r == -2)
        return errmsg(2, err, errlen, "%s %s: %s is a symbolic link to a missing folder", u->what, u->path, ancestor);
    if (r != 0)
        return errmsg(2, err, errlen, "%s %s: %s%s%s", u->what, u->path, ancestor, *ancestor ? ": " : "",
                      strerror(errno));
    /* A new file (or one renamed into place) needs its directory writable; directories still missing are created
     * there (--out). */
    if ((!p->exists || u->replaced) && dir_writable(ancestor) != 0)
        return errmsg(2, err, errlen, "%s %s: cannot write in %s: %s", u->what, u->path, ancestor, strerror(errno));
    return 0;
}

int paths_check(const paths_use_t *u, int n, char *err, size_t errlen) {
    if (err && errlen) err[0] = '\0';
    place_t *p = calloc((size_t)(n > 0 ? n : 1), sizeof *p);
    if (!p) return errmsg(2, err, errlen, "out of host memory checking the output paths");
    int rc = 0;
    for (int i = 0; i < n && !rc; i++) {
        rc = check_one(&u[i], &p[i], err, errlen);
        for (int j = 0; j < i && !rc; j++) {
            int same = p[i].exists && p[j].exists ? p[i].dev == p[j].dev && p[i].ino == p[j].ino
                     : !p[i].exists && !p[j].exists && strcmp(p[i].where, p[j].where) == 0;
            if (same)
                rc = errmsg(2, err, errlen, "%s %s and %s %s are the same file: one would overwrite the other", u[j].what,
                            u[j].path, u[i].what, u[i].path);
        }
    }
    free(p);
    return rc;
}

int paths_sibling(char *out, size_t len, const char *csv, const char *suffix) {
    size_t n = strlen(csv);
    if (n > 4 && strcmp(csv + n - 4, ".csv") == 0) n -= 4;
    int k = snprintf(out, len, "%.*s%s", (int)n, csv, suffix);
    return k < 0 || (size_t)k >= len ? -1 : 0;
}

int paths_open_regular(const char *path, int flags, mode_t mode) {
    int fd = open(path, flags | O_NONBLOCK | O_NOCTTY | O_CLOEXEC, mode);
    if (fd < 0) return -1;
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        int e = S_ISREG(st.st_mode) ? errno : EINVAL;
        close(fd);
        errno = e;
        return -1;
    }
    int fl = fcntl(fd, F_GETFL);
    if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) != 0) {
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    return fd;
}

int paths_open_append(const char *path, int flags, mode_t mode) {
    for (int tries = 0; tries < 8; tries++) {
        int fd = paths_open_regular(path, flags, 0);
        if (fd >= 0 || errno != ENOENT) return fd;
        /* Not there (or a dangling symlink): created here, never through a link. */
        fd = paths_open_regular(path, flags | O_CREAT | O_EXCL | O_NOFOLLOW, mode);
        if (fd >= 0 || errno != EEXIST) return fd;
        /* EEXIST: another writer created it between the two opens, or a dangling symlink is there */
        struct stat st;
        if (lstat(path, &st) == 0 && S_ISLNK(st.st_mode) && stat(path, &st) != 0) return errno = ENOENT, -1;
    }
    return errno = EEXIST, -1;
}

int paths_replace_begin(paths_replace_t *r, const char *path, char *err, size_t errlen) {
    memset(r, 0, sizeof *r);
    const char *slash = strrchr(path, '/');
    int dir = slash ? (int)(slash - path + 1) : 0;
    if (snprintf(r->path, sizeof r->path, "%s", path) >= (int)sizeof r->path ||
        snprintf(r->tmp, sizeof r->tmp, "%.*s.%s.tmp-XXXXXX", dir, path, path + dir) >= (int)sizeof r->tmp)
        return errmsg(-1, err, errlen, "%s: path longer than the limit of %d characters", path, PATH_MAX - 1);
    /* mkostemp: O_CREAT | O_EXCL with a random name, so nothing already at the name (a planted symlink) is opened */
    int fd = mkostemp(r->tmp, O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return errmsg(-1, err, errlen, "%s: cannot create a temporary file beside it: %s", path, strerror(errno));
    r->f = fdopen(fd, "w");
    if (!r->f) {
        int e = errno;
        close(fd);
        unlink(r->tmp);
        return errmsg(-1, err, errlen, "%s: %s", path, strerror(e));
    }
    return 0;
}

void paths_replace_abort(paths_replace_t *r) {
    if (!r->f) return;
    fclose(r->f);
    r->f = NULL;
    unlink(r->tmp);
}

int paths_replace_end(paths_replace_t *r, char *err, size_t errlen) {
    if (!r->f) return -1;
    /* The temporary file is private (0600 from mkstemp); the target gets a plain file's permissions. */
    mode_t um = umask(0);
    umask(um);
    int ok = !ferror(r->f) && fflush(r->f) == 0 && fchmod(fileno(r->f), 0666 & ~um) == 0 && fsync(fileno(r->f)) == 0;
    int e = errno;
    ok = fclose(r->f) == 0 && ok;
    if (!ok) e = e ? e : errno;
    r->f = NULL;
    if (ok && rename(r->tmp, r->path) != 0) ok = 0, e = errno;
    if (!ok) {
        unlink(r->tmp);
        return errmsg(-1, err, errlen, "%s: %s", r->path, strerror(e));
    }
    return 0;
}

int paths_check_dir(const char *what, const char *dir, size_t room, const char *const *names, char *err,
                    size_t errlen) {
    if (err && errlen) err[0] = '\0';
    size_t n = strlen(dir), limit = PATH_MAX - 1 - room - 16;   /* "/", a name of room bytes, ".", ".tmp-XXXXXX" */
    if (!n) return errmsg(2, err, errlen, "%s: empty path", what);
    if (n > limit)
        return errmsg(2, err, errlen, "%s: path of %zu characters is longer than the limit of %zu for a folder", what,
                      n, limit);
    struct stat st;
    if (stat(dir, &st) == 0) {
        if (!S_ISDIR(st.st_mode))
            return errmsg(2, err, errlen, "%s %s: %s, not a directory", what, dir, kind_of(st.st_mode));
        if (dir_writable(dir) != 0)
            return errmsg(2, err, errlen, "%s %s: cannot write in it: %s", what, dir, strerror(errno));
        for (int i = 0; names && names[i]; i++) {
            char p[PATH_MAX];
            snprintf(p, sizeof p, "%s/%s", dir, names[i]);      /* fits: room */
            if (lstat(p, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode))
                return errmsg(2, err, errlen, "%s %s: %s is %s, not a file it can replace", what, dir, names[i],
                              kind_of(st.st_mode));
        }
        return 0;
    }
    if (errno != ENOENT && errno != ENOTDIR) return errmsg(2, err, errlen, "%s %s: %s", what, dir, strerror(errno));
    char where[PATH_MAX * 2], ancestor[PATH_MAX] = "";
    int r = resolve_new(dir, where, sizeof where, ancestor, sizeof ancestor);
    if (r == -2) return errmsg(2, err, errlen, "%s %s: %s is a symbolic link to a missing folder", what, dir, ancestor);
    if (r != 0)
        return errmsg(2, err, errlen, "%s %s: %s%s%s", what, dir, ancestor, *ancestor ? ": " : "",
                      errno == ENOTDIR ? "a file, not a directory" : strerror(errno));
    if (dir_writable(ancestor) != 0)
        return errmsg(2, err, errlen, "%s %s: cannot create it in %s: %s", what, dir, ancestor, strerror(errno));
    return 0;
}

int paths_in_dir(const char *file, const char *dir, char name[NAME_MAX + 1]) {
    char real[PATH_MAX];
    /* An existing file by what it resolves to: a link named s.csv to dir/summary.csv lies in dir as summary.csv. */
    const char *f = realpath(file, real) ? real : file;
    const char *slash = strrchr(f, '/');
    char parent[PATH_MAX];
    int k = !slash ? snprintf(parent, sizeof parent, ".")
          : slash == f ? snprintf(parent, sizeof parent, "/")
          : snprintf(parent, sizeof parent, "%.*s", (int)(slash - f), f);
    const char *base = slash ? slash + 1 : f;
    size_t n = strnlen(base, NAME_MAX);     /* a resolved name fits; a longer one is cut, never overrun */
    memcpy(name, base, n);
    name[n] = '\0';
    struct stat a, b;
    return k > 0 && k < (int)sizeof parent && stat(parent, &a) == 0 && stat(dir, &b) == 0 && a.st_dev == b.st_dev &&
           a.st_ino == b.st_ino;
}

int paths_check_read(const char *what, const char *path, char *err, size_t errlen) {
    struct stat st;
    if (stat(path, &st) != 0)
        return errmsg(2, err, errlen, "%s: %s%s%s", path, errno == ENOENT ? "no such file" : strerror(errno),
                      *what ? " " : "", what);
    if (!S_ISREG(st.st_mode))
        return errmsg(2, err, errlen, "%s: %s, not a regular file%s%s", path, kind_of(st.st_mode), *what ? " " : "",
                      what);
    if (access(path, R_OK) != 0)
        return errmsg(2, err, errlen, "%s: cannot read it: %s%s%s", path, strerror(errno), *what ? " " : "", what);
    return 0;
}

int paths_make_parents(const char *path, char *err, size_t errlen) {
    char dir[PATH_MAX];
    if (strlen(path) >= sizeof dir)
        return errmsg(2, err, errlen, "%s: path longer than the limit of %d characters", path, PATH_MAX - 1);
    strcpy(dir, path);
    char *slash = strrchr(dir, '/');
    if (!slash || slash == dir) return 0;
    *slash = '\0';
    for (char *p = dir + 1;; p++) {
        if (*p != '/' && *p != '\0') continue;
        char c = *p;
        *p = '\0';
        if (mkdir(dir, 0777) != 0 && errno != EEXIST)
            return errmsg(2, err, errlen, "%s: cannot create directory: %s", dir, strerror(errno));
        *p = c;
        if (!c) break;
    }
    struct stat st;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
        return errmsg(2, err, errlen, "%s: not a directory", dir);
    return 0;
}
