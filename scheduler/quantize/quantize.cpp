// hsched::quantize_model: import and validate, plan (quantize_plan.cpp), calibrate the activation
// ranges (calibrate_ranges.cpp), rewrite the ONNX graph with QuantizeLinear/DequantizeLinear nodes
// and int8/int32 initializers, import the result again as a check, write it.
#include "hsched/quantize.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <set>
#include <sstream>

#include <onnx/onnx_pb.h>

#include "core/mapped_file.h"
#include "graph/onnx_import.h"
#include "graph/tensor_proto.h"
#include "hsched/atomic_file.h"
#include "scheduler/quantize/calibrate_ranges.h"
#include "scheduler/quantize/quantize_plan.h"
#include "scheduler/quantize/quantize_proto.h"

namespace hsched {
namespace {

namespace fs = std::filesystem;

struct QuantParams {
  float scale = 1;
  int32_t zero_point = 0;
};

// Asymmetric 8-bit parameters of a range: [min, max] onto [qmin, qmax] with 0 exact.
QuantParams activation_params(const Range& range, DType type) {
  const float qmin = type == DType::kU8 ? 0.0f : -128.0f;
  const float qmax = type == DType::kU8 ? 255.0f : 127.0f;
  const float scale = (range.max - range.min) / (qmax - qmin);
  if (!(scale >= std::numeric_limits<float>::min())) return {1.0f, static_cast<int32_t>(qmin)};
  const float zero = std::clamp(std::nearbyint(qmin - range.min / scale), qmin, qmax);
  return {scale, static_cast<int32_t>(zero)};
}

int64_t default_opset(const onnx::ModelProto& model) {
  for (const onnx::OperatorSetIdProto& opset : model.opset_import()) {
    if (opset.domain().empty() || opset.domain() == "ai.onnx") return opset.version();
  }
  return 0;
}

// A half (float16 or bfloat16) initializer, graph input or output of `graph`, or "": the rewrite
// writes float32 scales and taps beside the proto's own types, which a half model does not take
// (QuantizeLinear reads float16 only from opset 19).
std::string half_tensor_of(const onnx::GraphProto& graph) {
  const auto is_half = [](int32_t type) {
    return type == onnx::TensorProto::FLOAT16 || type == onnx::TensorProto::BFLOAT16;
  };
  for (const auto& init : graph.initializer()) {
    if (is_half(init.data_type())) return "initializer '" + init.name() + "'";
  }
  for (const auto* values : {&graph.input(), &graph.output()}) {
    for (const auto& value : *values) {
      if (value.type().has_tensor_type() && is_half(value.type().tensor_type().elem_type())) {
        return "'" + value.name() + "'";
      }
    }
  }
  return "";
}

// Writes the rewritten graph into `model`: new initializers and nodes, readers rewired.
class Rewriter {
 public:
  Rewriter(onnx::ModelProto& model, const Graph& graph, const fs::path& base_dir, DType activations)
      : model_(model), graph_(graph), external_(base_dir), activations_(activations) {
    const onnx::GraphProto& proto = model.graph();
    for (const onnx::TensorProto& init : proto.initializer()) names_.insert(init.name());
    for (const onnx::ValueInfoProto& v : proto.input()) names_.insert(v.name());
    for (const onnx::NodeProto& node : proto.node()) {
      names_.insert(node.name());
      for (const std::string& output : node.output()) names_.insert(output);
    }
  }

