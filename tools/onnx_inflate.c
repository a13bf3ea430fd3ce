/* onnx_inflate.c: writes a copy of an ONNX model whose initializers live in external data (the
 * stripped exports of tests/data/onnx/corpus) with every such initializer stored inline as zeros
 * of its full size: `make bench` times importing the 350 MB ViT-B/16 this makes. A stand-alone
 * protobuf rewrite (ModelProto field 7 graph -> field 5 initializers: data_location and
 * external_data dropped, raw_data added), no engine code.
 * Usage: cc -O2 -o onnx_inflate tools/onnx_inflate.c && ./onnx_inflate IN.onnx OUT.onnx */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct rd {
    const unsigned char *p, *end;
};

static int varint(struct rd *r, uint64_t *v) {
    uint64_t x = 0;
    for (int shift = 0; shift < 64 && r->p < r->end; shift += 7) {
        unsigned char b = *r->p++;
        x |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            *v = x;
            return 1;
        }
    }
    return 0;
}

/* The next field: its number, wire type and the bytes it spans [start, r->p); sub gets a
 * length-delimited field's contents. */
static int field(struct rd *r, uint64_t *num, int *wire, const unsigned char **start,
                 struct rd *sub) {
    uint64_t key, v;
    *start = r->p;
    if (!varint(r, &key)) return 0;
    *num = key >> 3;
    *wire = (int)(key & 7);
    switch (*wire) {
    case 0: return varint(r, &v);
    case 1: r->p += 8; return r->p <= r->end;
    case 5: r->p += 4; return r->p <= r->end;
    case 2:
        if (!varint(r, &v) || v > (uint64_t)(r->end - r->p)) return 0;
        sub->p = r->p;
        sub->end = r->p + v;
        r->p += v;
        return 1;
    default: return 0;
    }
}

static size_t varint_len(uint64_t v) {
    size_t n = 1;
    while (v >= 0x80) v >>= 7, n++;
    return n;
}

static void put_varint(FILE *f, uint64_t v) {
    while (v >= 0x80) {
        fputc((int)(v & 0x7f) | 0x80, f);
        v >>= 7;
    }
    fputc((int)v, f);
}

static int elem_size(uint64_t dtype) {
    switch (dtype) {
    case 2: case 3: case 9: return 1;
    case 4: case 5: case 10: case 16: return 2;
    case 7: case 11: case 13: return 8;
    default: return 4;
    }
}

/* An initializer: its size once inline (kept fields + raw_data), and what raw_data adds. */
static uint64_t tensor_size(struct rd t, uint64_t *raw) {
    uint64_t num, n = 0, numel = 1, dtype = 1, v;
    int wire, external = 0;
    const unsigned char *start;
    struct rd sub;
    while (t.p < t.end && field(&t, &num, &wire, &start, &sub)) {
        if (num == 1 && wire == 0) {
            struct rd d = {start + varint_len(num << 3), t.p};
            if (varint(&d, &v)) numel *= v;
        } else if (num == 1 && wire == 2) {
            while (sub.p < sub.end && varint(&sub, &v)) numel *= v;
        } else if (num == 2 && wire == 0) {
            struct rd d = {start + 1, t.p};
            varint(&d, &dtype);
        } else if (num == 14) {
            external = 1;
        }
        if (num != 13 && num != 14) n += (uint64_t)(t.p - start);
    }
    *raw = external ? numel * (uint64_t)elem_size(dtype) : 0;
    return n + (external ? 1 + varint_len(*raw) + *raw : 0);
}

static void write_tensor(FILE *f, struct rd t, uint64_t raw) {
    uint64_t num;
    int wire;
    const unsigned char *start;
    struct rd sub;
    static unsigned char zeros[1 << 20];
    while (t.p < t.end && field(&t, &num, &wire, &start, &sub))
        if (num != 13 && num != 14) fwrite(start, 1, (size_t)(t.p - start), f);
    if (!raw) return;
    fputc(9 << 3 | 2, f);
    put_varint(f, raw);
    for (uint64_t left = raw; left;) {
        size_t k = left < sizeof zeros ? (size_t)left : sizeof zeros;
        fwrite(zeros, 1, k, f);
        left -= k;
    }
}

/* The graph's size once its initializers are inline. */
static uint64_t graph_size(struct rd g) {
    uint64_t num, n = 0, raw;
    int wire;
    const unsigned char *start;
    struct rd sub;
    while (g.p < g.end && field(&g, &num, &wire, &start, &sub)) {
        if (num == 5 && wire == 2) {
            uint64_t t = tensor_size(sub, &raw);
            n += 1 + varint_len(t) + t;
        } else {
            n += (uint64_t)(g.p - start);
        }
    }
    return n;
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: %s IN.onnx OUT.onnx\n", argv[0]);
        return 2;
    }
    FILE *in = fopen(argv[1], "rb");
    if (!in) {
        perror(argv[1]);
        return 1;
    }
    size_t cap = 1 << 20, len = 0;
    unsigned char *buf = malloc(cap);
    for (size_t got; buf && (got = fread(buf + len, 1, cap - len, in)) > 0;) {
        len += got;
        if (len == cap) buf = realloc(buf, cap *= 2);
    }
    fclose(in);
    FILE *out = fopen(argv[2], "wb");
    if (!buf || !out) {
        fprintf(stderr, "%s: cannot write (or out of memory)\n", argv[2]);
        return 1;
    }
    struct rd m = {buf, buf + len}, sub;
    uint64_t num, raw;
    int wire;
    const unsigned char *start;
    while (m.p < m.end && field(&m, &num, &wire, &start, &sub)) {
        if (num != 7 || wire != 2) {
            fwrite(start, 1, (size_t)(m.p - start), out);
            continue;
        }
        fputc(7 << 3 | 2, out);
        put_varint(out, graph_size(sub));
        struct rd g = sub, t;
        while (g.p < g.end && field(&g, &num, &wire, &start, &t)) {
            if (num != 5 || wire != 2) {
                fwrite(start, 1, (size_t)(g.p - start), out);
                continue;
            }
            uint64_t ts = tensor_size(t, &raw);
            fputc(5 << 3 | 2, out);
            put_varint(out, ts);
            write_tensor(out, t, raw);
        }
    }
    free(buf);
    if (fclose(out)) {
        perror(argv[2]);
        return 1;
    }
    return 0;
}
