// Indexing kernels: Trilu, EyeLike, OneHot, ReverseSequence and GatherND (the scatters are in
// scatter_kernels.cpp). Every factory checks, when the kernel is created, each shape and attribute
// its loops will read; values that only exist at run time (indices, sequence lengths, Trilu's k,
// OneHot's depth) are checked on every run, and one out of range is an InvalidArgument naming the
// node, never a stray read or write. Data moves by element size, so every dtype works.
#include <algorithm>
#include <array>
#include <cmath>
#include <optional>

#include "backends/cpu/kernels/elementwise.h"
#include "backends/cpu/kernels/index_util.h"

namespace hsched::cpu {

Status index_out_of_range(const std::string& context, int64_t value, int64_t position, int64_t axis,
                          int64_t extent) {
  return invalid_argument(context + ": index " + std::to_string(value) + " (at position " +
                          std::to_string(position) + ") is out of range for axis " +
                          std::to_string(axis) + " of size " + std::to_string(extent));
}

Status check_index_input(const KernelSpec& spec, size_t i, const char* what) {
  if (!spec.has_input(i)) return invalid_node(spec, std::string("needs input '") + what + "'");
  const DType t = spec.inputs[i]->dtype;
  if (!is_index_dtype(t)) {
    return invalid_node(
        spec, std::string(what) + " must be int32 or int64, not " + std::string(dtype_name(t)));
  }
  return Status::ok();
}

TupleLayout tuple_layout(const Dims& data, const Dims& indices, int64_t batch_dims) {
  TupleLayout t;
  const auto b = static_cast<size_t>(batch_dims);
  t.last = indices.back();
  t.batches = product(data.begin(), data.begin() + batch_dims);
  t.tuples = product(indices.begin() + batch_dims, indices.end() - 1);
  t.slice = product(data.begin() + batch_dims + t.last, data.end());
  t.batch_stride = product(data.begin() + batch_dims, data.end());
  const Dims strides = row_major_strides(data);
  for (size_t c = 0; c < static_cast<size_t>(t.last); ++c) {
    t.extents.push_back(data[b + c]);
    t.strides.push_back(strides[b + c]);
  }
  return t;
}

Result<Dims> tuple_offsets(const std::string& context, const TupleLayout& t, const Tensor& indices,
                           int64_t batch_dims) {
  const bool is64 = indices.dtype() == DType::kI64;
  Dims offsets(static_cast<size_t>(t.batches * t.tuples));
  for (int64_t u = 0; u < t.batches * t.tuples; ++u) {
    int64_t offset = u / t.tuples * t.batch_stride;
    for (int64_t c = 0; c < t.last; ++c) {
      const int64_t pos = u * t.last + c;
      int64_t v = index_at(indices.raw(), is64, pos);
      const int64_t extent = t.extents[static_cast<size_t>(c)];
      if (v < -extent || v >= extent) {
        return index_out_of_range(context, v, pos, batch_dims + c, extent);
      }
      if (v < 0) v += extent;
      offset += v * t.strides[static_cast<size_t>(c)];
    }
    offsets[static_cast<size_t>(u)] = offset;
  }
  return offsets;
}

namespace {

using KernelResult = Result<std::unique_ptr<Kernel>>;

// Element k of a tensor of any dtype as a double (OneHot takes indices and depth of any numeric
// type).
double number_at(const Tensor& t, int64_t k) {
  const std::byte* p = t.raw() + k * static_cast<int64_t>(dtype_size(t.dtype()));
  auto get = [&](auto v) {
    std::memcpy(&v, p, sizeof(v));
    return v;
  };
  switch (t.dtype()) {
    case DType::kF32:
      return get(float{});
    case DType::kF16:
      return half_to_float(get(uint16_t{}));
    case DType::kBF16:
      return bf16_to_float(get(uint16_t{}));
    case DType::kI8:
      return get(int8_t{});
    case DType::kU8:
    case DType::kBool:
      return get(uint8_t{});
    case DType::kI32:
      return get(int32_t{});
    case DType::kI64:
      return static_cast<double>(get(int64_t{}));
    case DType::kF64:
      return get(double{});
    case DType::kI16:
      return get(int16_t{});
    case DType::kU16:
      return get(uint16_t{});
    case DType::kU32:
      return get(uint32_t{});
    case DType::kU64:
      return static_cast<double>(get(uint64_t{}));
    case DType::kUndefined:
      break;
  }
  return 0.0;
}

// A double truncated towards zero as an int64; nullopt for NaN, infinities and values past
// +-2^62 (no index is that large).
std::optional<int64_t> whole_number(double v) {
  constexpr double kLimit = 4611686018427387904.0;  // 2^62
  if (!(std::fabs(v) < kLimit)) return std::nullopt;
  return static_cast<int64_t>(v);
}

// ---------------------------------------------------------------- Trilu

// Keeps the lower (upper = 0: j - i <= k) or upper (j - i >= k) triangle of each matrix in the
// last two axes and zeroes the rest (all-zero bytes are zero in every dtype). k may be a graph
// input: it does not change the output's shape, so it is read on every run.
KernelResult make_trilu(const KernelSpec& spec) {
  HSCHED_RETURN_IF_ERROR(check_static_shapes(spec));
  const Dims& dims = spec.in_dims(0);
  if (dims.size() < 2)
    return invalid_node(spec, "input must have rank >= 2, not " + dims_text(dims));
  if (spec.out_dims(0) != dims) {
    return invalid_node(
        spec, "output " + dims_text(spec.out_dims(0)) + " differs from input " + dims_text(dims));
  }
  std::optional<int64_t> fixed_k;
  const bool has_k = spec.has_input(1);
  if (has_k) {
    HSCHED_RETURN_IF_ERROR(check_index_input(spec, 1, "k"));
    if (spec.inputs[1]->shape.elements() != 1) {
      return invalid_node(spec, "k must hold one value, not " + spec.inputs[1]->shape.to_string());
    }
    if (const Tensor* k = spec.constant(1))
      fixed_k = index_at(k->raw(), k->dtype() == DType::kI64, 0);
  }
  const bool upper = spec.node.attr_int("upper", 1) != 0;
  const int64_t rows = dims[dims.size() - 2];
  const int64_t cols = dims.back();
  const int64_t total_rows = product(dims.begin(), dims.end() - 1);
  const int64_t elem = elem_bytes(*spec.inputs[0]);
  const int64_t row_bytes = cols * elem;
  const std::string context = node_context(spec.node);
  return make_kernel([=](std::span<const Tensor* const> in, std::span<Tensor* const> out) {
    int64_t k = fixed_k.value_or(0);
    if (has_k && !fixed_k) {
      if (in.size() < 2 || in[1] == nullptr || in[1]->elements() != 1 ||
          !is_index_dtype(in[1]->dtype())) {
        return invalid_argument(context + ": k must be one int32 or int64 value");
      }
      k = index_at(in[1]->raw(), in[1]->dtype() == DType::kI64, 0);
    }
    if (row_bytes == 0 || total_rows == 0) return Status::ok();
    k = std::clamp(k, -rows - 1, cols + 1);  // beyond these every row is all kept or all zero
    const std::byte* src = in[0]->raw();
    std::byte* dst = out[0]->raw();
    parallel_range(
        total_rows,
        [&](int64_t begin, int64_t end) {
          for (int64_t r = begin; r < end; ++r) {
            const int64_t i = r % rows;
            // Columns [keep_begin, keep_end) are kept.
            const int64_t keep_begin = upper ? std::clamp(i + k, int64_t{0}, cols) : 0;
            const int64_t keep_end = upper ? cols : std::clamp(i + k + 1, int64_t{0}, cols);
            std::byte* d = dst + r * row_bytes;
            const std::byte* s = src + r * row_bytes;
            std::memset(d, 0, static_cast<size_t>(keep_begin * elem));
            std::memcpy(d + keep_begin * elem, s + keep_begin * elem,
                        static_cast<size_t>((keep_end - keep_begin) * elem));
            std::memset(d + keep_end * elem, 0, static_cast<size_t>((cols - keep_end) * elem));
          }
        },
        std::max<int64_t>(1, kCopyGrainBytes / std::max<int64_t>(row_bytes, 1)));
    return Status::ok();
  });
}

// ---------------------------------------------------------------- EyeLike

// A 2-D output of the input's shape with ones on diagonal k (j - i = k) and zeros elsewhere; the
// input's values are never read.
KernelResult make_eye_like(const KernelSpec& spec) {
  HSCHED_RETURN_IF_ERROR(check_static_shapes(spec, false));
  const Dims& dims = spec.in_dims(0);
  if (dims.size() != 2) return invalid_node(spec, "input must have rank 2, not " + dims_text(dims));
  if (spec.out_dims(0) != dims) {
    return invalid_node(
        spec, "output " + dims_text(spec.out_dims(0)) + " differs from input " + dims_text(dims));
  }
  const DType out_type = spec.outputs[0]->dtype;
  if (spec.node.has_attr("dtype")) {
    const auto onnx_type = static_cast<int32_t>(spec.node.attr_int("dtype", 0));
    const std::optional<DType> wanted = dtype_from_onnx(onnx_type);
    if (!wanted) return unsupported(spec, "dtype " + std::string(onnx_dtype_name(onnx_type)));
    if (*wanted != out_type) {
      return invalid_node(spec, "output dtype " + std::string(dtype_name(out_type)) +
                                    " differs from attribute dtype " +
                                    std::string(dtype_name(*wanted)));
    }
  } else if (out_type != spec.inputs[0]->dtype) {
    return invalid_node(spec, "output dtype " + std::string(dtype_name(out_type)) +
                                  " differs from input dtype " +
                                  std::string(dtype_name(spec.inputs[0]->dtype)));
  }
  const int64_t rows = dims[0];
  const int64_t cols = dims[1];
  const int64_t k = std::clamp(spec.node.attr_int("k", 0), -rows - 1, cols + 1);
  const auto elem = static_cast<int64_t>(dtype_size(out_type));
  std::array<std::byte, 8> one{};
  encode_scalar(1.0, out_type, one.data());
  return make_kernel([=](std::span<const Tensor* const>, std::span<Tensor* const> out) {
    if (rows * cols == 0) return Status::ok();
    std::byte* dst = out[0]->raw();
    std::memset(dst, 0, static_cast<size_t>(rows * cols * elem));
    for (int64_t i = std::max<int64_t>(0, -k); i < rows && i + k < cols; ++i) {
      std::memcpy(dst + (i * cols + i + k) * elem, one.data(), static_cast<size_t>(elem));
    }
    return Status::ok();
  });
}

// ---------------------------------------------------------------- OneHot

// output[pre, d, post] = on when indices[pre, post] (negative ones plus depth) is d, else off.
// The output's shape fixes depth when the model is loaded; a depth input that disagrees at run
// time is an error. Indices outside [-depth, depth) give a row of `off` (the operator's rule).
KernelResult make_one_hot(const KernelSpec& spec) {
  HSCHED_RETURN_IF_ERROR(check_static_shapes(spec, false));
  if (!spec.has_input(1) || !spec.has_input(2)) return invalid_node(spec, "needs depth and values");
  const Dims& idx = spec.in_dims(0);
  const Dims& out_dims = spec.out_dims(0);
  if (spec.inputs[1]->shape.elements() != 1) {
    return invalid_node(spec,
                        "depth must hold one value, not " + spec.inputs[1]->shape.to_string());
  }
  if (spec.inputs[2]->shape.elements() != 2 || spec.inputs[2]->dtype != spec.outputs[0]->dtype) {
    return invalid_node(spec, "values must be [off, on] of the output's dtype");
  }
  HSCHED_ASSIGN_OR_RETURN(const int64_t axis,
                          normalize_axis(spec, spec.node.attr_int("axis", -1), idx.size() + 1));
  if (out_dims.size() != idx.size() + 1) {
    return invalid_node(spec, "output " + dims_text(out_dims) + " should have rank " +
                                  std::to_string(idx.size() + 1));
  }
  const int64_t depth = out_dims[static_cast<size_t>(axis)];
  Dims expected = idx;
  expected.insert(expected.begin() + axis, depth);
  if (expected != out_dims) {
    return invalid_node(spec,
                        "output " + dims_text(out_dims) + " should be " + dims_text(expected));
  }
  if (const Tensor* d = spec.constant(1); d != nullptr && whole_number(number_at(*d, 0)) != depth) {
    return invalid_node(spec, "depth " + std::to_string(number_at(*d, 0)) +
                                  " differs from the output's " + std::to_string(depth));
  }
  const int64_t pre = product(idx.begin(), idx.begin() + axis);
  const int64_t post = product(idx.begin() + axis, idx.end());
  const int64_t elem = elem_bytes(*spec.outputs[0]);
  const std::string context = node_context(spec.node);
  // OneHot-11 counts negative indices from the end; OneHot-9/10 take [0, depth) only (a row of
  // `off` for anything else).
  const int64_t lowest = spec.opset >= 11 ? -depth : 0;
  return make_kernel([=](std::span<const Tensor* const> in, std::span<Tensor* const> out) {
    const std::optional<int64_t> d = whole_number(number_at(*in[1], 0));
    if (d != depth) {
      return invalid_argument(context + ": depth " + std::to_string(number_at(*in[1], 0)) +
                              " differs from the output's " + std::to_string(depth) +
                              " (fixed when the model was loaded)");
    }
    if (pre * depth * post == 0) return Status::ok();
    const std::byte* off = in[2]->raw();
    const std::byte* on = off + elem;
    std::byte* dst = out[0]->raw();
    fill_elements(dst, off, static_cast<size_t>(elem), pre * depth * post);
    for (int64_t p = 0; p < pre; ++p) {
      for (int64_t q = 0; q < post; ++q) {
        std::optional<int64_t> v = whole_number(number_at(*in[0], p * post + q));
        if (!v || *v < lowest || *v >= depth) continue;
        if (*v < 0) *v += depth;
        std::memcpy(dst + ((p * depth + *v) * post + q) * elem, on, static_cast<size_t>(elem));
      }
    }
    return Status::ok();
  });
}

// ---------------------------------------------------------------- ReverseSequence

// For batch b, the first sequence_lens[b] steps along the time axis are reversed and the rest
// copied. Batch and time are axes 0 and 1 (either way round); inner axes move as whole rows.
KernelResult make_reverse_sequence(const KernelSpec& spec) {
  HSCHED_RETURN_IF_ERROR(check_static_shapes(spec));
  HSCHED_RETURN_IF_ERROR(check_index_input(spec, 1, "sequence_lens"));
  const Dims& dims = spec.in_dims(0);
  if (dims.size() < 2)
    return invalid_node(spec, "input must have rank >= 2, not " + dims_text(dims));
  if (spec.out_dims(0) != dims) {
    return invalid_node(
        spec, "output " + dims_text(spec.out_dims(0)) + " differs from input " + dims_text(dims));
  }
  const int64_t batch_axis = spec.node.attr_int("batch_axis", 1);
  const int64_t time_axis = spec.node.attr_int("time_axis", 0);
  if ((batch_axis != 0 && batch_axis != 1) || (time_axis != 0 && time_axis != 1) ||
      batch_axis == time_axis) {
    return invalid_node(spec, "batch_axis and time_axis must be 0 and 1 or 1 and 0, not " +
                                  std::to_string(batch_axis) + " and " + std::to_string(time_axis));
  }
  const int64_t batch = dims[static_cast<size_t>(batch_axis)];
  const int64_t time = dims[static_cast<size_t>(time_axis)];
  if (spec.in_dims(1) != Dims{batch}) {
    return invalid_node(spec, "sequence_lens must hold one length per batch (" +
                                  std::to_string(batch) + "), not shape " +
                                  spec.inputs[1]->shape.to_string());
  }
  const int64_t row = product(dims.begin() + 2, dims.end()) * elem_bytes(*spec.inputs[0]);
  // Byte offset of row (b, t).
  const int64_t batch_stride = batch_axis == 0 ? time * row : row;
  const int64_t time_stride = batch_axis == 0 ? row : batch * row;
  const std::string context = node_context(spec.node);
  return make_kernel([=](std::span<const Tensor* const> in, std::span<Tensor* const> out) {
    const bool is64 = in[1]->dtype() == DType::kI64;
    for (int64_t b = 0; b < batch; ++b) {
      const int64_t len = index_at(in[1]->raw(), is64, b);
      if (len < 0 || len > time) {
        return invalid_argument(context + ": sequence_lens[" + std::to_string(b) +
                                "] = " + std::to_string(len) + " is outside [0, " +
                                std::to_string(time) + "]");
      }
    }
    if (row == 0) return Status::ok();
    const std::byte* src = in[0]->raw();
    std::byte* dst = out[0]->raw();
    parallel_range(
        batch * time,
        [&](int64_t begin, int64_t end) {
          for (int64_t u = begin; u < end; ++u) {
            const int64_t b = u / time;
            const int64_t t = u % time;
            const int64_t len = index_at(in[1]->raw(), is64, b);
            const int64_t from = t < len ? len - 1 - t : t;
            std::memcpy(dst + b * batch_stride + t * time_stride,
                        src + b * batch_stride + from * time_stride, static_cast<size_t>(row));
          }
        },
        std::max<int64_t>(1, kCopyGrainBytes / row));
    return Status::ok();
  });
}

// ---------------------------------------------------------------- GatherND

// output[batch, tuple, ...] = data[batch, indices[batch, tuple, :], ...].
KernelResult make_gather_nd(const KernelSpec& spec) {
  HSCHED_RETURN_IF_ERROR(check_static_shapes(spec));
  HSCHED_RETURN_IF_ERROR(check_index_input(spec, 1, "indices"));
  const Dims& data = spec.in_dims(0);
  const Dims& indices = spec.in_dims(1);
  const int64_t batch_dims = spec.node.attr_int("batch_dims", 0);
  const auto r = static_cast<int64_t>(data.size());
  const auto q = static_cast<int64_t>(indices.size());
  if (r < 1 || q < 1 || batch_dims < 0 || batch_dims >= std::min(q, r)) {
    return invalid_node(spec, "batch_dims " + std::to_string(batch_dims) + " needs data " +
                                  dims_text(data) + " and indices " + dims_text(indices) +
                                  " of larger ranks");
  }
  const int64_t last = indices.back();
  if (last < 1 || last > r - batch_dims ||
      !std::equal(data.begin(), data.begin() + batch_dims, indices.begin())) {
    return invalid_node(spec, "indices " + dims_text(indices) + " do not address data " +
                                  dims_text(data) + " with batch_dims " +
                                  std::to_string(batch_dims));
  }
  Dims expected(indices.begin(), indices.end() - 1);
  expected.insert(expected.end(), data.begin() + batch_dims + last, data.end());
  if (spec.out_dims(0) != expected) {
    return invalid_node(
        spec, "output " + dims_text(spec.out_dims(0)) + " should be " + dims_text(expected));
  }
  const TupleLayout layout = tuple_layout(data, indices, batch_dims);
  const int64_t elem = elem_bytes(*spec.inputs[0]);
  const int64_t slice_bytes = layout.slice * elem;
  const std::string context = node_context(spec.node);
  return make_kernel([=](std::span<const Tensor* const> in, std::span<Tensor* const> out) {
    HSCHED_ASSIGN_OR_RETURN(const Dims offsets, tuple_offsets(context, layout, *in[1], batch_dims));
    if (slice_bytes == 0) return Status::ok();
    const std::byte* src = in[0]->raw();
    std::byte* dst = out[0]->raw();
    parallel_range(
        static_cast<int64_t>(offsets.size()),
        [&](int64_t begin, int64_t end) {
          for (int64_t u = begin; u < end; ++u) {
            std::memcpy(dst + u * slice_bytes, src + offsets[static_cast<size_t>(u)] * elem,
                        static_cast<size_t>(slice_bytes));
          }
        },
        std::max<int64_t>(1, kCopyGrainBytes / slice_bytes));
    return Status::ok();
  });
}

}  // namespace

void register_index_kernels(KernelRegistry& registry) {
  registry.add("Trilu", make_trilu);
  registry.add("EyeLike", make_eye_like);
  registry.add("OneHot", make_one_hot);
  registry.add("ReverseSequence", make_reverse_sequence);
  registry.add("GatherND", make_gather_nd);
  register_scatter_kernels(registry);
}

}  // namespace hsched::cpu
