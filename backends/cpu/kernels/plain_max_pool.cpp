// MaxPool as a plain loop, for what the oneDNN pooling kernel (dnnl_conv.cpp) does not do: the
// optional Indices output (with storage_order) and i8/u8 inputs. Any spatial rank; the window
// geometry (pads, auto_pad, ceil_mode, dilations) comes from spatial_params, which also checks
// that the output size follows from the attributes.
#include <algorithm>
#include <limits>
#include <string>
#include <vector>

#include "backends/cpu/kernels/dnnl_util.h"
#include "backends/cpu/kernels/layout_util.h"
#include "backends/cpu/kernels/parallel.h"

namespace hsched::cpu {
namespace {

// Element strides of the logical axes [N, C, spatial...] of a value stored plain or, for a 4-D
// value the program keeps channels-last, as [N, H, W, C].
std::vector<int64_t> logical_strides(const std::vector<int64_t>& dims, bool channels_last) {
  std::vector<int64_t> strides = row_major_strides(dims);
  if (channels_last && dims.size() == 4) {
    const int64_t c = dims[1], h = dims[2], w = dims[3];
    strides = {h * w * c, 1, w * c, c};
  }
  return strides;
}

struct PoolPlan {
  int64_t batch = 0, channels = 0;
  std::vector<int64_t> in, out;  // spatial dims
  std::vector<int64_t> kernel, stride, dilation, pad_l;
  std::vector<int64_t> x_strides, y_strides;  // logical axes, in elements
  std::vector<int64_t> index_weights;         // spatial weights of an Indices value
};

// A window with no tap inside the input (only possible with pads >= the kernel, which ONNX
// forbids but a crafted model may declare) yields the lowest value and index -1. Only the taps
// inside the input are visited: per axis the range of k with 0 <= at * stride - pad + k * dilation
// < in, so that a window's work is at most the product of min(kernel, in) whatever the kernel
// and pads declare.
template <typename T>
void max_pool(const PoolPlan& p, const T* x, T* y, int64_t* indices) {
  const size_t rank = p.in.size();
  int64_t out_points = 1, in_points = 1, taps = 1;
  for (size_t i = 0; i < rank; ++i) {
    out_points *= p.out[i];
    in_points *= p.in[i];
    taps *= std::min(p.kernel[i], p.in[i]);  // at most in_points, bounded by the input's size
  }
  parallel_range(
      p.batch * p.channels * out_points,
      [&](int64_t begin, int64_t end) {
        std::vector<int64_t> first(rank), k_lo(rank), k_hi(rank), k(rank);
        for (int64_t item = begin; item < end; ++item) {
          const int64_t plane = item / out_points;
          const int64_t n = plane / p.channels, c = plane % p.channels;
          int64_t y_at = n * p.y_strides[0] + c * p.y_strides[1];
          bool empty = false;
          for (int64_t rest = item % out_points, i = static_cast<int64_t>(rank) - 1; i >= 0; --i) {
            const auto a = static_cast<size_t>(i);
            const int64_t at = rest % p.out[a];
            rest /= p.out[a];
            y_at += at * p.y_strides[a + 2];
            // Taps k in [k_lo, k_hi) land inside [0, in): k_lo = ceil(-first / d) when first < 0,
            // k_hi = ceil((in - first) / d) capped at the kernel.
            const int64_t d = p.dilation[a];
            first[a] = at * p.stride[a] - p.pad_l[a];
            k_lo[a] = first[a] < 0 ? (-first[a] + d - 1) / d : 0;
            k_hi[a] =
                first[a] < p.in[a] ? std::min(p.kernel[a], (p.in[a] - first[a] + d - 1) / d) : 0;
            empty = empty || k_lo[a] >= k_hi[a];
          }
          T best = std::numeric_limits<T>::lowest();
          int64_t best_index = -1;
          bool found = false;
          // Odometer over the box of valid taps, the last axis fastest.
          for (size_t a = 0; a < rank; ++a) k[a] = k_lo[a];
          while (!empty) {
            int64_t x_at = n * p.x_strides[0] + c * p.x_strides[1], index = plane * in_points;
            for (size_t a = 0; a < rank; ++a) {
              const int64_t pos = first[a] + k[a] * p.dilation[a];
              x_at += pos * p.x_strides[a + 2];
              index += pos * p.index_weights[a];
            }
            if (!found || x[x_at] > best) {
              best = x[x_at];
              best_index = index;
              found = true;
            }
            size_t a = rank;
            while (a > 0 && ++k[a - 1] == k_hi[a - 1]) {
              k[a - 1] = k_lo[a - 1];
              --a;
            }
            empty = a == 0;
          }
          y[y_at] = best;
          if (indices) indices[item] = best_index;
        }
      },
      std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(1, taps)));
}

}  // namespace

