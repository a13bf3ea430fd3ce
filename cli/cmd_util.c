/* cmd_util.c: the helpers of cmd_util.h, kept in one place so that every command writes JSON
 * strings, times runs, builds its benchmark graph, reads --exported-batch and names a setting
 * (an id or the cluster options) the same way. */
#include "cmd_util.h"

#include "dp/json_out.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

void cmd_json_str(FILE *f, const char *s) {
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
        switch (*p) {
        case '"': fputs("\\\"", f); break;
        case '\\': fputs("\\\\", f); break;
        case '\n': fputs("\\n", f); break;
        case '\r': fputs("\\r", f); break;
        case '\t': fputs("\\t", f); break;
        default:
            if (*p < 0x20) fprintf(f, "\\u%04x", *p);
            else fputc(*p, f);
        }
    }
    fputc('"', f);
}

void cmd_json_num(FILE *f, double v) {
    char buf[32];
    dp_json_num_text(v, buf, sizeof buf);
    fputs(buf, f);
}

int cmd_cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

struct edge_key {
    uint64_t edge; /* lo << 32 | hi */
    int      pos;  /* index in the edge list */
};

static int cmp_edge_key(const void *pa, const void *pb) {
    const struct edge_key *a = pa, *b = pb;
    if (a->edge != b->edge) return a->edge < b->edge ? -1 : 1;
    return (a->pos > b->pos) - (a->pos < b->pos);
}

struct dp_grouped *cmd_synthetic_grouped(int n, uint64_t seed) {
    uint64_t s = seed * 0x9e3779b97f4a7c15ull + 1;
#define RND() (s ^= s << 13, s ^= s >> 7, s ^= s << 17, s)
    int want = n > 1 ? (int)(1.8 * n) : 0, m = 0;
    int *e = malloc(((size_t)want + (size_t)n + 1) * 2 * sizeof *e);
    if (!e) return NULL;
    for (int i = 1; i < n; i++) { /* a spanning tree keeps it connected */
        e[2 * m] = (int)(RND() % (uint64_t)i);
        e[2 * m + 1] = i;
        m++;
    }
    for (int k = 0; k < want; k++) {
        int i = (int)(RND() % (uint64_t)n), j = (int)(RND() % (uint64_t)n);
        if (i == j) continue;
        e[2 * m] = i < j ? i : j;
        e[2 * m + 1] = i < j ? j : i;
        m++;
    }
    /* De-duplicate, keeping each edge's first occurrence in place: sort (edge, position) keys,
     * then drop every key equal to the one before it (pairwise comparison took 24 s at 1e5). */
    struct edge_key *keys = malloc(((size_t)m + 1) * sizeof *keys);
    if (!keys) {
        free(e);
        return NULL;
    }
    for (int a = 0; a < m; a++) {
        keys[a].edge = (uint64_t)(uint32_t)e[2 * a] << 32 | (uint32_t)e[2 * a + 1];
        keys[a].pos = a;
    }
    qsort(keys, (size_t)m, sizeof *keys, cmp_edge_key);
    for (int a = 1; a < m; a++)
        if (keys[a].edge == keys[a - 1].edge) e[2 * keys[a].pos] = -1; /* a later copy */
    free(keys);
    int kept = 0;
    for (int a = 0; a < m; a++)
        if (e[2 * a] >= 0) {
            e[2 * kept] = e[2 * a];
            e[2 * kept + 1] = e[2 * a + 1];
            kept++;
        }
    struct dp_grouped *g = dp_grouped_init("synthetic", n, kept);
    if (g) {
        memcpy(g->edges, e, (size_t)kept * 2 * sizeof *e);
        for (int i = 0; i < n; i++) {
            g->x[i * 3 + 0] = (double)(RND() % 10000000);
            g->x[i * 3 + 1] = (double)(1 + RND() % 50);
            g->x[i * 3 + 2] = (double)(RND() % 3000) / 1000.0;
        }
    }
    free(e);
#undef RND
    return g;
}

bool cmd_import_opts(struct cli *c, struct dp_import_opts *o) {
    o->exported_batch = 0;
    return cli_int(c, "--exported-batch", 1, INT64_C(1) << 40, &o->exported_batch);
}

