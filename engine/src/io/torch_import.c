/* torch_import.c: a PyTorch checkpoint (torch.save of a state_dict) read without Python: the zip
 * container (central directory, zip64 records, stored entries, CRC-32 checked), a pickle virtual
 * machine for the opcode subset torch writes (protocol 2, plus the few of 3-5 that are cheap), and
 * the tensor rebuild (storage, offset, size, stride) into contiguous float32 arrays.
 * Over 800 lines on purpose: the zip reader and the pickle machine serve only this format (no
 * other reader opens a zip or a pickle) and share its limits and its error context (file, byte
 * offset); split them out when a second reader needs either. */
#include "dp/torch.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dp/files.h"

/* Limits (README "Reliability"): the file, the zip entries, the pickle machine's stack, memo and
 * values (each pickle value or container item counts one: every opcode can make one, so this is
 * the pickle's memory cap, about 100 MB), the length of a global's or storage key's name (a
 * memoised string must not be copied again and again), and the elements of all tensors (float32:
 * 256 MiB, as much as the largest file can hold). */
#define TORCH_MAX_BYTES   ((size_t)256 << 20)
#define ZIP_MAX_ENTRIES   100000
#define PK_MAX_STACK      (1 << 20)
#define PK_MAX_MEMO       (1 << 22)
#define PK_MAX_VALUES     (1 << 21)
#define PK_MAX_NAME       1024
#define TORCH_MAX_ELEMS   ((uint64_t)1 << 26)

/* ---- little-endian reads ---- */

