/* json_util.h: the shared helpers of the JSON loaders (private to the engine): read a file and
 * parse it with line/column on failure, and typed field access that names the JSON path of any
 * error. Only *_json.c files include this and cJSON. */
#ifndef DP_JSON_UTIL_H
#define DP_JSON_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cJSON.h>

#include "dp/files.h"
#include "dp/status.h"

/* At most this many values in one JSON text (16.7 million: a graph of about a million ops),
 * counted before cJSON allocates: the parsed tree's memory cap, about 2 GB (2^25 one-character
 * strings took 3.8 GB). */
#define DP_JSON_MAX_VALUES (1 << 24)

/* Parses text as JSON; on failure names "<name>:<line>:<col>: JSON syntax error near '...'" or a
 * truncation. A NUL byte, a \u0000 escape inside a string (cJSON would cut the string there) and
 * more than DP_JSON_MAX_VALUES values are refused before parsing. The caller owns the result
 * (cJSON_Delete). */
enum dp_status dp_json_parse(const char *text, size_t len, const char *name, cJSON **out,
                             struct dp_error *err);
/* Reads a file ("-": stdin) through dp_file_read with spec (a text format) and parses it. */
enum dp_status dp_json_load(const char *path, const struct dp_read_spec *spec, cJSON **out,
                            struct dp_error *err);

/* Checks obj["format"] == want ("driple-grouped/1"). */
enum dp_status dp_json_check_format(const cJSON *obj, const char *want, const char *name,
                                    struct dp_error *err);

/* Typed member access. `path` is the JSON path of obj ("$.groups[3]") for messages. A missing
 * member fails unless `optional`, in which case *out keeps its value and DP_OK is returned. */
enum dp_status dp_json_get_number(const cJSON *obj, const char *key, bool optional,
                                  const char *name, const char *path, double *out,
                                  struct dp_error *err);
enum dp_status dp_json_get_int(const cJSON *obj, const char *key, bool optional, int64_t lo,
                               int64_t hi, const char *name, const char *path, int64_t *out,
                               struct dp_error *err);
/* *out borrows the string inside obj. */
enum dp_status dp_json_get_string(const cJSON *obj, const char *key, bool optional,
                                  const char *name, const char *path, const char **out,
                                  struct dp_error *err);
/* Copies the string member into dst (cap bytes, NUL included), failing naming the path when it is
 * longer than cap - 1 characters (a fixed-size field must not be silently cut). A missing or null
 * member fails unless `optional`, in which case dst keeps its value and DP_OK is returned. */
enum dp_status dp_json_copy_string(const cJSON *obj, const char *key, bool optional,
                                   const char *name, const char *path, char *dst, size_t cap,
                                   struct dp_error *err);
/* *out borrows; fails unless the member is an array (or absent and optional: *out = NULL). */
enum dp_status dp_json_get_array(const cJSON *obj, const char *key, bool optional,
                                 const char *name, const char *path, const cJSON **out,
                                 struct dp_error *err);
/* *out borrows; fails unless the member is an object (or absent and optional: *out = NULL). */
enum dp_status dp_json_get_object(const cJSON *obj, const char *key, bool optional,
                                  const char *name, const char *path, const cJSON **out,
                                  struct dp_error *err);

/* Writes a cJSON tree to path (pretty when `pretty`) through dp_out_write_all: atomically, "-"
 * is stdout. */
enum dp_status dp_json_save(const cJSON *root, const char *path, bool pretty, struct dp_error *err);

/* Adds a number member (dp_json_number) to o; false when out of memory. */
bool dp_json_add_number(cJSON *o, const char *key, double v);
/* Appends item to array a, taking ownership (item is deleted on failure; NULL fails). */
bool dp_json_append(cJSON *a, cJSON *item);
/* Reads an undirected edge list [[i, j], ...] over n_groups groups into dst (2 x the array's
 * size ints): each pair normalised to i < j, then sorted and de-duplicated; *n_edges gets the
 * count kept. Self loops and indices outside [0, n_groups) fail naming "<name>:<path>[e]". */
enum dp_status dp_json_read_edges(const cJSON *edges, int n_groups, const char *name,
                                  const char *path, int *dst, int *n_edges, struct dp_error *err);

/* A number that round-trips a double in few characters (cJSON's default loses nothing but is
 * long); returns NULL on OOM. */
cJSON *dp_json_number(double v);

#endif
