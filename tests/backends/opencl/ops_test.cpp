// The op layer (backends/opencl/kernels/ops.h) on the first OpenCL device (PoCL in CI), fp32 and fp16
// storage, against plain reference loops: broadcasting, odd sizes, negative axes.
// Skipped (never passed) without an OpenCL device.
#include "backends/opencl/kernels/ops.h"

#include <clblast.h>

#include <cmath>
#include <functional>
#include <map>
#include <random>

#include <CL/cl_half.h>
#include <gtest/gtest.h>

#include "backends/opencl/kernels/ops_spatial.h"
#include "backends/opencl/ops_test_util.h"
#include "support/temp_dir.h"

namespace hsched::opencl {
namespace {

float reference_unary(const std::string& op, float x, float alpha, float beta) {
  static const std::map<std::string, std::function<float(float)>> kOps = {
      {"Relu", [](float v) { return std::max(v, 0.0f); }},
      {"Sigmoid", [](float v) { return 1.0f / (1.0f + std::exp(-v)); }},
      {"Tanh", [](float v) { return std::tanh(v); }},
      {"Erf", [](float v) { return std::erf(v); }},
      {"Gelu", [](float v) { return 0.5f * v * (1.0f + std::erf(v / std::sqrt(2.0f))); }},
      {"Exp", [](float v) { return std::exp(v); }},
      {"Log", [](float v) { return std::log(v); }},
      {"Sqrt", [](float v) { return std::sqrt(v); }},
      {"Neg", [](float v) { return -v; }},
      {"Abs", [](float v) { return std::fabs(v); }},
      {"HardSwish", [](float v) { return v * std::clamp(v / 6.0f + 0.5f, 0.0f, 1.0f); }}};
  if (op == "LeakyRelu") return x >= 0 ? x : alpha * x;
  if (op == "Clip") return std::clamp(x, alpha, beta);
  if (op == "HardSigmoid") return std::clamp(alpha * x + beta, 0.0f, 1.0f);
  return kOps.at(op)(x);
}

TEST_P(OpenClOpsTest, UnaryOpsMatchTheReference) {
  const int64_t count = 1037;  // not a multiple of the work-group size
  for (const std::string op : {"Relu", "LeakyRelu", "Sigmoid", "Tanh", "Erf", "Gelu", "Exp", "Log",
                               "Sqrt", "Neg", "Abs", "Clip", "HardSigmoid", "HardSwish"}) {
    const bool positive = op == "Log" || op == "Sqrt";
    const std::vector<float> x = stored(random_values(count, positive ? 0.05f : -4.0f, 4.0f, 7));
    float alpha = 0, beta = 0;
    if (op == "LeakyRelu") alpha = 0.1f;
    if (op == "Clip") alpha = -1.5f, beta = 2.0f;
    if (op == "HardSigmoid") alpha = 0.2f, beta = 0.5f;
    auto unary = unary_op_from_onnx(op);
    ASSERT_TRUE(unary.is_ok()) << op;
    cl::Buffer x_buffer = upload(x), y_buffer = output(count);
    auto event = enqueue_unary(ops(), queue_, *unary, alpha, beta, x_buffer, y_buffer, count);
    std::vector<float> want;
    for (float v : x) want.push_back(reference_unary(op, v, alpha, beta));
    expect_close(download(event, y_buffer, count), want, op);
  }
  EXPECT_FALSE(unary_op_from_onnx("Celu").is_ok());
}

// Far from zero Tanh is exactly +-1 and Gelu's tanh form exactly 0 or x: PoCL's tanh (within
// OpenCL's 5 ulp) gave 1 ulp short of -1, and the graph's 0.5 x (1 + tanh(..)) then gave -3e-4 for
// an attention mask's -1e4 where ONNX Runtime gives 0.
TEST_P(OpenClOpsTest, TanhAndGeluTanhFormAreExactFarFromZero) {
  const std::vector<float> x = stored({-1e4f, -3e3f, -60.0f, -12.0f, 12.0f, 60.0f, 1e4f, 0.5f});
  const auto count = static_cast<int64_t>(x.size());
  cl::Buffer x_buffer = upload(x), y_buffer = output(count);
  auto event = enqueue_unary(ops(), queue_, UnaryOp::kGeluTanh, 0, 0, x_buffer, y_buffer, count);
  const std::vector<float> y = download(event, y_buffer, count);
  for (size_t i = 0; i < 4; ++i) EXPECT_EQ(y[i], 0.0f) << "x = " << x[i];
  for (size_t i = 4; i < 7; ++i) EXPECT_EQ(y[i], x[i]) << "x = " << x[i];
  const float y_half = 0.5f * 0.5f * (1.0f + std::tanh(0.7978845608f * (0.5f + 0.044715f * 0.125f)));
  EXPECT_NEAR(y[7], y_half, 1e-3f);

  cl::Buffer tanh_buffer = output(count);
  auto tanh_event =
      enqueue_unary(ops(), queue_, UnaryOp::kTanh, 0, 0, x_buffer, tanh_buffer, count);
  const std::vector<float> tanh_y = download(tanh_event, tanh_buffer, count);
  for (size_t i = 0; i < 7; ++i) EXPECT_EQ(tanh_y[i], x[i] < 0 ? -1.0f : 1.0f) << "x = " << x[i];
}

// The numpy broadcast of a and b through op, by plain loops over the output.
std::vector<float> reference_binary(const std::function<float(float, float)>& op,
                                    const std::vector<float>& a, const Shape& a_shape,
                                    const std::vector<float>& b, const Shape& b_shape,
                                    const Shape& out) {
  auto index_in = [&](const Shape& shape, int64_t flat) {
    int64_t index = 0, stride = 1;
    for (size_t i = 0; i < shape.size(); ++i) {
      const size_t d_out = out.size() - 1 - i, d_in = shape.size() - 1 - i;
      int64_t rest = flat;
      for (size_t j = out.size() - 1; j > d_out; --j) rest /= out[j];
      const int64_t coord = rest % out[d_out];
      if (shape[d_in] != 1) index += coord * stride;
      stride *= shape[d_in];
    }
    return index;
  };
  std::vector<float> y(static_cast<size_t>(count_of(out)));
  for (int64_t i = 0; i < count_of(out); ++i) {
    y[i] = op(a[index_in(a_shape, i)], b[index_in(b_shape, i)]);
  }
  return y;
}

TEST_P(OpenClOpsTest, BinaryOpsBroadcastLikeNumpy) {
  const std::map<std::string, std::function<float(float, float)>> ops_by_name = {
      {"Add", std::plus<float>()},
      {"Sub", std::minus<float>()},
      {"Mul", std::multiplies<float>()},
      {"Div", std::divides<float>()},
      {"Pow", [](float a, float b) { return std::pow(a, b); }},
      {"Max", [](float a, float b) { return std::max(a, b); }},
      {"Min", [](float a, float b) { return std::min(a, b); }}};
  const std::vector<std::pair<Shape, Shape>> cases = {
      {{2, 3, 1, 5}, {3, 4, 1}},                 // both sides broadcast
      {{7, 9}, {}},                              // scalar
      {{1, 2, 1, 3, 1, 5}, {2, 1, 2, 1, 4, 1}},  // rank 6
      {{33}, {33}}};                             // same shape, odd size
  for (const auto& [name, reference] : ops_by_name) {
    for (const auto& [a_shape, b_shape] : cases) {
      // Pow: positive bases and small exponents keep the values tame.
      const std::vector<float> a =
          stored(random_values(count_of(a_shape), name == "Pow" ? 0.2f : -3, 3, 11));
      std::vector<float> b =
          stored(random_values(count_of(b_shape), name == "Pow" ? -2.0f : 0.5f, 2, 13));
      if (name != "Pow" && name != "Div") {
        for (float& v : b) v = stored({v - 1.2f})[0];  // mixed signs where allowed
      }
      const Shape out = *broadcast_shape(a_shape, b_shape);
      cl::Buffer a_buffer = upload(a), b_buffer = upload(b), y_buffer = output(count_of(out));
      auto event = enqueue_binary(ops(), queue_, *binary_op_from_onnx(name), a_buffer, a_shape,
                                  b_buffer, b_shape, y_buffer);
      expect_close(download(event, y_buffer, count_of(out)),
                   reference_binary(reference, a, a_shape, b, b_shape, out),
                   name + " rank " + std::to_string(out.size()));
    }
  }
}

TEST_P(OpenClOpsTest, BinaryRejectsShapesThatDoNotBroadcast) {
  cl::Buffer a = upload(std::vector<float>(6, 1)), b = upload(std::vector<float>(4, 1));
  cl::Buffer y = output(24);
  auto event = enqueue_binary(ops(), queue_, BinaryOp::kAdd, a, {2, 3}, b, {4}, y);
  ASSERT_FALSE(event.is_ok());
  EXPECT_EQ(event.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(event.status().message().find("broadcast"), std::string::npos);
  auto deep = enqueue_binary(ops(), queue_, BinaryOp::kAdd, a, {1, 1, 1, 1, 1, 2, 3}, a, {2, 3}, y);
  EXPECT_FALSE(deep.is_ok());
}

// Softmax of x (shape `shape`) along axis `a` by loops, in double.
std::vector<float> reference_softmax(const std::vector<float>& x, const Shape& shape, size_t a) {
  int64_t inner = 1;
  for (size_t d = a + 1; d < shape.size(); ++d) inner *= shape[d];
  const int64_t size = shape[a], outer = count_of(shape) / (size * inner);
  std::vector<float> want(x.size());
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      const int64_t base = o * size * inner + i;
      double peak = -INFINITY, sum = 0;
      for (int64_t k = 0; k < size; ++k) peak = std::max<double>(peak, x[base + k * inner]);
      for (int64_t k = 0; k < size; ++k) sum += std::exp(x[base + k * inner] - peak);
      for (int64_t k = 0; k < size; ++k) {
        want[base + k * inner] = static_cast<float>(std::exp(x[base + k * inner] - peak) / sum);
      }
    }
  }
  return want;
}

TEST_P(OpenClOpsTest, SoftmaxAlongAnyAxis) {
  const Shape shape = {3, 5, 7};
  const std::vector<float> x = stored(random_values(count_of(shape), -5, 5, 17));
  for (int64_t axis : {-1, 1, 0, -3}) {
    const size_t a = static_cast<size_t>(axis < 0 ? axis + 3 : axis);
    cl::Buffer x_buffer = upload(x), y_buffer = output(count_of(shape));
    auto event =
        enqueue_softmax(ops(), queue_, x_buffer, shape, axis, SoftmaxKind::kSoftmax, y_buffer);
    expect_close(download(event, y_buffer, count_of(shape)), reference_softmax(x, shape, a),
                 "Softmax axis " + std::to_string(axis));
  }
  cl::Buffer x_buffer = upload(x), y_buffer = output(count_of(shape));
  EXPECT_FALSE(
      enqueue_softmax(ops(), queue_, x_buffer, shape, 3, SoftmaxKind::kSoftmax, y_buffer).is_ok());
}

// Long last-axis rows take the work-group-per-row kernel (ops.cpp: from 32 elements): rows
// shorter than, equal to and longer than the group of 64, attention's 197, large offsets (the
// max must be subtracted), and a long axis that is not the last (one work item per row still).
TEST_P(OpenClOpsTest, SoftmaxOfLongRows) {
  const std::vector<std::pair<Shape, int64_t>> cases = {
      {{1, 3, 5, 197}, -1}, {{7, 32}, 1}, {{4, 64}, -1}, {{2, 1000}, 1}, {{2, 40, 3}, 1}};
  for (const auto& [shape, axis] : cases) {
    std::vector<float> x = random_values(count_of(shape), -8, 8, 61);
    for (size_t i = 0; i < x.size(); i += 3) x[i] += 60;  // exp overflows without the max
    x = stored(x);
    const size_t a =
        static_cast<size_t>(axis < 0 ? axis + static_cast<int64_t>(shape.size()) : axis);
    cl::Buffer x_buffer = upload(x), y_buffer = output(count_of(shape));
    auto event =
        enqueue_softmax(ops(), queue_, x_buffer, shape, axis, SoftmaxKind::kSoftmax, y_buffer);
    expect_close(download(event, y_buffer, count_of(shape)), reference_softmax(x, shape, a),
                 "Softmax of rows of " + std::to_string(shape[a]));
  }
}

TEST_P(OpenClOpsTest, LayerNormalizationOverTrailingAxes) {
  const Shape shape = {4, 6, 10};
  const std::vector<float> x = stored(random_values(count_of(shape), -3, 3, 19));
  for (int64_t axis : {-1, 1}) {
    for (bool with_bias : {true, false}) {
      const int64_t size = axis == -1 ? 10 : 60, rows = count_of(shape) / size;
      const std::vector<float> scale = stored(random_values(size, 0.5f, 1.5f, 23));
      const std::vector<float> bias = stored(random_values(size, -1, 1, 29));
      std::vector<float> want(x.size());
      for (int64_t r = 0; r < rows; ++r) {
        double mean = 0, var = 0;
        for (int64_t k = 0; k < size; ++k) mean += x[r * size + k];
        mean /= size;
        for (int64_t k = 0; k < size; ++k) var += std::pow(x[r * size + k] - mean, 2);
        const double inv_std = 1 / std::sqrt(var / size + 1e-5);
        for (int64_t k = 0; k < size; ++k) {
          want[r * size + k] = static_cast<float>((x[r * size + k] - mean) * inv_std * scale[k] +
                                                  (with_bias ? bias[k] : 0));
        }
      }
      cl::Buffer x_buffer = upload(x), scale_buffer = upload(scale), bias_buffer = upload(bias);
      cl::Buffer y_buffer = output(count_of(shape));
      auto event = enqueue_layer_norm(ops(), queue_, x_buffer, shape, axis, scale_buffer,
                                      with_bias ? &bias_buffer : nullptr, 1e-5f, y_buffer);
      expect_close(download(event, y_buffer, count_of(shape)), want,
                   "LayerNormalization axis " + std::to_string(axis));
    }
  }
}

TEST_P(OpenClOpsTest, GlobalAveragePoolMeansEachChannel) {
  // Rows of 35 and 196 (a work group per row), 4 (one work item per row) and 1.
  for (const Shape& shape :
       {Shape{2, 3, 5, 7}, Shape{1, 5, 14, 14}, Shape{3, 2, 4}, Shape{2, 9, 1, 1}}) {
    const int64_t rows = shape[0] * shape[1], size = count_of(shape) / rows;
    const std::vector<float> x = stored(random_values(count_of(shape), -2, 2, 31));
    std::vector<float> want(static_cast<size_t>(rows), 0);
    for (size_t i = 0; i < x.size(); ++i) want[i / size] += x[i] / static_cast<float>(size);
    cl::Buffer x_buffer = upload(x), y_buffer = output(rows);
    auto event = enqueue_global_average_pool(ops(), queue_, x_buffer, shape, y_buffer);
    expect_close(download(event, y_buffer, rows), want,
                 "GlobalAveragePool of rows of " + std::to_string(size));
  }
  cl::Buffer x_buffer = upload(std::vector<float>(6)), y_buffer = output(6);
  EXPECT_FALSE(enqueue_global_average_pool(ops(), queue_, x_buffer, {6, 35}, y_buffer).is_ok());
}

// Row-major [batch..., m, k] x [batch..., k, n] by loops, batch dims broadcast.
std::vector<float> reference_matmul(const std::vector<float>& a, const Shape& a_shape,
                                    const std::vector<float>& b, const Shape& b_shape,
                                    const Shape& batch) {
  const int64_t m = a_shape[a_shape.size() - 2], k = a_shape.back(), n = b_shape.back();
  const Shape a_batch(a_shape.begin(), a_shape.end() - 2),
      b_batch(b_shape.begin(), b_shape.end() - 2);
  // Batch index of each operand per output batch, via the broadcasting reference on indices.
  std::vector<float> a_ids(static_cast<size_t>(count_of(a_batch))), b_ids(count_of(b_batch));
  for (size_t i = 0; i < a_ids.size(); ++i) a_ids[i] = static_cast<float>(i);
  for (size_t i = 0; i < b_ids.size(); ++i) b_ids[i] = static_cast<float>(i);
  const std::vector<float> a_of =
      reference_binary([](float x, float) { return x; }, a_ids, a_batch, b_ids, b_batch, batch);
  const std::vector<float> b_of =
      reference_binary([](float, float y) { return y; }, a_ids, a_batch, b_ids, b_batch, batch);
  std::vector<float> y(static_cast<size_t>(count_of(batch) * m * n));
  for (int64_t t = 0; t < count_of(batch); ++t) {
    const auto ia = static_cast<int64_t>(a_of[t]), ib = static_cast<int64_t>(b_of[t]);
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        double sum = 0;
        for (int64_t p = 0; p < k; ++p) sum += a[(ia * m + i) * k + p] * b[(ib * k + p) * n + j];
        y[(t * m + i) * n + j] = static_cast<float>(sum);
      }
    }
  }
  return y;
}