  Status apply(const QuantizePlan& plan, const std::map<std::string, Range>& ranges) {
    onnx::GraphProto& graph = *model_.mutable_graph();
    for (const onnx::TensorProto& init : graph.initializer()) initializers_[init.name()] = &init;
    for (const WeightQuant& weight : plan.weights) HSCHED_RETURN_IF_ERROR(quantize_weight(weight));
    std::set<std::string> produced, outputs;
    for (const onnx::NodeProto& node : graph.node())
      produced.insert(node.output().begin(), node.output().end());
    for (const onnx::ValueInfoProto& output : graph.output()) outputs.insert(output.name());
    for (const ActivationQuant& act : plan.activations) {
      const Range range = act.unit_range ? Range{0.0f, 1.0f} : ranges.at(act.tensor);
      const QuantParams params = activation_params(range, activations_);
      if (!std::isfinite(params.scale)) {
        return invalid_argument("tensor '" + act.tensor + "': its range is too wide for 8 bits");
      }
      params_[act.tensor] = params;
      const std::string q = unique(act.tensor + "_quantized");
      const std::string scale = add_scalar_f32(act.tensor + "_scale", params.scale);
      const std::string zero = add_zero_point(act.tensor + "_zero_point", params.zero_point);
      std::string source = act.source, dq;
      if (outputs.count(act.tensor) && produced.count(act.tensor) && source == act.tensor) {
        // A graph output keeps its name, now the DequantizeLinear's: its producer writes the
        // float value under a new name, so that the op still ends in a QuantizeLinear.
        source = unique(act.tensor + "_float");
        output_rename_[act.tensor] = source;
        dq = act.tensor;
      } else {
        dq = unique(act.tensor + "_dequantized");
        rename_[act.tensor] = dq;
      }
      after_[source].push_back(make_node("QuantizeLinear", {source, scale, zero}, q));
      after_[source].push_back(make_node("DequantizeLinear", {q, scale, zero}, dq));
    }
    std::map<int, std::pair<std::string, std::string>> bias_of;  // node -> (float, dequantized)
    for (const BiasQuant& bias : plan.biases) {
      HSCHED_ASSIGN_OR_RETURN(std::string dq, quantize_bias(bias));
      if (!dq.empty()) bias_of[bias.node] = {bias.bias, dq};
    }

    google::protobuf::RepeatedPtrField<onnx::NodeProto> nodes;
    for (const onnx::NodeProto& node : prologue_) *nodes.Add() = node;
    for (const onnx::ValueInfoProto& input : graph.input()) append_after(input.name(), nodes);
    for (int i = 0; i < graph.node_size(); ++i) {
      if (plan.removed.count(i)) continue;
      onnx::NodeProto node = graph.node(i);
      for (std::string& input : *node.mutable_input()) {
        const auto bias = bias_of.find(i);
        if (bias != bias_of.end() && input == bias->second.first) {
          input = bias->second.second;
        } else if (const auto renamed = rename_.find(input); renamed != rename_.end()) {
          input = renamed->second;
        }
      }
      for (std::string& output : *node.mutable_output()) {
        if (const auto renamed = output_rename_.find(output); renamed != output_rename_.end()) {
          output = renamed->second;
        }
      }
      *nodes.Add() = node;
      for (const std::string& output : node.output()) append_after(output, nodes);
    }
    // A folded node's output is produced no more: no value_info may describe it.
    std::set<std::string> gone;
    for (int i : plan.removed)
      gone.insert(graph.node(i).output().begin(), graph.node(i).output().end());
    auto* infos = graph.mutable_value_info();
    infos->erase(
        std::remove_if(infos->begin(), infos->end(),
                       [&](const onnx::ValueInfoProto& v) { return gone.count(v.name()); }),
        infos->end());
    graph.mutable_node()->Swap(&nodes);
    return drop_unread_and_embed(graph);
  }

 private:
  std::string unique(const std::string& base) {
    std::string name = base;
    for (int k = 1; names_.count(name); ++k) name = base + "_" + std::to_string(k);
    names_.insert(name);
    return name;
  }

  std::string add_initializer(const std::string& base, const Tensor& tensor) {
    const std::string name = unique(base);
    tensor_to_proto(tensor, name, model_.mutable_graph()->add_initializer());
    return name;
  }
  std::string add_scalar_f32(const std::string& base, float value) {
    return add_initializer(base, Tensor::from_vector<float>(DType::kF32, {}, {value}));
  }
  std::string add_zero_point(const std::string& base, int32_t value) {
    Tensor zero(activations_, {});
    if (activations_ == DType::kU8) {
      zero.values<uint8_t>()[0] = static_cast<uint8_t>(value);
    } else {
      zero.values<int8_t>()[0] = static_cast<int8_t>(value);
    }
    return add_initializer(base, zero);
  }

  onnx::NodeProto make_node(const std::string& op, const std::vector<std::string>& inputs,
                            const std::string& output, int axis = -1) {
    onnx::NodeProto node;
    node.set_op_type(op);
    node.set_name(unique(output + "_" + op));
    for (const std::string& input : inputs) node.add_input(input);
    node.add_output(output);
    if (axis >= 0) {
      onnx::AttributeProto* attr = node.add_attribute();
      attr->set_name("axis");
      attr->set_type(onnx::AttributeProto::INT);
      attr->set_i(axis);
    }
    return node;
  }

