/* pbwire.h: a bounds-checked protobuf wire-format decoder (private to engine/src/io), shared by
 * the ONNX reader and the binary TensorFlow GraphDef reader: varints, fixed 32/64-bit and
 * length-delimited fields, each read checked against its enclosing message; the first failure
 * is kept (sticky) with the byte offset it happened at ("<file>:byte N: <what>"). Strings and
 * arrays decoded from the input live in one arena freed at once. */
#ifndef DP_IO_PBWIRE_H
#define DP_IO_PBWIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dp/status.h"

struct pb_block;
struct pb_arena {
    struct pb_block *head;
};

/* n bytes (16-aligned) from the arena; NULL when out of memory. */
void *pb_alloc(struct pb_arena *a, size_t n);
/* Frees every block. */
void pb_arena_free(struct pb_arena *a);
/* Appends one zeroed element of size sz to *arr (n elements, capacity *cap), doubling into the
 * arena; NULL when out of memory or past 2^30 elements. */
void *pb_push(struct pb_arena *a, void **arr, int *n, int *cap, size_t sz);

/* One input being decoded: the bytes, the name for messages, the sticky status. */
struct pb_doc {
    const unsigned char *base;
    size_t               len;
    const char          *name;
    struct dp_error     *err;
    enum dp_status       st;
    struct pb_arena      ar;
};

/* A message being read: [p, end) within doc's bytes. */
struct pb_rd {
    const unsigned char *p, *end;
    struct pb_doc       *d;
};

enum { PB_VARINT = 0, PB_I64 = 1, PB_LEN = 2, PB_I32 = 5 };

/* Records a failure at byte `at` ("<name>:byte N: <what>"); the first one wins. Returns false. */
bool pb_fail(struct pb_doc *d, const unsigned char *at, enum dp_status st, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;
/* Records an out-of-memory failure; returns false. */
bool pb_oom(struct pb_doc *d);

/* A reader over the whole document. */
struct pb_rd pb_reader(struct pb_doc *d);
bool pb_varint(struct pb_rd *r, uint64_t *v);
/* The next field's number and wire type (groups and unknown wire types fail). */
bool pb_key(struct pb_rd *r, uint32_t *field, int *wire);
/* A length-delimited field: *sub reads its bytes. */
bool pb_len(struct pb_rd *r, struct pb_rd *sub);
bool pb_fixed(struct pb_rd *r, int n, uint64_t *v);
bool pb_skip(struct pb_rd *r, int wire);
/* A string field copied NUL-terminated into the arena; a NUL byte inside it fails (a name cut
 * short would silently name another thing). */
bool pb_string(struct pb_rd *r, int wire, const char **out);
/* Bytes of a length-delimited field, not copied (*n their count). */
bool pb_bytes(struct pb_rd *r, int wire, const unsigned char **out, size_t *n);
/* Repeated integers, packed (wire 2) or one per field (wire 0); at most max kept, *n counts all. */
bool pb_ints(struct pb_rd *r, int wire, int64_t *vals, int max, int *n);
bool pb_int(struct pb_rd *r, int wire, int64_t *out);
/* A float field (wire 5). */
bool pb_float(struct pb_rd *r, int wire, float *out);

#endif
