#include "backends/level_zero/ir/ir_builder.h"

#include <sstream>

#include "backends/level_zero/ir/ir_format.h"

namespace hsched::ir::detail {
namespace {

void append_dims(pugi::xml_node port, const std::vector<int64_t>& dims) {
  for (int64_t d : dims) port.append_child("dim").text().set(std::to_string(d).c_str());
}

}  // namespace

IrBuilder::IrBuilder(const std::string& net_name) {
  auto declaration = doc_.append_child(pugi::node_declaration);
  declaration.append_attribute("version") = "1.0";
  auto net = doc_.append_child("net");
  net.append_attribute("name") = net_name.empty() ? "hsched" : net_name.c_str();
  net.append_attribute("version") = "11";
  layers_ = net.append_child("layers");
  edges_ = net.append_child("edges");
}

std::vector<PortRef> IrBuilder::add_layer(std::string_view type, std::string_view version,
                                          const std::string& name, const DataAttributes& data,
                                          const std::vector<PortRef>& inputs,
                                          const std::vector<OutputSpec>& outputs) {
  const int64_t id = next_layer_++;
  auto layer = layers_.append_child("layer");
  layer.append_attribute("id") = std::to_string(id).c_str();
  layer.append_attribute("name") = name.c_str();
  layer_names_.push_back(name);
  layer.append_attribute("type") = std::string(type).c_str();
  layer.append_attribute("version") = std::string(version).c_str();
  if (!data.empty()) {
    auto data_node = layer.append_child("data");
    for (const auto& [key, value] : data) data_node.append_attribute(key.c_str()) = value.c_str();
  }
  int64_t port_id = 0;
  if (!inputs.empty()) {
    auto input_node = layer.append_child("input");
    for (const PortRef& source : inputs) {
      auto port = input_node.append_child("port");
      port.append_attribute("id") = std::to_string(port_id).c_str();
      port.append_attribute("precision") = std::string(port_precision_name(source.type)).c_str();
      append_dims(port, source.dims);
      auto edge = edges_.append_child("edge");
      edge.append_attribute("from-layer") = std::to_string(source.layer).c_str();
      edge.append_attribute("from-port") = std::to_string(source.port).c_str();
      edge.append_attribute("to-layer") = std::to_string(id).c_str();
      edge.append_attribute("to-port") = std::to_string(port_id).c_str();
      ++port_id;
    }
  }
  std::vector<PortRef> result;
  if (!outputs.empty()) {
    auto output_node = layer.append_child("output");
    for (const OutputSpec& spec : outputs) {
      auto port = output_node.append_child("port");
      port.append_attribute("id") = std::to_string(port_id).c_str();
      port.append_attribute("precision") = std::string(port_precision_name(spec.type)).c_str();
      append_dims(port, spec.dims);
      result.push_back(PortRef{id, port_id, spec.type, spec.dims, port});
      ++port_id;
    }
  }
  return result;
}

PortRef IrBuilder::add_const(const std::string& name, DType type, const std::vector<int64_t>& dims,
                             std::span<const std::byte> bytes) {
  const size_t offset = weights_.size();
  const auto* begin = reinterpret_cast<const uint8_t*>(bytes.data());
  weights_.insert(weights_.end(), begin, begin + bytes.size());
  DataAttributes data = {{"element_type", std::string(element_type_name(type))},
                         {"shape", format_ints(dims)},
                         {"offset", std::to_string(offset)},
                         {"size", std::to_string(bytes.size())}};
  return add_layer("Const", "opset1", name, data, {}, {OutputSpec{type, dims}}).front();
}

void IrBuilder::name_port(PortRef& port, const std::string& name) {
  if (name.empty() || !port_names_.insert(name).second) return;
  port.node.append_attribute("names") = escape_port_name(name).c_str();
}

IrModel IrBuilder::finish() {
  std::ostringstream text;
  doc_.save(text, "\t", pugi::format_indent, pugi::encoding_utf8);
  IrModel model;
  model.xml = text.str();
  model.weights = std::move(weights_);
  model.layers = std::move(layer_names_);
  return model;
}

}  // namespace hsched::ir::detail