// While alive, CLBlast's single-precision GEMM takes its indirect path (padding and transposing
// kernels around the fast one, with a temporary: ops_matmul.cpp passes per-queue scratch) for
// every size, not only for the large ones; the device's setting comes back afterwards.
class ForceClblastIndirectGemm {
 public:
  explicit ForceClblastIndirectGemm(cl_device_id device) : device_(device) {
    ok_ = clblast::RetrieveParameters(device_, "GemmRoutine", clblast::Precision::kSingle,
                                      saved_) == clblast::StatusCode::kSuccess &&
          clblast::OverrideParameters(device_, "GemmRoutine", clblast::Precision::kSingle,
                                      {{"XGEMM_MIN_INDIRECT_SIZE", 1}}) ==
              clblast::StatusCode::kSuccess;
  }
  ~ForceClblastIndirectGemm() {
    if (ok_) {
      clblast::OverrideParameters(device_, "GemmRoutine", clblast::Precision::kSingle, saved_);
    }
  }
  bool ok() const { return ok_; }

 private:
  cl_device_id device_;
  std::unordered_map<std::string, size_t> saved_;
  bool ok_ = false;
};

TEST_P(OpenClOpsTest, MatMulWithBatchBroadcasting) {
  // Up to 2^27 multiply-adds in matmul_tiled, past that and for irregular batches CLBlast.
  const std::vector<std::pair<Shape, Shape>> cases = {
      {{7, 5}, {5, 3}},                   // plain
      {{2, 3, 17, 9}, {9, 13}},           // shared weights: the batch folds into M
      {{2, 1, 5, 4}, {3, 4, 6}},          // both batches broadcast: one CLBlast GEMM per batch
      {{1, 3, 7, 5}, {1, 3, 5, 6}},       // attention: one strided-batched product
      {{4, 3}, {2, 3, 5}},                // A broadcast over B's batch: strided, A's stride 0
      {{2, 3, 33, 17}, {2, 3, 17, 29}},   // strided over two batch dims, odd tile remainders
      {{1, 3, 9, 4}, {2, 1, 4, 5}},       // A's batch dims broadcast against B's: per batch
      {{1, 9}, {9, 13}},                  // one row
      {{3, 1, 7}, {2, 1, 7, 4}},          // one row per batch: a CLBlast GEMM per batch
      {{2, 256, 20}, {20, 4096}},         // 64-wide tiles (512 of them), K not a multiple of 16
      {{256, 20}, {20, 2048}},            // 32-wide tiles (512 of them); the small ones 16-wide
      {{1, 20, 600}, {600, 30}},          // K in 4 splits, the last one short
      {{3, 1, 20, 600}, {3, 1, 600, 7}},  // K in 4 splits per batch
      {{1, 520, 520}, {520, 500}},        // 135 M: CLBlast, the batch folded
      {{2, 260, 520}, {2, 520, 500}},     // 135 M: CLBlast's strided batch
      {{3, 0}, {0, 4}},                   // K = 0: zeros (CLBlast refuses empty sizes)
      {{2, 0, 5}, {5, 3}}};               // no output at all
  for (bool indirect : {false, true}) {
    std::optional<ForceClblastIndirectGemm> force;
    if (indirect) {
      force.emplace(device_->device());
      ASSERT_TRUE(force->ok()) << "CLBlast refused the GemmRoutine override";
    }
    for (const auto& [a_shape, b_shape] : cases) {
      const std::vector<float> a = stored(random_values(count_of(a_shape), -1, 1, 37));
      const std::vector<float> b = stored(random_values(count_of(b_shape), -1, 1, 41));
      const Shape batch = *broadcast_shape(Shape(a_shape.begin(), a_shape.end() - 2),
                                           Shape(b_shape.begin(), b_shape.end() - 2));
      const int64_t count = count_of(batch) * a_shape[a_shape.size() - 2] * b_shape.back();
      cl::Buffer a_buffer = upload(a), b_buffer = upload(b), y_buffer = output(count);
      auto event = enqueue_matmul(ops(), queue_, a_buffer, a_shape, b_buffer, b_shape, y_buffer);
      expect_close(download(event, y_buffer, count),
                   reference_matmul(a, a_shape, b, b_shape, batch),
                   "MatMul of rank " + std::to_string(a_shape.size()) +
                       (indirect ? " (CLBlast indirect)" : ""));
    }
  }
  cl::Buffer a_buffer = upload(std::vector<float>(6, 1)), y_buffer = output(4);
  EXPECT_FALSE(enqueue_matmul(ops(), queue_, a_buffer, {2, 3}, a_buffer, {2, 3}, y_buffer).is_ok());
}

