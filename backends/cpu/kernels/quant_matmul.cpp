// QLinearMatMul and MatMulInteger (ONNX opset 10): u8/i8 operands minus their zero points,
// products summed in 32 bits (wrapping, as int32 accumulation does), then either written as i32
// or requantized: y = saturate(round_half_even(acc * a_scale * b_scale / y_scale) + y_zero_point).
// Zero points and scales: per tensor, per row of A ([M]) or per column of B ([N]). Batch axes
// broadcast as in MatMul. The requantization is ONNX Runtime's (MLAS: acc times the multiplier
// a_scale * b_scale / y_scale rounded, then the zero point). oneDNN runs the QDQ model's forms
// (constant int8 weights; two activations of per-tensor parameters); any other a plain loop over
// TBB, parallel over output rows (oneDNN 2.6's int8 matmul takes per-tensor zero points only).
#include <algorithm>
#include <string>
#include <vector>

#include "backends/cpu/kernels/dnnl_util.h"
#include "backends/cpu/kernels/layout_util.h"
#include "backends/cpu/kernels/parallel.h"
#include "backends/cpu/kernels/quant_util.h"

namespace hsched::cpu {
namespace {

// The product's geometry, fixed at creation: for each output matrix, where A's and B's matrices
// start (in elements).
struct MatMulGeometry {
  int64_t m = 0, k = 0, n = 0;
  std::vector<int64_t> a_offsets, b_offsets;
};

Result<MatMulGeometry> matmul_geometry(const KernelSpec& spec, size_t a_input, size_t b_input) {
  auto a = spec.in_dims(a_input);
  auto b = spec.in_dims(b_input);
  if (a.empty() || b.empty()) return unsupported(spec, "scalar operands are not supported");
  const bool a_vector = a.size() == 1, b_vector = b.size() == 1;
  if (a_vector) a.insert(a.begin(), 1);
  if (b_vector) b.push_back(1);
  MatMulGeometry g{a[a.size() - 2], a.back(), b.back(), {}, {}};
  if (b[b.size() - 2] != g.k) {
    return invalid_node(spec, "A " + spec.inputs[a_input]->shape.to_string() + " and B " +
                                  spec.inputs[b_input]->shape.to_string() + " disagree on K");
  }
  const size_t rank = std::max(a.size(), b.size());
  a.insert(a.begin(), rank - a.size(), 1);
  b.insert(b.begin(), rank - b.size(), 1);
  std::vector<int64_t> batch, a_batch(a.begin(), a.end() - 2), b_batch(b.begin(), b.end() - 2);
  for (size_t i = 0; i + 2 < rank; ++i) {
    if (a[i] != b[i] && a[i] != 1 && b[i] != 1) {
      return invalid_node(spec, "batch axes of A " + spec.inputs[a_input]->shape.to_string() +
                                    " and B " + spec.inputs[b_input]->shape.to_string() +
                                    " do not broadcast");
    }
    batch.push_back(a[i] == 1 ? b[i] : a[i]);
  }
  std::vector<int64_t> expected = batch;
  if (!a_vector) expected.push_back(g.m);
  if (!b_vector) expected.push_back(g.n);
  if (spec.out_dims(0) != expected) {
    return invalid_node(spec, "output " + spec.outputs[0]->shape.to_string() +
                                  " does not match the inputs, which give " + dims_text(expected));
  }
  const auto a_strides = broadcast_strides(a_batch, batch);
  const auto b_strides = broadcast_strides(b_batch, batch);
  int64_t count = 1;
  for (int64_t d : batch) count *= d;
  for (int64_t index = 0; index < count; ++index) {
    int64_t rest = index, a_off = 0, b_off = 0;
    for (size_t i = batch.size(); i-- > 0;) {
      const int64_t coord = rest % batch[i];
      rest /= batch[i];
      a_off += coord * a_strides[i];
      b_off += coord * b_strides[i];
    }
    g.a_offsets.push_back(a_off * g.m * g.k);
    g.b_offsets.push_back(b_off * g.k * g.n);
  }
  return g;
}

// A zero point alone (MatMulInteger): omitted, one value, or one per row of A / column of B
// (`matrix_axis` -2 / -1: per_channel_shape).
Status check_zero_point(const KernelSpec& spec, size_t input, DType data_dtype,
                        const std::string& what, int64_t channels, int matrix_axis) {
  if (!spec.has_input(input)) return Status::ok();
  const Value& zp = *spec.inputs[input];
  if (zp.dtype != data_dtype) {
    return invalid_node(spec, what + " is " + std::string(dtype_name(zp.dtype)) + ", its data " +
                                  std::string(dtype_name(data_dtype)));
  }
  const bool one = zp.shape.elements() == 1 && zp.shape.rank() <= 1;
  if (!one && !per_channel_shape(zp.shape, channels, matrix_axis)) {
    return invalid_node(spec, what + " " + zp.shape.to_string() + " must hold one value or " +
                                  std::to_string(channels));
  }
  return Status::ok();
}

// Both ops: which inputs hold what, and the plan fixed at creation.
struct QuantMatMulPlan {
  MatMulGeometry geometry;
  size_t a = 0, a_zp = 0, b = 0, b_zp = 0;
  bool requantize = false;  // QLinearMatMul
  size_t a_scale = 0, b_scale = 0, y_scale = 0, y_zp = 0;
  DType y_dtype = DType::kI32;
  bool bias = false;  // input 8, i32 [N]: a fused Gemm's (qdq_fusion.h)
};

Status run_quant_matmul(const QuantMatMulPlan& plan, std::span<const Tensor* const> in,
                        std::span<Tensor* const> out) {
  const MatMulGeometry& g = plan.geometry;
  const int64_t m = g.m, k = g.k, n = g.n;
  const auto input = [&](size_t i) { return optional_input(in, i); };
  const auto count_of = [&](size_t i) { return input(i) ? input(i)->elements() : int64_t{1}; };
  // A minus its zero point per row (one value cycling over the rows of every batch), B minus its
  // zero point per column.
  std::vector<int16_t> a, b;
  subtract_zero_point(*in[plan.a], read_zero_points(input(plan.a_zp), count_of(plan.a_zp)), k, a);
  subtract_zero_point(*in[plan.b], read_zero_points(input(plan.b_zp), count_of(plan.b_zp)), 1, b);
  std::vector<float> a_scales, b_scales;
  int32_t y_zp = 0;
  float y_scale = 1.0f;
  if (plan.requantize) {
    a_scales = read_scales(*in[plan.a_scale]);
    b_scales = read_scales(*in[plan.b_scale]);
    y_scale = read_scales(*in[plan.y_scale])[0];
    y_zp = read_zero_points(input(plan.y_zp), 1)[0];
  }
  const std::span<const int32_t> bias =
      plan.bias ? in[8]->values<int32_t>() : std::span<const int32_t>();
  const int64_t rows = static_cast<int64_t>(g.a_offsets.size()) * m;
  const int64_t grain = std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(1, k * n));
  std::byte* y_raw = out[0]->raw();
  parallel_range(
      rows,
      [&](int64_t begin, int64_t end) {
        std::vector<uint32_t> acc(static_cast<size_t>(n));
        std::vector<float> row_multipliers(static_cast<size_t>(n));
        for (int64_t r = begin; r < end; ++r) {
          const int64_t batch = r / m, row = r % m;
          const int16_t* a_row = a.data() + g.a_offsets[static_cast<size_t>(batch)] + row * k;
          const int16_t* b_mat = b.data() + g.b_offsets[static_cast<size_t>(batch)];
          std::fill(acc.begin(), acc.end(), 0u);
          for (int64_t kk = 0; kk < k; ++kk) {
            const int32_t av = a_row[kk];
            if (av == 0) continue;
            const int16_t* b_row = b_mat + kk * n;
            // Unsigned, so that int32 accumulation wraps instead of overflowing.
            for (int64_t j = 0; j < n; ++j) acc[j] += static_cast<uint32_t>(av * b_row[j]);
          }
          for (size_t j = 0; j < bias.size(); ++j) acc[j] += static_cast<uint32_t>(bias[j]);
          if (!plan.requantize) {
            int32_t* y = reinterpret_cast<int32_t*>(y_raw) + r * n;
            for (int64_t j = 0; j < n; ++j) y[j] = static_cast<int32_t>(acc[j]);
            continue;
          }
          const float a_scale = a_scales[a_scales.size() == 1 ? 0 : static_cast<size_t>(row)];
          for (int64_t j = 0; j < n; ++j) {
            row_multipliers[j] = a_scale * b_scales[b_scales.size() == 1 ? 0 : j] / y_scale;
          }
          dispatch_quantized(plan.y_dtype, [&](auto tag) {
            using Q = decltype(tag);
            Q* y = reinterpret_cast<Q*>(y_raw) + r * n;
            for (int64_t j = 0; j < n; ++j) {
              const float v = static_cast<float>(static_cast<int32_t>(acc[j])) * row_multipliers[j];
              y[j] = saturate_round<Q>(v, y_zp);
            }
          });
        }
      },
      grain);
  return Status::ok();
}

// QLinearMatMul with constant int8 weights, as the QDQ fusion makes for linear layers: B [K, N]
// with zero points 0, every other parameter a constant of one value (b_scale one or N). oneDNN's
// int8 matmul sums A x B in int32, exactly on VNNI hardware; A's zero point comes off as
// a_zero_point * (the column sums of B), the fused bias is added, and oneDNN's epilogue
// requantizes as the reference loop does, writing y in one pass.
class OneDnnQLinearMatMul final : public Kernel {
 public:
  // nullptr (the reference loop runs) when the node is not of that form or oneDNN has no such
  // primitive here.
  static std::unique_ptr<Kernel> make(const KernelSpec& spec, const QuantMatMulPlan& plan) {
    if (!plan.requantize || spec.constant(plan.b) == nullptr ||
        spec.constant(plan.b)->dims().size() != 2 ||
        !int8_weights_path(spec, plan.b, plan.b_zp,
                           {plan.a_scale, plan.a_zp, plan.b_scale, plan.y_scale, plan.y_zp, 8})) {
      return nullptr;
    }
    if (spec.inputs[plan.a_scale]->shape.elements() != 1 ||
        (spec.has_input(plan.a_zp) && spec.inputs[plan.a_zp]->shape.elements() != 1)) {
      return nullptr;
    }
    auto kernel = std::unique_ptr<OneDnnQLinearMatMul>(new OneDnnQLinearMatMul());
    if (!dnnl_builds([&] { kernel->build(spec, plan, *spec.constant(plan.b)); })) return nullptr;
    return kernel;
  }

