// QuantizeLinear, DequantizeLinear and DynamicQuantizeLinear (ONNX opsets 10-13): elementwise
// loops over TBB, per tensor or per axis, with the rounding (half to even) and saturation of
// quant_util.h. Scales and zero points may arrive at run time; their shapes are checked when the
// kernel is created and their values read on every run (a few values).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <type_traits>
#include <utility>
#include <variant>

#if defined(__x86_64__)
#include <immintrin.h>
#endif
#include <oneapi/dnnl/dnnl.hpp>
#include <tbb/blocked_range.h>
#include <tbb/parallel_reduce.h>

#include "backends/cpu/kernels/layout_util.h"
#include "backends/cpu/kernels/parallel.h"
#include "backends/cpu/kernels/qdq_fusion.h"
#include "backends/cpu/kernels/qlinear_arith.h"
#include "backends/cpu/kernels/quant_util.h"
#include "backends/cpu/kernels/vector_clones.h"

namespace hsched::cpu {

bool per_channel_shape(const Shape& shape, int64_t channels, int matrix_axis) {
  if (channels < 0) return false;
  if (shape.dims == std::vector<int64_t>{channels}) return true;
  const int64_t rank = shape.rank();
  if (matrix_axis == 0 || rank < 2) return false;
  for (int64_t i = 0; i < rank; ++i) {
    if (shape.dims[i] != (i == rank + matrix_axis ? channels : 1)) return false;
  }
  return true;
}

Result<QuantParam> check_quant_param(const KernelSpec& spec, size_t scale_input,
                                     size_t zero_point_input, DType data_dtype,
                                     const std::string& what, int64_t channels, bool same_shape,
                                     int matrix_axis) {
  if (!spec.has_input(scale_input)) return invalid_node(spec, "needs " + what + "_scale");
  const Value& scale = *spec.inputs[scale_input];
  if (scale.dtype != DType::kF32) {
    return unsupported(
        spec, what + "_scale is " + std::string(dtype_name(scale.dtype)) + " (supported: f32)");
  }
  QuantParam param{scale_input, zero_point_input, scale.shape.elements()};
  const bool one = param.count == 1 && scale.shape.rank() <= 1;
  const bool per_channel = per_channel_shape(scale.shape, channels, matrix_axis);
  if (!one && !per_channel) {
    const std::string n = std::to_string(channels);
    const std::string forms = matrix_axis == -1   ? ", as [" + n + "] or [1, " + n + "]"
                              : matrix_axis == -2 ? ", as [" + n + "] or [" + n + ", 1]"
                                                  : "";
    return invalid_node(spec, what + "_scale " + scale.shape.to_string() +
                                  (channels < 0 ? " must hold one value"
                                                : " must hold one value or " + n +
                                                      " (one per channel" + forms + ")"));
  }
  if (spec.has_input(zero_point_input)) {
    const Value& zp = *spec.inputs[zero_point_input];
    if (zp.dtype != data_dtype) {
      return invalid_node(spec, what + "_zero_point is " + std::string(dtype_name(zp.dtype)) +
                                    ", its data " + std::string(dtype_name(data_dtype)));
    }
    const int64_t count = zp.shape.elements();
    const bool one_value = count == 1 && zp.shape.rank() <= 1;
    const bool fits = same_shape ? count == param.count && (one_value || zp.shape == scale.shape)
                                 : one_value || per_channel_shape(zp.shape, channels, matrix_axis);
    if (!fits) {
      const std::string expected =
          same_shape ? "the shape of " + what + "_scale (" + scale.shape.to_string() + ")"
                     : "one value" + (channels >= 0 ? " or " + std::to_string(channels) : "");
      return invalid_node(spec,
                          what + "_zero_point " + zp.shape.to_string() + " must have " + expected);
    }
  }
  return param;
}

std::vector<float> read_scales(const Tensor& scale) {
  auto v = scale.values<float>();
  return {v.begin(), v.end()};
}

std::vector<int32_t> read_zero_points(const Tensor* zero_point, int64_t count) {
  std::vector<int32_t> out(static_cast<size_t>(count), 0);
  if (zero_point == nullptr) return out;
  out.clear();
  switch (zero_point->dtype()) {
    case DType::kU8:
      for (uint8_t v : zero_point->values<uint8_t>()) out.push_back(v);
      break;
    case DType::kI8:
      for (int8_t v : zero_point->values<int8_t>()) out.push_back(v);
      break;
    case DType::kI32:
      for (int32_t v : zero_point->values<int32_t>()) out.push_back(v);
      break;
    default:
      break;  // refused at creation
  }
  return out;
}

void subtract_zero_point(const Tensor& data, const std::vector<int32_t>& zero_points, int64_t block,
                         std::vector<int16_t>& out) {
  const int64_t n = data.elements();
  out.resize(static_cast<size_t>(n));
  const int64_t channels = static_cast<int64_t>(zero_points.size());
  dispatch_quantized(data.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* in = data.values<T>().data();
    parallel_range(n, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end;) {
        const int64_t c = channels == 1 ? 0 : (i / block) % channels;
        const int64_t stop = channels == 1 ? end : std::min(end, (i / block + 1) * block);
        const int32_t zp = zero_points[static_cast<size_t>(c)];
        for (; i < stop; ++i) out[static_cast<size_t>(i)] = static_cast<int16_t>(in[i] - zp);
      }
    });
  });
}

