// Data-movement kernels: Reshape, Flatten, Squeeze, Unsqueeze, Transpose, Concat, Split, Slice,
// Expand, Tile, DepthToSpace, SpaceToDepth. Shapes are static when a kernel is created, so each
// factory reduces its op to a StridedView (or a list of row copies) once; run() only moves bytes.
// Gather*, Pad and Resize live in their own files (layout_util.h lists them).
#include <algorithm>
#include <limits>
#include <numeric>
#include <optional>
#include <set>

#include "backends/cpu/kernels/layout_util.h"
#include "backends/cpu/kernels/post_ops.h"
#include "graph/slice_semantics.h"

namespace hsched::cpu {
namespace {

using KernelResult = Result<std::unique_ptr<Kernel>>;

int64_t elem_bytes(const KernelSpec& spec) {
  return static_cast<int64_t>(dtype_size(spec.inputs[0]->dtype));
}

KernelResult view_kernel(const StridedView& view) {
  return make_kernel(
      [view = view.simplified()](std::span<const Tensor* const> in, std::span<Tensor* const> out) {
        copy_strided(view, in[0]->raw(), out[0]->raw());
        return Status::ok();
      });
}

// Reshape, Flatten, Squeeze, Unsqueeze: the bytes are already in order; the output shape was
// fixed by shape inference, so the shape/axes inputs are not read again.
KernelResult make_copy(const KernelSpec& spec) {
  HSCHED_RETURN_IF_ERROR(check_static_shapes(spec));
  const int64_t in_n = spec.inputs[0]->shape.elements();
  const int64_t out_n = spec.outputs[0]->shape.elements();
  if (in_n != out_n) {
    return invalid_node(spec, "input has " + std::to_string(in_n) + " elements, output " +
                                  spec.outputs[0]->shape.to_string());
  }
  const auto bytes = static_cast<size_t>(in_n) * dtype_size(spec.inputs[0]->dtype);
  return make_kernel([bytes](std::span<const Tensor* const> in, std::span<Tensor* const> out) {
    if (bytes != 0) parallel_copy(out[0]->raw(), in[0]->raw(), bytes);
    return Status::ok();
  });
}

KernelResult make_transpose(const KernelSpec& spec) {
  HSCHED_RETURN_IF_ERROR(check_static_shapes(spec));
  const auto& dims = spec.in_dims(0);
  std::vector<int64_t> perm = spec.node.attr_ints("perm");
  if (!spec.node.has_attr("perm")) {
    perm.resize(dims.size());
    std::iota(perm.rbegin(), perm.rend(), 0);
  }
  std::vector<bool> seen(dims.size(), false);
  if (perm.size() != dims.size()) {
    return invalid_node(spec, "perm has " + std::to_string(perm.size()) + " entries for rank " +
                                  std::to_string(dims.size()));
  }
  for (int64_t& p : perm) {
    HSCHED_ASSIGN_OR_RETURN(p, normalize_axis(spec, p, dims.size()));
    if (seen[static_cast<size_t>(p)]) return invalid_node(spec, "perm repeats an axis");
    seen[static_cast<size_t>(p)] = true;
  }
  StridedView view = transpose_view(dims, perm, elem_bytes(spec));
  if (view.dims != spec.out_dims(0)) {
    return invalid_node(
        spec, "output shape " + spec.outputs[0]->shape.to_string() + " does not match perm");
  }
  return view_kernel(view);
}

// Channels-last (the program keeps every input and the output NHWC, see program.cpp), the
// physical [N, H, W, C] arrays are concatenated instead, along the axis where the logical one lies.
KernelResult make_concat(const KernelSpec& spec) {
  HSCHED_RETURN_IF_ERROR(check_static_shapes(spec));
  const bool channels_last = output_channels_last(spec.node, 0);
  if (channels_last && spec.out_dims(0).size() != 4) return invalid_node(spec, "NHWC needs 4-D");
  const auto physical = [&](const std::vector<int64_t>& d) {
    return channels_last ? channels_last_dims(d) : d;
  };
  const std::vector<int64_t> out_dims = physical(spec.out_dims(0));
  HSCHED_ASSIGN_OR_RETURN(int64_t axis,
                          normalize_axis(spec, spec.node.attr_int("axis", 0), out_dims.size()));
  if (channels_last) axis = channels_last_axis(axis);
  const auto a = static_cast<size_t>(axis);
  const int64_t elem = elem_bytes(spec);
  const int64_t outer =
      std::accumulate(out_dims.begin(), out_dims.begin() + axis, int64_t{1}, std::multiplies<>());
  const int64_t inner =
      std::accumulate(out_dims.begin() + axis + 1, out_dims.end(), int64_t{1}, std::multiplies<>());
  std::vector<int64_t> row_bytes;  // per input: bytes it contributes to each outer row
  int64_t total = 0;
  for (size_t i = 0; i < spec.inputs.size(); ++i) {
    if (spec.inputs[i] == nullptr)
      return invalid_node(spec, "input " + std::to_string(i) + " is omitted");
    if (input_channels_last(spec.node, i) != channels_last) {
      return invalid_node(spec, "inputs and output in different layouts");
    }
    const std::vector<int64_t> d = physical(spec.in_dims(i));
    bool fits = d.size() == out_dims.size() &&
                dtype_size(spec.inputs[i]->dtype) == dtype_size(spec.inputs[0]->dtype);
    for (size_t k = 0; fits && k < d.size(); ++k) fits = k == a || d[k] == out_dims[k];
    if (!fits) {
      return invalid_node(spec, "input " + std::to_string(i) + " of shape " +
                                    spec.inputs[i]->shape.to_string() + " does not fit output " +
                                    spec.outputs[0]->shape.to_string());
    }
    row_bytes.push_back(d[a] * inner * elem);
    total += d[a];
  }
  if (total != out_dims[a]) return invalid_node(spec, "inputs do not add up to the output");
  const int64_t out_row = total * inner * elem;
  return make_kernel([=](std::span<const Tensor* const> in, std::span<Tensor* const> out) {
    std::byte* dst = out[0]->raw();
    if (outer == 1) {  // one contiguous block per input: split each block instead of rows
      for (size_t i = 0; i < in.size(); ++i) {
        if (row_bytes[i] != 0) parallel_copy(dst, in[i]->raw(), static_cast<size_t>(row_bytes[i]));
        dst += row_bytes[i];
      }
      return Status::ok();
    }
    parallel_range(
        outer,
        [&](int64_t begin, int64_t end) {
          for (int64_t o = begin; o < end; ++o) {
            std::byte* row = dst + o * out_row;
            for (size_t i = 0; i < in.size(); ++i) {
              std::memcpy(row, in[i]->raw() + o * row_bytes[i], static_cast<size_t>(row_bytes[i]));
              row += row_bytes[i];
            }
          }
        },
        std::max<int64_t>(1, kCopyGrainBytes / std::max<int64_t>(out_row, 1)));
    return Status::ok();
  });
}

// Split sizes: the `split` attribute (opset < 13) or constant input (>= 13); else the present
// outputs' static shapes say them (returns empty); else equal parts, the last one smaller when
// the axis does not divide (as opset 18's num_outputs says).
Result<std::vector<int64_t>> split_sizes(const KernelSpec& spec, int64_t extent) {
  const size_t n = spec.outputs.size();
  const bool all_present =
      std::all_of(spec.outputs.begin(), spec.outputs.end(), [](const Value* v) { return v; });
  if (spec.opset < 13 && spec.node.has_attr("split")) return spec.node.attr_ints("split");
  if (spec.opset >= 13 && spec.constant(1) != nullptr) {
    return read_ints(*spec.constant(1), node_context(spec.node) + ": split");
  }
  if (all_present) return std::vector<int64_t>{};
  if (spec.opset >= 13 && spec.has_input(1)) {
    return unsupported(spec, "a runtime `split` input with an omitted output");
  }
  std::vector<int64_t> sizes;
  const auto parts = static_cast<int64_t>(n);
  const int64_t part = (extent + parts - 1) / parts;
  for (int64_t i = 0; i < parts; ++i)
    sizes.push_back(std::clamp<int64_t>(extent - part * i, 0, part));
  return sizes;
}

KernelResult make_split(const KernelSpec& spec) {
  HSCHED_RETURN_IF_ERROR(check_static_shapes(spec));
  const auto& in_dims = spec.in_dims(0);
  HSCHED_ASSIGN_OR_RETURN(const int64_t axis,
                          normalize_axis(spec, spec.node.attr_int("axis", 0), in_dims.size()));
  const auto a = static_cast<size_t>(axis);
  HSCHED_ASSIGN_OR_RETURN(std::vector<int64_t> sizes, split_sizes(spec, in_dims[a]));
  if (sizes.empty()) {
    for (size_t i = 0; i < spec.outputs.size(); ++i) {
      if (spec.out_dims(i).size() != in_dims.size())
        return invalid_node(spec, "output rank differs");
      sizes.push_back(spec.out_dims(i)[a]);
    }
  }
  if (sizes.size() != spec.outputs.size()) {
    return invalid_node(spec, "split has " + std::to_string(sizes.size()) + " entries for " +
                                  std::to_string(spec.outputs.size()) + " outputs");
  }
  // Every size must be >= 0 and they must add up to the axis (checked before any view is made):
  // a negative entry would let another one reach past the input while the sum still matches.
  int64_t total = 0;
  for (int64_t size : sizes) {
    if (size < 0 || size > in_dims[a] - total) {
      return invalid_node(spec, "split sizes must be >= 0 and add up to the axis length " +
                                    std::to_string(in_dims[a]));
    }
    total += size;
  }
  if (total != in_dims[a]) return invalid_node(spec, "split sizes do not add up to the axis");
  for (size_t i = 1; i < spec.outputs.size(); ++i) {
    if (spec.outputs[i] != nullptr &&
        dtype_size(spec.outputs[i]->dtype) != dtype_size(spec.inputs[0]->dtype)) {
      return invalid_node(spec, "output " + std::to_string(i) + " dtype " +
                                    std::string(dtype_name(spec.outputs[i]->dtype)) +
                                    " differs from input dtype " +
                                    std::string(dtype_name(spec.inputs[0]->dtype)));
    }
  }
  const int64_t elem = elem_bytes(spec);
  const auto strides = row_major_strides(in_dims);
  std::vector<std::optional<StridedView>> views;
  int64_t start = 0;
  for (size_t i = 0; i < sizes.size(); ++i) {
    std::vector<int64_t> dims = in_dims;
    dims[a] = sizes[i];
    if (spec.outputs[i] != nullptr && spec.out_dims(i) != dims) {
      return invalid_node(spec, "output " + std::to_string(i) + " has shape " +
                                    spec.outputs[i]->shape.to_string() + ", split gives " +
                                    Shape(dims).to_string());
    }
    if (spec.outputs[i] == nullptr) {
      views.emplace_back();
    } else {
      StridedView view{dims, {}, start * strides[a] * elem, elem};
      for (int64_t s : strides) view.strides.push_back(s * elem);
      views.push_back(view.simplified());
    }
    start += sizes[i];
  }
  return make_kernel([views](std::span<const Tensor* const> in, std::span<Tensor* const> out) {
    for (size_t i = 0; i < views.size(); ++i) {
      if (views[i] && out[i] != nullptr) copy_strided(*views[i], in[0]->raw(), out[i]->raw());
    }
    return Status::ok();
  });
}

// A Slice as a strided view of its input (the clamping of graph/slice_semantics.h).
Result<StridedView> slice_view(const std::string& context, const std::vector<int64_t>& in_dims,
                               const std::vector<int64_t>& out_dims, int64_t elem,
                               const std::vector<int64_t>& starts, const std::vector<int64_t>& ends,
                               std::optional<std::vector<int64_t>> axes,
                               std::optional<std::vector<int64_t>> steps) {
  auto sliced = slice_axes(in_dims, starts, ends, std::move(axes), std::move(steps));
  if (!sliced.is_ok()) return invalid_argument(context + ": " + sliced.status().message());
  const auto in_strides = row_major_strides(in_dims);
  StridedView view{in_dims, {}, 0, elem};
  for (size_t a = 0; a < in_dims.size(); ++a) {
    const SliceAxis& s = (*sliced)[a];
    view.dims[a] = s.count;
    if (s.count > 0) view.offset += s.begin * in_strides[a] * elem;
    view.strides.push_back(in_strides[a] * elem * s.step);
  }
  if (view.dims != out_dims) {
    return invalid_argument(context + ": slice gives shape " + Shape(view.dims).to_string() +
                            ", output is " + Shape(out_dims).to_string());
  }
  return view;
}

// Slice parameters come from attributes (opset < 10) or inputs 1-4, which may be runtime
// tensors (then the view is rebuilt on each run: a few small vectors).
class SliceKernel final : public Kernel {
 public:
  static KernelResult create(const KernelSpec& spec) {
    HSCHED_RETURN_IF_ERROR(check_static_shapes(spec));
    auto kernel = std::make_unique<SliceKernel>();
    kernel->context_ = node_context(spec.node);
    kernel->in_dims_ = spec.in_dims(0);
    kernel->out_dims_ = spec.out_dims(0);
    kernel->elem_ = elem_bytes(spec);
    if (spec.opset < 10) {
      std::optional<std::vector<int64_t>> axes;
      if (spec.node.has_attr("axes")) axes = spec.node.attr_ints("axes");
      HSCHED_ASSIGN_OR_RETURN(kernel->view_, kernel->plan(spec.node.attr_ints("starts"),
                                                          spec.node.attr_ints("ends"), axes, {}));
      return std::unique_ptr<Kernel>(std::move(kernel));
    }
    if (!spec.has_input(1) || !spec.has_input(2))
      return invalid_node(spec, "needs starts and ends");
    std::vector<const Tensor*> params;
    for (size_t i = 1; i < 5; ++i) {
      if (!spec.has_input(i)) {
        params.push_back(nullptr);
      } else if (spec.constant(i) != nullptr) {
        params.push_back(spec.constant(i));
      } else {
        return std::unique_ptr<Kernel>(std::move(kernel));  // planned on each run
      }
    }
    HSCHED_ASSIGN_OR_RETURN(kernel->view_, kernel->plan_from(params));
    return std::unique_ptr<Kernel>(std::move(kernel));
  }