  Status run(std::span<const Tensor* const> in, std::span<Tensor* const> out) override {
    src_.set_data_handle(const_cast<std::byte*>(in[0]->raw()));
    dst_.set_data_handle(out[0]->raw());
    primitive_.execute(*stream_, {{DNNL_ARG_SRC, src_},
                                  {DNNL_ARG_WEIGHTS, weights_},
                                  {DNNL_ARG_BIAS, offsets_},
                                  {DNNL_ARG_DST, dst_},
                                  {DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_DST, y_zero_point_}});
    stream_->wait();
    return Status::ok();
  }

 private:
  OneDnnQLinearMatMul() = default;

  void build(const KernelSpec& spec, const QuantMatMulPlan& plan, const Tensor& b) {
    const MatMulGeometry& g = plan.geometry;
    const int64_t rows = static_cast<int64_t>(g.a_offsets.size()) * g.m, n = g.n;
    const int32_t a_zero_point = constant_zero_point(spec, plan.a_zp);
    const float a_scale = spec.constant(plan.a_scale)->values<float>()[0];
    const float y_scale = spec.constant(plan.y_scale)->values<float>()[0];
    const auto b_scales = spec.constant(plan.b_scale)->values<float>();
    const auto weights = b.values<int8_t>();
    const auto bias = plan.bias ? spec.constant(8) : nullptr;
    // Per column: the bias minus a_zero_point x the column's sum (wrapping, as the reference
    // loop's int32 sums), added to the int32 sums as oneDNN's bias; then the multiplier.
    std::vector<int32_t> offsets(static_cast<size_t>(n), 0);
    std::vector<float> multipliers(b_scales.size());
    for (int64_t j = 0; j < n; ++j) {
      uint32_t column_sum = 0;
      for (int64_t k = 0; k < g.k; ++k) column_sum += static_cast<uint32_t>(weights[k * n + j]);
      uint32_t offset = 0u - static_cast<uint32_t>(a_zero_point) * column_sum;
      if (bias != nullptr) offset += static_cast<uint32_t>(bias->values<int32_t>()[j]);
      offsets[static_cast<size_t>(j)] = static_cast<int32_t>(offset);
    }
    for (size_t j = 0; j < multipliers.size(); ++j)
      multipliers[j] = a_scale * b_scales[j] / y_scale;
    const auto int8_type = [](DType t) {
      return t == DType::kU8 ? memory::data_type::u8 : memory::data_type::s8;
    };
    const memory::desc src({rows, g.k}, int8_type(spec.inputs[plan.a]->dtype),
                           memory::format_tag::ab);
    const memory::desc wei({g.k, n}, memory::data_type::s8, memory::format_tag::ab);
    const memory::desc wei_any({g.k, n}, memory::data_type::s8, memory::format_tag::any);
    const memory::desc bias_desc({1, n}, memory::data_type::s32, memory::format_tag::ab);
    const memory::desc dst({rows, n}, int8_type(plan.y_dtype), memory::format_tag::ab);
    // (sums + offsets) x multiplier, rounded to nearest even, plus y's zero point, saturated: the
    // reference loop's requantization (ONNX Runtime's), in oneDNN's epilogue, rounded by a
    // post-op before the zero point is added (quant_conv.cpp).
    dnnl::primitive_attr attr;
    attr.set_output_scales(multipliers.size() == 1 ? 0 : 1 << 1, multipliers);
    attr.set_post_ops(round_post_op());
    attr.set_zero_points(DNNL_ARG_DST, 0, {DNNL_RUNTIME_S32_VAL});
    const dnnl::engine& engine = *spec.context->engine;
    stream_ = spec.context->stream;
    const auto pd = dnnl::matmul::primitive_desc(dnnl::matmul::desc(src, wei_any, bias_desc, dst),
                                                 attr, engine);
    primitive_ = dnnl::matmul(pd);
    weights_ = dnnl::memory(pd.weights_desc(), engine);
    dnnl::memory user(wei, engine, const_cast<std::byte*>(b.raw()));
    dnnl::reorder(user, weights_).execute(*stream_, user, weights_);
    stream_->wait();
    offsets_ = dnnl::memory(bias_desc, engine);
    std::copy(offsets.begin(), offsets.end(), static_cast<int32_t*>(offsets_.get_data_handle()));
    y_zero_point_ = dnnl::memory({{1}, memory::data_type::s32, memory::format_tag::x}, engine);
    *static_cast<int32_t*>(y_zero_point_.get_data_handle()) = constant_zero_point(spec, plan.y_zp);
    src_ = dnnl::memory(src, engine, DNNL_MEMORY_NONE);
    dst_ = dnnl::memory(dst, engine, DNNL_MEMORY_NONE);
  }

