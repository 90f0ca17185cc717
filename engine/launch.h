/* launch.h — the grid of a grid-stride kernel: enough blocks for n elements at `threads` per block, capped where a
 * few waves already fill an H100/H200 (the loop covers the rest), never 0 (a zero-block grid is a launch error). */
#pragma once
#include <stddef.h>

static inline unsigned launch_blocks(size_t n, int threads, size_t max_blocks) {
    size_t blocks = (n + (size_t)threads - 1) / (size_t)threads;
    if (blocks > max_blocks) blocks = max_blocks;
    return blocks ? (unsigned)blocks : 1u;
}