  void append_after(const std::string& value,
                    google::protobuf::RepeatedPtrField<onnx::NodeProto>& nodes) {
    const auto found = after_.find(value);
    if (found == after_.end()) return;
    for (const onnx::NodeProto& node : found->second) *nodes.Add() = node;
  }

  // An initializer's data, or the constant hsched folded the value to.
  Result<Tensor> load(const std::string& name) {
    const auto init = initializers_.find(name);
    if (init != initializers_.end()) return tensor_from_proto(*init->second, &external_);
    return *graph_.value(*graph_.find_value(name)).constant;
  }

  // Symmetric int8 (zero point 0, [-127, 127]), a scale per slice along `axis` (or one).
  Status quantize_weight(const WeightQuant& weight) {
    HSCHED_ASSIGN_OR_RETURN(Tensor values, load(weight.name));
    const std::vector<int64_t>& dims = values.dims();
    const int64_t channels = weight.axis < 0 ? 1 : dims[static_cast<size_t>(weight.axis)];
    int64_t inner = 1;
    for (size_t d = static_cast<size_t>(weight.axis + 1); weight.axis >= 0 && d < dims.size();
         ++d) {
      inner *= dims[d];
    }
    if (weight.axis < 0) inner = values.elements();
    const std::span<const float> w = values.values<float>();
    if (!std::all_of(w.begin(), w.end(), [](float v) { return std::isfinite(v); })) {
      return invalid_argument("initializer '" + weight.name +
                              "' holds a non-finite value; it cannot be quantized");
    }
    const auto channel_of = [&](int64_t i) { return (i / inner) % channels; };
    std::vector<float> scales(static_cast<size_t>(channels), 0.0f);
    for (int64_t i = 0; i < values.elements(); ++i) {
      float& amax = scales[static_cast<size_t>(channel_of(i))];
      amax = std::max(amax, std::fabs(w[static_cast<size_t>(i)]));
    }
    for (float& s : scales) s = s / 127.0f >= std::numeric_limits<float>::min() ? s / 127.0f : 1.0f;
    Tensor q(DType::kI8, dims);
    std::span<int8_t> qv = q.values<int8_t>();
    for (int64_t i = 0; i < values.elements(); ++i) {
      const float scaled = w[static_cast<size_t>(i)] / scales[static_cast<size_t>(channel_of(i))];
      qv[static_cast<size_t>(i)] =
          static_cast<int8_t>(std::clamp(std::nearbyint(scaled), -127.0f, 127.0f));
    }
    const std::vector<int64_t> param_dims =
        weight.axis < 0 ? std::vector<int64_t>{} : std::vector<int64_t>{channels};
    const std::string q_name = add_initializer(weight.name + "_quantized", q);
    const std::string s_name = add_initializer(
        weight.name + "_scale", Tensor::from_vector<float>(DType::kF32, param_dims, scales));
    const std::string z_name =
        add_initializer(weight.name + "_zero_point", Tensor(DType::kI8, param_dims));
    const std::string dq = unique(weight.name + "_dequantized");
    prologue_.push_back(make_node("DequantizeLinear", {q_name, s_name, z_name}, dq, weight.axis));
    rename_[weight.name] = dq;
    weight_scales_[weight.name] = std::move(scales);
    replaced_.insert(weight.name);
    return Status::ok();
  }

