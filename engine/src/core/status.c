/* status.c: status names, error messages and the invariant-failure abort. */
#include "dp/status.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const status_names[] = {
    "ok", "out of memory", "I/O error", "parse error", "invalid input", "shape mismatch",
    "unsupported", "not found", "render error", "cancelled",
};
_Static_assert(sizeof status_names / sizeof status_names[0] == DP_STATUS_COUNT,
               "update status_names");

const char *dp_status_str(enum dp_status s) {
    return (unsigned)s < DP_STATUS_COUNT ? status_names[s] : "unknown status";
}

enum dp_status dp_error_set(struct dp_error *err, enum dp_status st, const char *fmt, ...) {
    if (!err) return st;
    err->status = st;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
    return st;
}

void dp_error_prefix(struct dp_error *err, const char *prefix) {
    if (!err || !prefix) return;
    char tmp[sizeof err->msg];
    size_t np = strlen(prefix), nm = strlen(err->msg);
    if (np + 2 >= sizeof tmp) np = sizeof tmp - 3;
    if (np + 2 + nm >= sizeof tmp) nm = sizeof tmp - 3 - np;
    memcpy(tmp, prefix, np);
    memcpy(tmp + np, ": ", 2);
    memcpy(tmp + np + 2, err->msg, nm);
    tmp[np + 2 + nm] = '\0';
    memcpy(err->msg, tmp, sizeof tmp);
}

void dp_abort(const char *file, int line, const char *expr) {
    fprintf(stderr, "driple: internal error: %s:%d: assertion failed: %s\n", file, line, expr);
    abort();
}
