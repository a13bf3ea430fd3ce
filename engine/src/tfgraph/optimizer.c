/* optimizer.c: the end of a training graph: the gradient seed, the backward pass (gradients.c),
 * loss scaling under mixed precision, one Apply* update per trainable variable with its slots,
 * the global step and the train_op NoOp; and the optimizers' names. */
#include "tfgraph_impl.h"

#include <stdlib.h>
#include <string.h>

#include "dp/cost.h"

const char *dp_optimizer_name(enum dp_optimizer o) {
    static const char *const names[] = {"sgd", "momentum", "adam"};
    _Static_assert(sizeof names / sizeof names[0] == DP_OPT_COUNT, "update names");
    return (unsigned)o < DP_OPT_COUNT ? names[o] : "sgd";
}

bool dp_optimizer_parse(const char *s, enum dp_optimizer *out) {
    for (int i = 0; s && i < DP_OPT_COUNT; i++)
        if (!strcmp(s, dp_optimizer_name((enum dp_optimizer)i))) {
            *out = (enum dp_optimizer)i;
            return true;
        }
    return false;
}

/* --- optimizer ----------------------------------------------------------------------------- */

static int node_named(struct zb *b, const char *name, const char *op, const char *dev,
                      const int *in_nodes, int n_in, int n_dims, const int64_t *dims,
                      enum dp_dtype dt) {
    return zb_add_node(b, name, op, dev, n_dims, dims, dt, in_nodes, n_in);
}

static void add_ctrl(struct zb *b, int dst, int src) {
    if (b->st || dst < 0 || src < 0) return;
    struct dp_error e = {0};
    if (dp_graph_add_input(b->g, dst, src, true, &e)) zb_fail(b, e.status, "%s", e.msg);
}

/* The backward pass from loss: the gradient seed (of loss x the loss scale under mixed
 * precision) and each tape op's gradients, last op first. Returns the scale's node (-1 when
 * fp32). */
static int backprop(struct zb *b, int loss) {
    int scale = -1, target = loss;
    if (b->opts.precision == DP_PREC_MIXED) { /* the gradients of loss * S, unscaled per
                                               * variable by zb_finish */
        scale = zb_emit(b, "loss_scale/scale", "Const", GPU_DEV, NULL, 0, 0, NULL, DP_DTYPE_F32);
        int ins[2] = {loss, scale};
        target = zb_fwd(b, K_BINARY, "loss_scale/mul", "Mul", ins, 2, 0, NULL, DP_DTYPE_F32, NULL);
    }
    int64_t zero = 0;
    int shp = zb_emit(b, "gradients/Shape", "Const", GPU_DEV, NULL, 0, 1, &zero, DP_DTYPE_I32);
    int ones = zb_emit(b, "gradients/grad_ys_0", "Const", GPU_DEV, NULL, 0, 0, NULL, DP_DTYPE_F32);
    int fi[2] = {shp, ones};
    int seed = zb_emit(b, "gradients/Fill", "Fill", GPU_DEV, fi, 2, 0, NULL, DP_DTYPE_F32);
    if (target >= 0) b->t[target].grad = true;
    zb_add_contrib(b, target, seed);
    for (int i = b->n_tape - 1; i >= 0 && !b->st; i--) zb_backward_op(b, &b->tape[i]);
    return scale;
}

/* The global step (on the CPU, as TF places it): its variable, initializer and AssignAdd;
 * returns the AssignAdd's node. */
static int global_step(struct zb *b) {
    int gs = node_named(b, "global_step", "VariableV2", CPU_DEV, NULL, 0, 0, NULL, DP_DTYPE_I64);
    int gs_init = node_named(b, "global_step/Initializer/zeros", "Const", CPU_DEV, NULL, 0, 0,
                             NULL, DP_DTYPE_I64);
    int gi[2] = {gs, gs_init};
    int gs_assign = node_named(b, "global_step/Assign", "Assign", CPU_DEV, gi, 2, 0, NULL,
                               DP_DTYPE_I64);
    if (gs_init >= 0) zb_set_attr(b, gs_init, "phase", "init");
    if (gs_assign >= 0) zb_set_attr(b, gs_assign, "phase", "init");
    if (gs >= 0) zb_set_attr(b, gs, "trainable", "false");
    int one = node_named(b, "global_step/add/y", "Const", CPU_DEV, NULL, 0, 0, NULL, DP_DTYPE_I64);
    int ai[2] = {gs, one};
    return node_named(b, "global_step/AssignAdd", "AssignAdd", CPU_DEV, ai, 2, 0, NULL,
                      DP_DTYPE_I64);
}

