/* test_torch.c: the PyTorch checkpoint reader: the published GCN checkpoint imports and equals
 * gcn_pretrained_weights.json bit for bit; small archives made here check strides, data
 * descriptors and each corruption (compressed, truncated, CRC, bad opcode, refused global,
 * missing or short storage, out-of-range view, not a zip); and archives made to cost time or
 * memory (stride 0, too many elements, a repeated key, MEMOIZE, too many values, a long global,
 * overlapping entries) refused or read at once. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dp/inspector.h"
#include "dp/torch.h"
#include "test.h"

static uint32_t crc32_t(const unsigned char *p, size_t n) {
    uint32_t c = 0xFFFFFFFFu;
    for (size_t i = 0; i < n; i++) {
        c ^= p[i];
        for (int k = 0; k < 8; k++) c = c & 1 ? 0xEDB88320u ^ (c >> 1) : c >> 1;
    }
    return c ^ 0xFFFFFFFFu;
}

/* A growing byte buffer (the hostile cases below reach megabytes). */
struct buf {
    unsigned char *d;
    size_t n, cap;
};
static void put(struct buf *b, const void *p, size_t n) {
    if (b->n + n > b->cap) {
        size_t cap = b->cap ? b->cap : 8192;
        while (cap < b->n + n) cap *= 2;
        unsigned char *d = realloc(b->d, cap);
        if (!d) abort();
        b->d = d;
        b->cap = cap;
    }
    memcpy(b->d + b->n, p, n);
    b->n += n;
}
static void put16(struct buf *b, unsigned v) { unsigned char x[2] = {(unsigned char)v, (unsigned char)(v >> 8)}; put(b, x, 2); }
static void put32(struct buf *b, uint32_t v) { put16(b, v & 0xFFFF); put16(b, v >> 16); }

struct ent {
    const char *name;
    const unsigned char *data;
    size_t n;
};

/* A zip as torch writes it: stored entries, data descriptors (sizes 0 in the local header). */
static void make_zip(struct buf *z, const struct ent *e, int n, unsigned method) {
    uint32_t off[8];
    z->n = 0;
    for (int i = 0; i < n; i++) {
        off[i] = (uint32_t)z->n;
        put32(z, 0x04034b50u); put16(z, 20); put16(z, 0x0808); put16(z, method);
        put16(z, 0); put16(z, 0); put32(z, 0); put32(z, 0); put32(z, 0);
        put16(z, (unsigned)strlen(e[i].name)); put16(z, 0);
        put(z, e[i].name, strlen(e[i].name));
        put(z, e[i].data, e[i].n);
        put32(z, 0x08074b50u); put32(z, crc32_t(e[i].data, e[i].n));
        put32(z, (uint32_t)e[i].n); put32(z, (uint32_t)e[i].n);
    }
    uint32_t cd = (uint32_t)z->n;
    for (int i = 0; i < n; i++) {
        put32(z, 0x02014b50u); put16(z, 20); put16(z, 20); put16(z, 0x0808); put16(z, method);
        put16(z, 0); put16(z, 0); put32(z, crc32_t(e[i].data, e[i].n));
        put32(z, (uint32_t)e[i].n); put32(z, (uint32_t)e[i].n);
        put16(z, (unsigned)strlen(e[i].name)); put16(z, 0); put16(z, 0); put16(z, 0); put16(z, 0);
        put32(z, 0); put32(z, off[i]);
        put(z, e[i].name, strlen(e[i].name));
    }
    uint32_t cd_size = (uint32_t)z->n - cd;
    put32(z, 0x06054b50u); put16(z, 0); put16(z, 0); put16(z, (unsigned)n); put16(z, (unsigned)n);
    put32(z, cd_size); put32(z, cd); put16(z, 0);
}