/* ---- naming a setting ---- */

bool cmd_cluster_opts(struct cli *c, struct cmd_cluster *o) {
    memset(o, 0, sizeof *o);
    o->gpu = cli_value(c, "--gpu");
    o->network = cli_value(c, "--network");
    o->placement = cli_value(c, "--placement");
    o->precision = cli_value(c, "--precision");
    o->gpus = cli_value(c, "--gpus");
    bool ok = cli_int(c, "--workers", 1, 64, &o->workers);
    ok = cli_int(c, "--ps", 1, 64, &o->ps) && ok;
    return cli_int(c, "--machines", 1, 128, &o->machines) && ok;
}

bool cmd_cluster_given(const struct cmd_cluster *o) {
    return o->gpu || o->network || o->placement || o->workers || o->ps || o->machines;
}

/* The catalog's names, ", "-separated, into buf (n bytes; truncated with "..."). */
static void gpu_names(const struct dp_gpu_catalog *cat, char *buf, size_t n) {
    size_t len = 0;
    buf[0] = '\0';
    for (int i = 0; i < cat->n_gpus && len < n; i++) {
        int w = snprintf(buf + len, n - len, "%s%s", i ? ", " : "", cat->gpus[i].name);
        if (w < 0 || (size_t)w >= n - len) {
            if (n > 4) snprintf(buf + n - 4, 4, "...");
            return;
        }
        len += (size_t)w;
    }
}

int cmd_cluster_setting(const struct cmd_cluster *o, const struct dp_gpu_catalog *cat,
                        const char *cmd, const char *usage, struct dp_setting *out) {
    enum dp_network net;
    enum dp_placement pl = DP_PLACE_HOMO;
    enum dp_precision prec = DP_PREC_FP32;
    if (!o->gpu || !o->workers || !o->ps || !o->network)
        return cli_usage(cmd, usage, "a setting by its cluster needs --gpu, --workers, --ps and "
                                     "--network (--placement, --precision optional)");
    if (!dp_network_parse(o->network, &net))
        return cli_usage(cmd, usage,
                         "--network %s: unknown network (PCIe NVLink 1GbE 10GbE 25GbE 40GbE "
                         "100GbE IB-EDR IB-HDR)", o->network);
    if (o->placement && !dp_placement_parse(o->placement, &pl))
        return cli_usage(cmd, usage, "--placement %s: expected homo or hetero", o->placement);
    if (o->precision && !dp_precision_parse(o->precision, &prec))
        return cli_usage(cmd, usage, "--precision %s: expected fp32 or mixed", o->precision);
    const struct dp_gpu *g = dp_gpu_find(cat, o->gpu);
    if (!g) {
        char names[1024];
        gpu_names(cat, names, sizeof names);
        return cli_usage(cmd, usage, "--gpu %s: no such GPU in %s (%s)", o->gpu, cat->path, names);
    }
    struct dp_error err = {0};
    if (dp_setting_make(g->name, (int)o->workers, (int)o->ps, net, (int)o->machines, pl, prec, out,
                        &err))
        return cli_fail(&err);
    return 0;
}

/* A decimal count at *p, advanced past it (capped at 1000: dp_setting_make checks the range);
 * false when no digit is there. */
static bool id_count(const char **p, int *out) {
    if (!isdigit((unsigned char)**p)) return false;
    int v = 0;
    for (; isdigit((unsigned char)**p); (*p)++)
        if (v < 1000) v = v * 10 + (**p - '0');
    *out = v;
    return true;
}

