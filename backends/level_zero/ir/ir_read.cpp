// read_ir: XML -> bounded layer records -> edges checked -> topological order -> ONNX nodes.
#include "backends/level_zero/ir/ir_read.h"

#include <cstring>
#include <map>
#include <queue>

#include "backends/level_zero/ir/ir.h"
#include "backends/level_zero/ir/ir_format.h"
#include "backends/level_zero/ir/ir_read_fold.h"
#include "core/float16.h"

namespace hsched::ir {
namespace detail {
namespace {

Status layer_error(const std::string& layer, const std::string& why) {
  return invalid_argument("IR layer '" + layer + "': " + why);
}

Result<std::string> bounded_name(const char* text, const std::string& what) {
  const size_t length = std::strlen(text);
  if (length > kMaxNameBytes) return invalid_argument("IR: " + what + " is too long");
  return std::string(text, length);
}

Result<IrPort> parse_port(pugi::xml_node node, const std::string& layer) {
  IrPort port;
  auto id = parse_int(node.attribute("id").value(), "port id");
  if (!id.is_ok() || *id < 0 || *id >= static_cast<int64_t>(kMaxPortsPerLayer)) {
    return layer_error(layer, "port id '" +
                                  std::string(node.attribute("id").value()).substr(0, 32) +
                                  "' is not in [0, " + std::to_string(kMaxPortsPerLayer) + ")");
  }
  port.id = *id;
  const std::string precision = node.attribute("precision").value();
  for (DType t :
       {DType::kF32, DType::kF16, DType::kI64, DType::kI32, DType::kI8, DType::kU8, DType::kBool}) {
    if (port_precision_name(t) == precision || element_type_name(t) == precision) port.type = t;
  }
  // bf16 ports parse (ir_layers reports them); no layer read_ir converts takes them.
  if (precision == "BF16" || precision == "bf16") port.type = DType::kBF16;
  if (port.type == DType::kUndefined) {
    return layer_error(layer, "port " + std::to_string(port.id) + " precision '" +
                                  precision.substr(0, 32) + "' is not supported");
  }
  for (pugi::xml_node dim : node.children("dim")) {
    if (port.dims.size() == kMaxRank) {
      return layer_error(layer, "port " + std::to_string(port.id) + " has more than " +
                                    std::to_string(kMaxRank) + " dims");
    }
    auto value = parse_int(dim.text().get(), "dim");
    if (!value.is_ok() || *value < 0 || *value > kMaxDim) {
      return layer_error(layer, "port " + std::to_string(port.id) + " dim '" +
                                    std::string(dim.text().get()).substr(0, 32) +
                                    "' is not a static size in [0, 2^40]");
    }
    port.dims.push_back(*value);
  }
  auto elements = checked_elements(port.dims);
  if (!elements.is_ok() ||
      *elements * static_cast<int64_t>(dtype_size(port.type)) > kMaxIrTensorBytes) {
    return layer_error(layer, "port " + std::to_string(port.id) + " tensor " +
                                  Shape(port.dims).to_string() + " is larger than 4 GiB");
  }
  HSCHED_ASSIGN_OR_RETURN(port.name, bounded_name(node.attribute("names").value(), "port name"));
  port.name = first_port_name(port.name);
  return port;
}

Result<IrLayer> parse_layer(pugi::xml_node node) {
  IrLayer layer;
  HSCHED_ASSIGN_OR_RETURN(layer.name, bounded_name(node.attribute("name").value(), "layer name"));
  auto id = parse_int(node.attribute("id").value(), "layer id");
  if (!id.is_ok() || *id < 0) return layer_error(layer.name, "id is not a non-negative integer");
  layer.id = *id;
  HSCHED_ASSIGN_OR_RETURN(layer.type, bounded_name(node.attribute("type").value(), "layer type"));
  HSCHED_ASSIGN_OR_RETURN(layer.version,
                          bounded_name(node.attribute("version").value(), "layer version"));
  if (layer.name.empty()) layer.name = layer.type + "_" + std::to_string(layer.id);
  layer.data = node.child("data");
  std::map<int64_t, bool> port_ids;
  for (const char* group : {"input", "output"}) {
    auto& ports = std::strcmp(group, "input") == 0 ? layer.inputs : layer.outputs;
    for (pugi::xml_node p : node.child(group).children("port")) {
      if (layer.inputs.size() + layer.outputs.size() == kMaxPortsPerLayer) {
        return layer_error(layer.name, "more than " + std::to_string(kMaxPortsPerLayer) + " ports");
      }
      HSCHED_ASSIGN_OR_RETURN(IrPort port, parse_port(p, layer.name));
      if (!port_ids.emplace(port.id, true).second) {
        return layer_error(layer.name, "port id " + std::to_string(port.id) + " used twice");
      }
      ports.push_back(std::move(port));
    }
  }
  return layer;
}

// Const: bytes from the weights, widened from f16, checked against shape, size and offset.
Result<Tensor> read_const(ReadContext& ctx, std::span<const uint8_t> weights) {
  HSCHED_RETURN_IF_ERROR(ctx.arity(0, 1));
  HSCHED_ASSIGN_OR_RETURN(const std::string type_name, ctx.attr("element_type"));
  const auto type = element_type_from_name(type_name);
  if (!type || (*type != DType::kF32 && *type != DType::kF16 && *type != DType::kI64 &&
                *type != DType::kI32 && *type != DType::kU8 && *type != DType::kI8)) {
    return ctx.fail("element_type '" + type_name.substr(0, 32) +
                    "' is not f32, f16, i64, i32, u8 or i8");
  }
  HSCHED_ASSIGN_OR_RETURN(const std::string shape_text, ctx.attr("shape"));
  auto dims = parse_ints(shape_text, "shape", kMaxRank, 0, kMaxDim);
  if (!dims.is_ok()) return ctx.fail(dims.status().message());
  HSCHED_RETURN_IF_ERROR(ctx.expect_out_dims(0, *dims));
  if (ctx.layer().outputs[0].type != *type)
    return ctx.fail("port precision differs from element_type");
  const auto max_offset = static_cast<int64_t>(weights.size());
  HSCHED_ASSIGN_OR_RETURN(const int64_t offset, ctx.attr_int("offset", 0, max_offset));
  HSCHED_ASSIGN_OR_RETURN(const int64_t size, ctx.attr_int("size", 0, max_offset - offset));
  // Port dims were bounded to 4 GiB by the parser.
  const int64_t expected = Shape(*dims).elements() * static_cast<int64_t>(dtype_size(*type));
  if (size != expected) {
    return ctx.fail("size " + std::to_string(size) + " does not match shape " +
                    Shape(*dims).to_string() + " (" + std::to_string(expected) + " bytes)");
  }
  const uint8_t* bytes = weights.data() + offset;
  if (*type == DType::kF16) {
    Tensor tensor(DType::kF32, *dims);
    auto out = tensor.values<float>();
    for (size_t i = 0; i < out.size(); ++i) {
      uint16_t half;
      std::memcpy(&half, bytes + 2 * i, 2);
      out[i] = half_to_float(half);
    }
    return tensor;
  }
  Tensor tensor(*type, *dims);
  if (size != 0) std::memcpy(tensor.raw(), bytes, static_cast<size_t>(size));
  return tensor;
}

struct ParsedNet {
  std::string name;
  std::vector<IrLayer> layers;
  std::vector<std::vector<PortSource>> sources;  // per layer, per input port
  std::vector<size_t> order;                     // topological
};

Result<ParsedNet> parse_net(const pugi::xml_document& doc) {
  pugi::xml_node net = doc.child("net");
  if (!net) return invalid_argument("IR: no <net> element");
  const std::string version = net.attribute("version").value();
  if (version != "10" && version != "11") {
    return invalid_argument("IR: net version '" + version.substr(0, 16) + "' (10 or 11 expected)");
  }
  ParsedNet parsed;
  HSCHED_ASSIGN_OR_RETURN(parsed.name, bounded_name(net.attribute("name").value(), "net name"));
  std::map<int64_t, size_t> index_of;
  for (pugi::xml_node node : net.child("layers").children("layer")) {
    if (parsed.layers.size() == kMaxLayers) {
      return invalid_argument("IR: more than " + std::to_string(kMaxLayers) + " layers");
    }
    HSCHED_ASSIGN_OR_RETURN(IrLayer layer, parse_layer(node));
    if (!index_of.emplace(layer.id, parsed.layers.size()).second) {
      return layer_error(layer.name, "layer id " + std::to_string(layer.id) + " used twice");
    }
    parsed.layers.push_back(std::move(layer));
  }
  const size_t n = parsed.layers.size();
  if (n == 0) return invalid_argument("IR: no layers");
  // What a runner would allocate for activations is bounded as a whole too, not only per port.
  int64_t total_bytes = 0;
  for (const IrLayer& layer : parsed.layers) {
    for (const IrPort& port : layer.outputs) {
      total_bytes += Shape(port.dims).elements() * static_cast<int64_t>(dtype_size(port.type));
      if (total_bytes > kMaxIrTotalBytes) {
        return layer_error(layer.name, "the model's tensors together pass 64 GiB");
      }
    }
  }
  constexpr size_t kUnset = SIZE_MAX;
  parsed.sources.resize(n);
  for (size_t i = 0; i < n; ++i) {
    parsed.sources[i].assign(parsed.layers[i].inputs.size(), PortSource{kUnset, kUnset});
  }
  std::vector<std::vector<size_t>> consumers(n);
  size_t edge_count = 0;
  for (pugi::xml_node edge : net.child("edges").children("edge")) {
    if (++edge_count > kMaxEdges) return invalid_argument("IR: too many edges");
    int64_t ends[4];
    const char* keys[4] = {"from-layer", "from-port", "to-layer", "to-port"};
    for (int k = 0; k < 4; ++k) {
      auto v = parse_int(edge.attribute(keys[k]).value(), keys[k]);
      if (!v.is_ok()) return invalid_argument("IR edge: " + v.status().message());
      ends[k] = *v;
    }
    const auto from = index_of.find(ends[0]);
    const auto to = index_of.find(ends[2]);
    if (from == index_of.end() || to == index_of.end()) {
      return invalid_argument("IR edge " + std::to_string(ends[0]) + " -> " +
                              std::to_string(ends[2]) + ": no such layer");
    }
    const IrLayer& src = parsed.layers[from->second];
    const IrLayer& dst = parsed.layers[to->second];
    size_t out = kUnset, in = kUnset;
    for (size_t p = 0; p < src.outputs.size(); ++p) {
      if (src.outputs[p].id == ends[1]) out = p;
    }
    for (size_t p = 0; p < dst.inputs.size(); ++p) {
      if (dst.inputs[p].id == ends[3]) in = p;
    }
    if (out == kUnset || in == kUnset) {
      return layer_error(dst.name, "edge from '" + src.name + "' names a port that is not there");
    }
    if (parsed.sources[to->second][in].layer != kUnset) {
      return layer_error(dst.name, "input port " + std::to_string(ends[3]) + " has two edges");
    }
    if (src.outputs[out].dims != dst.inputs[in].dims ||
        src.outputs[out].type != dst.inputs[in].type) {
      return layer_error(dst.name, "input port " + std::to_string(ends[3]) + " (" +
                                       Shape(dst.inputs[in].dims).to_string() +
                                       ") differs from the output of '" + src.name + "' (" +
                                       Shape(src.outputs[out].dims).to_string() + ")");
    }
    parsed.sources[to->second][in] = PortSource{from->second, out};
    consumers[from->second].push_back(to->second);
  }
  std::vector<size_t> pending(n, 0);
  for (size_t i = 0; i < n; ++i) {
    for (size_t p = 0; p < parsed.sources[i].size(); ++p) {
      if (parsed.sources[i][p].layer == kUnset) {
        return layer_error(
            parsed.layers[i].name,
            "input port " + std::to_string(parsed.layers[i].inputs[p].id) + " has no edge");
      }
    }
    pending[i] = parsed.sources[i].size();
  }
  // Kahn's algorithm, lowest layer index first: deterministic and close to the file's order.
  std::priority_queue<size_t, std::vector<size_t>, std::greater<>> ready;
  for (size_t i = 0; i < n; ++i) {
    if (pending[i] == 0) ready.push(i);
  }
  while (!ready.empty()) {
    const size_t i = ready.top();
    ready.pop();
    parsed.order.push_back(i);
    for (size_t c : consumers[i]) {
      if (--pending[c] == 0) ready.push(c);
    }
  }
  if (parsed.order.size() != n) {
    for (size_t i = 0; i < n; ++i) {
      if (pending[i] != 0) return layer_error(parsed.layers[i].name, "is on a cycle of edges");
    }
  }
  return parsed;
}

// Parses `xml` into `doc` and reads its net (layers point into `doc`, which must outlive them).
Result<ParsedNet> parse_xml(std::string_view xml, pugi::xml_document& doc) {
  if (xml.size() > kMaxXmlBytes) return invalid_argument("IR: XML larger than 256 MiB");
  const pugi::xml_parse_result parsed_xml =
      doc.load_buffer(xml.data(), xml.size(), pugi::parse_default, pugi::encoding_utf8);
  if (!parsed_xml) {
    return invalid_argument(std::string("IR: XML parse error at offset ") +
                            std::to_string(parsed_xml.offset) + ": " + parsed_xml.description());
  }
  return parse_net(doc);
}

}  // namespace
}  // namespace detail

Result<Graph> read_ir(std::string_view xml, std::span<const uint8_t> weights,
                      std::vector<std::string>* result_producers) {
  using namespace detail;
  if (weights.size() > kMaxWeightsBytes) return invalid_argument("IR: weights larger than 16 GiB");
  pugi::xml_document doc;
  HSCHED_ASSIGN_OR_RETURN(ParsedNet net, parse_xml(xml, doc));
  Graph graph;
  graph.name = net.name;
  graph.opset = 17;  // the ONNX forms read_ir emits (Clip/Squeeze inputs, Softmax on one axis)
  ReadContext ctx(graph, net.layers, net.sources);
  std::map<size_t, ValueId> results;  // by layer index: outputs keep the file's order
  for (size_t index : net.order) {
    ctx.set_layer(index);
    if (ctx.layer().type == "Const") {
      HSCHED_ASSIGN_OR_RETURN(Tensor tensor, read_const(ctx, weights));
      ctx.constants()[index][0] = std::move(tensor);
    } else if (ctx.layer().type == "Result") {
      HSCHED_RETURN_IF_ERROR(ctx.arity(1, 0));
      results[index] = ctx.in_value(0);
    } else {
      HSCHED_RETURN_IF_ERROR(convert_layer(ctx));
    }
  }
  if (results.empty()) return invalid_argument("IR: no Result layer");
  if (result_producers != nullptr) result_producers->clear();
  for (const auto& [index, value] : results) {
    graph.add_output(value);
    if (result_producers != nullptr) {
      result_producers->push_back(net.layers[net.sources[index].at(0).layer].name);
    }
  }
  return fold_affine_tails(graph);
}

Result<std::vector<IrLayerInfo>> ir_layers(std::string_view xml) {
  using namespace detail;
  pugi::xml_document doc;
  HSCHED_ASSIGN_OR_RETURN(ParsedNet net, parse_xml(xml, doc));
  std::vector<IrLayerInfo> layers;
  for (const IrLayer& layer : net.layers) {
    IrLayerInfo info{layer.name, layer.type, false, false};
    info.readable = layer.type == "Parameter" || layer.type == "Const" || layer.type == "Result" ||
                    converts(layer.type, layer.version);
    for (const auto* ports : {&layer.inputs, &layer.outputs}) {
      for (const IrPort& port : *ports) info.bf16 |= port.type == DType::kBF16;
    }
    layers.push_back(std::move(info));
  }
  return layers;
}

}  // namespace hsched::ir
