// The fixture of the node-level conformance tests (node_ops_*_test.cpp): one-node graphs run by
// the CPU backend (the reference) and by enqueue_node on the first OpenCL device, in fp32 and
// fp16 storage. Op programs are built once per suite (a PoCL build takes seconds); skipped, never
// passed, without an OpenCL device.
#pragma once

#include <cmath>
#include <map>
#include <memory>
#include <random>

#include <CL/cl_half.h>
#include <gtest/gtest.h>

#include "backends/cpu/program.h"
#include "backends/opencl/kernels/node_ops.h"
#include "backends/opencl/opencl_test_util.h"
#include "support/one_node_graph.h"
#include "support/temp_dir.h"

namespace hsched::opencl {

// One input of the node under test.
struct TestInput {
  enum class Kind { kInput, kWeight, kHost, kOmitted };
  Kind kind = Kind::kInput;
  Shape shape;
  float low = -2.0f, high = 2.0f;  // random values (kInput, kWeight)
  Tensor host;                     // kHost: a constant read on the host (shapes, scales, bounds)
};

inline TestInput input(Shape shape, float low = -2.0f, float high = 2.0f) {
  return {TestInput::Kind::kInput, std::move(shape), low, high, {}};
}
inline TestInput weight(Shape shape, float low = -1.0f, float high = 1.0f) {
  return {TestInput::Kind::kWeight, std::move(shape), low, high, {}};
}
inline TestInput host_floats(Shape shape, const std::vector<float>& values) {
  return {TestInput::Kind::kHost, shape, 0, 0, Tensor::from_vector(DType::kF32, shape, values)};
}
inline TestInput host_ints(Shape shape, const std::vector<int64_t>& values) {
  return {TestInput::Kind::kHost, shape, 0, 0, Tensor::from_vector(DType::kI64, shape, values)};
}
inline TestInput omitted() { return {TestInput::Kind::kOmitted, {}, 0, 0, {}}; }

// A one-node graph: inputs "in<i>" (graph inputs or constants), outputs "out<i>" of f32.
struct OneNodeGraph {
  Graph graph;
  std::vector<Tensor> feeds;  // graph inputs, in order
  NodeId node = kNoNode;
};

inline OneNodeGraph one_node_graph(const std::string& op, const AttributeMap& attributes,
                                   const std::vector<TestInput>& inputs,
                                   const std::vector<Shape>& outputs, int64_t opset,
                                   const std::function<float(float)>& round, uint32_t seed) {
  using hsched::test::NodeInput;
  OneNodeGraph g;
  std::mt19937 rng(seed);
  std::vector<NodeInput> node_inputs;
  for (const TestInput& in : inputs) {
    if (in.kind == TestInput::Kind::kOmitted) {
      node_inputs.push_back(NodeInput::omitted());
      continue;
    }
    if (in.kind == TestInput::Kind::kHost) {
      node_inputs.push_back(NodeInput::constant_of(in.host));
      continue;
    }
    int64_t count = 1;
    for (int64_t d : in.shape) count *= d;
    if (count < 0) {  // a dynamic shape (for check_node tests): no data
      node_inputs.push_back(NodeInput::input(DType::kF32, in.shape));
      continue;
    }
    std::uniform_real_distribution<float> dist(in.low, in.high);
    std::vector<float> values(static_cast<size_t>(count));
    for (float& v : values) v = round(dist(rng));
    Tensor tensor = Tensor::from_vector(DType::kF32, in.shape, values);
    if (in.kind == TestInput::Kind::kWeight) {
      node_inputs.push_back(NodeInput::constant_of(std::move(tensor)));
    } else {
      node_inputs.push_back(NodeInput::input(DType::kF32, in.shape));
      g.feeds.push_back(std::move(tensor));
    }
  }
  std::vector<hsched::test::NodeOutput> node_outputs;
  for (const Shape& shape : outputs) node_outputs.push_back({DType::kF32, shape});
  g.graph = hsched::test::one_node_graph(op + "_under_test", op, attributes, node_inputs,
                                         node_outputs, opset);
  g.node = 0;
  return g;
}

class NodeOpsTest : public opencl_test::StorageTest {
 protected:
  // The kernels expect_matches_cpu runs where set, else ops().
  std::optional<opencl::OpKernels> kernels_;

