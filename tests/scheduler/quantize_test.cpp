// hsched::quantize_model: the QDQ model it writes imports, runs on the CPU as integer ops
// (QLinearConv/QLinearMatMul steps) and stays close to the fp32 model; errors name their cause.
#include "hsched/quantize.h"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>

#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include "graph/onnx_builder.h"
#include "hsched/config.h"
#include "hsched/executor.h"
#include "hsched/schedule.h"
#include "support/model_data.h"
#include "support/temp_dir.h"

namespace hsched {
namespace {

namespace fs = std::filesystem;

Tensor seeded(const std::vector<int64_t>& dims, uint32_t seed) {
  Tensor t(DType::kF32, dims);
  for (float& v : t.values<float>()) {
    seed = seed * 1664525u + 1013904223u;
    v = static_cast<float>(seed >> 8) / static_cast<float>(1u << 24) * 2.0f - 1.0f;
  }
  return t;
}

// Runs `model` on the CPU with a step profile; the outputs and the op types of the steps.
struct CpuRun {
  std::vector<Tensor> outputs;
  std::map<std::string, int> steps;
};

CpuRun run_on_cpu(const fs::path& path, const std::vector<Tensor>& inputs) {
  CpuRun run;
  auto model = load_model(path);
  EXPECT_TRUE(model.is_ok()) << model.status().message();
  if (!model.is_ok()) return run;
  auto plan = schedule(*model, discover_target_for("cpu"), devices_policy("cpu", Precision::kFp32));
  EXPECT_TRUE(plan.is_ok()) << plan.status().message();
  ExecutorOptions options;
  options.profile = true;
  auto program = compile(*model, *plan, options);
  EXPECT_TRUE(program.is_ok()) << program.status().message();
  if (!program.is_ok()) return run;
  auto outputs = (*program)->run(inputs);
  EXPECT_TRUE(outputs.is_ok()) << outputs.status().message();
  if (outputs.is_ok()) run.outputs = std::move(outputs).value();
  for (const StepProfile& step : (*program)->profile()) ++run.steps[step.op];
  return run;
}

double cosine(const Tensor& a, const Tensor& b) {
  double ab = 0, aa = 0, bb = 0;
  for (int64_t i = 0; i < a.elements(); ++i) {
    const double x = a.values<float>()[static_cast<size_t>(i)];
    const double y = b.values<float>()[static_cast<size_t>(i)];
    ab += x * y;
    aa += x * x;
    bb += y * y;
  }
  return ab / std::sqrt(aa * bb);
}

std::map<std::string, int> op_counts(const fs::path& path) {
  std::map<std::string, int> ops;
  auto model = load_model(path);
  EXPECT_TRUE(model.is_ok()) << model.status().message();
  if (!model.is_ok()) return ops;
  for (const auto& [op, count] : model->summary().ops) ops[op] = static_cast<int>(count);
  return ops;
}

// Conv -> Relu -> Conv (+ residual Add) -> Relu6 -> GlobalAveragePool -> Flatten -> Gemm, and a
// MatMul of the pooled features by a constant: the CNN shape of what quantize_static users
// quantize.
void write_small_cnn(const fs::path& path, int64_t opset) {
  OnnxBuilder b(opset);
  b.input("x", DType::kF32, {1, 4, 10, 10});
  b.output("logits", DType::kF32, {1, 6}).output("features", DType::kF32, {1, 5});
  b.initializer_random("w1", {8, 4, 3, 3}, 0.4f, 1).initializer_random("b1", {8}, 0.2f, 2);
  b.initializer_random("w2", {8, 8, 3, 3}, 0.3f, 3).initializer_random("b2", {8}, 0.2f, 4);
  b.initializer_random("fc", {6, 8}, 0.5f, 5).initializer_random("fcb", {6}, 0.1f, 6);
  b.initializer_random("proj", {8, 5}, 0.5f, 7);
  const std::vector<int64_t> pads{1, 1, 1, 1};
  set_attr(b.node("Conv", {"x", "w1", "b1"}, {"c1"}, "conv1"), "pads", pads);
  b.node("Relu", {"c1"}, {"r1"}, "relu1");
  set_attr(b.node("Conv", {"r1", "w2", "b2"}, {"c2"}, "conv2"), "pads", pads);
  b.node("Add", {"c2", "r1"}, {"sum"}, "residual");
  if (opset >= 11) {  // Relu6 as a Clip from 0: folded as a Relu is
    b.initializer_f32("zero", {}, {0.0f}).initializer_f32("six", {}, {6.0f});
    b.node("Clip", {"sum", "zero", "six"}, {"r2"}, "relu2");
  } else {
    b.node("Relu", {"sum"}, {"r2"}, "relu2");
  }
  b.node("GlobalAveragePool", {"r2"}, {"pooled"}, "pool");
  b.node("Flatten", {"pooled"}, {"flat"}, "flatten");
  set_attr(b.node("Gemm", {"flat", "fc", "fcb"}, {"logits"}, "fc"), "transB", 1);
  b.node("MatMul", {"flat", "proj"}, {"features"}, "proj");
  onnx::ValueInfoProto* r1 = b.model().mutable_graph()->add_value_info();
  r1->set_name("r1");
  set_tensor_type(*r1, DType::kF32, {1, 8, 10, 10});
  test::write_file(path, b.serialize());
}

// A refused quantization: one message holding `text`, and nothing written at `output`.
void expect_refused(const Result<QuantizeSummary>& summary, const std::string& text,
                    const fs::path& output) {
  ASSERT_FALSE(summary.is_ok());
  EXPECT_NE(summary.status().message().find(text), std::string::npos) << summary.status().message();
  EXPECT_FALSE(fs::exists(output));
}

QuantizeOptions random_calibration_of(const std::vector<int64_t>& dims, int sets) {
  QuantizeOptions options;
  for (int k = 0; k < sets; ++k) {
    options.calibration.push_back({seeded(dims, static_cast<uint32_t>(100 + k))});
  }
  return options;
}

QuantizeOptions random_calibration(int sets) { return random_calibration_of({1, 4, 10, 10}, sets); }

TEST(QuantizeTest, SmallCnnRunsAsIntegerOpsCloseToFp32) {
  test::TempDir dir;
  write_small_cnn(dir / "cnn.onnx", 17);
  auto summary = quantize_model(dir / "cnn.onnx", {}, random_calibration(8), dir / "q.onnx");
  ASSERT_TRUE(summary.is_ok()) << summary.status().message();
  EXPECT_EQ(summary->quantized,
            (std::map<std::string, int64_t>{{"Add", 1}, {"Conv", 2}, {"Gemm", 1}, {"MatMul", 1}}));
  EXPECT_EQ(summary->weights, 4);
  EXPECT_EQ(summary->relu_folded, 2);
  EXPECT_TRUE(summary->kept.empty());
  EXPECT_TRUE(summary->per_channel);

  onnx::ModelProto written;
  std::ifstream file(dir / "q.onnx", std::ios::binary);
  ASSERT_TRUE(written.ParseFromIstream(&file));
  for (const onnx::ValueInfoProto& info : written.graph().value_info()) {
    EXPECT_NE(info.name(), "r1");  // relu1's output is produced no more
  }
  const std::map<std::string, int> ops = op_counts(dir / "q.onnx");
  EXPECT_EQ(ops.count("Relu"), 0u);  // Relu and Clip folded into their inputs' quantization
  EXPECT_EQ(ops.count("Clip"), 0u);
  EXPECT_GT(ops.at("QuantizeLinear"), 0);
  EXPECT_GT(ops.at("DequantizeLinear"), 0);

  const std::vector<Tensor> input{seeded({1, 4, 10, 10}, 7)};
  const CpuRun fp32 = run_on_cpu(dir / "cnn.onnx", input);
  const CpuRun int8 = run_on_cpu(dir / "q.onnx", input);
  ASSERT_EQ(fp32.outputs.size(), 2u);
  ASSERT_EQ(int8.outputs.size(), 2u);
  for (size_t k = 0; k < 2; ++k) EXPECT_GE(cosine(fp32.outputs[k], int8.outputs[k]), 0.99) << k;
  EXPECT_EQ(int8.steps.count("QLinearConv") ? int8.steps.at("QLinearConv") : 0, 2);
  EXPECT_EQ(int8.steps.count("QLinearMatMul") ? int8.steps.at("QLinearMatMul") : 0, 2);
}

TEST(QuantizeTest, KeepAndPerTensorAndOldOpsets) {
  test::TempDir dir;
  write_small_cnn(dir / "cnn.onnx", 17);
  QuantizeOptions options = random_calibration(2);
  options.keep = {"Gemm", "conv2"};  // an op type and a node name
  options.per_channel = false;
  options.activations = DType::kI8;
  auto summary = quantize_model(dir / "cnn.onnx", {}, options, dir / "q.onnx");
  ASSERT_TRUE(summary.is_ok()) << summary.status().message();
  // The residual Add reads conv2, now fp32: it stays fp32 too.
  EXPECT_EQ(summary->kept,
            (std::map<std::string, int64_t>{{"kept", 2}, {"not between quantized ops", 1}}));
  EXPECT_EQ(summary->quantized.count("Gemm"), 0u);
  EXPECT_FALSE(summary->per_channel);
  const std::vector<Tensor> input{seeded({1, 4, 10, 10}, 9)};
  const CpuRun fp32 = run_on_cpu(dir / "cnn.onnx", input);
  const CpuRun int8 = run_on_cpu(dir / "q.onnx", input);
  ASSERT_EQ(int8.outputs.size(), 2u);
  EXPECT_GE(cosine(fp32.outputs[0], int8.outputs[0]), 0.98);

  // Opset 11: QuantizeLinear exists, per-axis scales do not: one scale per weight.
  write_small_cnn(dir / "cnn11.onnx", 11);
  summary = quantize_model(dir / "cnn11.onnx", {}, random_calibration(2), dir / "q11.onnx");
  ASSERT_TRUE(summary.is_ok()) << summary.status().message();
  EXPECT_FALSE(summary->per_channel);
  EXPECT_EQ(run_on_cpu(dir / "q11.onnx", input).outputs.size(), 2u);

  // Opset 9 has no QuantizeLinear.
  write_small_cnn(dir / "cnn9.onnx", 9);
  summary = quantize_model(dir / "cnn9.onnx", {}, random_calibration(1), dir / "q9.onnx");
  expect_refused(summary, "opset 9 has no QuantizeLinear", dir / "q9.onnx");
}

// Eight random input sets and one with an outlier (500), for a small CNN written to
// dir/cnn.onnx; MinMax stretches the input's range over the outlier and loses the other values'
// resolution.
QuantizeOptions calibration_with_an_outlier(const fs::path& dir) {
  write_small_cnn(dir / "cnn.onnx", 17);
  QuantizeOptions options = random_calibration(8);
  Tensor outlier = seeded({1, 4, 10, 10}, 99);
  outlier.values<float>()[0] = 500.0f;
  options.calibration.push_back({outlier});
  return options;
}

// The cosine between dir/cnn.onnx's output and `quantized`'s on one input.
double cosine_to_fp32(const fs::path& dir, const fs::path& quantized) {
  const std::vector<Tensor> input{seeded({1, 4, 10, 10}, 7)};
  return cosine(run_on_cpu(dir / "cnn.onnx", input).outputs[0],
                run_on_cpu(quantized, input).outputs[0]);
}

// A percentile range cuts the outlier MinMax stretches over.
TEST(QuantizeTest, PercentileRangesCutAnOutlier) {
  test::TempDir dir;
  QuantizeOptions options = calibration_with_an_outlier(dir.path());
  ASSERT_TRUE(quantize_model(dir / "cnn.onnx", {}, options, dir / "minmax.onnx").is_ok());
  options.percentile = 99;
  auto percentile = quantize_model(dir / "cnn.onnx", {}, options, dir / "percentile.onnx");
  ASSERT_TRUE(percentile.is_ok()) << percentile.status().message();
  EXPECT_EQ(percentile->percentile, 99);
  EXPECT_NE(quantize_summary_text(*percentile).find("(percentile 99)"), std::string::npos);
  const double with_percentile = cosine_to_fp32(dir.path(), dir / "percentile.onnx");
  EXPECT_GE(with_percentile, 0.99);
  EXPECT_LT(cosine_to_fp32(dir.path(), dir / "minmax.onnx"), with_percentile - 0.01);

  options.percentile = 50;
  EXPECT_FALSE(quantize_model(dir / "cnn.onnx", {}, options, dir / "bad.onnx").is_ok());
}

// The same outlier: entropy calibration finds on its own that cutting it costs less than
// spreading 255 steps over it.
TEST(QuantizeTest, EntropyRangesCutAnOutlier) {
  test::TempDir dir;
  QuantizeOptions options = calibration_with_an_outlier(dir.path());
  ASSERT_TRUE(quantize_model(dir / "cnn.onnx", {}, options, dir / "minmax.onnx").is_ok());
  options.entropy = true;
  auto entropy = quantize_model(dir / "cnn.onnx", {}, options, dir / "entropy.onnx");
  ASSERT_TRUE(entropy.is_ok()) << entropy.status().message();
  EXPECT_TRUE(entropy->entropy);
  EXPECT_NE(quantize_summary_text(*entropy).find("(entropy)"), std::string::npos);
  const double with_entropy = cosine_to_fp32(dir.path(), dir / "entropy.onnx");
  EXPECT_GE(with_entropy, 0.99);
  EXPECT_LT(cosine_to_fp32(dir.path(), dir / "minmax.onnx"), with_entropy - 0.01);

  options.percentile = 99;  // one method at a time
  auto both = quantize_model(dir / "cnn.onnx", {}, options, dir / "both.onnx");
  ASSERT_FALSE(both.is_ok());
  EXPECT_NE(both.status().message().find("exclude each other"), std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(dir / "both.onnx"));
}

// Older exporters list every initializer as a graph input too: the weights are quantized (hsched
// takes such inputs as constants) and the float initializers stay, since the inputs name them.
TEST(QuantizeTest, InitializersListedAsInputsStay) {
  test::TempDir dir;
  OnnxBuilder b(13);
  b.input("x", DType::kF32, {1, 4, 6, 6}).input("w", DType::kF32, {8, 4, 3, 3});
  b.output("y", DType::kF32, {1, 8, 4, 4});
  b.initializer_random("w", {8, 4, 3, 3}, 0.4f, 1);
  b.node("Conv", {"x", "w"}, {"y"}, "conv");
  test::write_file(dir / "m.onnx", b.serialize());
  auto summary =
      quantize_model(dir / "m.onnx", {}, random_calibration_of({1, 4, 6, 6}, 2), dir / "q.onnx");
  ASSERT_TRUE(summary.is_ok()) << summary.status().message();
  auto quantized = load_model(dir / "q.onnx");
  ASSERT_TRUE(quantized.is_ok()) << quantized.status().message();
  auto original = load_model(dir / "m.onnx");
  ASSERT_TRUE(original.is_ok());
  EXPECT_EQ(quantized->inputs().size(), original->inputs().size());
  const std::vector<Tensor> input{seeded({1, 4, 6, 6}, 3)};
  EXPECT_GE(cosine(run_on_cpu(dir / "m.onnx", input).outputs.at(0),
                   run_on_cpu(dir / "q.onnx", input).outputs.at(0)),
            0.99);
}

TEST(QuantizeTest, NonFiniteWeightIsRefusedByName) {
  test::TempDir dir;
  OnnxBuilder b(13);
  b.input("x", DType::kF32, {1, 4, 6, 6}).output("y", DType::kF32, {1, 2, 4, 4});
  std::vector<float> w(2 * 4 * 3 * 3, 0.1f);
  w[5] = INFINITY;
  b.initializer_f32("w", {2, 4, 3, 3}, w);
  b.node("Conv", {"x", "w"}, {"y"}, "conv");
  test::write_file(dir / "m.onnx", b.serialize());
  auto summary =
      quantize_model(dir / "m.onnx", {}, random_calibration_of({1, 4, 6, 6}, 1), dir / "q.onnx");
  // The calibration run meets it first (an infinite output), else the weight's own check.
  expect_refused(summary, "holds a non-finite value", dir / "q.onnx");
}

// A model stored in float16 runs (computed in float32), but its QDQ form would need float32
// scales beside float16 values: refused naming a half tensor, nothing written.
TEST(QuantizeTest, HalfModelIsRefusedByName) {
  test::TempDir dir;
  OnnxBuilder b(13);
  b.input("x", DType::kF16, {1, 4, 6, 6}).output("y", DType::kF16, {1, 4, 6, 6});
  b.node("Relu", {"x"}, {"y"}, "relu");
  test::write_file(dir / "m.onnx", b.serialize());
  QuantizeOptions options;
  options.calibration = {{Tensor(DType::kF16, {1, 4, 6, 6})}};
  auto summary = quantize_model(dir / "m.onnx", {}, options, dir / "q.onnx");
  expect_refused(summary, "m.onnx: the model is stored in a half type ('x')", dir / "q.onnx");
}

TEST(QuantizeTest, BadCalibrationIsRefusedByName) {
  test::TempDir dir;
  write_small_cnn(dir / "cnn.onnx", 17);
  QuantizeOptions options;
  options.calibration = {{seeded({1, 4, 9, 10}, 1)}};
  auto summary = quantize_model(dir / "cnn.onnx", {}, options, dir / "q.onnx");
  expect_refused(summary, "calibration input set 0: input 'x'", dir / "q.onnx");

  Tensor inf = seeded({1, 4, 10, 10}, 2);
  inf.values<float>()[3] = INFINITY;
  options.calibration = {{inf}};
  summary = quantize_model(dir / "cnn.onnx", {}, options, dir / "q.onnx");
  expect_refused(summary, "non-finite value on calibration input set 0", dir / "q.onnx");

  options.calibration.clear();
  EXPECT_FALSE(quantize_model(dir / "cnn.onnx", {}, options, dir / "q.onnx").is_ok());
}

// A Softmax's output read by a quantized MatMul is quantized over [0, 1] (scale 1/255, zero
// point 0 in u8), whatever the calibration saw, as ONNX Runtime's quantizer does: its
// QLinearSoftmax scales by floor(1 / scale), which a calibrated scale would truncate.
TEST(QuantizeTest, SoftmaxOutputIsQuantizedOverZeroToOne) {
  test::TempDir dir;
  OnnxBuilder b(17);
  b.input("x", DType::kF32, {4, 8}).output("y", DType::kF32, {4, 8});
  b.initializer_random("wq", {8, 8}, 0.5f, 1).initializer_random("wv", {8, 8}, 0.5f, 2);
  b.node("MatMul", {"x", "wq"}, {"scores"}, "scores");
  set_attr(b.node("Softmax", {"scores"}, {"probs"}, "softmax"), "axis", int64_t{-1});
  b.node("MatMul", {"probs", "wv"}, {"y"}, "mix");
  test::write_file(dir / "m.onnx", b.serialize());
  auto summary =
      quantize_model(dir / "m.onnx", {}, random_calibration_of({4, 8}, 4), dir / "q.onnx");
  ASSERT_TRUE(summary.is_ok()) << summary.status().message();
  onnx::ModelProto written;
  std::ifstream file(dir / "q.onnx", std::ios::binary);
  ASSERT_TRUE(written.ParseFromIstream(&file));
  std::map<std::string, const onnx::TensorProto*> inits;
  for (const onnx::TensorProto& t : written.graph().initializer()) inits[t.name()] = &t;
  ASSERT_TRUE(inits.count("probs_scale") && inits.count("probs_zero_point"));
  const onnx::TensorProto& scale = *inits.at("probs_scale");
  const float value = scale.float_data_size()
                          ? scale.float_data(0)
                          : *reinterpret_cast<const float*>(scale.raw_data().data());
  EXPECT_FLOAT_EQ(value, 1.0f / 255.0f);
  const onnx::TensorProto& zero = *inits.at("probs_zero_point");
  EXPECT_EQ(zero.int32_data_size() ? zero.int32_data(0) : int{zero.raw_data()[0]}, 0);
  // The scores' range is calibrated.
  ASSERT_TRUE(inits.count("scores_scale"));
}

// The shared models with random calibration: the quantized model's output against the fp32
// model's on the reference input.
class QuantizeModelTest : public ::testing::TestWithParam<std::string> {};

TEST_P(QuantizeModelTest, CloseToFp32OnTheTestInput) {
  const fs::path model_dir = test::models_dir() / GetParam();
  if (!fs::exists(model_dir / "model.onnx")) GTEST_SKIP() << "no model at " << model_dir;
  auto model = load_model(model_dir / "model.onnx");
  ASSERT_TRUE(model.is_ok()) << model.status().message();
  QuantizeOptions options;
  const std::vector<TensorInfo> inputs = model->inputs();
  for (int k = 0; k < 8; ++k) {
    std::vector<Tensor> set;
    for (size_t i = 0; i < inputs.size(); ++i) {
      set.push_back(seeded(inputs[i].shape.dims, static_cast<uint32_t>(31 * k + i + 1)));
    }
    options.calibration.push_back(std::move(set));
  }
  test::TempDir dir;
  auto summary = quantize_model(model_dir / "model.onnx", {}, options, dir / "q.onnx");
  ASSERT_TRUE(summary.is_ok()) << summary.status().message();
  const std::vector<Tensor> input = test::read_tensors(model_dir / "test_data_set_0", "input_");
  const CpuRun fp32 = run_on_cpu(model_dir / "model.onnx", input);
  const CpuRun int8 = run_on_cpu(dir / "q.onnx", input);
  ASSERT_EQ(fp32.outputs.size(), int8.outputs.size());
  ASSERT_FALSE(int8.outputs.empty());
  EXPECT_GE(cosine(fp32.outputs[0], int8.outputs[0]), 0.99);
  const bool int8_steps = int8.steps.count("QLinearConv") || int8.steps.count("QLinearMatMul");
  EXPECT_TRUE(int8_steps);
}

INSTANTIATE_TEST_SUITE_P(Models, QuantizeModelTest,
                         ::testing::Values("resnet18", "mobilenet_v2", "vit_tiny"));

}  // namespace
}  // namespace hsched
