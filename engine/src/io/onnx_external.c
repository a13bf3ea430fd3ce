/* onnx_external.c: the contents of the small tensors a model keeps in external data (ONNX's
 * external_data entries: a location relative to the model's directory, an offset, a length).
 * Only tensors of at most ONNX_MAX_FOLD elements are read: the ones shape arithmetic may need (a
 * Reshape's target, Slice bounds) when a writer moved every initializer out (onnx's
 * convert_model_to_external_data with size_threshold=0). Weights are never read, so a model
 * whose data file was left behind imports whole unless a node needs the contents of a small
 * tensor; that node's error then names the file and why it could not be read. */
#include "onnx_impl.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#ifndef PATH_MAX
#define PATH_MAX 4096
#endif

/* Keeps why t's contents were not read (in the arena); false only when out of memory. */
static bool unread(struct pb_doc *d, struct o_tensor *t, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
static bool unread(struct pb_doc *d, struct o_tensor *t, const char *fmt, ...) {
    char why[PATH_MAX + 160];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    char *s = pb_alloc(&d->ar, strlen(why) + 1);
    if (!s) return pb_oom(d);
    memcpy(s, why, strlen(why) + 1);
    t->unread = s;
    return true;
}

/* A location inside the model's directory: relative, without a ".." component. */
static bool inside(const char *loc) {
    if (!*loc || loc[0] == '/') return false;
    for (const char *c = loc; *c;) {
        size_t n = strcspn(c, "/");
        if (n == 2 && c[0] == '.' && c[1] == '.') return false;
        c += n;
        if (*c) c++;
    }
    return true;
}

static bool read_one(struct pb_doc *d, struct o_tensor *t, const char *model_path) {
    if (!t->external || t->n_dims > DP_MAX_DIMS || onnx_numel(t) > ONNX_MAX_FOLD) return true;
    int w = onnx_raw_width(t->dtype);
    if (!w) return true;
    size_t need = (size_t)onnx_numel(t) * (size_t)w;
    const char *loc = t->location ? t->location : "";
    if (!model_path)
        return unread(d, t, "the model was read from stdin or memory: no directory to find "
                      "'%.200s' in", loc);
    if (!inside(loc))
        return unread(d, t, "location '%.200s' is not inside the model's directory", loc);
    if (t->ext_length >= 0 && (uint64_t)t->ext_length != need)
        return unread(d, t, "'%.200s': length %lld for %zu bytes of contents", loc,
                      (long long)t->ext_length, need);
    const char *slash = strrchr(model_path, '/');
    int dir = slash ? (int)(slash - model_path) + 1 : 0;
    char path[PATH_MAX];
    if (snprintf(path, sizeof path, "%.*s%s", dir, model_path, loc) >= (int)sizeof path)
        return unread(d, t, "'%.200s': the path is longer than PATH_MAX", loc);
    FILE *f = fopen(path, "rb");
    if (!f) return unread(d, t, "%s: cannot open: %s", path, strerror(errno));
    unsigned char raw[ONNX_MAX_FOLD * 8];
    struct stat sb;
    bool ok = true;
    if (fstat(fileno(f), &sb) || !S_ISREG(sb.st_mode)) {
        ok = unread(d, t, "%s: not a regular file", path);
    } else if ((uint64_t)t->ext_offset > (uint64_t)sb.st_size ||
               need > (uint64_t)sb.st_size - (uint64_t)t->ext_offset) {
        ok = unread(d, t, "%s has %lld bytes; the tensor is bytes %lld to %lld", path,
                    (long long)sb.st_size, (long long)t->ext_offset,
                    (long long)t->ext_offset + (long long)need);
    } else if (fseeko(f, (off_t)t->ext_offset, SEEK_SET) || fread(raw, 1, need, f) != need) {
        ok = unread(d, t, "%s: cannot read: %s", path, strerror(errno));
    } else {
        ok = onnx_tensor_raw(d, t, raw, need);
    }
    fclose(f);
    return ok;
}

bool onnx_read_external(struct pb_doc *d, struct o_model *m, const char *model_path) {
    struct o_graph *g = &m->g;
    for (int i = 0; i < g->n_inits; i++)
        if (!read_one(d, &g->inits[i], model_path)) return false;
    for (int i = 0; i < g->n_nodes; i++)
        for (int a = 0; a < g->nodes[i].n_attrs; a++)
            if (g->nodes[i].attrs[a].t && !read_one(d, g->nodes[i].attrs[a].t, model_path))
                return false;
    return true;
}
