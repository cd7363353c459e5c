// Helpers for the OpenVINO IR tests: small graphs built in code, and the round trip
// write_ir -> read_ir run on the CPU backend next to the original graph.
#pragma once

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "backends/cpu/op_test_util.h"
#include "backends/cpu/program.h"
#include "backends/level_zero/ir/ir.h"
#include "graph/graph.h"

namespace hsched::ir::test {

// Builds a graph node by node (in topological order, opset 17).
class GraphBuilder {
 public:
  GraphBuilder() {
    graph_.opset = 17;
    graph_.name = "test";
  }

  ValueId input(const std::string& name, std::vector<int64_t> dims, DType dtype = DType::kF32) {
    const ValueId id = graph_.add_value(name, dtype, Shape(std::move(dims)));
    graph_.add_input(id);
    return id;
  }
  ValueId constant(const std::string& name, Tensor tensor) {
    return graph_.add_constant(name, std::move(tensor));
  }
  ValueId weights(const std::string& name, std::vector<int64_t> dims, uint32_t seed,
                  float lo = -0.5f, float hi = 0.5f) {
    return constant(name, cpu::test::random_f32(std::move(dims), seed, lo, hi));
  }
  ValueId ints(const std::string& name, std::vector<int64_t> values) {
    const auto n = static_cast<int64_t>(values.size());
    return constant(name, Tensor::from_vector(DType::kI64, {n}, values));
  }
  ValueId scalar(const std::string& name, float value) {
    return constant(name, Tensor::from_vector(DType::kF32, {}, std::vector<float>{value}));
  }
  // Adds `op` reading `inputs`, producing one output of `dims` (f32 unless `dtype` says)
  // named "<name>_out".
  ValueId node(const std::string& op, std::vector<ValueId> inputs, std::vector<int64_t> dims,
               AttributeMap attributes = {}, std::string name = "", DType dtype = DType::kF32) {
    if (name.empty()) name = op + std::to_string(graph_.nodes().size());
    const ValueId out = graph_.add_value(name + "_out", dtype, Shape(std::move(dims)));
    Node n;
    n.name = name;
    n.op_type = op;
    n.inputs = std::move(inputs);
    n.outputs = {out};
    n.attributes = std::move(attributes);
    graph_.add_node(std::move(n));
    return out;
  }
  void output(ValueId id) { graph_.add_output(id); }
  Graph& graph() { return graph_; }

 private:
  Graph graph_;
};

// Seeded inputs for every graph input, uniform in [lo, hi).
inline std::vector<Tensor> random_inputs(const Graph& graph, uint32_t seed, float lo = -1.0f,
                                         float hi = 1.0f) {
  std::vector<Tensor> inputs;
  for (ValueId id : graph.inputs()) {
    inputs.push_back(cpu::test::random_f32(graph.value(id).shape.dims, seed++, lo, hi));
  }
  return inputs;
}

inline Result<std::vector<Tensor>> run_on_cpu(const Graph& graph,
                                              const std::vector<Tensor>& inputs) {
  HSCHED_ASSIGN_OR_RETURN(auto program, cpu::CpuProgram::compile(graph, cpu::CpuOptions{}));
  return program->run(inputs);
}

struct Tolerance {
  double atol;
  double rtol;
};
inline constexpr Tolerance kFp32Tolerance{1e-4, 1e-3};
inline constexpr Tolerance kFp16Tolerance{5e-2, 5e-2};

// write_ir -> read_ir; both graphs run on the CPU with the same inputs and agree within the
// precision's tolerance; inputs and outputs keep their names, dims and order.
inline ::testing::AssertionResult round_trips(const Graph& graph, const std::vector<Tensor>& inputs,
                                              Precision precision) {
  auto model = write_ir(graph, precision);
  if (!model.is_ok())
    return ::testing::AssertionFailure() << "write_ir: " << model.status().message();
  auto read = read_ir(model->xml, model->weights);
  if (!read.is_ok()) {
    return ::testing::AssertionFailure() << "read_ir: " << read.status().message() << "\n"
                                         << model->xml.substr(0, 4000);
  }
  if (read->inputs().size() != graph.inputs().size() ||
      read->outputs().size() != graph.outputs().size()) {
    return ::testing::AssertionFailure() << "input/output counts differ";
  }
  for (size_t i = 0; i < graph.inputs().size(); ++i) {
    const Value& a = read->value(read->inputs()[i]);
    const Value& b = graph.value(graph.inputs()[i]);
    if (a.name != b.name || a.shape != b.shape || a.dtype != b.dtype) {
      return ::testing::AssertionFailure() << "input " << i << " is " << a.name << " "
                                           << a.shape.to_string() << ", expected " << b.name;
    }
  }
  for (size_t i = 0; i < graph.outputs().size(); ++i) {
    const Value& a = read->value(read->outputs()[i]);
    const Value& b = graph.value(graph.outputs()[i]);
    if (a.name != b.name || a.shape != b.shape) {
      return ::testing::AssertionFailure() << "output " << i << " is " << a.name << " "
                                           << a.shape.to_string() << ", expected " << b.name;
    }
  }
  auto expected = run_on_cpu(graph, inputs);
  if (!expected.is_ok()) {
    return ::testing::AssertionFailure() << "original on CPU: " << expected.status().message();
  }
  auto actual = run_on_cpu(*read, inputs);
  if (!actual.is_ok()) {
    return ::testing::AssertionFailure() << "read back on CPU: " << actual.status().message();
  }
  const Tolerance tol = precision == Precision::kFp16 ? kFp16Tolerance : kFp32Tolerance;
  for (size_t i = 0; i < expected->size(); ++i) {
    auto close = cpu::test::all_close((*actual)[i], (*expected)[i], tol.atol, tol.rtol);
    if (!close)
      return close << " (output " << i << (precision == Precision::kFp16 ? ", fp16)" : ", fp32)");
  }
  return ::testing::AssertionSuccess();
}

}  // namespace hsched::ir::test
