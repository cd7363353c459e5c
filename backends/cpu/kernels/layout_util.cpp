#include "backends/cpu/kernels/layout_util.h"

#include <algorithm>
#include <cmath>
#include <type_traits>

#if defined(__SSE2__)
#include <immintrin.h>
#endif

#include "backends/cpu/kernels/elementwise.h"

namespace hsched::cpu {
namespace {

// Copies `count` elements of sizeof(U) bytes read `stride` bytes apart. memcpy of a fixed size
// compiles to a plain load/store and keeps unaligned views (Slice of odd offsets) legal.
template <typename U>
void copy_row(std::byte* dst, const std::byte* src, int64_t stride, int64_t count) {
  if (stride == static_cast<int64_t>(sizeof(U))) {
    std::memcpy(dst, src, static_cast<size_t>(count) * sizeof(U));
    return;
  }
  for (int64_t i = 0; i < count; ++i) {
    U v;
    std::memcpy(&v, src + i * stride, sizeof(U));
    std::memcpy(dst + i * static_cast<int64_t>(sizeof(U)), &v, sizeof(U));
  }
}

void copy_row_any(std::byte* dst, const std::byte* src, int64_t stride, int64_t count,
                  int64_t elem) {
  if (stride == 0) {
    fill_elements(dst, src, static_cast<size_t>(elem), count);
    return;
  }
  const bool typed = dispatch_element_size(
      static_cast<size_t>(elem), [&](auto u) { copy_row<decltype(u)>(dst, src, stride, count); });
  if (typed) return;
  if (stride == elem) {
    std::memcpy(dst, src, static_cast<size_t>(count * elem));
    return;
  }
  for (int64_t i = 0; i < count; ++i) {
    std::memcpy(dst + i * elem, src + i * stride, static_cast<size_t>(elem));
  }
}

// Row by row: every output row (innermost axis) is one strided read.
void copy_rows(const StridedView& v, const std::byte* in, std::byte* out) {
  const size_t last = v.dims.size() - 1;
  const int64_t row_len = v.dims[last];
  const int64_t row_bytes = row_len * v.elem;
  const int64_t rows = v.elements() / row_len;
  parallel_range(
      rows,
      [&](int64_t begin, int64_t end) {
        std::vector<int64_t> index(last, 0);
        int64_t offset = v.offset;
        int64_t rest = begin;
        for (size_t a = last; a-- > 0;) {
          index[a] = rest % v.dims[a];
          rest /= v.dims[a];
          offset += index[a] * v.strides[a];
        }
        for (int64_t r = begin; r < end; ++r) {
          copy_row_any(out + r * row_bytes, in + offset, v.strides[last], row_len, v.elem);
          for (size_t a = last; a-- > 0;) {
            offset += v.strides[a];
            if (++index[a] < v.dims[a]) break;
            offset -= v.dims[a] * v.strides[a];
            index[a] = 0;
          }
        }
      },
      std::max<int64_t>(1, kCopyGrainBytes / std::max<int64_t>(row_bytes, 1)));
}

// Cache-tiled transpose: axis `j` reads the input densely (stride == elem) while the output's
// innermost axis L reads it with a large stride. Each kTile x kTile tile is staged in a small
// buffer: kTile whole input lines are read, then kTile whole output lines written, so every cache
// line is touched once. Walking the strided side element by element instead thrashes a few cache
// sets when strides are powers of two (NCHW <-> NHWC of 64-channel maps ran 10x slower).
template <typename U>
void copy_tiled(const StridedView& v, size_t j, const std::byte* in, std::byte* out) {
  constexpr int64_t kTile = 128 / sizeof(U) < 16 ? 16 : 128 / sizeof(U);  // two lines per row
  constexpr auto kElem = static_cast<int64_t>(sizeof(U));
  const size_t last = v.dims.size() - 1;
  const int64_t dj = v.dims[j];
  const int64_t dl = v.dims[last];
  const int64_t sl = v.strides[last];
  std::vector<int64_t> out_strides(v.dims.size(), 1);  // in elements
  for (size_t a = v.dims.size() - 1; a-- > 0;) out_strides[a] = out_strides[a + 1] * v.dims[a + 1];
  const int64_t oj = out_strides[j];
  std::vector<size_t> batch_axes;
  int64_t batches = 1;
  for (size_t a = 0; a < last; ++a) {
    if (a == j) continue;
    batch_axes.push_back(a);
    batches *= v.dims[a];
  }
  // Batch offsets of unit `b` (in bytes for the input, elements for the output).
  auto batch_base = [&](int64_t b, int64_t& in_base, int64_t& out_base) {
    for (size_t k = batch_axes.size(); k-- > 0;) {
      const size_t a = batch_axes[k];
      const int64_t i = b % v.dims[a];
      b /= v.dims[a];
      in_base += i * v.strides[a];
      out_base += i * out_strides[a];
    }
  };
  if (dl < kTile / 2) {
    // Few output columns (NCHW -> NHWC of RGB images): tiles would be mostly empty; read the dl
    // input streams in step and write the output densely.
    constexpr int64_t kChunk = 1024;
    const int64_t chunks = (dj + kChunk - 1) / kChunk;
    parallel_range(
        batches * chunks,
        [&](int64_t begin, int64_t end) {
          for (int64_t unit = begin; unit < end; ++unit) {
            const int64_t j0 = unit % chunks * kChunk;
            const int64_t j1 = std::min(dj, j0 + kChunk);
            int64_t in_base = v.offset, out_base = 0;
            batch_base(unit / chunks, in_base, out_base);
            // One input stream at a time: dense reads, writes dl elements apart.
            for (int64_t l = 0; l < dl; ++l) {
              const std::byte* src = in + in_base + l * sl;
              std::byte* dst = out + (out_base + l) * kElem;
              const int64_t step = oj * kElem;
              for (int64_t jj = j0; jj < j1; ++jj) {
                U value;
                std::memcpy(&value, src + jj * kElem, sizeof(U));
                std::memcpy(dst + jj * step, &value, sizeof(U));
              }
            }
          }
        },
        std::max<int64_t>(1, kParallelGrain / (kChunk * dl)));
    return;
  }
  const int64_t j_tiles = (dj + kTile - 1) / kTile;
  const int64_t l_tiles = (dl + kTile - 1) / kTile;
  // Units run along L first: consecutive tiles extend the same output rows.
  parallel_range(
      batches * j_tiles * l_tiles,
      [&](int64_t begin, int64_t end) {
        // Locals, not captures: stores through `out` could alias the closure, forcing reloads.
        const std::byte* const in_ptr = in;
        std::byte* const out_ptr = out;
        const int64_t ojl = oj, sll = sl;
        U tile[kTile][kTile] = {};  // [l][j]; rows past a partial tile are never written out
        for (int64_t unit = begin; unit < end; ++unit) {
          const int64_t l0 = (unit % l_tiles) * kTile;
          const int64_t j0 = (unit / l_tiles % j_tiles) * kTile;
          const int64_t ln = std::min(kTile, dl - l0);
          const int64_t jn = std::min(kTile, dj - j0);
          int64_t in_base = v.offset + j0 * kElem + l0 * sll;
          int64_t out_base = j0 * ojl + l0;
          batch_base(unit / l_tiles / j_tiles, in_base, out_base);
          // Stage: ln input lines of jn elements (fixed-size copies inline to vector moves).
          if (jn == kTile) {
            for (int64_t l = 0; l < ln; ++l) {
              std::memcpy(tile[l], in_ptr + in_base + l * sll, sizeof(tile[l]));
            }
          } else {
            for (int64_t l = 0; l < ln; ++l) {
              std::memcpy(tile[l], in_ptr + in_base + l * sll, static_cast<size_t>(jn) * sizeof(U));
            }
          }
#if defined(__SSE2__)
          if constexpr (sizeof(U) == 4) {  // f32/i32: 4x4 register transposes, bits untouched
            if (jn % 4 == 0 && ln % 4 == 0) {
              for (int64_t jj = 0; jj < jn; jj += 4) {
                std::byte* dst = out_ptr + (out_base + jj * ojl) * kElem;
                for (int64_t l = 0; l < ln; l += 4) {
                  __m128 r0 = _mm_loadu_ps(reinterpret_cast<const float*>(&tile[l][jj]));
                  __m128 r1 = _mm_loadu_ps(reinterpret_cast<const float*>(&tile[l + 1][jj]));
                  __m128 r2 = _mm_loadu_ps(reinterpret_cast<const float*>(&tile[l + 2][jj]));
                  __m128 r3 = _mm_loadu_ps(reinterpret_cast<const float*>(&tile[l + 3][jj]));
                  _MM_TRANSPOSE4_PS(r0, r1, r2, r3);
                  _mm_storeu_ps(reinterpret_cast<float*>(dst + l * kElem), r0);
                  _mm_storeu_ps(reinterpret_cast<float*>(dst + (ojl + l) * kElem), r1);
                  _mm_storeu_ps(reinterpret_cast<float*>(dst + (2 * ojl + l) * kElem), r2);
                  _mm_storeu_ps(reinterpret_cast<float*>(dst + (3 * ojl + l) * kElem), r3);
                }
              }
              continue;
            }
          }
#endif
          // Write: jn output lines of ln elements, gathered from the tile's columns.
          for (int64_t jj = 0; jj < jn; ++jj) {
            U row[kTile];
            for (int64_t l = 0; l < kTile; ++l) row[l] = tile[l][jj];
            std::byte* dst = out_ptr + (out_base + jj * ojl) * kElem;
            if (ln == kTile) {
              std::memcpy(dst, row, sizeof(row));
            } else {
              std::memcpy(dst, row, static_cast<size_t>(ln) * sizeof(U));
            }
          }
        }
      },
      std::max<int64_t>(1, kParallelGrain / (kTile * kTile)));
}

}  // namespace

Status check_static_shapes(const KernelSpec& spec, bool same_dtype) {
  auto check = [&](const Value* v, const char* what, size_t i) -> Status {
    if (v == nullptr) return Status::ok();
    if (!v->shape.is_static() || v->dtype == DType::kUndefined) {
      return unsupported(spec, std::string(what) + " " + std::to_string(i) + " ('" + v->name +
                                   "') needs a static shape and a known dtype");
    }
    return Status::ok();
  };
  for (size_t i = 0; i < spec.inputs.size(); ++i) {
    HSCHED_RETURN_IF_ERROR(check(spec.inputs[i], "input", i));
  }
  for (size_t i = 0; i < spec.outputs.size(); ++i) {
    HSCHED_RETURN_IF_ERROR(check(spec.outputs[i], "output", i));
  }
  if (!spec.has_input(0) || spec.outputs.empty() || spec.outputs[0] == nullptr) {
    return invalid_node(spec, "needs input 0 and output 0");
  }
  if (same_dtype && dtype_size(spec.inputs[0]->dtype) != dtype_size(spec.outputs[0]->dtype)) {
    return invalid_node(
        spec, std::string("output dtype ") + std::string(dtype_name(spec.outputs[0]->dtype)) +
                  " differs from input dtype " + std::string(dtype_name(spec.inputs[0]->dtype)));
  }
  return Status::ok();
}

Result<int64_t> normalize_axis(const KernelSpec& spec, int64_t axis, size_t rank) {
  const auto r = static_cast<int64_t>(rank);
  if (axis < -r || axis >= r) {
    return invalid_node(
        spec, "axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank));
  }
  return axis < 0 ? axis + r : axis;
}

Result<std::vector<int64_t>> read_ints(const Tensor& tensor, const std::string& what) {
  if (tensor.dtype() == DType::kI64) {
    const auto v = tensor.values<int64_t>();
    return std::vector<int64_t>(v.begin(), v.end());
  }
  if (tensor.dtype() == DType::kI32) {
    const auto v = tensor.values<int32_t>();
    return std::vector<int64_t>(v.begin(), v.end());
  }
  return invalid_argument(what + " must be int32 or int64, not " +
                          std::string(dtype_name(tensor.dtype())));
}

Result<std::vector<float>> read_floats(const Tensor& tensor, const std::string& what) {
  if (tensor.dtype() != DType::kF32) {
    return unimplemented(what + " must be float32, not " + std::string(dtype_name(tensor.dtype())));
  }
  const auto v = tensor.values<float>();
  return std::vector<float>(v.begin(), v.end());
}

void encode_scalar(double value, DType dtype, std::byte* out) {
  auto put = [&](auto v) { std::memcpy(out, &v, sizeof(v)); };
  switch (dtype) {
    case DType::kF32:
      put(static_cast<float>(value));
      break;
    case DType::kF16:
      put(float_to_half(static_cast<float>(value)));
      break;
    case DType::kBF16:
      put(float_to_bf16(static_cast<float>(value)));
      break;
    case DType::kI8:
      put(static_cast<int8_t>(value));
      break;
    case DType::kU8:
      put(static_cast<uint8_t>(value));
      break;
    case DType::kI32:
      put(static_cast<int32_t>(value));
      break;
    case DType::kI64:
      put(static_cast<int64_t>(value));
      break;
    case DType::kBool:
      put(static_cast<uint8_t>(value != 0.0));
      break;
    case DType::kF64:
      put(value);
      break;
    case DType::kI16:
      put(static_cast<int16_t>(value));
      break;
    // Unsigned targets go through int64 so that a negative value wraps, as it does in numpy.
    case DType::kU16:
      put(static_cast<uint16_t>(static_cast<int64_t>(value)));
      break;
    case DType::kU32:
      put(static_cast<uint32_t>(static_cast<int64_t>(value)));
      break;
    case DType::kU64:
      put(value >= 9223372036854775808.0 ? static_cast<uint64_t>(value)
                                         : static_cast<uint64_t>(static_cast<int64_t>(value)));
      break;
    case DType::kUndefined:
      break;
  }
}

void fill_elements(std::byte* dst, const std::byte* pattern, size_t elem, int64_t count) {
  if (count <= 0) return;
  const bool typed = dispatch_element_size(elem, [&](auto u) {
    using U = decltype(u);
    U value;
    std::memcpy(&value, pattern, sizeof(U));
    for (int64_t i = 0; i < count; ++i) std::memcpy(dst + i * sizeof(U), &value, sizeof(U));
  });
  if (typed) return;
  // Doubling copies: log2(count) memcpy calls for large elements (Expand of whole rows).
  std::memcpy(dst, pattern, elem);
  size_t done = elem;
  const size_t total = elem * static_cast<size_t>(count);
  while (done < total) {
    const size_t n = std::min(done, total - done);
    std::memcpy(dst + done, dst, n);
    done += n;
  }
}

void parallel_copy(std::byte* dst, const std::byte* src, size_t bytes) {
  parallel_range(
      static_cast<int64_t>(bytes),
      [&](int64_t begin, int64_t end) {
        std::memcpy(dst + begin, src + begin, static_cast<size_t>(end - begin));
      },
      kCopyGrainBytes);
}

int64_t StridedView::elements() const {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

StridedView StridedView::simplified() const {
  StridedView out;
  out.offset = offset;
  out.elem = elem;
  if (elements() == 0) {
    out.dims = {0};
    out.strides = {0};
    return out;
  }
  // Built innermost first, then reversed.
  std::vector<int64_t> rev_dims, rev_strides;
  for (size_t a = dims.size(); a-- > 0;) {
    if (dims[a] == 1) continue;
    if (!rev_dims.empty() && strides[a] == rev_strides.back() * rev_dims.back()) {
      rev_dims.back() *= dims[a];
      continue;
    }
    rev_dims.push_back(dims[a]);
    rev_strides.push_back(strides[a]);
  }
  out.dims.assign(rev_dims.rbegin(), rev_dims.rend());
  out.strides.assign(rev_strides.rbegin(), rev_strides.rend());
  // A dense innermost axis becomes part of the element: rows of whole runs, one memcpy each.
  while (!out.dims.empty() && out.strides.back() == out.elem) {
    out.elem *= out.dims.back();
    out.dims.pop_back();
    out.strides.pop_back();
  }
  return out;
}

void copy_strided(const StridedView& view, const std::byte* in, std::byte* out) {
  const int64_t n = view.elements();
  if (n == 0) return;
  if (view.dims.empty()) {
    parallel_copy(out, in + view.offset, static_cast<size_t>(view.elem));
    return;
  }
  const size_t last = view.dims.size() - 1;
  if (view.strides[last] != view.elem && view.strides[last] != 0) {
    for (size_t j = 0; j < last; ++j) {
      if (view.strides[j] != view.elem || view.dims[j] < 4) continue;
      const bool tiled = dispatch_element_size(static_cast<size_t>(view.elem), [&](auto u) {
        copy_tiled<decltype(u)>(view, j, in, out);
      });
      if (tiled) return;
      break;
    }
  }
  copy_rows(view, in, out);
}

StridedView transpose_view(const std::vector<int64_t>& in_dims, const std::vector<int64_t>& perm,
                           int64_t elem) {
  const auto in_strides = row_major_strides(in_dims);
  StridedView view;
  view.elem = elem;
  for (int64_t p : perm) {
    view.dims.push_back(in_dims[static_cast<size_t>(p)]);
    view.strides.push_back(in_strides[static_cast<size_t>(p)] * elem);
  }
  return view;
}

}  // namespace hsched::cpu
