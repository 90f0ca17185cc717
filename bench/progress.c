/* progress.c — a study's run count and ETA: means of the setups and epochs timed so far, applied to what is left, so
 * the estimate covers the whole study (every sweep, setup included) and not only the current run. */
#include "progress.h"

void progress_init(progress_t *p, int runs, long epochs) {
    *p = (progress_t){.runs = runs, .epochs_left = epochs, .setups_left = runs};
}

int progress_next_run(progress_t *p) { return ++p->run; }

void progress_setup_done(progress_t *p, double seconds) {
    p->setups++;
    p->setup_s += seconds;
    if (p->setups_left > 0) p->setups_left--;
}

void progress_epoch_done(progress_t *p, double seconds) {
    p->epochs++;
    p->epoch_s += seconds;
    if (p->epochs_left > 0) p->epochs_left--;
}

void progress_drop(progress_t *p, int epochs, int setup) {
    p->epochs_left = p->epochs_left > epochs ? p->epochs_left - epochs : 0;
    if (setup && p->setups_left > 0) p->setups_left--;
}

double progress_eta(const progress_t *p) {
    if (p->epochs == 0) return -1;
    return (double)p->epochs_left * p->epoch_s / p->epochs + (p->setups ? p->setups_left * p->setup_s / p->setups : 0);
}
