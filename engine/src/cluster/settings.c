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

/* Case-insensitive substring search. */
static const char *strcasestr_(const char *hay, const char *needle) {
    size_t n = strlen(needle);
    for (; *hay; hay++)
        if (!strncasecmp(hay, needle, n)) return hay;
    return NULL;
}

const struct dp_gpu *dp_gpu_find(const struct dp_gpu_catalog *c, const char *name) {
    if (!c || !name || !*name) return NULL;
    size_t n = strlen(name);
    for (int i = 0; i < c->n_gpus; i++)
        if (!strcmp(c->gpus[i].name, name)) return &c->gpus[i];
    for (int i = 0; i < c->n_gpus; i++)
        if (!strcasecmp(c->gpus[i].name, name)) return &c->gpus[i];
    for (int i = 0; i < c->n_gpus; i++)
        if (!strncasecmp(c->gpus[i].name, name, n)) return &c->gpus[i];
    for (int i = 0; i < c->n_gpus; i++)
        if (strcasestr_(c->gpus[i].name, name)) return &c->gpus[i];
    return NULL;
}

void dp_gpu_short_name(const char *name, char *buf, size_t n) {
    if (!n) return;
    if (!name) name = "";
    if (!strncmp(name, "RTX", 3) && isdigit((unsigned char)name[3])) name += 3;
    size_t len = strcspn(name, "-");
    if (len >= n) len = n - 1;
    memcpy(buf, name, len);
    buf[len] = '\0';
}

/* --- settings --- */

void dp_setting_format_id(const struct dp_setting *s, char *buf, size_t n) {
    char gpu[DP_NAME_MAX];
    dp_gpu_short_name(s->gpu, gpu, sizeof gpu);
    snprintf(buf, n, "%s-P%dw%d%s-%s%s", gpu, s->ps, s->workers,
             s->placement == DP_PLACE_HETERO ? "he" : "ho", dp_network_name(s->network),
             s->precision == DP_PREC_MIXED ? "-mixed" : "");
}

int dp_setting_default_machines(int workers, int ps, enum dp_network net,
                                enum dp_placement placement) {
    if (dp_network_intra(net)) return 1;
    if (workers < 1) workers = 1;
    if (ps < 1) ps = 1;
    return placement == DP_PLACE_HETERO ? workers + ps : (workers > 1 ? workers : 2);
}

enum dp_status dp_setting_check(const struct dp_setting *s, struct dp_error *err) {
    const char *id = s->id[0] ? s->id : "(setting)";
    if (!s->gpu[0]) return dp_error_set(err, DP_ERR_INVALID, "%s: no GPU named", id);
    if (s->ps < 1 || s->ps > 64)
        return dp_error_set(err, DP_ERR_INVALID, "%s: ps %d not in [1, 64]", id, s->ps);
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
    return DP_OK;
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
    s.workers = workers;
    s.ps = ps;
    s.network = net;
    s.placement = placement;
    s.precision = precision;
    s.machines = machines > 0 ? machines : dp_setting_default_machines(workers, ps, net, placement);
    dp_setting_format_id(&s, s.id, sizeof s.id);
    enum dp_status st = dp_setting_check(&s, err);
    if (st) return st;
    *out = s;
    return DP_OK;
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

/* Distance between settings: a weighted sum, GPU dominating, then interconnect. */
static double setting_distance(const struct dp_setting *a, const struct dp_setting *b) {
    char ga[DP_NAME_MAX], gb[DP_NAME_MAX];
    dp_gpu_short_name(a->gpu, ga, sizeof ga);
    dp_gpu_short_name(b->gpu, gb, sizeof gb);
    double d = 0;
    if (strcasecmp(a->gpu, b->gpu)) d += strcasecmp(ga, gb) ? 1000 : 500;
    if (net_class(a->network) != net_class(b->network)) d += 100;
    if (a->network != b->network)
        d += 20 * fabs(log2(dp_network_bandwidth_gbps(a->network) /
                            dp_network_bandwidth_gbps(b->network)));
    d += 10 * fabs(log2((double)a->workers / b->workers));
    d += 8 * fabs(log2((double)a->ps / b->ps));
    if (a->placement != b->placement) d += 5;
    if (a->precision != b->precision) d += 3;
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

/* The same cluster: what a setting list's entry and an explorer what-if setting share. */
static bool same_cluster(const struct dp_setting *x, const struct dp_setting *y) {
    return !strcmp(x->gpu, y->gpu) && x->ps == y->ps && x->workers == y->workers &&
           x->placement == y->placement && x->network == y->network &&
           x->precision == y->precision;
}

bool dp_inspector_save_path(const struct dp_settings *list, const struct dp_setting *s, char *buf,
                            size_t n) {
    for (int i = 0; list && i < list->n_settings; i++) {
        const struct dp_setting *e = &list->settings[i];
        if (!same_cluster(e, s) || !e->inspector[0] || access(e->inspector, F_OK) == 0) continue;
        if ((size_t)snprintf(buf, n, "%s", e->inspector) < n) return true;
    }
    return dp_user_inspector_path(s, buf, n);
}