// The program's fused MatMul epilogue: alpha, a bias row, a residual tensor and an activation,
// in that order, in matmul_tiled, after its split-K reduction, after CLBlast, and onto an empty
// product's zeros.
TEST_P(OpenClOpsTest, MatMulRunsItsEpilogue) {
  const std::vector<std::pair<Shape, Shape>> cases = {{{2, 7, 5}, {5, 3}},
                                                      {{1, 20, 600}, {600, 30}},
                                                      {{1, 520, 520}, {520, 500}},
                                                      {{3, 0}, {0, 4}}};
  for (const auto& [a_shape, b_shape] : cases) {
    for (const bool full : {false, true}) {  // the bias alone; everything
      const int64_t n = b_shape.back();
      const std::vector<float> a = stored(random_values(count_of(a_shape), -1, 1, 43));
      const std::vector<float> b = stored(random_values(count_of(b_shape), -1, 1, 47));
      const std::vector<float> bias = stored(random_values(n, -1, 1, 53));
      const Shape batch = *broadcast_shape(Shape(a_shape.begin(), a_shape.end() - 2),
                                           Shape(b_shape.begin(), b_shape.end() - 2));
      std::vector<float> want = reference_matmul(a, a_shape, b, b_shape, batch);
      const std::vector<float> residual =
          stored(random_values(static_cast<int64_t>(want.size()), -1, 1, 59));
      const float alpha = full ? 0.5f : 1.0f;
      for (size_t i = 0; i < want.size(); ++i) {
        want[i] = alpha * want[i] + bias[i % static_cast<size_t>(n)];
        if (full) want[i] = std::max(want[i] + residual[i], 0.0f);
      }
      const auto count = static_cast<int64_t>(want.size());
      cl::Buffer a_buffer = upload(a), b_buffer = upload(b), bias_buffer = upload(bias);
      cl::Buffer residual_buffer = upload(residual), y_buffer = output(count);
      MatMulFusion fusion{.bias = &bias_buffer};
      if (full) {
        fusion.alpha = alpha;
        fusion.residual = &residual_buffer;
        fusion.activation = Activation{.op = UnaryOp::kRelu};
      }
      auto event =
          enqueue_matmul(ops(), queue_, a_buffer, a_shape, b_buffer, b_shape, y_buffer, {}, fusion);
      expect_close(download(event, y_buffer, count), want,
                   std::string(full ? "MatMul with its whole epilogue" : "MatMul with a bias") +
                       ", K " + std::to_string(a_shape.back()));
    }
  }
}

