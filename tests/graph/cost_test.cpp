// FLOP and byte counts of node_cost on small graphs built by hand.
#include "graph/cost.h"

#include <limits>
#include <string>

#include <gtest/gtest.h>

namespace hsched {
namespace {

// Builds one-node graphs: values first, then the node that reads and writes them.
class OneNode {
 public:
  ValueId in(const std::string& name, Shape shape, DType dtype = DType::kF32) {
    return graph_.add_value(name, dtype, std::move(shape));
  }
  ValueId weight(const std::string& name, std::vector<int64_t> dims) {
    return graph_.add_constant(name, Tensor(DType::kF32, std::move(dims)));
  }
  ValueId out(const std::string& name, Shape shape, DType dtype = DType::kF32) {
    return graph_.add_value(name, dtype, std::move(shape));
  }
  NodeCost cost(const std::string& op, std::vector<ValueId> inputs, std::vector<ValueId> outputs,
                AttributeMap attributes = {}) {
    Node node;
    node.name = "n";
    node.op_type = op;
    node.inputs = std::move(inputs);
    node.outputs = std::move(outputs);
    node.attributes = std::move(attributes);
    return node_cost(graph_, graph_.add_node(std::move(node)));
  }

 private:
  Graph graph_;
};

TEST(CostTest, ConvWithBias) {
  OneNode g;
  const ValueId x = g.in("x", {1, 3, 8, 8});
  const ValueId w = g.weight("w", {4, 3, 3, 3});
  const ValueId b = g.weight("b", {4});
  const ValueId y = g.out("y", {1, 4, 8, 8});
  const NodeCost c = g.cost("Conv", {x, w, b}, {y});
  EXPECT_TRUE(c.known);
  EXPECT_EQ(c.flop, 2 * 1 * 4 * 8 * 8 * 3 * 9 + 4 * 8 * 8);
  EXPECT_EQ(c.bytes_read, 4 * (3 * 64 + 4 * 27 + 4));
  EXPECT_EQ(c.bytes_written, 4 * 4 * 64);
}

TEST(CostTest, DepthwiseStridedConvWithoutBias) {
  OneNode g;
  const ValueId x = g.in("x", {2, 8, 16, 16});
  const ValueId w = g.weight("w", {8, 1, 3, 3});
  const ValueId y = g.out("y", {2, 8, 8, 8});
  const NodeCost c = g.cost("Conv", {x, w}, {y}, {{"group", int64_t{8}}});
  EXPECT_EQ(c.flop, 2 * 2 * 8 * 64 * 1 * 9);
}

TEST(CostTest, ConvWithDynamicOutputIsUnknown) {
  OneNode g;
  const ValueId x = g.in("x", {kDynamicDim, 3, 8, 8});
  const ValueId w = g.weight("w", {4, 3, 3, 3});
  const ValueId y = g.out("y", {kDynamicDim, 4, 8, 8});
  const NodeCost c = g.cost("Conv", {x, w}, {y});
  EXPECT_FALSE(c.known);
  EXPECT_EQ(c.flop, 0);
}

TEST(CostTest, ConvTranspose) {
  OneNode g;
  const ValueId x = g.in("x", {1, 4, 5, 5});
  const ValueId w = g.weight("w", {4, 2, 3, 3});  // Cin=4, Cout/group=2
  const ValueId y = g.out("y", {1, 2, 11, 11});
  const NodeCost c =
      g.cost("ConvTranspose", {x, w}, {y}, {{"strides", std::vector<int64_t>{2, 2}}});
  EXPECT_EQ(c.flop, 2 * 1 * 4 * 25 * 2 * 9);
}

TEST(CostTest, GemmWithBiasAndTransposedA) {
  OneNode g;
  const ValueId a = g.in("a", {7, 5});  // transA: K=7, M=5
  const ValueId b = g.weight("b", {7, 3});
  const ValueId c_in = g.weight("c", {3});
  const ValueId y = g.out("y", {5, 3});
  const NodeCost c = g.cost("Gemm", {a, b, c_in}, {y}, {{"transA", int64_t{1}}});
  EXPECT_EQ(c.flop, 2 * 5 * 3 * 7 + 5 * 3);
}

TEST(CostTest, MatMulBroadcastsBatchDims) {
  OneNode g;
  const ValueId a = g.in("a", {2, 1, 3, 4});
  const ValueId b = g.in("b", {5, 4, 6});
  const ValueId y = g.out("y", {2, 5, 3, 6});
  EXPECT_EQ(g.cost("MatMul", {a, b}, {y}).flop, 2 * (2 * 5) * 3 * 6 * 4);
}

TEST(CostTest, MatMulWithVectorOperands) {
  OneNode g;
  const ValueId v = g.in("v", {4});
  const ValueId m = g.in("m", {4, 6});
  const ValueId vm = g.out("vm", {6});
  EXPECT_EQ(g.cost("MatMul", {v, m}, {vm}).flop, 2 * 6 * 4);
  const ValueId t = g.in("t", {2, 3, 4});
  const ValueId tv = g.out("tv", {2, 3});
  EXPECT_EQ(g.cost("MatMul", {t, v}, {tv}).flop, 2 * 6 * 4);
}

TEST(CostTest, Pools) {
  OneNode g;
  const ValueId x = g.in("x", {1, 4, 8, 8});
  const ValueId y = g.out("y", {1, 4, 4, 4});
  const NodeCost max_pool = g.cost(
      "MaxPool", {x}, {y},
      {{"kernel_shape", std::vector<int64_t>{3, 3}}, {"strides", std::vector<int64_t>{2, 2}}});
  EXPECT_EQ(max_pool.flop, 64 * 9);
  const ValueId z = g.out("z", {1, 4, 1, 1});
  EXPECT_EQ(g.cost("GlobalAveragePool", {x}, {z}).flop, 4 * 64);
  // kernel_shape is required; without it the count is not known.
  EXPECT_FALSE(g.cost("AveragePool", {x}, {y}).known);
}

TEST(CostTest, ElementwiseFactors) {
  OneNode g;
  const ValueId x = g.in("x", {2, 10});
  const ValueId y = g.out("y", {2, 10});
  EXPECT_EQ(g.cost("Relu", {x}, {y}).flop, 20);
  EXPECT_EQ(g.cost("Add", {x, x}, {y}).flop, 20);
  EXPECT_EQ(g.cost("Sigmoid", {x}, {y}).flop, 80);
  EXPECT_EQ(g.cost("Erf", {x}, {y}).flop, 160);
  EXPECT_EQ(g.cost("Softmax", {x}, {y}).flop, 100);
  EXPECT_EQ(g.cost("LayerNormalization", {x}, {y}).flop, 160);
  EXPECT_EQ(g.cost("Sum", {x, x, x}, {y}).flop, 40);
}

TEST(CostTest, DataMovementIsFreeButMovesBytes) {
  OneNode g;
  const ValueId x = g.in("x", {2, 10});
  const ValueId shape = g.weight("shape", {2});
  const ValueId y = g.out("y", {4, 5});
  const NodeCost c = g.cost("Reshape", {x, shape}, {y});
  EXPECT_TRUE(c.known);
  EXPECT_EQ(c.flop, 0);
  EXPECT_EQ(c.bytes_read, 80 + 8);
  EXPECT_EQ(c.bytes_written, 80);
}

TEST(CostTest, GatherReadsTheRowsItSelects) {
  OneNode g;
  const ValueId table = g.weight("table", {8192, 256});  // an 8 MiB embedding
  const ValueId ids = g.in("ids", {1, 128}, DType::kI64);
  const ValueId y = g.out("y", {1, 128, 256});
  const NodeCost c = g.cost("Gather", {table, ids}, {y});
  EXPECT_TRUE(c.known);
  EXPECT_EQ(c.bytes_written, 128 * 256 * 4);
  EXPECT_EQ(c.bytes_read, 128 * 256 * 4 + 128 * 8);
  EXPECT_TRUE(is_gather("GatherND"));
  EXPECT_FALSE(is_gather("Slice"));
}

TEST(CostTest, ReductionsCountInputElements) {
  OneNode g;
  const ValueId x = g.in("x", {3, 10});
  const ValueId y = g.out("y", {3, 1});
  EXPECT_EQ(g.cost("ReduceMean", {x}, {y}).flop, 30);
  const ValueId i = g.out("i", {3, 1}, DType::kI64);
  EXPECT_EQ(g.cost("ArgMax", {x}, {i}).flop, 30);
}

TEST(CostTest, ResizeModes) {
  OneNode g;
  const ValueId x = g.in("x", {1, 2, 4, 4});
  const ValueId y = g.out("y", {1, 2, 8, 8});
  EXPECT_EQ(g.cost("Resize", {x}, {y}, {{"mode", std::string("nearest")}}).flop, 128);
  // Bilinear: 2 taps in each of the 2 resized dims, a multiply-add each.
  EXPECT_EQ(g.cost("Resize", {x}, {y}, {{"mode", std::string("linear")}}).flop, 128 * 2 * 4);
  EXPECT_EQ(g.cost("Resize", {x}, {y}, {{"mode", std::string("cubic")}}).flop, 128 * 2 * 16);
}

TEST(CostTest, EinsumCountsSummedLetters) {
  OneNode g;
  const ValueId a = g.in("a", {5, 2, 3});
  const ValueId b = g.in("b", {5, 3, 4});
  const ValueId c = g.out("c", {5, 2, 4});
  // A batched matmul: 40 outputs, each a sum over j (3) of multiply-adds.
  EXPECT_EQ(g.cost("Einsum", {a, b}, {c}, {{"equation", std::string("bij, bjk -> bik")}}).flop,
            2 * 40 * 3);
  // Implicit output: j, written twice, is summed; '...' dims are kept (in the outputs).
  const ValueId d = g.in("d", {7, 2, 3});
  const ValueId e = g.in("e", {3, 4});
  const ValueId f = g.out("f", {7, 2, 4});
  EXPECT_EQ(g.cost("Einsum", {d, e}, {f}, {{"equation", std::string("...ij,jk")}}).flop,
            2 * 56 * 3);
  // Trace: i written twice in one term.
  const ValueId m = g.in("m", {6, 6});
  const ValueId t = g.out("t", Shape(std::vector<int64_t>{}));
  EXPECT_EQ(g.cost("Einsum", {m}, {t}, {{"equation", std::string("ii")}}).flop, 2 * 6);
}

TEST(CostTest, OmittedOptionalInputsAreSkipped) {
  OneNode g;
  const ValueId x = g.in("x", {1, 3, 4, 4});
  const ValueId w = g.weight("w", {2, 3, 1, 1});
  const ValueId y = g.out("y", {1, 2, 4, 4});
  const NodeCost c = g.cost("Conv", {x, w, kNoValue}, {y});
  EXPECT_TRUE(c.known);
  EXPECT_EQ(c.flop, 2 * 2 * 16 * 3);
}

TEST(CostTest, HugeCountsSaturateInsteadOfOverflowing) {
  OneNode g;
  const int64_t big = int64_t{1} << 17;  // 2^34 output elements, K = 2^17
  const ValueId a = g.in("a", {big, big});
  const ValueId b = g.in("b", {big, big});
  const ValueId y = g.out("y", {big, big});
  const NodeCost c = g.cost("MatMul", {a, b}, {y});
  EXPECT_EQ(c.flop, int64_t{1} << 52);
  const ValueId x4 = g.in("x4", {1, 1, big, big});
  const ValueId w4 = g.in("w4", {1, big, big, big});  // shapes only; no data behind an input
  const ValueId y4 = g.out("y4", {1, 1, big, big});
  EXPECT_EQ(g.cost("Conv", {x4, w4}, {y4}).flop, std::numeric_limits<int64_t>::max());
}

}  // namespace
}  // namespace hsched
