/* paths.h — output files, checked before anything is read or written and opened one way so that no file is ever
 * clobbered: --out, --trace, --conv-cache and SCALING_DUMP_PARAMS must each be a regular file or not exist yet, must not
 * name one another, must fit the path limit and must be writable; whole files (traces, dumps, every file of the report)
 * are written to a temporary file beside the target and renamed over it. Host-only (doc/files.md). */
#pragma once
#include <stdio.h>
#include <stddef.h>
#include <limits.h>
#include <sys/types.h>

/* One file the command will write. */
typedef struct {
    const char *what;           /* as the user named it: "--out", "--trace", "SCALING_DUMP_PARAMS" */
    const char *path;
    int replaced;               /* 1: written whole to a temporary file and renamed over path (its directory must be
                                 * writable); 0: opened, read and appended to (the file must be writable) */
} paths_use_t;

/* Checks every use: a path under PATH_MAX; an existing path (symlinks followed) a regular file, a symlink not
 * dangling; the place writable (the nearest existing directory for a new file, tested with an unnamed temporary
 * file so that nothing appears); and no two uses the same file: the same device and inode where both exist, the
 * same resolved directory and name where not. Never opens a FIFO or a device, so it never blocks. 0, or 2 with one
 * line naming the option, the path and the problem in err. */
int paths_check(const paths_use_t *u, int n, char *err, size_t errlen);

/* The all-reduce benchmark's CSV of a study: beside it, "X.csv" less ".csv" plus this (the report looks there). */
#define PATHS_ALLREDUCE_SUFFIX "_allreduce.csv"
/* A file beside csv: "X.csv" less ".csv" plus suffix, into out. 0, or -1 when it does not fit len (never cut). */
int paths_sibling(char *out, size_t len, const char *csv, const char *suffix);

/* open(2) that refuses what is not a regular file without blocking on it (O_NONBLOCK, then fstat): a FIFO or a
 * device named in place of a file. The descriptor is left blocking. >= 0, or -1 with errno set (EINVAL for a file
 * that is not regular). */
int paths_open_regular(const char *path, int flags, mode_t mode);

/* The one way an output file is opened. Two kinds:
 *   appended to (a study CSV, the all-reduce benchmark's CSV: several writers add rows under a lock):
 *     paths_open_append opens an existing regular file (a symlink the user named is followed to it), or creates a
 *     new one with O_CREAT | O_EXCL, so that a dangling symlink at path is never followed into a file elsewhere;
 *   written whole (REPORT.md, the figures, their data files, traces, parameter dumps): paths_replace_*, a temporary
 *     file beside path opened with O_CREAT | O_EXCL | O_NOFOLLOW (mkstemp's random name) and renamed over path when
 *     complete, so a symlink planted at path is replaced, never followed, and a half-written file never replaces a
 *     whole one. */

/* flags O_RDWR or O_WRONLY, with O_APPEND where wanted (never O_CREAT, O_TRUNC: the call decides). >= 0, or -1 with
 * errno (EINVAL: not a regular file). */
int paths_open_append(const char *path, int flags, mode_t mode);

typedef struct {
    FILE *f;                    /* the temporary file, written by the caller (or through fileno by a child) */
    char tmp[PATH_MAX];
    char path[PATH_MAX];
} paths_replace_t;
/* Opens the temporary file ("." name ".tmp-XXXXXX" in path's directory). 0, or -1 with a one-line reason in err
 * (a path over PATH_MAX is an error, never cut). */
int paths_replace_begin(paths_replace_t *r, const char *path, char *err, size_t errlen);
/* Flushes, syncs, closes and renames the temporary file over path, or removes it where anything failed. 0, or -1
 * with a one-line reason in err. */
int paths_replace_end(paths_replace_t *r, char *err, size_t errlen);
/* Closes and removes the temporary file: path is left as it was. */
void paths_replace_abort(paths_replace_t *r);

/* A folder a command writes its files into (created later where missing): it must be a directory or not exist yet
 * under an existing directory (no part of it a file), leave room below PATH_MAX for a file name of room bytes and a
 * temporary suffix, and be writable; none of names (NULL-terminated) in it may be a directory or anything but a
 * regular file or a symlink (those are replaced). 0, or 2 with one line naming what, the path and the problem. */
int paths_check_dir(const char *what, const char *dir, size_t room, const char *const *names, char *err,
                    size_t errlen);

/* 1 when file lies directly in the existing directory dir (same device and inode as its own directory), 0
 * otherwise; its name there into name. An existing file is taken for what its links resolve to (a link elsewhere to
 * dir/summary.csv lies in dir as summary.csv), a missing one as named. */
int paths_in_dir(const char *file, const char *dir, char name[NAME_MAX + 1]);

/* An input file: it exists, is a regular file (a FIFO or a directory is said as that, never read) and is readable.
 * 0, or 2 with one line "PATH: why WHAT" (what: "(--baseline)", or ""). */
int paths_check_read(const char *what, const char *path, char *err, size_t errlen);

/* mkdir -p of the directory part of path. 0, or 2 with one line (a part that is a file, a path over PATH_MAX). */
int paths_make_parents(const char *path, char *err, size_t errlen);