enum dp_status cmd_setting_parse_id(const char *id, const struct dp_gpu_catalog *cat,
                                    struct dp_setting *out, struct dp_error *err) {
    static const char form[] = "<GPU>-P<ps>w<workers><ho|he>-<network>[-mixed]";
    int ps = 0, workers = 0;
    enum dp_placement pl = DP_PLACE_HOMO;
    const char *p = id, *rest = NULL;
    /* the first "-P<n>w<n>ho-" (or "he-"): no GPU name holds one */
    for (const char *q = strchr(id, '-'); q && !rest; q = strchr(q + 1, '-')) {
        const char *r = q + 1;
        if (q == id || (*r != 'P' && *r != 'p')) continue;
        r++;
        if (!id_count(&r, &ps) || (*r != 'w' && *r != 'W')) continue;
        r++;
        if (!id_count(&r, &workers) || tolower((unsigned char)r[0]) != 'h' || r[1] == '\0' ||
            r[2] != '-')
            continue;
        char pl_s[3] = {r[0], r[1], '\0'};
        if (!dp_placement_parse(pl_s, &pl)) continue;
        rest = r + 3;
        p = q; /* the GPU ends here */
    }
    if (!rest)
        return dp_error_set(err, DP_ERR_INVALID, "'%s' is not a setting id (%s)", id, form);
    char gpu[DP_NAME_MAX], netname[DP_NAME_MAX];
    if ((size_t)(p - id) >= sizeof gpu || strlen(rest) >= sizeof netname)
        return dp_error_set(err, DP_ERR_INVALID, "'%s': too long for a setting id", id);
    memcpy(gpu, id, (size_t)(p - id));
    gpu[p - id] = '\0';
    snprintf(netname, sizeof netname, "%s", rest);
    enum dp_precision prec = DP_PREC_FP32;
    size_t nl = strlen(netname);
    if (nl > 6 && !strcasecmp(netname + nl - 6, "-mixed")) {
        prec = DP_PREC_MIXED;
        netname[nl - 6] = '\0';
    }
    if (ps < 1 || ps > 64 || workers < 1 || workers > 64)
        return dp_error_set(err, DP_ERR_INVALID, "'%s': ps %d and workers %d must be in [1, 64]",
                            id, ps, workers);
    enum dp_network net;
    if (!dp_network_parse(netname, &net))
        return dp_error_set(err, DP_ERR_INVALID,
                            "'%s': unknown network '%s' (PCIe NVLink 1GbE 10GbE 25GbE 40GbE "
                            "100GbE IB-EDR IB-HDR)", id, netname);
    /* The GPU: a full catalog name, else the one whose short name this is. */
    const struct dp_gpu *g = NULL, *fit = NULL;
    int n_fit = 0;
    char fits[512] = "";
    for (int i = 0; i < cat->n_gpus && !g; i++)
        if (!strcasecmp(cat->gpus[i].name, gpu)) g = &cat->gpus[i];
    for (int i = 0; i < cat->n_gpus && !g; i++) {
        char sh[DP_NAME_MAX];
        dp_gpu_short_name(cat->gpus[i].name, sh, sizeof sh);
        if (strcasecmp(sh, gpu)) continue;
        size_t len = strlen(fits);
        snprintf(fits + len, sizeof fits - len, "%s%s", n_fit ? ", " : "", cat->gpus[i].name);
        fit = &cat->gpus[i];
        n_fit++;
    }
    if (!g && n_fit != 1) {
        if (n_fit == 0) {
            char names[1024];
            gpu_names(cat, names, sizeof names);
            return dp_error_set(err, DP_ERR_NOT_FOUND, "'%s': no GPU '%s' in %s (%s)", id, gpu,
                                cat->path, names);
        }
        return dp_error_set(err, DP_ERR_NOT_FOUND,
                            "'%s': GPU '%s' fits several: %s (put the full name in the id, as in "
                            "%s%s, or use --gpu NAME)", id, gpu, fits, fit->name,
                            id + strlen(gpu));
    }
    if (!g) g = fit;
    return dp_setting_make(g->name, workers, ps, net, 0, pl, prec, out, err);
}

/* The GPU of a list entry as the catalog knows it (the list may name it in short). */
static bool same_gpu(const struct dp_gpu_catalog *cat, const char *a, const char *b) {
    const struct dp_gpu *ga = dp_gpu_find(cat, a), *gb = dp_gpu_find(cat, b);
    return ga && gb ? ga == gb : !strcasecmp(a, b);
}

/* The inspector of an ad-hoc setting s: the list's entry for the same cluster when its file
 * exists, else the user directory's file. Prints why not and returns 1 when neither exists. */
