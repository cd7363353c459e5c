// The CPU kernel interface: one Kernel per node, created once per compiled program (shapes are
// static by then) and run many times. The CPU kernel library depends on graph/ only, never on the
// scheduler, so that other code (the simulated NPU driver) can link it.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "hsched/tensor.h"
#include "graph/graph.h"
#include "hsched/status.h"

namespace dnnl {
struct engine;
struct stream;
}  // namespace dnnl

namespace hsched::cpu {

// Shared by all kernels of one program. Threading: a program runs one request at a time.
struct CpuContext {
  int threads = 2;          // worker threads for TBB kernels and oneDNN (OpenMP)
  dnnl::engine* engine = nullptr;
  dnnl::stream* stream = nullptr;
};

// What a kernel factory sees of its node: op, attributes, and every input and output value with
// its dtype and static shape (and data, for constant inputs such as weights).
struct KernelSpec {
  const Node& node;
  std::vector<const Value*> inputs;   // nullptr for an omitted optional input
  std::vector<const Value*> outputs;  // nullptr for an omitted optional output
  int64_t opset = 17;
  CpuContext* context = nullptr;

  // Helpers for factories: the input's shape dims / constant value (nullptr when not constant).
  const std::vector<int64_t>& in_dims(size_t i) const { return inputs.at(i)->shape.dims; }
  const std::vector<int64_t>& out_dims(size_t i) const { return outputs.at(i)->shape.dims; }
  const Tensor* constant(size_t i) const {
    return i < inputs.size() && inputs[i] && inputs[i]->constant ? &*inputs[i]->constant : nullptr;
  }
  bool has_input(size_t i) const { return i < inputs.size() && inputs[i] != nullptr; }
};

class Kernel {
 public:
  virtual ~Kernel() = default;
  // `inputs[i]` is null for an omitted optional input; outputs are allocated by the caller with
  // the node's output shapes and dtypes, and may hold garbage on entry. Inputs never alias
  // outputs. Errors are for data-dependent failures only (an index out of range).
  virtual Status run(std::span<const Tensor* const> inputs, std::span<Tensor* const> outputs) = 0;
};

// Returns the kernel for a node, or an error saying why the CPU cannot run it
// (Unimplemented: op, dtype or attribute it lacks; InvalidArgument: the node is malformed).
using KernelFactory = std::function<Result<std::unique_ptr<Kernel>>(const KernelSpec&)>;

// op type -> factory. Not global: a program gets the registry it is given (tests build theirs).
class KernelRegistry {
 public:
  void add(const std::string& op_type, KernelFactory factory);
  bool supports(const std::string& op_type) const { return factories_.count(op_type) != 0; }
  Result<std::unique_ptr<Kernel>> create(const KernelSpec& spec) const;
  std::vector<std::string> op_types() const;

 private:
  std::map<std::string, KernelFactory> factories_;
};

// Kernel that runs a plain function: most TBB kernels need no state beyond their spec.
class FunctionKernel final : public Kernel {
 public:
  using Fn = std::function<Status(std::span<const Tensor* const>, std::span<Tensor* const>)>;
  explicit FunctionKernel(Fn fn) : fn_(std::move(fn)) {}
  Status run(std::span<const Tensor* const> inputs, std::span<Tensor* const> outputs) override {
    return fn_(inputs, outputs);
  }

 private:
  Fn fn_;
};

template <typename Fn>
Result<std::unique_ptr<Kernel>> make_kernel(Fn fn) {
  return std::unique_ptr<Kernel>(std::make_unique<FunctionKernel>(std::move(fn)));
}

// Error helpers naming the node: "node 'conv1' (Conv): ..."
std::string node_context(const Node& node);
Status unsupported(const KernelSpec& spec, const std::string& detail);
// "node 'x' (Op): detail" as an InvalidArgument (malformed node or data out of range).
Status invalid_node(const KernelSpec& spec, const std::string& detail);
// "[1,3,224,224]", for messages.
inline std::string dims_text(const std::vector<int64_t>& dims) { return Shape(dims).to_string(); }

// Registration functions, one per kernel family (each in its own file).
void register_elementwise_kernels(KernelRegistry& registry);  // unary, binary, Where, Clip, Cast...
void register_reduction_kernels(KernelRegistry& registry);    // Reduce*, ArgMax, Softmax, norms
void register_layout_kernels(KernelRegistry& registry);       // Reshape, Transpose, Concat, Gather...
void register_dnnl_kernels(KernelRegistry& registry);         // Conv, ConvTranspose, Gemm, MatMul, pools
void register_rnn_kernels(KernelRegistry& registry);          // LSTM, GRU, RNN
void register_math_kernels(KernelRegistry& registry);         // Hardmax, TopK, Det, LRN
void register_index_kernels(KernelRegistry& registry);        // Trilu, GatherND, Scatter*, OneHot
void register_sample_kernels(KernelRegistry& registry);       // GridSample, RoiAlign
void register_einsum_kernels(KernelRegistry& registry);       // Einsum
void register_quant_kernels(KernelRegistry& registry);        // QDQ ops, QLinear*, *Integer
void register_text_kernels(KernelRegistry& registry);         // TfIdfVectorizer
void register_spectral_kernels(KernelRegistry& registry);     // DFT, STFT

// All of the above.
KernelRegistry make_cpu_kernel_registry();

}  // namespace hsched::cpu
