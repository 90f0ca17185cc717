/* setup_count.h — where a run's setup stands (layers set up of those begun, algorithm searches run), counted by the
 * engine as it sets layers up and read by the run's watchdog thread for its progress lines. Host-only, thread-safe. */
#pragma once

#ifdef __cplusplus
extern "C" {
#endif

/* One run's setup, over every model instance its process sets up (each GPU's replica or stage, a pipeline's slots
 * and its --micro-batches auto probes): the total grows as each instance begins, since a strategy may set up more
 * than one per GPU and only it knows how many. One thread counts, any other may read (setup_count_read); every
 * function takes NULL (a test or a tool setting a model up outside a run) and does nothing. Zeroed: nothing begun. */
typedef struct setup_count {
    int layers;                 /* layer setups of the instances begun so far */
    int layers_done;
    int conv_searches;          /* convolution algorithm searches run (shape and direction; a cache hit is none) */
    int bn_searches;            /* batch-norm shapes measured (SCALING_BN=auto) */
    unsigned long long devices; /* bit d: an instance began on CUDA ordinal d (d < 64) */
} setup_count_t;

/* What a reader sees at one moment: layers_done <= layers always (read in that order). */
typedef struct {
    int layers, layers_done, conv_searches, bn_searches;
    int gpus;                   /* GPUs on which an instance began */
} setup_count_now_t;

/* An instance of `layers` layers begins its setup on `device`. */
void setup_count_begin(setup_count_t *c, int device, int layers);
/* A layer's setup is done; it ran conv convolution searches and bn batch-norm ones (gpu_t's counts of its setup). */
void setup_count_layer_done(setup_count_t *c, int conv, int bn);
/* All zero where c is NULL. */
setup_count_now_t setup_count_read(const setup_count_t *c);

#ifdef __cplusplus
}
#endif
