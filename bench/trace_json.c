/* trace_json.c — the Chrome-trace JSON writer: complete events ("ph": "X") with microsecond timestamps, plus
 * process/thread name metadata so each GPU and stream is labelled in the viewer. */
#include "trace_json.h"
#include "../study/paths.h"
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

int trace_json_run_path(char *buf, size_t len, const char *base, int n_runs, int index) {
    const char *dot = strrchr(base, '.');
    int n;
    if (n_runs > 1 && dot && !strchr(dot, '/'))
        n = snprintf(buf, len, "%.*s-run%d%s", (int)(dot - base), base, index + 1, dot);
    else if (n_runs > 1) n = snprintf(buf, len, "%s-run%d", base, index + 1);
    else n = snprintf(buf, len, "%s", base);
    return n >= 0 && (size_t)n < len ? 0 : -1;
}

/* Written to a temporary file beside path and renamed over it: a reader never sees half a trace, and a path that
 * names another file (a symlink) is replaced, never written through. */
int trace_json_write(const char *path, trace_event_t *ev, int n, const char *title, char *err, size_t errlen) {
    qsort(ev, (size_t)n, sizeof *ev, cmp_event);
    paths_replace_t r;
    if (paths_replace_begin(&r, path, err, errlen) != 0) return -1;
    FILE *f = r.f;
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
    return paths_replace_end(&r, err, errlen);
}