// Products of one A by several B (enqueue_matmul_group): one launch where every product has its
// bias (3 products, A's batch folded into M), a product each where only some have one; each as
// enqueue_matmul computes it.
TEST_P(OpenClOpsTest, MatMulGroupMatchesItsProducts) {
  const Shape a_shape = {2, 5, 7}, b_shape = {7, 6};
  const std::vector<float> a = stored(random_values(count_of(a_shape), -1, 1, 83));
  cl::Buffer a_buffer = upload(a);
  for (const bool all_biased : {true, false}) {
    std::vector<cl::Buffer> bs, biases, ys;
    std::vector<std::vector<float>> wants;
    for (uint32_t p = 0; p < 3; ++p) {
      const std::vector<float> b = stored(random_values(count_of(b_shape), -1, 1, 89 + p));
      const std::vector<float> bias = stored(random_values(6, -1, 1, 97 + p));
      std::vector<float> want = reference_matmul(a, a_shape, b, b_shape, {2});
      const bool biased = all_biased || p == 1;
      for (size_t i = 0; i < want.size() && biased; ++i) want[i] += bias[i % 6];
      bs.push_back(upload(b));
      biases.push_back(upload(bias));
      ys.push_back(output(60));
      wants.push_back(std::move(want));
    }
    std::vector<GroupedProduct> products;
    for (size_t p = 0; p < 3; ++p) {
      const bool biased = all_biased || p == 1;
      products.push_back({&bs[p], biased ? &biases[p] : nullptr, &ys[p]});
    }
    auto event = enqueue_matmul_group(ops(), queue_, a_buffer, a_shape, b_shape, products);
    for (size_t p = 0; p < 3; ++p) {
      expect_close(download(event, ys[p], 60), wants[p],
                   "product " + std::to_string(p) + (all_biased ? ", one launch" : ", apart"));
    }
  }
  cl::Buffer b_buffer = upload(std::vector<float>(42, 1.0f)), y_buffer = output(60);
  const std::vector<GroupedProduct> too_many(5, GroupedProduct{&b_buffer, nullptr, &y_buffer});
  EXPECT_FALSE(enqueue_matmul_group(ops(), queue_, a_buffer, a_shape, b_shape, too_many).is_ok());
}