// The oneDNN pooling kernel serves f32 MaxPool without Indices; this serves the rest.
bool needs_plain_max_pool(const KernelSpec& spec) {
  const bool indices = spec.outputs.size() > 1 && spec.outputs[1] != nullptr;
  return indices || (spec.has_input(0) && spec.inputs[0]->dtype != DType::kF32);
}

Result<std::unique_ptr<Kernel>> make_plain_max_pool(const KernelSpec& spec) {
  HSCHED_RETURN_IF_ERROR(check_static_shapes(spec, true));
  const DType dtype = spec.inputs[0]->dtype;
  if (dtype != DType::kF32 && dtype != DType::kU8 && dtype != DType::kI8) {
    return unsupported(spec,
                       "dtype " + std::string(dtype_name(dtype)) + " (supported: f32, u8, i8)");
  }
  if (spec.inputs.size() != 1) return invalid_node(spec, "takes one input");
  const auto& x = spec.in_dims(0);
  const auto& y = spec.out_dims(0);
  if (x.size() < 3) return invalid_node(spec, "input " + dims_text(x) + " needs rank >= 3");
  if (spec.outputs[0]->dtype != dtype || y.size() != x.size() || y[0] != x[0] || y[1] != x[1]) {
    return invalid_node(spec, "output " + std::string(dtype_name(spec.outputs[0]->dtype)) + " " +
                                  dims_text(y) + " does not match input " +
                                  std::string(dtype_name(dtype)) + " " + dims_text(x));
  }
  const bool with_indices = spec.outputs.size() > 1 && spec.outputs[1] != nullptr;
  if (with_indices && (spec.outputs[1]->dtype != DType::kI64 || spec.out_dims(1) != y)) {
    return invalid_node(spec, "output 'Indices' " + spec.outputs[1]->shape.to_string() + " " +
                                  std::string(dtype_name(spec.outputs[1]->dtype)) +
                                  " must be i64 of the output's shape " + dims_text(y));
  }
  const int64_t storage_order = spec.node.attr_int("storage_order", 0);
  if (storage_order != 0 && storage_order != 1) {
    return invalid_node(
        spec, "attribute 'storage_order' = " + std::to_string(storage_order) + " (must be 0 or 1)");
  }
  const size_t rank = x.size() - 2;
  HSCHED_ASSIGN_OR_RETURN(SpatialParams sp,
                          spatial_params(spec, spec.node.attr_ints("kernel_shape"), rank, false));
  PoolPlan p;
  p.batch = x[0];
  p.channels = x[1];
  p.in.assign(x.begin() + 2, x.end());
  p.out.assign(y.begin() + 2, y.end());
  p.kernel.assign(sp.kernel.begin(), sp.kernel.end());
  p.stride.assign(sp.strides.begin(), sp.strides.end());
  for (auto d : sp.dilation) p.dilation.push_back(d + 1);  // back from oneDNN's d - 1
  p.pad_l.assign(sp.pad_l.begin(), sp.pad_l.end());
  p.x_strides = logical_strides(x, input_channels_last(spec.node, 0));
  p.y_strides = logical_strides(y, output_channels_last(spec.node, 0));
  // Indices count in N, C and then the spatial axes, row-major (storage_order 0) or with the
  // spatial axes column-major (1), as ONNX Runtime numbers them.
  p.index_weights.assign(rank, 1);
  for (size_t i = 0; i < rank; ++i) {
    for (size_t j = 0; j < rank; ++j) {
      if (storage_order == 0 ? j > i : j < i) p.index_weights[i] *= p.in[j];
    }
  }
  return make_kernel(
      [p, dtype, with_indices](std::span<const Tensor* const> in, std::span<Tensor* const> out) {
        int64_t* indices = with_indices ? out[1]->values<int64_t>().data() : nullptr;
        switch (dtype) {
          case DType::kU8:
            max_pool(p, in[0]->values<uint8_t>().data(), out[0]->values<uint8_t>().data(), indices);
            break;
          case DType::kI8:
            max_pool(p, in[0]->values<int8_t>().data(), out[0]->values<int8_t>().data(), indices);
            break;
          default:
            max_pool(p, in[0]->values<float>().data(), out[0]->values<float>().data(), indices);
            break;
        }
        return Status::ok();
      });
}

}  // namespace hsched::cpu