// The elementwise loops of QuantizeLinear and DequantizeLinear over one run of elements sharing
// a scale and zero point: separate functions with unaliased pointers so that they vectorize (in
// the kernels' lambdas a u8 store may alias the captured pointers, which are then reloaded per
// element), one clone per vector width. Non-template: GCC multiversions no templates.
template <typename Q>
[[gnu::always_inline]] inline void quantize_floats(const float* __restrict x, Q* __restrict y,
                                                   int64_t n, float scale, int32_t zero_point) {
  for (int64_t i = 0; i < n; ++i) y[i] = saturate_round<Q>(x[i] / scale, zero_point);
}
HSCHED_VECTOR_CLONES void quantize_to_u8(const float* x, uint8_t* y, int64_t n, float scale,
                                         int32_t zero_point) {
  quantize_floats(x, y, n, scale, zero_point);
}
HSCHED_VECTOR_CLONES void quantize_to_i8(const float* x, int8_t* y, int64_t n, float scale,
                                         int32_t zero_point) {
  quantize_floats(x, y, n, scale, zero_point);
}

template <typename Q>
[[gnu::always_inline]] inline void dequantize_bytes(const Q* __restrict x, float* __restrict y,
                                                    int64_t n, float scale, int32_t zero_point) {
  for (int64_t i = 0; i < n; ++i) y[i] = static_cast<float>(int32_t{x[i]} - zero_point) * scale;
}
HSCHED_VECTOR_CLONES void dequantize_u8(const uint8_t* x, float* y, int64_t n, float scale,
                                        int32_t zero_point) {
  dequantize_bytes(x, y, n, scale, zero_point);
}
HSCHED_VECTOR_CLONES void dequantize_i8(const int8_t* x, float* y, int64_t n, float scale,
                                        int32_t zero_point) {
  dequantize_bytes(x, y, n, scale, zero_point);
}