// A residual shared by every batch (an attention mask, [M, N] for [batch, M, N]): in
// matmul_tiled (the batch not folded into M), after its split-K reduction, and after CLBlast.
TEST_P(OpenClOpsTest, MatMulAddsASharedResidual) {
  const std::vector<std::pair<Shape, Shape>> cases = {
      {{3, 7, 5}, {5, 3}}, {{2, 20, 600}, {600, 30}}, {{2, 520, 520}, {520, 500}}};
  for (const auto& [a_shape, b_shape] : cases) {
    const int64_t m = a_shape[1], n = b_shape.back();
    const std::vector<float> a = stored(random_values(count_of(a_shape), -1, 1, 71));
    const std::vector<float> b = stored(random_values(count_of(b_shape), -1, 1, 73));
    const std::vector<float> mask = stored(random_values(m * n, -1, 1, 79));
    std::vector<float> want = reference_matmul(a, a_shape, b, b_shape, {a_shape[0]});
    for (size_t i = 0; i < want.size(); ++i) want[i] += mask[i % static_cast<size_t>(m * n)];
    const auto count = static_cast<int64_t>(want.size());
    cl::Buffer a_buffer = upload(a), b_buffer = upload(b), mask_buffer = upload(mask);
    cl::Buffer y_buffer = output(count);
    const MatMulFusion fusion{.residual = &mask_buffer, .residual_shared = true};
    auto event =
        enqueue_matmul(ops(), queue_, a_buffer, a_shape, b_buffer, b_shape, y_buffer, {}, fusion);
    expect_close(download(event, y_buffer, count), want,
                 "MatMul with a shared residual, K " + std::to_string(a_shape.back()));
  }
}

