/* calib_impl.h: the calibration set's private layout (calib_load.c reads it, calibrate.c
 * simulates and fits it): rows, the workloads they share (one per model, precision, optimizer
 * and batch) and the simulation keys (workload, GPU, setting) rows share. */
#ifndef DP_CALIB_IMPL_H
#define DP_CALIB_IMPL_H

#include "dp/calibrate.h"
#include "dp/zoo.h"
#include "sim/sim_impl.h"

struct calib_work {
    char                    zoo[32];
    enum dp_precision       prec;
    enum dp_optimizer       opt;
    int                     batch;
    int                     input;
    struct dp_sim_workload *w;
};

struct calib_key {
    int                  work;
    int                  prof;       /* keys of one workload, GPU, precision, framework and XLA
                                        switch share their compute profiles */
    const struct dp_gpu *gpu;
    const struct dp_system *system;  /* the machines' systems-catalog entry (NULL: none) */
    struct dp_setting    setting;
    double               throughput; /* samples/s, the last prediction */
    double               memory_gb;
    bool                 oom;
};

struct dp_calib {
    const struct dp_gpu_catalog *cat;
    struct dp_systems   *systems;    /* the shipped systems catalog (NULL: not found) */
    int                  n_skipped;
    char                 skipped[1024]; /* "model x (n rows), ..." */
    int                  n, cap;
    struct dp_calib_row *rows;
    int                  n_work, cap_work;
    struct calib_work   *work;
    int                  n_keys, cap_keys;
    struct calib_key    *keys;
    int                  n_prof;
    struct sim_profiles *prof;       /* per profile class, the last prediction's */
    int                 *prof_owner; /* per class, the first wanted key (it makes them) */
};

#endif
