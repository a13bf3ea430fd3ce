/* graph_pbtxt.c: TensorFlow GraphDef text format (tf.io.write_graph(..., as_text=True)), parsed
 * by hand. A generic protobuf-text tokenizer and tree builder reads one top-level block at a
 * time (memory stays bounded by the largest block); `node` blocks (also inside a MetaGraphDef's
 * graph_def) are checked and handed to the GraphDef import shared with the binary reader
 * (tf_graphdef.c); everything else (versions, library, ...) is skipped. Errors name
 * "<file>:<line>:<col>". */
#include "dp/graph_io.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dp/files.h"
#include "tf_graphdef.h"

#define PBTXT_MAX_DEPTH 64

enum tok_kind { T_EOF, T_IDENT, T_NUMBER, T_STRING, T_PUNCT };

struct tok {
    enum tok_kind kind;
    const char   *s;
    size_t        len;
    int           line, col;
};

/* One field of the tree: a scalar (value bytes in the string arena) or a message (children). */
struct field {
    const char *key;
    size_t      key_len;
    int         line, col;
    int         first, last, next; /* children and sibling, -1 = none */
    bool        msg, is_str;
    size_t      val_off, val_len;
};

struct parser {
    const char    *text, *name;
    size_t         len, pos;
    int            line, col;
    struct tok     peeked;
    bool           has_peek;
    struct field  *f;
    size_t         n_f, cap_f;
    char          *sb; /* string arena */
    size_t         n_sb, cap_sb;
    struct dp_error *err;
};

/* --- tokenizer --------------------------------------------------------------------------- */

static void advance(struct parser *p) {
    if (p->text[p->pos] == '\n') {
        p->line++;
        p->col = 1;
    } else {
        p->col++;
    }
    p->pos++;
}