namespace {

// a[k] = a[k] + b[k] (or *): kQdqBinaryOp's float step, per vector width.
HSCHED_VECTOR_CLONES void combine_floats(float* __restrict a, const float* __restrict b, int64_t n,
                                         bool add) {
  if (add) {
    for (int64_t k = 0; k < n; ++k) a[k] = a[k] + b[k];
  } else {
    for (int64_t k = 0; k < n; ++k) a[k] = a[k] * b[k];
  }
}

// kQdqBinaryOp on u8 data in one pass: y = Q(DQ(a) op b') with b' = DQ(b) (u8 b) or b itself
// (float b), the same float operations as dequantize_bytes, combine_floats and quantize_floats,
// so the same bytes, without the float blocks in between (ONNX Runtime's default activation
// type; other types take those three loops).
template <typename B>
[[gnu::always_inline]] inline void qdq_combine(const uint8_t* __restrict a,
                                               const B* __restrict b, uint8_t* __restrict y,
                                               int64_t n, const float (&scales)[3],
                                               const int32_t (&zero_points)[3], bool add) {
  const float as = scales[0], bs = scales[1], ys = scales[2];
  const int32_t az = zero_points[0], bz = zero_points[1], yz = zero_points[2];
  const auto b_value = [&](int64_t i) {
    if constexpr (std::is_same_v<B, float>) {
      return b[i];
    } else {
      return static_cast<float>(int32_t{b[i]} - bz) * bs;
    }
  };
  if (add) {
    for (int64_t i = 0; i < n; ++i) {
      const float v = static_cast<float>(int32_t{a[i]} - az) * as + b_value(i);
      y[i] = saturate_round<uint8_t>(v / ys, yz);
    }
  } else {
    for (int64_t i = 0; i < n; ++i) {
      const float v = static_cast<float>(int32_t{a[i]} - az) * as * b_value(i);
      y[i] = saturate_round<uint8_t>(v / ys, yz);
    }
  }
}
HSCHED_VECTOR_CLONES void qdq_combine_u8(const uint8_t* a, const uint8_t* b, uint8_t* y, int64_t n,
                                         const float (&scales)[3], const int32_t (&zero_points)[3],
                                         bool add) {
  qdq_combine(a, b, y, n, scales, zero_points, add);
}
HSCHED_VECTOR_CLONES void qdq_combine_f32(const uint8_t* a, const float* b, uint8_t* y, int64_t n,
                                          const float (&scales)[3],
                                          const int32_t (&zero_points)[3], bool add) {
  qdq_combine(a, b, y, n, scales, zero_points, add);
}

// How a per-axis parameter walks a tensor: `channels` values, each for runs of `inner`
// consecutive elements, cycling (per tensor: one channel whose run is the whole tensor).
struct AxisWalk {
  int64_t total = 0;
  int64_t channels = 1;
  int64_t inner = 1;
};

// Calls f(begin, end, channel) over [0, total), in parallel chunks cut at channel boundaries.
template <typename F>
void for_each_channel_run(const AxisWalk& walk, F&& f) {
  parallel_range(walk.total, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end;) {
      const int64_t run = walk.channels == 1 ? 0 : i / walk.inner;
      const int64_t stop = walk.channels == 1 ? end : std::min(end, (run + 1) * walk.inner);
      f(i, stop, walk.channels == 1 ? 0 : run % walk.channels);
      i = stop;
    }
  });
}

// The scale/zero point pair of QuantizeLinear or DequantizeLinear (inputs 1 and 2) against data
// input 0: one value, or (opset 13's `axis`) one per index of that axis of x.
Result<AxisWalk> check_axis_params(const KernelSpec& spec, DType data_dtype, const char* what) {
  const auto& x = spec.in_dims(0);
  AxisWalk walk{spec.inputs[0]->shape.elements(), 1, 1};
  int64_t channels = -1;
  size_t axis = 0;
  // A scale of one value is per tensor whatever `axis` says (ONNX Runtime's QDQ models give
  // [1] scales to 1-D biases, with the default axis 1 out of range for them).
  const Value* scale = spec.has_input(1) ? spec.inputs[1] : nullptr;
  if (spec.opset >= 13 && scale && scale->shape.rank() == 1 && scale->shape.elements() != 1) {
    HSCHED_ASSIGN_OR_RETURN(int64_t a,
                            normalize_axis(spec, spec.node.attr_int("axis", 1), x.size()));
    axis = static_cast<size_t>(a);
    channels = x[axis];
  }
  HSCHED_ASSIGN_OR_RETURN(QuantParam param,
                          check_quant_param(spec, 1, 2, data_dtype, what, channels, true));
  if (param.count != 1) {  // one per index of the axis (check_quant_param saw [channels])
    walk.channels = channels;
    walk.inner = 1;
    for (size_t i = axis + 1; i < x.size(); ++i) walk.inner *= x[i];
  }
  if (spec.out_dims(0) != x) {
    return invalid_node(spec, "output " + spec.outputs[0]->shape.to_string() +
                                  " does not have the input's shape " +
                                  spec.inputs[0]->shape.to_string());
  }
  return walk;
}