// Operands read in place through views: A the second of three [4, 6] blocks of its buffer (an
// offset), B the transpose of a [5, 6] block (strides); a view reaching past its buffer is
// refused before anything runs.
TEST_P(OpenClOpsTest, MatMulReadsOperandsThroughViews) {
  const std::vector<float> a = stored(random_values(3 * 4 * 6, -1, 1, 61));
  const std::vector<float> b = stored(random_values(5 * 6, -1, 1, 67));
  std::vector<float> a_block(a.begin() + 24, a.begin() + 48), b_t(6 * 5);
  for (int64_t i = 0; i < 5; ++i) {
    for (int64_t j = 0; j < 6; ++j)
      b_t[static_cast<size_t>(j * 5 + i)] = b[static_cast<size_t>(i * 6 + j)];
  }
  const std::vector<float> want = reference_matmul(a_block, {4, 6}, b_t, {6, 5}, {});
  cl::Buffer a_buffer = upload(a), b_buffer = upload(b), y_buffer = output(20);
  const MatMulFusion fusion{.a_view = StridedView{.dims = {4, 6}, .strides = {6, 1}, .offset = 24},
                            .b_view = StridedView{.dims = {6, 5}, .strides = {1, 6}, .offset = 0}};
  auto event =
      enqueue_matmul(ops(), queue_, a_buffer, {3, 4, 6}, b_buffer, {5, 6}, y_buffer, {}, fusion);
  expect_close(download(event, y_buffer, 20), want, "MatMul through views");
  MatMulFusion past = fusion;
  past.a_view->offset = 49;
  EXPECT_FALSE(
      enqueue_matmul(ops(), queue_, a_buffer, {3, 4, 6}, b_buffer, {5, 6}, y_buffer, {}, past)
          .is_ok());
}

