/* settings.c: the interconnect table, setting ids, checks, on-the-fly settings, and the lookup
 * helpers over GPU catalogs and setting lists (the JSON reading and writing is settings_json.c).
 * Network figures are nominal line rates and typical latencies, not measurements.
 * Over 800 lines on purpose: the id grammar's printer and parser and the checks every field's
 * rules need stay beside each other, so a new field is added in one file. */
#include "dp/settings.h"

#include <ctype.h>
#include <stdarg.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cluster/near.h"

static const struct {
    const char *name;
    double      gbps;  /* one direction, GB/s */
    double      lat_us;
    bool        intra;
} networks[DP_NET_COUNT] = {
    [DP_NET_PCIE]   = {"PCIe", 15.75, 5.0, true},    /* PCIe 3.0 x16 */
    [DP_NET_NVLINK] = {"NVLink", 50.0, 3.0, true},   /* NVLink 2, two links */
    [DP_NET_1GBE]   = {"1GbE", 0.125, 50.0, false},
    [DP_NET_10GBE]  = {"10GbE", 1.25, 20.0, false},
    [DP_NET_25GBE]  = {"25GbE", 3.125, 15.0, false},
    [DP_NET_40GBE]  = {"40GbE", 5.0, 12.0, false},
    [DP_NET_100GBE] = {"100GbE", 12.5, 10.0, false},
    [DP_NET_IB_EDR] = {"IB-EDR", 12.5, 2.0, false},  /* 100 Gb/s */
    [DP_NET_IB_HDR] = {"IB-HDR", 25.0, 2.0, false},  /* 200 Gb/s */
    [DP_NET_IB_NDR] = {"IB-NDR", 50.0, 2.0, false},  /* 400 Gb/s */
    [DP_NET_200GBE] = {"200GbE", 25.0, 8.0, false},  /* RoCE or plain Ethernet */
    [DP_NET_400GBE] = {"400GbE", 50.0, 8.0, false},
};

const char *dp_network_name(enum dp_network n) {
    return (unsigned)n < DP_NET_COUNT ? networks[n].name : "?";
}

bool dp_network_parse(const char *s, enum dp_network *out) {
    if (!s) return false;
    for (int i = 0; i < DP_NET_COUNT; i++)
        if (!strcasecmp(s, networks[i].name)) {
            *out = (enum dp_network)i;
            return true;
        }
    return false;
}

enum dp_status dp_network_lookup(const char *s, const char *what, enum dp_network *out,
                                 struct dp_error *err) {
    if (dp_network_parse(s, out)) return DP_OK;
    char near[256] = "", all[256] = "";
    for (int i = 0; i < DP_NET_COUNT; i++) {
        if (s && *s && dp_near(s, networks[i].name)) dp_near_append(near, sizeof near, networks[i].name);
        dp_near_append(all, sizeof all, networks[i].name);
    }
    if (near[0])
        return dp_error_set(err, DP_ERR_INVALID, "%s %s: unknown network; did you mean %s?",
                            what, s ? s : "", near);
    return dp_error_set(err, DP_ERR_INVALID, "%s %s: unknown network (one of %s)", what,
                        s ? s : "", all);
}

double dp_network_bandwidth_gbps(enum dp_network n) {
    return (unsigned)n < DP_NET_COUNT ? networks[n].gbps : NAN;
}

double dp_network_latency_us(enum dp_network n) {
    return (unsigned)n < DP_NET_COUNT ? networks[n].lat_us : NAN;
}

bool dp_network_intra(enum dp_network n) {
    return (unsigned)n < DP_NET_COUNT && networks[n].intra;
}

const char *dp_placement_name(enum dp_placement p) {
    return p == DP_PLACE_HETERO ? "hetero" : "homo";
}

bool dp_placement_parse(const char *s, enum dp_placement *out) {
    if (!s) return false;
    if (!strcasecmp(s, "homo") || !strcasecmp(s, "ho")) *out = DP_PLACE_HOMO;
    else if (!strcasecmp(s, "hetero") || !strcasecmp(s, "he")) *out = DP_PLACE_HETERO;
    else return false;
    return true;
}

static const char *const prec_names[DP_PREC_COUNT] = {"fp32", "mixed", "tf32", "bf16", "fp8"};

const char *dp_precision_name(enum dp_precision p) {
    return (unsigned)p < DP_PREC_COUNT ? prec_names[p] : "?";
}

bool dp_precision_parse(const char *s, enum dp_precision *out) {
    if (!s) return false;
    for (int i = 0; i < DP_PREC_COUNT; i++)
        if (!strcasecmp(s, prec_names[i])) {
            *out = (enum dp_precision)i;
            return true;
        }
    if (!strcasecmp(s, "float32")) *out = DP_PREC_FP32;
    else if (!strcasecmp(s, "amp")) *out = DP_PREC_MIXED;
    else return false;
    return true;
}

enum dp_status dp_precision_lookup(const char *s, const char *what, enum dp_precision *out,
                                   struct dp_error *err) {
    if (dp_precision_parse(s, out)) return DP_OK;
    if (s && (!strcasecmp(s, "fp16") || !strcasecmp(s, "half") || !strcasecmp(s, "float16")))
        return dp_error_set(err, DP_ERR_INVALID,
                            "%s %s: not a precision driple models; did you mean mixed (fp16 "
                            "automatic mixed precision)?", what, s);
    char near[128] = "";
    for (int i = 0; i < DP_PREC_COUNT; i++)
        if (s && *s && dp_near(s, prec_names[i])) dp_near_append(near, sizeof near, prec_names[i]);
    if (near[0])
        return dp_error_set(err, DP_ERR_INVALID, "%s %s: unknown precision; did you mean %s?",
                            what, s, near);
    return dp_error_set(err, DP_ERR_INVALID,
                        "%s %s: unknown precision (fp32, tf32, bf16, mixed, fp8)", what,
                        s ? s : "");
}

enum dp_precision dp_precision_graph(enum dp_precision p) {
    return p == DP_PREC_FP32 || p == DP_PREC_TF32 ? DP_PREC_FP32 : DP_PREC_MIXED;
}

/* A name table lookup ignoring case: the index of s in names[0..n), or -1. */
static int name_index(const char *const *names, int n, const char *s) {
    for (int i = 0; s && i < n; i++)
        if (!strcasecmp(s, names[i])) return i;
    return -1;
}

static const char *const tf32_names[] = {"auto", "off", "on"};
static const char *const loader_names[] = {"synthetic", "cpu", "dali"};
static const char *const ar_names[] = {"auto", "ring", "tree"};
static const char *const shard_names[] = {"none", "zero1", "zero2", "zero3"};
static const char *const rc_names[] = {"none", "selective", "full"};
#define N_OF(a) ((int)(sizeof a / sizeof a[0]))

