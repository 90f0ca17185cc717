/* paths.h — the command's output files, checked before anything is read or written and written so that no file is
 * ever clobbered: --out, --trace (each run's file), --conv-cache and SCALING_DUMP_PARAMS must each be a regular file or
 * not exist yet, must not name one another, must fit the path limit and must be writable; traces and parameter dumps
 * are written to a temporary file beside the target and renamed over it. Host-only (doc/files.md). */
#pragma once
#include <stdio.h>
#include <stddef.h>
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

/* A file written whole and renamed into place: paths_replace_begin opens a temporary file in path's directory
 * (f NULL on failure, with err), paths_replace_end flushes, syncs, closes and renames it over path (a symlink at path
 * is replaced, never followed), or removes it where anything failed. 0, or -1 with a one-line reason in err. */
typedef struct {
    FILE *f;
    char tmp[4096];
    const char *path;
} paths_replace_t;
int paths_replace_begin(paths_replace_t *r, const char *path, char *err, size_t errlen);
int paths_replace_end(paths_replace_t *r, char *err, size_t errlen);
