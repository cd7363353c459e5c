// ClProgram's fusions over the channels against the CPU backend (program_fusion_util.h): Slices
// of channels read in place, Concats written in place by the Convs making their inputs, channel
// shuffles, and the copies such a Concat still makes, carried by a Conv.
#include <cmath>
#include <string>
#include <vector>

#include "graph/onnx_builder.h"
#include "graph/onnx_import.h"
#include "program_fusion_util.h"

namespace hsched::opencl {
namespace {

using fusion_test::ClFusionTest;
using fusion_test::expect_fused_matches_cpu;

Tensor wave(const std::vector<int64_t>& dims, float step) {
  Tensor x(DType::kF32, dims);
  auto values = x.values<float>();
  for (size_t i = 0; i < values.size(); ++i) values[i] = std::sin(step * static_cast<float>(i));
  return x;
}

// ShuffleNet's channel split: Convs read their input Slice over the channels in place (a 1x1
// Conv with its Relu, a depthwise 3x3 one; each algorithm: OpenClOpsTest.ConvReadsAChannel
// SliceInPlace), and a Concat of a Slice and a Conv's output: the Conv writes in place and, a
// direct kernel of 3 channels, copies the Slice from its input after it, batch 1 and 2: 3 kernels,
// the 3 Slices and the Concat absorbed.
TEST_F(ClFusionTest, ChannelSlicesAreReadInPlaceByConvs) {
  for (const int64_t n : {1, 2}) {
    SCOPED_TRACE("batch " + std::to_string(n));
    OnnxBuilder b(17);
    b.input("x", DType::kF32, {n, 8, 5, 5});
    b.output("y1", DType::kF32, {n, 6, 5, 5}).output("y2", DType::kF32, {n, 4, 5, 5});
    b.output("y3", DType::kF32, {n, 7, 5, 5});
    b.initializer_i64("two", {1}, {2}).initializer_i64("six", {1}, {6});
    b.initializer_random("w3", {3, 8, 1, 1}, 1.0f, 53);
    b.node("Slice", {"x", "two", "six", "axis"}, {"mid"});
    b.node("Conv", {"x", "w3"}, {"c3"});
    set_attr(b.node("Concat", {"mid", "c3"}, {"y3"}), "axis", int64_t{1});
    b.initializer_i64("four", {1}, {4}).initializer_i64("eight", {1}, {8});
    b.initializer_i64("zero", {1}, {0}).initializer_i64("axis", {1}, {1});
    b.initializer_random("w1", {6, 4, 1, 1}, 1.0f, 43)
        .initializer_random("w2", {4, 1, 3, 3}, 1.0f, 47);
    b.node("Slice", {"x", "four", "eight", "axis"}, {"hi"});
    b.node("Conv", {"hi", "w1"}, {"c1"});
    b.node("Relu", {"c1"}, {"y1"});
    b.node("Slice", {"x", "zero", "four", "axis"}, {"lo"});
    onnx::NodeProto& depthwise = b.node("Conv", {"lo", "w2"}, {"y2"});
    set_attr(depthwise, "group", int64_t{4});
    set_attr(depthwise, "pads", std::vector<int64_t>{1, 1, 1, 1});
    auto graph = import_onnx_model(b.model(), {}, "cl_channel_slices", {});
    ASSERT_TRUE(graph.is_ok()) << graph.status().message();
    Tensor x(DType::kF32, {n, 8, 5, 5});
    auto values = x.values<float>();
    for (size_t i = 0; i < values.size(); ++i) values[i] = std::sin(0.23f * static_cast<float>(i));
    expect_fused_matches_cpu(*graph, runtime_, x, Storage::kFloat32, {3, 5}, 1e-5, 1e-4, 3);
    expect_fused_matches_cpu(*graph, runtime_, x, Storage::kFloat16, {3, 5}, 1e-2, 1e-2);
  }
}

// ShuffleNet's channel shuffle (Reshape to [N, 2, C / 2, H, W], Transpose (0, 2, 1, 3, 4),
// Reshape back) written by the Concat before it, batch 1 and 2: a Concat of two Convs (both write
// in place, interleaved: no Concat kernel) and a Concat of a Slice and a Conv (the Conv writes in
// place and copies the Slice). 3 kernels; the 6 shuffle nodes, both Concats, 2 Slices and the
// Relu absorbed. Both shuffles' outputs are graph outputs, the first read on by the second
// unit's Slices.
TEST_F(ClFusionTest, ChannelShufflesAreWrittenByTheirConcats) {
  for (const int64_t n : {1, 2}) {
    SCOPED_TRACE("batch " + std::to_string(n));
    OnnxBuilder b(17);
    b.input("x", DType::kF32, {n, 8, 5, 5});
    b.output("y1", DType::kF32, {n, 8, 5, 5}).output("y2", DType::kF32, {n, 8, 5, 5});
    b.initializer_i64("grouped", {5}, {n, 2, 4, 5, 5}).initializer_i64("flat", {4}, {n, 8, 5, 5});
    b.initializer_i64("zero", {1}, {0}).initializer_i64("four", {1}, {4});
    b.initializer_i64("eight", {1}, {8}).initializer_i64("axis", {1}, {1});
    b.initializer_random("wa", {4, 8, 1, 1}, 1.0f, 61)
        .initializer_random("wb", {4, 8, 3, 3}, 0.3f, 67);
    b.initializer_random("wc", {4, 4, 1, 1}, 1.0f, 71);
    const auto shuffle = [&](const std::string& in, const std::string& out) {
      b.node("Reshape", {in, "grouped"}, {in + "_g"});
      set_attr(b.node("Transpose", {in + "_g"}, {in + "_t"}), "perm",
               std::vector<int64_t>{0, 2, 1, 3, 4});
      b.node("Reshape", {in + "_t", "flat"}, {out});
    };
    b.node("Conv", {"x", "wa"}, {"a"});
    set_attr(b.node("Conv", {"x", "wb"}, {"b"}), "pads", std::vector<int64_t>{1, 1, 1, 1});
    set_attr(b.node("Concat", {"a", "b"}, {"ab"}), "axis", int64_t{1});
    shuffle("ab", "y1");
    b.node("Slice", {"y1", "zero", "four", "axis"}, {"lo"});
    b.node("Slice", {"y1", "four", "eight", "axis"}, {"hi"});
    b.node("Conv", {"hi", "wc"}, {"c"});
    b.node("Relu", {"c"}, {"r"});
    set_attr(b.node("Concat", {"lo", "r"}, {"lr"}), "axis", int64_t{1});
    shuffle("lr", "y2");
    auto graph = import_onnx_model(b.model(), {}, "cl_channel_shuffles", {});
    ASSERT_TRUE(graph.is_ok()) << graph.status().message();
    Tensor x(DType::kF32, {n, 8, 5, 5});
    auto values = x.values<float>();
    for (size_t i = 0; i < values.size(); ++i) values[i] = std::sin(0.19f * static_cast<float>(i));
    expect_fused_matches_cpu(*graph, runtime_, x, Storage::kFloat32, {3, 11}, 1e-5, 1e-4, 3);
    expect_fused_matches_cpu(*graph, runtime_, x, Storage::kFloat16, {3, 11}, 1e-2, 1e-2);
  }
}

// A Concat that copies one input alone, the rest written in place by Convs, runs no kernel: the
// last of those Convs, an implicit GEMM here, copies the input in its own launch, batch 1 and 2,
// fp32 and fp16 storage. ShuffleNet's unit (a Slice passed through, the other half through 1x1,
// depthwise and 1x1 Convs, the shuffle): 3 kernels, the 2 Slices, 2 Relus, the Concat and the
// shuffle's 3 nodes absorbed. A Conv whose K is split (512 channels; the copy in its first
// launch): 1 kernel, 2 Slices and the Concat absorbed. A copied input made after the Conv (a
// Sigmoid of x) stays the Concat's: 3 kernels.
TEST_F(ClFusionTest, ConcatCopiesRideInTheConvLaunch) {
  for (const int64_t n : {1, 2}) {
    SCOPED_TRACE("batch " + std::to_string(n));
    OnnxBuilder b(17);
    b.input("x", DType::kF32, {n, 16, 10, 10});
    b.output("y", DType::kF32, {n, 16, 10, 10});
    b.initializer_i64("grouped", {5}, {n, 2, 8, 10, 10})
        .initializer_i64("flat", {4}, {n, 16, 10, 10});
    b.initializer_i64("zero", {1}, {0}).initializer_i64("eight", {1}, {8});
    b.initializer_i64("sixteen", {1}, {16}).initializer_i64("axis", {1}, {1});
    b.initializer_random("w1", {8, 8, 1, 1}, 0.5f, 81)
        .initializer_random("wd", {8, 1, 3, 3}, 0.5f, 83);
    b.initializer_random("w3", {8, 8, 1, 1}, 0.5f, 89).initializer_random("b3", {8}, 0.5f, 97);
    b.node("Slice", {"x", "zero", "eight", "axis"}, {"lo"});
    b.node("Slice", {"x", "eight", "sixteen", "axis"}, {"hi"});
    b.node("Conv", {"hi", "w1"}, {"c1"});
    b.node("Relu", {"c1"}, {"r1"});
    onnx::NodeProto& depthwise = b.node("Conv", {"r1", "wd"}, {"c2"});
    set_attr(depthwise, "group", int64_t{8});
    set_attr(depthwise, "pads", std::vector<int64_t>{1, 1, 1, 1});
    b.node("Conv", {"c2", "w3", "b3"}, {"c3"});
    b.node("Relu", {"c3"}, {"r3"});
    set_attr(b.node("Concat", {"lo", "r3"}, {"cat"}), "axis", int64_t{1});
    b.node("Reshape", {"cat", "grouped"}, {"g"});
    set_attr(b.node("Transpose", {"g"}, {"t"}), "perm", std::vector<int64_t>{0, 2, 1, 3, 4});
    b.node("Reshape", {"t", "flat"}, {"y"});
    auto unit = import_onnx_model(b.model(), {}, "cl_shuffle_unit", {});
    ASSERT_TRUE(unit.is_ok()) << unit.status().message();
    const Tensor x = wave({n, 16, 10, 10}, 0.17f);
    expect_fused_matches_cpu(*unit, runtime_, x, Storage::kFloat32, {3, 8}, 1e-5, 1e-4, 3);
    expect_fused_matches_cpu(*unit, runtime_, x, Storage::kFloat16, {3, 8}, 1e-2, 1e-2);

    OnnxBuilder s(17);
    s.input("x", DType::kF32, {n, 520, 20, 20});
    s.output("y", DType::kF32, {n, 24, 20, 20});
    s.initializer_i64("zero", {1}, {0}).initializer_i64("eight", {1}, {8});
    s.initializer_i64("end", {1}, {520}).initializer_i64("axis", {1}, {1});
    s.initializer_random("w", {16, 512, 1, 1}, 0.05f, 101);
    s.node("Slice", {"x", "zero", "eight", "axis"}, {"lo"});
    s.node("Slice", {"x", "eight", "end", "axis"}, {"hi"});
    s.node("Conv", {"hi", "w"}, {"c"});
    set_attr(s.node("Concat", {"lo", "c"}, {"y"}), "axis", int64_t{1});
    auto split = import_onnx_model(s.model(), {}, "cl_carried_split_k", {});
    ASSERT_TRUE(split.is_ok()) << split.status().message();
    const Tensor wide = wave({n, 520, 20, 20}, 0.013f);
    expect_fused_matches_cpu(*split, runtime_, wide, Storage::kFloat32, {1, 3}, 1e-4, 1e-4, 3);

    OnnxBuilder late(17);
    late.input("x", DType::kF32, {n, 8, 6, 6});
    late.output("y", DType::kF32, {n, 16, 6, 6});
    late.initializer_random("w", {8, 8, 1, 1}, 0.5f, 103);
    late.node("Conv", {"x", "w"}, {"c"});
    late.node("Sigmoid", {"x"}, {"s"});
    set_attr(late.node("Concat", {"c", "s"}, {"y"}), "axis", int64_t{1});
    auto after = import_onnx_model(late.model(), {}, "cl_copied_after", {});
    ASSERT_TRUE(after.is_ok()) << after.status().message();
    expect_fused_matches_cpu(*after, runtime_, wave({n, 8, 6, 6}, 0.29f), Storage::kFloat32, {3, 0},
                             1e-5, 1e-4, 3);
  }
}

// A fire module's two expand Convs (1x1 and 3x3 of the squeezed input, each with its bias and
// Relu, writing their Concat in place) run as one launch, batch 1 and 2, fp32 and fp16 storage:
// 2 kernels for 6 nodes (the Relus and the Concat absorbed, the 1x1 Conv in the 3x3's launch).
// Expand Convs with different activations stay apart.
TEST_F(ClFusionTest, FireModuleExpandsRunAsOneLaunch) {
  for (const int64_t n : {1, 2}) {
    SCOPED_TRACE("batch " + std::to_string(n));
    for (const bool same : {true, false}) {
      OnnxBuilder b(17);
      b.input("x", DType::kF32, {n, 12, 9, 7});
      b.output("y", DType::kF32, {n, 40, 9, 7});
      b.initializer_random("ws", {8, 12, 1, 1}, 0.5f, 107).initializer_random("bs", {8}, 0.5f, 109);
      b.initializer_random("w1", {24, 8, 1, 1}, 0.5f, 113)
          .initializer_random("b1", {24}, 0.5f, 127);
      b.initializer_random("w3", {16, 8, 3, 3}, 0.3f, 131);
      b.node("Conv", {"x", "ws", "bs"}, {"s"});
      b.node("Conv", {"s", "w1", "b1"}, {"e1"});
      b.node("Relu", {"e1"}, {"r1"});
      set_attr(b.node("Conv", {"s", "w3"}, {"e3"}), "pads", std::vector<int64_t>{1, 1, 1, 1});
      b.node(same ? "Relu" : "Sigmoid", {"e3"}, {"r3"});
      set_attr(b.node("Concat", {"r1", "r3"}, {"y"}), "axis", int64_t{1});
      auto graph = import_onnx_model(b.model(), {}, "cl_fire", {});
      ASSERT_TRUE(graph.is_ok()) << graph.status().message();
      const Tensor x = wave({n, 12, 9, 7}, 0.21f);
      const int kernels = same ? 2 : 3;
      expect_fused_matches_cpu(*graph, runtime_, x, Storage::kFloat32, {kernels, 3}, 1e-5, 1e-4, 3);
      expect_fused_matches_cpu(*graph, runtime_, x, Storage::kFloat16, {kernels, 3}, 1e-2, 1e-2);
    }
  }
}

}  // namespace
}  // namespace hsched::opencl
