// A shared model's test data: the tensors of <dir>/<prefix>K.pb for K = 0, 1... until one is
// missing (the ONNX backend-test layout of ../shared/models). A file that does not parse fails
// the calling test.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

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

}  // namespace hsched::test
