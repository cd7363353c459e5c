// Tensor shapes: static after shape inference or --input-shape; kDynamicDim marks what is not.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "hsched/status.h"

namespace hsched {

inline constexpr int64_t kDynamicDim = -1;

// Bounds applied to every size read from a model or a flag: models are untrusted input.
inline constexpr size_t kMaxRank = 16;
inline constexpr int64_t kMaxDim = int64_t{1} << 40;
inline constexpr int64_t kMaxElements = int64_t{1} << 34;     // 16 G elements
inline constexpr int64_t kMaxTensorBytes = int64_t{1} << 36;  // 64 GiB

struct Shape {
  std::vector<int64_t> dims;   // kDynamicDim where unknown
  bool rank_known = false;     // false: nothing is known, not even the rank

  Shape() = default;
  Shape(std::vector<int64_t> d) : dims(std::move(d)), rank_known(true) {}  // NOLINT
  Shape(std::initializer_list<int64_t> d) : dims(d), rank_known(true) {}

  size_t rank() const { return dims.size(); }
  bool is_static() const;
  // Product of the dims; only meaningful when is_static(). Callers bound it with checked_elements.
  int64_t elements() const;
  std::string to_string() const;  // "1x3x224x224", "?x3" or "?" when the rank is unknown
  bool operator==(const Shape& other) const = default;
};

// Element count of `dims`, refused when a dim is negative or the product of the non-zero dims
// passes kMaxElements (so that no product of dims overflows, even for an empty tensor).
Result<int64_t> checked_elements(const std::vector<int64_t>& dims);

// Parses "1,3,224,224" (as given to --input-shape); every dim must be in [0, kMaxDim].
Result<std::vector<int64_t>> parse_dims(const std::string& text);

}  // namespace hsched