static int adhoc_inspector(const struct dp_settings *list, const struct dp_gpu_catalog *cat,
                           const char *id, struct dp_setting *s, char *path, size_t n) {
    const struct dp_setting *entry = NULL;
    for (int i = 0; i < list->n_settings && !entry; i++) {
        const struct dp_setting *e = &list->settings[i];
        if (e->ps == s->ps && e->workers == s->workers && e->placement == s->placement &&
            e->network == s->network && e->precision == s->precision &&
            same_gpu(cat, e->gpu, s->gpu))
            entry = e;
    }
    if (entry && entry->inspector[0] && access(entry->inspector, R_OK) == 0) {
        snprintf(path, n, "%s", entry->inspector);
        *s = *entry;
        return 0;
    }
    char user[4096];
    bool have_dir = dp_user_inspector_path(s, user, sizeof user);
    if (have_dir && access(user, R_OK) == 0) {
        snprintf(path, n, "%s", user);
        return 0;
    }
    struct dp_error err = {0};
    if (!have_dir)
        dp_error_set(&err, DP_ERR_NOT_FOUND,
                     "setting '%s' (GPU %s): no inspector: the list has none for this cluster and "
                     "there is no user inspector directory (set DRIPLE_INSPECTORS, XDG_DATA_HOME "
                     "or HOME); pass --inspector M", id ? id : s->id, s->gpu);
    else
        dp_error_set(&err, DP_ERR_NOT_FOUND,
                     "setting '%s' (GPU %s): no inspector: %.300s does not exist. Make one: in "
                     "the explorer (driple explore) set this cluster, press t (transfer) then f "
                     "(save), or run "
                     "driple transfer --from BASE.json --dataset D.json -o that file; or pass "
                     "--inspector M", id ? id : s->id, s->gpu, user);
    return cli_fail(&err);
}

int cmd_setting_resolve(const char *id, const struct cmd_cluster *o, const char *settings_file,
                        const char *cmd, const char *usage, struct dp_setting *s, char *path,
                        size_t n) {
    struct dp_settings *list = NULL;
    struct dp_gpu_catalog *cat = NULL;
    struct dp_error err = {0};
    int rc = 1;
    if (dp_settings_load_default(settings_file, NULL, &list, &err)) {
        cli_fail(&err);
        goto done;
    }
    const struct dp_setting *f = id ? dp_settings_find(list, id) : NULL;
    if (f) {
        *s = *f;
        if (!f->inspector[0] || access(f->inspector, R_OK) != 0) {
            char user[4096];
            bool have_dir = dp_user_inspector_path(f, user, sizeof user);
            dp_error_set(&err, DP_ERR_NOT_FOUND,
                         "%s: setting '%s': %s%.300s%s; no %.300s either (build the shipped "
                         "ones with 'make assets', save a transfer there from the explorer: t "
                         "then f, or pass --inspector M)", list->path, f->id,
                         f->inspector[0] ? "inspector " : "names no inspector file",
                         f->inspector, f->inspector[0] ? " does not exist" : "",
                         have_dir ? user : "user inspector directory");
            cli_fail(&err);
            goto done;
        }
        snprintf(path, n, "%s", f->inspector);
        rc = 0;
        goto done;
    }
    if (dp_gpu_catalog_load_default(o ? o->gpus : NULL, &cat, &err)) {
        cli_fail(&err);
        goto done;
    }
    if (id) {
        if (cmd_setting_parse_id(id, cat, s, &err)) {
            char why[sizeof err.msg];
            snprintf(why, sizeof why, "%s", err.msg);
            dp_error_set(&err, err.status, "%s: no setting '%s' (%d settings; see 'driple "
                         "compare'), and as an id for any cluster: %.380s", list->path, id,
                         list->n_settings, why);
            cli_fail(&err);
            goto done;
        }
    } else if ((rc = cmd_cluster_setting(o, cat, cmd, usage, s))) {
        goto done;
    }
    rc = adhoc_inspector(list, cat, id, s, path, n);
done:
    dp_gpu_catalog_free(cat);
    dp_settings_free(list);
    return rc;
}
