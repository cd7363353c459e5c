// Rewriting one ONNX node into several, for the passes that read an unvalidated model before
// validation (graph/newer_opsets.h, graph/microsoft_ops.h): the scope of names a node reads,
// the element type the scope declares for a name, and the nodes and initializers that replace a
// node.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

#include "hsched/status.h"

namespace hsched {

// Deeper If branches are refused by validation; the passes do not rewrite them.
inline constexpr int kMaxRewriteDepth = 8;

// The graphs a node can read names from, innermost last.
using Scope = std::vector<const onnx::GraphProto*>;

// The element type the scope declares for `name` (initializer, graph input or output, value_info,
// Constant node), or 0 (UNDEFINED) when it does not say.
int32_t declared_type(const Scope& scope, const std::string& name);

// Whether `name` is an initializer of rank 0 (a per-tensor scale before opset 13).
bool scalar_initializer(const Scope& scope, const std::string& name);

// The nodes that replace one node, in order. New values are named after the node's first output.
class Expansion {
 public:
  // `index`: the node's position in its graph, which names the new nodes of an unnamed one.
  Expansion(const onnx::NodeProto& node, int index, const Scope& scope, int64_t opset);

  const onnx::NodeProto& node() const { return node_; }
  const std::string& label() const { return label_; }
  int64_t opset() const { return opset_; }
  std::vector<onnx::NodeProto>& nodes() { return nodes_; }
  const std::string& input(int i) const { return node_.input(i); }
  std::string optional_input(int i) const;

  Status refuse(const std::string& what) const { return unimplemented(label_ + ": " + what); }

  // Inputs `required` must be given; at most `most` inputs.
  Status check_inputs(std::initializer_list<int> required, int most) const;

  onnx::NodeProto& add(const std::string& op, const std::vector<std::string>& inputs,
                       const std::vector<std::string>& outputs, const std::string& role);

  std::string fresh(const std::string& what);

  // DequantizeLinear(x, scale, zero_point) into a new value; `axis` for per-axis scales. Before
  // opset 13 (no per-axis DequantizeLinear) the scale must be a scalar initializer.
  Result<std::string> dequantize(const std::string& x, const std::string& scale,
                                 const std::string& zero_point, std::optional<int64_t> axis = {});

  // QuantizeLinear(y, scale, zero_point) into the node's output. Without a zero point the output
  // keeps the type of the node's 8-bit operand `like` (QuantizeLinear alone would make uint8).
  void quantize(const std::string& y, const std::string& scale, const std::string& zero_point,
                const std::string& like, const std::string& like_zero_point);

  // Copies the node's attributes but those named.
  void copy_attributes(onnx::NodeProto& to, std::initializer_list<const char*> except) const;

  static void add_int(onnx::NodeProto& n, const std::string& name, int64_t value);

  // Initializers the expansion made (an int8 zero, a float constant), added to the graph.
  std::vector<onnx::TensorProto>& initializers() { return initializers_; }

  std::string float_constant(float value);
  // A scalar of `like`'s type: a float initializer where the scope declares `like` float, else
  // one cast like it.
  std::string constant_like(float value, const std::string& like);
  // An int8 zero point of 0.
  std::string int8_zero();

  // Node `op` of `inputs` into `output` (a fresh value when empty); its output.
  std::string op(const std::string& op, const std::vector<std::string>& inputs,
                 std::string output = "");

  // GELU of x into `output` as the ops torch.onnx wrote it before opset 20: x * (1 + Erf(x /
  // sqrt 2)) * 0.5 (the form the CPU and OpenCL backends fuse), or with `tanh`
  // x * (1 + Tanh(sqrt(2 / pi) * (x + 0.044715 x^3))) * 0.5.
  void gelu(const std::string& x, bool tanh, const std::string& output);

 private:
  int32_t element_type(const std::string& x, const std::string& zero_point) const;

  const onnx::NodeProto& node_;
  std::string label_;
  std::string name_;  // of the new nodes: the node's, or its op and index
  const Scope& scope_;
  int64_t opset_;
  std::vector<onnx::NodeProto> nodes_;
  std::vector<onnx::TensorProto> initializers_;
  int next_ = 0;
};

}  // namespace hsched