  // An int32 bias at scale input_scale * weight_scale[m]; "" (the float bias stays) when a value
  // does not fit int32 or the sizes do not match the weight's scales.
  Result<std::string> quantize_bias(const BiasQuant& bias) {
    const auto input = params_.find(bias.input);
    const auto weight = weight_scales_.find(bias.weight);
    if (input == params_.end() || weight == weight_scales_.end()) return std::string();
    HSCHED_ASSIGN_OR_RETURN(Tensor values, load(bias.bias));
    const std::vector<float>& w_scales = weight->second;
    const int64_t n = values.elements();
    if (w_scales.size() != 1 && static_cast<int64_t>(w_scales.size()) != n) return std::string();
    std::vector<float> scales(static_cast<size_t>(w_scales.size()));
    for (size_t m = 0; m < scales.size(); ++m) scales[m] = input->second.scale * w_scales[m];
    Tensor q(DType::kI32, {n});
    const std::span<const float> b = values.values<float>();
    for (int64_t m = 0; m < n; ++m) {
      const float scale = scales[scales.size() == 1 ? 0 : static_cast<size_t>(m)];
      const double scaled = std::nearbyint(static_cast<double>(b[static_cast<size_t>(m)]) / scale);
      if (!(std::fabs(scaled) <= std::numeric_limits<int32_t>::max())) return std::string();
      q.values<int32_t>()[static_cast<size_t>(m)] = static_cast<int32_t>(scaled);
    }
    const bool per_axis = scales.size() != 1;
    const std::vector<int64_t> param_dims =
        per_axis ? std::vector<int64_t>{n} : std::vector<int64_t>{};
    const std::string q_name = add_initializer(bias.bias + "_quantized", q);
    const std::string s_name =
        add_initializer(bias.bias + "_quantized_scale",
                        Tensor::from_vector<float>(DType::kF32, param_dims, scales));
    const std::string z_name =
        add_initializer(bias.bias + "_quantized_zero_point", Tensor(DType::kI32, param_dims));
    const std::string dq = unique(bias.bias + "_dequantized");
    prologue_.push_back(
        make_node("DequantizeLinear", {q_name, s_name, z_name}, dq, per_axis ? 0 : -1));
    replaced_.insert(bias.bias);
    return dq;
  }

  // Float initializers replaced above that nothing reads any more are dropped; initializers kept
  // in external files are embedded, the output being written elsewhere.
  Status drop_unread_and_embed(onnx::GraphProto& graph) {
    std::set<std::string> read;
    for (const onnx::NodeProto& node : graph.node()) {
      for (const std::string& input : node.input()) read.insert(input);
      for (const onnx::AttributeProto& attr : node.attribute()) {
        if (attr.has_g() || attr.graphs_size() > 0) return embed(graph);  // captures: keep all
      }
    }
    for (const onnx::ValueInfoProto& output : graph.output()) read.insert(output.name());
    // An initializer listed as a graph input too (older exporters) stays: the input needs it.
    for (const onnx::ValueInfoProto& input : graph.input()) read.insert(input.name());
    auto* inits = graph.mutable_initializer();
    inits->erase(std::remove_if(inits->begin(), inits->end(),
                                [&](const onnx::TensorProto& init) {
                                  return replaced_.count(init.name()) && !read.count(init.name());
                                }),
                 inits->end());
    return embed(graph);
  }

  Status embed(onnx::GraphProto& graph) {
    for (onnx::TensorProto& init : *graph.mutable_initializer()) {
      if (init.data_location() != onnx::TensorProto::EXTERNAL) continue;
      HSCHED_ASSIGN_OR_RETURN(Tensor tensor, tensor_from_proto(init, &external_));
      tensor_to_proto(tensor, init.name(), &init);
    }
    return Status::ok();
  }

