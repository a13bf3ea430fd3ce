/* json_out.h: JSON output for the front ends (every `--json` printer, the explorer's export),
 * built on cJSON without exposing it. A document is built member by member, then written in
 * one go, so a failure (out of memory, a full disk) never leaves half a document behind. The
 * text is one line: `{"key": value, "list": [1, 2]}`.
 *
 * One number format everywhere: the shortest decimal text that reads back (strtod) as the same
 * double (floats: the shortest that reads back as the same float), "." as the decimal point in
 * every locale, and null for NaN and infinities (JSON has neither).
 *
 *     struct dp_jw *w = dp_jw_new();
 *     dp_jw_str(w, "graph", name);
 *     dp_jw_array(w, "raw");
 *     for (int o = 0; o < n; o++) dp_jw_num(w, NULL, raw[o]);
 *     dp_jw_end(w);
 *     st = dp_jw_print(w, stdout, "stdout", &err);
 *     dp_jw_free(w); */
#ifndef DP_JSON_OUT_H
#define DP_JSON_OUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "dp/status.h"

struct dp_jw;

/* A new document whose root is an empty object, the current container; owned by the caller
 * (dp_jw_free). NULL when out of memory. */
struct dp_jw *dp_jw_new(void);
/* The same with an empty array as the root. */
struct dp_jw *dp_jw_new_array(void);
/* A root array written to f element by element (each as soon as it is complete, then freed:
 * a listing of a million objects holds one at a time); dp_jw_print with the same f closes it.
 * A failure midway leaves the elements written so far. `name` (for messages) is borrowed. NULL
 * when out of memory. */
struct dp_jw *dp_jw_new_stream(FILE *f, const char *name);
void dp_jw_free(struct dp_jw *w); /* NULL-safe */

/* Each adds one value to the current container: as member `key` of an object (key must not be
 * NULL there), as the next element of an array (key ignored). Out of memory is remembered and
 * reported by dp_jw_print / dp_jw_save, so callers need not check each call; w may be NULL
 * (then nothing happens and printing fails). */
void dp_jw_num(struct dp_jw *w, const char *key, double v);
void dp_jw_float(struct dp_jw *w, const char *key, float v);
void dp_jw_int(struct dp_jw *w, const char *key, int64_t v);
/* v rounded to `decimals` places first (0..9), for measured times: digits past what the clock
 * resolves are noise, not information. */
void dp_jw_fixed(struct dp_jw *w, const char *key, double v, int decimals);
void dp_jw_str(struct dp_jw *w, const char *key, const char *s); /* NULL: null */
void dp_jw_bool(struct dp_jw *w, const char *key, bool v);
void dp_jw_null(struct dp_jw *w, const char *key);
/* Opens an object or array as the new current container; dp_jw_end closes it (the root is
 * never closed). Nesting deeper than 32, or an end without an open container, is a bug
 * (DP_ASSERT). */
void dp_jw_object(struct dp_jw *w, const char *key);
void dp_jw_array(struct dp_jw *w, const char *key);
void dp_jw_end(struct dp_jw *w);

/* Writes the document and a newline to f (`name` in messages: "stdout", a path). DP_ERR_NOMEM
 * when a member could not be added, DP_ERR_IO when the stream fails. */
enum dp_status dp_jw_print(const struct dp_jw *w, FILE *f, const char *name,
                           struct dp_error *err);
/* The same into the file at path, atomically (dp_out_open: created or replaced whole; "-" is
 * stdout); DP_ERR_IO naming path on failure. */
enum dp_status dp_jw_save(const struct dp_jw *w, const char *path, struct dp_error *err);

/* The number format above, into buf (at least 32 bytes): "null", "0.1", "1e+21", "-3". */
void dp_json_num_text(double v, char *buf, size_t n);

#endif
