/* conv_cache.h — cudnnFind's choices kept in a file (--conv-cache) so that every run that names it runs the same
 * convolution algorithms: timing picks differently from process to process, and in bf16 the choice changes rounding.
 *
 * The file is text, one line per shape and GPU:
 *     "<id>\t<12 key ints>\t<9 choice ints>\t<be0> <be1> <be2>\tcrc32=<8 hex>"
 * (conv_algo_t's fields in order; -1 for a direction not searched; zlib's CRC-32 of the bytes before the tag), '#'
 * lines are comments. be<d> is direction d's cuDNN backend engine config (conv_algo_t.be[d]): "-" for none, else
 * "e<engine>,<ws>" and ",<type>=<value>" per knob (at most CONV_BE_KNOBS), e.g. "e62,4129040,25=2,2=7"; only a
 * searched direction may have one. Lines of older versions, without the three tokens, have none (an older binary
 * refuses a file with them). A torn line (a writer stopped by a full disk: no newline at the end of the file, or a
 * checksum that differs) is ignored with a warning, and the next save closes it, marked "\t#torn", under the lock.
 * Lines of older versions, without a checksum, are read when whole. id names the GPU model, the cuDNN version and
 * the search rule (engine/gpu.cu): another GPU's, cuDNN's or rule's lines are kept but not used. Lines are only ever
 * appended, under an exclusive flock, so processes that share the file (mpirun ranks, a study's runs) never lose a
 * line; for a shape and direction the first line that has it wins. Host code (no CUDA), tested on CI. */
#pragma once
#include <stddef.h>
#include "conv_algo.h"

#define CONV_CACHE_ID_MAX 320

#ifdef __cplusplus
extern "C" {
#endif
/* Fills directions missing from the growable list (*e, *n, *cap: conv_algo_add's; keys new to it appended) from
 * path's lines for `id`. A missing file is an empty cache. 0, or -1 with "path:line: what" in err (unreadable
 * file, malformed line). id NULL: only checks that every line parses. */
int conv_cache_load(const char *path, const char *id, conv_algo_t **e, int *n, int *cap, char *err, size_t errlen);
/* Appends, under an exclusive lock, a line for each entry e[0..n) that has a direction the file's lines for `id`
 * lack. Creates the file (with a comment line saying what it is). The cache only saves searching: a save that fails
 * (a full disk, a file that will not parse) is a warning on stderr, never the end of a sweep. Returns 0. */
int conv_cache_save(const char *path, const char *id, const conv_algo_t *e, int n, char *err, size_t errlen);
/* --conv-cache validation before any run: an existing file must parse and be writable, a new one's directory must
 * exist and be writable. 0, or -1 with a one-line message in err. Writes nothing. */
int conv_cache_check(const char *path, char *err, size_t errlen);
#ifdef __cplusplus
}
#endif
