// One partition of a plan compiled for its device (the executor's unit of work), and the
// compiler that makes them: CPU programs, OpenCL programs on runtimes opened once per device, and
// the fp32 CPU references that verification compares device partitions with.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "backends/level_zero/native_cache.h"
#include "backends/level_zero/program.h"
#include "backends/opencl/program_cache.h"
#include "backends/opencl/runtime.h"
#include "hsched/executor.h"

namespace hsched {

// Host <-> device copies one run made (zeros on the host).
struct PartitionIo {
  int64_t upload_bytes = 0;
  int64_t zero_copy_bytes = 0;
  double upload_ms = 0;
  int64_t download_bytes = 0;
  double download_ms = 0;
};

class PartitionProgram {
 public:
  virtual ~PartitionProgram() = default;
  // Inputs and outputs in the order of the partition graph's. Not reentrant: the executor runs
  // one request at a time through each program. `io`, when given, gets the copies' sizes and
  // times.
  virtual Result<std::vector<Tensor>> run(const std::vector<Tensor>& inputs, PartitionIo* io) = 0;
  virtual void append_profile(std::vector<StepProfile>& steps) const = 0;
  virtual void reset_profile() = 0;
};

// The CPU backend in fp32 on `part` (a CPU partition, or the verification reference and the
// fallback of a device partition).
Result<std::shared_ptr<PartitionProgram>> compile_cpu_program(const Graph& part,
                                                              const std::string& device,
                                                              const ExecutorOptions& options);

class PartitionCompiler {
 public:
  explicit PartitionCompiler(const ExecutorOptions& options);

  // The program for `partition` of `plan` (`part`: its subgraph). A partition compiled before
  // with the same device and nodes is returned again (re-plans keep what did not change).
  Result<std::shared_ptr<PartitionProgram>> compile(const Plan& plan, const Partition& partition,
                                                    const Graph& part);
  const opencl::ProgramCache& cache() const { return *cache_; }
  // Forgets the programs compiled so far (not the device runtimes): for callers that compile
  // other graphs with the same node ids (calibration's benchmarks).
  void forget_programs() { done_.clear(); }

 private:
  Result<std::shared_ptr<opencl::DeviceRuntime>> open_opencl(const DeviceProfile& device);
  Result<std::shared_ptr<level_zero::NpuRuntime>> open_npu(const DeviceProfile& device);

  ExecutorOptions options_;
  std::shared_ptr<opencl::ProgramCache> cache_;
  std::map<std::string, std::shared_ptr<opencl::DeviceRuntime>> runtimes_;  // by locator
  // NPU graphs: native binaries cached beside the OpenCL programs, and counted with them.
  std::shared_ptr<level_zero::NativeCache> graph_cache_;
  std::map<std::string, std::shared_ptr<level_zero::NpuRuntime>> npu_runtimes_;  // by locator
  std::map<std::pair<std::string, std::vector<NodeId>>, std::shared_ptr<PartitionProgram>> done_;
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

}  // namespace hsched
