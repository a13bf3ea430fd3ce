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

/* The scratch directory: $BUILD/tests, where the test binaries are ($BUILD is the build
 * directory, which `make test` passes; "build" when unset), so that the tests pass on a fresh
 * clone in any build directory, and the sanitizer build writes into its own. */
static inline const char *test_dir(void) {
    static char dir[512];
    const char *build = getenv("BUILD");
    snprintf(dir, sizeof dir, "%s/tests", build && *build ? build : "build");
    return dir;
}

/* <test_dir()>/<name>, in one of 8 static buffers that later calls reuse in turn (so a few may
 * appear in one expression). Static inline (as below) so that a test that does not call it
 * gets no unused-function warning. */
static inline const char *test_path(const char *name) {
    static char paths[8][640];
    static int next;
    char *p = paths[next++ % 8];
    snprintf(p, sizeof paths[0], "%s/%s", test_dir(), name);
    return p;
}

/* Writes text to test_path(name) and returns that path (test_path's buffer); NULL when the
 * file cannot be written. */
static inline const char *write_tmp(const char *name, const char *text) {
    const char *path = test_path(name);
    FILE *f = fopen(path, "w");
    if (!f) return NULL;
    fputs(text, f);
    fclose(f);
    return path;
}

/* The whole file at path in a new buffer with a NUL after its bytes (text or binary), which the
 * caller frees; *len (when not NULL) gets the byte count. NULL when it cannot be read. */
static inline char *test_slurp(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    char *buf = NULL;
    long n = fseek(f, 0, SEEK_END) == 0 ? ftell(f) : -1;
    if (n >= 0 && fseek(f, 0, SEEK_SET) == 0 && (buf = malloc((size_t)n + 1)) &&
        fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    if (!buf) return NULL;
    buf[n] = '\0';
    if (len) *len = (size_t)n;
    return buf;
}

#define TEST_MAIN_END()                                                                  \
    do {                                                                                 \
        printf("%s: %d passed, %d failed\n", __FILE__, test_passed, test_failed);        \
        return test_failed ? 1 : 0;                                                      \
    } while (0)

#endif
