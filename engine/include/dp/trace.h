/* trace.h: resource traces and the paper's 12 labels. A trace holds time series sampled like
 * nvidia-smi (GPU util %, memory-controller util %, memory used MiB) and like /proc/net/dev (RX
 * and TX rates in MB/s, from counter deltas). A burst is a maximal run of samples above a
 * threshold; idle = mean gap between bursts (ms), active = mean burst length (ms), peak = mean of
 * each burst's largest sample. Labels are in Driple's order: gpu_mem_util, gpu_util, net_rx,
 * net_tx, each {idle, active, peak}. */
#ifndef DP_TRACE_H
#define DP_TRACE_H

#include <stdbool.h>
#include <stddef.h>

#include "dp/metrics.h" /* the labels are the outputs: dp_outputs, DP_N_OUTPUTS */
#include "dp/status.h"

/* Series kinds; the first four are the labelled resources (enum dp_resource), in label order. */
enum dp_series_kind {
    DP_SERIES_GPU_MEM_UTIL = DP_RES_GPU_MEM_UTIL, /* nvidia-smi utilization.memory, % */
    DP_SERIES_GPU_UTIL = DP_RES_GPU_UTIL,         /* utilization.gpu, % */
    DP_SERIES_NET_RX = DP_RES_NET_RX,             /* MB/s (1e6 bytes per second) */
    DP_SERIES_NET_TX = DP_RES_NET_TX,             /* MB/s */
    DP_SERIES_MEM_USED = DP_N_RESOURCES,          /* memory.used, MiB (not labelled) */
    DP_SERIES_COUNT
};

/* "gpu_mem_util", "gpu_util", "net_rx", "net_tx", "mem_used". */
const char *dp_series_name(enum dp_series_kind k);
/* Unit of the peak of resource k: "%" or "MB/s" ("MiB" for mem_used). */
const char *dp_series_unit(enum dp_series_kind k);

/* One series: samples at increasing times (ms from an arbitrary origin). */
struct dp_series {
    size_t  n, cap;
    double *t_ms;
    double *v;
};

/* A trace of one GPU / one host. Series may be empty (not recorded). */
struct dp_trace {
    struct dp_series s[DP_SERIES_COUNT];
    char   source[16]; /* "simulated", "measured" */
};

/* A new empty trace owned by the caller (dp_trace_free); NULL when out of memory. */
struct dp_trace *dp_trace_init(const char *source);
void dp_trace_free(struct dp_trace *t); /* NULL-safe */
/* Appends a sample; times must not decrease (DP_ERR_INVALID otherwise). */
enum dp_status dp_trace_push(struct dp_trace *t, enum dp_series_kind k, double t_ms, double v,
                             struct dp_error *err);

/* Every reader takes its file whole through dp_file_read (at most 1 GiB; "-" is stdin), names
 * "<path>:<line>: <what>" on malformed input (err may be NULL), refuses a last row without its
 * line end (a cut file), and fewer than two samples (no duration). */

/* Reads the CSV that `nvidia-smi --query-gpu=timestamp,utilization.gpu,utilization.memory,
 * memory.used --format=csv[,nounits] -lms N` writes (columns found by header name, "%"/"MiB"
 * suffixes optional, timestamps "2024/01/31 12:00:00.123" from 1970 on; several GPUs
 * interleaved: only the first GPU's rows, by an `index` or `pci.bus_id` column, are kept; without
 * such a column two rows at one time are refused). Appends to t. */
enum dp_status dp_trace_read_smi(const char *path, struct dp_trace *t, struct dp_error *err);
/* Reads network counters `timestamp,rx_bytes,tx_bytes` (timestamp in seconds, or nvidia-smi's
 * date format); rates are deltas over time in MB/s, stamped at the interval end. Counter
 * resets (a decrease), counters beyond 2^64 and fewer than three rows (two rates) fail. */
enum dp_status dp_trace_read_net(const char *path, struct dp_trace *t, struct dp_error *err);
/* Reads the simulator's own trace CSV (header `t_ms,gpu_util,gpu_mem_util,mem_used_mib,net_rx,
 * net_tx`; with a `worker` column, only the first worker's rows) into t. */
