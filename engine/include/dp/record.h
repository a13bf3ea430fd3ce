/* record.h: measuring a real training job. GPU utilisation, memory-controller utilisation and
 * memory used come from NVML, loaded at run time with dlopen (no NVIDIA headers or driver needed
 * to build); network byte counters come from /proc/net/dev. dp_record_run starts a command,
 * samples both at a fixed interval until it exits (or a stop request or a duration), and writes
 * the GPU trace in nvidia-smi's CSV syntax and the network trace as `timestamp,rx_bytes,tx_bytes`.
 * Nothing here prints, exits or installs signal handlers: the caller owns the process's signals. */
#ifndef DP_RECORD_H
#define DP_RECORD_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "dp/status.h"

/* ---- GPU through NVML ----------------------------------------------------------------------- */

#define DP_NVML_ENV         "DRIPLE_NVML_LIB"   /* overrides the library path (tests: a fake) */
#define DP_NVML_DEFAULT_LIB "libnvidia-ml.so.1"

struct dp_nvml;

/* One GPU sample, with nvidia-smi's units. */
struct dp_gpu_sample {
    unsigned util_gpu;       /* utilization.gpu, percent */
    unsigned util_mem;       /* utilization.memory (memory controller busy), percent */
    uint64_t mem_used_bytes; /* memory.used */
};

/* Loads NVML from lib (NULL: $DRIPLE_NVML_LIB, else libnvidia-ml.so.1), initialises it and opens
 * GPU `index`. Fails with DP_ERR_NOT_FOUND and "no NVIDIA GPU/driver found (<lib> not loadable:
 * <why>)" when the library cannot be loaded, DP_ERR_UNSUPPORTED when a needed symbol is missing,
 * DP_ERR_IO when nvmlInit fails, DP_ERR_NOT_FOUND when the index names no GPU. On success *out is
 * a new handle owned by the caller (close with dp_nvml_close); on failure it is untouched. */
enum dp_status dp_nvml_open(const char *lib, unsigned index, struct dp_nvml **out,
                            struct dp_error *err);
/* Reads one sample. DP_ERR_IO with NVML's message when a query fails (out then undefined). */
enum dp_status dp_nvml_sample(struct dp_nvml *n, struct dp_gpu_sample *out, struct dp_error *err);
/* The GPU's name ("" when the library does not say) and the number of GPUs (0 when unknown). */
const char *dp_nvml_device_name(const struct dp_nvml *n);
unsigned    dp_nvml_device_count(const struct dp_nvml *n);
/* Shuts NVML down and unloads it; NULL-safe. */
void dp_nvml_close(struct dp_nvml *n);

/* ---- Network through /proc/net/dev ---------------------------------------------------------- */

#define DP_NETDEV_ENV     "DRIPLE_PROC_NET_DEV"   /* overrides the counters file (tests) */
#define DP_NETDEV_DEFAULT "/proc/net/dev"
#define DP_IFACE_MAX      64

struct dp_net_counters {
    uint64_t rx_bytes, tx_bytes; /* since the interface came up, as the kernel counts them */
};

/* The counters file to read: path when not NULL, else $DRIPLE_PROC_NET_DEV, else /proc/net/dev. */
const char *dp_netdev_path(const char *path);
/* Reads iface's byte counters from the counters file (see dp_netdev_path). DP_ERR_IO when the
 * file cannot be read, DP_ERR_PARSE ("<path>:<line>: ...") when a line is malformed,
 * DP_ERR_NOT_FOUND naming the interfaces present when iface is absent. */
enum dp_status dp_netdev_read(const char *path, const char *iface, struct dp_net_counters *out,
                              struct dp_error *err);
/* The busiest non-loopback interface: the one with the most rx + tx bytes counted so far (since
 * it came up), written into name (cap bytes). DP_ERR_NOT_FOUND when there is none but "lo". */
enum dp_status dp_netdev_busiest(const char *path, char *name, size_t cap, struct dp_error *err);

/* ---- Traces ------------------------------------------------------------------------------- */

