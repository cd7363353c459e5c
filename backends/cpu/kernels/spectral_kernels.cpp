// DFT (opset 17, and opset 20's axis input) and STFT (opset 17) as plain loops in double: a
// radix-2 FFT for power-of-two lengths, a direct O(n^2) sum over exact twiddles otherwise.
// Lengths that set the output's shape (dft_length, frame_step, frame_length) are checked against
// the node's static output shape when the kernel is created if they are constants, else at each
// run (ONNX's node tests feed them as graph inputs), so the loops never index out of bounds.
#include <algorithm>
#include <cmath>
#include <complex>
#include <memory>
#include <numbers>
#include <optional>
#include <string>
#include <vector>

#include "backends/cpu/kernels/kernel.h"
#include "backends/cpu/kernels/parallel.h"
#include "backends/cpu/kernels/reduction_common.h"

namespace hsched::cpu {
namespace {

using Inputs = std::span<const Tensor* const>;
using Outputs = std::span<Tensor* const>;
using Complex = std::complex<double>;

// Longest transform, and the most multiply-adds a non-power-of-two length may cost per run
// (n * n * signals): beyond these a run would take many seconds or gigabytes of twiddles.
constexpr int64_t kMaxLength = int64_t{1} << 20;
constexpr double kMaxDirectWork = 4294967296.0;  // 2^32

bool is_power_of_two(int64_t n) { return n > 0 && (n & (n - 1)) == 0; }

// One transform of length n: y[k] = sum_j x[j] exp(-+2 pi i jk / n), divided by n when inverse.
// Immutable once built, so the worker threads share one.
class Transform {
 public:
  Transform(int64_t n, bool inverse) : n_(n), inverse_(inverse), twiddle_(static_cast<size_t>(n)) {
    const double sign = inverse ? 1.0 : -1.0;
    for (int64_t m = 0; m < n; ++m) {
      const double angle = 2.0 * std::numbers::pi * static_cast<double>(m) / static_cast<double>(n);
      twiddle_[static_cast<size_t>(m)] = {std::cos(angle), sign * std::sin(angle)};
    }
  }

  int64_t length() const { return n_; }
  // Multiply-adds of one transform, for parallel grains.
  int64_t cost() const {
    if (!is_power_of_two(n_)) return n_ * n_;
    int64_t log2 = 0;
    while ((int64_t{1} << log2) < n_) ++log2;
    return n_ * std::max<int64_t>(1, log2);
  }

  // In place on `a` (n values); `scratch` is resized as needed.
  void run(std::vector<Complex>& a, std::vector<Complex>& scratch) const {
    if (is_power_of_two(n_)) {
      radix2(a);
    } else {
      direct(a, scratch);
    }
    if (inverse_) {
      const double scale = 1.0 / static_cast<double>(n_);
      for (Complex& v : a) v *= scale;
    }
  }

 private:
  void radix2(std::vector<Complex>& a) const {
    for (int64_t i = 1, j = 0; i < n_; ++i) {  // bit-reversal permutation
      int64_t bit = n_ >> 1;
      for (; j & bit; bit >>= 1) j ^= bit;
      j ^= bit;
      if (i < j) std::swap(a[static_cast<size_t>(i)], a[static_cast<size_t>(j)]);
    }
    for (int64_t len = 2; len <= n_; len <<= 1) {
      const int64_t half = len / 2, step = n_ / len;
      for (int64_t start = 0; start < n_; start += len) {
        for (int64_t j = 0; j < half; ++j) {
          const Complex w = twiddle_[static_cast<size_t>(j * step)];
          Complex& lo = a[static_cast<size_t>(start + j)];
          Complex& hi = a[static_cast<size_t>(start + j + half)];
          const Complex v = hi * w;
          hi = lo - v;
          lo += v;
        }
      }
    }
  }

  void direct(std::vector<Complex>& a, std::vector<Complex>& scratch) const {
    scratch.assign(a.begin(), a.end());
    for (int64_t k = 0; k < n_; ++k) {
      Complex sum = 0.0;
      int64_t m = 0;  // j * k mod n
      for (int64_t j = 0; j < n_; ++j) {
        sum += scratch[static_cast<size_t>(j)] * twiddle_[static_cast<size_t>(m)];
        m += k;
        if (m >= n_) m -= n_;
      }
      a[static_cast<size_t>(k)] = sum;
    }
  }

