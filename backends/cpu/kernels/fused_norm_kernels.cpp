// The normalizations the CPU program's fusion pass builds (norm_fusion.h), models never naming
// them: ConvNeXt's channel LayerNorm in fp32 and on a QDQ model's 8-bit data, and a QDQ model's
// LayerNormalization and Softmax over the last axis on its 8-bit data. The LayerNorms run the row
// loops of the ops they replace (norm_rows.h), the 8-bit forms between DequantizeLinear's and
// QuantizeLinear's own loops, so the bytes are those of the steps run apart; the Softmax runs
// ONNX Runtime's QLinearSoftmax arithmetic.
#include <algorithm>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "backends/cpu/kernels/kernel.h"
#include "backends/cpu/kernels/norm_fusion.h"
#include "backends/cpu/kernels/norm_rows.h"
#include "backends/cpu/kernels/parallel.h"
#include "backends/cpu/kernels/post_ops.h"
#include "backends/cpu/kernels/qlinear_arith.h"
#include "backends/cpu/kernels/quant_util.h"
#include "backends/cpu/kernels/reduction_common.h"

namespace hsched::cpu {
namespace {

using reduction::check_input;
using reduction::check_output;
using reduction::grain_for;

// Rows [begin, end) of `channels` 8-bit values: each row dequantized (as DequantizeLinear), run
// through `op` in place (`op(rows, count)` on `count` float rows) and quantized (as
// QuantizeLinear), so the bytes are those of the three ops run apart. Contiguous rows
// (`channels_last`) go through those ops' vectorized loops a block at a time; otherwise a row's
// values are `pixels` apart (the channels of one pixel of NCHW), gathered one row at a time.
template <typename X, typename Y, typename RowOp>
void quantized_rows(const X* x, Y* y, int64_t begin, int64_t end, int64_t channels, int64_t pixels,
                    bool channels_last, float x_scale, int32_t x_zero, float y_scale,
                    int32_t y_zero, const RowOp& op) {
  constexpr int64_t kBlockRows = 64;
  const int64_t block = channels_last ? kBlockRows : 1;
  std::vector<float> rows(static_cast<size_t>(block * channels));
  std::vector<X> gathered(static_cast<size_t>(channels));
  std::vector<Y> scattered(gathered.size());
  for (int64_t r = begin; r < end; r += block) {
    const int64_t count = std::min(block, end - r);
    if (channels_last) {
      dequantize_run(x + r * channels, rows.data(), count * channels, x_scale, x_zero);
      op(rows.data(), count);
      quantize_run(rows.data(), y + r * channels, count * channels, y_scale, y_zero);
      continue;
    }
    const int64_t base = (r / pixels) * channels * pixels + r % pixels;
    for (int64_t c = 0; c < channels; ++c) gathered[c] = x[base + c * pixels];
    dequantize_run(gathered.data(), rows.data(), channels, x_scale, x_zero);
    op(rows.data(), 1);
    quantize_run(rows.data(), scattered.data(), channels, y_scale, y_zero);
    for (int64_t c = 0; c < channels; ++c) y[base + c * pixels] = scattered[c];
  }
}

// The 8-bit form of a row op (X u8 or i8, Y 8-bit; X's scale and zero point inputs `params` and
// `params` + 1, Y's the next two, each one value): `rows` rows of `channels` values, contiguous
// (`channels_last`) or a pixel's channels `pixels` apart (quantized_rows). `row_op(in)` gives the
// op on float rows for a run's inputs `in`.
template <typename MakeRowOp>
Result<std::unique_ptr<Kernel>> make_quantized_rows(const KernelSpec& spec, size_t params,
                                                    int64_t rows, int64_t channels, int64_t pixels,
                                                    bool channels_last, MakeRowOp row_op) {
  const DType x_type = spec.inputs[0]->dtype;
  const DType y_type =
      spec.outputs.empty() || spec.outputs[0] == nullptr ? DType::kF32 : spec.outputs[0]->dtype;
  if (!is_quantized_dtype(y_type)) {
    return invalid_node(spec, "8-bit X needs an 8-bit Y, not " + std::string(dtype_name(y_type)));
  }
  HSCHED_RETURN_IF_ERROR(
      check_quant_param(spec, params, params + 1, x_type, "x", -1, true).status());
  HSCHED_RETURN_IF_ERROR(
      check_quant_param(spec, params + 2, params + 3, y_type, "y", -1, true).status());
  HSCHED_RETURN_IF_ERROR(check_output(spec, 0, y_type, rows * channels, "Y"));
  return make_kernel([=](std::span<const Tensor* const> in, std::span<Tensor* const> out) {
    const float x_scale = read_scales(*in[params])[0], y_scale = read_scales(*in[params + 2])[0];
    const int32_t x_zero = read_zero_points(optional_input(in, params + 1), 1)[0];
    const int32_t y_zero = read_zero_points(optional_input(in, params + 3), 1)[0];
    const auto op = row_op(in);
    dispatch_quantized(x_type, [&](auto x_tag) {
      dispatch_quantized(y_type, [&](auto y_tag) {
        using X = decltype(x_tag);
        using Y = decltype(y_tag);
        const X* x = in[0]->values<X>().data();
        Y* y = out[0]->values<Y>().data();
        parallel_range(
            rows,
            [&](int64_t begin, int64_t end) {
              quantized_rows(x, y, begin, end, channels, pixels, channels_last, x_scale, x_zero,
                             y_scale, y_zero, op);
            },
            grain_for(channels));
      });
    });
    return Status::ok();
  });
}

// A LayerNormalization's rows for make_quantized_rows: Scale (input 1), B (input 2, optional).
auto layer_norm_row_op(int64_t channels, float epsilon) {
  return [=](std::span<const Tensor* const> in) {
    const float* scale = in[1]->values<float>().data();
    const float* bias = in.size() > 2 && in[2] ? in[2]->values<float>().data() : nullptr;
    return [=](float* rows, int64_t count) {
      layer_norm_rows(rows, rows, 0, count, channels, scale, bias, epsilon, nullptr, nullptr);
    };
  };
}

// hsched.ChannelLayerNorm: LayerNormalization over the channels of [N, C, H, W]. Channels-last,
// each pixel's channels are one contiguous row (the plain LayerNorm rows); channels-first, a
// pixel's channels are strided and normalized one pixel at a time. With 8-bit X (a QDQ model's),
// inputs 3 to 6 are X's and Y's scale and zero point, each one value, and Y is 8-bit.
Result<std::unique_ptr<Kernel>> make_channel_layer_norm(const KernelSpec& spec) {
  HSCHED_RETURN_IF_ERROR(check_input(spec, 0, {DType::kF32, DType::kU8, DType::kI8}, "X"));
  const auto& dims = spec.in_dims(0);
  const bool channels_last = input_channels_last(spec.node, 0);
  if (dims.size() != 4 || channels_last != output_channels_last(spec.node, 0)) {
    return invalid_argument(node_context(spec.node) +
                            ": needs 4-D [N, C, H, W] input and output "
                            "in the same layout");
  }
  const int64_t channels = dims[1], pixels = dims[2] * dims[3], rows = dims[0] * pixels;
  // run() reads Scale (required) and B (optional) as `channels` floats each, in place: unlike
  // LayerNormalization's, they are never broadcast, so they must hold exactly that many.
  HSCHED_RETURN_IF_ERROR(check_channel_param(spec, 1, channels, "Scale"));
  if (spec.has_input(2)) HSCHED_RETURN_IF_ERROR(check_channel_param(spec, 2, channels, "B"));
  const float epsilon = spec.node.attr_float("epsilon", 1e-5f);
  if (is_quantized_dtype(spec.inputs[0]->dtype)) {
    return make_quantized_rows(spec, 3, rows, channels, pixels, channels_last,
                               layer_norm_row_op(channels, epsilon));
  }
  HSCHED_RETURN_IF_ERROR(check_output(spec, 0, DType::kF32, rows * channels, "Y"));
  return make_kernel([=](std::span<const Tensor* const> in, std::span<Tensor* const> out) {
    const float* scale = in[1]->values<float>().data();
    const float* bias = in.size() > 2 && in[2] ? in[2]->values<float>().data() : nullptr;
    const float* x = in[0]->values<float>().data();
    float* y = out[0]->values<float>().data();
    if (channels_last) {
      parallel_range(
          rows,
          [&](int64_t begin, int64_t end) {
            layer_norm_rows(x, y, begin, end, channels, scale, bias, epsilon, nullptr, nullptr);
          },
          grain_for(channels));
      return Status::ok();
    }
    parallel_range(
        rows,
        [&](int64_t begin, int64_t end) {
          std::vector<float> row(static_cast<size_t>(channels));
          for (int64_t r = begin; r < end; ++r) {
            const int64_t base = (r / pixels) * channels * pixels + r % pixels;
            for (int64_t c = 0; c < channels; ++c) row[c] = x[base + c * pixels];
            layer_norm_rows(row.data(), row.data(), 0, 1, channels, scale, bias, epsilon, nullptr,
                            nullptr);
            for (int64_t c = 0; c < channels; ++c) y[base + c * pixels] = row[c];
          }
        },
        grain_for(channels));
    return Status::ok();
  });
}

// The last axis's length of 8-bit X (input 0) of a row op over it, checked non-empty.
Result<int64_t> quantized_last_axis(const KernelSpec& spec) {
  HSCHED_RETURN_IF_ERROR(check_input(spec, 0, {DType::kU8, DType::kI8}, "X"));
  const auto& dims = spec.in_dims(0);
  if (dims.empty() || dims.back() <= 0) {
    return invalid_argument(node_context(spec.node) + ": needs a non-empty last axis");
  }
  return dims.back();
}

// hsched.QdqLayerNorm (norm_fusion.h): LayerNormalization over the last axis of 8-bit X between
// its DequantizeLinear and QuantizeLinear, on the 8-bit data.
Result<std::unique_ptr<Kernel>> make_qdq_layer_norm(const KernelSpec& spec) {
  HSCHED_ASSIGN_OR_RETURN(const int64_t size, quantized_last_axis(spec));
  HSCHED_RETURN_IF_ERROR(check_channel_param(spec, 1, size, "Scale"));
  if (spec.has_input(2)) HSCHED_RETURN_IF_ERROR(check_channel_param(spec, 2, size, "B"));
  return make_quantized_rows(spec, 3, spec.inputs[0]->shape.elements() / size, size, 1, true,
                             layer_norm_row_op(size, spec.node.attr_float("epsilon", 1e-5f)));
}

// hsched.QdqSoftmax (norm_fusion.h): Softmax over the last axis of 8-bit X between its
// DequantizeLinear and QuantizeLinear, with ONNX Runtime's QLinearSoftmax arithmetic
// (qlinear_arith.h), as its optimizations run the group.
Result<std::unique_ptr<Kernel>> make_qdq_softmax(const KernelSpec& spec) {
  HSCHED_ASSIGN_OR_RETURN(const int64_t size, quantized_last_axis(spec));
  const DType x_type = spec.inputs[0]->dtype;
  if (spec.outputs.empty() || spec.outputs[0] == nullptr || spec.outputs[0]->dtype != x_type) {
    return invalid_node(spec, "needs Y of X's type " + std::string(dtype_name(x_type)));
  }
  HSCHED_RETURN_IF_ERROR(check_quant_param(spec, 1, 2, x_type, "x", -1, true).status());
  HSCHED_RETURN_IF_ERROR(check_quant_param(spec, 3, 4, x_type, "y", -1, true).status());
  const int64_t rows = spec.inputs[0]->shape.elements() / size;
  HSCHED_RETURN_IF_ERROR(check_output(spec, 0, x_type, rows * size, "Y"));
  return make_kernel([=](std::span<const Tensor* const> in, std::span<Tensor* const> out) {
    const auto table = qlinear_softmax_table(read_scales(*in[1])[0], read_scales(*in[3])[0], size);
    const int32_t y_zero = read_zero_points(optional_input(in, 4), 1)[0];
    dispatch_quantized(x_type, [&](auto tag) {
      using Q = decltype(tag);
      const Q* x = in[0]->values<Q>().data();
      Q* y = out[0]->values<Q>().data();
      parallel_range(
          rows,
          [&](int64_t begin, int64_t end) {
            qlinear_softmax_rows(table, x, y, begin, end, size, y_zero);
          },
          grain_for(size));
    });
    return Status::ok();
  });
}

}  // namespace

void register_fused_norm_kernels(KernelRegistry& registry) {
  registry.add(kChannelLayerNormOp, make_channel_layer_norm);
  registry.add(kQdqLayerNormOp, make_qdq_layer_norm);
  registry.add(kQdqSoftmaxOp, make_qdq_softmax);
}

}  // namespace hsched::cpu