TEST_P(OpenClOpsTest, GemmWithTransposesAndBroadcastC) {
  const int64_t n = 5;
  // One row: a GEMV (a classifier's head), with K beyond a work group of 64 too.
  // {6, 600}: K in 4 splits; a C of shape [n] is added in the product's kernel.
  for (const auto& [m, k] :
       std::vector<std::pair<int64_t, int64_t>>{{6, 11}, {1, 11}, {1, 150}, {6, 600}}) {
    for (bool trans_a : {false, true}) {
      for (bool trans_b : {false, true}) {
        for (const Shape& c_shape : {Shape{n}, Shape{m, 1}}) {
          const std::vector<float> a = stored(random_values(m * k, -1, 1, 43));
          const std::vector<float> b = stored(random_values(k * n, -1, 1, 47));
          const std::vector<float> c = stored(random_values(count_of(c_shape), -1, 1, 53));
          const GemmParams params{
              .trans_a = trans_a, .trans_b = trans_b, .alpha = 0.5f, .beta = 2.0f};
          std::vector<float> want(m * n);
          for (int64_t i = 0; i < m; ++i) {
            for (int64_t j = 0; j < n; ++j) {
              double sum = 0;
              for (int64_t p = 0; p < k; ++p) {
                sum += a[trans_a ? p * m + i : i * k + p] * b[trans_b ? j * k + p : p * n + j];
              }
              const float c_value = c_shape.size() == 1 ? c[j] : c[i];
              want[i * n + j] = static_cast<float>(params.alpha * sum + params.beta * c_value);
            }
          }
          cl::Buffer a_buffer = upload(a), b_buffer = upload(b), c_buffer = upload(c);
          cl::Buffer y_buffer = output(m * n);
          const Shape a_shape = trans_a ? Shape{k, m} : Shape{m, k};
          const Shape b_shape = trans_b ? Shape{n, k} : Shape{k, n};
          auto event = enqueue_gemm(ops(), queue_, a_buffer, a_shape, b_buffer, b_shape, &c_buffer,
                                    c_shape, params, y_buffer);
          expect_close(download(event, y_buffer, m * n), want,
                       "Gemm of " + std::to_string(m) + "x" + std::to_string(k) + ", transA " +
                           std::to_string(trans_a) + " transB " + std::to_string(trans_b) +
                           " C rank " + std::to_string(c_shape.size()));
        }
      }
    }
  }
}

