// The compiler of a plan's partitions (the executor's units of work): each on its device, opened
// once through the build's backends (backends/backend.h), and the fp32 CPU references that
// verification compares device partitions with.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "backends/backend.h"
#include "graph/subgraph.h"
#include "hsched/executor.h"

namespace hsched::runtime {

// The compile options of ExecutorOptions for a partition computing in `precision`.
CompileOptions compile_options(const ExecutorOptions& options, Precision precision);

// `partition` of `plan` as a graph of its own. Constant computations the plan put on its device
// are copied in rather than received.
Subgraph partition_subgraph(const Graph& graph, const Plan& plan, const Partition& partition);

// The CPU backend in fp32 on `part` (a CPU partition, or the verification reference and the
// fallback of a device partition), on `cpu` (the target's host).
Result<std::shared_ptr<Program>> compile_cpu_program(const Graph& part, const DeviceProfile& cpu,
                                                     const ExecutorOptions& options);

class PartitionCompiler {
 public:
  explicit PartitionCompiler(const ExecutorOptions& options);

  // The program for `partition` of `plan` (`part`: its subgraph), compiled by its device's
  // backend in the precision the device gives the partition's nodes. A partition compiled before
  // with the same device, nodes, precisions and interface is returned again (re-plans keep what
  // did not change). A part without outputs (every value it makes dequantized by its readers
  // themselves) gets a program that computes nothing, on no device. The device's driver is asked
  // first (Device::query): its answer goes to `answer` when given, and a node it refuses fails the
  // compile (Unavailable "driver_unsupported").
  Result<std::shared_ptr<Program>> compile(const Plan& plan, const Partition& partition,
                                           const Graph& part, DriverAnswer* answer = nullptr);
  // Drops the program compiled for `partition` of `plan` (`part`), if any, so that its device can
  // free it (a program made for one measurement, such as a node compiled alone).
  void forget(const Plan& plan, const Partition& partition, const Graph& part);
  // Programs built and loaded from the on-disk caches, over every device opened.
  CacheCounts cache_counts() const;
  // Forgets the programs compiled so far (not the devices): for callers that compile other
  // graphs with the same node ids (calibration's benchmarks).
  void forget_programs() { done_.clear(); }

 private:
  ExecutorOptions options_;
  std::map<std::string, std::unique_ptr<Device>> devices_;  // by device id, opened once
  struct Compiled {
    std::shared_ptr<Program> program;
    std::string driver_answer;  // DriverAnswer::summary
  };
  // The device, the nodes and their precisions, and the part's interface (its input and output
  // names and node count: what its neighbours' devices make it copy in or hand on).
  using Key = std::tuple<std::string, std::vector<NodeId>, std::vector<Precision>,
                         std::vector<std::string>, size_t>;
  static Key key_of(const Plan& plan, const Partition& partition, const Graph& part);
  std::map<Key, Compiled> done_;
};

// How far `got` is from `want` (the reference), over every float output.
struct Deviation {
  double max_abs = 0;
  double mean_abs = 0;
  bool within = true;  // every element within atol + rtol * |want|
  std::string detail;  // the worst element when not within: "output 'x'[12]: 0.5 vs 0.1"
};
Deviation compare_outputs(const Graph& part, const std::vector<Tensor>& got,
                          const std::vector<Tensor>& want, const Tolerance& tolerance);

}  // namespace hsched::runtime
