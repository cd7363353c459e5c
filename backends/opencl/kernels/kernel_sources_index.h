// OpenCL C of the index kernels (ops_index.h): index maps (each output element reads the input
// element its coordinates map to, axis by axis, or a fill value), gathers and scatters by int64
// indices, and TopK. Built into the elementwise program after kIntegerSource, for the storage
// type and for int32/int64 data.
#pragma once

namespace hsched::opencl {

inline constexpr const char* kIndexSource = R"CL(
// Output dims, input dims and strides, right-aligned to rank 6, and where the input starts along
// each output axis (a pad's begin; negative crops).
typedef struct {
  int dims[6];
  int in_dims[6];
  int in_strides[6];
  int begin[6];
} IndexMap;

// The input element of output element i, or -1 for the fill value. mode: 0 constant (outside the
// input: the fill), 1 edge (clamped), 2 reflect (mirrored without repeating the edge), 3 wrap
// (periodic: Pad's wrap, Tile).
int mapped_index(const IndexMap* map, int mode, int i) {
  int rest = i, at = 0;
  for (int d = 5; d >= 0; --d) {
    const int n = map->in_dims[d];
    int c = rest % map->dims[d] - map->begin[d];
    rest /= map->dims[d];
    if (c < 0 || c >= n) {
      if (mode == 0 || n == 0) return -1;
      if (mode == 1) {
        c = c < 0 ? 0 : n - 1;
      } else if (mode == 2) {
        const int period = 2 * (n - 1);
        c = n == 1 ? 0 : ((c % period) + period) % period;
        if (c >= n) c = period - c;
      } else {
        c = ((c % n) + n) % n;
      }
    }
    at += c * map->in_strides[d];
  }
  return at;
}

__kernel void index_map(__global const storage_t* x, __global storage_t* y, IndexMap map,
                        int mode, float fill, int count) {
  const int i = get_global_id(0);
  if (i >= count) return;
  const int at = mapped_index(&map, mode, i);
  STORE(at < 0 ? fill : LOAD(x, at), y, i);
}

#define INDEX_MAP_KERNEL(T, S)                                                               \
  __kernel void int_index_map_##S(__global const T* x, __global T* y, IndexMap map, int mode, \
                                  long fill, int count) {                                    \
    const int i = get_global_id(0);                                                          \
    if (i >= count) return;                                                                  \
    const int at = mapped_index(&map, mode, i);                                              \
    y[i] = at < 0 ? (T)fill : x[at];                                                         \
  }

INDEX_MAP_KERNEL(int, i32)
INDEX_MAP_KERNEL(long, i64)

// GatherElements and ScatterElements: the indices' dims (right-aligned to rank 6), the data's
// strides, the axis (of the 6) and the data's size along it.
typedef struct {
  int dims[6];
  int x_strides[6];
  int axis;
  int axis_dim;
} ElementsMap;

// GatherND and ScatterND: the data's dims and strides (from axis 0), the index depth k, the batch
// dims, the elements of one gathered slice, the index rows per batch and the data's elements per
// batch.
typedef struct {
  int x_dims[6];
  int x_strides[6];
  int k;
  int batch_dims;
  int slice;
  int rows_per_batch;
  int batch_stride;
} NdMap;

// The data offset of element i of the indices (ElementsMap), less the axis, and its index along
// the axis; -1 (and bit 2 of *error) for an index out of range.
int element_at(const ElementsMap* m, __global const long* idx, int i, __global int* error) {
  int rest = i, at = 0;
  for (int d = 5; d >= 0; --d) {
    const int c = rest % m->dims[d];
    rest /= m->dims[d];
    if (d != m->axis) at += c * m->x_strides[d];
  }
  long v = idx[i];
  if (v < 0) v += m->axis_dim;
  if (v < 0 || v >= m->axis_dim) {
    atomic_or(error, 2);
    return -1;
  }
  return at + (int)v * m->x_strides[m->axis];
}

// The data offset of index row r (NdMap); -1 (and bit 2 of *error) for an index out of range.
int row_at(const NdMap* m, __global const long* idx, int r, __global int* error) {
  int at = (r / m->rows_per_batch) * m->batch_stride;
  for (int j = 0; j < m->k; ++j) {
    const int axis = m->batch_dims + j;
    long v = idx[r * m->k + j];
    if (v < 0) v += m->x_dims[axis];
    if (v < 0 || v >= m->x_dims[axis]) {
      atomic_or(error, 2);
      return -1;
    }
    at += (int)v * m->x_strides[axis];
  }
  return at;
}

// reduction: 0 none, 1 add, 2 mul, 3 max, 4 min (NaN as std::max and std::min keep it).
#define COMBINE(y, u, reduction)                           \
  ((reduction) == 1   ? (y) + (u)                          \
   : (reduction) == 2 ? (y) * (u)                          \
   : (reduction) == 3 ? ((y) < (u) ? (u) : (y))            \
   : (reduction) == 4 ? ((u) < (y) ? (u) : (y))            \
                      : (u))

