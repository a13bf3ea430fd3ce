/* settings.c: the interconnect table, setting ids, checks, on-the-fly settings, and the lookup
 * helpers over GPU catalogs and setting lists (the JSON reading and writing is settings_json.c).
 * Network figures are nominal line rates and typical latencies, not measurements. */
#include "dp/settings.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

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

const char *dp_precision_name(enum dp_precision p) {
    return p == DP_PREC_MIXED ? "mixed" : "fp32";
}

bool dp_precision_parse(const char *s, enum dp_precision *out) {
    if (!s) return false;
    if (!strcasecmp(s, "fp32") || !strcasecmp(s, "float32")) *out = DP_PREC_FP32;
    else if (!strcasecmp(s, "mixed") || !strcasecmp(s, "fp16") || !strcasecmp(s, "amp"))
        *out = DP_PREC_MIXED;
    else return false;
    return true;
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

/* Case-insensitive substring search. */
static const char *strcasestr_(const char *hay, const char *needle) {
    size_t n = strlen(needle);
    for (; *hay; hay++)
        if (!strncasecmp(hay, needle, n)) return hay;
    return NULL;
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
    const struct dp_gpu *g = find_named(c, name);
    if (g) return g;
    /* The one GPU whose name starts with `name`, else the one containing it. */
    for (int pass = 0; pass < 2; pass++) {
        const struct dp_gpu *hit = NULL;
        int n_hits = 0;
        for (int i = 0; i < c->n_gpus; i++) {
            const char *at = strcasestr_(c->gpus[i].name, name);
            if (at && (pass || at == c->gpus[i].name)) {
                hit = &c->gpus[i];
                n_hits++;
            }
        }
        if (n_hits) return n_hits == 1 ? hit : NULL;
    }
    return NULL;
}

/* --- settings --- */

void dp_setting_format_id(const struct dp_setting *s, char *buf, size_t n) {
    char gpu[DP_NAME_MAX], machines[16] = "";
    dp_gpu_short_name(s->gpu, gpu, sizeof gpu);
    if (s->machines !=
        dp_setting_default_machines(s->sync, s->workers, s->ps, s->network, s->placement))
        snprintf(machines, sizeof machines, "-M%d", s->machines);
    const char *fw = s->framework == DP_FW_PYTORCH ? "-pytorch" : "";
    const char *prec = s->precision == DP_PREC_MIXED ? "-mixed" : "";
    if (s->sync == DP_SYNC_ALLREDUCE)
        snprintf(buf, n, "%s-AR%d-%s%s%s%s", gpu, s->workers, dp_network_name(s->network),
                 machines, fw, prec);
    else
        snprintf(buf, n, "%s-P%dw%d%s-%s%s%s%s", gpu, s->ps, s->workers,
                 s->placement == DP_PLACE_HETERO ? "he" : "ho", dp_network_name(s->network),
                 machines, fw, prec);
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

enum dp_status dp_setting_parse_id(const char *id, const struct dp_gpu_catalog *cat,
                                   struct dp_setting *out, struct dp_error *err) {
    static const char form[] = "<GPU>-P<ps>w<workers><ho|he>-<network> or <GPU>-AR<workers>-"
                               "<network>, then [-M<machines>][-pytorch][-mixed]";
    struct dp_setting s;
    memset(&s, 0, sizeof s);
    const char *gpu_end = NULL, *rest = id ? id_marker(id, &gpu_end, &s) : NULL;
    if (!rest)
        return dp_error_set(err, DP_ERR_INVALID, "'%s' is not a setting id (%s)", id ? id : "",
                            form);
    char gpu[DP_NAME_MAX], net[DP_NAME_MAX];
    if ((size_t)(gpu_end - id) >= sizeof gpu || strlen(rest + 1) >= sizeof net)
        return dp_error_set(err, DP_ERR_INVALID, "'%s': too long for a setting id", id);
    memcpy(gpu, id, (size_t)(gpu_end - id));
    gpu[gpu_end - id] = '\0';
    snprintf(net, sizeof net, "%s", rest + 1);
    /* Suffixes, from the end: no network name ends in one of them. */
    for (char *dash; (dash = strrchr(net, '-'));) {
        const char *t = dash + 1, *d = t + 1;
        if (dp_precision_parse(t, &s.precision) || dp_framework_parse(t, &s.framework)) {
            *dash = '\0';
            continue;
        }
        int m = 0;
        if ((t[0] == 'M' || t[0] == 'm') && id_count(&d, &m) && !*d) {
            s.machines = m;
            *dash = '\0';
            continue;
        }
        break;
    }
    if (!dp_network_parse(net, &s.network))
        return dp_error_set(err, DP_ERR_INVALID,
                            "'%s': unknown network '%s' (PCIe NVLink 1GbE 10GbE 25GbE 40GbE "
                            "100GbE IB-EDR IB-HDR)", id, net);
    const struct dp_gpu *g = cat ? find_named(cat, gpu) : NULL;
    if (!g) {
        char names[1024] = "";
        if (cat) dp_gpu_catalog_names(cat, names, sizeof names);
        return dp_error_set(err, DP_ERR_NOT_FOUND, "'%s': no GPU '%s' in %s (%s)", id, gpu,
                            cat && cat->path ? cat->path : "the catalog", names);
    }
    snprintf(s.gpu, sizeof s.gpu, "%s", g->name);
    enum dp_status st = dp_setting_finish(&s, err);
    if (st) {
        char pre[DP_NAME_MAX + 4];
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

int dp_setting_gpus_per_machine(const struct dp_setting *s) {
    int m = s->machines > 0 ? s->machines : 1;
    if (s->sync == DP_SYNC_PS && s->placement == DP_PLACE_HETERO && m >= 2)
        m -= s->ps < m - 1 ? s->ps : m - 1; /* the PS machines (sim_network's placement) */
    return (s->workers + m - 1) / m;
}

enum dp_status dp_setting_check(const struct dp_setting *s, struct dp_error *err) {
    const char *id = s->id[0] ? s->id : "(setting)";
    if (!s->gpu[0]) return dp_error_set(err, DP_ERR_INVALID, "%s: no GPU named", id);
    if (s->sync != DP_SYNC_PS && s->sync != DP_SYNC_ALLREDUCE)
        return dp_error_set(err, DP_ERR_INVALID, "%s: unknown sync", id);
    if (s->framework != DP_FW_TENSORFLOW && s->framework != DP_FW_PYTORCH)
        return dp_error_set(err, DP_ERR_INVALID, "%s: unknown framework", id);
    if (s->sync == DP_SYNC_PS && (s->ps < 1 || s->ps > 64))
        return dp_error_set(err, DP_ERR_INVALID, "%s: ps %d not in [1, 64]", id, s->ps);
    if (s->sync == DP_SYNC_ALLREDUCE && s->ps != 0)
        return dp_error_set(err, DP_ERR_INVALID,
                            "%s: all-reduce has no parameter servers (ps %d given)", id, s->ps);
    if (s->sync == DP_SYNC_ALLREDUCE && s->placement != DP_PLACE_HOMO)
        return dp_error_set(err, DP_ERR_INVALID,
                            "%s: all-reduce has no PS to place apart (hetero is for PS)", id);
    if (s->workers < 1 || s->workers > 64)
        return dp_error_set(err, DP_ERR_INVALID, "%s: workers %d not in [1, 64]", id, s->workers);
    if (s->machines < 1 || s->machines > 128)
        return dp_error_set(err, DP_ERR_INVALID, "%s: machines %d not in [1, 128]", id,
                            s->machines);
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
    return DP_OK;
}

enum dp_status dp_setting_finish(struct dp_setting *s, struct dp_error *err) {
    if (s->sync == DP_SYNC_ALLREDUCE) {
        s->ps = 0;
        s->placement = DP_PLACE_HOMO;
    }
    if (s->machines <= 0)
        s->machines =
            dp_setting_default_machines(s->sync, s->workers, s->ps, s->network, s->placement);
    char id[DP_NAME_MAX + 1];
    dp_setting_format_id(s, id, sizeof id);
    if (strlen(id) >= sizeof s->id)
        return dp_error_set(err, DP_ERR_INVALID,
                            "setting on GPU %s: its id %s is longer than %d characters (use a "
                            "shorter GPU name)", s->gpu, id, DP_NAME_MAX - 1);
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
           x->precision == y->precision && x->framework == y->framework;
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
