// ClProgram's fusions of transformer patterns (step_plan.h, step_plan_merge.cpp) against the CPU
// backend, as program_fusion_test.cpp's: sibling products grouped, attention heads read in place,
// masks as residuals, attention's products and softmax in one launch, a LayerNormalization in the
// MatMul reading it.
#include <cmath>
#include <tuple>

#include "graph/onnx_builder.h"
#include "graph/onnx_import.h"
#include "program_fusion_util.h"

namespace hsched::opencl {
namespace {

using fusion_test::ClFusionTest;
using fusion_test::expect_fused_matches_cpu;
using fusion_test::Fused;

// Attention's Q, K and V projections: MatMuls of one A by constant weights of one shape, each
// with its bias, run as one step (kMatMulGroupOp) of one launch, K whole where a product alone
// splits it (K 600: a launch and a split-K reduction each for the others). A sibling without a
// bias and one of another width run alone: 3 kernels.
TEST_F(ClFusionTest, SiblingMatMulsRunAsOneStep) {
  for (const auto& [m, k, launches] : {std::tuple{24, 40, 3}, std::tuple{4, 600, 5}}) {
    OnnxBuilder b(17);
    b.input("x", DType::kF32, {1, m, k});
    for (const char* y : {"q", "k", "v", "u"}) b.output(y, DType::kF32, {1, m, 32});
    b.output("w", DType::kF32, {1, m, 16});
    uint32_t seed = 60;
    for (const char* name : {"wq", "wk", "wv", "wu"})
      b.initializer_random(name, {k, 32}, 0.2f, ++seed);
    b.initializer_random("ww", {k, 16}, 0.2f, ++seed);
    for (const char* name : {"bq", "bk", "bv"}) b.initializer_random(name, {32}, 0.5f, ++seed);
    b.node("MatMul", {"x", "wq"}, {"pq"});
    b.node("Add", {"pq", "bq"}, {"q"});
    b.node("MatMul", {"x", "wk"}, {"pk"});
    b.node("Add", {"bk", "pk"}, {"k"});
    b.node("MatMul", {"x", "wu"}, {"u"});
    b.node("MatMul", {"x", "ww"}, {"w"});
    b.node("MatMul", {"x", "wv"}, {"pv"});
    b.node("Add", {"pv", "bv"}, {"v"});
    auto graph = import_onnx_model(b.model(), {}, "cl_siblings", {});
    ASSERT_TRUE(graph.is_ok()) << graph.status().message();
    Tensor x(DType::kF32, {1, m, k});
    auto values = x.values<float>();
    for (size_t i = 0; i < values.size(); ++i) values[i] = std::sin(0.29f * static_cast<float>(i));
    for (Storage storage : {Storage::kFloat32, Storage::kFloat16}) {
      const bool half = storage == Storage::kFloat16;
      expect_fused_matches_cpu(*graph, runtime_, x, storage, {3, 3}, half ? 2e-2 : 1e-5,
                               half ? 2e-2 : 1e-4, 3);
    }
    // (fp16 storage: its steps read the input's own buffer, so they replay on PoCL too.)
    auto program = ClProgram::compile(*graph, runtime_, Storage::kFloat16, 300000);
    ASSERT_TRUE(program.is_ok()) << program.status().message();
    for (int run = 0; run < 3; ++run) ASSERT_TRUE((*program)->run({x}).is_ok());
    EXPECT_EQ((*program)->replayed_steps(), 3);
    EXPECT_EQ((*program)->replayed_launches(), launches) << "M " << m << ", K " << k;
  }
}

// ViT's attention: q, k and v split off one product by Reshape -> Transpose(2, 0, 3, 1, 4) ->
// Split -> Squeeze are read in place from the product (one offset each), K^T and the scale too,
// and the heads merge back as the result is stored: 2 kernels for the 13 nodes (the product, then
// the attention's products and Softmax in one), none for the Transpose and Split. With a batch of
// 2 the batch and head axes do not collapse into one stride of the product: the Transpose runs
// (and the Transpose merging the heads back), q, k and v are read in place from its output.
TEST_F(ClFusionTest, SplitHeadsAreReadInPlace) {
  for (const int64_t batch : {1, 2}) {
    SCOPED_TRACE("batch " + std::to_string(batch));
    OnnxBuilder b(17);
    b.input("x", DType::kF32, {batch, 5, 8});
    b.output("y", DType::kF32, {batch, 5, 2, 4});
    b.initializer_random("w", {8, 24}, 0.5f, 11);
    b.initializer_i64("heads", {5}, {batch, 5, 3, 2, 4}).initializer_i64("ones", {3}, {1, 1, 1});
    b.initializer_i64("axis0", {1}, {0}).initializer_f32("scale", {}, {0.5f});
    b.node("MatMul", {"x", "w"}, {"qkv"});
    b.node("Reshape", {"qkv", "heads"}, {"r"});
    set_attr(b.node("Transpose", {"r"}, {"t"}), "perm", std::vector<int64_t>{2, 0, 3, 1, 4});
    b.node("Split", {"t", "ones"}, {"s0", "s1", "s2"});
    b.node("Squeeze", {"s0", "axis0"}, {"q"});
    b.node("Squeeze", {"s1", "axis0"}, {"k"});
    b.node("Squeeze", {"s2", "axis0"}, {"v"});
    set_attr(b.node("Transpose", {"k"}, {"kt"}), "perm", std::vector<int64_t>{0, 1, 3, 2});
    b.node("Mul", {"q", "scale"}, {"qs"});
    b.node("MatMul", {"qs", "kt"}, {"scores"});
    b.node("Softmax", {"scores"}, {"p"});
    b.node("MatMul", {"p", "v"}, {"o"});
    set_attr(b.node("Transpose", {"o"}, {"y"}), "perm", std::vector<int64_t>{0, 2, 1, 3});
    auto graph = import_onnx_model(b.model(), {}, "cl_split_heads", {});
    ASSERT_TRUE(graph.is_ok()) << graph.status().message();
    Tensor x(DType::kF32, {batch, 5, 8});
    auto values = x.values<float>();
    for (size_t i = 0; i < values.size(); ++i) values[i] = std::sin(0.31f * static_cast<float>(i));
    const Fused want = batch == 1 ? Fused{2, 10} : Fused{4, 8};
    expect_fused_matches_cpu(*graph, runtime_, x, Storage::kFloat32, want, 1e-5, 1e-4, 3);
    expect_fused_matches_cpu(*graph, runtime_, x, Storage::kFloat16, want, 1e-2, 1e-2);
  }
}

// BERT's attention mask: each layer makes the same Where anew from one [1, 1, M, N] condition,
// after its scores in the order, and adds it to [1, heads, M, N] scores. The first Where runs
// before the first product (hoisted), the second is the first's (a duplicate), and each Add
// becomes its MatMul's residual, one [M, N] for every head: 7 kernels, 3 nodes absorbed.
TEST_F(ClFusionTest, SharedAttentionMaskIsAMatMulResidual) {
  OnnxBuilder b(17);
  b.input("x", DType::kF32, {1, 2, 5, 5});
  b.output("y1", DType::kF32, {1, 2, 5, 5}).output("y2", DType::kF32, {1, 2, 5, 5});
  b.initializer_random("w1", {5, 5}, 1.0f, 13).initializer_random("w2", {5, 5}, 1.0f, 17);
  b.initializer_i64("heads", {1}, {1}).initializer_f32("zero", {}, {0.0f});
  b.initializer_f32("off1", {1}, {-100.0f}).initializer_f32("off2", {1}, {-100.0f});
  b.initializer_f32("on1", {1}, {0.0f}).initializer_f32("on2", {1}, {0.0f});
  b.node("MatMul", {"x", "w1"}, {"s1"});
  b.node("MatMul", {"x", "w2"}, {"s2"});
  b.node("ReduceSum", {"x", "heads"}, {"sum"});
  b.node("Greater", {"sum", "zero"}, {"keep"});
  b.node("Where", {"keep", "on1", "off1"}, {"mask1"});
  b.node("Add", {"s1", "mask1"}, {"a1"});
  b.node("Softmax", {"a1"}, {"y1"});
  b.node("Where", {"keep", "on2", "off2"}, {"mask2"});
  b.node("Add", {"mask2", "s2"}, {"a2"});
  b.node("Softmax", {"a2"}, {"y2"});
  auto graph = import_onnx_model(b.model(), {}, "cl_shared_mask", {});
  ASSERT_TRUE(graph.is_ok()) << graph.status().message();
  Tensor x(DType::kF32, {1, 2, 5, 5});
  auto values = x.values<float>();
  for (size_t i = 0; i < values.size(); ++i) values[i] = std::sin(0.53f * static_cast<float>(i));
  expect_fused_matches_cpu(*graph, runtime_, x, Storage::kFloat32, {7, 3}, 1e-5, 1e-4, 3);
  expect_fused_matches_cpu(*graph, runtime_, x, Storage::kFloat16, {7, 3}, 1e-2, 1e-2);
}

// Attention as BERT exports it: scaled scores plus a mask shared by the heads, Softmax with its
// NaN guard, the weighted sum of V stored with the heads merged back: one kernel (3 kernels, a
// Where and two moves stay), also for 100 keys of depth 80. Rows the mask blocks entirely (-inf)
// are the guard's 0 in both backends. Keys beyond kMaxAttentionKeys, or a Softmax over another
// axis (opset 11's default), keep their three kernels.
TEST_F(ClFusionTest, AttentionRunsInOneLaunch) {
  struct Case {
    int64_t keys;
    int opset;
    int kernels;
    int64_t depth = 8;
  };
  for (const Case c :
       {Case{7, 17, 1}, Case{100, 17, 1, 80}, Case{kMaxAttentionKeys + 1, 17, 3}, Case{7, 11, 3}}) {
    SCOPED_TRACE("keys " + std::to_string(c.keys) + ", opset " + std::to_string(c.opset));
    const int64_t rows = 6;
    OnnxBuilder b(c.opset);
    b.input("q", DType::kF32, {1, 2, rows, c.depth});
    b.input("kt", DType::kF32, {1, 2, c.depth, c.keys});
    b.input("v", DType::kF32, {1, 2, c.keys, 4}).input("mask", DType::kF32, {1, 1, rows, c.keys});
    b.output("y", DType::kF32, {1, rows, 2, 4});
    b.initializer_f32("scale", {}, {0.35f}).initializer_f32("zero", {}, {0.0f});
    b.node("MatMul", {"q", "kt"}, {"s"});
    b.node("Mul", {"s", "scale"}, {"scaled"});
    b.node("Add", {"scaled", "mask"}, {"masked"});
    b.node("Softmax", {"masked"}, {"p"});
    b.node("IsNaN", {"p"}, {"nan"});
    b.node("Where", {"nan", "zero", "p"}, {"w"});
    b.node("MatMul", {"w", "v"}, {"o"});
    set_attr(b.node("Transpose", {"o"}, {"y"}), "perm", std::vector<int64_t>{0, 2, 1, 3});
    auto graph = import_onnx_model(b.model(), {}, "cl_attention", {});
    ASSERT_TRUE(graph.is_ok()) << graph.status().message();
    std::vector<Tensor> inputs;
    for (ValueId id : graph->inputs()) {
      inputs.emplace_back(DType::kF32, graph->value(id).shape.dims);
      auto values = inputs.back().values<float>();
      for (size_t i = 0; i < values.size(); ++i) {
        values[i] = std::sin(0.37f * static_cast<float>(i + 5 * inputs.size()));
      }
    }
    auto mask = inputs[3].values<float>();
    for (int64_t j = 0; j < c.keys; ++j) mask[static_cast<size_t>(2 * c.keys + j)] = -INFINITY;
    for (Storage storage : {Storage::kFloat32, Storage::kFloat16}) {
      const bool half = storage == Storage::kFloat16;
      expect_fused_matches_cpu(*graph, runtime_, inputs, storage, {c.kernels, 8 - c.kernels},
                               half ? 1e-2 : 1e-5, half ? 1e-2 : 1e-4, 3);
    }
  }
}

// A transformer's LayerNormalization before its projection (ViT's norm1 -> qkv, ConvNeXt's norm ->
// fc1): the MatMul normalizes its A's rows as it loads them, one kernel for the LayerNormalization,
// the MatMul and its bias Add; rows of a large mean (two passes keep their variance exact), rows
// past a tile's, K long enough that a plain product would split it (600). A LayerNormalization
// whose output is also a graph output keeps its kernel.
TEST_F(ClFusionTest, LayerNormRunsInTheMatMulReadingIt) {
  struct Case {
    int64_t batch, rows, k;
    bool bias, output_norm;
    Fused want;
  };
  for (const Case c : {Case{1, 37, 40, true, false, {1, 2}}, Case{2, 5, 16, false, false, {1, 2}},
                       Case{1, 4, 600, true, false, {1, 2}}, Case{1, 6, 24, true, true, {2, 1}}}) {
    SCOPED_TRACE("rows " + std::to_string(c.rows) + ", K " + std::to_string(c.k));
    OnnxBuilder b(17);
    b.input("x", DType::kF32, {c.batch, c.rows, c.k});
    b.output("y", DType::kF32, {c.batch, c.rows, 24});
    if (c.output_norm) b.output("n", DType::kF32, {c.batch, c.rows, c.k});
    b.initializer_random("gamma", {c.k}, 1.0f, 21).initializer_random("beta", {c.k}, 0.5f, 22);
    b.initializer_random("w", {c.k, 24}, 0.3f, 23).initializer_random("wb", {24}, 0.5f, 24);
    std::vector<std::string> ln_inputs = {"x", "gamma"};
    if (c.bias) ln_inputs.push_back("beta");
    set_attr(b.node("LayerNormalization", ln_inputs, {"n"}), "epsilon", 1e-6f);
    b.node("MatMul", {"n", "w"}, {"p"});
    b.node("Add", {"p", "wb"}, {"y"});
    auto graph = import_onnx_model(b.model(), {}, "cl_norm_matmul", {});
    ASSERT_TRUE(graph.is_ok()) << graph.status().message();
    Tensor x(DType::kF32, {c.batch, c.rows, c.k});
    auto values = x.values<float>();
    for (size_t i = 0; i < values.size(); ++i) {
      values[i] = 40.0f + std::sin(0.43f * static_cast<float>(i)) * static_cast<float>(1 + i % 3);
    }
    expect_fused_matches_cpu(*graph, runtime_, x, Storage::kFloat32, c.want, 1e-4, 1e-4, 3);
    expect_fused_matches_cpu(*graph, runtime_, x, Storage::kFloat16, c.want, 3e-2, 2e-2);
  }
}

}  // namespace
}  // namespace hsched::opencl
