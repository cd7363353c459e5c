// OpenVINO IR (XML v11 + weights .bin) for an hsched Graph: what the NPU graph extension compiles
// (format NGRAPH_LITE). write_ir is written from the published IR specification (docs.openvino.ai,
// "IR definition" and the opset pages); compatibility with Intel's NPU driver is unverified.
// read_ir is its inverse: it turns the layers write_ir emits back into ONNX-style nodes that the
// CPU kernels run. Everything read from XML or weights is untrusted and bounded.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "backends/backend.h"
#include "graph/graph.h"
#include "hsched/device.h"
#include "hsched/status.h"

namespace hsched::ir {

// One IR model: the XML text and the weights it refers to by offset and size.
struct IrModel {
  std::string xml;
  std::vector<uint8_t> weights;
  // The names Intel's compiler gives the graph's arguments, in Parameter then Result order: each
  // Parameter's name, and per Result the name of the layer feeding it (write_ir fills them).
  std::vector<std::string> input_names;
  std::vector<std::string> output_names;
  std::vector<std::string> layers;  // every layer's name, in the IR's order
};

// Serializes `part` (static shapes, every node accepted by ir_supports). kFp32 keeps every
// element type as in the graph; kFp16 stores float weights as f16 and computes in f16 inside the
// model, while Parameters and Results keep the graph's f32 with Convert layers at the edges (the
// shape OpenVINO gives a compressed model). Other precisions: InvalidArgument.
// Graph inputs become Parameters and graph outputs Results, both named after the values.
Result<IrModel> write_ir(const Graph& part, Precision precision);

// The name of the layer write_ir writes for `node`: the node's own, or "<op>_<index>" when the
// model left it empty. The node's other layers are named "<that name>/<suffix>".
std::string layer_name(const Graph& graph, const Node& node);

// Parses an IR model written by write_ir back into a graph of ONNX ops (inputs/outputs in the
// order of the Parameters/Results, named after them). Anything else, and every malformed or
// out-of-bounds size, offset or count: InvalidArgument naming the layer. `result_producers`, when
// given, receives per output the name of the layer feeding its Result: the name Intel's NPU
// compiler gives the graph's output argument (createPrimaryNameAttr in its IE dialect importer).
Result<Graph> read_ir(std::string_view xml, std::span<const uint8_t> weights,
                      std::vector<std::string>* result_producers = nullptr);

// The layers of an IR model and whether read_ir converts each: its type and opset version are
// ones read_ir takes (Parameter, Const and Result always). The checks of each layer's attributes
// and shapes are not made. Errors as read_ir's for a malformed document.
struct IrLayerInfo {
  std::string name;
  std::string type;
  bool readable = false;
  bool bf16 = false;  // a port of the layer has element type bf16
};
Result<std::vector<IrLayerInfo>> ir_layers(std::string_view xml);

// NGRAPH_LITE payload (little endian): u16 compiler major, u16 compiler minor, u32 count = 2,
// u64 xml size, xml bytes, u64 weights size, weights bytes.
std::vector<uint8_t> pack_ngraph_lite(const IrModel& model, uint16_t major, uint16_t minor);
// The inverse; truncated or oversized payloads, a count other than 2 or trailing bytes:
// InvalidArgument.
Result<IrModel> unpack_ngraph_lite(std::span<const uint8_t> payload);

// Whether write_ir can express `node` of `graph` in `precision`: ok, or Unimplemented naming the
// node, the op and what is at fault.
Status ir_supports(const Graph& graph, const Node& node, Precision precision = Precision::kFp32);
// The same as data for the NPU's capability: nullopt, or the reason code (op, attribute, shape,
// element type or precision) and ir_supports' message.
std::optional<Refusal> ir_refusal(const Graph& graph, const Node& node,
                                  Precision precision = Precision::kFp32);

}  // namespace hsched::ir