/* A state_dict pickle {"w": tensor(storage "0", offset, size (2, 3), stride (s0, s1))}. */
static size_t make_pickle(unsigned char *p, const char *global, int numel, int offset, int s0, int s1,
                          unsigned char stop) {
    size_t n = 0;
#define B(...) do { const unsigned char x_[] = {__VA_ARGS__}; memcpy(p + n, x_, sizeof x_); n += sizeof x_; } while (0)
#define S(s) do { memcpy(p + n, s, strlen(s)); n += strlen(s); } while (0)
    B(0x80, 2, 'c'); S("collections\nOrderedDict\n"); B('q', 0, ')', 'R', 'q', 1, '(');
    B('X', 1, 0, 0, 0, 'w');
    B('c'); S(global); B('q', 2, '(', '(');
    B('X', 7, 0, 0, 0); S("storage");
    B('c'); S("torch\nFloatStorage\n");
    B('X', 1, 0, 0, 0, '0', 'X', 3, 0, 0, 0, 'c', 'p', 'u');
    B('K', (unsigned char)numel, 't', 'Q', 'K', (unsigned char)offset, 'K', 2, 'K', 3, 0x86);
    B('K', (unsigned char)s0, 'K', (unsigned char)s1, 0x86, 0x89);
    B('h', 0, ')', 'R', 't', 'R', 'u', stop);
#undef B
#undef S
    return n;
}

static enum dp_status parse_case(const char *global, int numel, int offset, int s0, int s1,
                                 unsigned char stop, unsigned method, int n_floats, int corrupt,
                                 bool drop_storage, struct dp_torch_state *st, struct dp_error *err) {
    static unsigned char pkl[1024], data[64];
    static struct buf z;
    float f[16];
    for (int i = 0; i < 16; i++) f[i] = (float)i;
    memcpy(data, f, sizeof f);
    size_t pn = make_pickle(pkl, global, numel, offset, s0, s1, stop);
    struct ent e[3] = {{"archive/data.pkl", pkl, pn},
                       {"archive/data/0", data, (size_t)n_floats * 4},
                       {"archive/version", (const unsigned char *)"3\n", 2}};
    if (drop_storage) e[1] = e[2];
    make_zip(&z, e, drop_storage ? 2 : 3, method);
    if (corrupt == 1) z.d[40 + 16 + pn + 16 + 30 + 14 + 2] ^= 0x55; /* a byte of the storage */
    size_t len = corrupt == 2 ? z.n / 2 : z.n;
    return dp_torch_parse(z.d, len, "t.pkl", st, err);
}