enum dp_status dp_trace_read_sim(const char *path, struct dp_trace *t, struct dp_error *err);
/* Recognises the file by its header (nvidia-smi, network counters, or the simulator's) and
 * reads it as above. */
enum dp_status dp_trace_read_any(const char *path, struct dp_trace *t, struct dp_error *err);
/* One sample's traces from n files (dp_trace_read_any each): a GPU trace and a network trace,
 * or a simulator trace, appended to t. A resource found in two files, a file with no samples,
 * and simulated and measured traces mixed fail naming the file. t->source becomes "simulated"
 * when the traces came from the simulator, else "measured" (so a simulated sample is never
 * presented as a measurement). */
enum dp_status dp_trace_read_merged(const char *const *paths, int n, struct dp_trace *t,
                                    struct dp_error *err);

/* A trace file read once, whole. */
#define DP_TRACE_MAX_WORKERS 1024 /* worker numbers of a simulator trace: 0 .. 1023 */
struct dp_trace_file {
    int               n_traces; /* one per worker of a simulator trace, else 1 */
    struct dp_trace **traces;   /* owned (dp_trace_file_free) */
    char              gpu[64];  /* nvidia-smi: the index (or pci.bus_id) whose rows were kept;
                                   "" when the file has no such column */
    int               n_gpus;   /* nvidia-smi: GPUs the file names (0 without such a column) */
};
/* Reads a trace of any kind, as dp_trace_read_any, keeping every worker of a simulator trace
 * (traces[i]: the i-th worker to appear; each needs two samples) and, for nvidia-smi, the rows
 * of GPU `gpu` (its index or pci.bus_id as the file writes it; NULL: the first GPU's), saying
 * which in out->gpu. A GPU the file does not hold fails with DP_ERR_NOT_FOUND naming those it
 * does. out is filled only on success. */
enum dp_status dp_trace_file_read(const char *path, const char *gpu, struct dp_trace_file *out,
                                  struct dp_error *err);
void dp_trace_file_free(struct dp_trace_file *f); /* NULL-safe; leaves f empty */
/* Writes traces in the simulator's CSV: `# simulated ...` comment line (when comment != NULL;
 * line breaks in it become spaces), header with a `worker` column, then each trace's samples
 * (GPU and network series must share sample times, as the simulator's do), atomically through
 * dp_out_open ("-" = stdout). DP_ERR_IO when the file cannot be written. The traces are
 * borrowed. */
enum dp_status dp_trace_write_sim(const struct dp_trace *const *traces, int n_traces,
                                  const char *comment, const char *path, struct dp_error *err);

/* Burst statistics of one series. */
struct dp_bursts {
    double threshold; /* the absolute threshold used */
    double max;       /* the series' maximum */
    int    n_bursts;
    int    n_gaps;    /* idle runs between bursts */
    double idle_ms;   /* mean gap between bursts (0 when fewer than 2 bursts; see below) */
    double active_ms; /* mean burst duration */
    double peak;      /* mean of each burst's largest sample */
};

/* Bursts of s above `threshold_frac` x max(s) (a sample is in a burst when v > threshold).
 * Durations use the sample spacing: a run of k samples lasts k x dt, dt the median interval.
 * Idle is the mean of the gaps between bursts; with one burst (or none) it is the mean of the
 * leading and trailing idle runs (0 when there are none). An empty or all-zero series gives
 * zeros. */
void dp_series_bursts(const struct dp_series *s, double threshold_frac, struct dp_bursts *out);

/* The 12 labels of t (threshold_frac: fraction of each resource's max; <= 0 uses the default
 * DP_TRACE_THRESHOLD). Resources with no samples give 0 and are flagged in *missing (bit k for
 * series k; may be NULL). */
#define DP_TRACE_THRESHOLD 0.10
void dp_trace_labels(const struct dp_trace *t, double threshold_frac, double labels[DP_N_OUTPUTS],
                     unsigned *missing);

#endif
