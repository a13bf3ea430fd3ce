/* test.h: the tiny test harness (in the spirit of redis's testhelp.h). CHECK* record a failure
 * and go on; TEST_MAIN_END prints "N passed, M failed" and sets the exit status. Tests run from
 * the repository root; REF_DIR is the shared reference data. */
#ifndef DRIPLE_TEST_H
#define DRIPLE_TEST_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int test_passed, test_failed;

#define CHECK(cond)                                                                    \
    do {                                                                               \
        if (cond) test_passed++;                                                       \
        else {                                                                         \
            test_failed++;                                                             \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);   \
        }                                                                              \
    } while (0)

#define CHECK_NEAR(a, b, tol)                                                                    \
    do {                                                                                         \
        double a_ = (double)(a), b_ = (double)(b);                                               \
        if (fabs(a_ - b_) <= (tol)) test_passed++;                                               \
        else {                                                                                   \
            test_failed++;                                                                       \
            fprintf(stderr, "%s:%d: CHECK_NEAR failed: %s = %.9g, %s = %.9g (tol %g)\n",         \
                    __FILE__, __LINE__, #a, a_, #b, b_, (double)(tol));                          \
        }                                                                                        \
    } while (0)

/* Checks that a string contains a substring (error messages name file and place). */
#define CHECK_CONTAINS(hay, needle)                                                              \
    do {                                                                                         \
        const char *h_ = (hay), *n_ = (needle);                                                  \
        if (h_ && strstr(h_, n_)) test_passed++;                                                 \
        else {                                                                                   \
            test_failed++;                                                                       \
            fprintf(stderr, "%s:%d: '%s' does not contain '%s'\n", __FILE__, __LINE__,          \
                    h_ ? h_ : "(null)", n_);                                                     \
        }                                                                                        \
    } while (0)

#define REF_DIR "../shared/reference"

/* max |a - b| / max(1, max |b|) over n values (NaN counts as the worst): the reference README's
 * tolerance base. */
static inline double test_rel_err(const float *a, const double *b, size_t n) {
    double d = 0, mb = 0;
    for (size_t i = 0; i < n; i++) {
        const double e = fabs((double)a[i] - b[i]);
        if (!(e <= d)) d = e;
        if (fabs(b[i]) > mb) mb = fabs(b[i]);
    }
    return d / (mb > 1 ? mb : 1);
}

/* Writes text to build/tests/<name> (where the test binaries' scratch files go) and returns that
 * path, in a static buffer that the next call overwrites; NULL when the file cannot be written.
 * Static inline so that a test that does not call it gets no unused-function warning. */
static inline const char *write_tmp(const char *name, const char *text) {
    static char path[256];
    snprintf(path, sizeof path, "build/tests/%s", name);
    FILE *f = fopen(path, "w");
    if (!f) return NULL;
    fputs(text, f);
    fclose(f);
    return path;
}

#define TEST_MAIN_END()                                                                  \
    do {                                                                                 \
        printf("%s: %d passed, %d failed\n", __FILE__, test_passed, test_failed);        \
        return test_failed ? 1 : 0;                                                      \
    } while (0)

#endif
