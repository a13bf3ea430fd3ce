/* kernels_json.c: auto's table, which says per shape class of a dense product whether the own
 * kernels or OpenBLAS compute it faster on this CPU: built-in defaults per kernel level
 * (measured on one machine each, named below), or the table `driple bench kernels` measured on
 * this CPU (dp_kernels_measure), saved as kernels.json in the user data directory and read at
 * start (dp_kernels_init). A table measured on another CPU, level or OpenBLAS core is ignored. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/json_util.h"
#include "dp/clock.h"
#include "dp/compute.h"
#include "dp/files.h"
#include "dp/json_out.h"
#include "kernels.h"

#define TABLE_FORMAT "driple-kernels/1"
#define TABLE_MAX_BYTES (64 * 1024)
_Static_assert(DP_KN_CELLS == DP_KERNELS_CELLS, "compute.h counts the same cells");
#define ROW (DP_KN_CLASSES * DP_KN_CLASSES * DP_KN_CLASSES) /* the cells of one transpose case */

static const char *const case_names[4] = {"nn", "nt", "tn", "tt"}; /* (ta, tb) */

int dp_kn_class(int d) {
    return d <= 4 ? 0 : d <= 16 ? 1 : d <= 64 ? 2 : d <= 256 ? 3 : 4;
}

/* The dimensions the inspector network's products have most (4 graphs' heads, a 12-row pool
 * item, the hidden width 64, the GRU's and LSTM's 192 and 256, a 400-row batch of 4 graphs). */
int dp_kn_class_dim(int cls) {
    static const int dims[DP_KN_CLASSES] = {4, 12, 64, 256, 400};
    return dims[cls < 0 ? 0 : cls >= DP_KN_CLASSES ? DP_KN_CLASSES - 1 : cls];
}

int dp_kn_cell(bool ta, bool tb, int m, int n, int k) {
    return (((2 * ta + tb) * DP_KN_CLASSES + dp_kn_class(m)) * DP_KN_CLASSES + dp_kn_class(n)) *
               DP_KN_CLASSES +
           dp_kn_class(k);
}

/* ---- built-in defaults (dp_kernels_measure's output, one string per transpose case) ---- */

struct builtin {
    enum dp_kn_level level;
    bool             blas512; /* measured against an OpenBLAS core with AVX-512 kernels */
    const char      *source;
    const char      *cells[4];
};

#include "kernels_builtin.h"

#define N_BUILTINS (sizeof builtins / sizeof builtins[0])

/* Whether OpenBLAS runs AVX-512 kernels (its core, as it names it). */
static bool blas_has_512(void) {
    static const char *const cores[] = {"SkylakeX", "Cooperlake", "SapphireRapids"};
    const char *info = dp_kn_blas_info(), *core = info ? strstr(info, "| core ") : NULL;
    for (size_t i = 0; core && i < sizeof cores / sizeof cores[0]; i++)
        if (!strcmp(core + 7, cores[i])) return true;
    return false;
}

/* The built-in of a level measured against this kind of OpenBLAS core, else that level's first. */
static const struct builtin *builtin_for(enum dp_kn_level l) {
    const struct builtin *first = NULL;
    for (size_t i = 0; i < N_BUILTINS; i++) {
        if (builtins[i].level != l) continue;
        if (builtins[i].blas512 == blas_has_512()) return &builtins[i];
        if (!first) first = &builtins[i];
    }
    DP_ASSERT(first);
    return first;
}

static char builtin_cells[DP_KN_LEVEL_COUNT][DP_KN_CELLS + 1];

static const char *builtin_of(enum dp_kn_level l) {
    char *c = builtin_cells[l];
    if (!c[0])
        for (int t = 0; t < 4; t++) memcpy(c + t * ROW, builtin_for(l)->cells[t], ROW);
    return c;
}

/* ---- the measured table ---- */

static struct {
    int  level; /* -1: none read */
    char cells[DP_KN_CELLS + 1];
    char path[1024];
    char why[600]; /* a file there but not used: why */
} file = {-1, "", "", ""};

const char *dp_kn_table_cells(enum dp_kn_level l) {
    return (int)l == file.level ? file.cells : builtin_of(l);
}

bool dp_kernels_table_path(char *buf, size_t n) {
    const char *env = getenv("DRIPLE_KERNELS_TABLE"), *xdg = getenv("XDG_DATA_HOME"),
               *home = getenv("HOME");
    int len = -1;
    if (!n) return false;
    if (env && *env) len = snprintf(buf, n, "%s", env);
    else if (xdg && xdg[0] == '/') len = snprintf(buf, n, "%s/driple/kernels.json", xdg);
    else if (home && *home) len = snprintf(buf, n, "%s/.local/share/driple/kernels.json", home);
    if (len < 0 || (size_t)len >= n) {
        buf[0] = '\0';
        return false;
    }
    return true;
}