static void test_small(void) {
    struct dp_torch_state st = {0, NULL};
    struct dp_error err = {0};
    /* A transposed view: element [i][j] = storage[offset + i*s0 + j*s1]. */
    CHECK(parse_case("torch._utils\n_rebuild_tensor_v2\n", 8, 1, 1, 2, '.', 0, 8, 0, false, &st, &err) == DP_OK);
    if (st.n_tensors == 1) {
        CHECK(!strcmp(st.tensors[0].name, "w"));
        CHECK(st.tensors[0].n_dims == 2 && st.tensors[0].shape[0] == 2 && st.tensors[0].shape[1] == 3);
        float want[6] = {1, 3, 5, 2, 4, 6};
        for (int i = 0; i < 6; i++) CHECK(st.tensors[0].data[i] == want[i]);
        CHECK(dp_torch_find(&st, "w") == 0 && dp_torch_find(&st, "x") == -1);
    } else {
        fprintf(stderr, "small case: %s\n", err.msg);
        CHECK(0);
    }
    dp_torch_state_free(&st);

    struct {
        const char *global;
        int numel, offset, s0, s1;
        unsigned char stop;
        unsigned method;
        int n_floats, corrupt;
        bool drop;
        const char *needle;
    } bad[] = {
        {"torch._utils\n_rebuild_tensor_v2\n", 6, 0, 3, 1, '.', 8, 6, 0, false, "compressed (method 8, deflate)"},
        {"torch._utils\n_rebuild_tensor_v2\n", 6, 0, 3, 1, '.', 0, 6, 2, false, "t.pkl: zip end record missing"},
        {"torch._utils\n_rebuild_tensor_v2\n", 6, 0, 3, 1, '.', 0, 6, 1, false, "CRC-32"},
        {"torch._utils\n_rebuild_tensor_v2\n", 6, 0, 3, 1, 0xFF, 0, 6, 0, false, "opcode 0xff"},
        {"os\nsystem\n", 6, 0, 3, 1, '.', 0, 6, 0, false, "os.system"},
        {"torch._utils\n_rebuild_tensor_v2\n", 6, 0, 3, 1, '.', 0, 6, 0, true, "storage entry 'archive/data/0' is missing"},
        {"torch._utils\n_rebuild_tensor_v2\n", 7, 0, 3, 1, '.', 0, 6, 0, false, "holds 24 bytes"},
        {"torch._utils\n_rebuild_tensor_v2\n", 6, 1, 3, 1, '.', 0, 6, 0, false, "reaches element 6"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        memset(&err, 0, sizeof err);
        enum dp_status s = parse_case(bad[i].global, bad[i].numel, bad[i].offset, bad[i].s0, bad[i].s1,
                                      bad[i].stop, bad[i].method, bad[i].n_floats, bad[i].corrupt,
                                      bad[i].drop, &st, &err);
        CHECK(s != DP_OK);
        CHECK_CONTAINS(err.msg, bad[i].needle);
        CHECK(st.n_tensors == 0);
    }
    const unsigned char junk[40] = "this is not a zip archive at all........";
    CHECK(dp_torch_parse(junk, sizeof junk, "junk.pkl", &st, &err) == DP_ERR_PARSE);
    CHECK_CONTAINS(err.msg, "junk.pkl: not a zip archive");
    CHECK(dp_torch_load("/nonexistent/nope.pkl", &st, &err) == DP_ERR_IO);
    CHECK_CONTAINS(err.msg, "nope.pkl");
}

/* The published checkpoint equals the published JSON weights exactly. */
static void test_published(void) {
    struct dp_torch_state st = {0, NULL};
    struct dp_error err = {0};
    CHECK(dp_torch_load(REF_DIR "/driple_pretrain_gcn.pkl", &st, &err) == DP_OK);
    CHECK(st.n_tensors == 18);
    struct dp_model *ref = NULL;
    if (dp_model_load_torch_json_new(REF_DIR "/gcn_pretrained_weights.json", &ref, &err) != DP_OK) {
        fprintf(stderr, "reference JSON: %s\n", err.msg);
        CHECK(0);
        dp_torch_state_free(&st);
        return;
    }
    CHECK(dp_model_n_params(ref) == st.n_tensors);
    for (int i = 0; i < dp_model_n_params(ref); i++) {
        struct dp_param p;
        dp_model_param(ref, i, &p);
        int j = dp_torch_find(&st, p.name);
        CHECK(j >= 0);
        if (j < 0) continue;
        CHECK(st.tensors[j].size == p.size && st.tensors[j].n_dims == p.n_dims);
        if (st.tensors[j].size == p.size)
            CHECK(memcmp(st.tensors[j].data, p.data, p.size * sizeof(float)) == 0);
    }
    /* The inspector import: architecture default GCN, scale 1, provenance imported/published. */
    struct dp_arch a;
    dp_arch_default(&a);
    struct dp_inspector *insp = NULL;
    CHECK(dp_inspector_import_torch(REF_DIR "/driple_pretrain_gcn.pkl", &a, &insp, &err) == DP_OK);
    if (insp) {
        const struct dp_provenance *pv = dp_inspector_provenance(insp);
        CHECK(!strcmp(pv->origin, "imported") && !strcmp(pv->data, "published"));
        CHECK(dp_inspector_output(insp, 4)->scale == 1.0);
        const struct dp_model *m = dp_inspector_model(insp);
        for (int i = 0; i < dp_model_n_params(ref); i++) {
            struct dp_param p, q;
            dp_model_param(ref, i, &p);
            int j = dp_model_find_param(m, p.name);
            CHECK(j >= 0);
            if (j < 0) continue;
            dp_model_param(m, j, &q);
            CHECK(q.size == p.size && memcmp(q.data, p.data, p.size * sizeof(float)) == 0);
        }
    }
    dp_inspector_free(insp);
    /* The wrong layer type names the missing parameter. */
    a.layer = DP_LAYER_GIN;
    insp = NULL;
    CHECK(dp_inspector_import_torch(REF_DIR "/driple_pretrain_gcn.pkl", &a, &insp, &err) != DP_OK);
    CHECK_CONTAINS(err.msg, "driple_pretrain_gcn.pkl: ");
    CHECK(insp == NULL);
    dp_model_free(ref);
    dp_torch_state_free(&st);
}

/* Hostile archives kept as files (tests/data/fuzz/torch/): absurd sizes, strides and offsets,
 * and zips whose directory points outside the file; each refused with a message naming it. */
static void test_hostile_files(void) {
#define F "tests/data/fuzz/torch/"
    static const struct { const char *path, *want; } cases[] = {
        {F "huge_shape.pkl", F "huge_shape.pkl: tensor 'w': size overflows"},
        {F "huge_stride.pkl", F "huge_stride.pkl: tensor 'w': view (offset 0, size and stride) reaches "
                              "element 4611686018427387904 of a 16-element storage"},
        {F "memo_huge.pkl", F "memo_huge.pkl:data.pkl+3: memo index too large"},
        {F "binunicode_huge.pkl", F "binunicode_huge.pkl:data.pkl+2: string runs past the end (truncated)"},
        {F "zip_cd_size.pkl", F "zip_cd_size.pkl: central directory (offset 50, 4294967280 bytes) lies "
                              "outside the file"},
        /* 42 bytes: a zip64 locator pointing past the end; the bound len - 56 wrapped around
         * and the record was read out of bounds (ASan heap-buffer-overflow). */
        {F "zip64_short.pkl", F "zip64_short.pkl: bad zip64 end record offset 100000"},
        {F "zip_loff.pkl", F "zip_loff.pkl: local header of 'archive/data.pkl' at offset 4294967040 is corrupt"},
    };
#undef F
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct dp_torch_state st = {0, NULL};
        struct dp_error err = {0};
        CHECK(dp_torch_load(cases[i].path, &st, &err) != DP_OK);
        CHECK(st.n_tensors == 0);
        CHECK_CONTAINS(err.msg, cases[i].want);
    }
}