  Status run(std::span<const Tensor* const> inputs, std::span<Tensor* const> outputs) override {
    if (view_) {
      copy_strided(*view_, inputs[0]->raw(), outputs[0]->raw());
      return Status::ok();
    }
    std::vector<const Tensor*> params;
    for (size_t i = 1; i < 5; ++i) params.push_back(i < inputs.size() ? inputs[i] : nullptr);
    HSCHED_ASSIGN_OR_RETURN(const StridedView view, plan_from(params));
    copy_strided(view, inputs[0]->raw(), outputs[0]->raw());
    return Status::ok();
  }

 private:
  Result<StridedView> plan(const std::vector<int64_t>& starts, const std::vector<int64_t>& ends,
                           std::optional<std::vector<int64_t>> axes,
                           std::optional<std::vector<int64_t>> steps) const {
    HSCHED_ASSIGN_OR_RETURN(StridedView view, slice_view(context_, in_dims_, out_dims_, elem_,
                                                         starts, ends, axes, steps));
    return view.simplified();
  }

  // params: starts, ends, axes, steps (the last two may be null).
  Result<StridedView> plan_from(const std::vector<const Tensor*>& params) const {
    std::vector<int64_t> v[4];
    for (size_t i = 0; i < 4; ++i) {
      if (params[i] == nullptr) continue;
      HSCHED_ASSIGN_OR_RETURN(
          v[i], read_ints(*params[i], context_ + ": Slice input " + std::to_string(i + 1)));
    }
    std::optional<std::vector<int64_t>> axes, steps;
    if (params[2] != nullptr) axes = v[2];
    if (params[3] != nullptr) steps = v[3];
    return plan(v[0], v[1], axes, steps);
  }

