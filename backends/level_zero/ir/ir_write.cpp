// write_ir: the graph's Parameters, then each node's layers in topological order, then Results.
#include "backends/level_zero/ir/ir_write.h"

#include <algorithm>
#include <cstring>

#include "backends/level_zero/ir/ir.h"
#include "backends/level_zero/ir/ir_format.h"
#include "core/float16.h"

namespace hsched::ir {
namespace detail {
namespace {

bool is_graph_output(const Graph& graph, ValueId id) {
  return std::find(graph.outputs().begin(), graph.outputs().end(), id) != graph.outputs().end();
}

std::vector<std::byte> float_bytes(std::span<const float> values, DType type) {
  std::vector<std::byte> bytes(values.size() * dtype_size(type));
  if (type == DType::kF16) {
    for (size_t i = 0; i < values.size(); ++i) {
      const uint16_t half = float_to_half(values[i]);
      std::memcpy(bytes.data() + 2 * i, &half, 2);
    }
  } else if (!values.empty()) {
    std::memcpy(bytes.data(), values.data(), values.size() * sizeof(float));
  }
  return bytes;
}

}  // namespace

WriteContext::WriteContext(const Graph& graph, bool fp16)
    : graph_(graph), fp16_(fp16), builder_(graph.name), ports_(graph.values().size()) {}

PortRef WriteContext::input(ValueId id) {
  auto& slot = ports_.at(static_cast<size_t>(id));
  if (slot) return *slot;
  const Value& v = graph_.value(id);
  // Only constants arrive here unmapped: write_ir binds inputs and producers first.
  const Tensor& t = *v.constant;
  PortRef port = v.dtype == DType::kF32
                     ? const_tensor(v.name, t, t.dims())
                     : builder_.add_const(v.name, t.dtype(), t.dims(), {t.raw(), t.byte_size()});
  builder_.name_port(port, v.name);
  slot = port;
  return port;
}

PortRef WriteContext::const_floats(const std::string& name, const std::vector<int64_t>& dims,
                                   const std::vector<float>& values) {
  const auto bytes = float_bytes(values, float_type());
  return builder_.add_const(name, float_type(), dims, bytes);
}

PortRef WriteContext::const_f32(const std::string& name, const std::vector<int64_t>& dims,
                                const std::vector<float>& values) {
  return builder_.add_const(name, DType::kF32, dims, float_bytes(values, DType::kF32));
}

PortRef WriteContext::const_tensor(const std::string& name, const Tensor& tensor,
                                   const std::vector<int64_t>& dims) {
  const auto bytes = float_bytes(tensor.values<float>(), float_type());
  return builder_.add_const(name, float_type(), dims, bytes);
}

PortRef WriteContext::const_i64(const std::string& name, const std::vector<int64_t>& dims,
                                const std::vector<int64_t>& values) {
  return builder_.add_const(name, DType::kI64, dims,
                            std::as_bytes(std::span<const int64_t>(values)));
}

PortRef WriteContext::layer(std::string_view type, std::string_view version,
                            const std::string& name, const DataAttributes& data,
                            const std::vector<PortRef>& inputs, const std::vector<int64_t>& dims,
                            DType out_type) {
  const DType t = out_type == DType::kUndefined ? float_type() : out_type;
  return builder_.add_layer(type, version, name, data, inputs, {OutputSpec{t, dims}}).front();
}

void WriteContext::bind(ValueId id, PortRef port) {
  if (!(fp16_ && is_graph_output(graph_, id))) builder_.name_port(port, graph_.value(id).name);
  ports_.at(static_cast<size_t>(id)) = port;
}

void WriteContext::add_parameters(IrModel& model) {
  for (ValueId id : graph_.inputs()) {
    const Value& v = graph_.value(id);
    model.input_names.push_back(v.name);
    PortRef port = builder_
                       .add_layer("Parameter", "opset1", v.name,
                                  {{"shape", format_ints(v.shape.dims)},
                                   {"element_type", std::string(element_type_name(v.dtype))}},
                                  {}, {OutputSpec{v.dtype, v.shape.dims}})
                       .front();
    builder_.name_port(port, v.name);
    if (fp16_ && v.dtype == DType::kF32) {
      port = layer("Convert", "opset1", v.name + "/to_f16", {{"destination_type", "f16"}}, {port},
                   v.shape.dims);
    }
    ports_.at(static_cast<size_t>(id)) = port;
  }
}

void WriteContext::add_results(IrModel& model) {
  for (ValueId id : graph_.outputs()) {
    const Value& v = graph_.value(id);
    PortRef port = input(id);
    if (port.type != v.dtype) {
      port = layer("Convert", "opset1", v.name + "/to_f32",
                   {{"destination_type", std::string(element_type_name(v.dtype))}}, {port},
                   v.shape.dims, v.dtype);
      builder_.name_port(port, v.name);
    }
    // <layer><output><port>: the producer's name is what the compiler calls this output.
    model.output_names.push_back(port.node.parent().parent().attribute("name").value());
    builder_.add_layer("Result", "opset1", v.name + "/sink_port_0", {}, {port}, {});
  }
}

}  // namespace detail

std::string layer_name(const Graph& graph, const Node& node) {
  if (!node.name.empty()) return node.name;
  const auto index = &node - graph.nodes().data();
  return node.op_type + "_" + std::to_string(index);
}

Result<IrModel> write_ir(const Graph& part, Precision precision) {
  if (precision != Precision::kFp32 && precision != Precision::kFp16) {
    // precision_name() lives in the scheduler, which this library must not link.
    return invalid_argument("write_ir: precision " + std::to_string(static_cast<int>(precision)) +
                            " is neither fp32 nor fp16");
  }
  HSCHED_ASSIGN_OR_RETURN(const auto order, part.topological_order());
  for (NodeId id : order) {
    const Node& node = part.node(id);
    HSCHED_RETURN_IF_ERROR(ir_supports(part, node, precision));
    for (ValueId in : node.inputs) {
      if (in == kNoValue) continue;
      const Value& v = part.value(in);
      if (v.producer == kNoNode && !v.is_constant() &&
          std::find(part.inputs().begin(), part.inputs().end(), in) == part.inputs().end()) {
        return invalid_argument("write_ir: node '" + node.name + "' reads '" + v.name +
                                "', which is neither an input, a constant nor produced");
      }
    }
  }
  for (ValueId id : part.inputs()) {
    const Value& v = part.value(id);
    if (!v.shape.rank_known || !v.shape.is_static() || v.shape.rank() > kMaxRank ||
        detail::element_type_name(v.dtype) == "undefined") {
      return invalid_argument("write_ir: input '" + v.name + "' needs a static shape and a type");
    }
  }
  detail::WriteContext ctx(part, precision == Precision::kFp16);
  IrModel names;
  ctx.add_parameters(names);
  for (NodeId id : order) HSCHED_RETURN_IF_ERROR(detail::emit_node(ctx, part.node(id)));
  for (ValueId id : part.outputs()) {
    const Value& v = part.value(id);
    if (v.producer == kNoNode && !v.is_constant() &&
        std::find(part.inputs().begin(), part.inputs().end(), id) == part.inputs().end()) {
      return invalid_argument("write_ir: output '" + v.name + "' is produced by no node");
    }
  }
  ctx.add_results(names);
  IrModel model = ctx.builder().finish();
  model.input_names = std::move(names.input_names);
  model.output_names = std::move(names.output_names);
  return model;
}

}  // namespace hsched::ir
