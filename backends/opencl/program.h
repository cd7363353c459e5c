// A graph (one partition of a plan) compiled for an OpenCL device: a buffer per value in the
// storage type, float constants uploaded once, view ops aliased, activations after a Conv fused
// into it, one enqueue_node per other node on an in-order queue.
//
// run(): writes the inputs (or, on a device sharing host memory, binds them in place), enqueues
// every node, and reads the outputs with blocking reads, so when it returns every command of the
// run has finished and no device data is read early (the host->device writes precede their
// readers on the in-order queue).
// Replay: a node's host work (finding its kernels, setting their arguments, making events) costs
// more than its kernels on a fast GPU (docs/opencl-backend.md). So the second run records each
// node's launches (ops_util.h: kernels of its own, arguments as set) and later runs enqueue
// those kernels as they are. The first run is not recorded: it grows the queue's scratch
// buffers to the sizes every later run asks for, so a recorded kernel's scratch stays in place.
// Nodes that enqueue anything else (CLBlast, fills, copies), read a graph input bound anew per
// run (rebinds_inputs) or a host input given per run (node_ops.h: shapes, axes, indices read on
// the host from the run's tensor, or read back first where an earlier node made it) are
// enqueued through the op layer every run. Integer data is held as int32/int64 (ops_integer.h);
// an integer division by zero or an index out of range, found by a kernel, fails the run.
// Threading: concurrent run() calls are serialized.
#pragma once

#include <array>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "backends/backend.h"
#include "backends/opencl/kernels/node_ops.h"
#include "backends/opencl/kernels/ops_util.h"
#include "backends/opencl/runtime.h"
#include "graph/graph.h"

namespace hsched::opencl {

struct ProgramStats {
  int kernels = 0;              // nodes enqueued per run
  int aliased_views = 0;        // view ops run as no-ops
  int fused_epilogues = 0;      // activations run in their Conv, bias Adds in their MatMul
  int constant_steps = 0;       // run once at compile time: their inputs are all constants
  int64_t constant_bytes = 0;   // uploaded once, in the storage type
  int64_t activation_bytes = 0;  // device buffers of non-constant values
};

// One node's time per run under profiling: the node enqueued, then waited for alone (so a
// profiled run is slower than a plain one: no overlap of host enqueue and device work).
struct ClStepTime {
  NodeId node = kNoNode;
  double enqueue_ms = 0;  // host time of enqueue_node
  double total_ms = 0;    // enqueue to finish
  double device_ms = 0;   // first command's start to last command's end on the device
};

// What a ClProgram compiled from `graph` runs per node (indexed by NodeId), from the same planning
// code as ClProgram::compile without a device (pure graph analysis); for cost models. `without`:
// runs no kernel of its own (view ops, aliases of their input; nodes fused into another step).
// `copy_share`: the share of a Concat's copies (one per non-empty input) its step runs, below 1
// where Convs wrote some of its inputs in place; 1 for every other node. An unsortable graph
// gives all false and all 1.
struct KernelHints {
  std::vector<bool> without;
  std::vector<double> copy_share;
};
KernelHints kernel_hints(const Graph& graph);
std::vector<bool> nodes_without_kernels(const Graph& graph);  // kernel_hints(graph).without

class ClProgram {
 public:
  // `graph`: static shapes; every node passes check_node. Builds (or loads) the op programs for
  // `storage` through `device` under `deadline_ms`; errors: the runtime's (compile_timeout,
  // build_failed), InvalidArgument naming a node the backend refuses, Internal for OpenCL.
  static Result<std::unique_ptr<ClProgram>> compile(const Graph& graph,
                                                    std::shared_ptr<DeviceRuntime> device,
                                                    Storage storage, int64_t deadline_ms,
                                                    bool profile = false);

