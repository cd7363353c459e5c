// The whole contract between the scheduler and a backend, in three levels (as ggml-backend's
// reg -> device -> stream and ONNX Runtime's execution providers):
//
//   Backend  one per API of this build (the CPU, OpenCL, Level Zero): finds its devices and opens
//            a Device for a profile, whether the device is present here or planned from a
//            target file.
//   Device   what the planner sees of one device: its profile, check() per node and precision
//            (yes, or a Rejection as data), the hints the cost model needs, the precision rule of
//            a partition, and compile() of a partition into a Program. Entries marked optional
//            have defaults that fit a device running every node as one step.
//   Program  one compiled partition: run, profile, copy records; one set of types for every
//            backend.
//
// Backends never see each other nor anything above them; the scheduler sees only this header
// (and registry.h, which lists the backends of this build). docs/adding-a-backend.md walks
// through it.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/deadline.h"
#include "graph/graph.h"
#include "hsched/device.h"
#include "hsched/executor.h"
#include "hsched/plan.h"
#include "hsched/status.h"

namespace hsched {

// A backend's "no" before it is tied to a node and device: the reason and one line of detail
// ("no kernel for op NonZero", "attribute mode=cubic").
struct Refusal {
  ReasonCode reason = ReasonCode::kOpUnsupported;
  std::string detail;
};

// Host <-> device copies one run of a program made (zeros on the host). Bytes and ms.
struct CopyRecord {
  // Asked by the caller: time the copies apart from the compute, even where that holds the run
  // up (an OpenCL queue drained after the writes and before the reads: 5-7% of a small model's
  // request on an H200). False: the bytes always, the ms where timing them costs nothing, else 0.
  bool timed = true;
  int64_t upload_bytes = 0;
  int64_t zero_copy_bytes = 0;  // inputs the device read in place (host memory it shares)
  double upload_ms = 0;
  int64_t download_bytes = 0;
  double download_ms = 0;
};

// One compiled partition. Inputs and outputs in the order of the partition graph's. Not
// reentrant: the executor runs one request at a time through each program.
class Program {
 public:
  virtual ~Program() = default;
  // `copies`, when given, gets the run's copies.
  virtual Result<std::vector<Tensor>> run(const std::vector<Tensor>& inputs,
                                          CopyRecord* copies) = 0;
  // Appends the mean time of each step since the last reset (nothing when compiled without
  // profiling).
  virtual void append_profile(std::vector<StepProfile>& steps) const = 0;
  virtual void reset_profile() = 0;
  // Optional: `bytes` of host memory this device copies from and into fastest (a GPU driver's
  // page-locked memory), for an input tensor the caller fills; the bytes' owner keeps them
  // alive. Null (the default): ordinary memory is as good. Any thread.
  virtual std::shared_ptr<std::byte> host_memory(size_t /*bytes*/) const { return nullptr; }
};

struct CompileOptions {
  // What the partition computes in: Device::partition_precision of its nodes' precisions.
  Precision precision = Precision::kFp32;
  // Per node of the partition's graph, in its order: the node's planned precision, which a
  // device that mixes_precisions() computes it in. Empty: every node in `precision`.
  std::vector<Precision> node_precisions;
  int cpu_threads = 0;  // 0: every core
  bool profile = false;
  bool flush_denormals = true;      // CPU threads treat subnormal floats as zero
  int64_t memory_limit_bytes = 0;   // CPU: cap on weights + folds + arena + outputs; 0: none
  // Device compilers: the deadline of a build or cached load.
  int64_t compile_timeout_ms = kDefaultCompileDeadlineMs;
};

// How a device executes the nodes of a graph, for the cost model (optional entries of Device).
struct StepHints {
  // Per node: runs without a step of its own on this device (folded at compile time, a view of
  // its input, fused into its producer). Empty: every node is a step.
  std::vector<bool> free;
  // Per node: the step this node heads runs as one op of another cost class (a fused chain).
  // Empty, or nullopt for a node: its own class.
  std::vector<std::optional<CostClass>> as_class;
  // Per node: the share of its launches (Device::launches) its step runs (a Concat whose other
  // inputs their producers wrote in place copies the rest). Empty: all of them.
  std::vector<double> launch_share;
};

// The concat curve's benchmark (`hsched calibrate`) joins this many inputs: a device that runs a
// Concat as a kernel per input counts a point per this many of them.
inline constexpr int kConcatBenchInputs = 2;

// Programs a device built from source and loaded from the on-disk cache (for ExecutableStats).
struct CacheCounts {
  int64_t built = 0;
  int64_t loaded = 0;
};

// What a device is given when opened for compiling: where its on-disk cache lives ("" for the
// default, binary_cache.h).
struct DeviceContext {
  std::string cache_dir;
};

// What a device's driver answers, before a build, about the nodes of a partition.
struct DriverAnswer {
  std::vector<Rejection> refused;  // nodes of the partition's graph it does not support
  std::string summary;             // one line for the report; empty when it was not asked
};

class Device {
 public:
  virtual ~Device() = default;
  virtual const DeviceProfile& profile() const = 0;

