#include "hsched/shape.h"

#include <charconv>

namespace hsched {

bool Shape::is_static() const {
  if (!rank_known) return false;
  for (int64_t d : dims) {
    if (d < 0) return false;
  }
  return true;
}

int64_t Shape::elements() const {
  // Empty whatever the other dims are (their product alone may overflow).
  for (int64_t d : dims) {
    if (d == 0) return 0;
  }
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

std::string Shape::to_string() const {
  if (!rank_known) return "?";
  if (dims.empty()) return "scalar";
  std::string out;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i) out += 'x';
    out += dims[i] < 0 ? "?" : std::to_string(dims[i]);
  }
  return out;
}

Result<int64_t> checked_elements(const std::vector<int64_t>& dims) {
  if (dims.size() > kMaxRank) {
    return invalid_argument("rank " + std::to_string(dims.size()) + " exceeds the limit of " +
                            std::to_string(kMaxRank));
  }
  // The extent (the product of the non-zero dims) is bounded too, so that no product of any of
  // the dims overflows (strides, broadcasts), even of an empty tensor.
  int64_t extent = 1;
  bool empty = false;
  for (int64_t d : dims) {
    if (d < 0) return invalid_argument("negative dimension " + std::to_string(d));
    if (d > kMaxDim) {
      return invalid_argument("dimension " + std::to_string(d) + " exceeds the limit of " +
                              std::to_string(kMaxDim));
    }
    if (d == 0) {
      empty = true;
      continue;
    }
    if (extent > kMaxElements / d) {
      return invalid_argument("element count exceeds the limit of " +
                              std::to_string(kMaxElements));
    }
    extent *= d;
  }
  return empty ? 0 : extent;
}

Result<std::vector<int64_t>> parse_dims(const std::string& text) {
  std::vector<int64_t> dims;
  if (text.empty()) return dims;  // a scalar
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t comma = text.find(',', pos);
    if (comma == std::string::npos) comma = text.size();
    const char* first = text.data() + pos;
    const char* last = text.data() + comma;
    int64_t value = 0;
    auto [end, ec] = std::from_chars(first, last, value);
    if (ec != std::errc() || end != last || first == last) {
      return invalid_argument("'" + std::string(first, last) + "' is not a dimension");
    }
    if (value < 0 || value > kMaxDim) {
      return invalid_argument("dimension " + std::to_string(value) + " is out of range [0, " +
                              std::to_string(kMaxDim) + "]");
    }
    dims.push_back(value);
    if (dims.size() > kMaxRank) return invalid_argument("more than 16 dimensions");
    pos = comma + 1;
  }
  return dims;
}

}  // namespace hsched
