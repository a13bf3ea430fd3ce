/* onnx_external.c: the contents of the small tensors a model keeps in external data (ONNX's
 * external_data entries: a location relative to the model's directory, an offset, a length).
 * Only tensors of at most ONNX_MAX_FOLD elements are read: the ones shape arithmetic may need (a
 * Reshape's target, Slice bounds) when a writer moved every initializer out (onnx's
 * convert_model_to_external_data with size_threshold=0). Weights are never read, so a model
 * whose data file was left behind imports whole unless a node needs the contents of a small
 * tensor; that node's error then names the file and why it could not be read. Every external
 * tensor is checked all the same: its location inside the model's directory (by text, then by
 * real path once the file is open: a symbolic link out of it is refused), its length against
 * its shape, its bytes inside the file when the file is there (never opened blocking: a FIFO is
 * refused, not waited on). A 70B model's 140 GB of external data is never read. */
#include "onnx_impl.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

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

/* The data file last opened (exports keep every tensor in one): its location, descriptor and
 * size; fd -1 when it is absent. */
struct ext_file {
    const char *loc;
    int         fd;
    int64_t     size;
    char        path[PATH_MAX];
};

static bool ext_fail(struct pb_doc *d, const struct o_tensor *t, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
static bool ext_fail(struct pb_doc *d, const struct o_tensor *t, const char *fmt, ...) {
    char why[PATH_MAX + 200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    return pb_fail(d, d->base + t->offset, DP_ERR_INVALID, "tensor '%.200s': %s", t->name, why);
}

/* Opens the data file of t (once per location): never blocking (a FIFO), a regular file whose
 * real path lies in the model's real directory (a symbolic link out of it is refused). A file
 * that is not there leaves fd -1: its tensors are declared, their data is never needed. */
static bool ext_open(struct pb_doc *d, const struct o_tensor *t, const char *model_path,
                     struct ext_file *f) {
    if (f->loc && !strcmp(f->loc, t->location)) return true;
    if (f->fd >= 0) close(f->fd);
    f->loc = t->location;
    f->fd = -1;
    const char *slash = strrchr(model_path, '/');
    int dir = slash ? (int)(slash - model_path) + 1 : 0;
    if (snprintf(f->path, sizeof f->path, "%.*s%s", dir, model_path, t->location) >=
        (int)sizeof f->path)
        return ext_fail(d, t, "external data '%.200s': the path is longer than PATH_MAX",
                        t->location);
    int fd = open(f->path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) return true; /* absent (or unreadable): declared only */
    struct stat sb;
    char real[PATH_MAX], real_dir[PATH_MAX], dir_path[PATH_MAX];
    snprintf(dir_path, sizeof dir_path, "%.*s", dir ? dir : 1, dir ? model_path : ".");
    if (fstat(fd, &sb) || !S_ISREG(sb.st_mode)) {
        close(fd);
        return ext_fail(d, t, "external data %s is not a regular file", f->path);
    }
    if (!realpath(f->path, real) || !realpath(dir_path, real_dir)) {
        close(fd);
        return ext_fail(d, t, "external data %s: cannot resolve its path: %s", f->path,
                        strerror(errno));
    }
    size_t n = strlen(real_dir);
    if (strncmp(real, real_dir, n) || (real[n] != '/' && strcmp(real_dir, "/"))) {
        close(fd);
        return ext_fail(d, t, "external data %s resolves to %s, outside the model's directory "
                        "%s", f->path, real, real_dir);
    }
    f->fd = fd;
    f->size = (int64_t)sb.st_size;
    return true;
}

/* One external tensor: its location inside the model's directory, its length agreeing with
 * its shape, its bytes inside the data file when the file is there; the contents of a small
 * one read (the rest never). */
static bool read_one(struct pb_doc *d, struct o_tensor *t, const char *model_path,
                     struct ext_file *f) {
    if (!t->external) return true;
    const char *loc = t->location ? t->location : "";
    if (!inside(loc))
        return ext_fail(d, t, "external data location '%.200s' is outside the model's "
                        "directory", loc);
    t->location = loc;
    double numel = onnx_numel(t);
    int w = onnx_elem_bytes(t->dtype);
    if (t->ext_length >= 0 && w && (double)t->ext_length != numel * w)
        return ext_fail(d, t, "its shape holds %.0f elements (%.0f bytes) but its external data "
                        "length is %lld", numel, numel * w, (long long)t->ext_length);
    bool small = t->n_dims <= DP_MAX_DIMS && numel <= ONNX_MAX_FOLD && onnx_raw_width(t->dtype);
    if (!model_path)
        return !small || unread(d, t, "the model was read from stdin or memory: no directory "
                                "to find '%.200s' in", loc);
    if (!ext_open(d, t, model_path, f)) return false;
    if (f->fd < 0)
        return !small || unread(d, t, "%s: cannot open: it is not there", f->path);
    double need = t->ext_length >= 0 ? (double)t->ext_length : numel * w;
    if ((double)t->ext_offset + need > (double)f->size)
        return ext_fail(d, t, "external data past the end of %s: bytes %lld to %.0f of a "
                        "%lld-byte file", f->path, (long long)t->ext_offset,
                        (double)t->ext_offset + need, (long long)f->size);
    if (!small) return true;
    unsigned char raw[ONNX_MAX_FOLD * 8];
    size_t len = (size_t)need;
    if (pread(f->fd, raw, len, (off_t)t->ext_offset) != (ssize_t)len)
        return unread(d, t, "%s: cannot read: %s", f->path, strerror(errno));
    return onnx_tensor_raw(d, t, raw, len);
}

bool onnx_read_external(struct pb_doc *d, struct o_model *m, const char *model_path) {
    struct o_graph *g = &m->g;
    struct ext_file f = {NULL, -1, 0, ""};
    bool ok = true;
    for (int i = 0; i < g->n_inits && ok; i++) ok = read_one(d, &g->inits[i], model_path, &f);
    for (int i = 0; i < g->n_nodes && ok; i++)
        for (int a = 0; a < g->nodes[i].n_attrs && ok; a++)
            if (g->nodes[i].attrs[a].t) ok = read_one(d, g->nodes[i].attrs[a].t, model_path, &f);
    if (f.fd >= 0) close(f.fd);
    return ok;
}
