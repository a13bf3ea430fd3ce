/* systems.c: the systems catalog ("driple-systems/1", systems.h) and the setting checks that
 * need the GPU and the system. */
#include "dp/systems.h"

#include <ctype.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cluster/near.h"
#include "core/json_util.h"
#include "dp/shipped.h"

static const struct dp_read_spec systems_spec = {"systems catalog", (size_t)16 << 20, true, NULL,
                                                 NULL};
static const char *const fabric_names[] = {"pcie", "nvlink-mesh", "nvswitch"};

const char *dp_fabric_name(enum dp_fabric f) {
    return (unsigned)f <= DP_FABRIC_NVSWITCH ? fabric_names[f] : "?";
}

void dp_systems_free(struct dp_systems *s) {
    if (!s) return;
    free(s->systems);
    free(s->path);
    free(s);
}

const struct dp_system *dp_system_find(const struct dp_systems *s, const char *name) {
    for (int i = 0; s && name && i < s->n_systems; i++) {
        const struct dp_system *x = &s->systems[i];
        if (!strcasecmp(x->name, name)) return x;
        for (int a = 0; a < x->n_aliases; a++)
            if (!strcasecmp(x->aliases[a], name)) return x;
    }
    return NULL;
}

enum dp_status dp_system_lookup(const struct dp_systems *s, const char *name, const char *what,
                                const struct dp_system **out, struct dp_error *err) {
    const struct dp_system *x = dp_system_find(s, name);
    if (x) {
        *out = x;
        return DP_OK;
    }
    char near[512] = "", all[512] = "";
    for (int i = 0; s && i < s->n_systems; i++) {
        bool hit = name && *name && dp_near(name, s->systems[i].name);
        for (int a = 0; !hit && name && *name && a < s->systems[i].n_aliases; a++)
            hit = dp_near(name, s->systems[i].aliases[a]);
        if (hit) dp_near_append(near, sizeof near, s->systems[i].name);
        dp_near_append(all, sizeof all, s->systems[i].name);
    }
    const char *file = s && s->path ? s->path : "the systems catalog";
    if (near[0])
        return dp_error_set(err, DP_ERR_NOT_FOUND, "%s %s: no such system in %s; did you mean "
                            "%s?", what, name ? name : "", file, near);
    return dp_error_set(err, DP_ERR_NOT_FOUND, "%s %s: no such system in %s (%s)", what,
                        name ? name : "", file, all);
}

/* A name that can go into setting ids: letters, digits, '.', '_'. */
static bool id_safe(const char *s) {
    for (; *s; s++)
        if (!isalnum((unsigned char)*s) && *s != '.' && *s != '_') return false;
    return true;
}