const char *dp_tf32_name(enum dp_tf32 t) {
    return (unsigned)t < (unsigned)N_OF(tf32_names) ? tf32_names[t] : "?";
}

bool dp_tf32_parse(const char *s, enum dp_tf32 *out) {
    int i = name_index(tf32_names, N_OF(tf32_names), s);
    if (i >= 0) *out = (enum dp_tf32)i;
    return i >= 0;
}

const char *dp_loader_name(enum dp_loader l) {
    return (unsigned)l < (unsigned)N_OF(loader_names) ? loader_names[l] : "?";
}

bool dp_loader_parse(const char *s, enum dp_loader *out) {
    int i = name_index(loader_names, N_OF(loader_names), s);
    if (i >= 0) *out = (enum dp_loader)i;
    return i >= 0;
}

const char *dp_allreduce_algo_name(enum dp_allreduce_algo a) {
    return (unsigned)a < (unsigned)N_OF(ar_names) ? ar_names[a] : "?";
}

bool dp_allreduce_algo_parse(const char *s, enum dp_allreduce_algo *out) {
    int i = name_index(ar_names, N_OF(ar_names), s);
    if (i >= 0) *out = (enum dp_allreduce_algo)i;
    return i >= 0;
}

const char *dp_shard_name(enum dp_shard x) {
    return (unsigned)x < (unsigned)N_OF(shard_names) ? shard_names[x] : "?";
}

bool dp_shard_parse(const char *s, enum dp_shard *out) {
    int i = name_index(shard_names, N_OF(shard_names), s);
    if (i < 0 && s && !strcasecmp(s, "fsdp")) i = DP_SHARD_ZERO3;
    if (i >= 0) *out = (enum dp_shard)i;
    return i >= 0;
}

const char *dp_recompute_name(enum dp_recompute r) {
    return (unsigned)r < (unsigned)N_OF(rc_names) ? rc_names[r] : "?";
}

bool dp_recompute_parse(const char *s, enum dp_recompute *out) {
    int i = name_index(rc_names, N_OF(rc_names), s);
    if (i < 0 && s && !strcasecmp(s, "sel")) i = DP_RECOMPUTE_SELECTIVE;
    if (i >= 0) *out = (enum dp_recompute)i;
    return i >= 0;
}

const char *dp_sync_name(enum dp_sync s) { return s == DP_SYNC_ALLREDUCE ? "allreduce" : "ps"; }

bool dp_sync_parse(const char *s, enum dp_sync *out) {
    if (!s) return false;
    if (!strcasecmp(s, "ps") || !strcasecmp(s, "parameter_server")) *out = DP_SYNC_PS;
    else if (!strcasecmp(s, "allreduce") || !strcasecmp(s, "all-reduce") || !strcasecmp(s, "ar") ||
             !strcasecmp(s, "replicated") || !strcasecmp(s, "nccl"))
        *out = DP_SYNC_ALLREDUCE;
    else return false;
    return true;
}

const char *dp_framework_name(enum dp_framework f) {
    return f == DP_FW_PYTORCH ? "pytorch" : "tensorflow";
}

bool dp_framework_parse(const char *s, enum dp_framework *out) {
    if (!s) return false;
    if (!strcasecmp(s, "tensorflow") || !strcasecmp(s, "tf")) *out = DP_FW_TENSORFLOW;
    else if (!strcasecmp(s, "pytorch") || !strcasecmp(s, "torch") || !strcasecmp(s, "pt"))
        *out = DP_FW_PYTORCH;
    else return false;
    return true;
}

/* "1.13" -> 113; -1 when not MAJOR.MINOR with minor < 100. */
static int version_number(const char *v) {
    char *end;
    if (!isdigit((unsigned char)*v)) return -1;
    long major = strtol(v, &end, 10);
    if (*end != '.' || !isdigit((unsigned char)end[1]) || major < 1 || major > 99) return -1;
    long minor = strtol(end + 1, &end, 10);
    if (minor > 99) return -1;
    if (*end == '.') { /* a patch level: "1.13.1" */
        if (!isdigit((unsigned char)end[1])) return -1;
        strtol(end + 1, &end, 10);
    }
    return *end ? -1 : (int)(major * 100 + minor);
}

enum dp_status dp_framework_lookup(const char *s, const char *what, enum dp_framework *fw,
                                   int *version, struct dp_error *err) {
    static const char *const names[] = {"tensorflow", "pytorch"};
    char name[32];
    const char *colon = s ? strchr(s, ':') : NULL;
    size_t len = s ? (colon ? (size_t)(colon - s) : strlen(s)) : 0;
    snprintf(name, sizeof name, "%.*s", (int)(len < sizeof name ? len : sizeof name - 1), s ? s : "");
    enum dp_framework f;
    if (!dp_framework_parse(name, &f)) {
        char near[64] = "";
        for (int i = 0; i < 2; i++)
            if (name[0] && dp_near(name, names[i])) dp_near_append(near, sizeof near, names[i]);
        return dp_error_set(err, DP_ERR_INVALID,
                            "%s %s: unknown framework%s%s%s (tensorflow[:VERSION] or "
                            "pytorch[:VERSION|:ngc], e.g. pytorch:1.13)", what, s ? s : "",
                            near[0] ? "; did you mean " : "", near, near[0] ? "?" : "");
    }
    int v = 0;
    if (colon) {
        if (f == DP_FW_PYTORCH && !strcasecmp(colon + 1, "ngc")) v = DP_FW_VERSION_NGC;
        else if ((v = version_number(colon + 1)) < 0)
            return dp_error_set(err, DP_ERR_INVALID,
                                "%s %s: the version must be MAJOR.MINOR (pytorch:1.13, "
                                "tensorflow:2.4)%s", what, s,
                                f == DP_FW_PYTORCH ? " or ngc (an NGC container)" : "");
    }
    *fw = f;
    *version = v;
    return DP_OK;
}

void dp_framework_format(enum dp_framework fw, int version, char *buf, size_t n) {
    if (version == DP_FW_VERSION_NGC) snprintf(buf, n, "%s:ngc", dp_framework_name(fw));
    else if (version > 0)
        snprintf(buf, n, "%s:%d.%d", dp_framework_name(fw), version / 100, version % 100);
    else snprintf(buf, n, "%s", dp_framework_name(fw));
}

/* --- GPU catalog lookups --- */

void dp_gpu_catalog_free(struct dp_gpu_catalog *c) {
    if (!c) return;
    free(c->gpus);
    free(c->path);
    free(c);
}

