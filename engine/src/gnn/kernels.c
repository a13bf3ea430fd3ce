/* kernels.c: the dense products of the inspector network, and the BLAS thread count. */
#include "kernels.h"

#include <cblas.h>
#include <stddef.h>

#include "dp/model.h" /* dp_blas_threads */

void dp_kn_gemm(bool ta, bool tb, int m, int n, int k, const float *a, int lda, const float *b,
                int ldb, float beta, float *c, int ldc) {
    if (m <= 0 || n <= 0) return;
    if (k <= 0) {
        for (int i = 0; i < m; i++)
            for (int j = 0; j < n; j++) c[(size_t)i * ldc + j] *= beta;
        return;
    }
    cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, m,
                n, k, 1.0f, a, lda, b, ldb, beta, c, ldc);
}

int dp_blas_threads(int n) {
    if (n > 0) openblas_set_num_threads(n);
    return openblas_get_num_threads();
}
