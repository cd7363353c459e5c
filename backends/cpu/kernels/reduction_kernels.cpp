// Reductions: Reduce* over any set of axes, ArgMax/ArgMin, GlobalAveragePool/GlobalMaxPool.
// Softmax and the normalizations are in normalization_kernels.cpp (same family, split for size).
//
// A reduction is planned once per kernel: size-1 dims are dropped and neighbouring dims that are
// both kept or both reduced are merged, which turns almost every real case into contiguous rows
// ([outer, n], reducing n) or strided columns ([outer, n, inner], reducing n); anything else
// (reduced axes that are not adjacent after merging) takes a general strided walk.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "backends/cpu/kernels/kernel.h"
#include "backends/cpu/kernels/parallel.h"
#include "backends/cpu/kernels/post_ops.h"
#include "backends/cpu/kernels/reduction_common.h"

namespace hsched::cpu {
namespace {

using reduction::check_input;
using reduction::check_output;
using reduction::grain_for;
using reduction::kColumnBlock;
using reduction::kLanes;

// At most this many partial results for a column reduction of one block (their memory: this
// many rows of doubles).
constexpr int64_t kMaxRowChunks = 64;

enum class ReduceKind { kSum, kMean, kMax, kMin, kProd, kL1, kL2, kSumSquare, kLogSum, kLogSumExp };

constexpr bool integer_capable(ReduceKind k) {
  return k == ReduceKind::kSum || k == ReduceKind::kMax || k == ReduceKind::kMin ||
         k == ReduceKind::kProd;
}

// One reduction's arithmetic. Float sums and products accumulate in double (rows of 10^5
// elements stay exact to ~1e-7); integer ones in uint64_t, which wraps where int64_t would be
// undefined behaviour; Max/Min stay in T, being exact. LogSumExp sums exp(x) in double as ONNX's
// reference does (no max shift: an f32 x cannot overflow exp in double; f64 past 709 gives inf,
// as the reference's does).
template <ReduceKind K, typename T>
struct ReduceOp {
  static constexpr bool kExtremum = K == ReduceKind::kMax || K == ReduceKind::kMin;
  using Acc = std::conditional_t<kExtremum, T,
                                 std::conditional_t<std::is_floating_point_v<T>, double, uint64_t>>;

