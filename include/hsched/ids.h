// Indices of a model graph's values and nodes, as plans and reports name them.
#pragma once

#include <cstdint>

namespace hsched {

using ValueId = int32_t;
using NodeId = int32_t;
inline constexpr ValueId kNoValue = -1;  // an optional input left out ("" in ONNX)
inline constexpr NodeId kNoNode = -1;

}  // namespace hsched
