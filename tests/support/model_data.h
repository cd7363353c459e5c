// A shared model's test data: the tensors of <dir>/<prefix>K.pb for K = 0, 1... until one is
// missing (the ONNX backend-test layout of ../shared/models). A file that does not parse fails
// the calling test. Conversions to and from float16, and how an INT8 model's output agrees with
// ONNX Runtime's int8 reference.
#pragma once

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/float16.h"
#include "graph/graph.h"
#include "graph/tensor_proto.h"

namespace hsched::test {

inline std::vector<Tensor> read_tensors(const std::filesystem::path& dir,
                                        const std::string& prefix) {
  std::vector<Tensor> tensors;
  for (int k = 0;; ++k) {
    const std::filesystem::path path = dir / (prefix + std::to_string(k) + ".pb");
    if (!std::filesystem::exists(path)) break;
    auto tensor = read_tensor_file(path);
    EXPECT_TRUE(tensor.is_ok()) << tensor.status().message();
    if (tensor.is_ok()) tensors.push_back(std::move(tensor).value());
  }
  return tensors;
}

// A float32 tensor's values rounded to float16, and a float16 tensor's widened to float32.
inline Tensor to_float16(const Tensor& t) {
  Tensor out(DType::kF16, t.dims());
  std::transform(t.values<float>().begin(), t.values<float>().end(),
                 out.values<uint16_t>().begin(), float_to_half);
  return out;
}
inline Tensor to_float32(const Tensor& t) {
  Tensor out(DType::kF32, t.dims());
  std::transform(t.values<uint16_t>().begin(), t.values<uint16_t>().end(),
                 out.values<float>().begin(), half_to_float);
  return out;
}

// An INT8 model's first output `got` against the reference `want`: the largest difference in
// steps of the output's quantization (the scale of the DequantizeLinear giving the graph's first
// output, which the calling test asserts exists), the cosine of the two, and whether a
// classifier's ([1, classes]) top class is the same (true for other shapes).
struct Int8Agreement {
  double steps = 0;
  double cosine = 0;
  bool same_top_class = true;
};

inline Int8Agreement int8_agreement(const Graph& graph, const Tensor& got, const Tensor& want) {
  const Node& dq = graph.node(graph.value(graph.outputs()[0]).producer);
  EXPECT_EQ(dq.op_type, "DequantizeLinear");
  const double step = graph.value(dq.inputs[1]).constant->values<float>()[0];
  const auto a = got.values<float>();
  const auto b = want.values<float>();
  EXPECT_EQ(a.size(), b.size());
  Int8Agreement agreement;
  double dot = 0, aa = 0, bb = 0;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
    agreement.steps = std::max(agreement.steps, std::abs(static_cast<double>(a[i]) - b[i]) / step);
    dot += static_cast<double>(a[i]) * b[i];
    aa += static_cast<double>(a[i]) * a[i];
    bb += static_cast<double>(b[i]) * b[i];
  }
  agreement.cosine = dot / std::sqrt(aa * bb);
  const auto& dims = want.dims();
  if (dims.size() == 2 && dims[0] == 1 && !a.empty() && a.size() == b.size()) {
    agreement.same_top_class = std::max_element(a.begin(), a.end()) - a.begin() ==
                               std::max_element(b.begin(), b.end()) - b.begin();
  }
  return agreement;
}

}  // namespace hsched::test
