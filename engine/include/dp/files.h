/* files.h: how every reader takes a file and every writer puts one. Reading is bounded: a reader
 * names its format's limit and takes at most that many bytes, so an endless stream (/dev/zero, a
 * FIFO that never ends) is refused after a bounded read. Writing is atomic: the output goes to a
 * temporary file beside the target (created exclusively, never through a symbolic link) and is
 * renamed over it only when complete, so a failed or killed write leaves the old file whole and
 * no temporary behind. "-" is standard input for a reader and standard output for a writer.
 *
 * The engine installs no signal handler: a front end that catches SIGINT or SIGTERM calls
 * dp_out_remove_pending() from its handler (it is async-signal-safe) before it dies. */
#ifndef DP_FILES_H
#define DP_FILES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "dp/status.h"

/* What a reader accepts: its format's name for messages ("setting list"), the most bytes it
 * reads, whether it is text (a NUL byte is refused as soon as it is read: /dev/zero stops at
 * once), and an optional check of the first bytes (up to DP_FILE_HEAD_BYTES, fewer for a shorter
 * input) that returns why they cannot start this format, or NULL when they can; and an optional
 * lower limit for an input that starts so (a reader of several formats: a text format's limit
 * once the head shows text), 0 for max_bytes. */
#define DP_FILE_HEAD_BYTES 4096
struct dp_read_spec {
    const char *what;
    size_t      max_bytes;
    bool        text;
    const char *(*check_head)(const unsigned char *head, size_t n);
    size_t (*head_max)(const unsigned char *head, size_t n);
};

/* Reads the whole of path ("-": standard input) into a new NUL-terminated buffer that the caller
 * frees; *len gets its size. The limit is spec->max_bytes, or DRIPLE_MAX_INPUT (bytes, or with a
 * K, M or G suffix) when that is lower: a regular file over it is refused before any byte is
 * read; a pipe, device or FIFO once it passes it (DP_ERR_INVALID, "<path>: more than <limit>
 * and still going: larger than any <what> driple reads"); a malformed DRIPLE_MAX_INPUT fails.
 * A directory or an unreadable file (DP_ERR_IO), a NUL byte in a text format (DP_ERR_PARSE) and
 * a refused head (DP_ERR_UNSUPPORTED) fail naming the path; *out and *len are then untouched. */
enum dp_status dp_file_read(const char *path, const struct dp_read_spec *spec, char **out,
                            size_t *len, struct dp_error *err);

/* The name a reader's messages use for path: "stdin" for "-", else path itself. */
const char *dp_file_name(const char *path);

/* An output being written. */
struct dp_out;

/* Starts writing path: "-" is standard output; a character device, FIFO or socket target
 * (/dev/null, /dev/full, a pipe) is written in place; anything else through a new temporary
 * file in the target's directory that dp_out_commit puts in the target's place. Where the
 * filesystem has O_TMPFILE the file has no name while it is written (even SIGKILL leaves
 * nothing) and takes the target's name in one step (linkat) when there was no target, else a
 * random ".NAME.XXXXXXXX~" name just before the rename over it; elsewhere it is made under such
 * a name with O_EXCL | O_NOFOLLOW. A symbolic link target is followed to the file it names; a
 * directory or a dangling link fails. Returns a new output owned by the caller, who ends it with
 * exactly one of dp_out_commit or dp_out_discard; DP_ERR_IO naming path on failure. */
enum dp_status dp_out_open(const char *path, struct dp_out **out, struct dp_error *err);
/* The stream to write to (borrowed: valid until commit or discard). */
FILE *dp_out_stream(struct dp_out *o);
/* Flushes, syncs and renames the temporary file over the target (for stdout and in-place
 * targets: flushes and checks). Frees o in every case; on any failure the temporary file is
 * removed, the target keeps its old content, and the error names the target and what failed
 * ("write failed: No space left on device"). */
enum dp_status dp_out_commit(struct dp_out *o, struct dp_error *err);
/* Abandons the output: removes the temporary file and frees o (NULL-safe). An in-place target
 * keeps what was written to it. */
void dp_out_discard(struct dp_out *o);
/* Writes len bytes of data to path through dp_out_open / dp_out_commit. */
enum dp_status dp_out_write_all(const char *path, const void *data, size_t len,
                                struct dp_error *err);
/* Removes every temporary file that a write in progress holds under a name. Async-signal-safe:
 * for a front end's SIGINT/SIGTERM handler, which then ends the process. */
void dp_out_remove_pending(void);

/* Creates directory dir and those missing above it (mkdir -p). An existing directory is fine;
 * DP_ERR_IO "<dir>: cannot create directory: <why>" naming the one that cannot be made (a file
 * in the way: "Not a directory"). */
enum dp_status dp_mkdir_p(const char *dir, struct dp_error *err);

#endif