// y = saturate(round_half_even(x / scale) + zero_point); x f32 or i32, y u8 or i8 (the zero
// point's dtype; u8 when it is omitted).
Result<std::unique_ptr<Kernel>> make_quantize_linear(const KernelSpec& spec) {
  HSCHED_RETURN_IF_ERROR(check_static_shapes(spec, false));
  const DType x_dtype = spec.inputs[0]->dtype;
  if (x_dtype != DType::kF32 && x_dtype != DType::kI32) {
    return unsupported(spec, "x is " + std::string(dtype_name(x_dtype)) + " (supported: f32, i32)");
  }
  const DType y_dtype = spec.has_input(2) ? spec.inputs[2]->dtype : DType::kU8;
  if (!is_quantized_dtype(y_dtype)) {
    return unsupported(
        spec, "y_zero_point is " + std::string(dtype_name(y_dtype)) + " (supported: u8, i8)");
  }
  if (spec.outputs[0]->dtype != y_dtype) {
    return invalid_node(spec, "output is " + std::string(dtype_name(spec.outputs[0]->dtype)) +
                                  ", the zero point " + std::string(dtype_name(y_dtype)));
  }
  HSCHED_ASSIGN_OR_RETURN(AxisWalk walk, check_axis_params(spec, y_dtype, "y"));
  return make_kernel(
      [walk, x_dtype, y_dtype](std::span<const Tensor* const> in, std::span<Tensor* const> out) {
        const std::vector<float> scales = read_scales(*in[1]);
        const std::vector<int32_t> zps =
            read_zero_points(optional_input(in, 2), static_cast<int64_t>(scales.size()));
        dispatch_quantized(y_dtype, [&](auto y_tag) {
          using Q = decltype(y_tag);
          Q* y = out[0]->values<Q>().data();
          if (x_dtype == DType::kF32) {
            const float* x = in[0]->values<float>().data();
            for_each_channel_run(walk, [&](int64_t begin, int64_t end, int64_t c) {
              const float scale = scales[static_cast<size_t>(c)];
              const int32_t zp = zps[static_cast<size_t>(c)];
              if constexpr (std::is_same_v<Q, uint8_t>) {
                quantize_to_u8(x + begin, y + begin, end - begin, scale, zp);
              } else {
                quantize_to_i8(x + begin, y + begin, end - begin, scale, zp);
              }
            });
            return;
          }
          const int32_t* x = in[0]->values<int32_t>().data();
          for_each_channel_run(walk, [&](int64_t begin, int64_t end, int64_t c) {
            const float scale = scales[static_cast<size_t>(c)];
            const int32_t zp = zps[static_cast<size_t>(c)];
            for (int64_t i = begin; i < end; ++i) {
              y[i] = saturate_round<Q>(static_cast<float>(x[i]) / scale, zp);
            }
          });
        });
        return Status::ok();
      });
}

// y = (x - zero_point) * scale in f32; x u8, i8 or i32 (the difference taken exactly, in int64).
Result<std::unique_ptr<Kernel>> make_dequantize_linear(const KernelSpec& spec) {
  HSCHED_RETURN_IF_ERROR(check_static_shapes(spec, false));
  const DType x_dtype = spec.inputs[0]->dtype;
  if (!is_quantized_dtype(x_dtype) && x_dtype != DType::kI32) {
    return unsupported(spec,
                       "x is " + std::string(dtype_name(x_dtype)) + " (supported: u8, i8, i32)");
  }
  if (spec.outputs[0]->dtype != DType::kF32) {
    return invalid_node(spec, "output is " + std::string(dtype_name(spec.outputs[0]->dtype)) +
                                  " (DequantizeLinear gives f32)");
  }
  HSCHED_ASSIGN_OR_RETURN(AxisWalk walk, check_axis_params(spec, x_dtype, "x"));
  return make_kernel(
      [walk, x_dtype](std::span<const Tensor* const> in, std::span<Tensor* const> out) {
        const std::vector<float> scales = read_scales(*in[1]);
        const std::vector<int32_t> zps =
            read_zero_points(optional_input(in, 2), static_cast<int64_t>(scales.size()));
        float* y = out[0]->values<float>().data();
        if (x_dtype != DType::kI32) {
          dispatch_quantized(x_dtype, [&](auto tag) {
            using Q = decltype(tag);
            const Q* x = in[0]->values<Q>().data();
            for_each_channel_run(walk, [&](int64_t begin, int64_t end, int64_t c) {
              const float scale = scales[static_cast<size_t>(c)];
              const int32_t zp = zps[static_cast<size_t>(c)];
              if constexpr (std::is_same_v<Q, uint8_t>) {
                dequantize_u8(x + begin, y + begin, end - begin, scale, zp);
              } else {
                dequantize_i8(x + begin, y + begin, end - begin, scale, zp);
              }
            });
          });
          return Status::ok();
        }
        const int32_t* x = in[0]->values<int32_t>().data();
        for_each_channel_run(walk, [&](int64_t begin, int64_t end, int64_t c) {
          const float scale = scales[static_cast<size_t>(c)];
          const int64_t zp = zps[static_cast<size_t>(c)];
          for (int64_t i = begin; i < end; ++i) {
            y[i] = static_cast<float>(int64_t{x[i]} - zp) * scale;
          }
        });
        return Status::ok();
      });
}

