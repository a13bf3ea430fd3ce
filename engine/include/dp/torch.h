/* torch.h: reading a PyTorch checkpoint saved with torch.save(state_dict) directly in C: a zip
 * archive (stored entries) holding <dir>/data.pkl, a pickle of an OrderedDict of tensors rebuilt
 * by torch._utils._rebuild_tensor_v2 from persistent storages, and <dir>/data/<key>, each a raw
 * little-endian storage. Float32 storages (and float64/float16, converted) are supported. */
#ifndef DP_TORCH_H
#define DP_TORCH_H

#include <stddef.h>
#include <stdint.h>

#include "dp/status.h"

#define DP_TORCH_MAX_DIMS 8

struct dp_torch_tensor {
    char   *name;                       /* state_dict key, "conv_layers.0.W" */
    int     n_dims;
    int64_t shape[DP_TORCH_MAX_DIMS];
    size_t  size;                       /* number of elements */
    float  *data;                       /* row-major, contiguous (strides applied) */
};

/* The tensors of a state_dict in pickle order. */
struct dp_torch_state {
    int                     n_tensors;
    struct dp_torch_tensor *tensors;
};

/* Parses a checkpoint held in memory (`name` is used in messages). Fails with DP_ERR_PARSE on a
 * corrupt or truncated archive or pickle, DP_ERR_UNSUPPORTED on compressed entries, unknown
 * pickle opcodes or globals, or storage types other than float/double/half, naming the entry and
 * byte offset. On success *out is filled (free with dp_torch_state_free); on failure it is left
 * empty. */
enum dp_status dp_torch_parse(const unsigned char *buf, size_t len, const char *name,
                              struct dp_torch_state *out, struct dp_error *err);
/* The same from a file. */
enum dp_status dp_torch_load(const char *path, struct dp_torch_state *out, struct dp_error *err);
/* Frees the tensors; out is left empty. NULL-safe. */
void dp_torch_state_free(struct dp_torch_state *s);
/* Index of a tensor by name, or -1. */
int dp_torch_find(const struct dp_torch_state *s, const char *name);

#endif