#define DP_GPU_CSV_HEADER \
    "timestamp, utilization.gpu [%], utilization.memory [%], memory.used [MiB]"
#define DP_NET_CSV_HEADER "timestamp,rx_bytes,tx_bytes"

/* Formats a wall-clock time as nvidia-smi does, in local time with milliseconds:
 * "2026/11/30 07:29:28.123" (buf: at least 32 bytes). Returns buf. */
char *dp_record_timestamp(const struct timespec *t, char *buf, size_t cap);
/* One row of each trace, without the newline:
 * "2026/11/30 07:29:28.123, 45 %, 12 %, 1024 MiB" (memory.used in MiB, rounded down as
 * nvidia-smi does) and "2026/11/30 07:29:28.123,123456,7890". Return buf. */
char *dp_record_gpu_row(const char *ts, const struct dp_gpu_sample *s, char *buf, size_t cap);
char *dp_record_net_row(const char *ts, const struct dp_net_counters *c, char *buf, size_t cap);

/* ---- Running and sampling a command ------------------------------------------------------- */

/* How the caller asks a running dp_record_run to stop, typically from a signal handler:
 * `requests` counts stop requests (the first stops sampling and asks the command to end, the
 * second kills it); `forward` is the signal to send the command on the first request, 0 when the
 * command already got it (a terminal's Ctrl-C reaches the whole foreground process group). */
struct dp_record_stop {
    volatile sig_atomic_t requests;
    volatile sig_atomic_t forward;
};

struct dp_record_opts {
    int          interval_ms;  /* sampling period, >= 1 */
    double       duration_s;   /* stop after this long; 0 = until the command exits */
    bool         no_gpu;       /* network only: no NVML, no GPU trace */
    unsigned     gpu_index;
    const char  *iface;        /* NULL = dp_netdev_busiest at start */
    const char  *gpu_csv;      /* output paths (gpu_csv unused with no_gpu) */
    const char  *net_csv;
    const char  *nvml_lib;     /* NULL = $DRIPLE_NVML_LIB or libnvidia-ml.so.1 */
    const char  *netdev_path;  /* NULL = $DRIPLE_PROC_NET_DEV or /proc/net/dev */
    double       grace_s;      /* after a stop: wait this long, then SIGTERM; as long again,
                                  then SIGKILL (0 = 5 s) */
    struct dp_record_stop *stop; /* may be NULL; borrowed, must outlive the call */
};

struct dp_record_result {
    long     n_samples;                 /* rows written to each trace */
    double   seconds;                   /* first to last sample */
    char     iface[DP_IFACE_MAX];       /* the interface recorded */
    char     gpu_name[96];              /* "" with no_gpu or when NVML does not say */
    pid_t    pid;                       /* the command's pid (0 when there was none) */
    bool     stopped;                   /* a stop request ended the recording */
    bool     timed_out;                 /* duration_s ended it */
    int      wait_status;               /* the command's waitpid status when it was reaped */
    bool     reaped;                    /* wait_status is valid */
};

/* Starts argv (argv[0] searched in PATH; NULL or empty argv: no command, then duration_s must be
 * > 0 and the machine is sampled as it is), samples every interval_ms into the two CSV files
 * (written as every output is, dp/files.h: they take their names, whole, when the recording
 * ends, whatever ended it; a killed process leaves none) until the
 * command exits, duration_s passes or o->stop is requested; then makes sure the command has
 * ended (forwarded signal, SIGTERM, SIGKILL after o->grace_s each) and reaps it. The child gets
 * default SIGINT/SIGTERM dispositions. Fails before starting anything on bad options, a missing
 * GPU or interface, or unwritable files; DP_ERR_NOT_FOUND when the command cannot be executed
 * (no file is left then). A failure after the start still ends and reaps the command and
 * leaves whole files. *res is filled as far as the run got. */
enum dp_status dp_record_run(const struct dp_record_opts *o, char *const argv[],
                             struct dp_record_result *res, struct dp_error *err);

#endif
