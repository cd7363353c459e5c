// Pad: modes constant, reflect, edge and wrap; pads and value from attributes (opset < 11) or
// inputs (>= 11, constant or runtime), optional `axes` input (opset 18). Negative pads crop.
#include <numeric>
#include <optional>

#include "backends/cpu/kernels/layout_util.h"

namespace hsched::cpu {
namespace {

using KernelResult = Result<std::unique_ptr<Kernel>>;

enum class PadMode { kConstant, kReflect, kEdge, kWrap };

// Per axis, the input index each output index reads, or -1 for the pad value. Computed once per
// set of pads: the copy loops then need no mode logic.
struct PadPlan {
  std::vector<std::vector<int64_t>> source;  // [axis][output index]
  std::vector<int64_t> out_dims;
  std::vector<int64_t> strides;  // input bytes per step along each axis
  int64_t elem = 0;              // bytes per element after folding unpadded trailing axes
};

int64_t source_index(int64_t i, int64_t d, PadMode mode) {
  if (i >= 0 && i < d) return i;
  switch (mode) {
    case PadMode::kConstant:
      return -1;
    case PadMode::kEdge:
      return i < 0 ? 0 : d - 1;
    case PadMode::kWrap:
      return ((i % d) + d) % d;
    case PadMode::kReflect: {
      if (d == 1) return 0;
      const int64_t period = 2 * (d - 1);  // reflect without repeating the edge
      int64_t r = ((i % period) + period) % period;
      return r < d ? r : period - r;
    }
  }
  return -1;
}

class PadKernel final : public Kernel {
 public:
  static KernelResult create(const KernelSpec& spec) {
    HSCHED_RETURN_IF_ERROR(check_static_shapes(spec));
    auto k = std::make_unique<PadKernel>();
    k->context_ = node_context(spec.node);
    k->in_dims_ = spec.in_dims(0);
    k->out_dims_ = spec.out_dims(0);
    k->dtype_ = spec.inputs[0]->dtype;
    const std::string mode = spec.node.attr_string("mode", "constant");
    if (mode == "constant")
      k->mode_ = PadMode::kConstant;
    else if (mode == "reflect")
      k->mode_ = PadMode::kReflect;
    else if (mode == "edge")
      k->mode_ = PadMode::kEdge;
    else if (mode == "wrap")
      k->mode_ = PadMode::kWrap;
    else
      return unsupported(spec, "mode '" + mode + "'");
    k->value_.resize(dtype_size(k->dtype_));
    if (spec.opset < 11) {
      encode_scalar(spec.node.attr_float("value", 0.0f), k->dtype_, k->value_.data());
      std::vector<int64_t> pads = spec.node.attr_ints(spec.opset < 2 ? "paddings" : "pads");
      HSCHED_ASSIGN_OR_RETURN(k->plan_, k->make_plan(pads, std::nullopt));
      return std::unique_ptr<Kernel>(std::move(k));
    }
    if (!spec.has_input(1)) return invalid_node(spec, "needs pads");
    if (spec.has_input(3)) {
      if (spec.constant(3) == nullptr) return unsupported(spec, "a runtime `axes` input");
      HSCHED_ASSIGN_OR_RETURN(k->axes_, read_ints(*spec.constant(3), k->context_ + ": axes"));
    }
    if (spec.has_input(2) && spec.inputs[2]->dtype != k->dtype_) {
      return invalid_node(spec, "constant_value has another dtype than data");
    }
    k->runtime_value_ = spec.has_input(2) && spec.constant(2) == nullptr;
    if (spec.constant(2) != nullptr && spec.constant(2)->elements() > 0) {
      std::memcpy(k->value_.data(), spec.constant(2)->raw(), k->value_.size());
    }
    if (spec.constant(1) != nullptr) {
      HSCHED_ASSIGN_OR_RETURN(auto pads, read_ints(*spec.constant(1), k->context_ + ": pads"));
      HSCHED_ASSIGN_OR_RETURN(k->plan_, k->make_plan(pads, k->axes_));
    }
    return std::unique_ptr<Kernel>(std::move(k));
  }

  Status run(std::span<const Tensor* const> in, std::span<Tensor* const> out) override {
    std::vector<std::byte> value = value_;
    if (runtime_value_ && in.size() > 2 && in[2] != nullptr && in[2]->elements() > 0) {
      std::memcpy(value.data(), in[2]->raw(), value.size());
    }
    if (plan_) {
      pad(*plan_, value.data(), in[0]->raw(), out[0]->raw());
      return Status::ok();
    }
    HSCHED_ASSIGN_OR_RETURN(auto pads, read_ints(*in[1], context_ + ": pads"));
    HSCHED_ASSIGN_OR_RETURN(const PadPlan plan, make_plan(pads, axes_));
    pad(plan, value.data(), in[0]->raw(), out[0]->raw());
    return Status::ok();
  }