  std::string context_;
  std::vector<int64_t> in_dims_, out_dims_;
  int64_t elem_ = 0;
  std::optional<StridedView> view_;
};

KernelResult make_expand(const KernelSpec& spec) {
  HSCHED_RETURN_IF_ERROR(check_static_shapes(spec));
  const auto& in_dims = spec.in_dims(0);
  const auto& out_dims = spec.out_dims(0);
  bool fits = in_dims.size() <= out_dims.size();
  for (size_t k = 0; fits && k < in_dims.size(); ++k) {
    const int64_t d = in_dims[in_dims.size() - 1 - k];
    fits = d == 1 || d == out_dims[out_dims.size() - 1 - k];
  }
  if (!fits) {
    return invalid_node(spec, "input " + spec.inputs[0]->shape.to_string() +
                                  " does not broadcast to " + spec.outputs[0]->shape.to_string());
  }
  const int64_t elem = elem_bytes(spec);
  StridedView view{out_dims, broadcast_strides(in_dims, out_dims), 0, elem};
  for (int64_t& s : view.strides) s *= elem;
  return view_kernel(view);
}

// Tile is a broadcast: output dims [r0*d0, r1*d1, ...] read row-major as [r0, d0, r1, d1, ...]
// with stride 0 along each r_k. The repeats follow from the static shapes.
KernelResult make_tile(const KernelSpec& spec) {
  HSCHED_RETURN_IF_ERROR(check_static_shapes(spec));
  const auto& in_dims = spec.in_dims(0);
  const auto& out_dims = spec.out_dims(0);
  if (in_dims.size() != out_dims.size())
    return invalid_node(spec, "output rank differs from input rank");
  const int64_t elem = elem_bytes(spec);
  const auto in_strides = row_major_strides(in_dims);
  StridedView view{{}, {}, 0, elem};
  for (size_t k = 0; k < in_dims.size(); ++k) {
    const int64_t repeats = in_dims[k] == 0 ? 0 : out_dims[k] / in_dims[k];
    if (in_dims[k] == 0 ? out_dims[k] != 0 : repeats * in_dims[k] != out_dims[k]) {
      return invalid_node(spec, "output " + spec.outputs[0]->shape.to_string() +
                                    " is not a tiling of " + spec.inputs[0]->shape.to_string());
    }
    view.dims.insert(view.dims.end(), {repeats, in_dims[k]});
    view.strides.insert(view.strides.end(), {0, in_strides[k] * elem});
  }
  return view_kernel(view);
}

// DepthToSpace (DCR/CRD) and SpaceToDepth are reshapes around a 6-D transpose.
KernelResult make_depth_space(const KernelSpec& spec, bool to_space) {
  HSCHED_RETURN_IF_ERROR(check_static_shapes(spec));
  const auto& d = spec.in_dims(0);
  const int64_t b = spec.node.attr_int("blocksize", 0);
  if (d.size() != 4 || b <= 0) return invalid_node(spec, "needs a 4-D input and blocksize > 0");
  const int64_t n = d[0], c = d[1], h = d[2], w = d[3];
  std::vector<int64_t> dims6, perm, expected;
  // b is bounded by the dims it divides before b * b is formed (a huge blocksize would overflow).
  if (to_space) {
    if (c / b < b || c % (b * b) != 0) {
      return invalid_node(spec, "channels " + std::to_string(c) + " do not divide by blocksize^2");
    }
    expected = {n, c / (b * b), h * b, w * b};
    if (spec.node.attr_string("mode", "DCR") == "CRD") {
      dims6 = {n, c / (b * b), b, b, h, w};
      perm = {0, 1, 4, 2, 5, 3};
    } else {
      dims6 = {n, b, b, c / (b * b), h, w};
      perm = {0, 3, 4, 1, 5, 2};
    }
  } else {
    if (b > h || b > w || h % b != 0 || w % b != 0)
      return invalid_node(spec, "height or width do not divide by blocksize");
    expected = {n, c * b * b, h / b, w / b};
    dims6 = {n, c, h / b, b, w / b, b};
    perm = {0, 3, 5, 1, 2, 4};
  }
  const StridedView view = transpose_view(dims6, perm, elem_bytes(spec));
  if (spec.out_dims(0) != expected) {
    return invalid_node(spec, "output shape " + spec.outputs[0]->shape.to_string() + " should be " +
                                  Shape(expected).to_string());
  }
  return view_kernel(view);
}

}  // namespace

void register_layout_kernels(KernelRegistry& registry) {
  for (const char* op : {"Reshape", "Flatten", "Squeeze", "Unsqueeze"}) registry.add(op, make_copy);
  registry.add("Transpose", make_transpose);
  registry.add("Concat", make_concat);
  registry.add("Split", make_split);
  registry.add("Slice", SliceKernel::create);
  registry.add("Expand", make_expand);
  registry.add("Tile", make_tile);
  registry.add("DepthToSpace", [](const KernelSpec& s) { return make_depth_space(s, true); });
  registry.add("SpaceToDepth", [](const KernelSpec& s) { return make_depth_space(s, false); });
  register_gather_kernels(registry);
  register_pad_kernels(registry);
  register_resize_kernels(registry);
}

}  // namespace hsched::cpu