  // The value of an empty reduction (ONNX: -inf / the lowest value for Max, 0 for sums).
  static Acc init() {
    using Limits = std::numeric_limits<T>;
    if constexpr (K == ReduceKind::kMax) {
      return Limits::has_infinity ? -Limits::infinity() : Limits::lowest();
    } else if constexpr (K == ReduceKind::kMin) {
      return Limits::has_infinity ? Limits::infinity() : Limits::max();
    } else if constexpr (K == ReduceKind::kProd) {
      return Acc{1};
    } else {
      return Acc{0};
    }
  }
  static Acc step(Acc a, T x) {
    if constexpr (K == ReduceKind::kMax) {
      return x > a ? x : a;
    } else if constexpr (K == ReduceKind::kMin) {
      return x < a ? x : a;
    } else if constexpr (K == ReduceKind::kProd) {
      return a * static_cast<Acc>(x);
    } else if constexpr (K == ReduceKind::kL1) {
      return a + std::fabs(static_cast<Acc>(x));
    } else if constexpr (K == ReduceKind::kL2 || K == ReduceKind::kSumSquare) {
      return a + static_cast<Acc>(x) * static_cast<Acc>(x);
    } else if constexpr (K == ReduceKind::kLogSumExp) {
      return a + std::exp(static_cast<Acc>(x));
    } else {
      return a + static_cast<Acc>(x);
    }
  }
  static Acc merge(Acc a, Acc b) {
    if constexpr (kExtremum) {
      return step(a, b);
    } else if constexpr (K == ReduceKind::kProd) {
      return a * b;
    } else {
      return a + b;
    }
  }
  static T finish(Acc a, int64_t count) {
    if constexpr (K == ReduceKind::kMean) {
      return static_cast<T>(a / static_cast<double>(count));  // 0/0 = NaN for an empty mean
    } else if constexpr (K == ReduceKind::kL2) {
      return static_cast<T>(std::sqrt(a));
    } else if constexpr (K == ReduceKind::kLogSum || K == ReduceKind::kLogSumExp) {
      return static_cast<T>(std::log(a));
    } else {
      return static_cast<T>(a);
    }
  }
};

// How a reduction walks its input; see the comment at the top of the file.
struct ReducePlan {
  enum class Form { kRows, kColumns, kGeneral };
  Form form = Form::kRows;
  int64_t outer = 1;    // kRows, kColumns
  int64_t reduced = 1;  // elements reduced into each output
  int64_t inner = 1;    // kColumns
  int64_t in_elements = 0;
  int64_t out_elements = 0;
  // kGeneral: (size, input stride) of the kept and reduced dims, outermost first.
  std::vector<int64_t> kept_sizes, kept_strides, red_sizes, red_strides;
};

ReducePlan make_reduce_plan(const std::vector<int64_t>& dims, const std::vector<bool>& reduce) {
  ReducePlan plan;
  plan.in_elements = reduction::product(dims, 0, dims.size());
  struct Group {
    int64_t size;
    bool reduced;
  };
  std::vector<Group> groups;
  for (size_t a = 0; a < dims.size(); ++a) {
    if (dims[a] == 1) continue;
    if (!groups.empty() && groups.back().reduced == reduce[a]) {
      groups.back().size *= dims[a];
    } else {
      groups.push_back({dims[a], reduce[a]});
    }
  }
  int64_t stride = 1;
  std::vector<int64_t> strides(groups.size());
  for (size_t g = groups.size(); g-- > 0;) {
    strides[g] = stride;
    stride *= groups[g].size;
  }
  plan.outer = 1;
  plan.reduced = 1;
  int reduced_groups = 0;
  for (size_t g = 0; g < groups.size(); ++g) {
    if (groups[g].reduced) {
      ++reduced_groups;
      plan.reduced *= groups[g].size;
      plan.red_sizes.push_back(groups[g].size);
      plan.red_strides.push_back(strides[g]);
    } else {
      plan.kept_sizes.push_back(groups[g].size);
      plan.kept_strides.push_back(strides[g]);
    }
  }
  plan.out_elements = reduction::product(plan.kept_sizes, 0, plan.kept_sizes.size());
  if (reduced_groups == 0 || (reduced_groups == 1 && groups.back().reduced)) {
    plan.form = ReducePlan::Form::kRows;  // [outer, reduced]
    plan.outer = plan.out_elements;
  } else if (reduced_groups == 1 && groups.size() >= 2 && !groups.back().reduced &&
             groups[groups.size() - 2].reduced) {
    plan.form = ReducePlan::Form::kColumns;  // [outer, reduced, inner]
    plan.inner = groups.back().size;
    plan.outer = plan.inner == 0 ? 0 : plan.out_elements / plan.inner;
  } else {
    plan.form = ReducePlan::Form::kGeneral;
  }
  return plan;
}

template <typename Op, typename T>
T reduce_row(const T* x, int64_t n) {
  typename Op::Acc lanes[kLanes];
  for (auto& lane : lanes) lane = Op::init();
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    for (int k = 0; k < kLanes; ++k) lanes[k] = Op::step(lanes[k], x[i + k]);
  }
  for (; i < n; ++i) lanes[0] = Op::step(lanes[0], x[i]);
  typename Op::Acc acc = lanes[0];
  for (int k = 1; k < kLanes; ++k) acc = Op::merge(acc, lanes[k]);
  return Op::finish(acc, n);
}

template <ReduceKind K, typename T>
void run_reduce(const ReducePlan& plan, const T* x, T* y) {
  using Op = ReduceOp<K, T>;
  using Acc = typename Op::Acc;
  const int64_t n = plan.reduced;
  if (plan.in_elements == 0) {  // reducing over a zero-size axis: the empty reduction's value
    for (int64_t o = 0; o < plan.out_elements; ++o) y[o] = Op::finish(Op::init(), 0);
    return;
  }
  switch (plan.form) {
    case ReducePlan::Form::kRows:
      parallel_range(
          plan.outer,
          [&](int64_t begin, int64_t end) {
            for (int64_t o = begin; o < end; ++o) y[o] = reduce_row<Op>(x + o * n, n);
          },
          grain_for(n));
      return;
    case ReducePlan::Form::kColumns: {
      const int64_t inner = plan.inner;
      if (plan.outer == 1) {
        // One [reduced, inner] block (a channels-last global pool): whole rows read in order
        // into per-chunk partial results, chunks of fixed rows (the same sums in the same order
        // every run), merged in chunk order. Column blocks each read a strip of every row
        // instead: 2.8 GB/s for a 256x56x56 pool right after a Conv.
        const int64_t rows_per_chunk =
            std::max({int64_t{1}, kParallelGrain / inner, (n + kMaxRowChunks - 1) / kMaxRowChunks});
        const int64_t chunks = (n + rows_per_chunk - 1) / rows_per_chunk;
        std::vector<Acc> partial(static_cast<size_t>(chunks * inner), Op::init());
        parallel_range(
            chunks,
            [&](int64_t begin, int64_t end) {
              for (int64_t c = begin; c < end; ++c) {
                Acc* acc = partial.data() + c * inner;
                for (int64_t r = c * rows_per_chunk; r < std::min(n, (c + 1) * rows_per_chunk);
                     ++r) {
                  const T* row = x + r * inner;
                  for (int64_t j = 0; j < inner; ++j) acc[j] = Op::step(acc[j], row[j]);
                }
              }
            },
            1);
        for (int64_t j = 0; j < inner; ++j) {
          Acc acc = partial[static_cast<size_t>(j)];
          for (int64_t c = 1; c < chunks; ++c) {
            acc = Op::merge(acc, partial[static_cast<size_t>(c * inner + j)]);
          }
          y[j] = Op::finish(acc, n);
        }
        return;
      }
      const int64_t blocks = (inner + kColumnBlock - 1) / kColumnBlock;
      parallel_range(
          plan.outer * blocks,
          [&](int64_t begin, int64_t end) {
            Acc acc[kColumnBlock];
            for (int64_t t = begin; t < end; ++t) {
              const int64_t o = t / blocks;
              const int64_t j0 = (t % blocks) * kColumnBlock;
              const int64_t cols = std::min(kColumnBlock, inner - j0);
              for (int64_t j = 0; j < cols; ++j) acc[j] = Op::init();
              const T* base = x + o * n * inner + j0;
              for (int64_t r = 0; r < n; ++r) {
                const T* row = base + r * inner;
                for (int64_t j = 0; j < cols; ++j) acc[j] = Op::step(acc[j], row[j]);
              }
              for (int64_t j = 0; j < cols; ++j) y[o * inner + j0 + j] = Op::finish(acc[j], n);
            }
          },
          grain_for(n * kColumnBlock));
      return;
    }
    case ReducePlan::Form::kGeneral: {
      // Per output: its base offset from the kept dims, then an odometer over the reduced dims
      // with the innermost reduced dim as a plain strided loop.
      const size_t nk = plan.kept_sizes.size();
      const size_t nr = plan.red_sizes.size();
      const int64_t last_size = plan.red_sizes[nr - 1];
      const int64_t last_stride = plan.red_strides[nr - 1];
      const int64_t outer_count = n / last_size;
      parallel_range(
          plan.out_elements,
          [&](int64_t begin, int64_t end) {
            std::vector<int64_t> index(nr, 0);
            for (int64_t o = begin; o < end; ++o) {
              int64_t base = 0;
              for (size_t k = nk, rest = static_cast<size_t>(o); k-- > 0;) {
                const auto size = static_cast<size_t>(plan.kept_sizes[k]);
                base += static_cast<int64_t>(rest % size) * plan.kept_strides[k];
                rest /= size;
              }
              Acc acc = Op::init();
              std::fill(index.begin(), index.end(), 0);
              int64_t offset = base;
              for (int64_t r = 0; r < outer_count; ++r) {
                const T* p = x + offset;
                for (int64_t j = 0; j < last_size; ++j) acc = Op::step(acc, p[j * last_stride]);
                for (size_t d = nr - 1; d-- > 0;) {  // advance the odometer, last dim excluded
                  offset += plan.red_strides[d];
                  if (++index[d] < plan.red_sizes[d]) break;
                  offset -= plan.red_sizes[d] * plan.red_strides[d];
                  index[d] = 0;
                }
              }
              y[o] = Op::finish(acc, n);
            }
          },
          grain_for(n));
      return;
    }
  }
}

// Which dims `axes` reduces (ONNX axes in [-rank, rank-1], each once). Empty axes reduce every
// dim, unless noop_with_empty_axes (then each element is reduced alone: Mean gives x, SumSquare
// x^2, L2 |x|, as ONNX's reference does).
Result<std::vector<bool>> reduce_mask(const std::string& context, std::span<const int64_t> axes,
                                      size_t rank, bool noop) {
  std::vector<bool> reduce(rank, axes.empty() && !noop);
  const auto r = static_cast<int64_t>(rank);
  for (int64_t a : axes) {
    if (a < -r || a >= r) {
      return invalid_argument(context + ": 'axes' = " + std::to_string(a) +
                              " is out of range for rank " + std::to_string(rank));
    }
    const auto axis = static_cast<size_t>(a < 0 ? a + r : a);
    if (reduce[axis]) {
      return invalid_argument(context + ": axis " + std::to_string(a) + " appears twice in 'axes'");
    }
    reduce[axis] = true;
  }
  return reduce;
}

// A reduction whose 'axes' input is computed by the graph: its plan is made on every run from
// the axes read then, which must give exactly the output's static shape.
struct RuntimeAxes {
  std::string context;
  std::vector<int64_t> in_dims, out_dims;
  bool keepdims = true;
  bool noop = false;
};

Result<ReducePlan> plan_for_axes(const RuntimeAxes& r, const Tensor& axes) {
  HSCHED_ASSIGN_OR_RETURN(const auto reduce,
                          reduce_mask(r.context, axes.values<int64_t>(), r.in_dims.size(), r.noop));
  std::vector<int64_t> dims;
  for (size_t a = 0; a < r.in_dims.size(); ++a) {
    if (!reduce[a]) {
      dims.push_back(r.in_dims[a]);
    } else if (r.keepdims) {
      dims.push_back(1);
    }
  }
  if (dims != r.out_dims) {
    return invalid_argument(r.context + ": 'axes' read at run time reduce to " + dims_text(dims) +
                            ", not the output's " + dims_text(r.out_dims));
  }
  return make_reduce_plan(r.in_dims, reduce);
}

// The kernel of a reduction: with its plan made at creation, or from its run-time axes.
template <ReduceKind K>
Result<std::unique_ptr<Kernel>> make_reduce_kernel(DType dtype, ReducePlan plan,
                                                   std::optional<RuntimeAxes> runtime = {}) {
  auto kernel = [plan = std::move(plan), runtime = std::move(runtime)]<typename T>(T) {
    return make_kernel(
        [plan, runtime](std::span<const Tensor* const> in, std::span<Tensor* const> out) {
          if (runtime) {
            HSCHED_ASSIGN_OR_RETURN(const ReducePlan run_plan, plan_for_axes(*runtime, *in[1]));
            run_reduce<K, T>(run_plan, in[0]->values<T>().data(), out[0]->values<T>().data());
          } else {
            run_reduce<K, T>(plan, in[0]->values<T>().data(), out[0]->values<T>().data());
          }
          return Status::ok();
        });
  };
  if constexpr (integer_capable(K)) {
    if (dtype == DType::kI64) return kernel(int64_t{});
    if (dtype == DType::kI32) return kernel(int32_t{});
  }
  if (dtype == DType::kF64) return kernel(double{});
  return kernel(float{});
}

// The reduced axes: attribute `axes` (ReduceSum before opset 13, the others before 18) or the
// second input (later opsets). Both forms are accepted at any opset. nullopt: the input is
// computed at run time (an i64 vector of static length, checked here).
Result<std::optional<std::vector<int64_t>>> read_axes(const KernelSpec& spec) {
  const bool from_input = spec.has_input(1);
  if (from_input && spec.node.has_attr("axes")) {
    return invalid_argument(node_context(spec.node) +
                            ": both attribute 'axes' and input 'axes' are given");
  }
  if (!from_input) return std::optional(spec.node.attr_ints("axes"));
  const Value& input = *spec.inputs[1];
  if (input.dtype != DType::kI64) {
    return unsupported(spec, "input 'axes' of dtype " + std::string(dtype_name(input.dtype)) +
                                 " is not supported");
  }
  if (!input.shape.is_static() || input.shape.rank() != 1) {
    return invalid_node(spec, "input 'axes' has shape " + input.shape.to_string() +
                                  "; expected a vector of static length");
  }
  const Tensor* axes = spec.constant(1);
  if (axes == nullptr) return std::optional<std::vector<int64_t>>();
  const auto values = axes->values<int64_t>();
  return std::optional(std::vector<int64_t>(values.begin(), values.end()));
}

KernelFactory reduce_factory(ReduceKind kind) {
  return [kind](const KernelSpec& spec) -> Result<std::unique_ptr<Kernel>> {
    const bool ints = integer_capable(kind);
    HSCHED_RETURN_IF_ERROR(
        ints ? check_input(spec, 0, {DType::kF32, DType::kF64, DType::kI64, DType::kI32}, "data")
             : check_input(spec, 0, {DType::kF32, DType::kF64}, "data"));
    const DType dtype = spec.inputs[0]->dtype;
    const auto& dims = spec.in_dims(0);
    HSCHED_ASSIGN_OR_RETURN(const auto axes, read_axes(spec));
    const bool noop = spec.node.attr_int("noop_with_empty_axes", 0) != 0;
    ReducePlan plan;
    std::optional<RuntimeAxes> runtime;
    if (axes) {
      HSCHED_ASSIGN_OR_RETURN(const auto reduce,
                              reduce_mask(node_context(spec.node), *axes, dims.size(), noop));
      plan = make_reduce_plan(dims, reduce);
      // keepdims changes the output's shape, not its row-major order: only the count matters.
      HSCHED_RETURN_IF_ERROR(check_output(spec, 0, dtype, plan.out_elements, "reduced"));
    } else {
      const Value* out = spec.outputs.empty() ? nullptr : spec.outputs[0];
      if (out == nullptr || out->dtype != dtype || !out->shape.is_static()) {
        return invalid_node(
            spec, "output 'reduced' must be present, static and " + std::string(dtype_name(dtype)));
      }
      runtime = RuntimeAxes{node_context(spec.node), dims, spec.out_dims(0),
                            spec.node.attr_int("keepdims", 1) != 0, noop};
    }
    switch (kind) {
      case ReduceKind::kSum:
        return make_reduce_kernel<ReduceKind::kSum>(dtype, std::move(plan), std::move(runtime));
      case ReduceKind::kMean:
        return make_reduce_kernel<ReduceKind::kMean>(dtype, std::move(plan), std::move(runtime));
      case ReduceKind::kMax:
        return make_reduce_kernel<ReduceKind::kMax>(dtype, std::move(plan), std::move(runtime));
      case ReduceKind::kMin:
        return make_reduce_kernel<ReduceKind::kMin>(dtype, std::move(plan), std::move(runtime));
      case ReduceKind::kProd:
        return make_reduce_kernel<ReduceKind::kProd>(dtype, std::move(plan), std::move(runtime));
      case ReduceKind::kL1:
        return make_reduce_kernel<ReduceKind::kL1>(dtype, std::move(plan), std::move(runtime));
      case ReduceKind::kL2:
        return make_reduce_kernel<ReduceKind::kL2>(dtype, std::move(plan), std::move(runtime));
      case ReduceKind::kSumSquare:
        return make_reduce_kernel<ReduceKind::kSumSquare>(dtype, std::move(plan),
                                                          std::move(runtime));
      case ReduceKind::kLogSum:
        return make_reduce_kernel<ReduceKind::kLogSum>(dtype, std::move(plan), std::move(runtime));
      case ReduceKind::kLogSumExp:
        return make_reduce_kernel<ReduceKind::kLogSumExp>(dtype, std::move(plan),
                                                          std::move(runtime));
    }
    return internal_error(node_context(spec.node) + ": unknown reduction");
  };
}

// GlobalAveragePool / GlobalMaxPool: [N, C, spatial...] -> [N, C, 1...], a row reduction over
// the spatial elements of each channel.
template <ReduceKind K>
Result<std::unique_ptr<Kernel>> make_global_pool(const KernelSpec& spec) {
  HSCHED_RETURN_IF_ERROR(check_input(spec, 0, {DType::kF32}, "X"));
  const auto& dims = spec.in_dims(0);
  if (dims.size() < 3) {
    return invalid_argument(node_context(spec.node) + ": input rank " +
                            std::to_string(dims.size()) + " is below 3 (N, C, spatial...)");
  }
  HSCHED_RETURN_IF_ERROR(check_output(spec, 0, DType::kF32, dims[0] * dims[1], "Y"));
  if (input_channels_last(spec.node, 0)) {  // the program's layout pass: [N, H, W, C] in memory
    if (dims.size() != 4) return invalid_argument(node_context(spec.node) + ": NHWC needs 4-D");
    return make_reduce_kernel<K>(
        DType::kF32, make_reduce_plan(channels_last_dims(dims), {false, true, true, false}));
  }
  ReducePlan plan;
  plan.outer = dims[0] * dims[1];
  plan.reduced = reduction::product(dims, 2, dims.size());
  plan.in_elements = plan.outer * plan.reduced;
  plan.out_elements = plan.outer;
  return make_reduce_kernel<K>(DType::kF32, std::move(plan));
}

// ArgMax/ArgMin along one axis of [outer, n, inner]; ties go to the first index, or the last
// with select_last_index.
template <bool kMax, typename T>
void run_arg(const reduction::AxisLayout& l, bool last, const T* x, int64_t* y) {
  const auto better = [last](T v, T best) {
    if constexpr (kMax) {
      return last ? v >= best : v > best;
    } else {
      return last ? v <= best : v < best;
    }
  };
  if (l.inner == 1) {
    parallel_range(
        l.outer,
        [&](int64_t begin, int64_t end) {
          for (int64_t o = begin; o < end; ++o) {
            const T* row = x + o * l.n;
            int64_t best_at = 0;
            for (int64_t i = 1; i < l.n; ++i) {
              if (better(row[i], row[best_at])) best_at = i;
            }
            y[o] = best_at;
          }
        },
        grain_for(l.n));
    return;
  }
  const int64_t blocks = (l.inner + kColumnBlock - 1) / kColumnBlock;
  parallel_range(
      l.outer * blocks,
      [&](int64_t begin, int64_t end) {
        T best[kColumnBlock];
        int64_t best_at[kColumnBlock];
        for (int64_t t = begin; t < end; ++t) {
          const int64_t o = t / blocks;
          const int64_t j0 = (t % blocks) * kColumnBlock;
          const int64_t cols = std::min(kColumnBlock, l.inner - j0);
          const T* base = x + o * l.n * l.inner + j0;
          for (int64_t j = 0; j < cols; ++j) {
            best[j] = base[j];
            best_at[j] = 0;
          }
          for (int64_t r = 1; r < l.n; ++r) {
            const T* row = base + r * l.inner;
            for (int64_t j = 0; j < cols; ++j) {
              if (better(row[j], best[j])) {
                best[j] = row[j];
                best_at[j] = r;
              }
            }
          }
          std::copy(best_at, best_at + cols, y + o * l.inner + j0);
        }
      },
      grain_for(l.n * kColumnBlock));
}

template <bool kMax>
Result<std::unique_ptr<Kernel>> make_arg_kernel(const KernelSpec& spec) {
  HSCHED_RETURN_IF_ERROR(check_input(spec, 0, {DType::kF32, DType::kI64, DType::kI32}, "data"));
  const auto& dims = spec.in_dims(0);
  HSCHED_ASSIGN_OR_RETURN(const size_t axis, reduction::normalize_axis(
                                                 spec, spec.node.attr_int("axis", 0), dims.size()));
  const auto layout = reduction::axis_layout(dims, axis);
  if (layout.n == 0 && layout.outer * layout.inner > 0) {
    return invalid_argument(node_context(spec.node) + ": cannot take the arg" +
                            (kMax ? "max" : "min") + " of the zero-size axis " +
                            std::to_string(axis));
  }
  HSCHED_RETURN_IF_ERROR(
      check_output(spec, 0, DType::kI64, layout.outer * layout.inner, "reduced"));
  const bool last = spec.node.attr_int("select_last_index", 0) != 0;
  const auto kernel = [&]<typename T>(T) {
    return make_kernel([layout, last](std::span<const Tensor* const> in,
                                      std::span<Tensor* const> out) {
      run_arg<kMax, T>(layout, last, in[0]->values<T>().data(), out[0]->values<int64_t>().data());
      return Status::ok();
    });
  };
  switch (spec.inputs[0]->dtype) {
    case DType::kI64:
      return kernel(int64_t{});
    case DType::kI32:
      return kernel(int32_t{});
    default:
      return kernel(float{});
  }
}

}  // namespace

