// Gather and GatherElements. Indices are data (often runtime: token ids), so they are checked on
// every run and an index out of range is an InvalidArgument naming the node, never a stray read.
#include <numeric>

#include "backends/cpu/kernels/index_util.h"
#include "backends/cpu/kernels/layout_util.h"

namespace hsched::cpu {
namespace {

using KernelResult = Result<std::unique_ptr<Kernel>>;

// Reads index k of an i32/i64 tensor as int64.
class IndexReader {
 public:
  explicit IndexReader(const Tensor& t) : data_(t.raw()), is64_(t.dtype() == DType::kI64) {}
  int64_t operator[](int64_t k) const { return index_at(data_, is64_, k); }

 private:
  const std::byte* data_;
  bool is64_;
};

Status check_index_dtype(const KernelSpec& spec) {
  const DType t = spec.inputs[1]->dtype;
  if (t != DType::kI64 && t != DType::kI32) {
    return invalid_node(spec, "indices must be int32 or int64, not " + std::string(dtype_name(t)));
  }
  return Status::ok();
}

// The first index outside [-extent, extent), as an error; ok when all fit.
Status check_indices(const std::string& context, const IndexReader& idx, int64_t n, int64_t extent,
                     int64_t axis) {
  for (int64_t k = 0; k < n; ++k) {
    const int64_t v = idx[k];
    if (v < -extent || v >= extent) {
      return invalid_argument(context + ": index " + std::to_string(v) + " (at position " +
                              std::to_string(k) + ") is out of range for axis " +
                              std::to_string(axis) + " of size " + std::to_string(extent));
    }
  }
  return Status::ok();
}

// Gather: output[o, k, i] = data[o, indices[k], i] over (outer, index count, inner) with rows of
// `inner` elements copied whole.
KernelResult make_gather(const KernelSpec& spec) {
  HSCHED_RETURN_IF_ERROR(check_static_shapes(spec));
  if (!spec.has_input(1)) return invalid_node(spec, "needs indices");
  HSCHED_RETURN_IF_ERROR(check_index_dtype(spec));
  const auto& data = spec.in_dims(0);
  const auto& indices = spec.in_dims(1);
  if (data.empty()) return invalid_node(spec, "data is a scalar");
  HSCHED_ASSIGN_OR_RETURN(const int64_t axis,
                          normalize_axis(spec, spec.node.attr_int("axis", 0), data.size()));
  std::vector<int64_t> expected(data.begin(), data.begin() + axis);
  expected.insert(expected.end(), indices.begin(), indices.end());
  expected.insert(expected.end(), data.begin() + axis + 1, data.end());
  if (expected != spec.out_dims(0)) {
    return invalid_node(spec, "output shape " + spec.outputs[0]->shape.to_string() + " should be " +
                                  Shape(expected).to_string());
  }
  const int64_t outer =
      std::accumulate(data.begin(), data.begin() + axis, int64_t{1}, std::multiplies<>());
  const auto elem = static_cast<int64_t>(dtype_size(spec.inputs[0]->dtype));
  const int64_t row =
      std::accumulate(data.begin() + axis + 1, data.end(), int64_t{1}, std::multiplies<>()) * elem;
  const int64_t extent = data[static_cast<size_t>(axis)];
  const int64_t count =
      std::accumulate(indices.begin(), indices.end(), int64_t{1}, std::multiplies<>());
  const std::string context = node_context(spec.node);
  return make_kernel([=](std::span<const Tensor* const> in, std::span<Tensor* const> out) {
    const IndexReader idx(*in[1]);
    HSCHED_RETURN_IF_ERROR(check_indices(context, idx, count, extent, axis));
    const std::byte* src = in[0]->raw();
    std::byte* dst = out[0]->raw();
    if (row == 0) return Status::ok();
    parallel_range(
        outer * count,
        [&](int64_t begin, int64_t end) {
          for (int64_t u = begin; u < end; ++u) {
            const int64_t o = u / count;
            int64_t k = idx[u % count];
            if (k < 0) k += extent;
            std::memcpy(dst + u * row, src + (o * extent + k) * row, static_cast<size_t>(row));
          }
        },
        std::max<int64_t>(1, kCopyGrainBytes / row));
    return Status::ok();
  });
}

// GatherElements: output[i] = data[i with axis coordinate replaced by indices[i]].
KernelResult make_gather_elements(const KernelSpec& spec) {
  HSCHED_RETURN_IF_ERROR(check_static_shapes(spec));
  if (!spec.has_input(1)) return invalid_node(spec, "needs indices");
  HSCHED_RETURN_IF_ERROR(check_index_dtype(spec));
  const auto& data = spec.in_dims(0);
  const auto& dims = spec.in_dims(1);
  if (data.empty() || data.size() != dims.size() || spec.out_dims(0) != dims) {
    return invalid_node(spec,
                        "data, indices and output must have the same rank (>= 1), and the "
                        "output the shape of indices");
  }
  HSCHED_ASSIGN_OR_RETURN(const int64_t axis,
                          normalize_axis(spec, spec.node.attr_int("axis", 0), data.size()));
  for (size_t a = 0; a < data.size(); ++a) {
    if (static_cast<int64_t>(a) != axis && dims[a] > data[a]) {
      return invalid_node(spec, "indices " + spec.inputs[1]->shape.to_string() + " exceed data " +
                                    spec.inputs[0]->shape.to_string());
    }
  }
  const auto elem = static_cast<int64_t>(dtype_size(spec.inputs[0]->dtype));
  std::vector<int64_t> strides = row_major_strides(data);
  for (int64_t& s : strides) s *= elem;
  const auto a = static_cast<size_t>(axis);
  const int64_t extent = data[a];
  const int64_t axis_stride = strides[a];
  strides[a] = 0;  // the axis coordinate comes from the index, not the position
  const size_t last = dims.size() - 1;
  const int64_t row_len = dims[last];
  const int64_t n = std::accumulate(dims.begin(), dims.end(), int64_t{1}, std::multiplies<>());
  const std::string context = node_context(spec.node);
  return make_kernel([=](std::span<const Tensor* const> in, std::span<Tensor* const> out) {
    const IndexReader idx(*in[1]);
    HSCHED_RETURN_IF_ERROR(check_indices(context, idx, n, extent, axis));
    if (n == 0) return Status::ok();
    const std::byte* src = in[0]->raw();
    std::byte* dst = out[0]->raw();
    auto body = [&](auto u, int64_t begin, int64_t end) {
      using U = decltype(u);
      std::vector<int64_t> index(last, 0);
      int64_t base = 0;
      int64_t rest = begin;
      for (size_t k = last; k-- > 0;) {
        index[k] = rest % dims[k];
        rest /= dims[k];
        base += index[k] * strides[k];
      }
      for (int64_t r = begin; r < end; ++r) {
        for (int64_t i = 0; i < row_len; ++i) {
          int64_t k = idx[r * row_len + i];
          if (k < 0) k += extent;
          memcpy(dst + (r * row_len + i) * elem, src + base + i * strides[last] + k * axis_stride,
                 sizeof(U));
        }
        for (size_t k = last; k-- > 0;) {
          base += strides[k];
          if (++index[k] < dims[k]) break;
          base -= dims[k] * strides[k];
          index[k] = 0;
        }
      }
    };
    parallel_range(
        n / row_len,
        [&](int64_t begin, int64_t end) {
          dispatch_element_size(static_cast<size_t>(elem), [&](auto u) { body(u, begin, end); });
        },
        std::max<int64_t>(1, kParallelGrain / row_len));
    return Status::ok();
  });
}

}  // namespace

void register_gather_kernels(KernelRegistry& registry) {
  registry.add("Gather", make_gather);
  registry.add("GatherElements", make_gather_elements);
}

}  // namespace hsched::cpu