static bool is_ident_start(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
static bool is_ident_char(char c) { return is_ident_start(c) || (c >= '0' && c <= '9'); }

static enum dp_status lex(struct parser *p, struct tok *t) {
    for (;;) {
        while (p->pos < p->len && strchr(" \t\r\n\f\v", p->text[p->pos]) && p->text[p->pos])
            advance(p);
        if (p->pos < p->len && p->text[p->pos] == '#') {
            while (p->pos < p->len && p->text[p->pos] != '\n') advance(p);
            continue;
        }
        break;
    }
    t->line = p->line;
    t->col = p->col;
    t->s = p->text + p->pos;
    size_t start = p->pos;
    if (p->pos >= p->len) {
        t->kind = T_EOF;
        t->len = 0;
        return DP_OK;
    }
    char c = p->text[p->pos];
    if (is_ident_start(c)) {
        t->kind = T_IDENT;
        while (p->pos < p->len && (is_ident_char(p->text[p->pos]) || p->text[p->pos] == '.'))
            advance(p);
    } else if ((c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.') {
        t->kind = T_NUMBER;
        advance(p);
        while (p->pos < p->len) {
            char d = p->text[p->pos];
            if (is_ident_char(d) || d == '.' ||
                ((d == '-' || d == '+') && (p->text[p->pos - 1] == 'e' || p->text[p->pos - 1] == 'E')))
                advance(p);
            else
                break;
        }
    } else if (c == '"' || c == '\'') {
        t->kind = T_STRING;
        advance(p);
        for (;;) {
            if (p->pos >= p->len)
                return dp_error_set(p->err, DP_ERR_PARSE,
                                    "%s:%d:%d: unterminated string (truncated file?)", p->name,
                                    t->line, t->col);
            char d = p->text[p->pos];
            if (d == '\n')
                return dp_error_set(p->err, DP_ERR_PARSE, "%s:%d:%d: unterminated string",
                                    p->name, t->line, t->col);
            if (d == c) {
                advance(p);
                break;
            }
            if (d == '\\' && p->pos + 1 < p->len && p->text[p->pos + 1] != '\n') advance(p);
            advance(p);
        }
    } else if (strchr("{}<>[]:,;", c)) {
        t->kind = T_PUNCT;
        advance(p);
    } else {
        return dp_error_set(p->err, DP_ERR_PARSE, "%s:%d:%d: unexpected character '%c'",
                            p->name, t->line, t->col,
                            (unsigned char)c >= 32 && (unsigned char)c < 127 ? c : '?');
    }
    t->len = p->pos - start;
    return DP_OK;
}

static enum dp_status peek(struct parser *p, struct tok *t) {
    if (!p->has_peek) {
        enum dp_status st = lex(p, &p->peeked);
        if (st) return st;
        p->has_peek = true;
    }
    *t = p->peeked;
    return DP_OK;
}

static enum dp_status next(struct parser *p, struct tok *t) {
    enum dp_status st = peek(p, t);
    p->has_peek = false;
    return st;
}

static bool is_punct(const struct tok *t, char c) { return t->kind == T_PUNCT && t->s[0] == c; }

/* "'x'" for messages; end of file shown as such. */
static const char *show(const struct tok *t, char *buf, size_t n) {
    if (t->kind == T_EOF) return "end of file";
    size_t k = t->len < 20 ? t->len : 20;
    snprintf(buf, n, "'%.*s%s'", (int)k, t->s, t->len > k ? "..." : "");
    return buf;
}

/* --- tree ---------------------------------------------------------------------------------- */

static bool sb_reserve(struct parser *p, size_t extra) {
    if (p->n_sb + extra <= p->cap_sb) return true;
    size_t cap = p->cap_sb ? p->cap_sb : 4096;
    while (cap < p->n_sb + extra) cap *= 2;
    char *b = realloc(p->sb, cap);
    if (!b) return false;
    p->sb = b;
    p->cap_sb = cap;
    return true;
}

static int new_field(struct parser *p, int parent, const struct tok *key) {
    if (p->n_f == p->cap_f) {
        size_t cap = p->cap_f ? p->cap_f * 2 : 256;
        struct field *f = realloc(p->f, cap * sizeof *f);
        if (!f) return -1;
        p->f = f;
        p->cap_f = cap;
    }
    int i = (int)p->n_f++;
    struct field *f = &p->f[i];
    memset(f, 0, sizeof *f);
    f->key = key ? key->s : "";
    f->key_len = key ? key->len : 0;
    f->line = key ? key->line : 1;
    f->col = key ? key->col : 1;
    f->first = f->last = f->next = -1;
    if (parent >= 0) {
        if (p->f[parent].last >= 0) p->f[p->f[parent].last].next = i;
        else p->f[parent].first = i;
        p->f[parent].last = i;
    }
    return i;
}

static int hexval(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* Appends the decoded bytes of string token t to the arena. */
static enum dp_status decode_string(struct parser *p, const struct tok *t) {
    if (!sb_reserve(p, t->len + 1))
        return dp_error_set(p->err, DP_ERR_NOMEM, "%s: out of memory", p->name);
    const char *s = t->s + 1, *end = t->s + t->len - 1;
    while (s < end) {
        char c = *s++;
        if (c != '\\') {
            p->sb[p->n_sb++] = c;
            continue;
        }
        c = *s++;
        int v;
        switch (c) {
        case 'n': v = '\n'; break;
        case 't': v = '\t'; break;
        case 'r': v = '\r'; break;
        case 'a': v = '\a'; break;
        case 'b': v = '\b'; break;
        case 'f': v = '\f'; break;
        case 'v': v = '\v'; break;
        case '\\': case '\'': case '"': case '?': v = c; break;
        case 'x': case 'X':
            if (s >= end || hexval(*s) < 0) goto bad;
            v = hexval(*s++);
            if (s < end && hexval(*s) >= 0) v = v * 16 + hexval(*s++);
            break;
        default:
            if (c < '0' || c > '7') goto bad;
            v = c - '0';
            for (int k = 0; k < 2 && s < end && *s >= '0' && *s <= '7'; k++) v = v * 8 + (*s++ - '0');
            if (v > 255) goto bad;
            break;
        }
        p->sb[p->n_sb++] = (char)v;
    }
    return DP_OK;
bad:
    return dp_error_set(p->err, DP_ERR_PARSE, "%s:%d:%d: bad escape sequence in string", p->name,
                        t->line, t->col);
}

/* A scalar value: adjacent strings concatenate (as protobuf text allows). */
static enum dp_status parse_scalar(struct parser *p, int fi) {
    struct tok t;
    char buf[32];
    enum dp_status st = next(p, &t);
    if (st) return st;
    p->f[fi].val_off = p->n_sb;
    if (t.kind == T_STRING) {
        p->f[fi].is_str = true;
        for (;;) {
            if ((st = decode_string(p, &t))) return st;
            struct tok u;
            if ((st = peek(p, &u))) return st;
            if (u.kind != T_STRING) break;
            next(p, &t);
        }
    } else if (t.kind == T_IDENT || t.kind == T_NUMBER) {
        if (!sb_reserve(p, t.len + 1))
            return dp_error_set(p->err, DP_ERR_NOMEM, "%s: out of memory", p->name);
        memcpy(p->sb + p->n_sb, t.s, t.len);
        p->n_sb += t.len;
    } else {
        return dp_error_set(p->err, DP_ERR_PARSE, "%s:%d:%d: expected a value, found %s", p->name,
                            t.line, t.col, show(&t, buf, sizeof buf));
    }
    p->f[fi].val_len = p->n_sb - p->f[fi].val_off;
    p->sb[p->n_sb++] = '\0';
    return DP_OK;
}

static enum dp_status parse_body(struct parser *p, int parent, int depth, char close,
                                 const struct tok *open);

static enum dp_status parse_message(struct parser *p, int fi, int depth) {
    struct tok open = {0};
    enum dp_status st = next(p, &open); /* the '{' or '<' already peeked */
    if (st) return st;
    p->f[fi].msg = true;
    return parse_body(p, fi, depth + 1, open.s[0] == '{' ? '}' : '>', &open);
}

/* One field: key [:] ( {msg} | <msg> | [list] | scalar ), its key token already read. */
static enum dp_status parse_field(struct parser *p, int parent, int depth, struct tok key) {
    char buf[32];
    enum dp_status st;
    struct tok t, u;
    if (is_punct(&key, '[')) { /* [extension.name] */
        if ((st = next(p, &key))) return st;
        if (key.kind != T_IDENT || (st = next(p, &t)) || !is_punct(&t, ']'))
            return st ? st : dp_error_set(p->err, DP_ERR_PARSE, "%s:%d:%d: bad extension field name",
                                          p->name, key.line, key.col);
    } else if (key.kind != T_IDENT) {
        return dp_error_set(p->err, DP_ERR_PARSE, "%s:%d:%d: expected a field name, found %s",
                            p->name, key.line, key.col, show(&key, buf, sizeof buf));
    }
    if ((st = peek(p, &u))) return st;
    bool colon = is_punct(&u, ':');
    if (colon) {
        next(p, &u);
        if ((st = peek(p, &u))) return st;
    }
    if (is_punct(&u, '{') || is_punct(&u, '<')) {
        int fi = new_field(p, parent, &key);
        if (fi < 0) return dp_error_set(p->err, DP_ERR_NOMEM, "%s: out of memory", p->name);
        return parse_message(p, fi, depth);
    }
    if (colon && is_punct(&u, '[')) {
        next(p, &u);
        struct tok v;
        if ((st = peek(p, &v))) return st;
        if (is_punct(&v, ']')) return next(p, &v);
        for (;;) {
            if ((st = peek(p, &v))) return st;
            int fi = new_field(p, parent, &key);
            if (fi < 0) return dp_error_set(p->err, DP_ERR_NOMEM, "%s: out of memory", p->name);
            if (is_punct(&v, '{') || is_punct(&v, '<')) st = parse_message(p, fi, depth);
            else st = parse_scalar(p, fi);
            if (st) return st;
            if ((st = next(p, &v))) return st;
            if (is_punct(&v, ']')) return DP_OK;
            if (!is_punct(&v, ','))
                return dp_error_set(p->err, DP_ERR_PARSE,
                                    "%s:%d:%d: expected ',' or ']' in a list, found %s", p->name,
                                    v.line, v.col, show(&v, buf, sizeof buf));
        }
    }
    if (colon) {
        int fi = new_field(p, parent, &key);
        if (fi < 0) return dp_error_set(p->err, DP_ERR_NOMEM, "%s: out of memory", p->name);
        return parse_scalar(p, fi);
    }
    return dp_error_set(p->err, DP_ERR_PARSE, "%s:%d:%d: expected ':' or '{' after '%.*s', found %s",
                        p->name, u.line, u.col, (int)(key.len < 40 ? key.len : 40), key.s,
                        show(&u, buf, sizeof buf));
}

/* Fields until `close`; the opening token is named when the input ends first. */
static enum dp_status parse_body(struct parser *p, int parent, int depth, char close,
                                 const struct tok *open) {
    if (depth > PBTXT_MAX_DEPTH)
        return dp_error_set(p->err, DP_ERR_PARSE, "%s:%d:%d: blocks nested deeper than %d",
                            p->name, open->line, open->col, PBTXT_MAX_DEPTH);
    for (;;) {
        struct tok t;
        enum dp_status st = next(p, &t);
        if (st) return st;
        if (t.kind == T_EOF)
            return dp_error_set(p->err, DP_ERR_PARSE,
                                "%s:%d:%d: file ends inside the block opened at %d:%d (truncated "
                                "file?)",
                                p->name, t.line, t.col, open->line, open->col);
        if (is_punct(&t, close)) return DP_OK;
        if (is_punct(&t, ';') || is_punct(&t, ',')) continue;
        if ((st = parse_field(p, parent, depth, t))) return st;
    }
}

/* --- tree access ----------------------------------------------------------------------------- */

static bool key_is(const struct field *f, const char *k) {
    return f->key_len == strlen(k) && !memcmp(f->key, k, f->key_len);
}

static int child(const struct parser *p, int fi, const char *k) {
    for (int c = p->f[fi].first; c >= 0; c = p->f[c].next)
        if (key_is(&p->f[c], k)) return c;
    return -1;
}

static const char *val(const struct parser *p, int fi) { return p->sb + p->f[fi].val_off; }

/* A scalar child's value, or NULL (absent or a message). */
static const char *child_val(const struct parser *p, int fi, const char *k) {
    int c = child(p, fi, k);
    return c >= 0 && !p->f[c].msg ? val(p, c) : NULL;
}

static enum dp_status fail_at(struct parser *p, int fi, enum dp_status st, const char *what,
                              const char *detail) {
    return dp_error_set(p->err, st, "%s:%d:%d: %s%s", p->name, p->f[fi].line, p->f[fi].col, what,
                        detail ? detail : "");
}

/* A string field used as a name: must be a string without NUL bytes. */
static enum dp_status get_name(struct parser *p, int node, const char *k, bool required,
                               const char **out) {
    int c = child(p, node, k);
    if (c < 0) {
        if (!required) return DP_OK;
        char what[64];
        snprintf(what, sizeof what, "node block without a '%s'", k);
        return fail_at(p, node, DP_ERR_INVALID, what, NULL);
    }
    if (p->f[c].msg || !p->f[c].is_str) return fail_at(p, c, DP_ERR_INVALID, k, ": expected a string");
    /* A NodeDef's name, op and device are singular: TF refuses a second one, and taking either
     * silently would import another graph than TF would. */
    for (int d = p->f[c].next; d >= 0; d = p->f[d].next)
        if (key_is(&p->f[d], k)) return fail_at(p, d, DP_ERR_INVALID, k, ": given twice in one node");
    if (strlen(val(p, c)) != p->f[c].val_len)
        return fail_at(p, c, DP_ERR_INVALID, k, ": NUL byte in the string");
    *out = val(p, c);
    return DP_OK;
}

/* A TensorShapeProto: dims as TF writes them (-1 unknown); n_dims -1 for unknown rank. */
static enum dp_status read_shape(struct parser *p, int fi, int *n_dims, int64_t *dims) {
    *n_dims = 0;
    if (!p->f[fi].msg) return fail_at(p, fi, DP_ERR_INVALID, "shape: expected a block", NULL);
    for (int c = p->f[fi].first; c >= 0; c = p->f[c].next) {
        if (key_is(&p->f[c], "unknown_rank")) {
            if (!p->f[c].msg && !strcmp(val(p, c), "true")) {
                *n_dims = -1;
                return DP_OK;
            }
            continue;
        }
        if (!key_is(&p->f[c], "dim")) continue;
        if (!p->f[c].msg) return fail_at(p, c, DP_ERR_INVALID, "dim: expected a block", NULL);
        if (*n_dims >= DP_MAX_DIMS) {
            char what[64];
            snprintf(what, sizeof what, "shape with more than %d dimensions", DP_MAX_DIMS);
            return fail_at(p, c, DP_ERR_INVALID, what, NULL);
        }
        int64_t size = 0;
        int s = child(p, c, "size");
        if (s >= 0) {
            const char *v = p->f[s].msg ? "" : val(p, s);
            char *end;
            errno = 0;
            long long x = strtoll(v, &end, 10);
            if (errno || end == v || *end || x < -1)
                return fail_at(p, s, DP_ERR_INVALID, "dim size: expected an integer >= -1", NULL);
            size = x;
        }
        dims[(*n_dims)++] = size;
    }
    return DP_OK;
}

/* --- attribute values as text ----------------------------------------------------------------- */

static void render_shape(struct parser *p, int fi, struct tf_text *b) {
    int n;
    int64_t dims[DP_MAX_DIMS];
    if (read_shape(p, fi, &n, dims)) n = -1;
    tf_text_shape(b, n, dims);
}

/* One AttrValue oneof member (s, i, f, b, type, shape, tensor, func, list items). */
static void render_item(struct parser *p, int c, struct tf_text *b) {
    const struct field *f = &p->f[c];
    if (key_is(f, "shape") && f->msg) {
        render_shape(p, c, b);
    } else if (key_is(f, "tensor") && f->msg) {
        const char *dt = child_val(p, c, "dtype");
        int sh = child(p, c, "tensor_shape");
        tf_text_str(b, "tensor(");
        tf_text_str(b, dt ? dt : "?");
        if (sh >= 0) {
            tf_text_str(b, ", ");
            render_shape(p, sh, b);
        }
        tf_text_str(b, ")");
    } else if (key_is(f, "func") && f->msg) {
        const char *nm = child_val(p, c, "name");
        tf_text_str(b, nm ? nm : "func");
    } else if (!f->msg) {
        tf_text_bytes(b, val(p, c), f->val_len);
    }
}

/* Returns a malloc'd text for an AttrValue block, or NULL when out of memory. */
static char *render_value(struct parser *p, int value) {
    struct tf_text b = {0};
    tf_text_str(&b, "");
    if (value >= 0 && p->f[value].msg) {
        int c = p->f[value].first;
        if (c >= 0 && key_is(&p->f[c], "list") && p->f[c].msg) {
            tf_text_str(&b, "[");
            int k = 0;
            for (int i = p->f[c].first; i >= 0; i = p->f[i].next, k++) {
                if (k) tf_text_str(&b, ", ");
                render_item(p, i, &b);
            }
            tf_text_str(&b, "]");
        } else if (c >= 0) {
            render_item(p, c, &b);
        }
    }
    if (b.oom) {
        free(b.s);
        return NULL;
    }
    return b.s;
}

/* --- GraphDef ----------------------------------------------------------------------------------- */

static enum dp_status dtype_of(struct parser *p, int node, enum dp_dtype *out) {
    static const char *const keys[] = {"T", "dtype", "DstT", "out_type", "output_types", "Tout"};
    for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++)
        for (int a = p->f[node].first; a >= 0; a = p->f[a].next) {
            if (!key_is(&p->f[a], "attr") || !p->f[a].msg) continue;
            const char *key = child_val(p, a, "key");
            if (!key || strcmp(key, keys[k])) continue;
            int v = child(p, a, "value");
            if (v < 0 || !p->f[v].msg) continue;
            const char *t = child_val(p, v, "type");
            if (!t) {
                int l = child(p, v, "list");
                if (l >= 0 && p->f[l].msg) t = child_val(p, l, "type");
            }
            if (t) {
                if (!dp_dtype_parse(t, out)) *out = DP_DTYPE_UNKNOWN; /* DT_VARIANT and such */
                return DP_OK;
            }
        }
    *out = DP_DTYPE_UNKNOWN;
    return DP_OK;
}

/* Checks one `node { }` block and decodes it for the shared GraphDef import. */
static enum dp_status import_node(struct parser *p, struct tf_import *im, int node) {
    struct tf_node n = {.device = ""};
    enum dp_status st;
    if ((st = get_name(p, node, "name", true, &n.name)) ||
        (st = get_name(p, node, "op", true, &n.op)) ||
        (st = get_name(p, node, "device", false, &n.device)))
        return st;
    if (!*n.name) return fail_at(p, node, DP_ERR_INVALID, "node with an empty name", NULL);
    if (dp_graph_find(im->g, n.name) >= 0) {
        char what[300];
        snprintf(what, sizeof what, "duplicate node name '%.200s'", n.name);
        return fail_at(p, child(p, node, "name"), DP_ERR_INVALID, what, NULL);
    }
    /* Shape: _output_shapes' first entry, else the `shape` attribute. */
    int shape_field = -1, var_shape = -1, n_attrs = 0, n_inputs = 0;
    for (int a = p->f[node].first; a >= 0; a = p->f[a].next) {
        if (key_is(&p->f[a], "input")) n_inputs++;
        if (!key_is(&p->f[a], "attr") || !p->f[a].msg) continue;
        n_attrs++;
        const char *key = child_val(p, a, "key");
        int v = child(p, a, "value");
        if (!key || v < 0 || !p->f[v].msg) continue;
        if (!strcmp(key, "_output_shapes")) {
            int l = child(p, v, "list");
            int sh = l >= 0 && p->f[l].msg ? child(p, l, "shape") : -1;
            if (sh >= 0) shape_field = sh;
        } else if (!strcmp(key, "shape")) {
            int sh = child(p, v, "shape");
            if (sh >= 0) var_shape = sh;
        }
    }
    n.n_dims = -1;
    if (shape_field < 0) shape_field = var_shape;
    if (shape_field >= 0 && (st = read_shape(p, shape_field, &n.n_dims, n.dims))) return st;
    if (tf_dims_overflow(n.n_dims, n.dims)) {
        char what[300];
        snprintf(what, sizeof what, "node '%.200s': the dimensions' product overflows 64 bits",
                 n.name);
        return fail_at(p, shape_field, DP_ERR_INVALID, what, NULL);
    }
    n.has_var_shape =
        var_shape >= 0 && read_shape(p, var_shape, &n.var_n_dims, n.var_dims) == DP_OK;
    dtype_of(p, node, &n.dtype);
    const char **inputs = malloc(((size_t)n_inputs + 1) * sizeof *inputs);
    struct tf_attr *attrs = calloc((size_t)n_attrs + 1, sizeof *attrs);
    if (!inputs || !attrs) {
        st = dp_error_set(p->err, DP_ERR_NOMEM, "%s: out of memory", p->name);
        goto done;
    }
    for (int c = p->f[node].first; c >= 0; c = p->f[c].next) {
        if (!key_is(&p->f[c], "input")) continue;
        if (p->f[c].msg || !p->f[c].is_str || !p->f[c].val_len ||
            strlen(val(p, c)) != p->f[c].val_len) {
            st = fail_at(p, c, DP_ERR_INVALID, "input: expected a node name", NULL);
            goto done;
        }
        inputs[n.n_inputs++] = val(p, c);
    }
    /* Attributes, as text (the shapes were taken above). */
    for (int a = p->f[node].first; a >= 0; a = p->f[a].next) {
        if (!key_is(&p->f[a], "attr") || !p->f[a].msg) continue;
        const char *key = child_val(p, a, "key");
        if (!key || !strcmp(key, "_output_shapes")) continue;
        char *text = render_value(p, child(p, a, "value"));
        if (!text) {
            st = dp_error_set(p->err, DP_ERR_NOMEM, "%s: out of memory", p->name);
            goto done;
        }
        attrs[n.n_attrs].key = key;
        attrs[n.n_attrs++].text = text;
    }
    n.inputs = inputs;
    n.attrs = attrs;
    st = tf_import_node(im, &n, p->err);
done:
    for (int a = 0; attrs && a < n.n_attrs; a++) free((char *)attrs[a].text);
    free(attrs);
    free(inputs);
    return st;
}

enum dp_status dp_graph_parse_pbtxt_ex(const char *text, size_t len, const char *name,
                                       const struct dp_import_opts *opts, struct dp_graph **out,
                                       size_t *n_dropped, struct dp_error *err) {
    struct parser p = {.text = text, .len = len, .name = name, .line = 1, .col = 1, .err = err};
    struct tf_import im;
    enum dp_status st = tf_import_begin(&im, name, err);
    if (st) goto fail;
    for (;;) {
        struct tok t;
        if ((st = peek(&p, &t))) goto fail;
        if (t.kind == T_EOF) break;
        /* One top-level field at a time: parse it into a fresh tree. */
        p.n_f = 0;
        p.n_sb = 0;
        int root = new_field(&p, -1, NULL);
        if (root < 0) {
            st = dp_error_set(err, DP_ERR_NOMEM, "%s: out of memory", name);
            goto fail;
        }
        p.f[root].msg = true;
        next(&p, &t);
        if (is_punct(&t, ';') || is_punct(&t, ',')) continue;
        if ((st = parse_field(&p, root, 0, t))) goto fail;
        for (int fi = p.f[root].first; fi >= 0; fi = p.f[fi].next) {
            /* A MetaGraphDef's graph_def { node ... } holds the GraphDef. */
            bool meta = key_is(&p.f[fi], "graph_def") && p.f[fi].msg;
            for (int ni = meta ? p.f[fi].first : fi; ni >= 0; ni = meta ? p.f[ni].next : -1) {
                if (!key_is(&p.f[ni], "node")) continue; /* versions, library, ...: skipped */
                if (!p.f[ni].msg) {
                    st = fail_at(&p, ni, DP_ERR_INVALID, "node: expected a block", NULL);
                    goto fail;
                }
                if ((st = import_node(&p, &im, ni))) goto fail;
            }
        }
    }
    if (dp_graph_n_nodes(im.g) == 0) {
        st = dp_error_set(err, DP_ERR_INVALID, "%s:%d:%d: empty graph (no node blocks)", name,
                          p.line, p.col);
        goto fail;
    }
    st = tf_import_end(&im, opts, out, n_dropped, err);
fail:
    tf_import_free(&im);
    free(p.f);
    free(p.sb);
    return st;
}

enum dp_status dp_graph_parse_pbtxt(const char *text, size_t len, const char *name,
                                    const struct dp_import_opts *opts, struct dp_graph **out,
                                    struct dp_error *err) {
    return dp_graph_parse_pbtxt_ex(text, len, name, opts, out, NULL, err);
}

enum dp_status dp_graph_import_pbtxt_ex(const char *path, const struct dp_import_opts *opts,
                                        struct dp_graph **out, size_t *n_dropped,
                                        struct dp_error *err) {
    char *text = NULL;
    size_t len = 0;
    static const struct dp_read_spec spec = {"TensorFlow GraphDef text", DP_IMPORT_MAX_TEXT, true,
                                             NULL, NULL};
    enum dp_status st = dp_file_read(path, &spec, &text, &len, err);
    if (st) return st;
    st = dp_graph_parse_pbtxt_ex(text, len, dp_file_name(path), opts, out, n_dropped, err);
    free(text);
    return st;
}

enum dp_status dp_graph_import_pbtxt(const char *path, const struct dp_import_opts *opts,
                                     struct dp_graph **out, struct dp_error *err) {
    return dp_graph_import_pbtxt_ex(path, opts, out, NULL, err);
}
