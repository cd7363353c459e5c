// Builds an OpenVINO IR v11 document: layers with their data attributes and ports, edges, and
// the weights of Const layers. The writer's only way to produce XML.
#pragma once

#include <cstddef>
#include <cstdint>
#include <set>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <pugixml.hpp>

#include "backends/level_zero/ir/ir.h"
#include "hsched/dtype.h"

namespace hsched::ir::detail {

// One output port of a layer: where an edge starts, with the tensor's type and dims.
struct PortRef {
  int64_t layer = -1;
  int64_t port = 0;
  DType type = DType::kUndefined;
  std::vector<int64_t> dims;
  pugi::xml_node node;  // the <port> element, for naming it later
};

struct OutputSpec {
  DType type = DType::kUndefined;
  std::vector<int64_t> dims;
};

using DataAttributes = std::vector<std::pair<std::string, std::string>>;

// Threading: single-threaded. Layer ids count up from 0 in the order layers are added, which is
// a topological order since a layer's inputs must exist before it.
class IrBuilder {
 public:
  explicit IrBuilder(const std::string& net_name);

  // Adds a layer whose input ports mirror `inputs` (connected by edges) and whose output ports
  // are `outputs`, numbered after the inputs as OpenVINO does. Returns the output ports.
  std::vector<PortRef> add_layer(std::string_view type, std::string_view version,
                                 const std::string& name, const DataAttributes& data,
                                 const std::vector<PortRef>& inputs,
                                 const std::vector<OutputSpec>& outputs);
  // A Const layer over `bytes` (appended to the weights; the size must match type and dims).
  PortRef add_const(const std::string& name, DType type, const std::vector<int64_t>& dims,
                    std::span<const std::byte> bytes);
  // Gives the port a tensor name unless the name is empty or already used (names are unique).
  void name_port(PortRef& port, const std::string& name);

  IrModel finish();

 private:
  pugi::xml_document doc_;
  pugi::xml_node layers_;
  pugi::xml_node edges_;
  std::vector<uint8_t> weights_;
  std::set<std::string> port_names_;
  std::vector<std::string> layer_names_;  // in the order added
  int64_t next_layer_ = 0;
};

}  // namespace hsched::ir::detail