enum dp_status dp_gpu_check_sim(const struct dp_gpu_catalog *c, const struct dp_gpu *g,
                                struct dp_error *err) {
    bool fp32 = g->fp32_tflops > 0, bw = g->bandwidth_gbps > 0; /* false for NaN */
    if (fp32 && bw) return DP_OK;
    long i = c && g >= c->gpus && g < c->gpus + c->n_gpus ? (long)(g - c->gpus) : -1;
    return dp_error_set(err, DP_ERR_INVALID,
                        "%s:$.gpus[%ld]: %s has no known %s; the simulator needs it (fill it in "
                        "from a spec sheet, or pick another GPU)",
                        c && c->path ? c->path : "(catalog)", i, g->name,
                        !fp32 && !bw ? "fp32_tflops or bandwidth_gbps"
                                     : !fp32 ? "fp32_tflops" : "bandwidth_gbps");
}

static const char *const gen_names[DP_GEN_COUNT] = {
    "unknown", "Kepler", "Maxwell", "Pascal", "Volta", "Turing", "Ampere", "Ada", "Hopper",
    "Blackwell"};

const char *dp_gpu_gen_name(enum dp_gpu_gen gen) {
    return (unsigned)gen < DP_GEN_COUNT ? gen_names[gen] : gen_names[0];
}

enum dp_gpu_gen dp_gpu_generation(const struct dp_gpu *g) {
    size_t len = strcspn(g->architecture, " (");
    for (int i = 1; i < DP_GEN_COUNT; i++)
        if (len == strlen(gen_names[i]) && !strncasecmp(g->architecture, gen_names[i], len))
            return (enum dp_gpu_gen)i;
    return DP_GEN_UNKNOWN;
}

/* The paper's setting list abbreviates these GPUs in its ids; every other GPU's ids carry its
 * full name. Fixed: new GPUs never get a short id, so no id changes meaning. */
static const struct {
    const char *short_id, *name;
} short_ids[] = {{"V100", "V100-PCIe-16GB"}, {"2080Ti", "RTX2080Ti"}, {"4090", "RTX4090"},
                 {"A100", "A100-40GB-SXM"},  {"H100", "H100-SXM"}};
#define N_SHORT_IDS (sizeof short_ids / sizeof short_ids[0])

void dp_gpu_short_name(const char *name, char *buf, size_t n) {
    if (!n) return;
    if (!name) name = "";
    for (size_t i = 0; i < N_SHORT_IDS; i++)
        if (!strcasecmp(name, short_ids[i].name)) name = short_ids[i].short_id;
    snprintf(buf, n, "%s", name);
}

/* The key GPU names are compared by: lowercase letters and digits only, without a leading
 * vendor or product-line word (NVIDIA, Tesla, GeForce) and a trailing "(...)" note. */
static void name_key(const char *s, char *buf, size_t n) {
    static const char *const prefix[] = {"nvidia ", "tesla ", "geforce "};
    size_t k = 0;
    for (bool again = true; again;) {
        again = false;
        for (size_t i = 0; i < sizeof prefix / sizeof *prefix; i++)
            if (!strncasecmp(s, prefix[i], strlen(prefix[i]))) {
                s += strlen(prefix[i]);
                again = true;
            }
    }
    const char *paren = strchr(s, '(');
    for (; *s && s != paren && k + 1 < n; s++)
        if (isalnum((unsigned char)*s)) buf[k++] = (char)tolower((unsigned char)*s);
    if (n) buf[k] = '\0';
}

/* The GPU whose name or alias has the same key as `name`, or NULL. */
static const struct dp_gpu *find_by_key(const struct dp_gpu_catalog *c, const char *name) {
    char want[2 * DP_NAME_MAX], have[2 * DP_NAME_MAX];
    name_key(name, want, sizeof want);
    if (!want[0]) return NULL;
    for (int i = 0; i < c->n_gpus; i++) {
        const struct dp_gpu *g = &c->gpus[i];
        name_key(g->name, have, sizeof have);
        if (!strcmp(have, want)) return g;
        for (int a = 0; a < g->n_aliases; a++) {
            name_key(g->aliases[a], have, sizeof have);
            if (!strcmp(have, want)) return g;
        }
    }
    return NULL;
}

/* The catalog GPU a paper-style short id ("V100") stands for, or NULL. */
static const struct dp_gpu *find_short(const struct dp_gpu_catalog *c, const char *name) {
    for (size_t i = 0; i < N_SHORT_IDS; i++)
        if (!strcasecmp(name, short_ids[i].short_id)) {
            for (int j = 0; j < c->n_gpus; j++)
                if (!strcasecmp(c->gpus[j].name, short_ids[i].name)) return &c->gpus[j];
            return NULL;
        }
    return NULL;
}

/* A GPU by a whole name: a short id first (so that no other GPU can take one), then its
 * catalog name, then a name or alias with the same key. */
static const struct dp_gpu *find_named(const struct dp_gpu_catalog *c, const char *name) {
    const struct dp_gpu *g = find_short(c, name);
    for (int i = 0; i < c->n_gpus && !g; i++)
        if (!strcmp(c->gpus[i].name, name)) g = &c->gpus[i];
    return g ? g : find_by_key(c, name);
}

const struct dp_gpu *dp_gpu_find(const struct dp_gpu_catalog *c, const char *name) {
    if (!c || !name || !*name) return NULL;
    return find_named(c, name);
}

enum dp_status dp_gpu_lookup(const struct dp_gpu_catalog *c, const char *name, const char *what,
                             const struct dp_gpu **out, struct dp_error *err) {
    if (!c || !name) return dp_error_set(err, DP_ERR_INVALID, "%s: no GPU named", what);
    const struct dp_gpu *g = find_short(c, name) ? NULL : find_named(c, name);
    if (g) {
        *out = g;
        return DP_OK;
    }
    /* Names name is part of (an ambiguous short form), else those a typo away. */
    char part[1024] = "", typo[1024] = "", key[2 * DP_NAME_MAX], have[2 * DP_NAME_MAX];
    name_key(name, key, sizeof key);
    for (int i = 0; key[0] && i < c->n_gpus; i++) {
        name_key(c->gpus[i].name, have, sizeof have);
        bool in = strlen(key) >= 2 && strstr(have, key);
        for (int a = 0; !in && a < c->gpus[i].n_aliases; a++) {
            name_key(c->gpus[i].aliases[a], have, sizeof have);
            in = strlen(key) >= 2 && strstr(have, key);
        }
        if (in) dp_near_append(part, sizeof part, c->gpus[i].name);
        else if (dp_near_distance(name, c->gpus[i].name, 2) <= 2)
            dp_near_append(typo, sizeof typo, c->gpus[i].name);
    }
    const char *cat = c->path ? c->path : "the GPU catalog";
    if (part[0] && !strchr(part, ','))
        return dp_error_set(err, DP_ERR_NOT_FOUND,
                            "%s %s: not a GPU name of %s; did you mean %s? (names are "
                            "exact: a catalog name or alias)", what, name, cat, part);
    if (part[0])
        return dp_error_set(err, DP_ERR_NOT_FOUND, "%s %s is ambiguous: %s", what, name, part);
    if (typo[0])
        return dp_error_set(err, DP_ERR_NOT_FOUND,
                            "%s %s: not a GPU of %s; did you mean %s?", what, name, cat,
                            typo);
    char names[1024];
    dp_gpu_catalog_names(c, names, sizeof names);
    return dp_error_set(err, DP_ERR_NOT_FOUND, "%s %s: no such GPU in %s (%s)", what, name, cat,
                        names);
}