/* A state_dict of n tensors: key keys[i] (NULL: "t<i>"), each a view (rows, cols) with strides
 * (s0, s1) at offset 0 of one float storage "0" of numel elements (BININT2: up to 65535). */
static void hostile_pickle(struct buf *p, const char *const *keys, int n, unsigned numel,
                           unsigned rows, unsigned cols, unsigned s0, unsigned s1) {
#define B(...) do { const unsigned char x_[] = {__VA_ARGS__}; put(p, x_, sizeof x_); } while (0)
#define S(s) put(p, s, strlen(s))
#define U2(v) (unsigned char)((v) & 0xFF), (unsigned char)((v) >> 8)
    p->n = 0;
    B(0x80, 2, 'c'); S("collections\nOrderedDict\n"); B(')', 'R', '(');
    for (int i = 0; i < n; i++) {
        char k[32];
        if (keys) snprintf(k, sizeof k, "%s", keys[i]);
        else snprintf(k, sizeof k, "t%d", i);
        B('X', (unsigned char)strlen(k), 0, 0, 0); S(k);
        B('c'); S("torch._utils\n_rebuild_tensor_v2\n"); B('(', '(');
        B('X', 7, 0, 0, 0); S("storage");
        B('c'); S("torch\nFloatStorage\n");
        B('X', 1, 0, 0, 0, '0', 'X', 3, 0, 0, 0, 'c', 'p', 'u');
        B('M', U2(numel), 't', 'Q', 'K', 0, 'M', U2(rows), 'M', U2(cols), 0x86);
        B('M', U2(s0), 'M', U2(s1), 0x86, 0x89, 'c'); S("collections\nOrderedDict\n");
        B(')', 'R', 't', 'R');
    }
    B('u', '.');
#undef U2
#undef S
#undef B
}

