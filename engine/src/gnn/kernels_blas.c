/* kernels_blas.c: the dense product's second backend, OpenBLAS's cblas_sgemm (the only file that
 * includes cblas.h). OpenBLAS runs each call on the calling thread: driple's pool already splits
 * a pass's rows or a batch's graphs among the cores, and OpenBLAS threads beside its workers
 * would oversubscribe them, so its thread count is set to one before the first call (Debian's
 * openblas-pthread sets the count process-wide; one caller at a time or many, none then starts a
 * thread). A build made with OPENBLAS=0 (DP_NO_OPENBLAS) has none of this: every product runs
 * on the own kernels. */
#include "kernels.h"

#ifndef DP_NO_OPENBLAS
#include <cblas.h>
#include <pthread.h>
#include <stdio.h>

static pthread_once_t once = PTHREAD_ONCE_INIT;
static char info[192];

static void blas_init(void) {
    openblas_set_num_threads(1);
    snprintf(info, sizeof info, "%s | core %s", openblas_get_config(), openblas_get_corename());
}

const char *dp_kn_blas_info(void) {
    pthread_once(&once, blas_init);
    return info;
}

bool dp_kn_blas_gemm(bool ta, bool tb, int m, int n, int k, const float *a, int lda,
                     const float *b, int ldb, float beta, float *c, int ldc) {
    /* cblas refuses (printing, computing nothing) a leading dimension below its row's length:
     * such a call stays on the own kernels, which take any stride */
    const int a_cols = ta ? m : k, b_cols = tb ? k : n;
    if (lda < (a_cols > 1 ? a_cols : 1) || ldb < (b_cols > 1 ? b_cols : 1) ||
        ldc < (n > 1 ? n : 1))
        return false;
    pthread_once(&once, blas_init);
    const float alpha = 1.0f;
    cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, m,
                n, k, alpha, a, lda, b, ldb, beta, c, ldc);
    return true;
}
#else
const char *dp_kn_blas_info(void) { return NULL; }

bool dp_kn_blas_gemm(bool ta, bool tb, int m, int n, int k, const float *a, int lda,
                     const float *b, int ldb, float beta, float *c, int ldc) {
    (void)ta, (void)tb, (void)m, (void)n, (void)k, (void)a, (void)lda, (void)b, (void)ldb;
    (void)beta, (void)c, (void)ldc;
    return false;
}
#endif
