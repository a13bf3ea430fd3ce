/* calibrate.h: the simulator against published measured training throughput
 * (../shared/calibration/throughput_*.csv): read the tables, simulate every row on its zoo
 * graph, GPU and setting, fit the simulator's free constants, and measure honestly by leaving
 * each GPU out (refit without its rows, predict them). Predictions are simulated; the
 * measurements are the tables' (each row names its source). */
#ifndef DP_CALIBRATE_H
#define DP_CALIBRATE_H

#include <stdbool.h>
#include <stdint.h>

#include "dp/optimizer.h"
#include "dp/settings.h"
#include "dp/sim.h"

/* One published measurement and what the simulator makes of it. */
struct dp_calib_row {
    char    file[256];     /* the table, and the row's line in it */
    int     line;
    char    model[32];     /* the table's model name; zoo: the zoo model simulated */
    char    zoo[32];
    char    gpu[64];       /* the table's GPU name; catalog: the catalog GPU (dp_gpu_find) */
    char    catalog[DP_NAME_MAX];
    char    unit[24];      /* "images/sec", "sequences/sec", "tokens/sec" */
    bool    real_data;     /* real input data (the simulator models no input pipeline) */
    int     gpus;          /* workers, one machine: as the run was made (see ran_fp32) */
    bool    ran_fp32;      /* a row whose log shows one GPU in fp32 where the table says several
                              in mixed precision (calib_load.c, ran_one_gpu_fp32) */
    bool    xla;           /* a TensorFlow run with XLA auto-clustering, as its logs show
                              (calib_load.c, ran_xla): simulated with setting.xla */
    int     replicas;      /* independent one-GPU runs the figure sums (no gradient exchanged:
                              simulated as one GPU, times this); 1: one data-parallel job */
    int     batch;         /* per GPU: the micro-batch */
    int     machines;      /* DeepLearningExamples' multi-machine rows: their DGX-1s; else 1 */
    int     accum;         /* micro-batches per synchronised step (the table's accumulation) */
    int     input;         /* the zoo graph's sequence length or image side; 0: its default */
    bool    dle;           /* a row of DeepLearningExamples' table */
    char    system[32];    /* the machine it ran on, for leaving one system out: "DGX-1" (the
                              DeepLearningExamples rows, the TensorFlow team's P100s), the cloud
                              K80s' ("AWS p2.8xlarge", "Google Compute Engine"), else the
                              GPU's Lambda machine ("Lambda <GPU>") */
    double  tokens;        /* tokens per sample for tokens/sec rows, else 0 */
    enum dp_optimizer optimizer; /* the zoo graph's */
    double  measured;      /* as published, in unit, over all GPUs */
    struct dp_setting setting;
    /* filled by dp_calib_predict / dp_calib_logo */
    double  predicted;     /* simulated, in unit */
    double  predicted_logo; /* simulated with the constants refitted without this row's GPU */
    double  predicted_logen; /* ... without its GPU generation's rows (dp_calib_holdout) */
    double  predicted_loso;  /* ... without its system's rows (dp_calib_holdout) */
    double  memory_gb;     /* simulated per-GPU footprint */
    double  gpu_memory_gb; /* one device's memory (NaN: unknown) */
    bool    oom;           /* the footprint exceeds it */
    int     key;           /* rows with the same key simulate the same thing */
};

struct dp_calib;

/* Reads the tables ("-": standard input; each through dp_file_read, at most 64 MiB; columns by
 * header name: model, framework, gpu, num_gpus, variable_update, network, precision,
 * batch_size_per_gpu, throughput, unit, notes) and prepares every row: the
 * catalog GPU (dp_gpu_find), the setting (parameter_server: one PS on the host CPU over PCIe;
 * replicated, allreduce and single: all-reduce over NVLink where the row or the GPU's SXM form
 * says so, else PCIe; Lambda's Transformer-XL runs: one independent run per GPU, see replicas;
 * fp16 or mixed: mixed precision; rows whose runs' logs show one GPU in fp32: so, see
 * ran_fp32; rows whose logs show XLA auto-clustering: setting.xla, see xla), the zoo graph
 * (tf_cnn_benchmarks' SGD, DeepLearningExamples' momentum for images and Adam for sequences)
 * and its workload at the row's batch. cat is borrowed and must outlive the result. New set
 * owned by the caller (dp_calib_free); on failure "<file>:<line>: <what>" (an unknown GPU or
 * model, a bad cell, a table without the columns) and *out untouched. */
