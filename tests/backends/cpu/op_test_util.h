// Runs one CPU kernel on given tensors, for per-op conformance tests against plain references.
#pragma once

#include <gtest/gtest.h>

#include <oneapi/dnnl/dnnl.hpp>

#include <cmath>
#include <string>
#include <vector>

#include "backends/cpu/kernels/kernel.h"
#include "support/one_node_graph.h"

namespace hsched::cpu::test {

struct OpInput {
  Tensor tensor;
  bool constant = false;  // seen by the factory as a constant (weights, axes...)
  bool omitted = false;   // an optional input left out
};

struct OpOutput {
  DType dtype;
  std::vector<int64_t> dims;
  bool omitted = false;  // an optional output left out (not produced)
};

// Builds a one-node graph, creates the kernel through the full registry and runs it.
inline Result<std::vector<Tensor>> run_op(const std::string& op, const AttributeMap& attrs,
                                          const std::vector<OpInput>& inputs,
                                          const std::vector<OpOutput>& outputs,
                                          int64_t opset = 17, int threads = 2) {
  static KernelRegistry registry = make_cpu_kernel_registry();
  static dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  static dnnl::stream stream(engine);
  CpuContext context{threads, &engine, &stream};
  using hsched::test::NodeInput;
  std::vector<NodeInput> node_inputs;
  for (const OpInput& in : inputs) {
    node_inputs.push_back(in.omitted    ? NodeInput::omitted()
                          : in.constant ? NodeInput::constant_of(in.tensor)
                                        : NodeInput::input(in.tensor.dtype(), in.tensor.shape()));
  }
  std::vector<hsched::test::NodeOutput> node_outputs;
  for (const OpOutput& out : outputs) {
    node_outputs.push_back({out.dtype, Shape(out.dims), out.omitted});
  }
  const Graph graph =
      hsched::test::one_node_graph("test_" + op, op, attrs, node_inputs, node_outputs, opset);
  const NodeId id = 0;
  KernelSpec spec{graph.node(id), {}, {}, opset, &context};
  for (ValueId v : graph.node(id).inputs) spec.inputs.push_back(v == kNoValue ? nullptr : &graph.value(v));
  for (ValueId v : graph.node(id).outputs) {
    spec.outputs.push_back(v == kNoValue ? nullptr : &graph.value(v));
  }
  HSCHED_ASSIGN_OR_RETURN(auto kernel, registry.create(spec));
  std::vector<Tensor> out_tensors;
  for (const auto& o : outputs) out_tensors.emplace_back(o.dtype, o.dims);
  std::vector<const Tensor*> in_ptrs;
  for (const auto& in : inputs) in_ptrs.push_back(in.omitted ? nullptr : &in.tensor);
  std::vector<Tensor*> out_ptrs;
  for (size_t i = 0; i < out_tensors.size(); ++i) {
    out_ptrs.push_back(outputs[i].omitted ? nullptr : &out_tensors[i]);
  }
  HSCHED_RETURN_IF_ERROR(kernel->run(in_ptrs, out_ptrs));
  return out_tensors;
}

template <typename T>
Tensor of(DType dtype, std::vector<int64_t> dims, const std::vector<T>& values) {
  return Tensor::from_vector(dtype, std::move(dims), values);
}
inline Tensor u8(std::vector<int64_t> dims, const std::vector<uint8_t>& values) {
  return of(DType::kU8, std::move(dims), values);
}
inline Tensor f32(std::vector<int64_t> dims, std::vector<float> values) {
  return Tensor::from_vector(DType::kF32, std::move(dims), values);
}
inline Tensor i64(std::vector<int64_t> dims, std::vector<int64_t> values) {
  return Tensor::from_vector(DType::kI64, std::move(dims), values);
}
inline Tensor i32(std::vector<int64_t> dims, const std::vector<int32_t>& values) {
  return of(DType::kI32, std::move(dims), values);
}
inline Tensor i8(std::vector<int64_t> dims, const std::vector<int8_t>& values) {
  return of(DType::kI8, std::move(dims), values);
}

// A tensor's values of C++ type T (an integer type) as ints, for comparisons that print well.
template <typename T>
std::vector<int> ints_of(const Tensor& t) {
  std::vector<int> out;
  for (T v : t.values<T>()) out.push_back(static_cast<int>(v));
  return out;
}

// Seeded values in [lo, hi).
Tensor random_f32(std::vector<int64_t> dims, uint32_t seed, float lo = -1.0f, float hi = 1.0f);

// run_op's result refused when the kernel was created: one line naming its node ("test_<op>")
// and containing `detail`.
template <typename T>
void expect_refused(const Result<T>& result, const std::string& op, const std::string& detail) {
  ASSERT_FALSE(result.is_ok()) << op << " accepted a malformed node";
  const std::string& message = result.status().message();
  EXPECT_NE(message.find("node 'test_" + op + "' (" + op + ")"), std::string::npos) << message;
  EXPECT_NE(message.find(detail), std::string::npos) << message;
  EXPECT_EQ(message.find('\n'), std::string::npos) << message;
}

// Per element |a-b| <= atol + rtol*|b|; reports the worst element on failure.
::testing::AssertionResult all_close(const Tensor& actual, const Tensor& expected,
                                     double atol = 1e-5, double rtol = 1e-4);

}  // namespace hsched::cpu::test
