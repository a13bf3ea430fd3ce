/* status.h: how the engine reports failure. Every fallible call returns an enum dp_status and,
 * when given a struct dp_error, fills a message of the form "<file>:<where>: <what>". The engine
 * never prints and never exits; DP_ASSERT is for broken invariants (bugs) only. */
#ifndef DP_STATUS_H
#define DP_STATUS_H

enum dp_status {
    DP_OK = 0,
    DP_ERR_NOMEM,       /* an allocation failed */
    DP_ERR_IO,          /* a file could not be opened, read or written */
    DP_ERR_PARSE,       /* malformed or truncated input */
    DP_ERR_INVALID,     /* well-formed input with a wrong value (type, range, reference) */
    DP_ERR_SHAPE,       /* tensor or feature shapes that do not fit together */
    DP_ERR_UNSUPPORTED, /* a construct or option this build does not handle */
    DP_ERR_NOT_FOUND,   /* a named thing (setting, GPU, model, op) is absent */
    DP_ERR_RENDER,      /* Graphviz failed */
    DP_ERR_CANCELLED,   /* stopped by the caller (Ctrl-C, a cancel flag) */
    DP_STATUS_COUNT
};

struct dp_error {
    enum dp_status status;
    char           msg[512];
};

/* Name of a status ("parse error"); never NULL. */
const char *dp_status_str(enum dp_status s);

/* Fills err (may be NULL) with st and a printf-style message; returns st so that callers can
 * write `return dp_error_set(err, DP_ERR_PARSE, "%s:%d: ...", path, line);`. */
enum dp_status dp_error_set(struct dp_error *err, enum dp_status st, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* Prefixes err->msg with "prefix: " (for adding the file name at an outer level). */
void dp_error_prefix(struct dp_error *err, const char *prefix);

/* Reports a broken invariant and aborts; used through DP_ASSERT only. */
#if defined(__GNUC__)
__attribute__((noreturn))
#endif
void dp_abort(const char *file, int line, const char *expr);

#define DP_ASSERT(x) ((x) ? (void)0 : dp_abort(__FILE__, __LINE__, #x))

#endif