  int64_t n_;
  bool inverse_;
  std::vector<Complex> twiddle_;
};

// A length, a step or a count that is too large for the loops (Unimplemented), else ok.
Status check_cost(const std::string& context, int64_t n, int64_t signals) {
  if (n > kMaxLength) {
    return unimplemented(context + ": transform length " + std::to_string(n) + " is above " +
                         std::to_string(kMaxLength));
  }
  if (!is_power_of_two(n) &&
      static_cast<double>(n) * static_cast<double>(n) * static_cast<double>(signals) >
          kMaxDirectWork) {
    return unimplemented(context + ": " + std::to_string(signals) + " transforms of length " +
                         std::to_string(n) +
                         " (not a power of two) need more than 2^32 multiply-adds");
  }
  return Status::ok();
}

// Input `i` as a one-element i32/i64 tensor (a scalar or [1]); its value when constant.
Result<std::optional<int64_t>> scalar_length_input(const KernelSpec& spec, size_t i,
                                                   const char* what) {
  HSCHED_RETURN_IF_ERROR(reduction::check_input(spec, i, {DType::kI64, DType::kI32}, what));
  if (spec.inputs[i]->shape.elements() != 1) {
    return invalid_node(spec, std::string("input '") + what + "' must hold one value, not " +
                                  spec.inputs[i]->shape.to_string());
  }
  const Tensor* t = spec.constant(i);
  if (t == nullptr) return std::optional<int64_t>();
  return std::optional<int64_t>(t->dtype() == DType::kI64 ? t->values<int64_t>()[0]
                                                          : t->values<int32_t>()[0]);
}

int64_t read_scalar(const Tensor& t) {
  return t.dtype() == DType::kI64 ? t.values<int64_t>()[0] : t.values<int32_t>()[0];
}

// Output 0 present, of `dtype`, rank `rank`; the caller compares its dims.
Status check_output_value(const KernelSpec& spec, DType dtype, size_t rank) {
  if (!reduction::has_output(spec, 0)) return invalid_node(spec, "missing output 'output'");
  const Value& v = *spec.outputs[0];
  if (!v.shape.is_static()) {
    return unsupported(spec, "output 'output' has a dynamic shape " + v.shape.to_string());
  }
  if (v.dtype != dtype) {
    return invalid_node(spec, "output 'output' has dtype " + std::string(dtype_name(v.dtype)) +
                                  ", expected " + std::string(dtype_name(dtype)));
  }
  if (v.shape.rank() != rank) {
    return invalid_node(spec, "output 'output' has shape " + v.shape.to_string() +
                                  ", expected rank " + std::to_string(rank));
  }
  return Status::ok();
}

Status shape_mismatch(const std::string& context, const std::vector<int64_t>& declared,
                      const std::vector<int64_t>& expected) {
  return invalid_argument(context + ": output 'output' has shape " + dims_text(declared) +
                          ", expected " + dims_text(expected));
}

// Reads one signal's sample `j` (real, or real and imaginary parts) as a complex double.
template <typename T>
Complex sample(const T* p, int64_t channels) {
  return {static_cast<double>(p[0]), channels == 2 ? static_cast<double>(p[1]) : 0.0};
}

// ---- DFT ----------------------------------------------------------------------------------------

// The input seen as [outer, length, inner, channels] around the axis; the output as
// [outer, bins, inner, 2].
struct DftLayout {
  int64_t outer = 1;
  int64_t length = 1;  // the input's dim along the axis
  int64_t inner = 1;
  int64_t channels = 1;
  int64_t n = 1;     // dft_length: the signal is cut or zero-padded to it
  int64_t bins = 1;  // n, or n / 2 + 1 when onesided
};

// The layout for dft_length `n`, checked against the declared output dims.
Result<DftLayout> dft_layout(const std::string& context, const std::vector<int64_t>& in,
                             const std::vector<int64_t>& out, size_t axis, bool onesided,
                             int64_t n) {
  if (n < 1) {
    return invalid_argument(context + ": dft_length = " + std::to_string(n) + " must be >= 1");
  }
  DftLayout l;
  l.outer = reduction::product(in, 0, axis);
  l.length = in[axis];
  l.inner = reduction::product(in, axis + 1, in.size() - 1);
  l.channels = in.back();
  l.n = n;
  l.bins = onesided ? n / 2 + 1 : n;
  std::vector<int64_t> expected = in;
  expected[axis] = l.bins;
  expected.back() = 2;
  if (out != expected) return shape_mismatch(context, out, expected);
  HSCHED_RETURN_IF_ERROR(check_cost(context, n, l.outer * l.inner));
  return l;
}

template <typename T>
void dft_run(const T* x, T* y, const DftLayout& l, const Transform& t) {
  const int64_t used = std::min(l.length, l.n);
  parallel_range(
      l.outer * l.inner,
      [&](int64_t begin, int64_t end) {
        std::vector<Complex> a(static_cast<size_t>(l.n)), scratch;
        for (int64_t s = begin; s < end; ++s) {
          const int64_t o = s / l.inner, i = s % l.inner;
          const T* src = used > 0 ? x + (o * l.length * l.inner + i) * l.channels : nullptr;
          for (int64_t j = 0; j < used; ++j) {
            a[static_cast<size_t>(j)] = sample(src + j * l.inner * l.channels, l.channels);
          }
          std::fill(a.begin() + used, a.end(), Complex{});
          t.run(a, scratch);
          T* dst = y + (o * l.bins * l.inner + i) * 2;
          for (int64_t k = 0; k < l.bins; ++k) {
            dst[k * l.inner * 2] = static_cast<T>(a[static_cast<size_t>(k)].real());
            dst[k * l.inner * 2 + 1] = static_cast<T>(a[static_cast<size_t>(k)].imag());
          }
        }
      },
      reduction::grain_for(t.cost()));
}

// input [d0, ..., signal_dim, ..., 1 or 2] -> output [..., n or n / 2 + 1, ..., 2]. The axis is an
// attribute (default 1) before opset 20, then input 2 (default -2, which must be constant);
// either way in [-r, -2] or [0, r - 2]. onesided needs a real input; onesided with inverse
// (IRFFT) is refused: opset 17's text did not define it and later texts changed the output.
Result<std::unique_ptr<Kernel>> make_dft(const KernelSpec& spec) {
  const std::string context = node_context(spec.node);
  HSCHED_RETURN_IF_ERROR(reduction::check_input(spec, 0, {DType::kF32, DType::kF64}, "input"));
  const std::vector<int64_t> in = spec.in_dims(0);
  const auto rank = static_cast<int64_t>(in.size());
  if (rank < 2 || (in.back() != 1 && in.back() != 2)) {
    return invalid_node(spec, "input " + dims_text(in) +
                                  " must have rank >= 2 and a last dim of 1 (real) or 2 (complex)");
  }
  int64_t axis = 1;
  if (spec.opset >= 20) {
    axis = -2;
    if (spec.has_input(2)) {
      HSCHED_ASSIGN_OR_RETURN(const auto value, scalar_length_input(spec, 2, "axis"));
      if (!value) return unsupported(spec, "input 'axis' must be a constant");
      axis = *value;
    }
  } else {
    axis = spec.node.attr_int("axis", 1);
  }
  if (axis < -rank || axis > rank - 2 || axis == -1) {
    return invalid_node(spec, "axis " + std::to_string(axis) + " is outside [-" +
                                  std::to_string(rank) + ", -2] and [0, " +
                                  std::to_string(rank - 2) + "] for input " + dims_text(in));
  }
  const auto axis_index = static_cast<size_t>(axis < 0 ? axis + rank : axis);
  const int64_t inverse_attr = spec.node.attr_int("inverse", 0);
  const int64_t onesided_attr = spec.node.attr_int("onesided", 0);
  if ((inverse_attr != 0 && inverse_attr != 1) || (onesided_attr != 0 && onesided_attr != 1)) {
    return invalid_node(spec, "attributes 'inverse' and 'onesided' must be 0 or 1");
  }
  const bool inverse = inverse_attr == 1, onesided = onesided_attr == 1;
  if (onesided && inverse) {
    return unsupported(spec,
                       "onesided = 1 with inverse = 1 (an inverse real DFT) is not supported");
  }
  if (onesided && in.back() == 2) {
    return invalid_node(spec, "onesided = 1 needs a real input (last dim 1), not " + dims_text(in));
  }
  const DType dtype = spec.inputs[0]->dtype;
  HSCHED_RETURN_IF_ERROR(check_output_value(spec, dtype, in.size()));
  const std::vector<int64_t> out = spec.out_dims(0);
  std::optional<int64_t> n = in[axis_index];
  if (spec.has_input(1)) {
    HSCHED_ASSIGN_OR_RETURN(n, scalar_length_input(spec, 1, "dft_length"));
  }
  std::shared_ptr<const Transform> transform;
  DftLayout layout;
  if (n) {
    HSCHED_ASSIGN_OR_RETURN(layout, dft_layout(context, in, out, axis_index, onesided, *n));
    transform = std::make_shared<Transform>(*n, inverse);
  } else {  // dft_length arrives at run time: check the rest of the output's shape now
    std::vector<int64_t> expected = in;
    expected[axis_index] = out[axis_index];
    expected.back() = 2;
    if (out != expected) return shape_mismatch(context, out, expected);
  }
  auto kernel = [&]<typename T>(T) {
    return make_kernel([=](Inputs ins, Outputs outs) -> Status {
      DftLayout l = layout;
      std::shared_ptr<const Transform> t = transform;
      if (!t) {
        HSCHED_ASSIGN_OR_RETURN(
            l, dft_layout(context, in, out, axis_index, onesided, read_scalar(*ins[1])));
        t = std::make_shared<Transform>(l.n, inverse);
      }
      dft_run<T>(ins[0]->values<T>().data(), outs[0]->values<T>().data(), l, *t);
      return Status::ok();
    });
  };
  return dtype == DType::kF64 ? kernel(double{}) : kernel(float{});
}

// ---- STFT ---------------------------------------------------------------------------------------

struct StftLayout {
  int64_t batch = 1;
  int64_t length = 1;  // signal_length
  int64_t channels = 1;
  int64_t step = 1;  // frame_step
  int64_t n = 1;     // frame_length, the DFT's length
  int64_t frames = 1;
  int64_t bins = 1;  // n, or n / 2 + 1 when onesided
};

// The layout for `step` and frame length `n`, checked against the signal, the window's length
// (-1: no window) and the declared output dims.
Result<StftLayout> stft_layout(const std::string& context, const std::vector<int64_t>& signal,
                               int64_t window, const std::vector<int64_t>& out, bool onesided,
                               int64_t step, int64_t n) {
  StftLayout l;
  l.batch = signal[0];
  l.length = signal[1];
  l.channels = signal[2];
  if (step < 1) {
    return invalid_argument(context + ": frame_step = " + std::to_string(step) + " must be >= 1");
  }
  if (n < 1 || n > l.length) {
    return invalid_argument(context + ": frame_length = " + std::to_string(n) +
                            " must be in [1, signal_length = " + std::to_string(l.length) + "]");
  }
  if (window >= 0 && window != n) {
    return invalid_argument(context + ": the window's length " + std::to_string(window) +
                            " differs from frame_length = " + std::to_string(n));
  }
  l.step = step;
  l.n = n;
  l.frames = (l.length - n) / step + 1;
  l.bins = onesided ? n / 2 + 1 : n;
  const std::vector<int64_t> expected = {l.batch, l.frames, l.bins, 2};
  if (out != expected) return shape_mismatch(context, out, expected);
  HSCHED_RETURN_IF_ERROR(check_cost(context, n, l.batch * l.frames));
  return l;
}

template <typename T>
void stft_run(const T* x, const T* window, T* y, const StftLayout& l, const Transform& t) {
  parallel_range(
      l.batch * l.frames,
      [&](int64_t begin, int64_t end) {
        std::vector<Complex> a(static_cast<size_t>(l.n)), scratch;
        for (int64_t s = begin; s < end; ++s) {
          const int64_t b = s / l.frames, f = s % l.frames;
          const T* src = x + (b * l.length + f * l.step) * l.channels;
          for (int64_t j = 0; j < l.n; ++j) {
            const double w = window ? static_cast<double>(window[j]) : 1.0;
            a[static_cast<size_t>(j)] = sample(src + j * l.channels, l.channels) * w;
          }
          t.run(a, scratch);
          T* dst = y + s * l.bins * 2;
          for (int64_t k = 0; k < l.bins; ++k) {
            dst[2 * k] = static_cast<T>(a[static_cast<size_t>(k)].real());
            dst[2 * k + 1] = static_cast<T>(a[static_cast<size_t>(k)].imag());
          }
        }
      },
      reduction::grain_for(t.cost()));
}

// signal [batch, signal_length, 1 or 2], frame_step, optional window [frame_length] (real),
// optional frame_length -> output [batch, frames, bins, 2], frames = (signal_length -
// frame_length) / frame_step + 1. frame_length defaults to the window's length, else to
// signal_length; onesided (default 1) needs a real signal.
Result<std::unique_ptr<Kernel>> make_stft(const KernelSpec& spec) {
  const std::string context = node_context(spec.node);
  HSCHED_RETURN_IF_ERROR(reduction::check_input(spec, 0, {DType::kF32, DType::kF64}, "signal"));
  const std::vector<int64_t> signal = spec.in_dims(0);
  if (signal.size() != 3 || (signal[2] != 1 && signal[2] != 2)) {
    return invalid_node(
        spec, "input 'signal' " + dims_text(signal) + " must be [batch, signal_length, 1 or 2]");
  }
  const DType dtype = spec.inputs[0]->dtype;
  HSCHED_ASSIGN_OR_RETURN(const std::optional<int64_t> step,
                          scalar_length_input(spec, 1, "frame_step"));
  int64_t window = -1;
  if (spec.has_input(2)) {
    HSCHED_RETURN_IF_ERROR(reduction::check_input(spec, 2, {dtype}, "window"));
    if (spec.in_dims(2).size() != 1) {
      return invalid_node(spec, "input 'window' " + dims_text(spec.in_dims(2)) + " must be 1-D");
    }
    window = spec.in_dims(2)[0];
  }
  const bool with_frame_length = spec.has_input(3);
  std::optional<int64_t> n = window >= 0 ? window : signal[1];
  if (with_frame_length) {
    HSCHED_ASSIGN_OR_RETURN(n, scalar_length_input(spec, 3, "frame_length"));
  }
  const int64_t onesided_attr = spec.node.attr_int("onesided", 1);
  if (onesided_attr != 0 && onesided_attr != 1) {
    return invalid_node(
        spec, "attribute 'onesided' must be 0 or 1, not " + std::to_string(onesided_attr));
  }
  const bool onesided = onesided_attr == 1;
  if (onesided && signal[2] == 2) {
    return invalid_node(spec,
                        "onesided = 1 needs a real signal (last dim 1), not " + dims_text(signal));
  }
  HSCHED_RETURN_IF_ERROR(check_output_value(spec, dtype, 4));
  const std::vector<int64_t> out = spec.out_dims(0);
  std::shared_ptr<const Transform> transform;
  StftLayout layout;
  if (step && n) {
    HSCHED_ASSIGN_OR_RETURN(layout, stft_layout(context, signal, window, out, onesided, *step, *n));
    transform = std::make_shared<Transform>(*n, false);
  } else if (out[0] != signal[0] || out[3] != 2) {  // the rest is checked at run time
    return shape_mismatch(context, out, {signal[0], out[1], out[2], 2});
  }
  const std::optional<int64_t> static_n = n;
  auto kernel = [&]<typename T>(T) {
    return make_kernel([=](Inputs ins, Outputs outs) -> Status {
      StftLayout l = layout;
      std::shared_ptr<const Transform> t = transform;
      if (!t) {
        const int64_t run_step = step ? *step : read_scalar(*ins[1]);
        const int64_t run_n = static_n ? *static_n : read_scalar(*ins[3]);
        HSCHED_ASSIGN_OR_RETURN(
            l, stft_layout(context, signal, window, out, onesided, run_step, run_n));
        t = std::make_shared<Transform>(l.n, false);
      }
      const T* w = window >= 0 ? ins[2]->values<T>().data() : nullptr;
      stft_run<T>(ins[0]->values<T>().data(), w, outs[0]->values<T>().data(), l, *t);
      return Status::ok();
    });
  };
  return dtype == DType::kF64 ? kernel(double{}) : kernel(float{});
}

}  // namespace

void register_spectral_kernels(KernelRegistry& registry) {
  registry.add("DFT", make_dft);
  registry.add("STFT", make_stft);
}

}  // namespace hsched::cpu
