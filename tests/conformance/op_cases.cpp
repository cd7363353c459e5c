#include "conformance/op_cases.h"

#include <cmath>
#include <utility>

#include "support/one_node_graph.h"

namespace hsched::conformance {
namespace {

using Ints = std::vector<int64_t>;
using Floats = std::vector<float>;

// --- how the table is written -----------------------------------------------------------------

// A graph input of seeded floats in [lo, hi].
InputSpec in(Ints dims, float lo = -1.f, float hi = 1.f) {
  InputSpec spec;
  spec.dims = std::move(dims);
  spec.lo = lo;
  spec.hi = hi;
  return spec;
}
// A graph input of another dtype (integers in [lo, hi], bools 50/50).
InputSpec in_typed(DType dtype, Ints dims, float lo = -1.f, float hi = 1.f) {
  InputSpec spec = in(std::move(dims), lo, hi);
  spec.dtype = dtype;
  return spec;
}
// A constant of seeded floats (weights, biases, statistics).
InputSpec weight(Ints dims, float lo = -1.f, float hi = 1.f) {
  InputSpec spec = in(std::move(dims), lo, hi);
  spec.constant = true;
  return spec;
}
// A constant i64 tensor with these values (shapes, axes, pads, indices).
InputSpec ints(Ints dims, Ints values) {
  InputSpec spec;
  spec.dtype = DType::kI64;
  spec.dims = std::move(dims);
  spec.constant = true;
  spec.ints = std::move(values);
  return spec;
}
// A constant f32 tensor with these values (scales, exponents, clip bounds).
InputSpec floats(Ints dims, Floats values) {
  InputSpec spec;
  spec.dims = std::move(dims);
  spec.constant = true;
  spec.floats = std::move(values);
  return spec;
}
InputSpec omitted() {
  InputSpec spec;
  spec.omitted = true;
  return spec;
}
OutputSpec out(Ints dims, DType dtype = DType::kF32) { return {dtype, std::move(dims)}; }

Attribute list(Ints values) { return Attribute(std::move(values)); }
Attribute text(const char* value) { return Attribute(std::string(value)); }

OpCase make(std::string name, std::string op, std::vector<InputSpec> inputs,
            std::vector<OutputSpec> outputs, AttributeMap attributes = {}) {
  OpCase c;
  c.name = std::move(name);
  c.op = std::move(op);
  c.inputs = std::move(inputs);
  c.outputs = std::move(outputs);
  c.attributes = std::move(attributes);
  return c;
}
OpCase without_fp16(OpCase c) {
  c.fp16 = false;
  return c;
}
OpCase at_opset(OpCase c, int64_t opset) {
  c.opset = opset;
  return c;
}

std::vector<OpCase> make_cases() {
  std::vector<OpCase> c;
  // Convolutions: 1x1, strided, depthwise, biased, dilated; transposed.
  c.push_back(make("Conv_1x1", "Conv", {in({1, 8, 6, 6}), weight({16, 8, 1, 1}, -.5f, .5f)},
                   {out({1, 16, 6, 6})}, {{"kernel_shape", list({1, 1})}}));
  c.push_back(make(
      "Conv_3x3_stride2_pad1", "Conv", {in({1, 4, 9, 9}), weight({8, 4, 3, 3}, -.5f, .5f)},
      {out({1, 8, 5, 5})},
      {{"kernel_shape", list({3, 3})}, {"strides", list({2, 2})}, {"pads", list({1, 1, 1, 1})}}));
  c.push_back(make("Conv_depthwise_3x3", "Conv",
                   {in({1, 8, 8, 8}), weight({8, 1, 3, 3}, -.5f, .5f)}, {out({1, 8, 8, 8})},
                   {{"kernel_shape", list({3, 3})}, {"pads", list({1, 1, 1, 1})}, {"group", 8L}}));
  c.push_back(make("Conv_3x3_bias", "Conv",
                   {in({1, 3, 8, 8}), weight({4, 3, 3, 3}, -.5f, .5f), weight({4})},
                   {out({1, 4, 6, 6})}, {{"kernel_shape", list({3, 3})}}));
  c.push_back(make(
      "Conv_3x3_dilation2", "Conv", {in({1, 4, 8, 8}), weight({4, 4, 3, 3}, -.5f, .5f)},
      {out({1, 4, 8, 8})},
      {{"kernel_shape", list({3, 3})}, {"dilations", list({2, 2})}, {"pads", list({2, 2, 2, 2})}}));
  c.push_back(make("ConvTranspose_2x2_stride2", "ConvTranspose",
                   {in({1, 4, 4, 4}), weight({4, 3, 2, 2}, -.5f, .5f)}, {out({1, 3, 8, 8})},
                   {{"kernel_shape", list({2, 2})}, {"strides", list({2, 2})}}));
  c.push_back(make("ConvTranspose_3x3_stride2_pad1_bias", "ConvTranspose",
                   {in({1, 4, 4, 4}), weight({4, 3, 3, 3}, -.5f, .5f), weight({3})},
                   {out({1, 3, 8, 8})},
                   {{"kernel_shape", list({3, 3})},
                    {"strides", list({2, 2})},
                    {"pads", list({1, 1, 1, 1})},
                    {"output_padding", list({1, 1})}}));
  // Matrix products.
  c.push_back(make("MatMul_2d_weight", "MatMul", {in({16, 32}), weight({32, 24}, -.5f, .5f)},
                   {out({16, 24})}));
  c.push_back(make("MatMul_batched", "MatMul", {in({2, 3, 8, 16}), in({2, 3, 16, 8})},
                   {out({2, 3, 8, 8})}));
  c.push_back(make("MatMul_broadcast_weight", "MatMul",
                   {in({2, 4, 8, 16}), weight({16, 12}, -.5f, .5f)}, {out({2, 4, 8, 12})}));
  c.push_back(make("MatMul_broadcast_batch", "MatMul", {in({2, 1, 8, 16}), in({1, 3, 16, 4})},
                   {out({2, 3, 8, 4})}));
  c.push_back(make("Gemm_transB_bias", "Gemm",
                   {in({4, 32}), weight({16, 32}, -.5f, .5f), weight({16})}, {out({4, 16})},
                   {{"transB", 1L}}));
  c.push_back(make("Gemm_alpha_beta", "Gemm",
                   {in({8, 16}), weight({16, 12}, -.5f, .5f), weight({8, 12})}, {out({8, 12})},
                   {{"alpha", 0.5f}, {"beta", 2.0f}}));
  c.push_back(make("Gemm_transA_no_bias", "Gemm", {in({16, 8}), weight({16, 12}, -.5f, .5f)},
                   {out({8, 12})}, {{"transA", 1L}}));
  // Binary arithmetic with broadcasting.
  c.push_back(
      make("Add_same_shape", "Add", {in({2, 3, 4, 5}), in({2, 3, 4, 5})}, {out({2, 3, 4, 5})}));
  c.push_back(make("Add_broadcast_channel", "Add", {in({1, 8, 4, 4}), weight({1, 8, 1, 1})},
                   {out({1, 8, 4, 4})}));
  c.push_back(make("Mul_broadcast_last", "Mul", {in({2, 3, 4, 5}), in({5})}, {out({2, 3, 4, 5})}));
  c.push_back(make("Sub_broadcast_both", "Sub", {in({2, 1, 4}), in({3, 1})}, {out({2, 3, 4})}));
  c.push_back(
      make("Div_same_shape", "Div", {in({2, 3, 8}), in({2, 3, 8}, .5f, 2.f)}, {out({2, 3, 8})}));
  c.push_back(
      make("Div_broadcast_scalar", "Div", {in({2, 3, 8}), floats({}, {2.5f})}, {out({2, 3, 8})}));
  // Activations.
  c.push_back(make("Relu", "Relu", {in({2, 3, 8, 8})}, {out({2, 3, 8, 8})}));
  c.push_back(make("Sigmoid", "Sigmoid", {in({2, 3, 8, 8}, -4.f, 4.f)}, {out({2, 3, 8, 8})}));
  c.push_back(make("Tanh", "Tanh", {in({2, 3, 8, 8}, -3.f, 3.f)}, {out({2, 3, 8, 8})}));
  c.push_back(make("Erf", "Erf", {in({2, 64}, -2.f, 2.f)}, {out({2, 64})}));
  c.push_back(at_opset(make("Gelu", "Gelu", {in({2, 64}, -3.f, 3.f)}, {out({2, 64})}), 20));
  // Softmax and normalizations.
  c.push_back(make("Softmax_axis_last", "Softmax", {in({2, 4, 16}, -3.f, 3.f)}, {out({2, 4, 16})},
                   {{"axis", -1L}}));
  c.push_back(make("Softmax_axis1", "Softmax", {in({2, 8, 4, 4}, -3.f, 3.f)}, {out({2, 8, 4, 4})},
                   {{"axis", 1L}}));
  c.push_back(make("LayerNormalization_last", "LayerNormalization",
                   {in({2, 4, 32}), weight({32}, .5f, 1.5f), weight({32})}, {out({2, 4, 32})},
                   {{"axis", -1L}, {"epsilon", 1e-5f}}));
  c.push_back(make(
      "BatchNormalization", "BatchNormalization",
      {in({1, 8, 4, 4}), weight({8}, .5f, 1.5f), weight({8}), weight({8}), weight({8}, .5f, 2.f)},
      {out({1, 8, 4, 4})}, {{"epsilon", 1e-5f}}));
  c.push_back(make("InstanceNormalization", "InstanceNormalization",
                   {in({1, 4, 8, 8}), weight({4}, .5f, 1.5f), weight({4})}, {out({1, 4, 8, 8})},
                   {{"epsilon", 1e-5f}}));
  // Pooling.
  c.push_back(make("MaxPool_2x2_stride2", "MaxPool", {in({1, 4, 8, 8})}, {out({1, 4, 4, 4})},
                   {{"kernel_shape", list({2, 2})}, {"strides", list({2, 2})}}));
  c.push_back(make(
      "MaxPool_3x3_stride2_pad1", "MaxPool", {in({1, 4, 9, 9})}, {out({1, 4, 5, 5})},
      {{"kernel_shape", list({3, 3})}, {"strides", list({2, 2})}, {"pads", list({1, 1, 1, 1})}}));
  c.push_back(make("AveragePool_2x2_stride2", "AveragePool", {in({1, 4, 8, 8})},
                   {out({1, 4, 4, 4})},
                   {{"kernel_shape", list({2, 2})}, {"strides", list({2, 2})}}));
  c.push_back(make("AveragePool_3x3_pad1_exclude_pad", "AveragePool", {in({1, 4, 8, 8})},
                   {out({1, 4, 8, 8})},
                   {{"kernel_shape", list({3, 3})}, {"pads", list({1, 1, 1, 1})}}));
  c.push_back(make(
      "AveragePool_3x3_pad1_include_pad", "AveragePool", {in({1, 4, 8, 8})}, {out({1, 4, 8, 8})},
      {{"kernel_shape", list({3, 3})}, {"pads", list({1, 1, 1, 1})}, {"count_include_pad", 1L}}));
  c.push_back(
      make("GlobalAveragePool", "GlobalAveragePool", {in({1, 8, 7, 7})}, {out({1, 8, 1, 1})}));
  // Data movement.
  c.push_back(
      make("Reshape", "Reshape", {in({2, 3, 4, 5}), ints({3}, {2, -1, 5})}, {out({2, 12, 5})}));
  c.push_back(make("Transpose_nchw_to_nhwc", "Transpose", {in({2, 3, 4, 5})}, {out({2, 4, 5, 3})},
                   {{"perm", list({0, 2, 3, 1})}}));
  c.push_back(
      make("Transpose_2d", "Transpose", {in({16, 24})}, {out({24, 16})}, {{"perm", list({1, 0})}}));
  c.push_back(make("Concat_axis1", "Concat", {in({1, 3, 4, 4}), in({1, 5, 4, 4})},
                   {out({1, 8, 4, 4})}, {{"axis", 1L}}));
  c.push_back(make("Concat_last_with_constant", "Concat", {in({2, 3, 4}), weight({2, 3, 2})},
                   {out({2, 3, 6})}, {{"axis", -1L}}));
  c.push_back(make("Split_axis1_sizes", "Split", {in({1, 8, 4, 4}), ints({2}, {3, 5})},
                   {out({1, 3, 4, 4}), out({1, 5, 4, 4})}, {{"axis", 1L}}));
  c.push_back(make("Split_last_equal", "Split", {in({2, 6})},
                   {out({2, 2}), out({2, 2}), out({2, 2})}, {{"axis", -1L}}));
  c.push_back(make(
      "Slice_steps", "Slice",
      {in({2, 8, 6}), ints({2}, {1, 0}), ints({2}, {7, 6}), ints({2}, {1, 2}), ints({2}, {2, 2})},
      {out({2, 3, 3})}));
  c.push_back(make("Slice_negative_start", "Slice",
                   {in({4, 10}), ints({1}, {-4}), ints({1}, {1000}), ints({1}, {1})},
                   {out({4, 4})}));
  c.push_back(make("Gather_axis0", "Gather", {in({10, 8}), ints({3}, {7, 0, 3})}, {out({3, 8})},
                   {{"axis", 0L}}));
  c.push_back(make("Gather_axis1_2d_indices", "Gather", {in({2, 6, 4}), ints({2, 2}, {5, 0, 1, 3})},
                   {out({2, 2, 2, 4})}, {{"axis", 1L}}));
  c.push_back(make("Pad_constant", "Pad",
                   {in({1, 3, 4, 4}), ints({8}, {0, 0, 1, 2, 0, 0, 2, 1}), floats({}, {0.5f})},
                   {out({1, 3, 7, 7})}, {{"mode", text("constant")}}));
  c.push_back(make("Pad_reflect", "Pad", {in({1, 2, 5, 5}), ints({8}, {0, 0, 1, 1, 0, 0, 2, 2})},
                   {out({1, 2, 8, 8})}, {{"mode", text("reflect")}}));
  c.push_back(make("Resize_nearest_asymmetric_floor", "Resize",
                   {in({1, 2, 4, 4}), omitted(), floats({4}, {1, 1, 2, 2})}, {out({1, 2, 8, 8})},
                   {{"mode", text("nearest")},
                    {"coordinate_transformation_mode", text("asymmetric")},
                    {"nearest_mode", text("floor")}}));
  c.push_back(make("Resize_nearest_half_pixel", "Resize",
                   {in({1, 2, 4, 4}), omitted(), floats({4}, {1, 1, 2, 2})}, {out({1, 2, 8, 8})},
                   {{"mode", text("nearest")}}));
  c.push_back(make("Resize_linear_half_pixel", "Resize",
                   {in({1, 2, 4, 4}), omitted(), floats({4}, {1, 1, 2, 2})}, {out({1, 2, 8, 8})},
                   {{"mode", text("linear")}}));
  c.push_back(
      make("Resize_linear_align_corners_sizes", "Resize",
           {in({1, 2, 4, 4}), omitted(), omitted(), ints({4}, {1, 2, 6, 7})}, {out({1, 2, 6, 7})},
           {{"mode", text("linear")}, {"coordinate_transformation_mode", text("align_corners")}}));
  // Reductions (opset 17: ReduceMean takes axes as an attribute, ReduceSum as an input).
  c.push_back(make("ReduceMean_spatial_keepdims", "ReduceMean", {in({1, 4, 5, 6})},
                   {out({1, 4, 1, 1})}, {{"axes", list({2, 3})}, {"keepdims", 1L}}));
  c.push_back(make("ReduceSum_last_no_keepdims", "ReduceSum", {in({2, 3, 8}), ints({1}, {-1})},
                   {out({2, 3})}, {{"keepdims", 0L}}));
  // Selection, casts, clipping, powers.
  c.push_back(make("Where_broadcast", "Where",
                   {in_typed(DType::kBool, {2, 1, 8}), in({2, 4, 8}), weight({8})},
                   {out({2, 4, 8})}));
  c.push_back(
      without_fp16(make("Cast_i64_to_f32", "Cast", {in_typed(DType::kI64, {4, 6}, -100.f, 100.f)},
                        {out({4, 6})}, {{"to", int64_t{1}}})));
  c.push_back(without_fp16(make("Cast_f32_to_f16", "Cast", {in({4, 6}, -4.f, 4.f)},
                                {out({4, 6}, DType::kF16)}, {{"to", int64_t{10}}})));
  c.push_back(make("Clip_min_max", "Clip",
                   {in({2, 3, 8}, -2.f, 2.f), floats({}, {-.5f}), floats({}, {1.f})},
                   {out({2, 3, 8})}));
  c.push_back(make("Clip_min_only", "Clip", {in({2, 3, 8}, -2.f, 2.f), floats({}, {0.f})},
                   {out({2, 3, 8})}));
  c.push_back(
      make("Pow_square", "Pow", {in({2, 3, 8}, -2.f, 2.f), floats({}, {2.f})}, {out({2, 3, 8})}));
  c.push_back(
      make("Pow_elementwise", "Pow", {in({2, 8}, .5f, 2.f), in({2, 8}, -2.f, 2.f)}, {out({2, 8})}));
  c.push_back(make("Sqrt", "Sqrt", {in({2, 3, 8, 8}, .01f, 4.f)}, {out({2, 3, 8, 8})}));
  // Edge cases of the same ops: where backends' rules and kernels most often part ways.
  c.push_back(make("Conv_auto_pad_same_upper_stride2", "Conv",
                   {in({1, 4, 7, 7}), weight({4, 4, 3, 3}, -.5f, .5f)}, {out({1, 4, 4, 4})},
                   {{"kernel_shape", list({3, 3})},
                    {"strides", list({2, 2})},
                    {"auto_pad", text("SAME_UPPER")}}));
  c.push_back(make("Conv_asymmetric_pads", "Conv",
                   {in({1, 3, 6, 6}), weight({4, 3, 3, 3}, -.5f, .5f)}, {out({1, 4, 5, 5})},
                   {{"kernel_shape", list({3, 3})}, {"pads", list({0, 1, 1, 0})}}));
  c.push_back(make("Conv_group2", "Conv", {in({1, 4, 6, 6}), weight({4, 2, 3, 3}, -.5f, .5f)},
                   {out({1, 4, 6, 6})},
                   {{"kernel_shape", list({3, 3})}, {"pads", list({1, 1, 1, 1})}, {"group", 2L}}));
  c.push_back(make("ConvTranspose_depthwise_stride2", "ConvTranspose",
                   {in({1, 4, 4, 4}), weight({4, 1, 2, 2}, -.5f, .5f)}, {out({1, 4, 8, 8})},
                   {{"kernel_shape", list({2, 2})}, {"strides", list({2, 2})}, {"group", 4L}}));
  c.push_back(
      make("MatMul_vector_matrix", "MatMul", {in({16}), weight({16, 8}, -.5f, .5f)}, {out({8})}));
  c.push_back(
      make("Add_i64", "Add",
           {in_typed(DType::kI64, {4, 6}, -50.f, 50.f), in_typed(DType::kI64, {4, 6}, -50.f, 50.f)},
           {out({4, 6}, DType::kI64)}));
  c.back().fp16 = false;
  c.push_back(
      make("Softmax_axis0", "Softmax", {in({4, 6}, -3.f, 3.f)}, {out({4, 6})}, {{"axis", 0L}}));
  c.push_back(make("LayerNormalization_axis1", "LayerNormalization",
                   {in({2, 4, 8}), weight({4, 8}, .5f, 1.5f), weight({4, 8})}, {out({2, 4, 8})},
                   {{"axis", 1L}, {"epsilon", 1e-5f}}));
  c.push_back(make("MaxPool_ceil_mode", "MaxPool", {in({1, 2, 7, 7})}, {out({1, 2, 4, 4})},
                   {{"kernel_shape", list({2, 2})}, {"strides", list({2, 2})}, {"ceil_mode", 1L}}));
  c.push_back(make("AveragePool_ceil_mode", "AveragePool", {in({1, 2, 7, 7})}, {out({1, 2, 4, 4})},
                   {{"kernel_shape", list({2, 2})}, {"strides", list({2, 2})}, {"ceil_mode", 1L}}));
  c.push_back(make("MaxPool_dilation2", "MaxPool", {in({1, 2, 8, 8})}, {out({1, 2, 6, 6})},
                   {{"kernel_shape", list({2, 2})}, {"dilations", list({2, 2})}}));
  c.push_back(make("Transpose_5d", "Transpose", {in({2, 3, 2, 2, 2})}, {out({2, 2, 3, 2, 2})},
                   {{"perm", list({0, 2, 1, 4, 3})}}));
  c.push_back(make("Concat_three_axis0", "Concat", {in({1, 4}), in({2, 4}), in({3, 4})},
                   {out({6, 4})}, {{"axis", 0L}}));
  c.push_back(make("Gather_negative_indices", "Gather", {in({5, 4}), ints({2}, {-1, 0})},
                   {out({2, 4})}, {{"axis", 0L}}));
  c.push_back(make("Pad_edge", "Pad", {in({1, 2, 4, 4}), ints({8}, {0, 0, 2, 1, 0, 0, 1, 2})},
                   {out({1, 2, 7, 7})}, {{"mode", text("edge")}}));
  c.push_back(make("Resize_nearest_round_prefer_ceil", "Resize",
                   {in({1, 2, 4, 4}), omitted(), floats({4}, {1, 1, 1.5f, 1.5f})},
                   {out({1, 2, 6, 6})},
                   {{"mode", text("nearest")}, {"nearest_mode", text("round_prefer_ceil")}}));
  c.push_back(make("Resize_cubic", "Resize",
                   {in({1, 1, 4, 4}), omitted(), floats({4}, {1, 1, 2, 2})}, {out({1, 1, 8, 8})},
                   {{"mode", text("cubic")}}));
  c.push_back(make("ReduceMean_all_no_keepdims", "ReduceMean", {in({2, 3, 4})}, {out({})},
                   {{"keepdims", 0L}}));
  return c;
}

// --- seeded data --------------------------------------------------------------------------------

// FNV-1a of the case name and input index, then SplitMix64: the same numbers on every machine.
class SeededStream {
 public:
  SeededStream(const std::string& name, size_t index) {
    uint64_t h = 1469598103934665603ULL;
    for (char ch : name) h = (h ^ static_cast<uint8_t>(ch)) * 1099511628211ULL;
    state_ = h ^ (0x9E3779B97F4A7C15ULL * (index + 1));
  }
  uint64_t next() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }
  // Uniform in [lo, hi].
  double uniform(double lo, double hi) {
    return lo + (hi - lo) * static_cast<double>(next() >> 11) * 0x1.0p-53;
  }