// The scatters run as one work item, in the order of the indices (as the CPU's), so that repeated
// indices combine deterministically.
#define GATHER_SCATTER_KERNELS(T, ACC, S, LD, ST)                                               \
  __kernel void gather_elements##S(__global const T* x, __global const long* idx,             \
                                   __global T* y, ElementsMap m, __global int* error,         \
                                   int count) {                                               \
    const int i = get_global_id(0);                                                           \
    if (i >= count) return;                                                                   \
    const int at = element_at(&m, idx, i, error);                                             \
    ST(at < 0 ? (ACC)0 : LD(x, at), y, i);                                                    \
  }                                                                                           \
  __kernel void scatter_elements##S(__global T* y, __global const long* idx,                 \
                                    __global const T* updates, ElementsMap m, int reduction,  \
                                    __global int* error, int n, int count) {                  \
    if (get_global_id(0) != 0) return;                                                        \
    for (int i = 0; i < n; ++i) {                                                             \
      const int at = element_at(&m, idx, i, error);                                           \
      if (at < 0) continue;                                                                   \
      const ACC u = LD(updates, i), v = LD(y, at);                                            \
      ST(COMBINE(v, u, reduction), y, at);                                                    \
    }                                                                                         \
  }                                                                                           \
  __kernel void gather_nd##S(__global const T* x, __global const long* idx, __global T* y,   \
                             NdMap m, __global int* error, int count) {                       \
    const int i = get_global_id(0);                                                           \
    if (i >= count) return;                                                                   \
    const int at = row_at(&m, idx, i / m.slice, error);                                       \
    ST(at < 0 ? (ACC)0 : LD(x, at + i % m.slice), y, i);                                      \
  }                                                                                           \
  __kernel void scatter_nd##S(__global T* y, __global const long* idx,                       \
                              __global const T* updates, NdMap m, int reduction,              \
                              __global int* error, int rows, int count) {                     \
    if (get_global_id(0) != 0) return;                                                        \
    for (int r = 0; r < rows; ++r) {                                                          \
      const int at = row_at(&m, idx, r, error);                                               \
      if (at < 0) continue;                                                                   \
      for (int s = 0; s < m.slice; ++s) {                                                     \
        const ACC u = LD(updates, r * m.slice + s), v = LD(y, at + s);                        \
        ST(COMBINE(v, u, reduction), y, at + s);                                              \
      }                                                                                       \
    }                                                                                         \
  }

#define LOAD_INTEGER(p, i) ((p)[i])
#define STORE_INTEGER(v, p, i) ((p)[i] = (v))
GATHER_SCATTER_KERNELS(storage_t, float, , LOAD, STORE)
GATHER_SCATTER_KERNELS(int, int, _i32, LOAD_INTEGER, STORE_INTEGER)
GATHER_SCATTER_KERNELS(long, long, _i64, LOAD_INTEGER, STORE_INTEGER)

// Gather along an axis by q indices of type T on the device (a graph input's token ids): y[o, j,
// r] = x[o, idx[j], r] over rows of `inner`, `a` along the axis; an index out of range gives 0
// and sets bit 2 of *error (as element_at). Data held in the storage type (8-bit too).
#define GATHER_ROWS_BY(T, S)                                                                  \
  __kernel void gather_rows_by##S(__global const storage_t* x, __global storage_t* y,         \
                                  __global const T* idx, int q, int inner, int a,             \
                                  __global int* error, int count) {                           \
    const int i = get_global_id(0);                                                           \
    if (i >= count) return;                                                                   \
    const int o = i / (q * inner), rest = i % (q * inner);                                    \
    long v = idx[rest / inner];                                                               \
    if (v < 0) v += a;                                                                        \
    if (v < 0 || v >= a) {                                                                    \
      atomic_or(error, 2);                                                                    \
      STORE(0.0f, y, i);                                                                      \
      return;                                                                                 \
    }                                                                                         \
    STORE(LOAD(x, (o * a + (int)v) * inner + rest % inner), y, i);                            \
  }
GATHER_ROWS_BY(int, _i32)
GATHER_ROWS_BY(long, _i64)

