/* gpt2.c — GPT-2's line of the model table (engine/model_info.h) on the layer-graph side: it has no graph of layers
 * (engine/gpt2/gpt2_model.h is the whole model), so its builder slot only stops a caller that got past the check. */
#include "../model.h"
#include "../check.h"

void model_build_gpt2(model_t *m, int batch, model_input_t in) {
    (void)m, (void)batch, (void)in;
    check_fail(__FILE__, __LINE__, "model_build_gpt2", "GPT-2 is built by engine/gpt2/gpt2_model.h, not as layers");
}
