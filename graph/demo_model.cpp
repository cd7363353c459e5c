#include "graph/demo_model.h"

#include <cmath>
#include <string>
#include <vector>

#include "graph/onnx_builder.h"
#include "graph/onnx_import.h"

namespace hsched {
namespace {

constexpr int64_t kDemoOpset = 17;
constexpr int64_t kImageSize = 64;  // input is 1x3x64x64
constexpr int64_t kClasses = 10;

// Adds layers to an OnnxBuilder; every weight gets its own seed so the model is deterministic.
class DemoBuilder {
 public:
  DemoBuilder() : b_(kDemoOpset, kDemoModelName) {}

  OnnxBuilder& builder() { return b_; }

  // Conv with bias; He-like uniform weights: variance 2/fan_in gives bound sqrt(6/fan_in).
  std::string conv(const std::string& name, const std::string& x, int64_t cin, int64_t cout,
                   int64_t kernel, int64_t stride) {
    const std::string w = name + ".weight";
    const std::string bias = name + ".bias";
    const auto fan_in = static_cast<float>(cin * kernel * kernel);
    b_.initializer_random(w, {cout, cin, kernel, kernel}, std::sqrt(6.0f / fan_in), next_seed());
    b_.initializer_random(bias, {cout}, 0.05f, next_seed());
    const int64_t pad = kernel / 2;
    onnx::NodeProto& node = b_.node("Conv", {x, w, bias}, {name}, name);
    set_attr(node, "kernel_shape", std::vector<int64_t>{kernel, kernel});
    set_attr(node, "pads", std::vector<int64_t>{pad, pad, pad, pad});
    set_attr(node, "strides", std::vector<int64_t>{stride, stride});
    return name;
  }

  // Inference-mode BatchNormalization with fixed, slightly varied statistics.
  std::string batch_norm(const std::string& name, const std::string& x, int64_t channels) {
    std::vector<float> scale, shift, mean, var;
    for (int64_t c = 0; c < channels; ++c) {
      const auto f = static_cast<float>(c) / static_cast<float>(channels);
      scale.push_back(0.9f + 0.2f * f);
      shift.push_back(0.05f * (f - 0.5f));
      mean.push_back(0.02f * (0.5f - f));
      var.push_back(0.8f + 0.4f * f);
    }
    b_.initializer_f32(name + ".scale", {channels}, scale);
    b_.initializer_f32(name + ".bias", {channels}, shift);
    b_.initializer_f32(name + ".mean", {channels}, mean);
    b_.initializer_f32(name + ".var", {channels}, var);
    onnx::NodeProto& node =
        b_.node("BatchNormalization",
                {x, name + ".scale", name + ".bias", name + ".mean", name + ".var"}, {name}, name);
    set_attr(node, "epsilon", 1e-5f);
    return name;
  }

  std::string unary(const std::string& op, const std::string& name, const std::string& x) {
    b_.node(op, {x}, {name}, name);
    return name;
  }

  std::string add(const std::string& name, const std::string& a, const std::string& b) {
    b_.node("Add", {a, b}, {name}, name);
    return name;
  }

  // conv3x3(stride) - relu - conv3x3 - add skip - relu; a 1x1 projection when the shape changes.
  std::string residual_block(const std::string& name, const std::string& x, int64_t cin,
                             int64_t cout, int64_t stride) {
    std::string y = conv(name + ".conv1", x, cin, cout, 3, stride);
    y = unary("Relu", name + ".relu1", y);
    y = conv(name + ".conv2", y, cout, cout, 3, 1);
    std::string skip = x;
    if (stride != 1 || cin != cout) skip = conv(name + ".proj", x, cin, cout, 1, stride);
    y = add(name + ".add", y, skip);
    return unary("Relu", name + ".relu2", y);
  }

  std::string gemm(const std::string& name, const std::string& x, int64_t in, int64_t out,
                   const std::string& output) {
    const std::string w = name + ".weight";
    const std::string bias = name + ".bias";
    b_.initializer_random(w, {out, in}, std::sqrt(6.0f / static_cast<float>(in)), next_seed());
    b_.initializer_random(bias, {out}, 0.05f, next_seed());
    onnx::NodeProto& node = b_.node("Gemm", {x, w, bias}, {output}, name);
    set_attr(node, "transB", 1);
    return output;
  }

 private:
  uint32_t next_seed() { return seed_++; }

  OnnxBuilder b_;
  uint32_t seed_ = 1;
};

}  // namespace

onnx::ModelProto build_demo_model_proto() {
  DemoBuilder d;
  d.builder().input("input", DType::kF32, {1, 3, kImageSize, kImageSize});
  d.builder().output("logits", DType::kF32, {1, kClasses});

  std::string x = d.conv("stem.conv", "input", 3, 16, 3, 1);  // 1x16x64x64
  x = d.batch_norm("stem.bn", x, 16);
  x = d.unary("Relu", "stem.relu", x);
  x = d.residual_block("block1", x, 16, 16, 1);  // 1x16x64x64
  x = d.residual_block("block2", x, 16, 32, 2);  // 1x32x32x32
  x = d.unary("GlobalAveragePool", "pool", x);   // 1x32x1x1
  onnx::NodeProto& flatten = d.builder().node("Flatten", {x}, {"flatten"}, "flatten");
  set_attr(flatten, "axis", 1);                     // 1x32
  d.gemm("fc", "flatten", 32, kClasses, "logits");  // 1x10
  return std::move(d.builder().model());
}

Result<Graph> build_demo_graph() {
  onnx::ModelProto proto = build_demo_model_proto();
  return import_onnx_model(proto, {}, kDemoModelName, {});
}

}  // namespace hsched