// Generators. Range: y[i] = start + i * delta (ONNX's formula, not repeated addition). EyeLike:
// ones where column - row == k of [h, w]. OneHot: y [outer, depth, inner] from int64 indices
// [outer, inner] (negative from the end; outside [0, depth) all off), values [off, on].
#pragma OPENCL FP_CONTRACT OFF
__kernel void range_values(__global storage_t* y, float start, float delta, int count) {
  const int i = get_global_id(0);
  if (i < count) STORE(start + (float)i * delta, y, i);
}
__kernel void eye(__global storage_t* y, int w, int k, int count) {
  const int i = get_global_id(0);
  if (i < count) STORE(i % w - i / w == k ? 1.0f : 0.0f, y, i);
}
__kernel void one_hot(__global const long* idx, __global const storage_t* values,
                      __global storage_t* y, int depth, int inner, int count) {
  const int i = get_global_id(0);
  if (i >= count) return;
  const int o = i / (depth * inner), j = (i / inner) % depth, in = i % inner;
  long v = idx[o * inner + in];
  if (v < 0) v += depth;
  STORE(LOAD(values, v == j ? 1 : 0), y, i);
}
#define GENERATOR_KERNELS(T, S)                                                              \
  __kernel void int_range_##S(__global T* y, long start, long delta, int count) {            \
    const int i = get_global_id(0);                                                          \
    if (i < count) y[i] = (T)(start + (long)i * delta);                                      \
  }                                                                                          \
  __kernel void int_eye_##S(__global T* y, int w, int k, int count) {                        \
    const int i = get_global_id(0);                                                          \
    if (i < count) y[i] = i % w - i / w == k ? 1 : 0;                                        \
  }                                                                                          \
  __kernel void int_one_hot_##S(__global const long* idx, __global const T* values,          \
                                __global T* y, int depth, int inner, int count) {            \
    const int i = get_global_id(0);                                                          \
    if (i >= count) return;                                                                  \
    const int o = i / (depth * inner), j = (i / inner) % depth, in = i % inner;              \
    long v = idx[o * inner + in];                                                            \
    if (v < 0) v += depth;                                                                   \
    y[i] = values[v == j ? 1 : 0];                                                           \
  }
GENERATOR_KERNELS(int, i32)
GENERATOR_KERNELS(long, i64)

// ReverseSequence: the first lens[b] elements along the time axis of each batch reversed, the
// rest copied; a length outside [0, time] copies the sequence and sets bit 2 of *error. dims and
// strides right-aligned to rank 6, the two axes among the 6.
#define REVERSE_SEQUENCE_KERNEL(T, S, LD, ST)                                                 \
  __kernel void reverse_sequence##S(__global const T* x, __global const long* lens,           \
                                    __global T* y, IndexMap map, int batch_axis,              \
                                    int time_axis, __global int* error, int count) {          \
    const int i = get_global_id(0);                                                           \
    if (i >= count) return;                                                                   \
    int rest = i, b = 0, t = 0;                                                               \
    for (int d = 5; d >= 0; --d) {                                                            \
      const int c = rest % map.dims[d];                                                       \
      rest /= map.dims[d];                                                                    \
      if (d == batch_axis) b = c;                                                             \
      if (d == time_axis) t = c;                                                              \
    }                                                                                         \
    const long len = lens[b];                                                                 \
    int from = t;                                                                             \
    if (len < 0 || len > map.dims[time_axis]) {                                               \
      atomic_or(error, 2);                                                                    \
    } else if (t < len) {                                                                     \
      from = (int)len - 1 - t;                                                                \
    }                                                                                         \
    ST(LD(x, i + (from - t) * map.in_strides[time_axis]), y, i);                              \
  }
REVERSE_SEQUENCE_KERNEL(storage_t, , LOAD, STORE)
REVERSE_SEQUENCE_KERNEL(int, _i32, LOAD_INTEGER, STORE_INTEGER)
REVERSE_SEQUENCE_KERNEL(long, _i64, LOAD_INTEGER, STORE_INTEGER)

// Whether (a, ai) ranks before (b, bi) in TopK's order: larger (or smaller) values first, NaN
// above every number, ties by the lower index (as the CPU's).
int ranks_before(float a, int ai, float b, int bi, int largest) {
  const int an = isnan(a), bn = isnan(b);
  const int a_first = (an || bn) ? (largest ? !bn : !an) : (largest ? a > b : a < b);
  const int b_first = (an || bn) ? (largest ? !an : !bn) : (largest ? b > a : b < a);
  if (a_first != b_first) return a_first;
  return ai < bi;
}

// TopK along the middle axis of x [outer, n, inner]: values and int64 indices [outer, k, inner],
// in order; one work item per row, k passes over it.
__kernel void top_k(__global const storage_t* x, __global storage_t* values,
                    __global long* indices, int n, int inner, int k, int largest, int count) {
  const int i = get_global_id(0);
  if (i >= count) return;
  const int o = i / inner, in = i % inner;
  const int base = o * n * inner + in;
  float last = 0.0f;
  int last_at = -1;
  for (int j = 0; j < k; ++j) {
    int best_at = -1;
    float best = 0.0f;
    for (int c = 0; c < n; ++c) {
      const float v = LOAD(x, base + c * inner);
      if (last_at >= 0 && !ranks_before(last, last_at, v, c, largest)) continue;
      if (best_at < 0 || ranks_before(v, c, best, best_at, largest)) {
        best = v;
        best_at = c;
      }
    }
    const int out = (o * k + j) * inner + in;
    STORE(best, values, out);
    indices[out] = best_at;
    last = best;
    last_at = best_at;
  }
}
)CL";

}  // namespace hsched::opencl
