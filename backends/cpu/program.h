// A graph compiled for the CPU: constants folded, activations fused into oneDNN primitives,
// channels-last kept between them, one kernel per remaining node, and a memory plan that reuses
// activation buffers by liveness. Also used by the simulated NPU driver to run its partitions.
#pragma once

#include <memory>
#include <mutex>
#include <vector>

#include <oneapi/dnnl/dnnl.hpp>
#include <tbb/task_arena.h>

#include "backends/cpu/denormals.h"
#include "backends/cpu/kernels/kernel.h"

namespace hsched::cpu {

// What a node computes in (CpuOptions::node_compute).
enum class NodeCompute : uint8_t { kFp32, kBf16, kInt8 };

struct CpuOptions {
  int threads = 2;            // the OpenMP team of the kernels and oneDNN (and a oneTBB arena)
  bool fuse = true;           // activations and residual adds into oneDNN primitives
  bool channels_last = true;  // keep NHWC between oneDNN primitives
  bool profile = false;       // time every step of every run (see CpuProgram::profile)
  // Flush-to-zero and denormals-are-zero on every thread while the program compiles and runs
  // (backends/cpu/denormals.h): subnormal floats become 0 instead of running 60x slower.
  bool flush_denormals = true;
  // The most host memory the compiled program may hold, in bytes: weights, constants folded at
  // compile time, the activation arena and one run's outputs. 0: the machine's physical memory.
  // A program over it is refused at compile time (ResourceExhausted, "memory_exceeded: ...").
  int64_t memory_limit_bytes = 0;
  // Per node of the graph (by NodeId; empty: all fp32): the precision a Conv, ConvTranspose,
  // MatMul or Gemm computes in. bf16: inputs and weights rounded to bf16, fp32 sums and outputs.
  // int8 (Conv, MatMul and Gemm with constant weights): dynamic quantization (dnnl_int8.h).
  std::vector<NodeCompute> node_compute = {};
};

// The machine's physical memory in bytes (sysconf); 0 when unknown.
int64_t physical_memory_bytes();

// One step of a compiled program: the node it runs (a fused node carries the name of the chain's
// first node, its op the root's), and its mean time per run in ms.
struct StepProfile {
  std::string node;
  std::string op;
  double mean_ms = 0;
};

struct CpuProgramStats {
  int folded_nodes = 0;   // computed once at compile time
  int fused_nodes = 0;    // absorbed into a oneDNN primitive as a post-op
  int kernels = 0;        // steps run per request
  int aliased_views = 0;  // view ops (Reshape, Squeeze, leading-axis Split...) run as no-ops
  int channels_last_values = 0;
  int64_t arena_bytes = 0;       // activation memory after reuse
  int64_t activation_bytes = 0;  // what the activations would take without reuse
  int64_t weight_bytes = 0;      // the graph's constants before folding
  int64_t folded_bytes = 0;      // constants computed at compile time
  int64_t output_bytes = 0;      // one run's graph outputs
};

// True for each node (indexed by NodeId) that a CpuProgram compiled from `graph` with default
// CpuOptions runs without a step of its own: computed once at compile time (every input
// constant), an aliased view (is_view_op, or a leading-axis Split, as the memory plan
// aliases them), or absorbed by the fusion passes (fuse_group_norms, fuse_channel_layer_norms,
// fuse_post_ops). Analysis only: no kernel is created and no folded value computed, so a fusion
// that needs a folded value's bytes is missed (its nodes reported as steps). An unsortable graph
// gives all false. For cost models: such nodes take no time on the CPU. `step_ops`, when given,
// receives per node the op its step runs: its own, or the internal op of a fused chain it heads
// (kGroupNormOp, kChannelLayerNormOp: a chain that starts with a Reshape or a Transpose runs as
// a normalization); empty for nodes without a step.
std::vector<bool> nodes_without_steps(const Graph& graph,
                                      std::vector<std::string>* step_ops = nullptr);

class CpuProgram {
 public:
  // `graph` must have static shapes everywhere. Errors name the node the CPU cannot run.
  static Result<std::unique_ptr<CpuProgram>> compile(const Graph& graph, const CpuOptions& options);
  ~CpuProgram();

  // Inputs in the order of graph().inputs(), checked against their dtype and shape; returns the
  // outputs in the order of graph().outputs(). Threading: concurrent calls are serialized.
  Result<std::vector<Tensor>> run(const std::vector<Tensor>& inputs);

  const Graph& graph() const { return graph_; }
  const CpuProgramStats& stats() const { return stats_; }
  // Per step in execution order, over the runs since compile or reset_profile(); zeros unless
  // compiled with CpuOptions::profile. Not to be called while a run is in flight.
  std::vector<StepProfile> profile() const;
  void reset_profile();

 private:
  struct Step {
    Node node;  // the graph's node, or a fused copy with post-ops
    std::unique_ptr<Kernel> kernel;
    double total_ms = 0;  // with CpuOptions::profile
    int64_t runs = 0;
  };
  CpuProgram(const Graph& graph, const CpuOptions& options);
  Status fold_constants(const std::vector<NodeId>& order, const KernelRegistry& registry);
  void fuse();
  void drop_steps(const std::vector<bool>& absorbed);
  void assign_layouts();
  Status create_kernels(const KernelRegistry& registry);
  Status plan_memory();
  // memory_exceeded unless weights + folded constants + `more` fit options_.memory_limit_bytes.
  Status check_memory(int64_t more, const std::string& what) const;
  Status run_steps(const std::vector<Tensor>& inputs, std::vector<Tensor>& outputs);
  KernelSpec spec_for(const Node& node);

  Graph graph_;  // a copy: folded constants are added to it
  CpuOptions options_;
  dnnl::engine engine_;
  dnnl::stream stream_;
  CpuContext context_;
  tbb::task_arena arena_;
  std::vector<std::unique_ptr<Step>> steps_;
  std::vector<std::optional<Tensor>> buffers_;  // per value: its view into the arena
  std::shared_ptr<std::byte> arena_memory_;
  std::vector<bool> channels_last_;  // per value
  CpuProgramStats stats_;
  std::mutex run_mutex_;
};

}  // namespace hsched::cpu