const char *dp_kernels_cpu(void) {
    static char name[128];
    if (name[0]) return name;
    snprintf(name, sizeof name, "unknown CPU");
    FILE *f = fopen("/proc/cpuinfo", "r");
    char line[512];
    while (f && fgets(line, sizeof line, f)) {
        const char *colon = strchr(line, ':');
        if (strncmp(line, "model name", 10) || !colon) continue;
        snprintf(name, sizeof name, "%s", colon + 1 + (colon[1] == ' '));
        name[strcspn(name, "\n")] = '\0';
        break;
    }
    if (f) fclose(f);
    return name;
}

static const struct dp_read_spec table_spec = {"kernel table", TABLE_MAX_BYTES, true, NULL, NULL};

enum dp_status dp_kn_table_load(struct dp_error *err) {
    char path[1024];
    if (!dp_kernels_table_path(path, sizeof path)) return DP_OK;
    FILE *probe = fopen(path, "r");
    if (!probe) return DP_OK; /* never measured: the built-in table */
    fclose(probe);
    cJSON *root = NULL;
    enum dp_status st = dp_json_load(path, &table_spec, &root, err);
    const char *cpu = NULL, *level = NULL, *blas = NULL;
    const cJSON *cells = NULL;
    if (st || (st = dp_json_check_format(root, TABLE_FORMAT, path, err)) ||
        (st = dp_json_get_string(root, "cpu", false, path, "$", &cpu, err)) ||
        (st = dp_json_get_string(root, "level", false, path, "$", &level, err)) ||
        (st = dp_json_get_string(root, "openblas", false, path, "$", &blas, err)) ||
        (st = dp_json_get_object(root, "cells", false, path, "$", &cells, err)))
        goto done;
    char buf[DP_KN_CELLS + 1];
    for (int t = 0; t < 4; t++) {
        const char *row = NULL;
        if ((st = dp_json_get_string(cells, case_names[t], false, path, "$.cells", &row, err)))
            goto done;
        if (strlen(row) != ROW || strspn(row, "ob") != ROW) {
            st = dp_error_set(err, DP_ERR_INVALID, "%s:$.cells.%s: expected %d characters, each "
                              "'o' (own) or 'b' (OpenBLAS); measure again with `driple bench "
                              "kernels`", path, case_names[t], ROW);
            goto done;
        }
        memcpy(buf + t * ROW, row, ROW);
    }
    const char *here = dp_kn_blas_info();
    int l = -1;
    for (int i = 0; i < DP_KN_LEVEL_COUNT; i++)
        if (!strcmp(level, dp_kn_level_name((enum dp_kn_level)i))) l = i;
    snprintf(file.path, sizeof file.path, "%s", path);
    if (l < 0 || strcmp(cpu, dp_kernels_cpu()) || !here || strcmp(blas, here)) {
        snprintf(file.why, sizeof file.why, "%.300s was measured on %.80s (%.10s kernels, %.150s), not here: "
                 "built-in table", path, cpu, level, blas);
        goto done;
    }
    memcpy(file.cells, buf, DP_KN_CELLS);
    file.cells[DP_KN_CELLS] = '\0';
    file.level = l;
done:
    cJSON_Delete(root);
    return st;
}

const char *dp_kernels_table(void) {
    static char text[DP_KN_LEVEL_COUNT][1200];
    const enum dp_kn_level l = dp_kn()->level;
    char *t = text[l];
    if (!dp_kn_blas_info())
        snprintf(t, sizeof text[l], "unused (no OpenBLAS in this build)");
    else if ((int)l == file.level)
        snprintf(t, sizeof text[l], "measured on this CPU (%.1000s)", file.path);
    else
        snprintf(t, sizeof text[l], "built-in for %s: %.500s%s%.600s", dp_kn_level_name(l),
                 builtin_for(l)->source, file.why[0] ? "; " : "", file.why);
    return t;
}

/* ---- measuring ---- */

