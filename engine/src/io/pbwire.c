/* pbwire.c: the protobuf wire-format decoder shared by the ONNX and binary GraphDef readers:
 * every read bounds-checked against its enclosing message, failures sticky with the byte offset,
 * decoded strings in one arena. */
#include "pbwire.h"

#include <limits.h>
#include <stdalign.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct pb_block {
    struct pb_block *next;
    size_t           used, cap;
    alignas(16) unsigned char data[];
};

void *pb_alloc(struct pb_arena *a, size_t n) {
    n = (n + 15) & ~(size_t)15;
    if (!a->head || a->head->cap - a->head->used < n) {
        size_t cap = n > 65536 ? n : 65536;
        struct pb_block *blk = malloc(sizeof *blk + cap);
        if (!blk) return NULL;
        blk->next = a->head;
        blk->used = 0;
        blk->cap = cap;
        a->head = blk;
    }
    void *p = a->head->data + a->head->used;
    a->head->used += n;
    return p;
}

void pb_arena_free(struct pb_arena *a) {
    while (a->head) {
        struct pb_block *n = a->head->next;
        free(a->head);
        a->head = n;
    }
}

void *pb_push(struct pb_arena *a, void **arr, int *n, int *cap, size_t sz) {
    if (*n == *cap) {
        if (*cap > INT_MAX / 2) return NULL; /* 2^30 two-byte entries fit in a 2 GiB file */
        int nc = *cap ? *cap * 2 : 8;
        void *p = pb_alloc(a, (size_t)nc * sz);
        if (!p) return NULL;
        if (*n) memcpy(p, *arr, (size_t)*n * sz);
        *arr = p;
        *cap = nc;
    }
    void *e = (unsigned char *)*arr + (size_t)(*n)++ * sz;
    memset(e, 0, sz);
    return e;
}

bool pb_fail(struct pb_doc *d, const unsigned char *at, enum dp_status st, const char *fmt, ...) {
    if (d->st) return false;
    char what[384];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    d->st = st;
    dp_error_set(d->err, st, "%s:byte %zu: %s", d->name, (size_t)(at - d->base), what);
    return false;
}

bool pb_oom(struct pb_doc *d) {
    if (!d->st) {
        d->st = DP_ERR_NOMEM;
        dp_error_set(d->err, DP_ERR_NOMEM, "%s: out of memory", d->name);
    }
    return false;
}

struct pb_rd pb_reader(struct pb_doc *d) {
    struct pb_rd r = {d->base, d->base + d->len, d};
    return r;
}

static bool rd_fail(struct pb_rd *r, const char *what) {
    return pb_fail(r->d, r->p, DP_ERR_PARSE, "%s", what);
}

bool pb_varint(struct pb_rd *r, uint64_t *v) {
    uint64_t x = 0;
    for (int shift = 0; shift < 70; shift += 7) {
        if (r->p >= r->end) return rd_fail(r, "truncated varint");
        unsigned char b = *r->p++;
        if (shift == 63 && (b & 0x7e)) return rd_fail(r, "varint overflows 64 bits");
        x |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            *v = x;
            return true;
        }
    }
    return rd_fail(r, "varint longer than 10 bytes");
}

bool pb_key(struct pb_rd *r, uint32_t *field, int *wire) {
    const unsigned char *at = r->p;
    uint64_t k;
    if (!pb_varint(r, &k)) return false;
    *field = (uint32_t)(k >> 3);
    *wire = (int)(k & 7);
    if ((k >> 3) == 0 || (k >> 3) > 536870911u)
        return pb_fail(r->d, at, DP_ERR_PARSE, "bad field number");
    if (*wire == 3 || *wire == 4)
        return pb_fail(r->d, at, DP_ERR_PARSE, "protobuf groups (wire type 3/4) are not supported");
    if (*wire != PB_VARINT && *wire != PB_I64 && *wire != PB_LEN && *wire != PB_I32)
        return pb_fail(r->d, at, DP_ERR_PARSE, "bad wire type");
    return true;
}

bool pb_len(struct pb_rd *r, struct pb_rd *sub) {
    uint64_t n;
    if (!pb_varint(r, &n)) return false;
    if (n > (uint64_t)(r->end - r->p))
        return pb_fail(r->d, r->p, DP_ERR_PARSE,
                       "length %llu runs past the end of its message (%zu bytes left)",
                       (unsigned long long)n, (size_t)(r->end - r->p));
    sub->p = r->p;
    sub->end = r->p + n;
    sub->d = r->d;
    r->p += n;
    return true;
}

bool pb_fixed(struct pb_rd *r, int n, uint64_t *v) {
    if (r->end - r->p < n) return rd_fail(r, "truncated fixed-width field");
    uint64_t x = 0;
    for (int i = 0; i < n; i++) x |= (uint64_t)r->p[i] << (8 * i);
    r->p += n;
    *v = x;
    return true;
}

bool pb_skip(struct pb_rd *r, int wire) {
    uint64_t v;
    struct pb_rd sub;
    switch (wire) {
    case PB_VARINT: return pb_varint(r, &v);
    case PB_I64: return pb_fixed(r, 8, &v);
    case PB_I32: return pb_fixed(r, 4, &v);
    default: return pb_len(r, &sub);
    }
}

bool pb_bytes(struct pb_rd *r, int wire, const unsigned char **out, size_t *n) {
    struct pb_rd sub;
    if (wire != PB_LEN) return rd_fail(r, "bytes field with a non-length wire type");
    if (!pb_len(r, &sub)) return false;
    *out = sub.p;
    *n = (size_t)(sub.end - sub.p);
    return true;
}

bool pb_string(struct pb_rd *r, int wire, const char **out) {
    const unsigned char *at = r->p, *b;
    size_t n;
    if (wire != PB_LEN) return rd_fail(r, "string field with a non-length wire type");
    if (!pb_bytes(r, wire, &b, &n)) return false;
    if (memchr(b, 0, n)) return pb_fail(r->d, at, DP_ERR_PARSE, "string with a NUL byte inside");
    char *s = pb_alloc(&r->d->ar, n + 1);
    if (!s) return pb_oom(r->d);
    memcpy(s, b, n);
    s[n] = '\0';
    *out = s;
    return true;
}

bool pb_ints(struct pb_rd *r, int wire, int64_t *vals, int max, int *n) {
    uint64_t v;
    if (wire == PB_VARINT) {
        if (!pb_varint(r, &v)) return false;
        if (*n < max) vals[*n] = (int64_t)v;
        if (*n < INT_MAX) (*n)++;
        return true;
    }
    if (wire != PB_LEN) return rd_fail(r, "integer list with a bad wire type");
    struct pb_rd sub;
    if (!pb_len(r, &sub)) return false;
    while (sub.p < sub.end) {
        if (!pb_varint(&sub, &v)) return false;
        if (*n < max) vals[*n] = (int64_t)v;
        if (*n < INT_MAX) (*n)++;
    }
    return true;
}

bool pb_int(struct pb_rd *r, int wire, int64_t *out) {
    uint64_t v;
    if (wire != PB_VARINT) return rd_fail(r, "integer field with a non-varint wire type");
    if (!pb_varint(r, &v)) return false;
    *out = (int64_t)v;
    return true;
}

bool pb_float(struct pb_rd *r, int wire, float *out) {
    uint64_t v = 0;
    if (wire != PB_I32) return rd_fail(r, "float field with a non-32-bit wire type");
    if (!pb_fixed(r, 4, &v)) return false;
    uint32_t u = (uint32_t)v;
    memcpy(out, &u, sizeof *out);
    return true;
}