/* The pickle p and a storage of numel floats in an archive; parsed. */
static enum dp_status hostile_parse(const struct buf *p, unsigned numel, struct dp_error *err) {
    float *data = calloc(numel ? numel : 1, sizeof *data);
    struct ent e[2] = {{"archive/data.pkl", p->d, p->n},
                       {"archive/data/0", (const unsigned char *)data, (size_t)numel * 4}};
    struct buf z = {0};
    make_zip(&z, e, 2, 0);
    struct dp_torch_state st = {0, NULL};
    enum dp_status r = dp_torch_parse(z.d, z.n, "h.pkl", &st, err);
    CHECK(st.n_tensors == 0 || r == DP_OK);
    dp_torch_state_free(&st);
    free(z.d);
    free(data);
    return r;
}

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Small archives made to cost time or memory (issue 17), each refused (or read) at once. */
static void test_hostile_costs(void) {
    struct dp_error err = {0};
    struct buf p = {0};
    /* A stride-0 view of one element asking for 16384 x 16384 copies: the old reader allocated
     * and filled 1 GiB before refusing; now refused from the view, nothing allocated. */
    hostile_pickle(&p, NULL, 1, 1, 16384, 16384, 0, 0);
    double t0 = now_s();
    CHECK(hostile_parse(&p, 1, &err) == DP_ERR_PARSE);
    CHECK_CONTAINS(err.msg, "h.pkl: tensor 't0': 268435456 elements from a 1-element storage (a "
                            "view repeating elements");
    CHECK(now_s() - t0 < 1);
    /* Tensors that each view a whole 2^20-element storage: 65 of them pass the 2^26-element cap
     * in all, refused before any is allocated. */
    hostile_pickle(&p, NULL, 65, 65535, 16, 4095, 4095, 1);
    CHECK(hostile_parse(&p, 65535, &err) == DP_OK); /* 65 x 65,520 elements: within the cap */
    hostile_pickle(&p, NULL, 1100, 65535, 16, 4095, 4095, 1);
    CHECK(hostile_parse(&p, 65535, &err) == DP_ERR_INVALID);
    CHECK_CONTAINS(err.msg, "h.pkl: tensor 't1024': more than 67108864 tensor elements in all");
    /* One key twice (found by sorting: a search per key was quadratic). */
    const char *const twice[] = {"a", "w", "b", "w"};
    hostile_pickle(&p, twice, 4, 6, 2, 3, 3, 1);
    CHECK(hostile_parse(&p, 6, &err) == DP_ERR_PARSE);
    CHECK_CONTAINS(err.msg, "h.pkl:data.pkl: key 'w' appears twice");
    /* MEMOIZE 130,000 times (400 KB): 23 s when each looked for the first free memo slot. */
    p.n = 0;
    put(&p, "\x80\x04}\x94", 4);
    for (int i = 0; i < 130000; i++) put(&p, "N\x94" "0", 3);
    put(&p, ".", 1);
    t0 = now_s();
    CHECK(hostile_parse(&p, 0, &err) == DP_OK);
    double memo_s = now_s() - t0;
    CHECK(memo_s < 5);
    printf("  130,000 MEMOIZE opcodes: %.3f s\n", memo_s);
    /* More values than the pickle machine's cap (NONE, POP: each makes one). */
    p.n = 0;
    put(&p, "\x80\x04}", 3);
    for (int i = 0; i < (1 << 21) + 10; i++) put(&p, "N0", 2);
    put(&p, ".", 1);
    CHECK(hostile_parse(&p, 0, &err) == DP_ERR_INVALID);
    CHECK_CONTAINS(err.msg, "more than 2097152 pickle values and items");
    /* A memoised long string made into a global again and again: refused at its length. */
    p.n = 0;
    put(&p, "\x80\x04X\xd0\x07\x00\x00", 7);
    for (int i = 0; i < 2000; i++) put(&p, "a", 1);
    put(&p, "\x94X\x01\x00\x00\x00" "b\x93.", 9);
    CHECK(hostile_parse(&p, 0, &err) == DP_ERR_PARSE);
    CHECK_CONTAINS(err.msg, "global name longer than 1024 characters");
    free(p.d);

    /* Central-directory records naming one entry's data again: each CRC read it again (60,000
     * records over 1 MiB: 145 s); overlapping entries are refused before any CRC. */
    unsigned char pkl[1024], data[24] = {0};
    size_t pn = make_pickle(pkl, "torch._utils\n_rebuild_tensor_v2\n", 6, 0, 3, 1, '.');
    struct ent e[3] = {{"archive/data.pkl", pkl, pn},
                       {"archive/data/0", data, sizeof data},
                       {"archive/data/1", data, sizeof data}};
    struct buf z = {0};
    make_zip(&z, e, 3, 0);
    /* the third record's local header offset: at its central record + 42 */
    size_t cd3 = z.n - 22 - (46 + strlen(e[2].name));
    uint32_t loff2 = (uint32_t)z.d[cd3 - (46 + strlen(e[1].name)) + 42] |
                     (uint32_t)z.d[cd3 - (46 + strlen(e[1].name)) + 43] << 8;
    z.d[cd3 + 42] = (unsigned char)loff2;
    z.d[cd3 + 43] = (unsigned char)(loff2 >> 8);
    struct dp_torch_state st = {0, NULL};
    CHECK(dp_torch_parse(z.d, z.n, "overlap.pkl", &st, &err) == DP_ERR_PARSE);
    CHECK_CONTAINS(err.msg, "overlap.pkl: zip entries 'archive/data/0' and 'archive/data/1' overlap");
    free(z.d);
}

int main(void) {
    test_small();
    test_hostile_costs();
    test_published();
    test_hostile_files();
    TEST_MAIN_END();
}
