#include "graph/slice_semantics.h"

#include <algorithm>
#include <limits>
#include <numeric>
#include <string>

namespace hsched {

Result<std::vector<SliceAxis>> slice_axes(const std::vector<int64_t>& dims,
                                          const std::vector<int64_t>& starts,
                                          const std::vector<int64_t>& ends,
                                          std::optional<std::vector<int64_t>> axes,
                                          std::optional<std::vector<int64_t>> steps) {
  const auto rank = static_cast<int64_t>(dims.size());
  if (starts.size() != ends.size()) return invalid_argument("starts and ends differ in length");
  if (!axes) {
    axes.emplace(starts.size());
    std::iota(axes->begin(), axes->end(), 0);
  }
  if (!steps) steps.emplace(starts.size(), 1);
  if (axes->size() != starts.size() || steps->size() != starts.size()) {
    return invalid_argument("axes or steps differ in length from starts");
  }
  std::vector<SliceAxis> out;
  for (int64_t d : dims) out.push_back({0, 1, d});
  std::vector<bool> seen(dims.size(), false);
  for (size_t i = 0; i < starts.size(); ++i) {
    int64_t axis = (*axes)[i];
    if (axis < -rank || axis >= rank) {
      return invalid_argument("axis " + std::to_string(axis) + " is out of range for rank " +
                              std::to_string(rank));
    }
    if (axis < 0) axis += rank;
    const auto a = static_cast<size_t>(axis);
    if (seen[a]) return invalid_argument("axis " + std::to_string(axis) + " is repeated");
    seen[a] = true;
    const int64_t d = dims[a];
    const int64_t step = (*steps)[i];
    if (step == 0 || step == std::numeric_limits<int64_t>::min()) {
      return invalid_argument("step " + std::to_string(step) + " is not allowed");
    }
    int64_t b = starts[i], e = ends[i];
    if (b < 0) b = b < -d ? -1 : b + d;  // no overflow for INT64_MIN-like values
    if (e < 0) e = e < -d ? -1 : e + d;
    int64_t count;
    if (d == 0) {
      count = 0;
    } else if (step > 0) {
      b = std::clamp<int64_t>(b, 0, d);
      e = std::clamp<int64_t>(e, 0, d);
      count = e > b ? (e - b - 1) / step + 1 : 0;
    } else {
      b = std::clamp<int64_t>(b, 0, d - 1);
      e = std::clamp<int64_t>(e, -1, d - 1);
      count = b > e ? (b - e - 1) / -step + 1 : 0;
    }
    out[a] = {b, step, count};
  }
  return out;
}

}  // namespace hsched