// K = 0: the product is empty, so y = beta * C (CLBlast refuses empty sizes; zeros are filled).
TEST_P(OpenClOpsTest, GemmWithEmptyInnerDimension) {
  const std::vector<float> c = stored(random_values(4, -1, 1, 67));
  cl::Buffer a_buffer = upload({}), b_buffer = upload({}), c_buffer = upload(c);
  cl::Buffer y_buffer = output(8);
  const GemmParams params{.alpha = 1.0f, .beta = 2.0f};
  auto event = enqueue_gemm(ops(), queue_, a_buffer, {2, 0}, b_buffer, {0, 4}, &c_buffer, {4},
                            params, y_buffer);
  std::vector<float> want;
  for (int row = 0; row < 2; ++row) {
    for (float v : c) want.push_back(2.0f * v);
  }
  expect_close(download(event, y_buffer, 8), want, "Gemm with K = 0");
}

// Events chain work across queues: the second op waits on the first through its wait list.
TEST_P(OpenClOpsTest, EnqueuesChainThroughEvents) {
  const int64_t count = 100;
  const std::vector<float> x = stored(random_values(count, -2, 2, 59));
  cl::Buffer x_buffer = upload(x), relu = output(count), y_buffer = output(count);
  cl::CommandQueue other(device_->context, device_->device);
  auto first = enqueue_unary(ops(), queue_, UnaryOp::kRelu, 0, 0, x_buffer, relu, count);
  ASSERT_TRUE(first.is_ok()) << first.status().message();
  auto second = enqueue_unary(ops(), other, UnaryOp::kNeg, 0, 0, relu, y_buffer, count, {*first});
  std::vector<float> want;
  for (float v : x) want.push_back(-std::max(v, 0.0f));
  expect_close(download(second, y_buffer, count), want, "Relu then Neg");
}

INSTANTIATE_TEST_SUITE_P(Storage, OpenClOpsTest,
                         ::testing::Values(Storage::kFloat32, Storage::kFloat16),
                         [](const ::testing::TestParamInfo<Storage>& info) {
                           return info.param == Storage::kFloat16 ? "fp16" : "fp32";
                         });

}  // namespace
}  // namespace hsched::opencl