bool dp_gpu_has_nvlink(const struct dp_gpu *g) { return g && g->nvlink_gbps > 0; }

bool dp_gpu_has_tf32(const struct dp_gpu *g) { return g && dp_gpu_generation(g) >= DP_GEN_AMPERE; }

bool dp_gpu_has_fp8(const struct dp_gpu *g) {
    enum dp_gpu_gen gen = g ? dp_gpu_generation(g) : DP_GEN_UNKNOWN;
    return gen == DP_GEN_ADA || gen == DP_GEN_HOPPER || gen == DP_GEN_BLACKWELL;
}

/* --- settings --- */

int dp_setting_accum(const struct dp_setting *s) { return s->accum > 1 ? s->accum : 1; }
int dp_setting_tp(const struct dp_setting *s) { return s->tp > 1 ? s->tp : 1; }
int dp_setting_pp(const struct dp_setting *s) { return s->pp > 1 ? s->pp : 1; }
int dp_setting_microbatches(const struct dp_setting *s) {
    return s->microbatches > 1 ? s->microbatches : 1;
}
int dp_setting_ep(const struct dp_setting *s) { return s->ep > 1 ? s->ep : 1; }

int dp_setting_dp_size(const struct dp_setting *s) {
    int mp = dp_setting_tp(s) * dp_setting_pp(s);
    return s->workers % mp ? s->workers : s->workers / mp;
}

/* Appends printf output to buf (n bytes) at *len (nothing once full). */
static void id_cat(char *buf, size_t n, size_t *len, const char *fmt, ...) {
    if (*len >= n) return;
    va_list ap;
    va_start(ap, fmt);
    int w = vsnprintf(buf + *len, n - *len, fmt, ap);
    va_end(ap);
    if (w > 0) *len += (size_t)w;
}

void dp_setting_format_id(const struct dp_setting *s, char *buf, size_t n) {
    char gpu[DP_NAME_MAX];
    size_t len = 0;
    if (!n) return;
    buf[0] = '\0';
    dp_gpu_short_name(s->gpu, gpu, sizeof gpu);
    if (s->sync == DP_SYNC_ALLREDUCE)
        id_cat(buf, n, &len, "%s-AR%d-%s", gpu, s->workers, dp_network_name(s->network));
    else
        id_cat(buf, n, &len, "%s-P%dw%d%s-%s", gpu, s->ps, s->workers,
               s->placement == DP_PLACE_HETERO ? "he" : "ho", dp_network_name(s->network));
    if (!dp_network_intra(s->network) || s->machines != 1)
        id_cat(buf, n, &len, "-M%dx%d", s->machines, dp_setting_gpus_per_machine(s));
    if (s->system[0]) id_cat(buf, n, &len, "-sys%s", s->system);
    if (s->framework == DP_FW_PYTORCH || s->fw_version) {
        id_cat(buf, n, &len, "-%s", dp_framework_name(s->framework));
        if (s->fw_version == DP_FW_VERSION_NGC) id_cat(buf, n, &len, "ngc");
        else if (s->fw_version > 0)
            id_cat(buf, n, &len, "%d.%d", s->fw_version / 100, s->fw_version % 100);
    }
    if (s->precision != DP_PREC_FP32) id_cat(buf, n, &len, "-%s", dp_precision_name(s->precision));
    if (s->tf32 != DP_TF32_AUTO) id_cat(buf, n, &len, "-tf32%s", dp_tf32_name(s->tf32));
    if (s->accum > 1) id_cat(buf, n, &len, "-acc%d", s->accum);
    if (s->loader != DP_LOADER_SYNTHETIC) id_cat(buf, n, &len, "-load%s", dp_loader_name(s->loader));
    if (s->cpu_cores > 0) id_cat(buf, n, &len, "-cpu%d", s->cpu_cores);
    if (s->ar_algo != DP_AR_AUTO) id_cat(buf, n, &len, "-%s", dp_allreduce_algo_name(s->ar_algo));
    if (s->shard != DP_SHARD_NONE) id_cat(buf, n, &len, "-%s", dp_shard_name(s->shard));
    if (s->tp > 1) id_cat(buf, n, &len, "-tp%d", s->tp);
    if (s->pp > 1) id_cat(buf, n, &len, "-pp%d", s->pp);
    if (s->microbatches > 1) id_cat(buf, n, &len, "-mb%d", s->microbatches);
    if (s->ep > 1) id_cat(buf, n, &len, "-ep%d", s->ep);
    if (s->recompute == DP_RECOMPUTE_SELECTIVE) id_cat(buf, n, &len, "-rcsel");
    if (s->recompute == DP_RECOMPUTE_FULL) id_cat(buf, n, &len, "-rcfull");
    if (s->seq_parallel) id_cat(buf, n, &len, "-sp");
}

/* A decimal count at *p, advanced past it (capped at 100000: the checks give the range);
 * false when no digit is there. */
static bool id_count(const char **p, int *out) {
    if (!isdigit((unsigned char)**p)) return false;
    int v = 0;
    for (; isdigit((unsigned char)**p); (*p)++)
        if (v < 100000) v = v * 10 + (**p - '0');
    *out = v;
    return true;
}

/* Where an id's GPU part ends: the first "-P<n>w<n><ho|he>-" or "-AR<n>-" (no GPU name holds
 * one). Fills the counts, placement and sync, and returns the dash after them (the network
 * follows), or NULL. */
static const char *id_marker(const char *id, const char **gpu_end, struct dp_setting *s) {
    for (const char *q = strchr(id, '-'); q; q = strchr(q + 1, '-')) {
        const char *r = q + 1;
        if (q == id) continue;
        if ((r[0] == 'A' || r[0] == 'a') && (r[1] == 'R' || r[1] == 'r')) {
            r += 2;
            if (!id_count(&r, &s->workers) || *r != '-') continue;
            s->sync = DP_SYNC_ALLREDUCE;
            s->ps = 0;
            s->placement = DP_PLACE_HOMO;
            *gpu_end = q;
            return r;
        }
        if (*r != 'P' && *r != 'p') continue;
        r++;
        if (!id_count(&r, &s->ps) || (*r != 'w' && *r != 'W')) continue;
        r++;
        if (!id_count(&r, &s->workers) || tolower((unsigned char)r[0]) != 'h' || r[1] == '\0' ||
            r[2] != '-')
            continue;
        char pl[3] = {r[0], r[1], '\0'};
        if (!dp_placement_parse(pl, &s->placement)) continue;
        s->sync = DP_SYNC_PS;
        *gpu_end = q;
        return r + 2;
    }
    return NULL;
}