static uint16_t rd16(const unsigned char *p) { return (uint16_t)(p[0] | p[1] << 8); }
static uint32_t rd32(const unsigned char *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static uint64_t rd64(const unsigned char *p) { return (uint64_t)rd32(p) | (uint64_t)rd32(p + 4) << 32; }

/* ---- CRC-32 (zip's polynomial) ---- */

static uint32_t crc32_of(const unsigned char *p, size_t n) {
    static uint32_t table[256];
    static int ready; /* benign: every thread computes the same table */
    if (!ready) {
        for (uint32_t i = 0; i < 256; i++) {
            uint32_t c = i;
            for (int k = 0; k < 8; k++) c = c & 1 ? 0xEDB88320u ^ (c >> 1) : c >> 1;
            table[i] = c;
        }
        ready = 1;
    }
    uint32_t c = 0xFFFFFFFFu;
    for (size_t i = 0; i < n; i++) c = table[(c ^ p[i]) & 0xFF] ^ (c >> 8);
    return c ^ 0xFFFFFFFFu;
}

/* ---- zip ---- */

struct zip_entry {
    char                *name;   /* owned */
    const unsigned char *data;   /* into the archive buffer */
    uint64_t             size;
    uint32_t             crc;
};

/* Entries in the central directory's order; by_name sorts them by name for lookups. */
struct zip {
    int                      n;
    struct zip_entry        *e;
    const struct zip_entry **by_name;
};

static void zip_free(struct zip *z) {
    for (int i = 0; i < z->n; i++) free(z->e[i].name);
    free(z->e);
    free(z->by_name);
    z->e = NULL;
    z->by_name = NULL;
    z->n = 0;
}

static int cmp_entry_data(const void *a, const void *b) {
    const struct zip_entry *x = *(const struct zip_entry *const *)a;
    const struct zip_entry *y = *(const struct zip_entry *const *)b;
    return (x->data > y->data) - (x->data < y->data);
}

static int cmp_entry_name(const void *a, const void *b) {
    return strcmp((*(const struct zip_entry *const *)a)->name,
                  (*(const struct zip_entry *const *)b)->name);
}

/* Checks what the records say before reading any data: entries whose data overlap (records
 * naming one entry again and again would make each CRC read it again: 60,000 records over a
 * 1 MiB entry took 145 s) and names given twice are refused; then every CRC-32 is checked,
 * reading each byte once. Fills z->by_name. */
static enum dp_status zip_check(struct zip *z, const char *name, struct dp_error *err) {
    if (!(z->by_name = malloc(((size_t)z->n + 1) * sizeof *z->by_name)))
        return dp_error_set(err, DP_ERR_NOMEM, "%s: out of memory", name);
    for (int i = 0; i < z->n; i++) z->by_name[i] = &z->e[i];
    qsort(z->by_name, (size_t)z->n, sizeof *z->by_name, cmp_entry_data);
    for (int i = 1; i < z->n; i++) {
        const struct zip_entry *a = z->by_name[i - 1], *b = z->by_name[i];
        if (a->size > (uint64_t)(b->data - a->data))
            return dp_error_set(err, DP_ERR_PARSE, "%s: zip entries '%s' and '%s' overlap "
                                "(a crafted archive)", name, a->name, b->name);
    }
    qsort(z->by_name, (size_t)z->n, sizeof *z->by_name, cmp_entry_name);
    for (int i = 1; i < z->n; i++)
        if (!strcmp(z->by_name[i - 1]->name, z->by_name[i]->name))
            return dp_error_set(err, DP_ERR_PARSE, "%s: zip entry '%s' is listed twice", name,
                                z->by_name[i]->name);
    for (int i = 0; i < z->n; i++)
        if (crc32_of(z->e[i].data, (size_t)z->e[i].size) != z->e[i].crc)
            return dp_error_set(err, DP_ERR_PARSE, "%s: entry '%s' fails its CRC-32 check (corrupt)",
                                name, z->e[i].name);
    return DP_OK;
}

static enum dp_status zip_open(const unsigned char *b, size_t len, const char *name, struct zip *z,
                               struct dp_error *err) {
    memset(z, 0, sizeof *z);
    if (len < 22)
        return dp_error_set(err, DP_ERR_PARSE, "%s: %zu bytes: too short for a zip archive (truncated?)",
                            name, len);
    /* The end-of-central-directory record: the last PK\5\6 within the comment's reach. */
    size_t eocd = (size_t)-1;
    size_t lo = len > 22 + 65535 ? len - 22 - 65535 : 0;
    for (size_t p = len - 22 + 1; p-- > lo;)
        if (rd32(b + p) == 0x06054b50u && p + 22 + rd16(b + p + 20) <= len) { eocd = p; break; }
    if (eocd == (size_t)-1) {
        if (len >= 4 && rd32(b) == 0x04034b50u)
            return dp_error_set(err, DP_ERR_PARSE,
                                "%s: zip end record missing (truncated archive?)", name);
        return dp_error_set(err, DP_ERR_PARSE,
                            "%s: not a zip archive (torch.save writes a zip; legacy pickles are not supported)",
                            name);
    }
    uint64_t n = rd16(b + eocd + 10), cd_size = rd32(b + eocd + 12), cd_off = rd32(b + eocd + 16);
    if (n == 0xFFFF || cd_size == 0xFFFFFFFFu || cd_off == 0xFFFFFFFFu) {
        if (eocd < 20 || rd32(b + eocd - 20) != 0x07064b50u)
            return dp_error_set(err, DP_ERR_PARSE, "%s: zip64 locator missing at offset %zu", name, eocd - 20);
        uint64_t z64 = rd64(b + eocd - 20 + 8);
        if (len < 56 || z64 > len - 56 || rd32(b + z64) != 0x06064b50u) /* len - 56 unsigned */
            return dp_error_set(err, DP_ERR_PARSE, "%s: bad zip64 end record offset %llu", name,
                                (unsigned long long)z64);
        n = rd64(b + z64 + 32);
        cd_size = rd64(b + z64 + 40);
        cd_off = rd64(b + z64 + 48);
    }
    if (cd_off > len || cd_size > len - cd_off)
        return dp_error_set(err, DP_ERR_PARSE, "%s: central directory (offset %llu, %llu bytes) "
                            "lies outside the file (truncated?)", name,
                            (unsigned long long)cd_off, (unsigned long long)cd_size);
    if (n > ZIP_MAX_ENTRIES)
        return dp_error_set(err, DP_ERR_PARSE, "%s: %llu zip entries (at most %d)", name,
                            (unsigned long long)n, ZIP_MAX_ENTRIES);
    enum dp_status st = DP_OK;
    if (!(z->e = calloc(n + 1, sizeof *z->e))) return dp_error_set(err, DP_ERR_NOMEM, "%s: out of memory", name);
    size_t p = (size_t)cd_off, end = (size_t)(cd_off + cd_size);
    for (uint64_t i = 0; i < n; i++) {
        if (p + 46 > end || rd32(b + p) != 0x02014b50u) {
            st = dp_error_set(err, DP_ERR_PARSE, "%s: central directory entry %llu at offset %zu is corrupt",
                              name, (unsigned long long)i, p);
            goto fail;
        }
        unsigned flags = rd16(b + p + 8), method = rd16(b + p + 10);
        uint32_t crc = rd32(b + p + 16);
        uint64_t csize = rd32(b + p + 20), usize = rd32(b + p + 24);
        size_t nlen = rd16(b + p + 28), xlen = rd16(b + p + 30), clen = rd16(b + p + 32);
        uint64_t loff = rd32(b + p + 42);
        if (p + 46 + nlen + xlen + clen > end) {
            st = dp_error_set(err, DP_ERR_PARSE, "%s: central directory entry %llu overruns", name,
                              (unsigned long long)i);
            goto fail;
        }
        struct zip_entry *e = &z->e[z->n];
        if (!(e->name = malloc(nlen + 1))) { st = dp_error_set(err, DP_ERR_NOMEM, "%s: out of memory", name); goto fail; }
        memcpy(e->name, b + p + 46, nlen);
        e->name[nlen] = '\0';
        z->n++;
        /* Zip64 extra field: 8-byte values for the fields saturated above, in this order. */
        const unsigned char *x = b + p + 46 + nlen, *xend = x + xlen;
        while (x + 4 <= xend) {
            unsigned id = rd16(x), sz = rd16(x + 2);
            if (x + 4 + sz > xend) break;
            if (id == 0x0001) {
                const unsigned char *q = x + 4, *qend = x + 4 + sz;
                if (usize == 0xFFFFFFFFu && q + 8 <= qend) { usize = rd64(q); q += 8; }
                if (csize == 0xFFFFFFFFu && q + 8 <= qend) { csize = rd64(q); q += 8; }
                if (loff == 0xFFFFFFFFu && q + 8 <= qend) { loff = rd64(q); q += 8; }
            }
            x += 4 + sz;
        }
        if (flags & 1) {
            st = dp_error_set(err, DP_ERR_UNSUPPORTED, "%s: entry '%s' is encrypted", name, e->name);
            goto fail;
        }
        if (method != 0) {
            st = dp_error_set(err, DP_ERR_UNSUPPORTED,
                              "%s: entry '%s' is compressed (method %u%s); only stored entries are "
                              "read, as torch.save writes them", name, e->name, method,
                              method == 8 ? ", deflate" : "");
            goto fail;
        }
        if (csize != usize) {
            st = dp_error_set(err, DP_ERR_PARSE, "%s: stored entry '%s' has sizes %llu and %llu",
                              name, e->name, (unsigned long long)csize, (unsigned long long)usize);
            goto fail;
        }
        /* The local header's own name and extra lengths (its sizes may be 0 with a data
         * descriptor after the data: the central directory's sizes are the ones used). */
        if (loff > len || len - loff < 30 || rd32(b + loff) != 0x04034b50u) {
            st = dp_error_set(err, DP_ERR_PARSE, "%s: local header of '%s' at offset %llu is corrupt",
                              name, e->name, (unsigned long long)loff);
            goto fail;
        }
        uint64_t data = loff + 30 + rd16(b + loff + 26) + rd16(b + loff + 28);
        if (data > len || csize > len - data) {
            st = dp_error_set(err, DP_ERR_PARSE, "%s: entry '%s' (%llu bytes at %llu) runs past the "
                              "end of the file (truncated?)", name, e->name,
                              (unsigned long long)csize, (unsigned long long)data);
            goto fail;
        }
        e->data = b + data;
        e->size = csize;
        e->crc = crc;
        p += 46 + nlen + xlen + clen;
    }
    if ((st = zip_check(z, name, err))) goto fail;
    return DP_OK;
fail:
    zip_free(z);
    return st;
}

static const struct zip_entry *zip_find(const struct zip *z, const char *name) {
    struct zip_entry key = {.name = (char *)name};
    const struct zip_entry *pkey = &key;
    const struct zip_entry **hit =
        bsearch(&pkey, z->by_name, (size_t)z->n, sizeof *z->by_name, cmp_entry_name);
    return hit ? *hit : NULL;
}

/* ---- pickle values ---- */

enum pk_kind {
    PK_NONE, PK_BOOL, PK_INT, PK_FLOAT, PK_STR, PK_TUPLE, PK_LIST, PK_DICT, PK_GLOBAL,
    PK_STORAGE, PK_TENSOR, PK_MARK
};

struct pk_tensor {
    struct pk_val *storage;
    int64_t        offset;
    int            n_dims;
    int64_t        shape[DP_TORCH_MAX_DIMS], stride[DP_TORCH_MAX_DIMS];
};

struct pk_val {
    enum pk_kind      kind;
    int64_t           i;       /* INT, BOOL */
    double            f;       /* FLOAT */
    char             *s;       /* STR; GLOBAL "module.name"; STORAGE key */
    char             *s2;      /* STORAGE: type global name */
    int               n, cap;  /* TUPLE, LIST, DICT (pairs: items[2k], items[2k+1]) */
    struct pk_val   **items;
    struct pk_tensor *t;       /* TENSOR */
};

/* Every value lives in the pool and dies with it (pickles share values through the memo). */
struct pk {
    const unsigned char *b;
    size_t               len, pos;
    const char          *name;
    struct pk_val      **pool;
    size_t               n_pool, cap_pool;
    size_t               n_units;  /* values made plus container items: PK_MAX_VALUES at most */
    struct pk_val      **stack;
    size_t               sp, cap_stack;
    struct pk_val      **memo;
    size_t               cap_memo, n_memo; /* n_memo: indices stored (MEMOIZE's next index) */
    bool                 over;     /* a pk_new or pk_append failed on PK_MAX_VALUES, not memory */
    struct dp_error     *err;
};

/* Counts one value or item against PK_MAX_VALUES; false (k->over set) past it. */
static bool pk_budget(struct pk *k) {
    if (k->n_units >= PK_MAX_VALUES) {
        k->over = true;
        return false;
    }
    k->n_units++;
    return true;
}

static struct pk_val *pk_new(struct pk *k, enum pk_kind kind) {
    if (!pk_budget(k)) return NULL;
    if (k->n_pool == k->cap_pool) {
        size_t cap = k->cap_pool ? 2 * k->cap_pool : 256;
        struct pk_val **p = realloc(k->pool, cap * sizeof *p);
        if (!p) return NULL;
        k->pool = p;
        k->cap_pool = cap;
    }
    struct pk_val *v = calloc(1, sizeof *v);
    if (!v) return NULL;
    v->kind = kind;
    k->pool[k->n_pool++] = v;
    return v;
}

static void pk_free(struct pk *k) {
    for (size_t i = 0; i < k->n_pool; i++) {
        free(k->pool[i]->s);
        free(k->pool[i]->s2);
        free(k->pool[i]->items);
        free(k->pool[i]->t);
        free(k->pool[i]);
    }
    free(k->pool);
    free(k->stack);
    free(k->memo);
}

static enum dp_status pk_fail(struct pk *k, enum dp_status st, size_t at, const char *what) {
    return dp_error_set(k->err, st, "%s:data.pkl+%zu: %s", k->name, at, what);
}

/* The failure of a pk_new or pk_append: the value cap, else memory. */
static enum dp_status pk_nomem(struct pk *k) {
    if (k->over)
        return dp_error_set(k->err, DP_ERR_INVALID,
                            "%s:data.pkl+%zu: more than %d pickle values and items: larger than "
                            "any state_dict (driple's memory cap)", k->name, k->pos, PK_MAX_VALUES);
    return dp_error_set(k->err, DP_ERR_NOMEM, "%s: out of memory", k->name);
}

static enum dp_status pk_push(struct pk *k, struct pk_val *v) {
    if (!v) return pk_nomem(k);
    if (k->sp == k->cap_stack) {
        if (k->cap_stack >= PK_MAX_STACK) return pk_fail(k, DP_ERR_PARSE, k->pos, "pickle stack too deep");
        size_t cap = k->cap_stack ? 2 * k->cap_stack : 64;
        struct pk_val **s = realloc(k->stack, cap * sizeof *s);
        if (!s) return dp_error_set(k->err, DP_ERR_NOMEM, "%s: out of memory", k->name);
        k->stack = s;
        k->cap_stack = cap;
    }
    k->stack[k->sp++] = v;
    return DP_OK;
}

static bool pk_append(struct pk *k, struct pk_val *c, struct pk_val *v) {
    if (!pk_budget(k)) return false;
    if (c->n == c->cap) {
        int cap = c->cap ? 2 * c->cap : 8;
        struct pk_val **it = realloc(c->items, (size_t)cap * sizeof *it);
        if (!it) return false;
        c->items = it;
        c->cap = cap;
    }
    c->items[c->n++] = v;
    return true;
}

static char *pk_strdup(const unsigned char *p, size_t n) {
    char *s = malloc(n + 1);
    if (!s) return NULL;
    memcpy(s, p, n);
    s[n] = '\0';
    return s;
}

/* Index just above the topmost MARK, or (size_t)-1 when there is none. */
static size_t pk_mark(const struct pk *k) {
    for (size_t i = k->sp; i-- > 0;)
        if (k->stack[i]->kind == PK_MARK) return i;
    return (size_t)-1;
}

static bool is_global(const struct pk_val *v, const char *name) {
    return v->kind == PK_GLOBAL && !strcmp(v->s, name);
}

/* The storage types torch writes, and their element sizes. */
static int storage_elem_size(const char *type) {
    if (!strcmp(type, "torch.FloatStorage")) return 4;
    if (!strcmp(type, "torch.DoubleStorage")) return 8;
    if (!strcmp(type, "torch.HalfStorage")) return 2;
    return 0;
}

/* BINPERSID: ('storage', type, key, location, numel) becomes a STORAGE value. */
static enum dp_status pk_persid(struct pk *k, struct pk_val *pid, size_t at, struct pk_val **out) {
    if (pid->kind != PK_TUPLE || pid->n < 5 || pid->items[0]->kind != PK_STR ||
        strcmp(pid->items[0]->s, "storage") || pid->items[1]->kind != PK_GLOBAL ||
        pid->items[2]->kind != PK_STR || pid->items[4]->kind != PK_INT)
        return pk_fail(k, DP_ERR_UNSUPPORTED, at,
                       "persistent id is not ('storage', type, key, location, numel)");
    if (!storage_elem_size(pid->items[1]->s)) {
        char msg[160];
        snprintf(msg, sizeof msg, "storage type %.100s is not supported (float, double, half are)",
                 pid->items[1]->s);
        return pk_fail(k, DP_ERR_UNSUPPORTED, at, msg);
    }
    if (pid->items[4]->i < 0) return pk_fail(k, DP_ERR_PARSE, at, "negative storage size");
    if (strlen(pid->items[2]->s) > PK_MAX_NAME)
        return pk_fail(k, DP_ERR_PARSE, at, "storage key longer than 1024 characters");
    struct pk_val *s = pk_new(k, PK_STORAGE);
    if (!s) return pk_nomem(k);
    s->s = pk_strdup((const unsigned char *)pid->items[2]->s, strlen(pid->items[2]->s));
    s->s2 = pk_strdup((const unsigned char *)pid->items[1]->s, strlen(pid->items[1]->s));
    if (!s->s || !s->s2) return dp_error_set(k->err, DP_ERR_NOMEM, "%s: out of memory", k->name);
    s->i = pid->items[4]->i;
    *out = s;
    return DP_OK;
}

static enum dp_status pk_int_tuple(struct pk *k, const struct pk_val *t, int64_t *dst, int *n,
                                   size_t at, const char *what) {
    if (t->kind != PK_TUPLE || t->n > DP_TORCH_MAX_DIMS) {
        char msg[96];
        snprintf(msg, sizeof msg, "tensor %s is not a tuple of at most %d ints", what, DP_TORCH_MAX_DIMS);
        return pk_fail(k, DP_ERR_PARSE, at, msg);
    }
    for (int i = 0; i < t->n; i++) {
        if (t->items[i]->kind != PK_INT || t->items[i]->i < 0) {
            char msg[96];
            snprintf(msg, sizeof msg, "tensor %s[%d] is not an int >= 0", what, i);
            return pk_fail(k, DP_ERR_PARSE, at, msg);
        }
        dst[i] = t->items[i]->i;
    }
    *n = t->n;
    return DP_OK;
}

/* REDUCE: the callables a state_dict uses. */
static enum dp_status pk_reduce(struct pk *k, struct pk_val *fn, struct pk_val *args, size_t at,
                                struct pk_val **out) {
    if (args->kind != PK_TUPLE) return pk_fail(k, DP_ERR_PARSE, at, "REDUCE arguments are not a tuple");
    if (is_global(fn, "collections.OrderedDict") || is_global(fn, "builtins.dict")) {
        if (args->n != 0) return pk_fail(k, DP_ERR_UNSUPPORTED, at, "OrderedDict with arguments");
        *out = pk_new(k, PK_DICT);
        return *out ? DP_OK : pk_nomem(k);
    }
    if (is_global(fn, "torch._utils._rebuild_tensor_v2") || is_global(fn, "torch._utils._rebuild_tensor")) {
        if (args->n < 4 || args->items[0]->kind != PK_STORAGE || args->items[1]->kind != PK_INT)
            return pk_fail(k, DP_ERR_PARSE, at,
                           "_rebuild_tensor_v2 arguments are not (storage, offset, size, stride, ...)");
        struct pk_val *v = pk_new(k, PK_TENSOR);
        if (!v) return pk_nomem(k);
        struct pk_tensor *t = v->t = calloc(1, sizeof *v->t);
        if (!t) return dp_error_set(k->err, DP_ERR_NOMEM, "%s: out of memory", k->name);
        t->storage = args->items[0];
        t->offset = args->items[1]->i;
        int ns = 0, nt = 0;
        enum dp_status st;
        if ((st = pk_int_tuple(k, args->items[2], t->shape, &ns, at, "size")) ||
            (st = pk_int_tuple(k, args->items[3], t->stride, &nt, at, "stride")))
            return st;
        if (ns != nt) return pk_fail(k, DP_ERR_PARSE, at, "tensor size and stride differ in length");
        if (t->offset < 0) return pk_fail(k, DP_ERR_PARSE, at, "negative storage offset");
        t->n_dims = ns;
        *out = v;
        return DP_OK;
    }
    if (is_global(fn, "torch._utils._rebuild_parameter")) {
        if (args->n < 1 || args->items[0]->kind != PK_TENSOR)
            return pk_fail(k, DP_ERR_PARSE, at, "_rebuild_parameter without a tensor");
        *out = args->items[0];
        return DP_OK;
    }
    char msg[200];
    snprintf(msg, sizeof msg, "calls %.120s, which a state_dict checkpoint does not need (refused)",
             fn->kind == PK_GLOBAL ? fn->s : "a non-global");
    return pk_fail(k, DP_ERR_UNSUPPORTED, at, msg);
}

static enum dp_status need(struct pk *k, size_t n, size_t at) {
    if (k->len - k->pos < n) return pk_fail(k, DP_ERR_PARSE, at, "pickle ends inside an opcode (truncated)");
    return DP_OK;
}

static enum dp_status memo_put(struct pk *k, uint64_t idx, size_t at) {
    if (k->sp == 0) return pk_fail(k, DP_ERR_PARSE, at, "memo store on an empty stack");
    if (idx >= PK_MAX_MEMO) return pk_fail(k, DP_ERR_PARSE, at, "memo index too large");
    if (idx >= k->cap_memo) {
        size_t cap = k->cap_memo ? k->cap_memo : 64;
        while (cap <= idx) cap *= 2;
        struct pk_val **m = realloc(k->memo, cap * sizeof *m);
        if (!m) return dp_error_set(k->err, DP_ERR_NOMEM, "%s: out of memory", k->name);
        memset(m + k->cap_memo, 0, (cap - k->cap_memo) * sizeof *m);
        k->memo = m;
        k->cap_memo = cap;
    }
    if (!k->memo[idx]) k->n_memo++;
    k->memo[idx] = k->stack[k->sp - 1];
    return DP_OK;
}

static enum dp_status memo_get(struct pk *k, uint64_t idx, size_t at) {
    if (idx >= k->cap_memo || !k->memo[idx]) return pk_fail(k, DP_ERR_PARSE, at, "memo index never stored");
    return pk_push(k, k->memo[idx]);
}

/* Pops the items above the topmost mark into a new TUPLE/LIST (kind), dropping the mark. */
static enum dp_status pop_to_mark(struct pk *k, enum pk_kind kind, size_t at, struct pk_val **out) {
    size_t m = pk_mark(k);
    if (m == (size_t)-1) return pk_fail(k, DP_ERR_PARSE, at, "no MARK on the stack");
    struct pk_val *t = pk_new(k, kind);
    if (!t) return pk_nomem(k);
    for (size_t i = m + 1; i < k->sp; i++)
        if (!pk_append(k, t, k->stack[i])) return pk_nomem(k);
    k->sp = m;
    *out = t;
    return DP_OK;
}

static enum dp_status pk_run(struct pk *k, struct pk_val **result) {
    enum dp_status st;
    struct pk_val *v, *c;
    for (;;) {
        size_t at = k->pos;
        if ((st = need(k, 1, at))) return st;
        unsigned char op = k->b[k->pos++];
        const unsigned char *p = k->b + k->pos;
        switch (op) {
        case 0x80: /* PROTO */
            if ((st = need(k, 1, at))) return st;
            if (p[0] > 5) return pk_fail(k, DP_ERR_UNSUPPORTED, at, "pickle protocol above 5");
            k->pos += 1;
            break;
        case 0x95: /* FRAME: a length hint only */
            if ((st = need(k, 8, at))) return st;
            k->pos += 8;
            break;
        case 'c': { /* GLOBAL "module\nname\n" */
            const unsigned char *e1 = memchr(p, '\n', k->len - k->pos);
            const unsigned char *e2 = e1 ? memchr(e1 + 1, '\n', (size_t)(k->b + k->len - e1 - 1)) : NULL;
            if (!e2) return pk_fail(k, DP_ERR_PARSE, at, "GLOBAL without two newline-ended names");
            if (!(v = pk_new(k, PK_GLOBAL))) return pk_push(k, NULL);
            size_t n1 = (size_t)(e1 - p), n2 = (size_t)(e2 - e1 - 1);
            if (!(v->s = malloc(n1 + n2 + 2))) return pk_push(k, NULL);
            memcpy(v->s, p, n1);
            v->s[n1] = '.';
            memcpy(v->s + n1 + 1, e1 + 1, n2);
            v->s[n1 + 1 + n2] = '\0';
            k->pos = (size_t)(e2 + 1 - k->b);
            if ((st = pk_push(k, v))) return st;
            break;
        }
        case 0x93: /* STACK_GLOBAL */
            if (k->sp < 2 || k->stack[k->sp - 1]->kind != PK_STR || k->stack[k->sp - 2]->kind != PK_STR)
                return pk_fail(k, DP_ERR_PARSE, at, "STACK_GLOBAL without two strings");
            {
                const char *mod = k->stack[k->sp - 2]->s, *nm = k->stack[k->sp - 1]->s;
                size_t n1 = strlen(mod), n2 = strlen(nm);
                /* memoised strings: each copy must stay small */
                if (n1 + n2 > PK_MAX_NAME)
                    return pk_fail(k, DP_ERR_PARSE, at, "global name longer than 1024 characters");
                if (!(v = pk_new(k, PK_GLOBAL))) return pk_push(k, NULL);
                if (!(v->s = malloc(n1 + n2 + 2))) return pk_push(k, NULL);
                snprintf(v->s, n1 + n2 + 2, "%s.%s", mod, nm);
            }
            k->sp -= 2;
            if ((st = pk_push(k, v))) return st;
            break;
        case 'q': /* BINPUT */
            if ((st = need(k, 1, at)) || (st = memo_put(k, p[0], at))) return st;
            k->pos += 1;
            break;
        case 'r': /* LONG_BINPUT */
            if ((st = need(k, 4, at)) || (st = memo_put(k, rd32(p), at))) return st;
            k->pos += 4;
            break;
        case 0x94: /* MEMOIZE: the next index is the memo's size, as Python's len(memo) (a
                    * search for the first free index made this quadratic) */
            if ((st = memo_put(k, k->n_memo, at))) return st;
            break;
        case 'h': /* BINGET */
            if ((st = need(k, 1, at))) return st;
            k->pos += 1;
            if ((st = memo_get(k, p[0], at))) return st;
            break;
        case 'j': /* LONG_BINGET */
            if ((st = need(k, 4, at))) return st;
            k->pos += 4;
            if ((st = memo_get(k, rd32(p), at))) return st;
            break;
        case '(': /* MARK */
            if ((st = pk_push(k, pk_new(k, PK_MARK)))) return st;
            break;
        case ')': /* EMPTY_TUPLE */
            if ((st = pk_push(k, pk_new(k, PK_TUPLE)))) return st;
            break;
        case ']': /* EMPTY_LIST */
            if ((st = pk_push(k, pk_new(k, PK_LIST)))) return st;
            break;
        case '}': /* EMPTY_DICT */
            if ((st = pk_push(k, pk_new(k, PK_DICT)))) return st;
            break;
        case 't': /* TUPLE */
        case 'l': /* LIST */
            if ((st = pop_to_mark(k, op == 't' ? PK_TUPLE : PK_LIST, at, &v)) || (st = pk_push(k, v)))
                return st;
            break;
        case 'd': /* DICT */
            if ((st = pop_to_mark(k, PK_DICT, at, &v))) return st;
            if (v->n % 2) return pk_fail(k, DP_ERR_PARSE, at, "DICT with an odd number of items");
            if ((st = pk_push(k, v))) return st;
            break;
        case 0x85: case 0x86: case 0x87: { /* TUPLE1..3 */
            size_t n = (size_t)(op - 0x84);
            if (k->sp < n) return pk_fail(k, DP_ERR_PARSE, at, "TUPLEn on a short stack");
            if (!(v = pk_new(k, PK_TUPLE))) return pk_push(k, NULL);
            for (size_t i = k->sp - n; i < k->sp; i++) {
                if (k->stack[i]->kind == PK_MARK) return pk_fail(k, DP_ERR_PARSE, at, "TUPLEn over a MARK");
                if (!pk_append(k, v, k->stack[i])) return pk_push(k, NULL);
            }
            k->sp -= n;
            if ((st = pk_push(k, v))) return st;
            break;
        }
        case 's': /* SETITEM */
            if (k->sp < 3 || k->stack[k->sp - 3]->kind != PK_DICT)
                return pk_fail(k, DP_ERR_PARSE, at, "SETITEM without a dict, key and value");
            c = k->stack[k->sp - 3];
            if (!pk_append(k, c, k->stack[k->sp - 2]) || !pk_append(k, c, k->stack[k->sp - 1]))
                return pk_push(k, NULL);
            k->sp -= 2;
            break;
        case 'u': { /* SETITEMS */
            size_t m = pk_mark(k);
            if (m == (size_t)-1 || m == 0 || k->stack[m - 1]->kind != PK_DICT || (k->sp - m - 1) % 2)
                return pk_fail(k, DP_ERR_PARSE, at, "SETITEMS without a dict and key/value pairs");
            c = k->stack[m - 1];
            for (size_t i = m + 1; i < k->sp; i++)
                if (!pk_append(k, c, k->stack[i])) return pk_push(k, NULL);
            k->sp = m;
            break;
        }
        case 'a': /* APPEND */
            if (k->sp < 2 || k->stack[k->sp - 2]->kind != PK_LIST)
                return pk_fail(k, DP_ERR_PARSE, at, "APPEND without a list");
            if (!pk_append(k, k->stack[k->sp - 2], k->stack[k->sp - 1])) return pk_push(k, NULL);
            k->sp -= 1;
            break;
        case 'e': { /* APPENDS */
            size_t m = pk_mark(k);
            if (m == (size_t)-1 || m == 0 || k->stack[m - 1]->kind != PK_LIST)
                return pk_fail(k, DP_ERR_PARSE, at, "APPENDS without a list");
            for (size_t i = m + 1; i < k->sp; i++)
                if (!pk_append(k, k->stack[m - 1], k->stack[i])) return pk_push(k, NULL);
            k->sp = m;
            break;
        }
        case 'J': case 'K': case 'M': { /* BININT, BININT1, BININT2 */
            size_t n = op == 'J' ? 4 : op == 'K' ? 1 : 2;
            if ((st = need(k, n, at))) return st;
            if (!(v = pk_new(k, PK_INT))) return pk_push(k, NULL);
            v->i = op == 'J' ? (int64_t)(int32_t)rd32(p) : op == 'K' ? p[0] : rd16(p);
            k->pos += n;
            if ((st = pk_push(k, v))) return st;
            break;
        }
        case 0x8a: { /* LONG1: little-endian two's complement, n bytes */
            if ((st = need(k, 1, at))) return st;
            size_t n = p[0];
            if ((st = need(k, 1 + n, at))) return st;
            if (n > 8) return pk_fail(k, DP_ERR_UNSUPPORTED, at, "LONG1 wider than 64 bits");
            uint64_t u = 0;
            for (size_t i = 0; i < n; i++) u |= (uint64_t)p[1 + i] << (8 * i);
            if (n > 0 && n < 8 && (p[n] & 0x80)) u |= ~UINT64_C(0) << (8 * n); /* sign-extend */
            if (!(v = pk_new(k, PK_INT))) return pk_push(k, NULL);
            v->i = (int64_t)u;
            k->pos += 1 + n;
            if ((st = pk_push(k, v))) return st;
            break;
        }
        case 'G': { /* BINFLOAT: big-endian double */
            if ((st = need(k, 8, at))) return st;
            uint64_t u = 0;
            for (int i = 0; i < 8; i++) u = u << 8 | p[i];
            if (!(v = pk_new(k, PK_FLOAT))) return pk_push(k, NULL);
            memcpy(&v->f, &u, 8);
            k->pos += 8;
            if ((st = pk_push(k, v))) return st;
            break;
        }
        case 'X': case 0x8c: case 'T': case 'U': case 0x8d: { /* string opcodes */
            size_t hdr = (op == 0x8c || op == 'U') ? 1 : op == 0x8d ? 8 : 4;
            if ((st = need(k, hdr, at))) return st;
            uint64_t n = hdr == 1 ? p[0] : hdr == 4 ? rd32(p) : rd64(p);
            if (n > k->len - k->pos - hdr) return pk_fail(k, DP_ERR_PARSE, at, "string runs past the end (truncated)");
            if (!(v = pk_new(k, PK_STR)) || !(v->s = pk_strdup(p + hdr, (size_t)n))) return pk_push(k, NULL);
            if (strlen(v->s) != n) return pk_fail(k, DP_ERR_UNSUPPORTED, at, "string with a NUL byte");
            k->pos += hdr + (size_t)n;
            if ((st = pk_push(k, v))) return st;
            break;
        }
        case 'Q': /* BINPERSID */
            if (k->sp < 1) return pk_fail(k, DP_ERR_PARSE, at, "BINPERSID on an empty stack");
            if ((st = pk_persid(k, k->stack[k->sp - 1], at, &v))) return st;
            k->stack[k->sp - 1] = v;
            break;
        case 'R': /* REDUCE */
            if (k->sp < 2) return pk_fail(k, DP_ERR_PARSE, at, "REDUCE on a short stack");
            if ((st = pk_reduce(k, k->stack[k->sp - 2], k->stack[k->sp - 1], at, &v))) return st;
            k->sp -= 2;
            if ((st = pk_push(k, v))) return st;
            break;
        case 'b': /* BUILD: state for the object below; a state_dict's _metadata is dropped */
            if (k->sp < 2 || k->stack[k->sp - 2]->kind == PK_MARK)
                return pk_fail(k, DP_ERR_PARSE, at, "BUILD on a short stack");
            k->sp -= 1;
            break;
        case 0x88: case 0x89: /* NEWTRUE, NEWFALSE */
            if (!(v = pk_new(k, PK_BOOL))) return pk_push(k, NULL);
            v->i = op == 0x88;
            if ((st = pk_push(k, v))) return st;
            break;
        case 'N': /* NONE */
            if ((st = pk_push(k, pk_new(k, PK_NONE)))) return st;
            break;
        case '0': /* POP */
            if (k->sp < 1) return pk_fail(k, DP_ERR_PARSE, at, "POP on an empty stack");
            k->sp--;
            break;
        case '1': { /* POP_MARK */
            size_t m = pk_mark(k);
            if (m == (size_t)-1) return pk_fail(k, DP_ERR_PARSE, at, "POP_MARK without a MARK");
            k->sp = m;
            break;
        }
        case '2': /* DUP */
            if (k->sp < 1) return pk_fail(k, DP_ERR_PARSE, at, "DUP on an empty stack");
            if ((st = pk_push(k, k->stack[k->sp - 1]))) return st;
            break;
        case '.': /* STOP */
            if (k->sp != 1 || k->stack[0]->kind == PK_MARK)
                return pk_fail(k, DP_ERR_PARSE, at, "STOP with the stack not holding one object");
            *result = k->stack[0];
            return DP_OK;
        default: {
            char msg[64];
            snprintf(msg, sizeof msg, "pickle opcode 0x%02x is not supported", op);
            return pk_fail(k, DP_ERR_UNSUPPORTED, at, msg);
        }
        }
    }
}

/* ---- tensors ---- */

static float half_to_float(uint16_t h) {
    int e = h >> 10 & 31, m = h & 1023;
    double v = e == 0 ? ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexp(m + 1024, e - 25);
    return (float)((h & 0x8000) ? -v : v);
}

static float storage_elem(const unsigned char *p, int es) {
    if (es == 4) {
        uint32_t u = rd32(p);
        float f;
        memcpy(&f, &u, 4);
        return f;
    }
    if (es == 8) {
        uint64_t u = rd64(p);
        double d;
        memcpy(&d, &u, 8);
        return (float)d;
    }
    return half_to_float(rd16(p));
}

/* Checks tensor t (named key) against its storage entry (*e) and gives its element count. */
static enum dp_status check_tensor(const struct zip *z, const char *prefix, const struct pk_val *key,
                                   const struct pk_tensor *t, const char *name,
                                   const struct zip_entry **entry, uint64_t *n_elems,
                                   struct dp_error *err) {
    const struct pk_val *s = t->storage;
    int es = storage_elem_size(s->s2);
    char ename[256 + 8 + PK_MAX_NAME];
    snprintf(ename, sizeof ename, "%sdata/%s", prefix, s->s);
    const struct zip_entry *e = zip_find(z, ename);
    if (!e) return dp_error_set(err, DP_ERR_PARSE, "%s: tensor '%s': storage entry '%s' is missing",
                                name, key->s, ename);
    /* Compared by division: a huge element count must not wrap around to the entry's size. */
    if (e->size % (uint64_t)es || e->size / (uint64_t)es != (uint64_t)s->i)
        return dp_error_set(err, DP_ERR_PARSE,
                            "%s: tensor '%s': storage '%s' holds %llu bytes, the pickle says %lld x %d",
                            name, key->s, ename, (unsigned long long)e->size, (long long)s->i, es);
    /* Elements, and the furthest storage index the view reaches. */
    uint64_t size = 1, reach = (uint64_t)t->offset;
    for (int d = 0; d < t->n_dims; d++) {
        if (t->shape[d] > 0 && size > UINT64_MAX / (uint64_t)t->shape[d])
            return dp_error_set(err, DP_ERR_PARSE, "%s: tensor '%s': size overflows", name, key->s);
        size *= (uint64_t)t->shape[d];
    }
    /* reach stays below the storage size (< 2^32 elements, the file being < 4 GiB) before each
     * addition of a term below 2^63, so the sum cannot wrap. */
    bool outside = size > 0 && reach >= (uint64_t)s->i;
    for (int d = 0; size > 0 && !outside && d < t->n_dims; d++) {
        if (t->stride[d] > 0 && (uint64_t)(t->shape[d] - 1) > UINT64_MAX / 2 / (uint64_t)t->stride[d])
            return dp_error_set(err, DP_ERR_PARSE, "%s: tensor '%s': stride overflows", name, key->s);
        reach += (uint64_t)(t->shape[d] - 1) * (uint64_t)t->stride[d];
        outside = reach >= (uint64_t)s->i;
    }
    if (outside)
        return dp_error_set(err, DP_ERR_PARSE,
                            "%s: tensor '%s': view (offset %lld, size and stride) reaches element %llu of a "
                            "%lld-element storage", name, key->s, (long long)t->offset,
                            (unsigned long long)reach, (long long)s->i);
    /* A view that does not repeat elements holds at most its storage's: more means stride 0
     * or overlapping strides, which a state_dict does not save (a 427-byte file asked for 2^28
     * copies of one element). */
    if (size > (uint64_t)s->i)
        return dp_error_set(err, DP_ERR_PARSE,
                            "%s: tensor '%s': %llu elements from a %lld-element storage (a view "
                            "repeating elements: stride 0 or overlapping)", name, key->s,
                            (unsigned long long)size, (long long)s->i);
    *entry = e;
    *n_elems = size;
    return DP_OK;
}

/* Copies tensor t (checked: size elements of entry e) into out, contiguous. */
static enum dp_status build_tensor(const struct zip_entry *e, const struct pk_val *key,
                                   const struct pk_tensor *t, uint64_t size, const char *name,
                                   struct dp_torch_tensor *out, struct dp_error *err) {
    int es = storage_elem_size(t->storage->s2);
    memset(out, 0, sizeof *out);
    out->name = pk_strdup((const unsigned char *)key->s, strlen(key->s));
    out->data = malloc((size_t)size * sizeof *out->data + 1);
    if (!out->name || !out->data) {
        free(out->name);
        free(out->data);
        return dp_error_set(err, DP_ERR_NOMEM, "%s: out of memory", name);
    }
    out->n_dims = t->n_dims;
    out->size = (size_t)size;
    memcpy(out->shape, t->shape, sizeof out->shape);
    /* Walk the view in row-major order (any strides: the copy is contiguous). */
    int64_t idx[DP_TORCH_MAX_DIMS] = {0};
    for (size_t i = 0; i < out->size; i++) {
        uint64_t at = (uint64_t)t->offset;
        for (int d = 0; d < t->n_dims; d++) at += (uint64_t)idx[d] * (uint64_t)t->stride[d];
        out->data[i] = storage_elem(e->data + at * (uint64_t)es, es);
        for (int d = t->n_dims - 1; d >= 0; d--) {
            if (++idx[d] < t->shape[d]) break;
            idx[d] = 0;
        }
    }
    return DP_OK;
}

void dp_torch_state_free(struct dp_torch_state *s) {
    if (!s) return;
    for (int i = 0; i < s->n_tensors; i++) {
        free(s->tensors[i].name);
        free(s->tensors[i].data);
    }
    free(s->tensors);
    s->tensors = NULL;
    s->n_tensors = 0;
}

static int cmp_str(const void *a, const void *b) {
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

int dp_torch_find(const struct dp_torch_state *s, const char *name) {
    for (int i = 0; i < s->n_tensors; i++)
        if (!strcmp(s->tensors[i].name, name)) return i;
    return -1;
}

enum dp_status dp_torch_parse(const unsigned char *buf, size_t len, const char *name,
                              struct dp_torch_state *out, struct dp_error *err) {
    struct zip z;
    struct pk k;
    struct dp_torch_state res = {0, NULL};
    const char **keys = NULL;
    memset(&k, 0, sizeof k);
    enum dp_status st = zip_open(buf, len, name, &z, err);
    if (st) return st;
    /* The pickle is <dir>/data.pkl; <dir> is "archive" or the file's stem. */
    const struct zip_entry *pkl = NULL;
    for (int i = 0; i < z.n && !pkl; i++) {
        size_t n = strlen(z.e[i].name);
        if (n >= 9 && !strcmp(z.e[i].name + n - 9, "/data.pkl") &&
            strchr(z.e[i].name, '/') == z.e[i].name + n - 9)
            pkl = &z.e[i];
    }
    for (int i = 0; i < z.n && !pkl; i++) {
        size_t n = strlen(z.e[i].name);
        if (n >= 8 && !strcmp(z.e[i].name + n - 8, "data.pkl")) pkl = &z.e[i];
    }
    if (!pkl) {
        st = dp_error_set(err, DP_ERR_PARSE, "%s: no data.pkl in the archive (not a torch.save file)", name);
        goto done;
    }
    char prefix[256];
    size_t plen = strlen(pkl->name) - 8;
    if (plen >= sizeof prefix) {
        st = dp_error_set(err, DP_ERR_PARSE, "%s: archive directory name too long", name);
        goto done;
    }
    memcpy(prefix, pkl->name, plen);
    prefix[plen] = '\0';
    k.b = pkl->data;
    k.len = (size_t)pkl->size;
    k.name = name;
    k.err = err;
    struct pk_val *root = NULL;
    if ((st = pk_run(&k, &root))) goto done;
    if (root->kind != PK_DICT) {
        st = dp_error_set(err, DP_ERR_UNSUPPORTED, "%s:data.pkl: the pickle is not a dict (a state_dict)", name);
        goto done;
    }
    int n = root->n / 2;
    if (!(res.tensors = calloc((size_t)n + 1, sizeof *res.tensors)) ||
        !(keys = malloc(((size_t)n + 1) * sizeof *keys))) {
        st = dp_error_set(err, DP_ERR_NOMEM, "%s: out of memory", name);
        goto done;
    }
    for (int i = 0; i < n; i++) {
        const struct pk_val *key = root->items[2 * i], *val = root->items[2 * i + 1];
        if (key->kind != PK_STR) {
            st = dp_error_set(err, DP_ERR_PARSE, "%s:data.pkl: state_dict key %d is not a string", name, i);
            goto done;
        }
        if (val->kind != PK_TENSOR) {
            st = dp_error_set(err, DP_ERR_UNSUPPORTED, "%s:data.pkl: state_dict entry '%s' is not a tensor",
                              name, key->s);
            goto done;
        }
        keys[i] = key->s;
    }
    /* Sorted, a repeated key sits next to itself (a search per key was quadratic). */
    qsort(keys, (size_t)n, sizeof *keys, cmp_str);
    for (int i = 1; i < n; i++)
        if (!strcmp(keys[i - 1], keys[i])) {
            st = dp_error_set(err, DP_ERR_PARSE, "%s:data.pkl: key '%s' appears twice", name, keys[i]);
            goto done;
        }
    /* Every view checked and the elements of all counted before any is allocated. */
    uint64_t elems = 0, size;
    const struct zip_entry *e;
    for (int i = 0; i < n; i++) {
        const struct pk_val *key = root->items[2 * i], *val = root->items[2 * i + 1];
        if ((st = check_tensor(&z, prefix, key, val->t, name, &e, &size, err))) goto done;
        if (size > TORCH_MAX_ELEMS - elems) {
            st = dp_error_set(err, DP_ERR_INVALID,
                              "%s: tensor '%s': more than %llu tensor elements in all: larger "
                              "than any checkpoint driple imports (its memory cap)", name, key->s,
                              (unsigned long long)TORCH_MAX_ELEMS);
            goto done;
        }
        elems += size;
    }
    for (int i = 0; i < n; i++) {
        const struct pk_val *key = root->items[2 * i], *val = root->items[2 * i + 1];
        if ((st = check_tensor(&z, prefix, key, val->t, name, &e, &size, err)) ||
            (st = build_tensor(e, key, val->t, size, name, &res.tensors[res.n_tensors], err)))
            goto done;
        res.n_tensors++;
    }
    *out = res;
    res.tensors = NULL;
    res.n_tensors = 0;
done:
    free(keys);
    dp_torch_state_free(&res);
    pk_free(&k);
    zip_free(&z);
    return st;
}

/* A zip archive opens with a record signature, "PK" (torch.save's with a local header):
 * anything else (an endless /dev/zero included) is refused after its first bytes. */
static const char *torch_head(const unsigned char *head, size_t n) {
    if (n >= 2 && head[0] == 'P' && head[1] == 'K') return NULL;
    return "not a zip archive (torch.save writes a zip; legacy pickles are not supported)";
}

enum dp_status dp_torch_load(const char *path, struct dp_torch_state *out, struct dp_error *err) {
    static const struct dp_read_spec spec = {"PyTorch checkpoint", TORCH_MAX_BYTES, false,
                                             torch_head, NULL};
    char *buf = NULL;
    size_t len = 0;
    enum dp_status st = dp_file_read(path, &spec, &buf, &len, err);
    if (st) return st;
    st = dp_torch_parse((const unsigned char *)buf, len, dp_file_name(path), out, err);
    free(buf);
    return st;
}