 private:
  Result<PadPlan> make_plan(const std::vector<int64_t>& pads,
                            const std::optional<std::vector<int64_t>>& axes) const {
    const size_t rank = in_dims_.size();
    const auto r = static_cast<int64_t>(rank);
    std::vector<int64_t> begin(rank, 0), end(rank, 0);
    std::vector<int64_t> axis_list(rank);
    std::iota(axis_list.begin(), axis_list.end(), 0);
    if (axes) axis_list = *axes;
    const size_t n = axis_list.size();
    if (pads.size() != 2 * n) {
      return invalid_argument(context_ + ": pads has " + std::to_string(pads.size()) +
                              " values, expected " + std::to_string(2 * n));
    }
    for (size_t i = 0; i < n; ++i) {
      int64_t a = axis_list[i];
      if (a < -r || a >= r) return invalid_argument(context_ + ": axis out of range");
      if (a < 0) a += r;
      begin[static_cast<size_t>(a)] = pads[i];
      end[static_cast<size_t>(a)] = pads[i + n];
    }
    PadPlan plan;
    plan.elem = static_cast<int64_t>(dtype_size(dtype_));
    std::vector<int64_t> strides = row_major_strides(in_dims_);
    for (size_t a = 0; a < rank; ++a) {
      const int64_t d = in_dims_[a];
      int64_t o = 0;
      // A pad removes at most what the axis holds and adds at most kMaxDim, so that every
      // source index below (i - begin) stays in range.
      if (begin[a] < -d || end[a] < -d || begin[a] > kMaxDim || end[a] > kMaxDim) {
        return invalid_argument(context_ + ": pads " + std::to_string(begin[a]) + ", " +
                                std::to_string(end[a]) + " do not fit axis " + std::to_string(a) +
                                " of size " + std::to_string(d));
      }
      if (__builtin_add_overflow(d, begin[a], &o) || __builtin_add_overflow(o, end[a], &o) ||
          o != out_dims_[a]) {
        return invalid_argument(context_ + ": pads give shape mismatching the output " +
                                Shape(out_dims_).to_string());
      }
      if (d == 0 && o > 0 && mode_ != PadMode::kConstant) {
        return invalid_argument(context_ + ": cannot pad an empty axis in a non-constant mode");
      }
      std::vector<int64_t> source(static_cast<size_t>(o));
      for (int64_t i = 0; i < o; ++i)
        source[static_cast<size_t>(i)] = source_index(i - begin[a], d, mode_);
      plan.source.push_back(std::move(source));
      plan.out_dims.push_back(o);
      plan.strides.push_back(strides[a] * plan.elem);
    }
    // Trailing axes without padding are copied whole with the axis before them.
    while (plan.out_dims.size() > 1 && begin[plan.out_dims.size() - 1] == 0 &&
           end[plan.out_dims.size() - 1] == 0) {
      plan.elem *= plan.out_dims.back();
      plan.out_dims.pop_back();
      plan.source.pop_back();
      plan.strides.pop_back();
    }
    return plan;
  }

  // Row by row over the innermost (padded) axis; rows whose outer coordinates fall in the pad are
  // all value; other rows copy their one contiguous run and fill or map the edges.
  void pad(const PadPlan& p, const std::byte* value, const std::byte* in, std::byte* out) const {
    const size_t elem0 = dtype_size(dtype_);
    const int64_t total =
        std::accumulate(p.out_dims.begin(), p.out_dims.end(), int64_t{1}, std::multiplies<>());
    if (total == 0) return;
    if (p.out_dims.empty()) {
      std::memcpy(out, in, static_cast<size_t>(p.elem));
      return;
    }
    const size_t last = p.out_dims.size() - 1;
    const int64_t row_len = p.out_dims[last];
    const int64_t row_bytes = row_len * p.elem;
    const int64_t per_elem = p.elem / static_cast<int64_t>(elem0);
    const auto& src_last = p.source[last];
    // The longest run of the innermost axis that reads consecutive input elements: one memcpy.
    int64_t run_begin = 0;
    int64_t run_len = 0;
    for (int64_t i = 0; i < row_len; ++i) {
      int64_t j = i;
      const int64_t first = src_last[static_cast<size_t>(i)];
      if (first < 0) continue;
      while (j + 1 < row_len && src_last[static_cast<size_t>(j + 1)] == first + (j + 1 - i)) ++j;
      if (j - i + 1 > run_len) {
        run_begin = i;
        run_len = j - i + 1;
      }
      i = j;
    }
    parallel_range(
        total / row_len,
        [&](int64_t begin, int64_t end) {
          for (int64_t r = begin; r < end; ++r) {
            std::byte* dst = out + r * row_bytes;
            int64_t offset = 0;
            bool in_pad = false;
            int64_t rest = r;
            for (size_t a = last; a-- > 0;) {
              const int64_t s = p.source[a][static_cast<size_t>(rest % p.out_dims[a])];
              rest /= p.out_dims[a];
              if (s < 0) in_pad = true;
              offset += s * p.strides[a];
            }
            if (in_pad) {
              fill_elements(dst, value, elem0, row_len * per_elem);
              continue;
            }
            const std::byte* src = in + offset;
            for (int64_t i = 0; i < row_len; ++i) {
              if (i == run_begin && run_len > 0) {
                std::memcpy(dst + i * p.elem, src + src_last[static_cast<size_t>(i)] * p.elem,
                            static_cast<size_t>(run_len * p.elem));
                i += run_len - 1;
                continue;
              }
              const int64_t s = src_last[static_cast<size_t>(i)];
              if (s < 0) {
                fill_elements(dst + i * p.elem, value, elem0, per_elem);
              } else {
                std::memcpy(dst + i * p.elem, src + s * p.elem, static_cast<size_t>(p.elem));
              }
            }
          }
        },
        std::max<int64_t>(1, kCopyGrainBytes / std::max<int64_t>(row_bytes, 1)));
  }

  std::string context_;
  std::vector<int64_t> in_dims_, out_dims_;
  DType dtype_ = DType::kUndefined;
  PadMode mode_ = PadMode::kConstant;
  std::vector<std::byte> value_;  // one element of the pad value
  bool runtime_value_ = false;
  std::optional<std::vector<int64_t>> axes_;
  std::optional<PadPlan> plan_;
};

}  // namespace

void register_pad_kernels(KernelRegistry& registry) { registry.add("Pad", PadKernel::create); }

}  // namespace hsched::cpu