  dnnl::matmul primitive_;
  dnnl::memory src_, weights_, offsets_, y_zero_point_, dst_;
  dnnl::stream* stream_ = nullptr;
};

// QLinearMatMul of two activations (attention's products in a QDQ model): B made at run time,
// every scale and zero point one constant value, no bias, batch axes broadcasting. oneDNN sums
// (A - a_zero) x (B' - b_zero') in int32 with B' = B - 128 as s8 where B is u8 (its int8 matmul
// takes s8 weights; b_zero' = b_zero - 128, the same differences), and requantizes as
// OneDnnQLinearMatMul does.
class OneDnnActivationMatMul final : public Kernel {
 public:
  static std::unique_ptr<Kernel> make(const KernelSpec& spec, const QuantMatMulPlan& plan) {
    if (!plan.requantize || plan.bias || spec.constant(plan.b) != nullptr) return nullptr;
    for (size_t i : {plan.a_scale, plan.a_zp, plan.b_scale, plan.b_zp, plan.y_scale, plan.y_zp}) {
      if (spec.has_input(i) && (spec.constant(i) == nullptr || spec.constant(i)->elements() != 1)) {
        return nullptr;
      }
    }
    if (spec.in_dims(plan.a).size() < 2 || spec.in_dims(plan.b).size() < 2) return nullptr;
    auto kernel = std::unique_ptr<OneDnnActivationMatMul>(new OneDnnActivationMatMul());
    if (!dnnl_builds([&] { kernel->build(spec, plan); })) return nullptr;
    return kernel;
  }

