// The reader's view of one IR layer while it is turned into ONNX nodes, and the per-type
// converters. Everything here has been bounded by the parser: port counts, dims, element types;
// edges connect ports of equal dims and type. Converters check attributes and that the declared
// output dims are what the layer computes from its inputs, so the graph is consistent.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <pugixml.hpp>

#include "graph/graph.h"

namespace hsched::ir::detail {

struct IrPort {
  int64_t id = 0;
  DType type = DType::kUndefined;  // the IR's element type (f16 stays f16 here)
  std::vector<int64_t> dims;
  std::string name;  // first tensor name, "" when none
};

struct IrLayer {
  int64_t id = 0;
  std::string name, type, version;
  pugi::xml_node data;  // may be null
  std::vector<IrPort> inputs, outputs;
};

// Where an input port's data comes from: (layer index, output index).
struct PortSource {
  size_t layer = 0;
  size_t output = 0;
};

class ReadContext {
 public:
  ReadContext(Graph& graph, const std::vector<IrLayer>& layers,
              const std::vector<std::vector<PortSource>>& sources);

  // Selects the layer the calls below refer to.
  void set_layer(size_t index) { current_ = index; }
  const IrLayer& layer() const { return layers_[current_]; }

  // InvalidArgument "IR layer 'name' (Type): why".
  Status fail(const std::string& why) const;
  Status arity(size_t inputs, size_t outputs) const;
  Status require_float(size_t input) const;

  const std::vector<int64_t>& in_dims(size_t i) const { return layer().inputs.at(i).dims; }
  DType in_type(size_t i) const { return layer().inputs.at(i).type; }
  const std::vector<int64_t>& out_dims(size_t i) const { return layer().outputs.at(i).dims; }
  // The data of the Const layer feeding input i (f16 widened to f32), or null.
  const Tensor* in_constant(size_t i) const;
  // Integer values of a constant integer input (axes, shapes): InvalidArgument otherwise.
  Result<std::vector<int64_t>> in_ints(size_t i, size_t max_count) const;
  // The single value of a constant float input.
  Result<float> in_scalar(size_t i) const;
  // The graph value of input i (a Const becomes a graph constant on first use).
  ValueId in_value(size_t i);

  // <data> attributes. Missing required ones and malformed values: InvalidArgument.
  bool has_attr(const char* key) const;
  Result<std::string> attr(const char* key) const;
  std::string attr_or(const char* key, const std::string& fallback) const;
  Result<int64_t> attr_int(const char* key, int64_t lo, int64_t hi) const;
  Result<float> attr_float(const char* key) const;
  Result<bool> attr_bool(const char* key, std::optional<bool> fallback) const;
  Result<std::vector<int64_t>> attr_ints(const char* key, size_t count, int64_t lo,
                                         int64_t hi) const;

  // InvalidArgument unless output i is declared with `dims`.
  Status expect_out_dims(size_t i, const std::vector<int64_t>& dims) const;
  // The graph value of output i (created on first use, named after the port).
  ValueId out_value(size_t i);
  // Sets output i to an existing value (Convert as a pass-through).
  void alias_output(size_t i, ValueId value);
  // An intermediate value or constant of this layer, named "<layer>/<suffix>".
  ValueId temp_value(const std::string& suffix, DType type, const std::vector<int64_t>& dims);
  ValueId add_constant(const std::string& suffix, Tensor tensor);
  void add_node(const std::string& op, const std::string& suffix, std::vector<ValueId> inputs,
                std::vector<ValueId> outputs, AttributeMap attributes = {});

  Graph& graph() { return graph_; }
  // Per layer, per output: the Const data (set by the parser) and the graph value.
  std::vector<std::vector<std::optional<Tensor>>>& constants() { return constants_; }

 private:
  std::string unique_name(std::string base);

  Graph& graph_;
  const std::vector<IrLayer>& layers_;
  const std::vector<std::vector<PortSource>>& sources_;
  std::vector<std::vector<std::optional<Tensor>>> constants_;
  std::vector<std::vector<ValueId>> values_;
  std::set<std::string> names_;
  std::map<std::string, size_t> next_suffix_;
  size_t current_ = 0;
};

// Converts the current layer of `ctx` (any type but Const, which the parser reads itself).
Status convert_layer(ReadContext& ctx);
// Whether convert_layer takes layers of `type` in opset `version`.
bool converts(const std::string& type, const std::string& version);

}  // namespace hsched::ir::detail
