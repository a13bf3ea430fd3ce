/* onnx_rnn.c: ONNX's recurrent layers (LSTM, GRU, RNN; forward, reverse or bidirectional)
 * statically unrolled over their time steps, as TF1's static_rnn builds them: the input
 * unstacked into steps, per step the input and recurrent products, the gates and the new hidden
 * (and cell) state, the outputs stacked again. Each step costs its two matrix products, so a
 * sequence of T steps costs T times a step, and the gradients run through every step. */
#include "onnx_impl.h"

#include <stdlib.h>
#include <string.h>

#define MAX_STEPS 4096

enum cell { CELL_LSTM, CELL_GRU, CELL_RNN };

struct rnn {
    struct zb *b;
    enum cell  cell;
    int64_t    hidden, gates;
    int        w, r, bias_x, bias_h; /* per direction: [G, I], [G, H], [G], [G] (bias may be -1) */
    bool       linear_before_reset;
};

/* Direction d's [G, X] slice of a [num_dir, G, X] weight. */
static int direction(struct zb *b, int t, int d, int n_dir) {
    int64_t g = zb_dim(b, t, 1), x = zb_dim(b, t, 2), gx[2] = {g, x};
    if (n_dir > 1) t = zb_slice(b, t, 0, d, 1);
    return zb_reshape(b, t, 2, gx);
}

static int gate_sum(struct rnn *c, int xw, int hr) {
    int s = zb_binary(c->b, "AddV2", xw, hr);
    if (c->bias_x >= 0) s = zb_bias_add(c->b, s, c->bias_x);
    if (c->bias_h >= 0) s = zb_bias_add(c->b, s, c->bias_h);
    return s;
}

/* One step: the new hidden state from input x [B, I] and state h (and cell *cs for LSTM). */
static int step(struct rnn *c, int x, int h, int *cs) {
    struct zb *b = c->b;
    int xw = zb_matmul(b, x, c->w, false, true), hr = zb_matmul(b, h, c->r, false, true);
    if (c->cell == CELL_RNN) return zb_unary(b, "Tanh", gate_sum(c, xw, hr));
    if (c->cell == CELL_LSTM) { /* gates i, o, f, c */
        int g[4];
        zb_split(b, gate_sum(c, xw, hr), 4, 1, g);
        int i = zb_unary(b, "Sigmoid", g[0]), o = zb_unary(b, "Sigmoid", g[1]);
        int f = zb_unary(b, "Sigmoid", g[2]), cand = zb_unary(b, "Tanh", g[3]);
        *cs = zb_binary(b, "AddV2", zb_binary(b, "Mul", f, *cs), zb_binary(b, "Mul", i, cand));
        return zb_binary(b, "Mul", o, zb_unary(b, "Tanh", *cs));
    }
    /* GRU, gates z, r, h: h' = h~ + z (h - h~) */
    if (c->bias_x >= 0) xw = zb_bias_add(b, xw, c->bias_x);
    if (c->bias_h >= 0) hr = zb_bias_add(b, hr, c->bias_h);
    int xg[3], hg[3];
    zb_split(b, xw, 3, 1, xg);
    zb_split(b, hr, 3, 1, hg);
    int z = zb_unary(b, "Sigmoid", zb_binary(b, "AddV2", xg[0], hg[0]));
    int r = zb_unary(b, "Sigmoid", zb_binary(b, "AddV2", xg[1], hg[1]));
    int cand;
    if (c->linear_before_reset) {
        cand = zb_unary(b, "Tanh", zb_binary(b, "AddV2", xg[2], zb_binary(b, "Mul", r, hg[2])));
    } else { /* (r h) R_h: the recurrent product of the reset state, once more */
        int64_t hh = c->hidden, gx[2] = {hh, hh};
        int rh = zb_slice(b, c->r, 0, 2 * hh, hh);
        rh = zb_reshape(b, rh, 2, gx);
        cand = zb_unary(b, "Tanh", zb_binary(b, "AddV2", xg[2],
                                             zb_matmul(b, zb_binary(b, "Mul", r, h), rh, false,
                                                       true)));
    }
    return zb_binary(b, "AddV2", cand, zb_binary(b, "Mul", z, zb_binary(b, "Sub", h, cand)));
}