 private:
  uint64_t state_ = 0;
};

Tensor make_tensor(const OpCase& op_case, size_t index) {
  const InputSpec& spec = op_case.inputs[index];
  Tensor t(spec.dtype, spec.dims);
  const auto count = static_cast<size_t>(t.elements());
  SeededStream stream(op_case.name, index);
  switch (spec.dtype) {
    case DType::kF32: {
      auto v = t.values<float>();
      for (size_t i = 0; i < count; ++i) {
        v[i] = i < spec.floats.size() ? spec.floats[i]
                                      : static_cast<float>(stream.uniform(spec.lo, spec.hi));
      }
      break;
    }
    case DType::kI64: {
      auto v = t.values<int64_t>();
      for (size_t i = 0; i < count; ++i) {
        v[i] = i < spec.ints.size() ? spec.ints[i] : std::llround(stream.uniform(spec.lo, spec.hi));
      }
      break;
    }
    case DType::kBool: {
      auto v = t.values<uint8_t>();
      for (size_t i = 0; i < count; ++i) v[i] = static_cast<uint8_t>(stream.next() >> 63);
      break;
    }
    default:
      break;  // the table uses no other input dtype
  }
  return t;
}

}  // namespace

const std::vector<OpCase>& op_cases() {
  static const std::vector<OpCase> cases = make_cases();
  return cases;
}