static int cmp_double(const void *a, const void *b) {
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

#define MEASURE_BATCHES 7
#define MEASURE_FLOPS 2e7 /* per batch: ~0.1-0.3 ms, long against the clock, short on a busy machine */

/* The median over batches of one call's time (us), the batches of the two backends
 * interleaved, so that a load change hits both. */
static void time_cell(const struct dp_kn_table *K, bool ta, bool tb, int m, int n, int k,
                      const float *a, const float *b, float *c, double *own_us,
                      double *blas_us) {
    const int lda = ta ? m : k, ldb = tb ? k : n;
    const double flops = 2.0 * m * n * k;
    const int reps = flops >= MEASURE_FLOPS ? 1 : (int)(MEASURE_FLOPS / flops) > 20000
                                                      ? 20000
                                                      : (int)(MEASURE_FLOPS / flops);
    double t[2][MEASURE_BATCHES];
    for (int r = -1; r < MEASURE_BATCHES; r++) /* one batch of warm-up */
        for (int be = 0; be < 2; be++) {
            const double t0 = dp_clock_ms();
            for (int i = 0; i < reps; i++) {
                if (be == 0) K->gemm_own(ta, tb, m, n, k, a, lda, b, ldb, 0.0f, c, n);
                else dp_kn_blas_gemm(ta, tb, m, n, k, a, lda, b, ldb, 0.0f, c, n);
            }
            if (r >= 0) t[be][r] = (dp_clock_ms() - t0) * 1000.0 / reps;
        }
    for (int be = 0; be < 2; be++) qsort(t[be], MEASURE_BATCHES, sizeof t[be][0], cmp_double);
    *own_us = t[0][MEASURE_BATCHES / 2];
    *blas_us = t[1][MEASURE_BATCHES / 2];
}

enum dp_status dp_kernels_measure(const char *path, struct dp_kernels_cell *out,
                                  struct dp_error *err) {
    if (!dp_kn_blas_info())
        return dp_error_set(err, DP_ERR_UNSUPPORTED, "bench kernels: OpenBLAS is not in this "
                            "build (made with OPENBLAS=0): nothing to compare");
    const int big = dp_kn_class_dim(DP_KN_CLASSES - 1);
    const size_t sz = (size_t)big * big;
    float *a = malloc(sz * sizeof *a), *b = malloc(sz * sizeof *b), *c = malloc(sz * sizeof *c);
    enum dp_status st = DP_OK;
    struct dp_jw *w = NULL;
    if (!a || !b || !c) {
        st = dp_error_set(err, DP_ERR_NOMEM, "bench kernels: out of memory");
        goto done;
    }
    for (size_t i = 0; i < sz; i++) { /* values of a network's size; no denormals */
        a[i] = (float)((i * 7919 % 1000) / 1000.0 - 0.5);
        b[i] = (float)((i * 104729 % 1000) / 1000.0 - 0.5);
    }
    const struct dp_kn_table *K = dp_kn();
    char cells[DP_KN_CELLS + 1];
    for (int cell = 0; cell < DP_KN_CELLS; cell++) {
        const int kc = cell % DP_KN_CLASSES, nc = cell / DP_KN_CLASSES % DP_KN_CLASSES;
        const int mc = cell / (DP_KN_CLASSES * DP_KN_CLASSES) % DP_KN_CLASSES, t = cell / ROW;
        struct dp_kernels_cell *o = &out[cell];
        o->ta = t >= 2;
        o->tb = t % 2;
        o->m = dp_kn_class_dim(mc);
        o->n = dp_kn_class_dim(nc);
        o->k = dp_kn_class_dim(kc);
        time_cell(K, o->ta, o->tb, o->m, o->n, o->k, a, b, c, &o->own_us, &o->blas_us);
        /* OpenBLAS only where it is clearly faster: a tie keeps the own kernels (no call
         * through a second library for noise) */
        o->pick = o->blas_us < 0.97 * o->own_us ? 'b' : 'o';
        cells[cell] = o->pick;
    }
    cells[DP_KN_CELLS] = '\0';
    if (!(w = dp_jw_new())) {
        st = dp_error_set(err, DP_ERR_NOMEM, "bench kernels: out of memory");
        goto done;
    }
    dp_jw_str(w, "format", TABLE_FORMAT);
    dp_jw_str(w, "cpu", dp_kernels_cpu());
    dp_jw_str(w, "level", dp_kn_level_name(K->level));
    dp_jw_str(w, "openblas", dp_kn_blas_info());
    dp_jw_str(w, "openblas_coretype_env", getenv("OPENBLAS_CORETYPE"));
    dp_jw_str(w, "classes", "m, n and k each: <= 4, <= 16, <= 64, <= 256, more; cell index "
                            "(class m * 5 + class n) * 5 + class k");
    dp_jw_object(w, "cells");
    for (int t = 0; t < 4; t++) {
        char row[ROW + 1];
        memcpy(row, cells + t * ROW, ROW);
        row[ROW] = '\0';
        dp_jw_str(w, case_names[t], row);
    }
    dp_jw_end(w);
    char dir[1024];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash && slash != dir) {
        *slash = '\0';
        if ((st = dp_mkdir_p(dir, err))) goto done;
    }
    if ((st = dp_jw_save(w, path, err))) goto done;
    /* in effect from now on, for this level */
    memcpy(file.cells, cells, sizeof cells);
    file.level = (int)K->level;
    snprintf(file.path, sizeof file.path, "%s", path);
    file.why[0] = '\0';
    dp_kn_cells_changed();
done:
    dp_jw_free(w);
    free(a);
    free(b);
    free(c);
    return st;
}