  Status run(std::span<const Tensor* const> in, std::span<Tensor* const> out) override {
    const auto b = in[b_input_]->values<int8_t>();  // u8 read as its bits
    const int8_t* weights = b.data();
    if (!shifted_b_.empty()) {  // B - 128 as s8: flipping the top bit
      for (size_t i = 0; i < b.size(); ++i) {
        shifted_b_[i] = static_cast<int8_t>(static_cast<uint8_t>(b[i]) ^ 0x80u);
      }
      weights = shifted_b_.data();
    }
    src_.set_data_handle(const_cast<std::byte*>(in[0]->raw()));
    weights_.set_data_handle(const_cast<int8_t*>(weights));
    dst_.set_data_handle(out[0]->raw());
    primitive_.execute(*stream_, {{DNNL_ARG_SRC, src_},
                                  {DNNL_ARG_WEIGHTS, weights_},
                                  {DNNL_ARG_DST, dst_},
                                  {DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_SRC, zero_points_[0]},
                                  {DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_WEIGHTS, zero_points_[1]},
                                  {DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_DST, zero_points_[2]}});
    stream_->wait();
    return Status::ok();
  }

 private:
  OneDnnActivationMatMul() = default;

  void build(const KernelSpec& spec, const QuantMatMulPlan& plan) {
    const MatMulGeometry& g = plan.geometry;
    b_input_ = plan.b;
    const bool b_unsigned = spec.inputs[plan.b]->dtype == DType::kU8;
    // oneDNN's matmul takes operands of one rank, a batch axis of 1 broadcasting.
    std::vector<int64_t> a = spec.in_dims(plan.a), b = spec.in_dims(plan.b);
    const size_t rank = std::max(a.size(), b.size());
    a.insert(a.begin(), rank - a.size(), 1);
    b.insert(b.begin(), rank - b.size(), 1);
    std::vector<int64_t> y(rank);
    for (size_t i = 0; i + 2 < rank; ++i) y[i] = std::max(a[i], b[i]);
    y[rank - 2] = g.m;
    y[rank - 1] = g.n;
    const auto int8_type = [](DType t) {
      return t == DType::kU8 ? memory::data_type::u8 : memory::data_type::s8;
    };
    const auto desc = [&](const std::vector<int64_t>& dims, memory::data_type type) {
      return memory::desc(to_dnnl_dims(dims), type, plain_tag(rank));
    };
    const memory::desc src = desc(a, int8_type(spec.inputs[plan.a]->dtype));
    const memory::desc wei = desc(b, memory::data_type::s8);
    const memory::desc dst = desc(y, int8_type(plan.y_dtype));
    const auto value = [&](size_t i) { return spec.constant(i)->values<float>()[0]; };
    dnnl::primitive_attr attr;
    attr.set_output_scales(0, {value(plan.a_scale) * value(plan.b_scale) / value(plan.y_scale)});
    attr.set_post_ops(round_post_op());
    for (int arg : {DNNL_ARG_SRC, DNNL_ARG_WEIGHTS, DNNL_ARG_DST}) {
      attr.set_zero_points(arg, 0, {DNNL_RUNTIME_S32_VAL});
    }
    const dnnl::engine& engine = *spec.context->engine;
    stream_ = spec.context->stream;
    const auto pd = dnnl::matmul::primitive_desc(dnnl::matmul::desc(src, wei, dst), attr, engine);
    primitive_ = dnnl::matmul(pd);
    src_ = dnnl::memory(src, engine, DNNL_MEMORY_NONE);
    weights_ = dnnl::memory(wei, engine, DNNL_MEMORY_NONE);
    dst_ = dnnl::memory(dst, engine, DNNL_MEMORY_NONE);
    const int32_t zeros[3] = {constant_zero_point(spec, plan.a_zp),
                              constant_zero_point(spec, plan.b_zp) - (b_unsigned ? 128 : 0),
                              constant_zero_point(spec, plan.y_zp)};
    for (int i = 0; i < 3; ++i) {
      zero_points_[i] = dnnl::memory({{1}, memory::data_type::s32, memory::format_tag::x}, engine);
      *static_cast<int32_t*>(zero_points_[i].get_data_handle()) = zeros[i];
    }
    if (b_unsigned) shifted_b_.resize(static_cast<size_t>(spec.inputs[plan.b]->shape.elements()));
  }