void dp_gpu_catalog_names(const struct dp_gpu_catalog *cat, char *buf, size_t n) {
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

/* A suffix token "<word><count>" ("acc16"): the count, or -1 when t is not word then digits. */
static int word_count(const char *t, const char *word) {
    size_t n = strlen(word);
    const char *d = t + n;
    int v = 0;
    if (strncasecmp(t, word, n) || !id_count(&d, &v) || *d) return -1;
    return v;
}

/* A framework token: "pytorch", "pytorch1.13", "pytorchngc", "tensorflow2.4" (any name
 * dp_framework_parse takes before the version). */
static bool id_framework(const char *t, struct dp_setting *s) {
    char name[32];
    size_t k = 0;
    while (isalpha((unsigned char)t[k]) && k + 1 < sizeof name) k++;
    snprintf(name, sizeof name, "%.*s", (int)k, t);
    const char *v = t + k;
    if (!strcasecmp(v, "ngc") && !strncasecmp(name, "pytorch", 7)) {
        name[7] = '\0';
        v = t + 7;
    }
    enum dp_framework f;
    if (!dp_framework_parse(name, &f)) return false;
    int ver = 0;
    if (!strcasecmp(v, "ngc")) {
        if (f != DP_FW_PYTORCH) return false;
        ver = DP_FW_VERSION_NGC;
    } else if (*v && (ver = version_number(v)) < 0) {
        return false;
    }
    s->framework = f;
    s->fw_version = ver;
    return true;
}

/* One suffix token of the id grammar (settings.h) into s; false when t is none. *gpm gets the
 * "x<g>" of -M<m>x<g> (0 when absent). */
static bool id_suffix(const char *t, struct dp_setting *s, int *gpm) {
    int v;
    const char *d = t + 1;
    if (dp_precision_parse(t, &s->precision)) return true;
    if (!strcasecmp(t, "tf32on") || !strcasecmp(t, "tf32off")) {
        s->tf32 = t[5] == 'n' || t[5] == 'N' ? DP_TF32_ON : DP_TF32_OFF;
        return true;
    }
    if ((t[0] == 'M' || t[0] == 'm') && id_count(&d, &v)) {
        int g = 0;
        if ((*d == 'x' || *d == 'X') && (d++, !id_count(&d, &g))) return false;
        if (*d) return false;
        s->machines = v;
        *gpm = g;
        return true;
    }
    if (!strncasecmp(t, "sys", 3) && t[3] && strlen(t + 3) < sizeof s->system) {
        snprintf(s->system, sizeof s->system, "%s", t + 3);
        return true;
    }
    if (!strncasecmp(t, "load", 4) && dp_loader_parse(t + 4, &s->loader)) return true;
    if (dp_allreduce_algo_parse(t, &s->ar_algo) && s->ar_algo != DP_AR_AUTO) return true;
    if (!strncasecmp(t, "zero", 4) && dp_shard_parse(t, &s->shard)) return true;
    if (!strcasecmp(t, "rcsel") || !strcasecmp(t, "rcfull")) {
        s->recompute = t[2] == 's' || t[2] == 'S' ? DP_RECOMPUTE_SELECTIVE : DP_RECOMPUTE_FULL;
        return true;
    }
    if (!strcasecmp(t, "sp")) return s->seq_parallel = true;
    static const struct {
        const char *word;
        size_t off;
    } counts[] = {{"acc", offsetof(struct dp_setting, accum)},
                  {"cpu", offsetof(struct dp_setting, cpu_cores)},
                  {"tp", offsetof(struct dp_setting, tp)},
                  {"pp", offsetof(struct dp_setting, pp)},
                  {"mb", offsetof(struct dp_setting, microbatches)},
                  {"ep", offsetof(struct dp_setting, ep)}};
    for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++)
        if ((v = word_count(t, counts[i].word)) >= 0) {
            *(int *)((char *)s + counts[i].off) = v;
            return true;
        }
    return id_framework(t, s);
}

enum dp_status dp_setting_parse_id(const char *id, const struct dp_gpu_catalog *cat,
                                   struct dp_setting *out, struct dp_error *err) {
    static const char form[] = "<GPU>-P<ps>w<workers><ho|he>-<network> or <GPU>-AR<workers>-"
                               "<network>, then suffixes such as -M<machines>x<gpus>, "
                               "-pytorch, -mixed (docs/cli.md)";
    struct dp_setting s;
    memset(&s, 0, sizeof s);
    const char *gpu_end = NULL, *rest = id ? id_marker(id, &gpu_end, &s) : NULL;
    if (!rest)
        return dp_error_set(err, DP_ERR_INVALID, "'%s' is not a setting id (%s)", id ? id : "",
                            form);
    char gpu[DP_NAME_MAX], net[DP_ID_MAX];
    if ((size_t)(gpu_end - id) >= sizeof gpu || strlen(rest + 1) >= sizeof net)
        return dp_error_set(err, DP_ERR_INVALID, "'%s': too long for a setting id", id);
    memcpy(gpu, id, (size_t)(gpu_end - id));
    gpu[gpu_end - id] = '\0';
    snprintf(net, sizeof net, "%s", rest + 1);
    /* Suffixes, from the end: no network name ends in one of them. */
    int gpm = 0;
    for (char *dash; (dash = strrchr(net, '-')) && id_suffix(dash + 1, &s, &gpm);) *dash = '\0';
    if (!dp_network_parse(net, &s.network)) {
        struct dp_error why = {0};
        dp_network_lookup(net, "network", &s.network, &why);
        return dp_error_set(err, DP_ERR_INVALID, "'%s': %s", id, why.msg);
    }
    const struct dp_gpu *g = cat ? find_named(cat, gpu) : NULL;
    if (!g) {
        char names[1024] = "";
        if (cat) dp_gpu_catalog_names(cat, names, sizeof names);
        return dp_error_set(err, DP_ERR_NOT_FOUND, "'%s': no GPU '%s' in %s (%s)", id, gpu,
                            cat && cat->path ? cat->path : "the catalog", names);
    }
    snprintf(s.gpu, sizeof s.gpu, "%s", g->name);
    enum dp_status st = dp_setting_finish(&s, err);
    if (!st && gpm && gpm != dp_setting_gpus_per_machine(&s))
        st = dp_error_set(err, DP_ERR_INVALID,
                          "-M%dx%d: %d workers on %d machines put at most %d in one, not %d",
                          s.machines, gpm, s.workers, s.machines, dp_setting_gpus_per_machine(&s),
                          gpm);
    if (st) {
        char pre[DP_ID_MAX + 4];
        snprintf(pre, sizeof pre, "'%s'", id);
        dp_error_prefix(err, pre);
        return st;
    }
    *out = s;
    return DP_OK;
}