bool onnx_map_rnn(struct imp *im) {
    const struct o_node *n = im->node;
    struct zb *b = im->b;
    struct rnn c = {.b = b};
    c.cell = !strcmp(n->op, "LSTM") ? CELL_LSTM : !strcmp(n->op, "GRU") ? CELL_GRU : CELL_RNN;
    const struct o_attr *hs = onnx_attr(n, "hidden_size"), *dir = onnx_attr(n, "direction");
    const struct o_attr *lay = onnx_attr(n, "layout"), *lbr = onnx_attr(n, "linear_before_reset");
    struct oval *xv = onnx_in(im, 0);
    if (!hs || hs->i < 1 || hs->i > ZB_MAX_DIM)
        return onnx_fail(im, DP_ERR_INVALID, "hidden_size missing or out of range") == 0;
    if (!xv || xv->n_dims != 3)
        return onnx_fail(im, DP_ERR_SHAPE, "the input must be [steps, batch, features]") == 0;
    bool batch_first = lay && lay->i;
    struct sym steps_s = xv->dims[batch_first ? 1 : 0];
    if (!steps_s.known || steps_s.k || steps_s.c < 1 || steps_s.c > MAX_STEPS)
        return onnx_fail(im, DP_ERR_UNSUPPORTED, "a sequence of unknown length or over %d steps "
                         "(export with a fixed sequence length)", MAX_STEPS) == 0;
    int steps = (int)steps_s.c, n_dir = dir && dir->s && !strcmp(dir->s, "bidirectional") ? 2 : 1;
    bool reverse = dir && dir->s && !strcmp(dir->s, "reverse");
    c.hidden = hs->i;
    c.gates = (c.cell == CELL_LSTM ? 4 : c.cell == CELL_GRU ? 3 : 1) * c.hidden;
    c.linear_before_reset = lbr && lbr->i;
    int x = onnx_in_t(im, 0), w = onnx_in_t(im, 1), r = onnx_in_t(im, 2);
    int bias = onnx_in(im, 3) ? onnx_in_t(im, 3) : -1;
    int h0 = onnx_in(im, 5) ? onnx_in_t(im, 5) : -1, c0 = onnx_in(im, 6) ? onnx_in_t(im, 6) : -1;
    if (x < 0 || w < 0 || r < 0 || im->d->st) return false;
    if (zb_rank(b, w) != 3 || zb_rank(b, r) != 3 || zb_dim(b, w, 0) != n_dir ||
        zb_dim(b, w, 1) != c.gates || zb_dim(b, r, 2) != c.hidden)
        return onnx_fail(im, DP_ERR_SHAPE, "weights of the wrong shape for %lld hidden units",
                         (long long)c.hidden) == 0;
    onnx_scope(im);
    if (batch_first) {
        int perm[3] = {1, 0, 2};
        x = zb_transpose(b, x, perm);
    }
    int64_t batch = zb_dim(b, x, 1), bh[2] = {batch, c.hidden};
    int *xs = malloc((size_t)steps * 3 * sizeof *xs);
    if (!xs) {
        zb_pop(b);
        return pb_oom(im->d);
    }
    int *ys = xs + steps, *ys2 = ys + steps, last_h[2] = {-1, -1}, last_c[2] = {-1, -1};
    zb_unstack(b, x, steps, 0, xs);
    for (int d = 0; d < n_dir; d++) {
        zb_push(b, "direction_%d", d);
        c.w = direction(b, w, d, n_dir);
        c.r = direction(b, r, d, n_dir);
        c.bias_x = c.bias_h = -1;
        if (bias >= 0) { /* [num_dir, 2G]: input and recurrent biases */
            int64_t g2 = 2 * c.gates;
            int bd = n_dir > 1 ? zb_slice(b, bias, 0, d, 1) : bias, parts[2];
            zb_split(b, zb_reshape(b, bd, 1, &g2), 2, 0, parts);
            c.bias_x = parts[0];
            c.bias_h = parts[1];
        }
        int h = h0 >= 0 ? zb_reshape(b, n_dir > 1 ? zb_slice(b, h0, 0, d, 1) : h0, 2, bh)
                        : zb_const(b, "zero_state", 2, bh, zb_dtype(b, x));
        int cs = c.cell != CELL_LSTM ? -1
                 : c0 >= 0 ? zb_reshape(b, n_dir > 1 ? zb_slice(b, c0, 0, d, 1) : c0, 2, bh)
                           : h;
        int *out = d ? ys2 : ys;
        for (int t = 0; t < steps && !zb_status(b, NULL); t++) {
            int at = (reverse || d == 1) ? steps - 1 - t : t;
            zb_push(b, "step_%d", at);
            h = step(&c, xs[at], h, &cs);
            zb_pop(b);
            out[at] = h;
        }
        last_h[d] = h;
        last_c[d] = cs;
        zb_pop(b);
    }
    int y = -1, yh = -1, yc = -1;
    if (!zb_status(b, NULL)) {
        /* Y [steps, num_dir, batch, hidden]; Y_h, Y_c [num_dir, batch, hidden] */
        int64_t yd[4] = {steps, 1, batch, c.hidden}, sd[3] = {1, batch, c.hidden};
        int dirs[2];
        for (int d = 0; d < n_dir; d++)
            dirs[d] = zb_reshape(b, zb_stack(b, d ? ys2 : ys, steps, 0), 4, yd);
        y = n_dir > 1 ? zb_concat(b, dirs, 2, 1) : dirs[0];
        for (int d = 0; d < n_dir; d++) dirs[d] = zb_reshape(b, last_h[d], 3, sd);
        yh = n_dir > 1 ? zb_concat(b, dirs, 2, 0) : dirs[0];
        if (c.cell == CELL_LSTM && n->n_out > 2 && *n->out[2]) {
            for (int d = 0; d < n_dir; d++) dirs[d] = zb_reshape(b, last_c[d], 3, sd);
            yc = n_dir > 1 ? zb_concat(b, dirs, 2, 0) : dirs[0];
        }
        if (batch_first && y >= 0) { /* layout 1: Y [batch, steps, num_dir, hidden] */
            int perm[4] = {2, 0, 1, 3};
            y = zb_transpose(b, y, perm);
        }
    }
    free(xs);
    zb_pop(b);
    if (zb_status(b, NULL)) return false;
    return onnx_set_tensor(im, 0, y) && (n->n_out < 2 || onnx_set_tensor(im, 1, yh)) &&
           (yc < 0 || onnx_set_tensor(im, 2, yc));
}