  // Inputs in the order of graph().inputs() (dtypes and shapes as the graph's); outputs likewise.
  // `copies`, when given, gets the copies' sizes and times: the queue is then drained after the
  // writes and before the reads, so the three phases do not overlap.
  Result<std::vector<Tensor>> run(const std::vector<Tensor>& inputs,
                                  CopyRecord* copies = nullptr);

  // `bytes` of the device's page-locked host memory (PinnedPool) for a tensor the caller fills
  // and hands to run(); null where the pool has no room.
  std::shared_ptr<std::byte> host_memory(size_t bytes) const {
    return device_->pinned().acquire(bytes);
  }

  const Graph& graph() const { return graph_; }
  Storage storage() const { return ops_->storage(); }
  const ProgramStats& stats() const { return stats_; }
  // Nodes enqueued by replaying their recorded kernels (from the third run on).
  int replayed_steps() const;
  // The kernel launches those replays enqueue per run.
  int replayed_launches() const;
  // Mean per node over the runs since compile or reset_profile(), in run order; empty unless
  // compiled with `profile`. Not to be called while a run is in flight.
  std::vector<ClStepTime> profile() const;
  void reset_profile();

 private:
  // One node as run: the graph's, or a Conv copy carrying a fused activation.
  enum class Replay { kRecordNext, kReady, kNever };
  struct Step {
    NodeId node = kNoNode;  // for names and the profile
    Node op;
    bool view = false;  // aliases its input; enqueues nothing
    bool once = false;  // run at compile time (PlannedStep::once), never again
    Replay replay = Replay::kRecordNext;
    std::vector<detail::RecordedLaunch> launches{};  // with kReady
  };

  ClProgram(const Graph& graph, std::shared_ptr<DeviceRuntime> device, const OpKernels* ops);
  Status plan_steps();
  Status allocate();
  Status allocate_error_flag();
  Status check_error_flag();
  Status clear_error_flag();
  Status read_back_host_inputs(const Step& step);
  Status upload_constants();
  Status run_constant_steps();
  Status write_input(const Tensor& input, ValueId value);
  Result<bool> bind_input(const Tensor& input, ValueId value,
                          std::vector<std::pair<size_t, cl::Buffer>>& borrowed);
  // Enqueues the read of `value` into a host tensor (blocking or not): the value's own type,
  // or the floats a value of another type is held in (as_value converts them once read).
  Result<Tensor> enqueue_read(ValueId value, bool blocking);
  Tensor as_value(ValueId value, Tensor read) const;
  Result<Tensor> read_output(ValueId value);
  Tensor host_tensor(DType dtype, const std::vector<int64_t>& dims) const;
  NodeOperands operands_for(const Node& node);
  // With `events` (profiling), each command's event is appended to it.
  Status enqueue_step(Step& step, std::vector<cl::Event>* events = nullptr);
  // Whether run() binds each graph input's buffer anew (bind_input): fp32 storage on a device
  // sharing host memory binds the caller's tensor in place.
  bool rebinds_inputs() const;
  bool reads_graph_input(const Step& step) const;

  Graph graph_;
  std::shared_ptr<DeviceRuntime> device_;
  const OpKernels* ops_;  // owned by device_
  cl::CommandQueue queue_;
  std::vector<std::shared_ptr<cl::Buffer>> buffers_;  // per value; views share their input's
  std::vector<Step> steps_;                           // in run order
  // Per value, for the run in flight: the host tensors of graph inputs and of host inputs read
  // back from the device (read_back_ holds those).
  std::vector<const Tensor*> run_inputs_;
  std::vector<std::optional<Tensor>> read_back_;
  std::optional<cl::Buffer> error_flag_;  // with nodes that check values (run_errors_of)
  std::array<std::string, 2> checking_;   // per RunError bit, those nodes' names
  bool profile_ = false;
  std::vector<ClStepTime> step_totals_;  // per non-view step, summed over profiled runs
  int64_t profiled_runs_ = 0;
  int64_t runs_ = 0;  // completed
  ProgramStats stats_;
  std::mutex run_mutex_;
};

}  // namespace hsched::opencl
