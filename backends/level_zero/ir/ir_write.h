// The writer's state while it turns graph nodes into IR layers, and the per-op emitters.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "backends/level_zero/ir/ir_builder.h"
#include "graph/graph.h"
#include "hsched/device.h"

namespace hsched::ir::detail {

// Maps graph values to IR ports. Float values compute in `float_type` (f32, or f16 for
// Precision::kFp16); constants become Const layers on first use, converted to that type.
class WriteContext {
 public:
  WriteContext(const Graph& graph, bool fp16);

  const Graph& graph() const { return graph_; }
  DType float_type() const { return fp16_ ? DType::kF16 : DType::kF32; }
  IrBuilder& builder() { return builder_; }

  // The port that carries value `id` in compute precision.
  PortRef input(ValueId id);
  // Float constants in compute precision (`values` are f32; converted for fp16).
  PortRef const_floats(const std::string& name, const std::vector<int64_t>& dims,
                       const std::vector<float>& values);
  // Float constants kept in f32 whatever the compute precision: a quantization's scales, zero
  // points and ranges and a dequantized bias, as OpenVINO keeps its dequantization constants
  // (KeepConstPrecision) for the int8 layers that read them.
  PortRef const_f32(const std::string& name, const std::vector<int64_t>& dims,
                    const std::vector<float>& values);
  // A float graph constant seen with other dims (same element count), in compute precision.
  PortRef const_tensor(const std::string& name, const Tensor& tensor,
                       const std::vector<int64_t>& dims);
  PortRef const_i64(const std::string& name, const std::vector<int64_t>& dims,
                    const std::vector<int64_t>& values);
  // A layer with one output of compute precision (or `out_type` when given).
  PortRef layer(std::string_view type, std::string_view version, const std::string& name,
                const DataAttributes& data, const std::vector<PortRef>& inputs,
                const std::vector<int64_t>& dims, DType out_type = DType::kUndefined);
  // Records `port` as the value's; names the port after it unless the value leaves the model in
  // fp16 (then the Convert to f32 before its Result carries the name).
  void bind(ValueId id, PortRef port);

  // Parameters for the graph inputs, Converts and Results for its outputs; both record the
  // arguments' names in `model` (IrModel::input_names, output_names).
  void add_parameters(IrModel& model);
  void add_results(IrModel& model);

 private:
  const Graph& graph_;
  bool fp16_;
  IrBuilder builder_;
  std::vector<std::optional<PortRef>> ports_;  // per value
};

// A DequantizeLinear of a constant i32 tensor (a QDQ model's bias), which the writer folds into an
// f32 Const: fp16 holds neither such integers nor, often, their scale (input scale times weight
// scale).
bool folds_to_constant(const Node& node, const Graph& graph);
// Its values, (q - zero point) * scale per tensor or per axis, computed in f32.
std::vector<float> dequantized_constant(const Node& node, const Graph& graph);

// Emits the layers of one node (accepted by ir_supports) and binds its output.
Status emit_node(WriteContext& ctx, const Node& node);

}  // namespace hsched::ir::detail