// The range of x widened to hold 0, over TBB.
std::pair<float, float> range_with_zero(std::span<const float> x) {
  using Range = std::pair<float, float>;
  return tbb::parallel_reduce(
      tbb::blocked_range<size_t>(0, x.size(), static_cast<size_t>(kParallelGrain)),
      Range{0.0f, 0.0f},
      [&](const tbb::blocked_range<size_t>& r, Range acc) {
        for (size_t i = r.begin(); i < r.end(); ++i) {
          acc.first = std::min(acc.first, x[i]);
          acc.second = std::max(acc.second, x[i]);
        }
        return acc;
      },
      [](Range a, Range b) {
        return Range{std::min(a.first, b.first), std::max(a.second, b.second)};
      });
}

// u8 y with y_scale = (max(0, max x) - min(0, min x)) / 255 and y_zero_point =
// saturate(round_half_even(-min / y_scale)); x all zero gives scale 0, zero point 0 and y 0.
Result<std::unique_ptr<Kernel>> make_dynamic_quantize_linear(const KernelSpec& spec) {
  HSCHED_RETURN_IF_ERROR(check_static_shapes(spec, false));
  if (spec.inputs[0]->dtype != DType::kF32) {
    return unsupported(
        spec, "x is " + std::string(dtype_name(spec.inputs[0]->dtype)) + " (supported: f32)");
  }
  const auto check_output = [&](size_t i, DType dtype, const std::vector<int64_t>* dims) -> Status {
    if (i >= spec.outputs.size() || spec.outputs[i] == nullptr) return Status::ok();
    const Value& v = *spec.outputs[i];
    const bool shape_ok = dims ? v.shape.dims == *dims : v.shape.elements() == 1;
    if (v.dtype != dtype || !shape_ok) {
      return invalid_node(spec, "output " + std::to_string(i) + " is " +
                                    std::string(dtype_name(v.dtype)) + " " + v.shape.to_string() +
                                    ", expected " + std::string(dtype_name(dtype)) + " " +
                                    (dims ? spec.inputs[0]->shape.to_string() : "of one value"));
    }
    return Status::ok();
  };
  HSCHED_RETURN_IF_ERROR(check_output(0, DType::kU8, &spec.in_dims(0)));
  HSCHED_RETURN_IF_ERROR(check_output(1, DType::kF32, nullptr));
  HSCHED_RETURN_IF_ERROR(check_output(2, DType::kU8, nullptr));
  return make_kernel([](std::span<const Tensor* const> in, std::span<Tensor* const> out) {
    const std::span<const float> x = in[0]->values<float>();
    auto [lo, hi] = range_with_zero(x);
    const float scale = (hi - lo) / 255.0f;
    const int32_t zp = scale == 0.0f ? 0 : saturate_round<uint8_t>(-lo / scale, 0);
    uint8_t* y = out[0]->values<uint8_t>().data();
    if (scale == 0.0f || std::isnan(scale)) {
      std::fill(y, y + x.size(), uint8_t{0});
    } else {
      parallel_range(static_cast<int64_t>(x.size()), [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) y[i] = saturate_round<uint8_t>(x[i] / scale, zp);
      });
    }
    if (out.size() > 1 && out[1] != nullptr) out[1]->values<float>()[0] = scale;
    if (out.size() > 2 && out[2] != nullptr)
      out[2]->values<uint8_t>()[0] = static_cast<uint8_t>(zp);
    return Status::ok();
  });
}

