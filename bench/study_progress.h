/* study_progress.h — how far one run got, from its rows: the part of a run that results.h's resume scan keeps and
 * study.h's "complete" reads (study.h says what it means). Host-only. */
#pragma once

/* What a run's rows say about how far it got. */
typedef struct {
    int epochs;      /* highest epoch written with a measured status (ok, diverged, oom): what it trained */
    int last_epoch;  /* highest epoch of any row (-1: no row) */
    char status[32]; /* the status of its last row (highest epoch; the later row on a tie) */
    int faulted;     /* 1: a row of it is failed, timeout or replicas-differ (under mpirun a failing rank's failed
                      * row may be followed by rank 0's interrupted one, so not only the last row tells) */
    char fault[32];  /* the first such row's status, when faulted */
} study_progress_t;