  using StorageTest::upload;
  cl::Buffer upload(const Tensor& tensor) {
    const auto values = tensor.values<float>();
    return upload(std::vector<float>(values.begin(), values.end()));
  }

  // Runs op on the CPU backend and through enqueue_node; expects the outputs to agree within
  // 1e-4 + 1e-3 |cpu| (fp32 storage) or 5e-2 + 5e-2 |cpu| (fp16). `what` names the case.
  void expect_matches_cpu(const std::string& what, const std::string& op,
                          const AttributeMap& attributes, const std::vector<TestInput>& inputs,
                          const std::vector<Shape>& outputs, int64_t opset = 17,
                          uint32_t seed = 5) {
    SCOPED_TRACE(what);
    OneNodeGraph g = one_node_graph(
        op, attributes, inputs, outputs, opset, [this](float v) { return round(v); }, seed);
    const Node& node = g.graph.node(g.node);
    const std::optional<Refusal> rejected = check_node(g.graph, node);
    ASSERT_FALSE(rejected.has_value()) << rejected->detail;

    auto cpu = cpu::CpuProgram::compile(g.graph, {});
    ASSERT_TRUE(cpu.is_ok()) << "CPU compile: " << cpu.status().message();
    auto want = (*cpu)->run(g.feeds);
    ASSERT_TRUE(want.is_ok()) << "CPU run: " << want.status().message();

    NodeOperands operands;
    operands.opset = opset;
    std::vector<std::unique_ptr<cl::Buffer>> buffers;
    size_t feed = 0;
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      Operand operand;
      if (node.inputs[i] != kNoValue) {
        const Value& v = g.graph.value(node.inputs[i]);
        operand.shape = v.shape.dims;
        if (v.constant) operand.constant = &*v.constant;
        if (inputs[i].kind != TestInput::Kind::kHost) {
          const Tensor& data = v.constant ? *v.constant : g.feeds[feed++];
          buffers.push_back(std::make_unique<cl::Buffer>(upload(data)));
          operand.buffer = buffers.back().get();
        }
      }
      operands.inputs.push_back(operand);
    }
    for (const Shape& shape : outputs) {
      int64_t count = 1;
      for (int64_t d : shape) count *= d;
      buffers.push_back(std::make_unique<cl::Buffer>(
          upload(Tensor::from_vector(DType::kF32, shape, std::vector<float>(count, NAN)))));
      operands.outputs.push_back(buffers.back().get());
      operands.output_shapes.push_back(shape);
    }
    auto event = enqueue_node(kernels_ ? *kernels_ : ops(), queue_, node, operands, {});
    ASSERT_TRUE(event.is_ok()) << event.status().message();
    ASSERT_EQ(event->wait(), CL_SUCCESS);
    const float abs_tol = half() ? 5e-2f : 1e-4f;
    const float rel_tol = half() ? 5e-2f : 1e-3f;
    for (size_t o = 0; o < outputs.size(); ++o) {
      const auto expected = (*want)[o].values<float>();
      const std::vector<float> got =
          download(*operands.outputs[o], static_cast<int64_t>(expected.size()));
      int failures = 0;
      for (size_t i = 0; i < got.size() && failures < 5; ++i) {
        if (!(std::fabs(got[i] - expected[i]) <= abs_tol + rel_tol * std::fabs(expected[i]))) {
          ADD_FAILURE() << what << " output " << o << " [" << i << "]: opencl " << got[i]
                        << ", cpu " << expected[i];
          ++failures;
        }
      }
    }
  }

};

// check_node's answer for a one-node graph (no device needed).
inline std::optional<Refusal> check_one(const std::string& op, const AttributeMap& attributes,
                                            const std::vector<TestInput>& inputs,
                                            const std::vector<Shape>& outputs, int64_t opset = 17) {
  OneNodeGraph g = one_node_graph(
      op, attributes, inputs, outputs, opset, [](float v) { return v; }, 1);
  return check_node(g.graph, g.graph.node(g.node));
}

}  // namespace hsched::opencl