// kQdqBinaryOp of one 8-bit type (checked by make_qdq_binary): ONNX Runtime's QLinearAdd or
// QLinearMul arithmetic, in parallel chunks.
Result<std::unique_ptr<Kernel>> make_qlinear_binary(const KernelSpec& spec, bool add) {
  const bool swapped = spec.node.attr_int("swapped", 0) != 0;
  const DType dtype = spec.inputs[0]->dtype;
  return make_kernel([=](std::span<const Tensor* const> in, std::span<Tensor* const> out) {
    const auto scale_of = [&](size_t s) {
      return QuantScale{read_scales(*in[s])[0], read_zero_points(optional_input(in, s + 1), 1)[0]};
    };
    QLinearBinary op{add, swapped, scale_of(1), scale_of(4), scale_of(6)};
    const Tensor* a = in[0];
    const Tensor* b = in[3];
    const int64_t total = a->elements();
    if (total == 1 && !swapped) {  // MLAS takes the first of two single values as the fixed one
      std::swap(a, b);
      std::swap(op.a, op.b);
      op.swapped = true;
    }
    const int64_t period = b->elements();
    dispatch_quantized(dtype, [&](auto tag) {
      using Q = decltype(tag);
      const Q* av = a->values<Q>().data();
      const Q* bv = b->values<Q>().data();
      Q* y = out[0]->values<Q>().data();
      parallel_range(total, [&](int64_t begin, int64_t end) {
        qlinear_binary(op, av, bv, y, begin, end, period);
      });
    });
    return Status::ok();
  });
}

