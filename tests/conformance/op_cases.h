// The cross-backend conformance table (in the manner of ggml's test-backend-ops and IREE's CTS):
// one-node graphs over the common ops, each with its attributes, input shapes and dtypes, which
// inputs are constants (weights, axes, shapes), and whether fp16 is meaningful for it. Inputs are
// seeded from the case's name, so every run and every device sees the same numbers.
// conformance_test.cpp runs every case on every device of this machine against the CPU in fp32;
// ops_matrix.cpp turns the same table into docs/ops.md.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "graph/graph.h"

namespace hsched::conformance {

// One input of a case's node.
struct InputSpec {
  DType dtype = DType::kF32;
  std::vector<int64_t> dims;
  bool constant = false;  // a graph constant (weights, shapes, axes), else a graph input
  bool omitted = false;   // an optional input left out ("" in ONNX)
  // Seeded data: floats uniform in [lo, hi]; integers uniform in [lo, hi] rounded; bools 50/50.
  float lo = -1.f;
  float hi = 1.f;
  std::vector<int64_t> ints;  // explicit integer values (shapes, axes, indices), when given
  std::vector<float> floats;  // explicit float values (scales, exponents), when given
};

struct OutputSpec {
  DType dtype = DType::kF32;
  std::vector<int64_t> dims;
};

struct OpCase {
  std::string name;  // unique, a gtest name: letters, digits and '_'
  std::string op;
  AttributeMap attributes;
  std::vector<InputSpec> inputs;
  std::vector<OutputSpec> outputs;
  bool fp16 = true;  // false where fp16 does not apply (integer data, casts)
  int64_t opset = 17;
};

// The table, in a fixed order (the rows of docs/ops.md).
const std::vector<OpCase>& op_cases();

// The case named `name`, or nullptr.
const OpCase* find_op_case(const std::string& name);

// The case as a one-node graph: graph inputs "in<i>" for the non-constant inputs, constants
// "in<i>" with the seeded data, outputs "out<i>".
Graph build_graph(const OpCase& op_case);

// The seeded tensors of the case's graph inputs, in the graph's input order.
std::vector<Tensor> make_inputs(const OpCase& op_case);

}  // namespace hsched::conformance