void register_reduction_kernels(KernelRegistry& registry) {
  registry.add("ReduceSum", reduce_factory(ReduceKind::kSum));
  registry.add("ReduceMean", reduce_factory(ReduceKind::kMean));
  registry.add("ReduceMax", reduce_factory(ReduceKind::kMax));
  registry.add("ReduceMin", reduce_factory(ReduceKind::kMin));
  registry.add("ReduceProd", reduce_factory(ReduceKind::kProd));
  registry.add("ReduceL1", reduce_factory(ReduceKind::kL1));
  registry.add("ReduceL2", reduce_factory(ReduceKind::kL2));
  registry.add("ReduceSumSquare", reduce_factory(ReduceKind::kSumSquare));
  registry.add("ReduceLogSum", reduce_factory(ReduceKind::kLogSum));
  registry.add("ReduceLogSumExp", reduce_factory(ReduceKind::kLogSumExp));
  registry.add("ArgMax", make_arg_kernel<true>);
  registry.add("ArgMin", make_arg_kernel<false>);
  registry.add("GlobalAveragePool", make_global_pool<ReduceKind::kMean>);
  registry.add("GlobalMaxPool", make_global_pool<ReduceKind::kMax>);
  register_normalization_kernels(registry);
}

}  // namespace hsched::cpu
