/* test_ops.c: the op registry (dp/ops.h): one row per op type gives its class, flags, optimizer
 * slots and Winograd eligibility, and the cost rule dp_cost_node applies (grouped convolutions
 * included). */
#include <string.h>

#include "dp/cost.h"
#include "dp/ops.h"
#include "test.h"

static void test_flags(void) {
    static const char *const vars[] = {"VariableV2", "VariableV1", "Variable", "VarHandleOp"};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
        CHECK(dp_op_is_variable(vars[i]));
        CHECK(dp_op_class(vars[i]) == DP_OPCLASS_NONE);
    }
    CHECK(!dp_op_is_variable("Const") && dp_op_is_constant("Const"));
    CHECK(!dp_op_is_variable(NULL) && !dp_op_is_alias(NULL) && dp_op_class(NULL) ==
                                                                   DP_OPCLASS_ELEMWISE);
    static const char *const alias[] = {"Identity", "Reshape", "Squeeze", "ExpandDims",
                                        "Snapshot", "StopGradient", "PreventGradient"};
    for (size_t i = 0; i < sizeof alias / sizeof alias[0]; i++) CHECK(dp_op_is_alias(alias[i]));
    CHECK(!dp_op_is_alias("Transpose") && !dp_op_is_alias("Relu"));
    /* Snapshot aliases for memory but keeps its element-wise cost. */
    CHECK(dp_op_class("Snapshot") == DP_OPCLASS_ELEMWISE);
    CHECK(dp_op_is_input_pipeline("IteratorGetNext") &&
          dp_op_is_input_pipeline("QueueDequeueUpToV2"));
    CHECK(!dp_op_is_input_pipeline("IteratorV2") && dp_op_class("IteratorV2") == DP_OPCLASS_INPUT);
    CHECK(dp_op_is_update("AssignSub") && dp_op_is_update("AssignVariableOp") &&
          !dp_op_is_update("ApplyAdam"));
    CHECK(dp_op_reads_more("Split") && dp_op_reads_more("Unpack") && !dp_op_reads_more("Slice"));
}

static void test_slots(void) {
    CHECK(dp_op_optimizer_slots("ApplyGradientDescent") == 0);
    CHECK(dp_op_optimizer_slots("ApplyMomentum") == 1);
    CHECK(dp_op_optimizer_slots("ResourceApplyMomentum") == 1); /* the ApplyMomentum row */
    CHECK(dp_op_optimizer_slots("ApplyAdam") == 2);
    CHECK(dp_op_optimizer_slots("ResourceSparseApplyAdagrad") == 1);
    CHECK(dp_op_optimizer_slots("ApplyRMSProp") == 2);
    CHECK(dp_op_optimizer_slots("ApplyCenteredRMSProp") == 3);
    CHECK(dp_op_optimizer_slots("ResourceApplyCenteredRMSProp") == 3);
    /* Updates the registry does not list: the slots their algorithm's name implies. */
    CHECK(dp_op_class("ResourceApplyFancyAdamish") == DP_OPCLASS_OPTIMIZER);
    CHECK(dp_op_optimizer_slots("ResourceApplyFancyAdamish") == 2);
    CHECK(dp_op_optimizer_slots("ApplyNewMomentum") == 1);
    CHECK(dp_op_optimizer_slots("MatMul") == 0 && dp_op_optimizer_slots("AdamLooking") == 0);
}

static int add(struct dp_graph *g, const char *name, const char *op, int n_dims,
               const int64_t *dims, const int *ins, int n_in) {
    int idx = -1;
    CHECK(dp_graph_add_node(g, name, op, "/device:GPU:0", n_dims, dims, DP_DTYPE_F32, &idx,
                            NULL) == DP_OK);
    for (int k = 0; k < n_in; k++) CHECK(dp_graph_add_input(g, idx, ins[k], false, NULL) == DP_OK);
    return idx;
}

static void test_winograd_and_grouped_cost(void) {
    struct dp_graph *g = dp_graph_init("conv");
    int64_t xd[4] = {-1, 32, 28, 28}, w3[4] = {3, 3, 32, 64}, w5[4] = {5, 5, 32, 64};
    int64_t gw[4] = {3, 3, 8, 64}, yd[4] = {-1, 64, 28, 28};
    int x = add(g, "x", "Placeholder", 4, xd, NULL, 0);
    int f3 = add(g, "w3", "VariableV2", 4, w3, NULL, 0);
    int f5 = add(g, "w5", "VariableV2", 4, w5, NULL, 0);
    int fg = add(g, "wg", "VariableV2", 4, gw, NULL, 0);
    int c3 = add(g, "c3", "Conv2D", 4, yd, (int[]){x, f3}, 2);
    int c5 = add(g, "c5", "Conv2D", 4, yd, (int[]){x, f5}, 2);
    int cs = add(g, "cs", "Conv2D", 4, yd, (int[]){x, f3}, 2);
    dp_graph_set_attr(g, cs, "strides", "[1, 1, 2, 2]");
    int bf = add(g, "bf", "Conv2DBackpropFilter", 4, w3, (int[]){x, x, c3}, 3);
    int cg = add(g, "cg", "Conv2D", 4, yd, (int[]){x, fg}, 2); /* 4 groups of 8 channels */
    CHECK(dp_op_winograd_eligible(g, dp_graph_node(g, (size_t)c3)));
    CHECK(!dp_op_winograd_eligible(g, dp_graph_node(g, (size_t)c5)));
    CHECK(!dp_op_winograd_eligible(g, dp_graph_node(g, (size_t)cs)));
    CHECK(dp_op_winograd_eligible(g, dp_graph_node(g, (size_t)bf)));
    CHECK(!dp_op_winograd_eligible(g, dp_graph_node(g, (size_t)x)));
    double f, by;
    dp_cost_node(g, (size_t)cg, 2, &f, &by);
    CHECK_NEAR(f, dp_cost_conv2d_flops(2, 28, 28, 32 / 4, 64, 3, 3), 1);
    CHECK_NEAR(by, 4.0 * (2 * 32 * 28 * 28 + 3 * 3 * 8 * 64 + 2 * 64 * 28 * 28), 1);
    dp_cost_node(g, (size_t)bf, 2, &f, &by);
    CHECK_NEAR(f, dp_cost_conv2d_flops(2, 28, 28, 32, 64, 3, 3), 1);
    dp_graph_free(g);
}

int main(void) {
    test_flags();
    test_slots();
    test_winograd_and_grouped_cost();
    TEST_MAIN_END();
}
