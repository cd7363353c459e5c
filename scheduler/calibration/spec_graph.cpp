// A benchmark's building blocks and its graph (calibrate_specs.h): built, imported and, for a QDQ
// benchmark, quantized.
#include <cmath>
#include <memory>
#include <random>
#include <string>
#include <utility>

#include <onnx/onnx_pb.h>

#include "graph/onnx_import.h"
#include "scheduler/calibration/calibrate_specs.h"
#include "scheduler/planner/cost_model.h"
#include "scheduler/quantize/quantize_proto.h"

namespace hsched::calibration {
namespace {

constexpr int64_t kOpset = 17;

// A QDQ benchmark's outputs stay 8-bit: each output's DequantizeLinear that nothing else reads is
// dropped, as a model's next layer takes it in (a fan of products timed a dequantization to float
// per product: on the H200 BERT's 128 x 256 x 1024 product 0.022 ms a node with it, 0.019
// without).
void keep_outputs_quantized(onnx::GraphProto& graph) {
  const auto read = [&](const std::string& name) {
    for (const onnx::NodeProto& node : graph.node()) {
      for (const std::string& input : node.input()) {
        if (input == name) return true;
      }
    }
    return false;
  };
  for (onnx::ValueInfoProto& output : *graph.mutable_output()) {
    if (read(output.name())) continue;
    for (int n = 0; n < graph.node_size(); ++n) {
      const onnx::NodeProto& node = graph.node(n);
      if (node.op_type() != "DequantizeLinear" || node.output(0) != output.name()) continue;
      output.set_name(node.input(0));
      output.mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::UINT8);
      graph.mutable_node()->DeleteSubrange(n, 1);
      break;
    }
  }
}

}  // namespace

uint32_t next_seed() {
  static uint32_t seed = 1;
  return seed++;
}

void add_conv(OnnxBuilder& b, const std::string& x, int64_t cin, int64_t cout, int64_t k,
              int64_t stride, int64_t pad, bool depthwise, const std::string& w,
              const std::string& y) {
  const float scale = 1.0f / std::sqrt(static_cast<float>((depthwise ? 1 : cin) * k * k));
  b.initializer_random(w, {cout, depthwise ? 1 : cin, k, k}, scale, next_seed());
  b.initializer_random(w + ".b", {cout}, 0.05f, next_seed());
  onnx::NodeProto& node = b.node("Conv", {x, w, w + ".b"}, {y});
  set_attr(node, "kernel_shape", std::vector<int64_t>{k, k});
  set_attr(node, "pads", std::vector<int64_t>{pad, pad, pad, pad});
  if (stride != 1) set_attr(node, "strides", std::vector<int64_t>{stride, stride});
  if (depthwise) set_attr(node, "group", cin);
}

Spec chain_spec(std::string name, CostClass cost_class, std::vector<int64_t> dims,
                std::function<void(OnnxBuilder&, const std::string&, const std::string&)> add) {
  Spec spec;
  spec.name = std::move(name);
  spec.cost_class = cost_class;
  spec.build = [=](OnnxBuilder& b, int nodes) {
    b.input("x", DType::kF32, dims);
    std::string x = "x";
    for (int i = 0; i < nodes; ++i) {
      const std::string y = i + 1 == nodes ? "y" : "t" + std::to_string(i);
      add(b, x, y);
      x = y;
    }
    b.output("y", DType::kF32, dims);
  };
  return spec;
}

std::string size_name(int64_t elements) {
  if (elements >= (1 << 20)) return std::to_string(elements >> 20) + "M";
  return elements >= (1 << 10) ? std::to_string(elements >> 10) + "K" : std::to_string(elements);
}

Spec fan_spec(std::string name, CostClass cost_class, const std::string& op, int inputs,
              const std::vector<int64_t>& image, const std::vector<int64_t>& out, bool on_host,
              bool from_convs, AddNode add) {
  Spec spec;
  spec.name = std::move(name);
  spec.cost_class = cost_class;
  if (on_host) spec.timed_op = op;
  spec.work_node = from_convs ? inputs : 0;
  spec.build = [=](OnnxBuilder& b, int nodes) {
    const int64_t c = image[1];
    b.input("x", DType::kF32, image);
    std::vector<std::string> in;
    for (int i = 0; i < inputs; ++i) {
      const std::string value = from_convs ? "producer" + std::to_string(i) : i == 0 ? "x" : "z";
      if (from_convs) {
        b.initializer_random(value + ".w", {c, c, 1, 1}, 1.0f / std::sqrt(static_cast<float>(c)),
                             next_seed());
        b.node("Conv", {"x", value + ".w"}, {value});
      } else if (i > 0) {
        b.input(value, DType::kF32, image);
      }
      in.push_back(value);
    }
    for (int i = 0; i < nodes; ++i) {
      const std::string y = "y" + std::to_string(i);
      if (!on_host) {
        add(b, in, y);
        b.output(y, DType::kF32, out);
        continue;
      }
      const std::string node = "op" + std::to_string(i);
      add(b, in, node);
      b.node("GlobalAveragePool", {node}, {y});
      b.output(y, DType::kF32, {1, out[1], 1, 1});
    }
  };
  return spec;
}

std::vector<Tensor> random_inputs(const Graph& graph) {
  std::vector<Tensor> inputs;
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  for (ValueId id : graph.inputs()) {
    const Value& value = graph.value(id);
    Tensor tensor(value.dtype, value.shape.dims);
    for (float& v : tensor.values<float>()) v = uniform(rng);
    inputs.push_back(std::move(tensor));
  }
  return inputs;
}

Result<Graph> spec_graph(const Spec& spec, int nodes, bool as_run) {
  OnnxBuilder builder(kOpset, spec.name);
  spec.build(builder, nodes);
  if (!spec.quantized || !as_run) return import_onnx_model(builder.model(), {}, spec.name, "");
  onnx::ModelProto built = builder.model();  // the import consumes what it reads
  HSCHED_ASSIGN_OR_RETURN(Graph graph, import_onnx_model(built, {}, spec.name, ""));
  QuantizeOptions quantize;
  quantize.calibration = {random_inputs(graph)};
  quantize.activations = DType::kU8;  // the type keep_outputs_quantized gives the outputs
  quantize.cpu_threads = 1;
  const Model model(std::make_shared<const Graph>(std::move(graph)), spec.name);
  HSCHED_RETURN_IF_ERROR(
      quantize_proto(builder.model(), model, {}, quantize, spec.name, ".").status());
  keep_outputs_quantized(*builder.model().mutable_graph());
  return import_onnx_model(builder.model(), {}, spec.name, "");
}

Result<double> point_work(const Spec& spec, int nodes, const DeviceProfile& device,
                          const Graph* as_run) {
  const auto work = [&](const Graph& graph) {
    return planner::node_work(graph, spec.work_node, spec.precision, device, spec.cost_class).work;
  };
  if (as_run != nullptr && !spec.quantized) return work(*as_run);
  HSCHED_ASSIGN_OR_RETURN(Graph graph, spec_graph(spec, nodes, false));
  return work(graph);
}

}  // namespace hsched::calibration
