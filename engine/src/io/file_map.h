/* file_map.h: a graph file's bytes for the binary readers (private to engine/src/io): a regular
 * file is mapped read-only, so the weights an export carries inline (hundreds of MB) are never
 * read, only stepped over; anything else (stdin "-", a pipe, a device, a file the reader's spec
 * refuses) goes through dp_file_read, bounded, with its messages. */
#ifndef DP_IO_FILE_MAP_H
#define DP_IO_FILE_MAP_H

#include <stdbool.h>
#include <stddef.h>

#include "dp/files.h"

struct file_bytes {
    const unsigned char *data;
    size_t               len;
    bool                 mapped; /* else data was malloc'd (and NUL-terminated) */
};

/* The bytes of path read by spec's rules (a binary spec is mapped when it can be; a text spec is
 * always read); on failure dp_file_read's error. Close with file_bytes_close. */
enum dp_status file_bytes_open(const char *path, const struct dp_read_spec *spec,
                               struct file_bytes *out, struct dp_error *err);
void file_bytes_close(struct file_bytes *f);

#endif