  size_t b_input_ = 3;
  std::vector<int8_t> shifted_b_;
  dnnl::matmul primitive_;
  dnnl::memory src_, weights_, dst_, zero_points_[3];
  dnnl::stream* stream_ = nullptr;
};

// The operands' dtypes: A and B u8 or i8 (independently).
Status check_operands(const KernelSpec& spec, const QuantMatMulPlan& plan) {
  for (size_t i : {plan.a, plan.b}) {
    if (!spec.has_input(i)) return invalid_node(spec, "needs input " + std::to_string(i));
    if (!is_quantized_dtype(spec.inputs[i]->dtype)) {
      return unsupported(spec, "input " + std::to_string(i) + " is " +
                                   std::string(dtype_name(spec.inputs[i]->dtype)) +
                                   " (supported: u8, i8)");
    }
  }
  return Status::ok();
}

// Inputs: A, a_scale, a_zero_point, B, b_scale, b_zero_point, y_scale, y_zero_point, and a
// fused Gemm's bias (i32 [N], added to the sums before requantization).
Result<std::unique_ptr<Kernel>> make_qlinear_matmul(const KernelSpec& spec) {
  HSCHED_RETURN_IF_ERROR(check_static_shapes(spec, false));
  QuantMatMulPlan plan{{}, 0, 2, 3, 5, true, 1, 4, 6, 7, DType::kU8};
  HSCHED_RETURN_IF_ERROR(check_operands(spec, plan));
  HSCHED_ASSIGN_OR_RETURN(plan.geometry, matmul_geometry(spec, plan.a, plan.b));
  const DType a_dtype = spec.inputs[plan.a]->dtype, b_dtype = spec.inputs[plan.b]->dtype;
  HSCHED_RETURN_IF_ERROR(
      check_quant_param(spec, 1, 2, a_dtype, "a", plan.geometry.m, false, -2).status());
  HSCHED_RETURN_IF_ERROR(
      check_quant_param(spec, 4, 5, b_dtype, "b", plan.geometry.n, false, -1).status());
  plan.y_dtype = spec.has_input(7) ? spec.inputs[7]->dtype : DType::kU8;
  if (!is_quantized_dtype(plan.y_dtype) || spec.outputs[0]->dtype != plan.y_dtype) {
    return invalid_node(spec, "output is " + std::string(dtype_name(spec.outputs[0]->dtype)) +
                                  ", y_zero_point " + std::string(dtype_name(plan.y_dtype)) +
                                  " (both u8 or both i8)");
  }
  HSCHED_RETURN_IF_ERROR(check_quant_param(spec, 6, 7, plan.y_dtype, "y", -1).status());
  plan.bias = spec.has_input(8);
  if (plan.bias && (spec.inputs[8]->dtype != DType::kI32 ||
                    spec.in_dims(8) != std::vector<int64_t>{plan.geometry.n})) {
    return invalid_node(spec, "bias is " + std::string(dtype_name(spec.inputs[8]->dtype)) + " " +
                                  spec.inputs[8]->shape.to_string() + ", expected i32 " +
                                  std::to_string(plan.geometry.n));
  }
  if (auto fast = OneDnnQLinearMatMul::make(spec, plan)) return fast;
  if (auto fast = OneDnnActivationMatMul::make(spec, plan)) return fast;
  return make_kernel([plan](std::span<const Tensor* const> in, std::span<Tensor* const> out) {
    return run_quant_matmul(plan, in, out);
  });
}

// Inputs: A, B, a_zero_point (optional), b_zero_point (optional); output i32.
Result<std::unique_ptr<Kernel>> make_matmul_integer(const KernelSpec& spec) {
  HSCHED_RETURN_IF_ERROR(check_static_shapes(spec, false));
  QuantMatMulPlan plan{{}, 0, 2, 1, 3, false, 0, 0, 0, 0, DType::kI32};
  HSCHED_RETURN_IF_ERROR(check_operands(spec, plan));
  if (spec.outputs[0]->dtype != DType::kI32) {
    return invalid_node(spec, "output is " + std::string(dtype_name(spec.outputs[0]->dtype)) +
                                  " (MatMulInteger gives i32)");
  }
  HSCHED_ASSIGN_OR_RETURN(plan.geometry, matmul_geometry(spec, plan.a, plan.b));
  HSCHED_RETURN_IF_ERROR(
      check_zero_point(spec, 2, spec.inputs[0]->dtype, "a_zero_point", plan.geometry.m, -2));
  HSCHED_RETURN_IF_ERROR(
      check_zero_point(spec, 3, spec.inputs[1]->dtype, "b_zero_point", plan.geometry.n, -1));
  return make_kernel([plan](std::span<const Tensor* const> in, std::span<Tensor* const> out) {
    return run_quant_matmul(plan, in, out);
  });
}

}  // namespace

void register_quant_matmul_kernels(KernelRegistry& registry) {
  registry.add("QLinearMatMul", make_qlinear_matmul);
  registry.add("MatMulInteger", make_matmul_integer);
}

}  // namespace hsched::cpu