int dp_setting_default_machines(enum dp_sync sync, int workers, int ps, enum dp_network net,
                                enum dp_placement placement) {
    if (dp_network_intra(net)) return 1;
    if (workers < 1) workers = 1;
    if (ps < 1) ps = 1;
    if (sync == DP_SYNC_ALLREDUCE) {
        int m = (workers + 7) / 8;
        return workers >= 2 && m < 2 ? 2 : m;
    }
    return placement == DP_PLACE_HETERO ? workers + ps : (workers > 1 ? workers : 2);
}

int dp_setting_cluster_machines(enum dp_sync sync, int workers, int ps, enum dp_network net,
                                enum dp_placement placement, int gpus_per_machine) {
    if (dp_network_intra(net)) return 1;
    int g = gpus_per_machine > 0 ? gpus_per_machine : DP_DEFAULT_GPUS_PER_MACHINE;
    if (workers < 1) workers = 1;
    int m = (workers + g - 1) / g;
    if (m < 2 && (workers >= 2 || sync == DP_SYNC_PS)) m = 2;
    if (sync == DP_SYNC_PS && placement == DP_PLACE_HETERO) m += ps > 0 ? ps : 1;
    return m;
}

int dp_setting_gpus_per_machine(const struct dp_setting *s) {
    int m = s->machines > 0 ? s->machines : 1;
    if (s->sync == DP_SYNC_PS && s->placement == DP_PLACE_HETERO && m >= 2)
        m -= s->ps < m - 1 ? s->ps : m - 1; /* the PS machines (sim_network's placement) */
    return (s->workers + m - 1) / m;
}

/* The issue 28/29 fields' ranges and rules (dp_setting_check's second half). */
static enum dp_status check_scale(const struct dp_setting *s, const char *id,
                                  struct dp_error *err) {
    if ((unsigned)s->precision >= DP_PREC_COUNT || (unsigned)s->tf32 > DP_TF32_ON ||
        (unsigned)s->loader > DP_LOADER_DALI || (unsigned)s->ar_algo > DP_AR_TREE ||
        (unsigned)s->shard > DP_SHARD_ZERO3 || (unsigned)s->recompute > DP_RECOMPUTE_FULL)
        return dp_error_set(err, DP_ERR_INVALID, "%s: a field out of its range", id);
    if (s->fw_version != 0 && s->fw_version != DP_FW_VERSION_NGC &&
        (s->fw_version < 100 || s->fw_version > 9999))
        return dp_error_set(err, DP_ERR_INVALID, "%s: --framework version %d is not MAJOR.MINOR",
                            id, s->fw_version);
    if (s->fw_version == DP_FW_VERSION_NGC && s->framework != DP_FW_PYTORCH)
        return dp_error_set(err, DP_ERR_INVALID, "%s: --framework ngc is a PyTorch container", id);
    if (s->accum < 0 || s->accum > 65536)
        return dp_error_set(err, DP_ERR_INVALID, "%s: --accum %d not in [1, 65536]", id, s->accum);
    if (s->cpu_cores < 0 || s->cpu_cores > 1024)
        return dp_error_set(err, DP_ERR_INVALID, "%s: --cpu-cores %d not in [1, 1024]", id,
                            s->cpu_cores);
    if (s->cpu_cores > 0 && s->loader != DP_LOADER_CPU)
        return dp_error_set(err, DP_ERR_INVALID,
                            "%s: --cpu-cores is for --loader cpu (the loader is %s)", id,
                            dp_loader_name(s->loader));
    static const char *const opt[] = {"--tp", "--pp", "--microbatches", "--ep"};
    const int val[] = {s->tp, s->pp, s->microbatches, s->ep};
    for (int i = 0; i < 4; i++)
        if (val[i] < 0 || val[i] > DP_MAX_WORKERS)
            return dp_error_set(err, DP_ERR_INVALID, "%s: %s %d not in [1, %d]", id, opt[i],
                                val[i], DP_MAX_WORKERS);
    int tp = dp_setting_tp(s), pp = dp_setting_pp(s);
    bool model_par = tp > 1 || pp > 1 || dp_setting_ep(s) > 1 || s->shard != DP_SHARD_NONE;
    if (model_par && s->sync != DP_SYNC_ALLREDUCE)
        return dp_error_set(err, DP_ERR_INVALID,
                            "%s: --tp, --pp, --ep and --shard need --sync allreduce (parameter "
                            "servers hold whole replicas)", id);
    if (s->ar_algo != DP_AR_AUTO && s->sync != DP_SYNC_ALLREDUCE)
        return dp_error_set(err, DP_ERR_INVALID, "%s: --allreduce %s needs --sync allreduce", id,
                            dp_allreduce_algo_name(s->ar_algo));
    if (s->workers % (tp * pp))
        return dp_error_set(err, DP_ERR_INVALID,
                            "%s: --tp %d x --pp %d = %d does not divide the %d workers", id, tp,
                            pp, tp * pp, s->workers);
    if (tp > dp_setting_gpus_per_machine(s))
        return dp_error_set(err, DP_ERR_INVALID,
                            "%s: --tp %d is larger than a machine (%d GPUs per machine): tensor "
                            "parallelism stays inside one", id, tp, dp_setting_gpus_per_machine(s));
    if (dp_setting_ep(s) > dp_setting_dp_size(s) || dp_setting_dp_size(s) % dp_setting_ep(s))
        return dp_error_set(err, DP_ERR_INVALID,
                            "%s: --ep %d does not divide the data-parallel size %d", id,
                            dp_setting_ep(s), dp_setting_dp_size(s));
    if (s->seq_parallel && tp < 2)
        return dp_error_set(err, DP_ERR_INVALID, "%s: --seq-parallel needs --tp 2 or more", id);
    if (dp_setting_microbatches(s) > 1 && pp < 2)
        return dp_error_set(err, DP_ERR_INVALID, "%s: --microbatches is for --pp 2 or more", id);
    return DP_OK;
}

