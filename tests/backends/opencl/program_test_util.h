// What the ClProgram tests of program_test.cpp, program_qdq_test.cpp and
// program_qdq_chain_test.cpp share: their fixture and the CPU's outputs to compare against.
#pragma once

#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "backends/opencl/program.h"
#include "graph/onnx_builder.h"
#include "opencl_test_util.h"
#include "support/cpu_run.h"

namespace hsched::opencl::program_test {

// The CPU program's outputs for `inputs` (empty, with a failure added, where it fails).
using test::run_on_cpu;

// A u8 tensor of `dims` whose element k is k * step mod 256: every byte value, scattered.
inline Tensor u8_ramp(std::vector<int64_t> dims, size_t step) {
  Tensor t(DType::kU8, std::move(dims));
  auto bytes = t.values<uint8_t>();
  for (size_t k = 0; k < bytes.size(); ++k) bytes[k] = static_cast<uint8_t>(k * step % 256);
  return t;
}

// i8 outputs against the CPU's: a step apart at most, on at most one element in `rarely`, and
// not mostly saturated (a saturated case would test little).
inline void expect_a_step_apart(const Tensor& got, const Tensor& want, int rarely,
                                const std::string& where) {
  const auto g = got.values<int8_t>();
  const auto w = want.values<int8_t>();
  ASSERT_EQ(g.size(), w.size()) << where;
  int worst = 0, off = 0, clamped = 0;
  for (size_t i = 0; i < g.size(); ++i) {
    worst = std::max(worst, std::abs(g[i] - w[i]));
    off += g[i] != w[i];
    clamped += w[i] == -128 || w[i] == 127;
  }
  EXPECT_LE(worst, 1) << where;
  EXPECT_LE(off, static_cast<int>(g.size()) / rarely) << where;
  EXPECT_LT(clamped, static_cast<int>(g.size()) / 4) << where << ": mostly saturated";
}

// `graph` (i8 outputs) compiled in fp32 and fp16 storage and run on `inputs` (none: u8_ramp's
// for its one 8-bit input): `kernels` kernels a run, each output a step apart from the CPU's at
// most, on at most one element in `rarely`.
inline void expect_kernels_a_step_apart(const std::shared_ptr<DeviceRuntime>& runtime,
                                        const Graph& graph, int kernels, const std::string& what,
                                        std::vector<Tensor> inputs = {}, int rarely = 20) {
  if (inputs.empty()) inputs.push_back(u8_ramp(graph.value(graph.inputs()[0]).shape.dims, 37));
  const std::vector<Tensor> expected = run_on_cpu(graph, inputs);
  ASSERT_FALSE(expected.empty());
  for (Storage storage : {Storage::kFloat32, Storage::kFloat16}) {
    const std::string where =
        what + ", " + std::to_string(storage_bytes(storage)) + "-byte storage";
    auto program = ClProgram::compile(graph, runtime, storage, 300000);
    ASSERT_TRUE(program.is_ok()) << program.status().message();
    EXPECT_EQ((*program)->stats().kernels, kernels) << where;
    auto outputs = (*program)->run(inputs);
    ASSERT_TRUE(outputs.is_ok()) << outputs.status().message();
    for (size_t i = 0; i < expected.size(); ++i) {
      expect_a_step_apart((*outputs)[i], expected[i], rarely, where);
    }
  }
}

// Adds `name` = DequantizeLinear(QuantizeLinear(constant `value`)), u8 of scale `scale`: how the
// quantizer writes a GELU's 1 and 0.5.
inline void quantized_constant(OnnxBuilder& b, const std::string& name, float value, float scale) {
  b.initializer_f32(name + "_f", {}, {value})
      .initializer_f32(name + "_s", {}, {scale})
      .initializer(name + "_z", Tensor::from_vector(DType::kU8, {}, std::vector<uint8_t>{0}));
  b.node("QuantizeLinear", {name + "_f", name + "_s", name + "_z"}, {name + "_q"}, name + "_q");
  b.node("DequantizeLinear", {name + "_q", name + "_s", name + "_z"}, {name}, name + "_dq");
}

// Adds QuantizeLinear then DequantizeLinear of `in` into `out` (u8, scale `scale`, zero `zero`).
inline void requantized(OnnxBuilder& b, const std::string& in, const std::string& out, float scale,
                        uint8_t zero) {
  b.initializer_f32(in + "_s", {}, {scale})
      .initializer(in + "_z", Tensor::from_vector(DType::kU8, {}, std::vector<uint8_t>{zero}));
  b.node("QuantizeLinear", {in, in + "_s", in + "_z"}, {in + "_q"}, in + "_q");
  b.node("DequantizeLinear", {in + "_q", in + "_s", in + "_z"}, {out}, in + "_dq");
}

// Adds to `b` a quantized MatMul as ONNX Runtime's quantizer writes a Linear's: input "a" (u8
// [..., 40], scale 0.04, zero point 120) by int8 weights [40, 24] (scale 0.005), quantized to i8
// (scale "ps" 0.3, zero point "pz" 4) as "pq" and dequantized as "pd"; and "bq", an i8 bias
// row of 24 (scale "bs" 0.013), for the caller to add.
inline void quantized_linear(OnnxBuilder& b) {
  std::vector<int8_t> w(40 * 24), row(24);
  for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<int8_t>((i * 7919 + 5) % 255 - 127);
  for (size_t i = 0; i < row.size(); ++i) row[i] = static_cast<int8_t>((i * 37) % 200 - 100);
  b.initializer_f32("as", {}, {0.04f})
      .initializer("az", Tensor::from_vector(DType::kU8, {}, std::vector<uint8_t>{120}))
      .initializer("w", Tensor::from_vector(DType::kI8, {40, 24}, w))
      .initializer_f32("ws", {}, {0.005f})
      .initializer("bq", Tensor::from_vector(DType::kI8, {24}, row))
      .initializer_f32("bs", {}, {0.013f})
      .initializer_f32("ps", {}, {0.3f})
      .initializer("pz", Tensor::from_vector(DType::kI8, {}, std::vector<int8_t>{4}));
  b.node("DequantizeLinear", {"a", "as", "az"}, {"ad"}, "dq_a");
  b.node("DequantizeLinear", {"w", "ws"}, {"wd"}, "dq_w");
  b.node("MatMul", {"ad", "wd"}, {"p"}, "linear");
  b.node("QuantizeLinear", {"p", "ps", "pz"}, {"pq"}, "q_p");
  b.node("DequantizeLinear", {"pq", "ps", "pz"}, {"pd"}, "dq_p");
}

// The first OpenCL device's runtime, once for the suite (program_test.cpp and
// program_qdq_test.cpp); skipped without a device.
class ClProgramTest : public opencl_test::SuiteRuntimeTest {};

}  // namespace hsched::opencl::program_test