enum dp_status dp_calib_load(const char *const *paths, int n_paths,
                             const struct dp_gpu_catalog *cat, struct dp_calib **out,
                             struct dp_error *err);
void dp_calib_free(struct dp_calib *c); /* NULL-safe */
int dp_calib_n_rows(const struct dp_calib *c);
/* Rows of the tables that were not simulated and why (a model the zoo lacks, a batch given in
 * tokens), "" when none; static storage of c. */
int dp_calib_n_skipped(const struct dp_calib *c);
const char *dp_calib_skipped(const struct dp_calib *c);
/* Row i (i < dp_calib_n_rows), in table order. */
struct dp_calib_row *dp_calib_row(struct dp_calib *c, int i);

/* Simulates every row with constants k (NULL: the defaults) into predicted, memory_gb and oom.
 * Fails only when a simulation does (the row named). Uses up to `threads` threads (<= 1: one). */
enum dp_status dp_calib_predict(struct dp_calib *c, const struct dp_sim_constants *k,
                                int threads, struct dp_error *err);

/* Fits the fitted constants (the compute, host, fusion and network efficiencies; not jitter,
 * context or the PS host) to the rows with use[i] true (NULL: all), minimising the mean
 * |log(predicted / measured)|, by a pattern search within physical bounds from *k; *k gets the
 * result and *objective its value. Refills every row's prediction with the result. */
enum dp_status dp_calib_fit(struct dp_calib *c, const bool *use, struct dp_sim_constants *k,
                            double *objective, int threads, struct dp_error *err);

/* Leave-one-GPU-out: for each catalog GPU of the rows, fits (from *start) without that GPU's
 * rows and predicts them into predicted_logo. The rows' predicted values are left as the fit
 * over all rows (dp_calib_fit from *start) makes them, and *fitted gets those constants. */
enum dp_status dp_calib_logo(struct dp_calib *c, const struct dp_sim_constants *start,
                             struct dp_sim_constants *fitted, int threads, struct dp_error *err);

/* What a hold-out leaves out at a time: a GPU (dp_calib_logo), a GPU generation (every GPU of
 * it: a new generation's rows predicted from the others' constants), a system
 * (dp_calib_row.system). */
enum dp_calib_holdout { DP_HOLD_GPU, DP_HOLD_GENERATION, DP_HOLD_SYSTEM, DP_HOLD_COUNT };
/* dp_calib_logo for any hold-out: for each group of the rows, fits (from *start) without the
 * group's rows and predicts them into predicted_logo, predicted_logen or predicted_loso. The
 * rows' predicted values are left as *start makes them. */
enum dp_status dp_calib_holdout(struct dp_calib *c, enum dp_calib_holdout by,
                                const struct dp_sim_constants *start, int threads,
                                struct dp_error *err);
/* |error| statistics of the rows with use[i] true (NULL: all): of predicted, or of
 * predicted_logo when logo. Percent. */
struct dp_calib_stats {
    int    n;
    double median, p90, worst;  /* of |predicted / measured - 1| x 100 */
    double median_signed;       /* of (predicted / measured - 1) x 100 */
    double mean_abs_log;        /* mean |log(predicted / measured)| */
};
void dp_calib_stats(const struct dp_calib *c, const bool *use, bool logo,
                    struct dp_calib_stats *out);
/* The same of one hold-out's predictions. */
void dp_calib_stats_held(const struct dp_calib *c, const bool *use, enum dp_calib_holdout by,
                         struct dp_calib_stats *out);

#endif
