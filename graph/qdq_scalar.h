// One value a QDQ graph makes from constants alone, for the backends' QDQ fusions.
#pragma once

#include <cstdint>
#include <optional>

#include "graph/graph.h"

namespace hsched {

// The one value of f32 `v` where it is a constant of one element, the DequantizeLinear of an
// 8-bit one, or the DequantizeLinear of a QuantizeLinear of an f32 one (ONNX Runtime's quantizer
// writes a GELU's 1 and 0.5 so), each per tensor with constant parameters: (x - zero) * scale and
// saturate(round_half_even(x / scale) + zero), as ONNX defines them. nullopt otherwise (what a
// backend's folding computes, so a fusion may read a folded value before it is folded).
std::optional<float> qdq_constant_scalar(const Graph& graph, ValueId v);

// The 8-bit value behind such a DequantizeLinear (not a plain f32 constant): its integer, the
// DequantizeLinear's scale and zero point, and the data's dtype (u8 or i8).
struct QdqConstantByte {
  int32_t stored = 0;
  float scale = 1.0f;
  int32_t zero = 0;
  DType dtype = DType::kU8;
};
std::optional<QdqConstantByte> qdq_constant_byte(const Graph& graph, ValueId v);

}  // namespace hsched
