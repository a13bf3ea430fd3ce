/* file_map.h: a graph file's bytes for the binary readers (private to engine/src/io): a regular
 * file is mapped read-only, so the weights an export carries inline (hundreds of MB) are never
 * read, only stepped over; anything else (a pipe, a device) is read, up to a limit. */
#ifndef DP_IO_FILE_MAP_H
#define DP_IO_FILE_MAP_H

#include <stdbool.h>
#include <stddef.h>

#include "dp/status.h"

struct file_bytes {
    const unsigned char *data;
    size_t               len;
    bool                 mapped; /* else data was malloc'd */
};

/* The bytes of path (at most max_bytes); on failure "<path>: <why>" in err. */
enum dp_status file_bytes_open(const char *path, size_t max_bytes, struct file_bytes *out,
                               struct dp_error *err);
void file_bytes_close(struct file_bytes *f);

#endif
