// ONNX Runtime's QOperator arithmetic (see qlinear_arith.h).
#include "backends/cpu/kernels/qlinear_arith.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "backends/cpu/kernels/quant_util.h"
#include "backends/cpu/kernels/vector_clones.h"

namespace hsched::cpu {
namespace {

// How one pass computes y from the bytes of a and b (raw bytes, zero points folded into `fixed`
// for the sums; subtracted for the products).
enum class Form : uint8_t {
  kAddAB,      // fma(a, ra, fma(b, rb, fixed)): the graph's operands (a, b)
  kAddBA,      // fma(b, rb, fma(a, ra, fixed)): the graph's operands (b, a)
  kAddAFixed,  // fma(a, ra, fixed): b one value, folded into fixed
  kMul,        // (a - za) * (b - zb) * multiplier + fixed
};

struct Pass {
  Form form = Form::kAddAB;
  float ra = 0, rb = 0, fixed = 0, multiplier = 0;
  int32_t za = 0, zb = 0;
};

// MLAS's QLinearAdd (its AVX2 kernel: fused multiply-adds, the fixed part contracted by its
// compiler too) and QLinearMul (products in int32, one multiply and one add in fp32, kept apart:
// a separate statement is never contracted), rounded to nearest even and saturated.
template <typename Q>
[[gnu::always_inline]] inline void combine(const Q* __restrict a, const Q* __restrict b,
                                           Q* __restrict y, int64_t n, const Pass& p) {
  const auto f = [](Q v) { return static_cast<float>(v); };
  switch (p.form) {
    case Form::kAddAB:
      for (int64_t i = 0; i < n; ++i) {
        y[i] = saturate_round<Q>(std::fma(f(a[i]), p.ra, std::fma(f(b[i]), p.rb, p.fixed)), 0);
      }
      break;
    case Form::kAddBA:
      for (int64_t i = 0; i < n; ++i) {
        y[i] = saturate_round<Q>(std::fma(f(b[i]), p.rb, std::fma(f(a[i]), p.ra, p.fixed)), 0);
      }
      break;
    case Form::kAddAFixed:
      for (int64_t i = 0; i < n; ++i) y[i] = saturate_round<Q>(std::fma(f(a[i]), p.ra, p.fixed), 0);
      break;
    case Form::kMul:
      for (int64_t i = 0; i < n; ++i) {
        const int32_t product = (int32_t{a[i]} - p.za) * (int32_t{b[i]} - p.zb);
        const float scaled = static_cast<float>(product) * p.multiplier;
        y[i] = saturate_round<Q>(scaled + p.fixed, 0);
      }
      break;
  }
}

// One clone per vector width: x86-64-v3 and v4 have FMA (AVX-512F alone does not imply it).
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && \
    !defined(HSCHED_NO_TARGET_CLONES)
#define HSCHED_FMA_CLONES \
  __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define HSCHED_FMA_CLONES HSCHED_VECTOR_CLONES
#endif

HSCHED_FMA_CLONES void combine_u8(const uint8_t* a, const uint8_t* b, uint8_t* y, int64_t n,
                                  const Pass& p) {
  combine(a, b, y, n, p);
}
HSCHED_FMA_CLONES void combine_i8(const int8_t* a, const int8_t* b, int8_t* y, int64_t n,
                                  const Pass& p) {
  combine(a, b, y, n, p);
}
void combine_any(const uint8_t* a, const uint8_t* b, uint8_t* y, int64_t n, const Pass& p) {
  combine_u8(a, b, y, n, p);
}
void combine_any(const int8_t* a, const int8_t* b, int8_t* y, int64_t n, const Pass& p) {
  combine_i8(a, b, y, n, p);
}

template <typename Q>
void binary(const QLinearBinary& op, const Q* a, const Q* b, Q* y, int64_t begin, int64_t end,
            int64_t period) {
  Pass p;
  const float zy = static_cast<float>(op.y.zero_point);
  if (!op.add) {
    p.form = Form::kMul;
    p.multiplier = op.a.scale * op.b.scale / op.y.scale;
    p.fixed = zy;
    p.za = op.a.zero_point;
    p.zb = op.b.zero_point;
  } else {
    const float za = static_cast<float>(op.a.zero_point), zb = static_cast<float>(op.b.zero_point);
    // In the graph's operand order: (b, a) when swapped.
    const QLinearAddTerms t =
        op.swapped ? qlinear_add_terms(op.b.scale, zb, op.a.scale, za, op.y.scale, zy)
                   : qlinear_add_terms(op.a.scale, za, op.b.scale, zb, op.y.scale, zy);
    p.ra = op.swapped ? t.rb : t.ra;
    p.rb = op.swapped ? t.ra : t.rb;
    p.fixed = t.fixed;
    p.form = op.swapped ? Form::kAddBA : Form::kAddAB;
    // MLAS adds an operand of one value to the fixed part, the product rounded apart; the other
    // operand's loop is then one fused multiply-add.
    if (period == 1) {
      const float second = static_cast<float>(b[0]) * p.rb;
      p.fixed = p.fixed + second;
      p.form = Form::kAddAFixed;
      combine_any(a + begin, b, y + begin, end - begin, p);
      return;
    }
  }
  // A product by one value: b repeated, so that each call takes many elements.
  std::vector<Q> repeated;
  if (period == 1) repeated.assign(static_cast<size_t>(std::min<int64_t>(end - begin, 1024)), b[0]);
  const int64_t length = period == 1 ? static_cast<int64_t>(repeated.size()) : period;
  const Q* b_values = period == 1 ? repeated.data() : b;
  for (int64_t i = begin; i < end;) {
    const int64_t j = period == 1 ? 0 : i % period;
    const int64_t n = std::min(end - i, length - j);
    combine_any(a + i, b_values + j, y + i, n, p);
    i += n;
  }
}

// y = saturate(round_half_even(e * y_factor / sum) + zero point) over a row's exponentials; where
// the product can pass fp32's largest value (`overflows`: the table's last entry times y_factor
// does), the quotient first. ONNX Runtime's kernel then writes 0s: floor(1 / y_scale) past about
// 148 times the row length.
template <typename Q>
[[gnu::always_inline]] inline void softmax_quantize(const float* __restrict e, Q* __restrict y,
                                                    int64_t n, float y_factor, float sum,
                                                    int32_t zero_point, bool overflows) {
  if (overflows) {
    for (int64_t i = 0; i < n; ++i) y[i] = saturate_round<Q>(e[i] / sum * y_factor, zero_point);
    return;
  }
  for (int64_t i = 0; i < n; ++i) {
    const float scaled = e[i] * y_factor;
    y[i] = saturate_round<Q>(scaled / sum, zero_point);
  }
}
HSCHED_VECTOR_CLONES void softmax_quantize_u8(const float* e, uint8_t* y, int64_t n, float y_factor,
                                              float sum, int32_t zero_point, bool overflows) {
  softmax_quantize(e, y, n, y_factor, sum, zero_point, overflows);
}
HSCHED_VECTOR_CLONES void softmax_quantize_i8(const float* e, int8_t* y, int64_t n, float y_factor,
                                              float sum, int32_t zero_point, bool overflows) {
  softmax_quantize(e, y, n, y_factor, sum, zero_point, overflows);
}
void softmax_quantize_any(const float* e, uint8_t* y, int64_t n, float y_factor, float sum,
                          int32_t zero_point, bool overflows) {
  softmax_quantize_u8(e, y, n, y_factor, sum, zero_point, overflows);
}
void softmax_quantize_any(const float* e, int8_t* y, int64_t n, float y_factor, float sum,
                          int32_t zero_point, bool overflows) {
  softmax_quantize_i8(e, y, n, y_factor, sum, zero_point, overflows);
}

// Rows in groups of kGroup: each row's sum is taken in its own order (ONNX Runtime's), the
// group's sums interleaved so that their additions overlap.
template <typename Q>
void softmax_rows(const QLinearSoftmaxTable& table, const Q* x, Q* y, int64_t begin, int64_t end,
                  int64_t size, int32_t y_zero_point) {
  constexpr int64_t kGroup = 8;
  std::vector<float> e(static_cast<size_t>(kGroup * size));
  for (int64_t r0 = begin; r0 < end; r0 += kGroup) {
    const int64_t rows = std::min(kGroup, end - r0);
    float sums[kGroup] = {};
    for (int64_t g = 0; g < rows; ++g) {
      const Q* row = x + (r0 + g) * size;
      // The row's largest value takes the table's last entry.
      const int32_t shift = 255 - int32_t{*std::max_element(row, row + size)};
      float* eg = e.data() + g * size;
      for (int64_t i = 0; i < size; ++i) eg[i] = table.exp[int32_t{row[i]} + shift];
    }
    for (int64_t i = 0; i < size; ++i) {
      for (int64_t g = 0; g < rows; ++g) sums[g] += e[static_cast<size_t>(g * size + i)];
    }
    for (int64_t g = 0; g < rows; ++g) {
      softmax_quantize_any(e.data() + g * size, y + (r0 + g) * size, size, table.y_factor, sums[g],
                           y_zero_point, table.overflows);
    }
  }
}

}  // namespace

void qlinear_binary(const QLinearBinary& op, const uint8_t* a, const uint8_t* b, uint8_t* y,
                    int64_t begin, int64_t end, int64_t period) {
  binary(op, a, b, y, begin, end, period);
}
void qlinear_binary(const QLinearBinary& op, const int8_t* a, const int8_t* b, int8_t* y,
                    int64_t begin, int64_t end, int64_t period) {
  binary(op, a, b, y, begin, end, period);
}

void qlinear_softmax_rows(const QLinearSoftmaxTable& table, const uint8_t* x, uint8_t* y,
                          int64_t begin, int64_t end, int64_t size, int32_t y_zero_point) {
  softmax_rows(table, x, y, begin, end, size, y_zero_point);
}
void qlinear_softmax_rows(const QLinearSoftmaxTable& table, const int8_t* x, int8_t* y,
                          int64_t begin, int64_t end, int64_t size, int32_t y_zero_point) {
  softmax_rows(table, x, y, begin, end, size, y_zero_point);
}

}  // namespace hsched::cpu
