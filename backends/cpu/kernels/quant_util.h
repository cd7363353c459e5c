// Internal to the quantization kernels (quant_kernels.cpp, quant_matmul.cpp, quant_conv.cpp): the
// rounding and saturation every ONNX quantized op shares, and the checks and reads of their
// scale / zero-point inputs.
#pragma once

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include "backends/cpu/kernels/kernel.h"

namespace hsched::cpu {

// Registration of the families split out of quant_kernels.cpp; register_quant_kernels calls them.
void register_quant_matmul_kernels(KernelRegistry& registry);  // QLinearMatMul, MatMulInteger
void register_quant_conv_kernels(KernelRegistry& registry);    // QLinearConv, ConvInteger

// Rounds half to even (the default rounding mode's result, without a libm call, so loops
// vectorize): adding 1.5 * 2^23 leaves no fraction bits. Exact for |v| <= 2^22, which callers
// ensure by clamping first.
inline float round_half_even(float v) {
  constexpr float kMagic = 12582912.0f;  // 1.5 * 2^23
  const float shifted = v + kMagic;
  return shifted - kMagic;
}

// saturate(round_half_even(v) + zero_point) to the range of Q (uint8_t or int8_t). v is clamped
// before rounding (to integer bounds, so the result is the same) and the zero point added after,
// as integers: adding it in float first would round away fractions of large v. NaN gives Q's
// lowest value, as ONNX Runtime's MLAS does (its max(v, lo) returns lo for NaN).
template <typename Q>
inline Q saturate_round(float v, int32_t zero_point) {
  const float lo = static_cast<float>(int32_t{std::numeric_limits<Q>::min()} - zero_point);
  const float hi = static_cast<float>(int32_t{std::numeric_limits<Q>::max()} - zero_point);
  v = v >= lo ? v : lo;
  v = v <= hi ? v : hi;
  return static_cast<Q>(static_cast<int32_t>(round_half_even(v)) + zero_point);
}

// QuantizeLinear's and DequantizeLinear's loops over `n` elements sharing one scale and zero
// point (vectorized, one clone per vector width: quant_kernels.cpp), and the same by the 8-bit
// type for templates.
void quantize_to_u8(const float* x, uint8_t* y, int64_t n, float scale, int32_t zero_point);
void quantize_to_i8(const float* x, int8_t* y, int64_t n, float scale, int32_t zero_point);
void dequantize_u8(const uint8_t* x, float* y, int64_t n, float scale, int32_t zero_point);
void dequantize_i8(const int8_t* x, float* y, int64_t n, float scale, int32_t zero_point);
inline void quantize_run(const float* x, uint8_t* y, int64_t n, float scale, int32_t zero_point) {
  quantize_to_u8(x, y, n, scale, zero_point);
}
inline void quantize_run(const float* x, int8_t* y, int64_t n, float scale, int32_t zero_point) {
  quantize_to_i8(x, y, n, scale, zero_point);
}
inline void dequantize_run(const uint8_t* x, float* y, int64_t n, float scale, int32_t zero_point) {
  dequantize_u8(x, y, n, scale, zero_point);
}
inline void dequantize_run(const int8_t* x, float* y, int64_t n, float scale, int32_t zero_point) {
  dequantize_i8(x, y, n, scale, zero_point);
}

// y[i] = table[x[i]] over n bytes, 64 at a time with AVX-512 VBMI (kQdqTableOp's lookup;
// quant_kernels.cpp).
void look_up(const uint8_t* __restrict x, uint8_t* __restrict y, int64_t n,
             const uint8_t* __restrict table);

// One quantization parameter pair (scale and zero point inputs) of a node, as checked at kernel
// creation: `count` values, 1 for a whole tensor, otherwise one per index of the axis it applies
// to. The zero point may be omitted (then 0 of the data's dtype).
struct QuantParam {
  size_t scale_input = 0;
  size_t zero_point_input = 0;
  int64_t count = 1;
};

// Checks that the scale input is f32 and the zero point (when present) has `data_dtype`, and that
// both hold either one value or `channels` values (rank 0 or 1; rank 1 of [channels] for
// per-channel). `channels` < 0 forbids per-channel. `what` names the pair in errors ("w").
// `same_shape`: the zero point has the scale's shape (QuantizeLinear, DequantizeLinear); otherwise
// each is per tensor or per channel on its own (a per-channel scale with one zero point).
// `matrix_axis` -1 (B's columns) or -2 (A's rows) of a matrix product: per channel may also be
// written as ONNX's N-D form, that axis holding the channels and every other dim 1 ([1, N] for B,
// as ONNX Runtime requires it).
Result<QuantParam> check_quant_param(const KernelSpec& spec, size_t scale_input,
                                     size_t zero_point_input, DType data_dtype,
                                     const std::string& what, int64_t channels,
                                     bool same_shape = false, int matrix_axis = 0);

// Whether `shape` holds `channels` parameters as check_quant_param takes them: [channels], or
// with a `matrix_axis` (-1, -2) the N-D form whose other dims are 1.
bool per_channel_shape(const Shape& shape, int64_t channels, int matrix_axis);

// Input i of a kernel's run, or nullptr when the node omits it (or has fewer inputs).
inline const Tensor* optional_input(std::span<const Tensor* const> inputs, size_t i) {
  return i < inputs.size() ? inputs[i] : nullptr;
}

// The scale values of a checked pair, at run time (1 or count values).
std::vector<float> read_scales(const Tensor& scale);
// The zero point values as int32 (u8/i8/i32 tensors), or `count` zeros when omitted.
std::vector<int32_t> read_zero_points(const Tensor* zero_point, int64_t count);

// u8 or i8: the dtypes of quantized data these kernels take.
inline bool is_quantized_dtype(DType dtype) { return dtype == DType::kU8 || dtype == DType::kI8; }

// Calls f(T{}) with T uint8_t or int8_t for a quantized dtype.
template <typename F>
void dispatch_quantized(DType dtype, F&& f) {
  if (dtype == DType::kU8) {
    f(uint8_t{});
  } else {
    f(int8_t{});
  }
}

// Copies u8/i8 `data` minus its zero point(s) into int16 (no overflow: at most 255 - (-128)).
// Per-channel: `zero_points` has one value per `block` consecutive elements, cycling; otherwise
// its first value applies to all.
void subtract_zero_point(const Tensor& data, const std::vector<int32_t>& zero_points, int64_t block,
                         std::vector<int16_t>& out);

// The value of a one-element constant input as int32 (a zero point: u8, i8 or i32), 0 when the
// input is omitted.
inline int32_t constant_zero_point(const KernelSpec& spec, size_t i) {
  return spec.has_input(i) ? read_zero_points(spec.constant(i), 1)[0] : 0;
}

// Whether oneDNN computes u8/s8 x s8 products exactly here: with VNNI instructions. Without them
// its AVX2 / AVX-512 kernels add pairs of products in saturating 16 bits.
bool exact_int8_products();

// Whether QLinearConv's or QLinearMatMul's oneDNN path takes a node: exact products here,
// weights (input `w`) a constant int8 tensor with zero points (input `w_zp`) omitted or all 0,
// each of `params` omitted or a constant, and no empty tensor.
bool int8_weights_path(const KernelSpec& spec, size_t w, size_t w_zp,
                       std::initializer_list<size_t> params);

}  // namespace hsched::cpu