const OpCase* find_op_case(const std::string& name) {
  for (const OpCase& c : op_cases()) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

Graph build_graph(const OpCase& op_case) {
  std::vector<test::NodeInput> inputs;
  for (size_t i = 0; i < op_case.inputs.size(); ++i) {
    const InputSpec& spec = op_case.inputs[i];
    inputs.push_back(spec.omitted    ? test::NodeInput::omitted()
                     : spec.constant ? test::NodeInput::constant_of(make_tensor(op_case, i))
                                     : test::NodeInput::input(spec.dtype, Shape(spec.dims)));
  }
  std::vector<test::NodeOutput> outputs;
  for (const OutputSpec& spec : op_case.outputs) outputs.push_back({spec.dtype, Shape(spec.dims)});
  return test::one_node_graph(op_case.name, op_case.op, op_case.attributes, inputs, outputs,
                              op_case.opset);
}

std::vector<Tensor> make_inputs(const OpCase& op_case) {
  std::vector<Tensor> inputs;
  for (size_t i = 0; i < op_case.inputs.size(); ++i) {
    const InputSpec& spec = op_case.inputs[i];
    if (!spec.omitted && !spec.constant) inputs.push_back(make_tensor(op_case, i));
  }
  return inputs;
}

}  // namespace hsched::conformance
