/* compute.h: how the engine computes the inspector network: which SIMD kernels run, which
 * backend computes its dense products (driple's own kernels or OpenBLAS) and how many threads one
 * call may use. Process-wide settings, read on first use; set them before starting threads that
 * use the engine. */
#ifndef DP_COMPUTE_H
#define DP_COMPUTE_H

#include <stdbool.h>
#include <stddef.h>

#include "dp/status.h"

/* $DRIPLE_KERNELS, one of: own (the default: every product on the own kernels at the best
 * level), auto (each dense product on whichever backend auto's table says is faster for its
 * shape; opt-in: measured slower on 2 threads, notes/kernels.md),
 * openblas (every product on OpenBLAS), or a level's name, portable, avx2 or avx512 (own kernels
 * at that level, lowered to the best the CPU has). */
#define DP_KERNELS_ALLOWED "auto, own, openblas, portable, avx2, avx512"

/* Reads $DRIPLE_KERNELS and auto's measured table (dp_kernels_table_path) once, as the first use
 * of the kernels does; a front end calls it at start to report what the engine cannot. Fails
 * with DP_ERR_INVALID naming the variable and the allowed values for an unknown value, or
 * naming the file for a malformed table; the engine then goes on with the defaults (own, the
 * built-in table). Later calls return the same result. */
enum dp_status dp_kernels_init(struct dp_error *err);
/* The kernel level in effect: "avx512", "avx2" or "portable" (plain C). */
const char *dp_kernels(void);
/* The product backend in effect: "auto", "own" or "openblas" (never "openblas" or "auto" in a
 * build without OpenBLAS: "own"). */
const char *dp_kernels_backend(void);
/* Forces kernels by one of the names above (NULL: the default, own; $DRIPLE_KERNELS
 * ignored). Returns false, changing nothing, for an unknown name. */
bool dp_kernels_set(const char *name);
/* OpenBLAS's configuration and core as it reports them ("OpenBLAS 0.3.21 ... | core Haswell"),
 * or NULL when this build has no OpenBLAS (made with OPENBLAS=0). Static; never freed. */
const char *dp_kernels_openblas(void);
/* NULL, or one line saying that this build has no OpenBLAS and every product runs on the own
 * kernels (for --version and bench output). Static. */
const char *dp_kernels_note(void);
/* Where auto's table for the level in effect comes from: the measured file, or the built-in
 * default and the machine it was measured on (and why a file present was not used). Static. */
const char *dp_kernels_table(void);
/* The CPU's model name from /proc/cpuinfo ("unknown CPU" without it). Static. */
const char *dp_kernels_cpu(void);
/* The measured table's path into buf: $DRIPLE_KERNELS_TABLE, else
 * $XDG_DATA_HOME/driple/kernels.json, else $HOME/.local/share/driple/kernels.json. false (buf
 * empty) when none is set or the path does not fit. */
bool dp_kernels_table_path(char *buf, size_t n);

/* One shape class of auto's table as dp_kernels_measure timed it: a typical shape of the class,
 * each backend's median time of one product (us) and the pick, 'o' (own) or 'b' (OpenBLAS). */
struct dp_kernels_cell {
    bool   ta, tb;
    int    m, n, k;
    double own_us, blas_us;
    char   pick;
};
#define DP_KERNELS_CELLS 500 /* 4 transpose cases x 5 classes of m, n and k */
/* Times both backends on one thread at the level in effect over every shape class (a few
 * seconds), fills out (DP_KERNELS_CELLS entries, caller-owned), writes the table to path
 * (creating its directory; atomically) and puts it in effect. DP_ERR_UNSUPPORTED without
 * OpenBLAS, DP_ERR_IO naming path, DP_ERR_NOMEM; the table in effect is then unchanged. */
enum dp_status dp_kernels_measure(const char *path, struct dp_kernels_cell *out,
                                  struct dp_error *err);

/* Threads one engine call may use: a prediction splits its graph's rows among them, a training
 * step or a batch of predictions its graphs. By default $DRIPLE_THREADS, else the CPUs online
 * (at most 4: a 100-group graph's rows). One call at a time uses them: a call made while
 * another holds them (another thread's, or one made from inside the engine) runs on its own
 * thread alone, with the same results. */
int dp_threads(void);
/* Sets the count (n >= 1; at most 64); n < 1 changes nothing. Returns the count in effect. */
int dp_threads_set(int n);

#endif
