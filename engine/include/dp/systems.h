/* systems.h: the systems catalog ("driple-systems/1", assets/systems.json): machines as sold
 * (NVIDIA DGX-1, DGX-2, DGX A100, DGX H100), each with its GPU, GPUs per machine, the fabric
 * inside the machine, the NICs between machines and the host CPU cores, every figure with its
 * source; unknown = 0 / NaN, never guessed. A setting names one in `system` (settings.h). */
#ifndef DP_SYSTEMS_H
#define DP_SYSTEMS_H

#include <stdbool.h>
#include <stddef.h>

#include "dp/settings.h"
#include "dp/status.h"

#define DP_SYSTEM_MAX_ALIASES 8

/* How the GPUs of one machine are connected. */
enum dp_fabric { DP_FABRIC_PCIE, DP_FABRIC_NVLINK_MESH, DP_FABRIC_NVSWITCH };

struct dp_system {
    char   name[DP_NAME_MAX];   /* "DGXA100": letters, digits, '.', '_' (it goes into ids) */
    int    n_aliases;
    char   aliases[DP_SYSTEM_MAX_ALIASES][DP_NAME_MAX]; /* "DGX-A100", "DGX A100" */
    char   gpu[DP_NAME_MAX];    /* a GPU-catalog name */
    int    gpus_per_machine;    /* >= 1 */
    enum dp_fabric fabric;
    double fabric_gbps;         /* per-GPU bandwidth inside the machine, both directions,
                                   GB/s; NaN: not read */
    enum dp_network nic;        /* the compute network between machines */
    int    nics;                /* compute NICs per machine (storage NICs not counted) */
    int    cpu_cores;           /* host CPU cores per machine; 0: not read */
    char   source[1024];        /* where the figures were read (URLs) */
    char   notes[512];
};

struct dp_systems {
    int               n_systems;
    struct dp_system *systems;
    char             *path; /* the file it came from, for messages */
};

/* Reads a driple-systems/1 file ({format, systems: [{name, aliases, gpu, gpus_per_machine,
 * fabric: "pcie" | "nvlink-mesh" | "nvswitch", fabric_gbps, nic: a network name, nics,
 * cpu_cores, source, notes}]}). When cat is non-NULL every gpu must be in it (dp_gpu_find).
 * Names and aliases must be unique ignoring case. New catalog owned by the caller
 * (dp_systems_free); on failure "<path>:<json path>: <what>" and *out untouched. */
enum dp_status dp_systems_load(const char *path, const struct dp_gpu_catalog *cat,
                               struct dp_systems **out, struct dp_error *err);
/* dp_systems_load of path, or of the shipped assets/systems.json (dp_shipped_path) when NULL. */
enum dp_status dp_systems_load_default(const char *path, const struct dp_gpu_catalog *cat,
                                       struct dp_systems **out, struct dp_error *err);
void dp_systems_free(struct dp_systems *s); /* NULL-safe */
/* The system named name or one of its aliases, ignoring case; NULL when none. */
const struct dp_system *dp_system_find(const struct dp_systems *s, const char *name);
/* dp_system_find with the refusal a user sees: DP_ERR_NOT_FOUND "<what> <name>: no such
 * system in <file>; did you mean X?" (else the names). */
enum dp_status dp_system_lookup(const struct dp_systems *s, const char *name, const char *what,
                                const struct dp_system **out, struct dp_error *err);
const char *dp_fabric_name(enum dp_fabric f); /* "pcie" | "nvlink-mesh" | "nvswitch" */

/* The checks that need the GPU (and the system: with systems NULL the system is not checked,
 * as a settings file read without the systems catalog): s->gpu is g; the system exists and
 * holds g; no more workers per
 * machine than the system has; NVLink only on a GPU that has it; precision tf32 / bf16 and
 * --tf32 on need Ampere or later; fp8 needs fp8 tensor cores (Ada, Hopper, Blackwell); tp
 * within one machine of the system. DP_ERR_INVALID with one line naming the option and the
 * rule ("--precision fp8: V100-SXM2-16GB (Volta) has no fp8 tensor cores (Ada, Hopper and
 * Blackwell do)"). Call after dp_setting_check. */
enum dp_status dp_setting_check_gpu(const struct dp_setting *s, const struct dp_gpu *g,
                                    const struct dp_systems *systems, struct dp_error *err);

#endif