  onnx::ModelProto& model_;
  const Graph& graph_;  // the model as imported: dtypes, shapes, folded constants
  ExternalData external_;
  DType activations_;
  std::set<std::string> names_;
  std::map<std::string, const onnx::TensorProto*> initializers_;
  std::vector<onnx::NodeProto> prologue_;                      // weight and bias DequantizeLinear
  std::map<std::string, std::vector<onnx::NodeProto>> after_;  // value -> its Q/DQ nodes
  std::map<std::string, std::string> rename_;                  // value -> its dequantized value
  std::map<std::string, std::string> output_rename_;  // graph output -> its float value's name
  std::map<std::string, QuantParams> params_;
  std::map<std::string, std::vector<float>> weight_scales_;
  std::set<std::string> replaced_;
};

}  // namespace

Result<QuantizeSummary> quantize_model(const fs::path& path, const ImportOptions& import,
                                       const QuantizeOptions& options, const fs::path& output) {
  // The model as load_model imports it: every check of an untrusted model runs first.
  HSCHED_ASSIGN_OR_RETURN(Model model, load_model(path, import));
  return quantize_model(model, path, import, options, output);
}

Result<QuantizeSummary> quantize_proto(onnx::ModelProto& proto, const Model& model,
                                       const ImportOptions& import, const QuantizeOptions& options,
                                       const std::string& display, const fs::path& base_dir) {
  if (options.calibration.empty()) return invalid_argument("quantize: no calibration input sets");
  if (options.activations != DType::kU8 && options.activations != DType::kI8) {
    return invalid_argument("quantize: activations are u8 or i8");
  }
  if (!(options.percentile > 50 && options.percentile <= 100)) {
    return invalid_argument("quantize: percentile " + std::to_string(options.percentile) +
                            " is not in (50, 100]");
  }
  if (options.entropy && options.percentile < 100) {
    return invalid_argument("quantize: entropy calibration and a percentile exclude each other");
  }
  if (const std::string half = half_tensor_of(proto.graph()); !half.empty()) {
    return invalid_argument(display + ": the model is stored in a half type (" + half +
                            "); quantize its float32 form");
  }
  const int64_t opset = default_opset(proto);
  if (opset < 10) {
    return invalid_argument(display + ": opset " + std::to_string(opset) +
                            " has no QuantizeLinear (needs opset 10 or later)");
  }
  QuantizeSummary summary;
  summary.per_channel = options.per_channel && opset >= 13;  // per-axis DequantizeLinear: 13
  const QuantizePlan plan =
      plan_quantization(proto.graph(), model.graph(), options, summary.per_channel);
  HSCHED_ASSIGN_OR_RETURN(auto ranges,
                          calibrate_ranges(proto, plan, model, import, options, display, base_dir));
  Rewriter rewriter(proto, model.graph(), base_dir, options.activations);
  HSCHED_RETURN_IF_ERROR(rewriter.apply(plan, ranges).with_context(display));
  summary.quantized = plan.quantized;
  summary.kept = plan.kept;
  summary.weights = static_cast<int64_t>(plan.weights.size());
  summary.activations = static_cast<int64_t>(plan.activations.size());
  summary.relu_folded = static_cast<int64_t>(plan.removed.size());
  summary.calibration_runs = static_cast<int>(options.calibration.size());
  summary.percentile = options.percentile;
  summary.entropy = options.entropy;
  return summary;
}

Result<QuantizeSummary> quantize_model(const Model& model, const fs::path& path,
                                       const ImportOptions& import, const QuantizeOptions& options,
                                       const fs::path& output) {
  const std::string display = path.string();
  HSCHED_ASSIGN_OR_RETURN(std::shared_ptr<MappedFile> file, MappedFile::open(path));
  onnx::ModelProto proto;
  if (!proto.ParseFromArray(file->data(), static_cast<int>(file->size()))) {
    return invalid_argument(display + ": not an ONNX model (protobuf parsing failed)");
  }
  fs::path base_dir = path.parent_path();
  if (base_dir.empty()) base_dir = ".";
  HSCHED_ASSIGN_OR_RETURN(QuantizeSummary summary,
                          quantize_proto(proto, model, import, options, display, base_dir));
  std::string bytes;
  if (proto.ByteSizeLong() > static_cast<size_t>(kMaxProtobufBytes) ||
      !proto.SerializeToString(&bytes)) {
    return invalid_argument(output.string() + ": the quantized model is over protobuf's 2 GiB");
  }
  // The result must import as any model does before it is written.
  HSCHED_RETURN_IF_ERROR(
      import_onnx_bytes(bytes, import, output.string() + " (as written)", {}).status());
  HSCHED_RETURN_IF_ERROR(write_file_atomically(output, bytes));
  return summary;
}

namespace {

std::string format_percentile(double percentile) {
  std::ostringstream text;
  text << percentile;  // 99.99, not 99.990000
  return text.str();
}

}  // namespace

std::string quantize_summary_text(const QuantizeSummary& summary) {
  std::ostringstream text;
  int64_t nodes = 0;
  std::string ops;
  for (const auto& [op, count] : summary.quantized) {
    nodes += count;
    ops += (ops.empty() ? "" : ", ") + op + " " + std::to_string(count);
  }
  text << "quantized " << nodes << " nodes to int8" << (ops.empty() ? "" : " (" + ops + ")") << ": "
       << summary.weights << " weights int8 "
       << (summary.per_channel ? "per output channel" : "per tensor") << ", " << summary.activations
       << " activation tensors 8-bit, " << summary.relu_folded
       << " Relu/Clip folded; calibration: " << summary.calibration_runs << " input sets ("
       << (summary.entropy             ? std::string("entropy")
           : summary.percentile >= 100 ? std::string("MinMax")
                                       : "percentile " + format_percentile(summary.percentile))
       << ")\n";
  if (summary.kept.empty()) {
    text << "kept in fp32: none\n";
  } else {
    text << "kept in fp32:";
    for (const auto& [why, count] : summary.kept) text << " " << count << " (" << why << ")";
    text << "\n";
  }
  return text.str();
}

}  // namespace hsched