enum dp_status zb_finish(struct zb *b, int loss, struct dp_error *err) {
    if (b->st || loss < 0) goto done;
    bool mixed = b->opts.precision == DP_PREC_MIXED;
    int scale = backprop(b, loss);

    /* The optimizer. */
    enum dp_optimizer opt = b->opts.optimizer;
    const char *oname = opt == DP_OPT_SGD ? "GradientDescent" : opt == DP_OPT_MOMENTUM ? "Momentum"
                                                                                        : "Adam";
    const char *apply = opt == DP_OPT_SGD ? "ApplyGradientDescent"
                        : opt == DP_OPT_MOMENTUM ? "ApplyMomentum" : "ApplyAdam";
    char nm[NAME_MAX_LEN + 64];
    zb_sfmt(nm, sizeof nm, "%s/learning_rate", oname);
    int lr = node_named(b, nm, "Const", GPU_DEV, NULL, 0, 0, NULL, DP_DTYPE_F32);
    int mom = -1, b1 = -1, b2 = -1, eps = -1, b1p = -1, b2p = -1, b1p_ref = -1, b2p_ref = -1;
    if (opt == DP_OPT_MOMENTUM) {
        zb_sfmt(nm, sizeof nm, "%s/momentum", oname);
        mom = node_named(b, nm, "Const", GPU_DEV, NULL, 0, 0, NULL, DP_DTYPE_F32);
    } else if (opt == DP_OPT_ADAM) {
        b1 = node_named(b, "Adam/beta1", "Const", GPU_DEV, NULL, 0, 0, NULL, DP_DTYPE_F32);
        b2 = node_named(b, "Adam/beta2", "Const", GPU_DEV, NULL, 0, 0, NULL, DP_DTYPE_F32);
        eps = node_named(b, "Adam/epsilon", "Const", GPU_DEV, NULL, 0, 0, NULL, DP_DTYPE_F32);
        char saved[NAME_MAX_LEN];
        zb_sfmt(saved, sizeof saved, "%s", b->scope);
        b->scope[0] = '\0';
        b1p = zb_new_var(b, "beta1_power", 0, NULL, "Const", false, false, false, &b1p_ref);
        b2p = zb_new_var(b, "beta2_power", 0, NULL, "Const", false, false, false, &b2p_ref);
        zb_sfmt(b->scope, sizeof b->scope, "%s", saved);
        /* Optimizer state, not model parameters. */
        for (int k = 0; k < 2; k++) {
            int ref = k ? b2p_ref : b1p_ref;
            if (ref < 0) continue;
            dp_graph_set_cost(b->g, b->t[ref].node, 0, 0, 0);
            zb_set_attr(b, b->t[ref].node, "slot", "true");
        }
    }
    int n_apply = 0, cap_apply = 0;
    int *applies = NULL;
    int n_model_vars = b->n_vars; /* beta powers were appended after the model's variables */
    if (opt == DP_OPT_ADAM) n_model_vars -= 2;
    for (int v = 0; v < n_model_vars && !b->st; v++) {
        struct var *V = &b->vars[v];
        if (!V->trainable) continue;
        const struct dp_node *vn = dp_graph_node(b->g, (size_t)b->t[V->ref].node);
        char vname[NAME_MAX_LEN];
        zb_sfmt(vname, sizeof vname, "%s", vn->name);
        int g = zb_grad_sum(b, V->read, vname);
        if (g < 0) continue; /* unused by the loss */
        if (mixed) {
            zb_sfmt(nm, sizeof nm, "loss_scale/unscale/%s", vname);
            int ins[2] = {g, scale};
            g = zb_emit(b, nm, "RealDiv", GPU_DEV, ins, 2, b->t[V->ref].n_dims, b->t[V->ref].dims,
                     DP_DTYPE_F32);
        }
        int n_dims = b->t[V->ref].n_dims;
        int64_t dims[DP_MAX_DIMS];
        memcpy(dims, b->t[V->ref].dims, sizeof dims);
        int slots[2] = {-1, -1}, n_slots = opt == DP_OPT_SGD ? 0 : opt == DP_OPT_MOMENTUM ? 1 : 2;
        char saved[NAME_MAX_LEN];
        zb_sfmt(saved, sizeof saved, "%s", b->scope);
        for (int s = 0; s < n_slots; s++) {
            zb_sfmt(b->scope, sizeof b->scope, "%s", vname);
            zb_new_var(b, s == 0 ? oname : "Adam_1", n_dims, dims, "zeros", false, false, true,
                       &slots[s]);
        }
        zb_sfmt(b->scope, sizeof b->scope, "%s", saved);
        int ins[10], n = 0;
        ins[n++] = b->t[V->ref].node;
        for (int s = 0; s < n_slots; s++) ins[n++] = slots[s] >= 0 ? b->t[slots[s]].node : -1;
        if (opt == DP_OPT_ADAM) {
            ins[n++] = b->t[b1p].node;
            ins[n++] = b->t[b2p].node;
        }
        ins[n++] = lr;
        if (opt == DP_OPT_MOMENTUM) ins[n++] = -1; /* grad goes before momentum */
        if (opt == DP_OPT_ADAM) {
            ins[n++] = b1;
            ins[n++] = b2;
            ins[n++] = eps;
        }
        if (opt == DP_OPT_MOMENTUM) {
            ins[n - 1] = g >= 0 ? b->t[g].node : -1;
            ins[n++] = mom;
        } else {
            ins[n++] = g >= 0 ? b->t[g].node : -1;
        }
        zb_sfmt(nm, sizeof nm, "%s/update_%s/%s", oname, vname, apply);
        int a = node_named(b, nm, apply, GPU_DEV, ins, n, n_dims, dims, DP_DTYPE_F32);
        if (a >= 0 && opt == DP_OPT_MOMENTUM) zb_set_attr(b, a, "use_nesterov", "false");
        if (a < 0) break;
        if (n_apply == cap_apply) {
            int nc = cap_apply ? cap_apply * 2 : 256;
            int *p = realloc(applies, (size_t)nc * sizeof *p);
            if (!p) { zb_fail(b, DP_ERR_NOMEM, "out of memory"); break; }
            applies = p;
            cap_apply = nc;
        }
        applies[n_apply++] = a;
    }
    int done_nodes[4], n_done = 0;
    if (opt == DP_OPT_ADAM && !b->st) {
        for (int k = 0; k < 2; k++) {
            int pw = k ? b2p : b1p, beta = k ? b2 : b1, ref = k ? b2p_ref : b1p_ref;
            int ins[2] = {b->t[pw].node, beta};
            int m = node_named(b, k ? "Adam/mul_1" : "Adam/mul", "Mul", GPU_DEV, ins, 2, 0, NULL,
                               DP_DTYPE_F32);
            for (int i = 0; i < n_apply; i++) add_ctrl(b, m, applies[i]);
            int ai[2] = {b->t[ref].node, m};
            done_nodes[n_done++] = node_named(b, k ? "Adam/Assign_1" : "Adam/Assign", "Assign",
                                              GPU_DEV, ai, 2, 0, NULL, DP_DTYPE_F32);
        }
    }
    int step = global_step(b);
    zb_sfmt(nm, sizeof nm, "%s", oname);
    int group = node_named(b, nm, "NoOp", GPU_DEV, NULL, 0, 0, NULL, DP_DTYPE_UNKNOWN);
    for (int i = 0; i < n_apply; i++) add_ctrl(b, group, applies[i]);
    for (int i = 0; i < n_done; i++) add_ctrl(b, group, done_nodes[i]);
    for (int i = 0; i < b->n_updates; i++) add_ctrl(b, step, b->updates[i]);
    add_ctrl(b, step, group);
    int train = node_named(b, "train_op", "NoOp", GPU_DEV, NULL, 0, 0, NULL, DP_DTYPE_UNKNOWN);
    add_ctrl(b, train, step);
    add_ctrl(b, train, group);
    free(applies);
    if (!b->st) dp_cost_fill(b->g, dp_graph_batch(b->g), true);
done:
    return zb_status(b, err);
}
