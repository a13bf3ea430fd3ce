/* file_map.c: a graph file's bytes, mapped read-only when it is a regular binary file within its
 * reader's limit and with a head the reader accepts (pages of the weights an export carries are
 * never touched: a 350 MB ViT-B/16 reads as fast as its stripped 350 KB graph), else read by
 * dp_file_read, which also gives every refusal its message. */
#include "file_map.h"

#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

enum dp_status file_bytes_open(const char *path, const struct dp_read_spec *spec,
                               struct file_bytes *out, struct dp_error *err) {
    memset(out, 0, sizeof *out);
    int fd = spec->text || !strcmp(path, "-") ? -1 : open(path, O_RDONLY | O_CLOEXEC);
    struct stat sb;
    if (fd >= 0 && fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) && sb.st_size > 0 &&
        (uint64_t)sb.st_size <= spec->max_bytes) {
        size_t len = (size_t)sb.st_size;
        void *p = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
        if (p != MAP_FAILED) {
            size_t head = len < DP_FILE_HEAD_BYTES ? len : DP_FILE_HEAD_BYTES;
            size_t hm = spec->head_max ? spec->head_max(p, head) : 0;
            if ((!spec->check_head || !spec->check_head(p, head)) && !(hm && len > hm)) {
                close(fd);
                out->data = p;
                out->len = len;
                out->mapped = true;
                return DP_OK;
            }
            munmap(p, len); /* a refused head or size: dp_file_read says why */
        }
    }
    if (fd >= 0) close(fd);
    char *buf = NULL;
    size_t len = 0;
    enum dp_status st = dp_file_read(path, spec, &buf, &len, err);
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