  // Whether this device runs `node` of `graph` in `precision`: nullopt for yes, else a Rejection
  // (reason code and one line of detail naming the op or attribute at fault). Contract: pure and
  // deterministic; cheap enough to ask for every node of a 10,000-node graph; thread-compatible.
  virtual std::optional<Rejection> check(const Graph& graph, NodeId node,
                                         Precision precision) const = 0;

  // Optional cost hints. Which nodes run without a step and which steps run as another class.
  virtual StepHints step_hints(const Graph& /*graph*/) const { return {}; }
  // The kernels `node` launches (each pays a launch; a curve point times one kernel).
  virtual int64_t launches(const Graph& /*graph*/, NodeId /*node*/) const { return 1; }
  // How many points of its class's curve `node` costs: its launches, unless the class's
  // benchmark runs several of them per point.
  virtual double curve_points(const Graph& graph, NodeId node, CostClass /*cost_class*/) const {
    return static_cast<double>(launches(graph, node));
  }
  // The work (FLOP or bytes, as the class counts it) the device's kernels really do for `node`,
  // whose nominal work is `work`: padded tiles, a GPU's fill. Default: `work`.
  virtual double executed_work(const Graph& /*graph*/, NodeId /*node*/, CostClass /*cost_class*/,
                               double work) const {
    return work;
  }

  // The precision a partition computes in, from its nodes' planned precisions (never empty).
  // Default: fp32 unless every node asks the same reduced precision the device computes.
  virtual Precision partition_precision(const std::vector<Precision>& nodes) const;
  // Whether each node of a partition computes in its own planned precision (the CPU: bf16
  // convolutions beside fp32 elementwise ops), instead of the partition in one. Default: no.
  virtual bool mixes_precisions() const { return false; }

  // Compiles `part` (a partition's subgraph) into a Program. Unavailable when the device is not
  // present on this machine; InvalidArgument for a model the backend refuses; DeadlineExceeded
  // when a device compiler passes options.compile_timeout_ms. Not thread-safe.
  virtual Result<std::shared_ptr<Program>> compile(const Graph& part,
                                                   const CompileOptions& options) = 0;
  // Optional: asks the device's driver, before compile(), which nodes of `part` it supports (an
  // NPU compiler's query of supported layers): what the capability check (check()) cannot know.
  // Default: nothing asked. Errors as compile()'s.
  virtual Result<DriverAnswer> query(const Graph& /*part*/, const CompileOptions& /*options*/) {
    return DriverAnswer{};
  }
  // Optional: programs built and loaded from the on-disk cache so far.
  virtual CacheCounts cache_counts() const { return {}; }
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual DeviceApi api() const = 0;
  // The devices of this API on this machine, each present with a locator; none without a driver.
  // Ids are left empty or set to "<family>*" ("ocl*"): discovery numbers them. Never throws.
  virtual std::vector<DeviceProfile> discover() const = 0;
  // A device for `profile` (of this API; present here or planned from a target file).
  virtual std::unique_ptr<Device> open(const DeviceProfile& profile,
                                       const DeviceContext& context) const = 0;
};

// A device known from its profile alone (an API this build has no backend for): the profile's
// rules (backends/capability_rules.h) and no compile.
std::unique_ptr<Device> open_profile_device(const DeviceProfile& profile);

}  // namespace hsched