enum dp_status dp_setting_check(const struct dp_setting *s, struct dp_error *err) {
    const char *id = s->id[0] ? s->id : "(setting)";
    if (!s->gpu[0]) return dp_error_set(err, DP_ERR_INVALID, "%s: no GPU named", id);
    if (s->sync != DP_SYNC_PS && s->sync != DP_SYNC_ALLREDUCE)
        return dp_error_set(err, DP_ERR_INVALID, "%s: unknown sync", id);
    if (s->framework != DP_FW_TENSORFLOW && s->framework != DP_FW_PYTORCH)
        return dp_error_set(err, DP_ERR_INVALID, "%s: unknown framework", id);
    if (s->sync == DP_SYNC_PS && (s->ps < 1 || s->ps > DP_MAX_PS))
        return dp_error_set(err, DP_ERR_INVALID, "%s: ps %d not in [1, %d]", id, s->ps,
                            DP_MAX_PS);
    if (s->sync == DP_SYNC_ALLREDUCE && s->ps != 0)
        return dp_error_set(err, DP_ERR_INVALID,
                            "%s: all-reduce has no parameter servers (ps %d given)", id, s->ps);
    if (s->sync == DP_SYNC_ALLREDUCE && s->placement != DP_PLACE_HOMO)
        return dp_error_set(err, DP_ERR_INVALID,
                            "%s: all-reduce has no PS to place apart (hetero is for PS)", id);
    if (s->workers < 1 || s->workers > DP_MAX_WORKERS)
        return dp_error_set(err, DP_ERR_INVALID, "%s: workers %d not in [1, %d]", id, s->workers,
                            DP_MAX_WORKERS);
    if (s->machines < 1 || s->machines > DP_MAX_MACHINES)
        return dp_error_set(err, DP_ERR_INVALID, "%s: machines %d not in [1, %d]", id,
                            s->machines, DP_MAX_MACHINES);
    if ((unsigned)s->network >= DP_NET_COUNT)
        return dp_error_set(err, DP_ERR_INVALID, "%s: unknown network", id);
    if (dp_network_intra(s->network) && s->machines != 1)
        return dp_error_set(err, DP_ERR_INVALID,
                            "%s: %s connects one machine, but machines = %d", id,
                            dp_network_name(s->network), s->machines);
    if (s->placement == DP_PLACE_HETERO) {
        if (dp_network_intra(s->network))
            return dp_error_set(err, DP_ERR_INVALID,
                                "%s: hetero placement needs a network between machines, not %s",
                                id, dp_network_name(s->network));
        if (s->machines < 2)
            return dp_error_set(err, DP_ERR_INVALID, "%s: hetero placement needs >= 2 machines",
                                id);
    }
    int per = dp_setting_gpus_per_machine(s);
    if (per > DP_MAX_GPUS_PER_MACHINE)
        return dp_error_set(err, DP_ERR_INVALID,
                            "%s: %d workers on %d machine(s) put %d GPUs in one machine; a "
                            "machine holds at most %d (a DGX-2 / HGX-2): use more machines "
                            "(--machines, over a network between machines) or fewer workers",
                            id, s->workers, s->machines, per, DP_MAX_GPUS_PER_MACHINE);
    return check_scale(s, id, err);
}

enum dp_status dp_setting_finish(struct dp_setting *s, struct dp_error *err) {
    if (s->sync == DP_SYNC_ALLREDUCE) {
        s->ps = 0;
        s->placement = DP_PLACE_HOMO;
    }
    int *counts[] = {&s->accum, &s->tp, &s->pp, &s->microbatches, &s->ep};
    for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++)
        if (*counts[i] == 0) *counts[i] = 1;
    if (s->machines <= 0)
        s->machines =
            dp_setting_default_machines(s->sync, s->workers, s->ps, s->network, s->placement);
    char id[DP_ID_MAX + 1];
    dp_setting_format_id(s, id, sizeof id);
    if (strlen(id) >= sizeof s->id)
        return dp_error_set(err, DP_ERR_INVALID,
                            "setting on GPU %s: its id %s is longer than %d characters (use a "
                            "shorter GPU name)", s->gpu, id, DP_ID_MAX - 1);
    memcpy(s->id, id, sizeof s->id);
    return dp_setting_check(s, err);
}

enum dp_status dp_setting_make(const char *gpu, int workers, int ps, enum dp_network net,
                               int machines, enum dp_placement placement,
                               enum dp_precision precision, struct dp_setting *out,
                               struct dp_error *err) {
    struct dp_setting s;
    memset(&s, 0, sizeof s);
    if (!gpu || strlen(gpu) >= sizeof s.gpu)
        return dp_error_set(err, DP_ERR_INVALID, "setting: GPU name missing or too long");
    strcpy(s.gpu, gpu);
    s.sync = DP_SYNC_PS;
    s.framework = DP_FW_TENSORFLOW;
    s.workers = workers;
    s.ps = ps;
    s.network = net;
    s.placement = placement;
    s.precision = precision;
    s.machines = machines;
    enum dp_status st = dp_setting_finish(&s, err);
    if (st) return st;
    *out = s;
    return DP_OK;
}

bool dp_setting_same_cluster(const struct dp_setting *x, const struct dp_setting *y) {
    return !strcmp(x->gpu, y->gpu) && x->sync == y->sync && x->ps == y->ps &&
           x->workers == y->workers && x->placement == y->placement &&
           x->network == y->network && x->machines == y->machines &&
           x->precision == y->precision && x->framework == y->framework &&
           x->tf32 == y->tf32 && x->fw_version == y->fw_version &&
           dp_setting_accum(x) == dp_setting_accum(y) && !strcasecmp(x->system, y->system) &&
           x->loader == y->loader && x->cpu_cores == y->cpu_cores && x->ar_algo == y->ar_algo &&
           x->shard == y->shard && dp_setting_tp(x) == dp_setting_tp(y) &&
           dp_setting_pp(x) == dp_setting_pp(y) &&
           dp_setting_microbatches(x) == dp_setting_microbatches(y) &&
           dp_setting_ep(x) == dp_setting_ep(y) && x->recompute == y->recompute &&
           x->seq_parallel == y->seq_parallel;
}

/* The TF32 rule (settings.h) for one kind of work: conv selects convolutions. `why` (may be
 * NULL) gets the reason. */
static bool tf32_rule(const struct dp_setting *s, enum dp_gpu_gen gen, bool conv,
                      const char **why) {
    const char *w;
    bool on;
    int v = s->fw_version;
    if (gen < DP_GEN_AMPERE) {
        w = "the GPU has no TF32 (before Ampere)";
        on = false;
    } else if (s->precision == DP_PREC_TF32) {
        w = "--precision tf32";
        on = true;
    } else if (s->tf32 != DP_TF32_AUTO) {
        w = s->tf32 == DP_TF32_ON ? "--tf32 on" : "--tf32 off";
        on = s->tf32 == DP_TF32_ON;
    } else if (s->framework == DP_FW_TENSORFLOW) {
        w = !v ? "TensorFlow without a version: assumed a current release (TF32 on since 2.4)"
               : v >= 204 ? "TensorFlow >= 2.4 enables TF32" : "TensorFlow < 2.4 has no TF32";
        on = !v || v >= 204;
    } else if (v == DP_FW_VERSION_NGC || !v) {
        w = !v ? "PyTorch without a version: assumed an NGC container, which enables TF32 "
                 "matmuls (TORCH_ALLOW_TF32_CUBLAS_OVERRIDE=1) and convolutions"
               : "an NGC PyTorch container enables TF32 matmuls and convolutions";
        on = true;
    } else if (v < 107) {
        w = "PyTorch < 1.7 has no TF32";
        on = false;
    } else if (v < 112) {
        w = "PyTorch 1.7 - 1.11 enables TF32 for matmuls and convolutions";
        on = true;
    } else {
        w = "PyTorch >= 1.12 enables TF32 for convolutions only (allow_tf32 for matmuls is "
            "off)";
        on = conv;
    }
    if (why) *why = w;
    return on;
}

