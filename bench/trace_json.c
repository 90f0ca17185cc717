/* trace_json.c — the Chrome-trace JSON writer: complete events ("ph": "X") with microsecond timestamps, plus
 * process/thread name metadata so each GPU and stream is labelled in the viewer. */
#include "trace_json.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp_event(const void *a, const void *b) {
    const trace_event_t *x = a, *y = b;
    if (x->gpu != y->gpu) return x->gpu - y->gpu;
    if (x->lane != y->lane) return x->lane - y->lane;
    return (x->ts_us > y->ts_us) - (x->ts_us < y->ts_us);
}

/* JSON string body: quotes, backslashes and control characters escaped. */
static void put_string(FILE *f, const char *s) {
    fputc('"', f);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') fprintf(f, "\\%c", c);
        else if (c < 0x20) fprintf(f, "\\u%04x", c);
        else fputc(c, f);
    }
    fputc('"', f);
}

int trace_json_write(const char *path, trace_event_t *ev, int n, const char *title, char *err, size_t errlen) {
    qsort(ev, (size_t)n, sizeof *ev, cmp_event);
    FILE *f = fopen(path, "w");
    if (!f) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    fprintf(f, "{\"displayTimeUnit\": \"ms\", \"otherData\": {\"title\": ");
    put_string(f, title ? title : "");
    fprintf(f, ", \"clock\": \"CUDA events; each GPU's time zero is the start of the first traced step\"},\n"
               " \"traceEvents\": [");
    static const char *const lane_name[TRACE_LANES] = {"compute", "communication", "gradients in"};
    int first = 1, last_gpu = -1, last_lane = -1;
    for (int i = 0; i < n; i++) {
        if (ev[i].gpu != last_gpu) {   /* name each GPU, and each of its streams that has ranges, once */
            last_gpu = ev[i].gpu;
            last_lane = -1;
            fprintf(f, "%s\n  {\"ph\": \"M\", \"name\": \"process_name\", \"pid\": %d, \"tid\": 0, "
                       "\"args\": {\"name\": \"GPU %d\"}}", first ? "" : ",", ev[i].gpu, ev[i].gpu);
            first = 0;
        }
        if (ev[i].lane != last_lane) {
            last_lane = ev[i].lane;
            int known = last_lane >= 0 && last_lane < TRACE_LANES;
            fprintf(f, ",\n  {\"ph\": \"M\", \"name\": \"thread_name\", \"pid\": %d, \"tid\": %d, "
                       "\"args\": {\"name\": \"%s\"}}", ev[i].gpu, last_lane, known ? lane_name[last_lane] : "stream");
        }
        fprintf(f, ",\n  {\"ph\": \"X\", \"name\": ");
        put_string(f, ev[i].name);
        fprintf(f, ", \"pid\": %d, \"tid\": %d, \"ts\": %.3f, \"dur\": %.3f}", ev[i].gpu, ev[i].lane, ev[i].ts_us,
                ev[i].dur_us);
    }
    fprintf(f, "\n]}\n");
    if (fclose(f) != 0) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    return 0;
}