static enum dp_status parse_system(const cJSON *o, const char *path, const char *jp,
                                   const struct dp_gpu_catalog *cat, struct dp_system *x,
                                   struct dp_error *err) {
    enum dp_status st;
    if (!cJSON_IsObject(o))
        return dp_error_set(err, DP_ERR_INVALID, "%s:%s: expected an object", path, jp);
    if ((st = dp_json_copy_string(o, "name", false, path, jp, x->name, sizeof x->name, err)) ||
        (st = dp_json_copy_string(o, "gpu", false, path, jp, x->gpu, sizeof x->gpu, err)) ||
        (st = dp_json_copy_string(o, "source", true, path, jp, x->source, sizeof x->source,
                                  err)) ||
        (st = dp_json_copy_string(o, "notes", true, path, jp, x->notes, sizeof x->notes, err)))
        return st;
    if (!x->name[0] || !id_safe(x->name))
        return dp_error_set(err, DP_ERR_INVALID,
                            "%s:%s.name: \"%s\" must be letters, digits, '.' or '_' (it goes "
                            "into setting ids; put spellings with '-' in aliases)", path, jp,
                            x->name);
    if (cat) {
        const struct dp_gpu *g = dp_gpu_find(cat, x->gpu);
        if (!g)
            return dp_error_set(err, DP_ERR_NOT_FOUND, "%s:%s.gpu: \"%s\" is not in %s", path,
                                jp, x->gpu, cat->path ? cat->path : "the GPU catalog");
        snprintf(x->gpu, sizeof x->gpu, "%s", g->name);
    }
    int64_t gpm = 0, nics = 0, cores = 0;
    double fab = NAN;
    if ((st = dp_json_get_int(o, "gpus_per_machine", false, 1, DP_MAX_GPUS_PER_MACHINE, path, jp,
                              &gpm, err)) ||
        (st = dp_json_get_int(o, "nics", true, 0, 64, path, jp, &nics, err)) ||
        (st = dp_json_get_int(o, "cpu_cores", true, 0, 4096, path, jp, &cores, err)) ||
        (st = dp_json_get_number(o, "fabric_gbps", true, path, jp, &fab, err)))
        return st;
    x->gpus_per_machine = (int)gpm;
    x->nics = (int)nics;
    x->cpu_cores = (int)cores;
    x->fabric_gbps = fab;
    const char *str = NULL;
    if ((st = dp_json_get_string(o, "fabric", false, path, jp, &str, err))) return st;
    int f = -1;
    for (int i = 0; i <= DP_FABRIC_NVSWITCH; i++)
        if (!strcasecmp(str, fabric_names[i])) f = i;
    if (f < 0)
        return dp_error_set(err, DP_ERR_INVALID,
                            "%s:%s.fabric: \"%s\" is not pcie, nvlink-mesh or nvswitch", path, jp,
                            str);
    x->fabric = (enum dp_fabric)f;
    if ((st = dp_json_get_string(o, "nic", false, path, jp, &str, err))) return st;
    char what[600];
    snprintf(what, sizeof what, "%s:%s.nic", path, jp);
    if ((st = dp_network_lookup(str, what, &x->nic, err))) return st;
    const cJSON *al = NULL, *a;
    if ((st = dp_json_get_array(o, "aliases", true, path, jp, &al, err))) return st;
    cJSON_ArrayForEach(a, al) {
        if (x->n_aliases == DP_SYSTEM_MAX_ALIASES || !cJSON_IsString(a) || !a->valuestring[0] ||
            strlen(a->valuestring) >= sizeof x->aliases[0])
            return dp_error_set(err, DP_ERR_INVALID,
                                "%s:%s.aliases[%d]: expected at most %d names of 1 to %d "
                                "characters", path, jp, x->n_aliases, DP_SYSTEM_MAX_ALIASES,
                                DP_NAME_MAX - 1);
        strcpy(x->aliases[x->n_aliases++], a->valuestring);
    }
    return DP_OK;
}

enum dp_status dp_systems_load(const char *path, const struct dp_gpu_catalog *cat,
                               struct dp_systems **out, struct dp_error *err) {
    cJSON *root = NULL;
    struct dp_systems *s = NULL;
    enum dp_status st = dp_json_load(path, &systems_spec, &root, err);
    if (st) return st;
    path = dp_file_name(path);
    const cJSON *arr = NULL;
    if ((st = dp_json_check_format(root, "driple-systems/1", path, err)) ||
        (st = dp_json_get_array(root, "systems", false, path, "$", &arr, err)))
        goto fail;
    int n = cJSON_GetArraySize(arr);
    if (!(s = calloc(1, sizeof *s)) || !(s->systems = calloc((size_t)n + 1, sizeof *s->systems)) ||
        !(s->path = strdup(path))) {
        st = dp_error_set(err, DP_ERR_NOMEM, "%s: out of memory", path);
        goto fail;
    }
    const cJSON *o;
    cJSON_ArrayForEach(o, arr) {
        char jp[48];
        snprintf(jp, sizeof jp, "$.systems[%d]", s->n_systems);
        struct dp_system *x = &s->systems[s->n_systems];
        if ((st = parse_system(o, path, jp, cat, x, err))) goto fail;
        for (int a = -1; a < x->n_aliases; a++) {
            const char *nm = a < 0 ? x->name : x->aliases[a];
            if (dp_system_find(s, nm)) {
                st = dp_error_set(err, DP_ERR_INVALID, "%s:%s: \"%s\" already names %s", path, jp,
                                  nm, dp_system_find(s, nm)->name);
                goto fail;
            }
        }
        s->n_systems++;
    }
    cJSON_Delete(root);
    *out = s;
    return DP_OK;
fail:
    cJSON_Delete(root);
    dp_systems_free(s);
    return st;
}