// kQdqBinaryOp (qdq_fusion.h): DQ(a) op DQ(b) -> Q in blocks that stay in L1, with the
// DequantizeLinear, Add/Mul and QuantizeLinear kernels' own float operations.
Result<std::unique_ptr<Kernel>> make_qdq_binary(const KernelSpec& spec) {
  HSCHED_RETURN_IF_ERROR(check_static_shapes(spec, false));
  if (spec.inputs.size() != 8 || !spec.has_input(0) || !spec.has_input(3) ||
      spec.outputs.size() != 1 || spec.outputs[0] == nullptr) {
    return invalid_node(spec, "takes a, a_scale, a_zero_point, b, b_scale, b_zero_point, "
                              "y_scale, y_zero_point and gives y");
  }
  const std::string op = spec.node.attr_string("op", "");
  if (op != "Add" && op != "Mul") return invalid_node(spec, "op '" + op + "' (Add or Mul)");
  const DType a_dtype = spec.inputs[0]->dtype, b_dtype = spec.inputs[3]->dtype;
  const DType y_dtype = spec.outputs[0]->dtype;
  const bool b_float = b_dtype == DType::kF32;
  if (!is_quantized_dtype(a_dtype) || !is_quantized_dtype(y_dtype) ||
      (!b_float && !is_quantized_dtype(b_dtype))) {
    return unsupported(spec, "dtypes a " + std::string(dtype_name(a_dtype)) + ", b " +
                                 std::string(dtype_name(b_dtype)) + ", y " +
                                 std::string(dtype_name(y_dtype)));
  }
  HSCHED_RETURN_IF_ERROR(check_quant_param(spec, 1, 2, a_dtype, "a", -1).status());
  if (!b_float) HSCHED_RETURN_IF_ERROR(check_quant_param(spec, 4, 5, b_dtype, "b", -1).status());
  HSCHED_RETURN_IF_ERROR(check_quant_param(spec, 6, 7, y_dtype, "y", -1).status());
  if (spec.out_dims(0) != spec.in_dims(0) || !qdq_broadcasts(spec.in_dims(0), spec.in_dims(3))) {
    return invalid_node(spec, "a " + spec.inputs[0]->shape.to_string() + ", b " +
                                  spec.inputs[3]->shape.to_string() + " and y " +
                                  spec.outputs[0]->shape.to_string() + " do not fit together");
  }
  const bool add = op == "Add";
  if (a_dtype == b_dtype && a_dtype == y_dtype) return make_qlinear_binary(spec, add);
  return make_kernel([=](std::span<const Tensor* const> in, std::span<Tensor* const> out) {
    const float a_scale = read_scales(*in[1])[0], y_scale = read_scales(*in[6])[0];
    const int32_t a_zp = read_zero_points(optional_input(in, 2), 1)[0];
    const int32_t y_zp = read_zero_points(optional_input(in, 7), 1)[0];
    const float b_scale = b_float ? 1.0f : read_scales(*in[4])[0];
    const int32_t b_zp = b_float ? 0 : read_zero_points(optional_input(in, 5), 1)[0];
    const int64_t total = in[0]->elements(), b_count = in[3]->elements();
    // b's index runs over [0, period) and repeats (a suffix of a's shape, or one value).
    const int64_t period = b_count;
    const std::byte* a = in[0]->raw();
    const std::byte* b = in[3]->raw();
    std::byte* y = out[0]->raw();
    const auto dequantize = [](DType dtype, const std::byte* x, float* f, int64_t n, float scale,
                               int32_t zp) {
      if (dtype == DType::kU8) {
        dequantize_u8(reinterpret_cast<const uint8_t*>(x), f, n, scale, zp);
      } else {
        dequantize_i8(reinterpret_cast<const int8_t*>(x), f, n, scale, zp);
      }
    };
    // Blocks of a and y that stay in L1. A b shorter than a block (a bias over the last axis, one
    // value) is dequantized once and repeated to the block's length, so that each block is one
    // call of each loop however short b's period (vit_tiny's bias Adds: 192).
    constexpr int64_t kBlock = 1024;
    std::vector<float> tiled;
    if (period < kBlock) {
      const int64_t length = kBlock / period * period;
      tiled.resize(static_cast<size_t>(length));
      if (b_float) {
        const float* bf = reinterpret_cast<const float*>(b);
        for (int64_t k = 0; k < length; ++k) tiled[static_cast<size_t>(k)] = bf[k % b_count];
      } else {
        std::vector<float> one_period(static_cast<size_t>(b_count));
        dequantize(b_dtype, b, one_period.data(), b_count, b_scale, b_zp);
        for (int64_t k = 0; k < length; ++k) {
          tiled[static_cast<size_t>(k)] = one_period[static_cast<size_t>(k % b_count)];
        }
      }
    }
    const auto tile_length = static_cast<int64_t>(tiled.size());
    const bool all_u8 = a_dtype == DType::kU8 && y_dtype == DType::kU8 &&
                        (b_float || b_dtype == DType::kU8);
    const float scales[3] = {a_scale, b_scale, y_scale};
    const int32_t zero_points[3] = {a_zp, b_zp, y_zp};
    parallel_range(total, [&](int64_t begin, int64_t end) {
      float fa[kBlock], fb[kBlock];
      for (int64_t i = begin; i < end;) {
        const int64_t j = i % period;
        int64_t n = std::min(end - i, kBlock);
        const float* bf = fb;
        if (!tiled.empty()) {  // b's values from index j on, repeated
          n = std::min(n, tile_length - j);
          bf = tiled.data() + j;
        } else if (b_float) {  // read in place, up to the end of b's period
          n = std::min(n, period - j);
          bf = reinterpret_cast<const float*>(b) + j;
        } else {  // dequantized below (or read as bytes by the u8 loop)
          n = std::min(n, period - j);
        }
        if (all_u8) {
          uint8_t* yi = reinterpret_cast<uint8_t*>(y) + i;
          const auto* ai = reinterpret_cast<const uint8_t*>(a) + i;
          if (bf == fb) {
            qdq_combine_u8(ai, reinterpret_cast<const uint8_t*>(b) + j, yi, n, scales, zero_points,
                           add);
          } else {
            qdq_combine_f32(ai, bf, yi, n, scales, zero_points, add);
          }
          i += n;
          continue;
        }
        if (bf == fb) dequantize(b_dtype, b + j, fb, n, b_scale, b_zp);
        dequantize(a_dtype, a + i, fa, n, a_scale, a_zp);
        combine_floats(fa, bf, n, add);
        if (y_dtype == DType::kU8) {
          quantize_to_u8(fa, reinterpret_cast<uint8_t*>(y) + i, n, y_scale, y_zp);
        } else {
          quantize_to_i8(fa, reinterpret_cast<int8_t*>(y) + i, n, y_scale, y_zp);
        }
        i += n;
      }
    });
    return Status::ok();
  });
}

}  // namespace

