/* answer.h — a study's answer in words, first in REPORT.md and printed by the default study (the same table from the
 * same function): the rows study/answer.h chooses (per model and math a row per strategy, GPU count and batch, at the
 * setting that trains soonest or is fastest within the accuracy's noise), their cells, the fastest per GPU count, the
 * rows whose accuracy fell or that missed the target, and a sentence that states the finding with its numbers; and
 * the one-GPU facts (study/one_gpu.h) in words. Host-only. */
#pragma once
#include "report.h"
#include "../study/answer.h"
#include "../study/one_gpu.h"

#include <stdio.h>

/* Where fewer GPUs than `gpus` (the most) trained to the target soonest (study_answer_soonest_gpus), the finding's
 * words past which count more stop helping, appended to b; nothing otherwise. */
void answer_stop_helping(bytes_t *b, const study_answer_t *a, int g, int gpus);

/* The printed answer's width: its table is compact and its lines wrapped to fit (REPORT.md's are not). */
#define ANSWER_TEXT_WIDTH 100
/* Writes text with each '#' line past ANSWER_TEXT_WIDTH wrapped at its blanks, the continuation lines indented
 * ("#     "), a number kept with a "%" word after it ("91.0 %", "93.6 %),"); other lines (the table's rows, fitted
 * as answer_write makes them) as they are. */
void answer_wrap(FILE *f, const char *text);
/* Writes the answer of group g: REPORT.md's Markdown (markdown 1) or the default study's text (lines of '#' notes
 * and aligned columns, markdown 0), the same rows and words. */
void answer_write(FILE *f, const study_answer_t *a, int g, int markdown);
/* The default study's printed answer: `path` read (study_load), every group's answer written as text (on one GPU
 * with the largest batch that fit and, where second_gpu is not NULL, what a second GPU would add), then where the
 * report is. 0, or 2 with the reader's message on stderr. */
int answer_print_csv(FILE *f, const char *path, const strategy_info_t *const *infos, const char *report,
                     const char *second_gpu);

/* Writes the fastest cell (o->fastest >= 0), that it is the fastest within STUDY_ACC_POINTS of the best accuracy,
 * and each other math at its batch ("bf16 at batch 256, 82647 images/s, the fastest within 1 point of the best
 * accuracy (92.0 %); tf32 there: 46872 images/s (1.76× slower)"). */
void answer_one_fastest(FILE *f, const study_one_cell_t *c, const study_one_t *o);
/* Writes the largest batch that fit per math, each after a blank and the maths separated by sep. */
void answer_one_fit(FILE *f, const study_one_t *o, const char *sep);
