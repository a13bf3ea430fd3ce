/* fake_nvml.c: a stand-in for libnvidia-ml.so.1 for the record tests, built into
 * build/tests/libfake_nvml.so and loaded through DRIPLE_NVML_LIB by the same dlopen code as the
 * real library. Scripted by environment variables:
 *   FAKE_NVML_SCRIPT  "gpu,mem,MiB;gpu,mem,MiB;..." values returned by successive samples (one
 *                     utilisation + one memory query each), cycling; default "50,20,1024".
 *                     Note: driple takes one probe sample before it starts the command.
 *   FAKE_NVML_COUNT   number of GPUs (default 2); FAKE_NVML_NAME the GPU's name.
 *   FAKE_NVML_INIT_FAIL=1  nvmlInit_v2 fails (driver not loaded).
 *   FAKE_NVML_FAIL_AFTER=N the utilisation query fails (GPU lost) after N successful calls. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int nvml_return;
typedef void *nvml_device;
struct nvml_utilization { unsigned int gpu, memory; };
struct nvml_memory { unsigned long long total, free, used; };

enum { OK = 0, ERR_INVALID_ARGUMENT = 2, ERR_DRIVER_NOT_LOADED = 9, ERR_GPU_IS_LOST = 15,
       ERR_UNINITIALIZED = 1 };

nvml_return nvmlInit_v2(void);
nvml_return nvmlShutdown(void);
const char *nvmlErrorString(nvml_return r);
nvml_return nvmlDeviceGetCount_v2(unsigned int *n);
nvml_return nvmlDeviceGetHandleByIndex_v2(unsigned int i, nvml_device *d);
nvml_return nvmlDeviceGetName(nvml_device d, char *name, unsigned int len);
nvml_return nvmlDeviceGetUtilizationRates(nvml_device d, struct nvml_utilization *u);
nvml_return nvmlDeviceGetMemoryInfo(nvml_device d, struct nvml_memory *m);

#define MAX_STEPS 256
static unsigned steps_gpu[MAX_STEPS], steps_mem[MAX_STEPS];
static unsigned long long steps_mib[MAX_STEPS];
static int n_steps, cursor, util_calls, initialised;
static int devices[8];

static void load_script(void) {
    const char *s = getenv("FAKE_NVML_SCRIPT");
    if (!s || !*s) s = "50,20,1024";
    n_steps = 0;
    while (*s && n_steps < MAX_STEPS) {
        unsigned g, m;
        unsigned long long mib;
        int used = 0;
        if (sscanf(s, "%u,%u,%llu%n", &g, &m, &mib, &used) != 3) break;
        steps_gpu[n_steps] = g;
        steps_mem[n_steps] = m;
        steps_mib[n_steps] = mib;
        n_steps++;
        s += used;
        while (*s == ';' || *s == ' ') s++;
    }
    if (n_steps == 0) {
        steps_gpu[0] = 50;
        steps_mem[0] = 20;
        steps_mib[0] = 1024;
        n_steps = 1;
    }
}

static unsigned count(void) {
    const char *s = getenv("FAKE_NVML_COUNT");
    int n = s ? atoi(s) : 2;
    return n < 0 ? 0u : n > 8 ? 8u : (unsigned)n;
}

nvml_return nvmlInit_v2(void) {
    const char *f = getenv("FAKE_NVML_INIT_FAIL");
    if (f && *f == '1') return ERR_DRIVER_NOT_LOADED;
    load_script();
    cursor = 0;
    util_calls = 0;
    initialised = 1;
    return OK;
}

nvml_return nvmlShutdown(void) {
    initialised = 0;
    return OK;
}

const char *nvmlErrorString(nvml_return r) {
    switch (r) {
    case OK: return "Success";
    case ERR_UNINITIALIZED: return "Uninitialized";
    case ERR_INVALID_ARGUMENT: return "Invalid Argument";
    case ERR_DRIVER_NOT_LOADED: return "Driver Not Loaded";
    case ERR_GPU_IS_LOST: return "GPU is lost";
    default: return "Unknown Error";
    }
}

nvml_return nvmlDeviceGetCount_v2(unsigned int *n) {
    if (!initialised) return ERR_UNINITIALIZED;
    *n = count();
    return OK;
}

nvml_return nvmlDeviceGetHandleByIndex_v2(unsigned int i, nvml_device *d) {
    if (!initialised) return ERR_UNINITIALIZED;
    if (i >= count()) return ERR_INVALID_ARGUMENT;
    *d = &devices[i];
    return OK;
}

nvml_return nvmlDeviceGetName(nvml_device d, char *name, unsigned int len) {
    (void)d;
    const char *s = getenv("FAKE_NVML_NAME");
    snprintf(name, len, "%s", s ? s : "Fake GPU 80GB");
    return OK;
}

nvml_return nvmlDeviceGetUtilizationRates(nvml_device d, struct nvml_utilization *u) {
    if (!initialised || !d) return ERR_UNINITIALIZED;
    const char *f = getenv("FAKE_NVML_FAIL_AFTER");
    if (f && util_calls >= atoi(f)) return ERR_GPU_IS_LOST;
    util_calls++;
    u->gpu = steps_gpu[cursor];
    u->memory = steps_mem[cursor];
    return OK;
}

/* The memory query closes a sample: it reports the current step and advances the script. */
nvml_return nvmlDeviceGetMemoryInfo(nvml_device d, struct nvml_memory *m) {
    if (!initialised || !d) return ERR_UNINITIALIZED;
    m->total = 80ull << 30;
    m->used = steps_mib[cursor] << 20;
    m->free = m->total > m->used ? m->total - m->used : 0;
    cursor = (cursor + 1) % n_steps;
    return OK;
}