// kQdqTableOp (qdq_fusion.h): each output byte is the table's entry at the input's byte. A
// byte-wise gather does not vectorize; AVX-512 VBMI looks up 64 bytes at a time in the table held
// in four registers (two two-register permutes by the low 7 bits, blended by the high bit).
#if defined(__x86_64__)
__attribute__((target("avx512f,avx512bw,avx512vbmi"))) int64_t look_up_vbmi(
    const uint8_t* __restrict x, uint8_t* __restrict y, int64_t n,
    const uint8_t* __restrict table) {
  const __m512i t0 = _mm512_loadu_si512(table), t1 = _mm512_loadu_si512(table + 64);
  const __m512i t2 = _mm512_loadu_si512(table + 128), t3 = _mm512_loadu_si512(table + 192);
  int64_t i = 0;
  for (; i + 64 <= n; i += 64) {
    const __m512i index = _mm512_loadu_si512(x + i);
    const __m512i low = _mm512_permutex2var_epi8(t0, index, t1);
    const __m512i high = _mm512_permutex2var_epi8(t2, index, t3);
    _mm512_storeu_si512(y + i, _mm512_mask_blend_epi8(_mm512_movepi8_mask(index), low, high));
  }
  return i;
}
#endif

void look_up(const uint8_t* __restrict x, uint8_t* __restrict y, int64_t n,
             const uint8_t* __restrict table) {
  int64_t i = 0;
#if defined(__x86_64__)
  static const bool vbmi = __builtin_cpu_supports("avx512vbmi") != 0;
  if (vbmi) i = look_up_vbmi(x, y, n, table);
#endif
  for (; i < n; ++i) y[i] = table[x[i]];
}

namespace {

Result<std::unique_ptr<Kernel>> make_qdq_table(const KernelSpec& spec) {
  const auto found = spec.node.attributes.find("table");
  const Tensor* table =
      found == spec.node.attributes.end() ? nullptr : std::get_if<Tensor>(&found->second);
  if (spec.inputs.size() != 1 || !spec.has_input(0) || spec.outputs.size() != 1 ||
      spec.outputs[0] == nullptr || table == nullptr || table->elements() != 256 ||
      table->dtype() != spec.outputs[0]->dtype || !is_quantized_dtype(spec.inputs[0]->dtype) ||
      !is_quantized_dtype(table->dtype()) || spec.in_dims(0) != spec.out_dims(0)) {
    return invalid_node(spec,
                        "takes 8-bit x, a table of 256 8-bit values and gives y of x's shape");
  }
  std::vector<uint8_t> bytes(256);
  std::memcpy(bytes.data(), table->raw(), bytes.size());
  return make_kernel([bytes](std::span<const Tensor* const> in, std::span<Tensor* const> out) {
    const auto* x = reinterpret_cast<const uint8_t*>(in[0]->raw());
    auto* y = reinterpret_cast<uint8_t*>(out[0]->raw());
    parallel_range(in[0]->elements(), [&](int64_t begin, int64_t end) {
      look_up(x + begin, y + begin, end - begin, bytes.data());
    });
    return Status::ok();
  });
}

}  // namespace

bool int8_weights_path(const KernelSpec& spec, size_t w, size_t w_zp,
                       std::initializer_list<size_t> params) {
  const Tensor* weights = spec.constant(w);
  if (weights == nullptr || weights->dtype() != DType::kI8 || !exact_int8_products()) return false;
  // oneDNN divides by zero-size dims (SIGFPE) rather than refuse them: the loops take those.
  if (weights->elements() == 0 || spec.inputs[0]->shape.elements() == 0 ||
      spec.outputs[0]->shape.elements() == 0) {
    return false;
  }
  for (size_t i : params) {
    if (spec.has_input(i) && spec.constant(i) == nullptr) return false;
  }
  if (!spec.has_input(w_zp)) return true;
  const Tensor* zero_points = spec.constant(w_zp);
  if (zero_points == nullptr) return false;
  const auto values = zero_points->values<int8_t>();
  return std::all_of(values.begin(), values.end(), [](int8_t v) { return v == 0; });
}

bool exact_int8_products() {
  using isa = dnnl::cpu_isa;
  const isa have = dnnl::get_effective_cpu_isa();
  return have == isa::avx512_core_vnni || have == isa::avx512_core_bf16 ||
         have == isa::avx512_core_amx || have == isa::avx2_vnni;
}

void register_quant_kernels(KernelRegistry& registry) {
  registry.add("QuantizeLinear", make_quantize_linear);
  registry.add("DequantizeLinear", make_dequantize_linear);
  registry.add("DynamicQuantizeLinear", make_dynamic_quantize_linear);
  registry.add(kQdqBinaryOp, make_qdq_binary);
  registry.add(kQdqTableOp, make_qdq_table);
  register_quant_matmul_kernels(registry);
  register_quant_conv_kernels(registry);
}

}  // namespace hsched::cpu
