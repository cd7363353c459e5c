// What `hsched info` reports about a model: inputs/outputs, op histogram, parameters,
// GFLOP, a peak activation memory estimate and the count of tensors not statically shaped.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "graph/graph.h"

namespace hsched {

struct TensorSummary {
  std::string name;
  DType dtype = DType::kUndefined;
  Shape shape;
};

struct ModelSummary {
  std::string model;                 // file name or built-in model name
  int64_t opset = 0;
  std::vector<TensorSummary> inputs;
  std::vector<TensorSummary> outputs;
  int64_t nodes = 0;
  std::map<std::string, int64_t> ops;  // op type -> count
  int64_t params = 0;                // elements of the initializers nodes read or outputs name
  int64_t param_bytes = 0;
  double gflop = 0;                  // total over nodes; 1 multiply-add = 2 FLOP
  int64_t peak_activation_bytes = 0; // live activations at the worst point of a topological run
  int64_t non_static_tensors = 0;    // values without a static shape or known dtype (0 is the goal)
};

ModelSummary summarize(const Graph& graph, const std::string& model_name);

nlohmann::json summary_to_json(const ModelSummary& summary);
std::string summary_to_text(const ModelSummary& summary);

}  // namespace hsched
