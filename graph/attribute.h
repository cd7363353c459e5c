// Typed node attributes, as ONNX defines them (subgraph attributes are not represented).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <variant>
#include <vector>

#include "hsched/tensor.h"

namespace hsched {

using Attribute = std::variant<int64_t, float, std::string, std::vector<int64_t>,
                               std::vector<float>, std::vector<std::string>, Tensor>;

// Ordered by name so that everything derived from it (reports, hashes) is deterministic.
using AttributeMap = std::map<std::string, Attribute>;

}  // namespace hsched