bool dp_setting_tf32_matmul(const struct dp_setting *s, enum dp_gpu_gen gen) {
    return tf32_rule(s, gen, false, NULL);
}

bool dp_setting_tf32_conv(const struct dp_setting *s, enum dp_gpu_gen gen) {
    return tf32_rule(s, gen, true, NULL);
}

void dp_setting_describe_tf32(const struct dp_setting *s, enum dp_gpu_gen gen, char *buf,
                              size_t n) {
    const char *why;
    bool mm = tf32_rule(s, gen, false, &why), cv = tf32_rule(s, gen, true, NULL);
    const char *what = mm && cv ? "fp32 matmuls and convolutions on TF32 tensor cores"
                       : cv     ? "fp32 convolutions on TF32 tensor cores, matmuls in fp32"
                                : "no TF32: fp32 work in fp32";
    snprintf(buf, n, "%s (%s)", what, why);
}

void dp_settings_free(struct dp_settings *s) {
    if (!s) return;
    free(s->settings);
    free(s->path);
    free(s);
}

const struct dp_setting *dp_settings_find(const struct dp_settings *s, const char *id) {
    if (!s || !id) return NULL;
    for (int i = 0; i < s->n_settings; i++)
        if (!strcmp(s->settings[i].id, id)) return &s->settings[i];
    for (int i = 0; i < s->n_settings; i++)
        if (!strcasecmp(s->settings[i].id, id)) return &s->settings[i];
    return NULL;
}

static bool file_exists(const char *path) {
    struct stat st;
    return path && *path && stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* Network class: 0 inside a machine, 1 Ethernet up to 10 Gb/s, 2 faster fabrics. */
static int net_class(enum dp_network n) {
    if (dp_network_intra(n)) return 0;
    return dp_network_bandwidth_gbps(n) <= 1.25 ? 1 : 2;
}

/* A GPU's family: its name up to the first '-', without a leading "RTX" (the V100s). */
static size_t gpu_family(const char *name, const char **start) {
    if (!strncmp(name, "RTX", 3) && isdigit((unsigned char)name[3])) name += 3;
    *start = name;
    return strcspn(name, "-");
}

/* Distance between settings: a weighted sum, GPU dominating, then sync and interconnect. */
static double setting_distance(const struct dp_setting *a, const struct dp_setting *b) {
    const char *fa, *fb;
    size_t la = gpu_family(a->gpu, &fa), lb = gpu_family(b->gpu, &fb);
    double d = 0;
    if (strcasecmp(a->gpu, b->gpu)) d += la != lb || strncasecmp(fa, fb, la) ? 1000 : 500;
    if (a->sync != b->sync) d += 200;
    if (net_class(a->network) != net_class(b->network)) d += 100;
    if (a->network != b->network)
        d += 20 * fabs(log2(dp_network_bandwidth_gbps(a->network) /
                            dp_network_bandwidth_gbps(b->network)));
    d += 10 * fabs(log2((double)a->workers / b->workers));
    if (a->ps > 0 && b->ps > 0) d += 8 * fabs(log2((double)a->ps / b->ps));
    if (a->placement != b->placement) d += 5;
    if (a->precision != b->precision) d += 3;
    if (a->framework != b->framework) d += 2;
    return d;
}

const struct dp_setting *dp_settings_nearest(const struct dp_settings *list,
                                             const struct dp_setting *s, bool having_inspector) {
    if (!list || !s) return NULL;
    const struct dp_setting *best = NULL;
    double best_d = INFINITY;
    for (int i = 0; i < list->n_settings; i++) {
        const struct dp_setting *c = &list->settings[i];
        if (having_inspector && !file_exists(c->inspector)) continue;
        double d = setting_distance(s, c);
        if (d < best_d) {
            best_d = d;
            best = c;
        }
    }
    return best;
}

/* --- the inspector search path (settings.h) --- */

bool dp_user_inspector_dir(char *buf, size_t n) {
    const char *env = getenv("DRIPLE_INSPECTORS"), *xdg = getenv("XDG_DATA_HOME"),
               *home = getenv("HOME");
    int len = -1;
    if (!n) return false;
    if (env && *env) len = snprintf(buf, n, "%s", env);
    /* XDG: a relative XDG_DATA_HOME is invalid and is ignored */
    else if (xdg && xdg[0] == '/') len = snprintf(buf, n, "%s/driple/inspectors", xdg);
    else if (home && *home) len = snprintf(buf, n, "%s/.local/share/driple/inspectors", home);
    if (len < 0 || (size_t)len >= n) {
        buf[0] = '\0';
        return false;
    }
    return true;
}

void dp_setting_file_name(const struct dp_setting *s, char *buf, size_t n) {
    char short_gpu[DP_NAME_MAX], id[DP_NAME_MAX];
    if (!n) return;
    dp_gpu_short_name(s->gpu, short_gpu, sizeof short_gpu);
    dp_setting_format_id(s, id, sizeof id);
    /* the formatted id starts with the short name: put the full one in its place */
    snprintf(buf, n, "%s%s.json", s->gpu, id + strlen(short_gpu));
    for (char *c = buf; *c; c++)
        if (!isalnum((unsigned char)*c) && !strchr("._+-", *c)) *c = '_';
    if (buf[0] == '.') buf[0] = '_';
}

bool dp_user_inspector_path(const struct dp_setting *s, char *buf, size_t n) {
    char dir[1024], name[2 * DP_NAME_MAX + 8];
    if (!dp_user_inspector_dir(dir, sizeof dir)) {
        if (n) buf[0] = '\0';
        return false;
    }
    dp_setting_file_name(s, name, sizeof name);
    int len = snprintf(buf, n, "%s/%s", dir, name);
    if (len < 0 || (size_t)len >= n) {
        if (n) buf[0] = '\0';
        return false;
    }
    return true;
}

bool dp_inspector_save_path(const struct dp_settings *list, const struct dp_setting *s, char *buf,
                            size_t n) {
    for (int i = 0; list && i < list->n_settings; i++) {
        const struct dp_setting *e = &list->settings[i];
        if (!dp_setting_same_cluster(e, s) || !e->inspector[0] || access(e->inspector, F_OK) == 0)
            continue;
        if ((size_t)snprintf(buf, n, "%s", e->inspector) < n) return true;
    }
    return dp_user_inspector_path(s, buf, n);
}
