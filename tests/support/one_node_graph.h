// The one-node graph every op-level test builds (the conformance table, the CPU kernel tests, the
// OpenCL node tests): one node, its inputs "in<i>" (graph inputs, constants or left out) and its
// outputs "out<i>" (graph outputs, or left out).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "graph/graph.h"

namespace hsched::test {

struct NodeInput {
  enum class Kind { kInput, kConstant, kOmitted };
  Kind kind = Kind::kInput;
  DType dtype = DType::kF32;
  Shape shape;      // kInput
  Tensor constant;  // kConstant: its data (dtype and shape its own)

  static NodeInput input(DType dtype, Shape shape) {
    return {Kind::kInput, dtype, std::move(shape), {}};
  }
  static NodeInput constant_of(Tensor tensor) {
    const DType dtype = tensor.dtype();
    return {Kind::kConstant, dtype, {}, std::move(tensor)};
  }
  static NodeInput omitted() { return {Kind::kOmitted, DType::kUndefined, {}, {}}; }
};

struct NodeOutput {
  DType dtype = DType::kF32;
  Shape shape;
  bool omitted = false;  // an optional output left out
};

// A graph of the one node `op` (named `name`) at `opset`; the node is graph.node(0).
inline Graph one_node_graph(const std::string& name, const std::string& op,
                            const AttributeMap& attributes, const std::vector<NodeInput>& inputs,
                            const std::vector<NodeOutput>& outputs, int64_t opset) {
  Graph graph;
  graph.name = name;
  graph.opset = opset;
  Node node;
  node.name = name;
  node.op_type = op;
  node.attributes = attributes;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const NodeInput& in = inputs[i];
    const std::string value = "in" + std::to_string(i);
    if (in.kind == NodeInput::Kind::kOmitted) {
      node.inputs.push_back(kNoValue);
    } else if (in.kind == NodeInput::Kind::kConstant) {
      node.inputs.push_back(graph.add_constant(value, in.constant));
    } else {
      const ValueId id = graph.add_value(value, in.dtype, in.shape);
      graph.add_input(id);
      node.inputs.push_back(id);
    }
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    if (outputs[i].omitted) {
      node.outputs.push_back(kNoValue);
      continue;
    }
    const ValueId id =
        graph.add_value("out" + std::to_string(i), outputs[i].dtype, outputs[i].shape);
    graph.add_output(id);
    node.outputs.push_back(id);
  }
  graph.add_node(std::move(node));
  return graph;
}

}  // namespace hsched::test
