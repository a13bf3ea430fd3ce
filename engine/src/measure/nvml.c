/* nvml.c: GPU samples through NVML, loaded at run time with dlopen so that driple builds and runs
 * on machines without an NVIDIA driver. Only the few NVML types used are declared here (their
 * layout is NVML's stable C ABI); no NVIDIA header is needed. */
#include "dp/record.h"

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

/* NVML's C ABI, as in nvml.h. */
typedef int nvml_return;      /* nvmlReturn_t; NVML_SUCCESS = 0 */
typedef void *nvml_device;    /* nvmlDevice_t, an opaque pointer */
struct nvml_utilization {     /* nvmlUtilization_t */
    unsigned int gpu, memory;
};
struct nvml_memory {          /* nvmlMemory_t (v1) */
    unsigned long long total, free, used;
};
#define NVML_SUCCESS 0
#define NVML_DEVICE_NAME_BUFFER_SIZE 96

struct dp_nvml {
    void        *lib;
    nvml_device  dev;
    unsigned     count;
    char         name[NVML_DEVICE_NAME_BUFFER_SIZE];
    nvml_return (*init)(void);
    nvml_return (*shutdown)(void);
    const char *(*error_string)(nvml_return);
    nvml_return (*handle_by_index)(unsigned int, nvml_device *);
    nvml_return (*utilization)(nvml_device, struct nvml_utilization *);
    nvml_return (*memory)(nvml_device, struct nvml_memory *);
    nvml_return (*count_fn)(unsigned int *);                   /* optional */
    nvml_return (*name_fn)(nvml_device, char *, unsigned int); /* optional */
    bool         initialised;
};

/* dlsym into a function pointer without the object-to-function cast ISO C frowns on. */
static bool resolve(void *lib, const char *sym, void *fn_ptr, size_t size) {
    void *p = dlsym(lib, sym);
    if (!p) return false;
    memcpy(fn_ptr, &p, size);
    return true;
}
#define RESOLVE(n, sym, field) resolve((n)->lib, sym, &(n)->field, sizeof (n)->field)

static const char *nvml_message(const struct dp_nvml *n, nvml_return r) {
    const char *s = n->error_string ? n->error_string(r) : NULL;
    return s ? s : "unknown NVML error";
}

void dp_nvml_close(struct dp_nvml *n) {
    if (!n) return;
    if (n->initialised && n->shutdown) n->shutdown();
    if (n->lib) dlclose(n->lib);
    free(n);
}

enum dp_status dp_nvml_open(const char *lib, unsigned index, struct dp_nvml **out,
                            struct dp_error *err) {
    enum dp_status st = DP_OK;
    if (!lib) lib = getenv(DP_NVML_ENV);
    if (!lib || !*lib) lib = DP_NVML_DEFAULT_LIB;
    struct dp_nvml *n = calloc(1, sizeof *n);
    if (!n) return dp_error_set(err, DP_ERR_NOMEM, "nvml: out of memory");
    n->lib = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
    if (!n->lib) {
        const char *why = dlerror();
        /* dlerror() repeats the name ("libx.so: cannot open ..."): keep only the reason. */
        size_t nl = strlen(lib);
        if (why && !strncmp(why, lib, nl) && !strncmp(why + nl, ": ", 2)) why += nl + 2;
        st = dp_error_set(err, DP_ERR_NOT_FOUND,
                          "no NVIDIA GPU/driver found (%s not loadable: %s)", lib,
                          why ? why : "unknown reason");
        goto fail;
    }
    static const char *const needed[] = {"nvmlInit_v2", "nvmlShutdown", "nvmlErrorString",
                                         "nvmlDeviceGetHandleByIndex_v2",
                                         "nvmlDeviceGetUtilizationRates",
                                         "nvmlDeviceGetMemoryInfo"};
    bool ok[6] = {
        RESOLVE(n, needed[0], init),           RESOLVE(n, needed[1], shutdown),
        RESOLVE(n, needed[2], error_string),   RESOLVE(n, needed[3], handle_by_index),
        RESOLVE(n, needed[4], utilization),    RESOLVE(n, needed[5], memory),
    };
    for (int i = 0; i < 6; i++)
        if (!ok[i]) {
            st = dp_error_set(err, DP_ERR_UNSUPPORTED,
                              "%s: symbol %s missing (NVML too old or not NVML)", lib, needed[i]);
            goto fail;
        }
    RESOLVE(n, "nvmlDeviceGetCount_v2", count_fn);
    RESOLVE(n, "nvmlDeviceGetName", name_fn);

    nvml_return r = n->init();
    if (r != NVML_SUCCESS) {
        st = dp_error_set(err, DP_ERR_IO, "%s: nvmlInit failed: %s (is the NVIDIA driver loaded?)",
                          lib, nvml_message(n, r));
        goto fail;
    }
    n->initialised = true;
    unsigned int count = 0;
    if (n->count_fn && n->count_fn(&count) == NVML_SUCCESS) n->count = count;
    if (n->count && index >= n->count) {
        st = dp_error_set(err, DP_ERR_NOT_FOUND, "--gpu %u: no such GPU (this machine has %u, "
                          "numbered from 0)", index, n->count);
        goto fail;
    }
    r = n->handle_by_index(index, &n->dev);
    if (r != NVML_SUCCESS) {
        st = dp_error_set(err, DP_ERR_NOT_FOUND, "--gpu %u: %s", index, nvml_message(n, r));
        goto fail;
    }
    if (n->name_fn && n->name_fn(n->dev, n->name, sizeof n->name) != NVML_SUCCESS)
        n->name[0] = '\0';
    n->name[sizeof n->name - 1] = '\0';
    *out = n;
    return DP_OK;
fail:
    dp_nvml_close(n);
    return st;
}

enum dp_status dp_nvml_sample(struct dp_nvml *n, struct dp_gpu_sample *out, struct dp_error *err) {
    struct nvml_utilization u = {0, 0};
    struct nvml_memory m = {0, 0, 0};
    nvml_return r = n->utilization(n->dev, &u);
    if (r != NVML_SUCCESS)
        return dp_error_set(err, DP_ERR_IO, "nvml: utilization query failed: %s",
                            nvml_message(n, r));
    r = n->memory(n->dev, &m);
    if (r != NVML_SUCCESS)
        return dp_error_set(err, DP_ERR_IO, "nvml: memory query failed: %s", nvml_message(n, r));
    out->util_gpu = u.gpu;
    out->util_mem = u.memory;
    out->mem_used_bytes = m.used;
    return DP_OK;
}

const char *dp_nvml_device_name(const struct dp_nvml *n) { return n->name; }

unsigned dp_nvml_device_count(const struct dp_nvml *n) { return n->count; }
