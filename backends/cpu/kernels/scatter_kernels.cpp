// Scatter kernels: ScatterND, ScatterElements and Scatter (opset 9-10 ScatterElements without
// reduction). The output starts as a copy of data; updates land in the order of the indices, on
// one thread, since with duplicate indices the result depends on that order. Shapes and
// attributes are checked when the kernel is created, every index on every run before anything is
// written. Reductions compute in the element's own type (f16/bf16 through float; integers wrap).
#include <algorithm>
#include <type_traits>

#include "backends/cpu/kernels/elementwise.h"
#include "backends/cpu/kernels/index_util.h"

namespace hsched::cpu {
namespace {

using KernelResult = Result<std::unique_ptr<Kernel>>;

// How a scatter combines an update with the element it lands on: `count` elements at dst with
// those at src.
using Combine = void (*)(std::byte* dst, const std::byte* src, int64_t count);

enum class Reduction { kNone, kAdd, kMul, kMax, kMin };

// Load/store of one element as a type that arithmetic works on.
template <typename T>
struct Plain {
  using Storage = T;
  static T load(T v) { return v; }
  static T store(T v) { return v; }
};
struct Half {
  using Storage = uint16_t;
  static float load(uint16_t v) { return half_to_float(v); }
  static uint16_t store(float v) { return float_to_half(v); }
};
struct BFloat {
  using Storage = uint16_t;
  static float load(uint16_t v) { return bf16_to_float(v); }
  static uint16_t store(float v) { return float_to_bf16(v); }
};

template <typename Codec, Reduction kReduction>
void combine(std::byte* dst, const std::byte* src, int64_t count) {
  using S = typename Codec::Storage;
  for (int64_t i = 0; i < count; ++i) {
    S a, b;
    std::memcpy(&a, dst + i * static_cast<int64_t>(sizeof(S)), sizeof(S));
    std::memcpy(&b, src + i * static_cast<int64_t>(sizeof(S)), sizeof(S));
    auto x = Codec::load(a);
    const auto y = Codec::load(b);
    using C = decltype(x);
    if constexpr (std::is_integral_v<C>) {
      // Integers wrap (unsigned arithmetic) instead of overflowing.
      using U = std::make_unsigned_t<C>;
      if constexpr (kReduction == Reduction::kAdd) x = static_cast<C>(U(x) + U(y));
      if constexpr (kReduction == Reduction::kMul) x = static_cast<C>(U(x) * U(y));
    } else {
      if constexpr (kReduction == Reduction::kAdd) x = x + y;
      if constexpr (kReduction == Reduction::kMul) x = x * y;
    }
    if constexpr (kReduction == Reduction::kMax) x = std::max(x, y);
    if constexpr (kReduction == Reduction::kMin) x = std::min(x, y);
    a = Codec::store(x);
    std::memcpy(dst + i * static_cast<int64_t>(sizeof(S)), &a, sizeof(S));
  }
}

void copy_elements(std::byte* dst, const std::byte* src, int64_t bytes) {
  std::memcpy(dst, src, static_cast<size_t>(bytes));
}

template <typename Codec>
Combine combine_for(Reduction reduction) {
  switch (reduction) {
    case Reduction::kAdd:
      return combine<Codec, Reduction::kAdd>;
    case Reduction::kMul:
      return combine<Codec, Reduction::kMul>;
    case Reduction::kMax:
      return combine<Codec, Reduction::kMax>;
    case Reduction::kMin:
      return combine<Codec, Reduction::kMin>;
    case Reduction::kNone:
      break;
  }
  return nullptr;
}

// The attribute `reduction` (absent before opset 16) for the data's dtype; Unimplemented for a
// reduction of bools. For kNone the combine copies bytes: its count is then in bytes.
Result<Combine> scatter_combine(const KernelSpec& spec, DType dtype) {
  const std::string name = spec.node.attr_string("reduction", "none");
  Reduction reduction = Reduction::kNone;
  if (name == "none") return copy_elements;
  if (name == "add") {
    reduction = Reduction::kAdd;
  } else if (name == "mul") {
    reduction = Reduction::kMul;
  } else if (name == "max") {
    reduction = Reduction::kMax;
  } else if (name == "min") {
    reduction = Reduction::kMin;
  } else {
    return invalid_node(spec, "reduction '" + name + "' is not none, add, mul, max or min");
  }
  switch (dtype) {
    case DType::kF32:
      return combine_for<Plain<float>>(reduction);
    case DType::kF16:
      return combine_for<Half>(reduction);
    case DType::kBF16:
      return combine_for<BFloat>(reduction);
    case DType::kI8:
      return combine_for<Plain<int8_t>>(reduction);
    case DType::kU8:
      return combine_for<Plain<uint8_t>>(reduction);
    case DType::kI32:
      return combine_for<Plain<int32_t>>(reduction);
    case DType::kI64:
      return combine_for<Plain<int64_t>>(reduction);
    case DType::kF64:
      return combine_for<Plain<double>>(reduction);
    case DType::kI16:
      return combine_for<Plain<int16_t>>(reduction);
    case DType::kU16:
      return combine_for<Plain<uint16_t>>(reduction);
    case DType::kU32:
      return combine_for<Plain<uint32_t>>(reduction);
    case DType::kU64:
      return combine_for<Plain<uint64_t>>(reduction);
    case DType::kBool:
    case DType::kUndefined:
      break;
  }
  return unsupported(spec, "reduction '" + name + "' of dtype " + std::string(dtype_name(dtype)));
}

// The checks every scatter shares: data, indices, updates and output present; updates and output
// of data's dtype; output of data's shape.
Status check_scatter(const KernelSpec& spec) {
  HSCHED_RETURN_IF_ERROR(check_static_shapes(spec));
  HSCHED_RETURN_IF_ERROR(check_index_input(spec, 1, "indices"));
  if (!spec.has_input(2) || spec.inputs[2]->dtype != spec.inputs[0]->dtype ||
      spec.outputs[0]->dtype != spec.inputs[0]->dtype) {
    return invalid_node(spec, "updates and output must have the dtype of data");
  }
  if (spec.in_dims(0).empty() || spec.out_dims(0) != spec.in_dims(0)) {
    return invalid_node(spec, "output " + dims_text(spec.out_dims(0)) + " should be data's shape " +
                                  dims_text(spec.in_dims(0)) + " (rank >= 1)");
  }
  return Status::ok();
}

// output = data; then, tuple by tuple in order, output[indices[t], ...] (op)= updates[t, ...].
// In order and on one thread: with duplicate tuples the result depends on the order.
KernelResult make_scatter_nd(const KernelSpec& spec) {
  HSCHED_RETURN_IF_ERROR(check_scatter(spec));
  const Dims& data = spec.in_dims(0);
  const Dims& indices = spec.in_dims(1);
  if (indices.empty() || indices.back() < 1 || indices.back() > static_cast<int64_t>(data.size())) {
    return invalid_node(
        spec, "indices " + dims_text(indices) + " do not address data " + dims_text(data));
  }
  Dims expected(indices.begin(), indices.end() - 1);
  expected.insert(expected.end(), data.begin() + indices.back(), data.end());
  if (spec.in_dims(2) != expected) {
    return invalid_node(
        spec, "updates " + dims_text(spec.in_dims(2)) + " should be " + dims_text(expected));
  }
  HSCHED_ASSIGN_OR_RETURN(const Combine apply, scatter_combine(spec, spec.inputs[0]->dtype));
  const bool by_bytes = apply == copy_elements;
  const TupleLayout layout = tuple_layout(data, indices, 0);
  const int64_t elem = elem_bytes(*spec.inputs[0]);
  const auto data_bytes = static_cast<size_t>(spec.inputs[0]->shape.elements() * elem);
  const int64_t slice_bytes = layout.slice * elem;
  const std::string context = node_context(spec.node);
  return make_kernel([=](std::span<const Tensor* const> in, std::span<Tensor* const> out) {
    HSCHED_ASSIGN_OR_RETURN(const Dims offsets, tuple_offsets(context, layout, *in[1], 0));
    if (data_bytes == 0) return Status::ok();
    std::byte* dst = out[0]->raw();
    parallel_copy(dst, in[0]->raw(), data_bytes);
    const std::byte* updates = in[2]->raw();
    for (size_t u = 0; u < offsets.size(); ++u) {
      apply(dst + offsets[u] * elem, updates + static_cast<int64_t>(u) * slice_bytes,
            by_bytes ? slice_bytes : layout.slice);
    }
    return Status::ok();
  });
}

// ScatterElements and Scatter: output = data; then for each position p of indices in order,
// output[p with its `axis` coordinate replaced by indices[p]] (op)= updates[p].
KernelResult make_scatter_elements(const KernelSpec& spec) {
  HSCHED_RETURN_IF_ERROR(check_scatter(spec));
  const Dims& data = spec.in_dims(0);
  const Dims& dims = spec.in_dims(1);
  if (dims.size() != data.size() || spec.in_dims(2) != dims) {
    return invalid_node(
        spec, "indices " + dims_text(dims) + " and updates " + dims_text(spec.in_dims(2)) +
                  " must have one shape, of data's rank " + std::to_string(data.size()));
  }
  HSCHED_ASSIGN_OR_RETURN(const int64_t axis,
                          normalize_axis(spec, spec.node.attr_int("axis", 0), data.size()));
  for (size_t a = 0; a < data.size(); ++a) {
    if (static_cast<int64_t>(a) != axis && dims[a] > data[a]) {
      return invalid_node(spec, "indices " + dims_text(dims) + " exceed data " + dims_text(data) +
                                    " on axis " + std::to_string(a));
    }
  }
  HSCHED_ASSIGN_OR_RETURN(const Combine apply, scatter_combine(spec, spec.inputs[0]->dtype));
  const bool by_bytes = apply == copy_elements;
  const int64_t elem = elem_bytes(*spec.inputs[0]);
  const auto data_bytes = static_cast<size_t>(spec.inputs[0]->shape.elements() * elem);
  const int64_t n = product(dims.begin(), dims.end());
  const Dims strides = row_major_strides(data);
  const auto a = static_cast<size_t>(axis);
  const int64_t extent = data[a];
  const std::string context = node_context(spec.node);
  return make_kernel([=](std::span<const Tensor* const> in, std::span<Tensor* const> out) {
    const bool is64 = in[1]->dtype() == DType::kI64;
    const std::byte* idx = in[1]->raw();
    for (int64_t p = 0; p < n; ++p) {
      const int64_t v = index_at(idx, is64, p);
      if (v < -extent || v >= extent) return index_out_of_range(context, v, p, axis, extent);
    }
    if (data_bytes == 0) return Status::ok();
    std::byte* dst = out[0]->raw();
    parallel_copy(dst, in[0]->raw(), data_bytes);
    const std::byte* updates = in[2]->raw();
    Dims position(dims.size(), 0);
    int64_t base = 0;  // element offset in data of `position` with its axis coordinate 0
    for (int64_t p = 0; p < n; ++p) {
      int64_t v = index_at(idx, is64, p);
      if (v < 0) v += extent;
      apply(dst + (base + v * strides[a]) * elem, updates + p * elem, by_bytes ? elem : 1);
      for (size_t k = dims.size(); k-- > 0;) {
        if (k != a) base += strides[k];
        if (++position[k] < dims[k]) break;
        if (k != a) base -= dims[k] * strides[k];
        position[k] = 0;
      }
    }
    return Status::ok();
  });
}

}  // namespace

void register_scatter_kernels(KernelRegistry& registry) {
  registry.add("ScatterND", make_scatter_nd);
  registry.add("ScatterElements", make_scatter_elements);
  registry.add("Scatter", make_scatter_elements);
}

}  // namespace hsched::cpu