enum dp_status dp_systems_load_default(const char *path, const struct dp_gpu_catalog *cat,
                                       struct dp_systems **out, struct dp_error *err) {
    if (path) return dp_systems_load(path, cat, out, err);
    char p[PATH_MAX + 64];
    enum dp_status st = dp_shipped_path("assets/systems.json", "--systems", p, sizeof p, err);
    return st ? st : dp_systems_load(p, cat, out, err);
}

/* The precision rules of dp_setting_check_gpu. */
static enum dp_status check_precision(const struct dp_setting *s, const struct dp_gpu *g,
                                      struct dp_error *err) {
    const char *gen = dp_gpu_gen_name(dp_gpu_generation(g));
    if (s->precision == DP_PREC_FP8 && !dp_gpu_has_fp8(g))
        return dp_error_set(err, DP_ERR_INVALID,
                            "--precision fp8: %s (%s) has no fp8 tensor cores (Ada, Hopper and "
                            "Blackwell do)", g->name, gen);
    if ((s->precision == DP_PREC_TF32 || s->precision == DP_PREC_BF16) && !dp_gpu_has_tf32(g))
        return dp_error_set(err, DP_ERR_INVALID,
                            "--precision %s: %s (%s) has no %s tensor cores (Ampere and later "
                            "do)", dp_precision_name(s->precision), g->name, gen,
                            s->precision == DP_PREC_TF32 ? "TF32" : "bf16");
    if (s->tf32 == DP_TF32_ON && !dp_gpu_has_tf32(g))
        return dp_error_set(err, DP_ERR_INVALID,
                            "--tf32 on: %s (%s) has no TF32 tensor cores (Ampere and later do)",
                            g->name, gen);
    return DP_OK;
}

enum dp_status dp_setting_check_gpu(const struct dp_setting *s, const struct dp_gpu *g,
                                    const struct dp_systems *systems, struct dp_error *err) {
    if (!g || strcmp(g->name, s->gpu))
        return dp_error_set(err, DP_ERR_INVALID, "--gpu %s: not the setting's GPU", g ? g->name : "?");
    enum dp_status st = check_precision(s, g, err);
    if (st) return st;
    if (s->network == DP_NET_NVLINK && !dp_gpu_has_nvlink(g))
        return dp_error_set(err, DP_ERR_INVALID,
                            "--network NVLink: %s has no NVLink (the catalog gives it none); use "
                            "PCIe inside a machine", g->name);
    if (!s->system[0] || !systems) return DP_OK;
    const struct dp_system *x = NULL;
    if ((st = dp_system_lookup(systems, s->system, "--system", &x, err))) return st;
    if (strcmp(x->gpu, g->name))
        return dp_error_set(err, DP_ERR_INVALID, "--system %s holds %s GPUs, not %s", x->name,
                            x->gpu, g->name);
    int per = dp_setting_gpus_per_machine(s);
    if (per > x->gpus_per_machine)
        return dp_error_set(err, DP_ERR_INVALID,
                            "--gpus-per-machine %d: a %s has %d GPUs per machine (%d workers on "
                            "%d machines)", per, x->name, x->gpus_per_machine, s->workers,
                            s->machines);
    if (dp_setting_tp(s) > x->gpus_per_machine)
        return dp_error_set(err, DP_ERR_INVALID, "--tp %d: larger than a %s (%d GPUs)",
                            dp_setting_tp(s), x->name, x->gpus_per_machine);
    return DP_OK;
}
