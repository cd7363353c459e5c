// Math ops with no better family: Hardmax, TopK, Det and LRN, as plain TBB loops. Each factory
// checks every shape and attribute it reads against the node's static shapes, so that a crafted
// node is refused when its kernel is created and the loops never index out of bounds.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>
#include <type_traits>
#include <vector>

#include "backends/cpu/kernels/kernel.h"
#include "backends/cpu/kernels/parallel.h"
#include "backends/cpu/kernels/reduction_common.h"

namespace hsched::cpu {
namespace {

using Inputs = std::span<const Tensor* const>;
using Outputs = std::span<Tensor* const>;
using reduction::AxisLayout;

// Output `i` present, of `dtype` and exactly `dims` (the loops write that layout).
Status check_output_exactly(const KernelSpec& spec, size_t i, DType dtype,
                            const std::vector<int64_t>& dims, const char* what) {
  HSCHED_RETURN_IF_ERROR(
      reduction::check_output(spec, i, dtype, reduction::product(dims, 0, dims.size()), what));
  if (spec.out_dims(i) != dims) {
    return invalid_node(spec, std::string("output '") + what + "' has shape " +
                                  spec.outputs[i]->shape.to_string() + ", expected " +
                                  dims_text(dims));
  }
  return Status::ok();
}

// ---- Hardmax ------------------------------------------------------------------------------------

// One-hot of the first maximum along `axis`; before opset 13 the input is coerced to 2D at
// `axis` (default 1) and the whole tail is one row, from 13 only `axis` (default -1).
Result<std::unique_ptr<Kernel>> make_hardmax(const KernelSpec& spec) {
  HSCHED_RETURN_IF_ERROR(reduction::check_input(spec, 0, {DType::kF32}, "input"));
  const auto& dims = spec.in_dims(0);
  const bool coerce_2d = spec.opset < 13;
  if (dims.empty()) return invalid_node(spec, "the input must have rank >= 1");
  HSCHED_ASSIGN_OR_RETURN(
      const size_t axis,
      reduction::normalize_axis(spec, spec.node.attr_int("axis", coerce_2d ? 1 : -1), dims.size()));
  HSCHED_RETURN_IF_ERROR(check_output_exactly(spec, 0, DType::kF32, dims, "output"));
  const AxisLayout l = reduction::axis_layout(dims, axis, coerce_2d);
  return make_kernel([l](Inputs in, Outputs out) {
    const float* x = in[0]->values<float>().data();
    float* y = out[0]->values<float>().data();
    std::fill(y, y + l.outer * l.n * l.inner, 0.0f);
    if (l.n == 0) return Status::ok();
    parallel_range(
        l.outer * l.inner,
        [&](int64_t begin, int64_t end) {
          for (int64_t line = begin; line < end; ++line) {
            const int64_t base = (line / l.inner) * l.n * l.inner + line % l.inner;
            int64_t best = 0;
            for (int64_t j = 1; j < l.n; ++j) {
              if (x[base + j * l.inner] > x[base + best * l.inner]) best = j;
            }
            y[base + best * l.inner] = 1.0f;
          }
        },
        reduction::grain_for(l.n));
    return Status::ok();
  });
}

// ---- TopK ---------------------------------------------------------------------------------------

// Orders (value, index) pairs: larger (or smaller) values first, ties by the lower index. NaN
// ranks above every number (first for largest, last for smallest), which keeps the order strict
// and weak, as std::partial_sort needs.
template <typename T>
struct TopKOrder {
  bool largest;
  bool value_before(T a, T b) const {
    if constexpr (std::is_floating_point_v<T>) {
      if (std::isnan(a) || std::isnan(b)) return largest ? !std::isnan(b) : !std::isnan(a);
    }
    return largest ? a > b : a < b;
  }
  bool operator()(const std::pair<T, int64_t>& a, const std::pair<T, int64_t>& b) const {
    if (value_before(a.first, b.first)) return true;
    if (value_before(b.first, a.first)) return false;
    return a.second < b.second;
  }
};

template <typename T>
Result<std::unique_ptr<Kernel>> topk_kernel(const KernelSpec& spec, AxisLayout l, int64_t k,
                                            bool k_from_input, bool largest) {
  const bool with_values = reduction::has_output(spec, 0);
  const bool with_indices = reduction::has_output(spec, 1);
  const std::string context = node_context(spec.node);
  return make_kernel([=](Inputs in, Outputs out) -> Status {
    if (k_from_input && in[1]->values<int64_t>()[0] != k) {
      return invalid_argument(context +
                              ": input K = " + std::to_string(in[1]->values<int64_t>()[0]) +
                              " differs from the output's static size " + std::to_string(k));
    }
    const T* x = in[0]->values<T>().data();
    T* values = with_values ? out[0]->values<T>().data() : nullptr;
    int64_t* indices = with_indices ? out[1]->values<int64_t>().data() : nullptr;
    if (k == 0) return Status::ok();
    const TopKOrder<T> order{largest};
    parallel_range(
        l.outer * l.inner,
        [&](int64_t begin, int64_t end) {
          std::vector<std::pair<T, int64_t>> row(static_cast<size_t>(l.n));
          for (int64_t line = begin; line < end; ++line) {
            const int64_t o = line / l.inner, i = line % l.inner;
            const T* src = x + o * l.n * l.inner + i;
            for (int64_t j = 0; j < l.n; ++j) row[static_cast<size_t>(j)] = {src[j * l.inner], j};
            std::partial_sort(row.begin(), row.begin() + k, row.end(), order);
            const int64_t dst = o * k * l.inner + i;
            for (int64_t j = 0; j < k; ++j) {
              if (values) values[dst + j * l.inner] = row[static_cast<size_t>(j)].first;
              if (indices) indices[dst + j * l.inner] = row[static_cast<size_t>(j)].second;
            }
          }
        },
        reduction::grain_for(l.n));
    return Status::ok();
  });
}

// K comes from attribute `k` before opset 10, else from input 1 (an i64 tensor of one element).
// A K that is not constant is taken from the outputs' static shape, and checked at run time.
// `sorted` = 0 leaves the order unspecified; this kernel sorts anyway.
Result<std::unique_ptr<Kernel>> make_topk(const KernelSpec& spec) {
  HSCHED_RETURN_IF_ERROR(reduction::check_input(
      spec, 0, {DType::kF32, DType::kI64, DType::kI32, DType::kI8, DType::kU8}, "X"));
  const auto& dims = spec.in_dims(0);
  if (dims.empty()) return invalid_node(spec, "input 'X' must have rank >= 1");
  HSCHED_ASSIGN_OR_RETURN(
      const size_t axis,
      reduction::normalize_axis(spec, spec.node.attr_int("axis", -1), dims.size()));
  const bool with_values = reduction::has_output(spec, 0);
  const bool with_indices = reduction::has_output(spec, 1);
  if (!with_values && !with_indices)
    return invalid_node(spec, "needs output 'Values' or 'Indices'");
  int64_t k = 0;
  bool k_from_input = false;
  if (spec.opset < 10) {
    if (!spec.node.has_attr("k")) return invalid_node(spec, "missing attribute 'k'");
    k = spec.node.attr_int("k", 0);
  } else {
    HSCHED_RETURN_IF_ERROR(reduction::check_input(spec, 1, {DType::kI64}, "K"));
    if (spec.inputs[1]->shape.elements() != 1) {
      return invalid_node(
          spec, "input 'K' must hold one element, not " + spec.inputs[1]->shape.to_string());
    }
    if (const Tensor* kt = spec.constant(1)) {
      k = kt->values<int64_t>()[0];
    } else {
      const size_t shaped = with_values ? 0 : 1;
      if (spec.out_dims(shaped).size() != dims.size()) {
        return invalid_node(spec, "output rank " + std::to_string(spec.out_dims(shaped).size()) +
                                      " differs from the input's " + std::to_string(dims.size()));
      }
      k = spec.out_dims(shaped)[axis];
      k_from_input = true;
    }
  }
  if (k < 0 || k > dims[axis]) {
    return invalid_node(spec, "K = " + std::to_string(k) + " is outside [0, " +
                                  std::to_string(dims[axis]) + "] (axis " + std::to_string(axis) +
                                  " of " + dims_text(dims) + ")");
  }
  std::vector<int64_t> out_dims = dims;
  out_dims[axis] = k;
  const DType dtype = spec.inputs[0]->dtype;
  if (with_values) HSCHED_RETURN_IF_ERROR(check_output_exactly(spec, 0, dtype, out_dims, "Values"));
  if (with_indices) {
    HSCHED_RETURN_IF_ERROR(check_output_exactly(spec, 1, DType::kI64, out_dims, "Indices"));
  }
  const bool largest = spec.node.attr_int("largest", 1) != 0;
  const AxisLayout l = reduction::axis_layout(dims, axis);
  Result<std::unique_ptr<Kernel>> kernel = unsupported(spec, "dtype");
  dispatch_dtype(dtype, [&](auto zero) {
    kernel = topk_kernel<decltype(zero)>(spec, l, k, k_from_input, largest);
  });
  return kernel;
}

// ---- Det ----------------------------------------------------------------------------------------

// Determinant of one row-major n x n matrix: LU with partial pivoting, in double.
double determinant(const float* m, int64_t n, std::vector<double>& a) {
  a.assign(m, m + n * n);
  double det = 1.0;
  for (int64_t c = 0; c < n; ++c) {
    int64_t pivot = c;
    for (int64_t r = c + 1; r < n; ++r) {
      if (std::fabs(a[r * n + c]) > std::fabs(a[pivot * n + c])) pivot = r;
    }
    const double p = a[pivot * n + c];
    if (p == 0.0) return 0.0;
    if (pivot != c) {
      std::swap_ranges(a.begin() + c * n, a.begin() + (c + 1) * n, a.begin() + pivot * n);
      det = -det;
    }
    det *= p;
    for (int64_t r = c + 1; r < n; ++r) {
      const double f = a[r * n + c] / p;
      for (int64_t j = c + 1; j < n; ++j) a[r * n + j] -= f * a[c * n + j];
    }
  }
  return det;
}

// X [*, M, M] -> Y [*].
Result<std::unique_ptr<Kernel>> make_det(const KernelSpec& spec) {
  HSCHED_RETURN_IF_ERROR(reduction::check_input(spec, 0, {DType::kF32}, "X"));
  const auto& dims = spec.in_dims(0);
  if (dims.size() < 2 || dims[dims.size() - 1] != dims[dims.size() - 2]) {
    return invalid_node(spec, "input " + dims_text(dims) + " is not a (batch of) square matrices");
  }
  const std::vector<int64_t> batch(dims.begin(), dims.end() - 2);
  HSCHED_RETURN_IF_ERROR(check_output_exactly(spec, 0, DType::kF32, batch, "Y"));
  const int64_t n = dims.back();
  const int64_t count = reduction::product(batch, 0, batch.size());
  return make_kernel([n, count](Inputs in, Outputs out) {
    const float* x = in[0]->values<float>().data();
    float* y = out[0]->values<float>().data();
    parallel_range(
        count,
        [&](int64_t begin, int64_t end) {
          std::vector<double> scratch;
          for (int64_t b = begin; b < end; ++b) {
            y[b] = static_cast<float>(determinant(x + b * n * n, n, scratch));
          }
        },
        reduction::grain_for(n * n * n));
    return Status::ok();
  });
}

// ---- LRN ----------------------------------------------------------------------------------------

// y = x / (bias + alpha / size * sum of x^2 over channels [c - floor((size-1)/2),
// c + ceil((size-1)/2)]) ^ beta, on X [N, C, D1...]. alpha is divided by size as in ONNX (and
// oneDNN, and Caffe); a plain loop serves any rank.
Result<std::unique_ptr<Kernel>> make_lrn(const KernelSpec& spec) {
  HSCHED_RETURN_IF_ERROR(reduction::check_input(spec, 0, {DType::kF32}, "X"));
  const auto& dims = spec.in_dims(0);
  if (dims.size() < 2) return invalid_node(spec, "input " + dims_text(dims) + " needs rank >= 2");
  HSCHED_RETURN_IF_ERROR(check_output_exactly(spec, 0, DType::kF32, dims, "Y"));
  if (!spec.node.has_attr("size")) return invalid_node(spec, "missing attribute 'size'");
  const int64_t size = spec.node.attr_int("size", 0);
  if (size < 1)
    return invalid_node(spec, "attribute 'size' = " + std::to_string(size) + " must be >= 1");
  const float alpha = spec.node.attr_float("alpha", 1e-4f);
  const float beta = spec.node.attr_float("beta", 0.75f);
  const float bias = spec.node.attr_float("bias", 1.0f);
  const float scale = alpha / static_cast<float>(size);
  const int64_t channels = dims[1];
  const int64_t inner = reduction::product(dims, 2, dims.size());
  const int64_t rows = dims[0] * channels;
  const int64_t before = (size - 1) / 2, after = (size - 1) - before;
  return make_kernel([=](Inputs in, Outputs out) {
    const float* x = in[0]->values<float>().data();
    float* y = out[0]->values<float>().data();
    parallel_range(
        rows,
        [&](int64_t begin, int64_t end) {
          for (int64_t row = begin; row < end; ++row) {
            const int64_t c = row % channels;
            const float* plane = x + (row - c) * inner;  // channel 0 of this batch item
            float* acc = y + row * inner;                // the sum of squares, then the output
            std::fill(acc, acc + inner, 0.0f);
            const int64_t lo = std::max<int64_t>(0, c - before);
            const int64_t hi = std::min(channels - 1, c + after);
            for (int64_t j = lo; j <= hi; ++j) {
              const float* xj = plane + j * inner;
              for (int64_t s = 0; s < inner; ++s) acc[s] += xj[s] * xj[s];
            }
            const float* xc = plane + c * inner;
            for (int64_t s = 0; s < inner; ++s) {
              acc[s] = xc[s] * std::pow(bias + scale * acc[s], -beta);
            }
          }
        },
        reduction::grain_for(inner * std::min(size, std::max<int64_t>(channels, 1))));
    return Status::ok();
  });
}

// ---- CumSum -------------------------------------------------------------------------------------

// Running sums along one axis; `exclusive` leaves out the element itself, `reverse` runs from the
// end. Floats add in their own type (f64 in double), integers in their unsigned twin, so that an
// overflow wraps instead of being undefined behaviour.
template <typename T>
void cumsum_run(const T* x, T* y, AxisLayout l, bool exclusive, bool reverse) {
  using Acc = typename std::conditional_t<std::is_floating_point_v<T>, std::type_identity<T>,
                                          std::make_unsigned<T>>::type;
  parallel_range(
      l.outer * l.inner,
      [&](int64_t begin, int64_t end) {
        for (int64_t line = begin; line < end; ++line) {
          const int64_t base = (line / l.inner) * l.n * l.inner + line % l.inner;
          Acc acc{0};
          for (int64_t step = 0; step < l.n; ++step) {
            const int64_t j = reverse ? l.n - 1 - step : step;
            const int64_t at = base + j * l.inner;
            const auto value = static_cast<Acc>(x[at]);
            if (!exclusive) acc = static_cast<Acc>(acc + value);
            y[at] = static_cast<T>(acc);
            if (exclusive) acc = static_cast<Acc>(acc + value);
          }
        }
      },
      reduction::grain_for(l.n));
}

// The axis is input 1, a one-element i32/i64 tensor; it may be computed (ONNX's tests feed it as
// a graph input): the output's shape does not depend on it, so it is read at each run.
Result<std::unique_ptr<Kernel>> make_cumsum(const KernelSpec& spec) {
  HSCHED_RETURN_IF_ERROR(reduction::check_input(
      spec, 0, {DType::kF32, DType::kF64, DType::kI32, DType::kI64, DType::kU32, DType::kU64},
      "x"));
  HSCHED_RETURN_IF_ERROR(reduction::check_input(spec, 1, {DType::kI64, DType::kI32}, "axis"));
  const std::string context = node_context(spec.node);
  const std::vector<int64_t> dims = spec.in_dims(0);
  if (dims.empty()) return invalid_argument(context + ": input 'x' must have rank >= 1");
  int64_t axis_elements = 1;
  for (int64_t d : spec.in_dims(1)) axis_elements *= d;
  if (axis_elements != 1) return invalid_argument(context + ": input 'axis' must hold one value");
  const DType dtype = spec.inputs[0]->dtype;
  int64_t elements = 1;
  for (int64_t d : dims) elements *= d;
  HSCHED_RETURN_IF_ERROR(reduction::check_output(spec, 0, dtype, elements, "y"));
  const bool exclusive = spec.node.attr_int("exclusive", 0) != 0;
  const bool reverse = spec.node.attr_int("reverse", 0) != 0;
  auto kernel = [&]<typename T>(T) {
    return make_kernel([=](Inputs in, Outputs out) -> Status {
      const Tensor& a = *in[1];
      int64_t axis = a.dtype() == DType::kI64 ? a.values<int64_t>()[0] : a.values<int32_t>()[0];
      const auto rank = static_cast<int64_t>(dims.size());
      if (axis < -rank || axis >= rank) {
        return invalid_argument(context + ": axis " + std::to_string(axis) +
                                " is out of range for rank " + std::to_string(rank));
      }
      if (axis < 0) axis += rank;
      const AxisLayout l = reduction::axis_layout(dims, static_cast<size_t>(axis));
      cumsum_run<T>(in[0]->values<T>().data(), out[0]->values<T>().data(), l, exclusive, reverse);
      return Status::ok();
    });
  };
  switch (dtype) {
    case DType::kF32:
      return kernel(float{});
    case DType::kF64:
      return kernel(double{});
    case DType::kI32:
      return kernel(int32_t{});
    case DType::kI64:
      return kernel(int64_t{});
    case DType::kU32:
      return kernel(uint32_t{});
    case DType::kU64:
      return kernel(uint64_t{});
    default:
      return unsupported(spec, "dtype " + std::string(dtype_name(dtype)));
  }
}

}  // namespace

void register_math_kernels(KernelRegistry& registry) {
  registry.add("Hardmax", make_hardmax);
  registry.add("TopK", make_topk);
  registry.add("Det", make_det);
  registry.add("LRN", make_lrn);
  registry.add("CumSum", make_cumsum);
}

}  // namespace hsched::cpu
