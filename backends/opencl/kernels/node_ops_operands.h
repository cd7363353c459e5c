// The operands of a node as enqueue_node sees them (checked access, messages naming the node),
// and the enqueue side of the op families in node_ops_enqueue_families.cpp. Internal to the
// node level (node_ops_enqueue*.cpp).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "backends/opencl/kernels/node_ops.h"

namespace hsched::opencl::node_detail {

// The operands of one node with checked access: messages name the node and op.
class Operands {
 public:
  Operands(const Node& node, const NodeOperands& operands) : node_(node), operands_(operands) {}

  std::string context() const { return "OpenCL node " + node_.name + " (" + node_.op_type + ")"; }
  bool has(size_t i) const {
    return i < operands_.inputs.size() &&
           (operands_.inputs[i].buffer != nullptr || operands_.inputs[i].constant != nullptr);
  }
  Result<const cl::Buffer*> buffer(size_t i) const {
    if (i >= operands_.inputs.size() || operands_.inputs[i].buffer == nullptr) {
      return invalid_argument(context() + ": input " + std::to_string(i) + " has no buffer");
    }
    return operands_.inputs[i].buffer;
  }
  const cl::Buffer* optional_buffer(size_t i) const {
    return i < operands_.inputs.size() ? operands_.inputs[i].buffer : nullptr;
  }
  const Shape& shape(size_t i) const { return operands_.inputs.at(i).shape; }
  DType dtype(size_t i) const { return operands_.inputs.at(i).dtype; }
  const Tensor* constant(size_t i) const {
    return i < operands_.inputs.size() ? operands_.inputs[i].constant : nullptr;
  }
  std::vector<const Tensor*> constants(size_t first, size_t count) const {
    std::vector<const Tensor*> tensors;
    for (size_t i = first; i < first + count; ++i) tensors.push_back(constant(i));
    return tensors;
  }
  Result<cl::Buffer*> output() const {
    if (operands_.outputs.empty() || operands_.outputs[0] == nullptr ||
        operands_.output_shapes.empty()) {
      return invalid_argument(context() + ": output 0 has no buffer");
    }
    return operands_.outputs[0];
  }
  const Shape& output_shape() const { return operands_.output_shapes.at(0); }
  size_t input_count() const { return operands_.inputs.size(); }
  const std::vector<cl::Buffer*>& outputs() const { return operands_.outputs; }
  const std::vector<Shape>& output_shapes() const { return operands_.output_shapes; }
  int64_t opset() const { return operands_.opset; }
  const Node& node() const { return node_; }
  const cl::Buffer* error_flag() const { return operands_.error_flag; }

 private:
  const Node& node_;
  const NodeOperands& operands_;
};

// GatherElements, ScatterElements, Scatter, GatherND, ScatterND, TopK; ConstantOfShape, Range,
// EyeLike, OneHot, ReverseSequence, LRN; MatMulInteger, ConvInteger, QLinearMatMul,
// QLinearConv (check_node's node_ops_check.cpp families). nullopt for other ops.
std::optional<Result<cl::Event>> enqueue_gather_scatter(const OpKernels& ops,
                                                        cl::CommandQueue& queue, const Node& node,
                                                        const Operands& in, const Events& wait);
std::optional<Result<cl::Event>> enqueue_generator(const OpKernels& ops, cl::CommandQueue& queue,
                                                   const Node& node, const Operands& in,
                                                   const Events& wait);
std::optional<Result<cl::Event>> enqueue_quant(const OpKernels& ops, cl::CommandQueue& queue,
                                               const Node& node, const Operands& in,
                                               const Events& wait);
// Conv, ConvTranspose, MaxPool, AveragePool, MatMul, a MatMul group, attention, a
// squeeze-and-excitation, Gemm (node_ops_enqueue_products.cpp). nullopt for other ops.
std::optional<Result<cl::Event>> enqueue_product(const OpKernels& ops, cl::CommandQueue& queue,
                                                 const Node& node, const Operands& in,
                                                 const Events& wait);

// The activation the program fused into a Conv or MatMul (attach_activation), if any; with
// `inner`, a squeeze-and-excitation step's first one (kInnerActivationAttrs).
std::optional<Activation> fused_activation(const Node& node, bool inner = false);
// The parameters of one of the program's QDQ fusions: attribute `attr` of `node`, `count`
// floats; null where the node has none.
Result<const std::vector<float>*> fused_params(const Node& node, const char* attr, size_t count,
                                               const Operands& in);
// The program's DequantizeLinear -> row op -> QuantizeLinear fusion (attribute `attr`:
// kQdqRowAttr of a LayerNormalization, Softmax, GlobalAveragePool; kMatMulNormQdqAttr), if any.
Result<std::optional<QdqRow>> fused_row_quantization(const Node& node, const Operands& in,
                                                     const char* attr = kQdqRowAttr);
// The program's chain of ops on one 8-bit tensor (attribute `attr`: kQdqChainAttr,
// kMatMulOperandChainAttrs), checked op by op, if any.
Result<std::optional<QdqChain>> fused_chain(const Node& node, const Operands& in,
                                            const char* attr = kQdqChainAttr);

}  // namespace hsched::opencl::node_detail
