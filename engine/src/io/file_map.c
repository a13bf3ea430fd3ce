/* file_map.c: a graph file's bytes, mapped read-only when it is a regular file (pages of the
 * weights an export carries are never touched: a 350 MB ViT-B/16 reads as fast as its stripped
 * 350 KB graph), else read through dp_read_file's bounded reader. */
#include "file_map.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/json_util.h"

enum dp_status file_bytes_open(const char *path, size_t max_bytes, struct file_bytes *out,
                               struct dp_error *err) {
    memset(out, 0, sizeof *out);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat sb;
    if (fd >= 0 && fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) && sb.st_size > 0) {
        if ((uint64_t)sb.st_size > max_bytes) {
            close(fd);
            return dp_error_set(err, DP_ERR_INVALID, "%s: larger than %zu bytes", path, max_bytes);
        }
        void *p = mmap(NULL, (size_t)sb.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
        close(fd);
        if (p != MAP_FAILED) {
            out->data = p;
            out->len = (size_t)sb.st_size;
            out->mapped = true;
            return DP_OK;
        }
    } else if (fd >= 0) {
        close(fd);
    }
    /* not mappable (a pipe, a device, an empty file): read it, bounded */
    char *buf = NULL;
    size_t len = 0;
    enum dp_status st = dp_read_file(path, max_bytes, &buf, &len, err);
    if (st) return st;
    out->data = (const unsigned char *)buf;
    out->len = len;
    return DP_OK;
}

void file_bytes_close(struct file_bytes *f) {
    if (!f->data) return;
    if (f->mapped) munmap((void *)f->data, f->len);
    else free((void *)f->data);
    f->data = NULL;
}
