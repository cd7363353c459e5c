// Running a plan: every partition compiled on its device (the CPU backend, OpenCL programs), then
// run as a oneTBB flow graph of partitions.
//
//   auto plan = hsched::schedule(model, target, policy);
//   auto exe = hsched::compile(model, *plan);
//   auto outputs = (*exe)->run(inputs);
//
// The flow graph: one node per partition, an edge where a partition reads a value another one
// produces. A partition starts when every partition it reads from has finished, so independent
// partitions on different devices run at the same time. Each partition node runs one request at
// a time; several requests in flight (run_stream) pipeline: the
// partition k of request i+1 runs while partition k+1 of request i runs. Non-CPU partitions run
// on a thread of their device (a tbb::flow::async_node), so waiting for a device never holds a
// TBB worker.
//
// Transfers: values cross devices through host memory. A device partition writes its inputs
// (host -> device) on an in-order queue ahead of the kernels that read them, and reads its
// outputs back with blocking reads: when a partition node finishes, every copy it made has
// completed, and its consumers start only then (the flow-graph edge is the event). A value
// whose producer and consumer share host memory is handed over without a copy (the tensor is
// shared). Values are released when their last consumer partition has finished.
//
// Late failures: a non-CPU partition that cannot be compiled (compile_timeout past the deadline,
// build_failed) becomes a rejection of each of its nodes on that device, the graph is planned
// again with those rejections (final for the run: each round removes a device from some nodes, so
// the loop ends), and compiling goes on; the CPU takes what is left. plan() is the plan that runs.
//
// Verification (ExecutorOptions::verify, or the policy's `verify`): each non-CPU partition's
// outputs are compared with the CPU backend's fp32 outputs on the same inputs, within the
// policy's tolerance for the partition's precision. A partition that fails is quarantined: that
// request's outputs and every later run's come from the CPU program, and the plan gets a
// verification_failed rejection per node (max-abs and mean-abs error in the detail) with the
// nodes placed on the CPU. A rejection is final, so a partition is quarantined at most once.
// A device partition whose run fails (the device lost, out of memory, any error other than bad
// input) is quarantined the same way (device_lost, memory_exceeded): the request completes on
// the CPU.
//
// Threading: run() and run_stream() may be called from several threads at once; the calls are
// serialized (each gets its own outputs), and requests pipeline within one run_stream().
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "hsched/model.h"
#include "hsched/plan.h"
#include "hsched/status.h"
#include "hsched/tensor.h"
#include "hsched/threads.h"

namespace hsched {

struct ExecutorOptions {
  // Compiled OpenCL programs: "" means $HSCHED_CACHE_DIR, else ~/.cache/hsched.
  std::string cache_dir;
  int64_t compile_timeout_ms = 30000;  // per partition (a deploy file's compile_timeout_ms)
  int cpu_threads = default_cpu_threads();
  bool profile = false;  // time every step (Executable::profile); OpenCL steps run one at a time
  bool verify = false;   // check non-CPU partitions against the CPU (also: the policy's verify)
  // Time each device partition's copies apart from its compute (PartitionRun::upload_ms,
  // download_ms): an OpenCL queue is then drained after the writes and before the reads, which
  // costs a small model's GPU request 5-7% (docs/benchmarks.md). Implied by `profile`.
  bool time_transfers = false;
  // CPU partitions flush subnormal floats to zero (FTZ/DAZ on every thread they use), as ONNX
  // Runtime and OpenVINO do: a subnormal costs x86 cores ~60x the time of a normal float.
  // Results differ from IEEE only for magnitudes below 1.2e-38. `hsched run --no-flush-denormals`.
  bool flush_denormals = true;
  // The most host memory one CPU partition's program may hold (weights, folded constants,
  // activations, outputs), in bytes; 0: the machine's physical memory. Over it, compile() fails
  // with ResourceExhausted "memory_exceeded: ..." naming the sizes. `hsched run --memory-limit-mb`.
  int64_t cpu_memory_limit_bytes = 0;
  // The sample inputs a policy's accuracy budget (Policy::accuracy) is measured on, one per graph
  // input; empty: seeded_tensor(input dtype, dims, k + 1) for input k (`hsched run`'s inputs
  // without --inputs).
  std::vector<Tensor> accuracy_inputs;
  // Progressive start: when the plan has partitions off the host, compile() returns as soon as
  // the CPU can run the whole model (every node on the host, compiled at once) and compiles the
  // plan on one background thread, each partition under compile_timeout_ms, one after another
  // (the quickest predicted builds first). Requests run on the CPU until the first device
  // partition is built, then on the plan with each device partition on its device once built and
  // on the CPU until then, switching between requests (RunRecord::plan says which). A device build
  // that fails has the plan made again and compiled whole, as compile() without progressive start
  // does, the requests staying where they are meanwhile. Destroying the Executable does not wait
  // for that thread when compile() was given a Model (it keeps the graph); given a bare graph it
  // joins it (at most the deadlines).
  bool progressive_start = false;
};

// One partition compiled (or failed to), ms since compile() began.
struct CompileRecord {
  int partition = -1;  // in the plan being compiled then
  std::string device;
  double start_ms = 0;
  double end_ms = 0;
  std::string error;  // empty when it compiled
  // The device driver's answer when asked before the build ("driver query: 41 of 41 IR layers
  // supported"); empty when the driver was not asked.
  std::string driver_answer;
};

struct ExecutableStats {
  double compile_ms = 0;                // wall time of compile(), re-planning included
  int64_t programs_built = 0;           // hsched's OpenCL programs built from source
  int64_t programs_loaded = 0;          // ... loaded from the on-disk cache instead
  int replans = 0;                      // plans made again after late rejections
  int quarantined = 0;                  // partitions moved to the CPU while running (Quarantine)
  std::vector<CompileRecord> compiles;  // every attempt, re-plans included
  // Progressive start (ExecutorOptions::progressive_start) only: when the plan's background
  // compile began (after the first request's answer, or 20 ms without a request) and when every
  // partition of the plan ran on its device, ms since compile() began (-1: not yet; ready stays
  // -1 when it failed: every request runs on the CPU, `progressive_error` says why); the requests
  // that ran on the whole-model CPU plan, and those that ran the plan with some of its device
  // partitions still on the CPU (RunRecord::plan "partial"). `compiles` has each device
  // partition's build, its end when the partition moved to its device.
  double plan_started_ms = -1;
  double plan_ready_ms = -1;
  int64_t requests_on_cpu = 0;
  int64_t requests_partial = 0;
  std::string progressive_error;
};

// One step of a partition (a CPU step: fused nodes under their root op; an OpenCL step: one
// node, enqueued and waited for alone), mean ms per run.
struct StepProfile {
  std::string node;
  std::string op;
  double mean_ms = 0;
  std::string device;  // the partition's device id
  // An OpenCL step: the host's share of mean_ms, enqueueing it (arguments and the enqueue call).
  std::optional<double> enqueue_ms;
  // An OpenCL step: its commands' time on the device, from the first start to the last end
  // (OpenCL event profiling), without the launch latency and host time in mean_ms.
  std::optional<double> device_ms;
};

// What one request did. Times are ms since compile() began (steady clock), so compile records
// and the records of several requests share one time line.
struct PartitionRun {
  int partition = -1;  // Plan::partitions index
  std::string device;  // where it ran (the CPU once quarantined)
  double start_ms = 0;
  double end_ms = 0;
  // Host -> device copies of its inputs and device -> host copies of its outputs (zero for a
  // partition on the host), bytes and ms, inside [start_ms, end_ms]; the ms of an OpenCL
  // partition only with ExecutorOptions::time_transfers or profile (else 0). Inputs a device
  // reads in place (it shares host memory) count as zero_copy_bytes, not upload_bytes.
  int64_t upload_bytes = 0;
  int64_t zero_copy_bytes = 0;
  double upload_ms = 0;
  int64_t download_bytes = 0;
  double download_ms = 0;
  bool verified = false;  // compared with the CPU reference in this request
  double verify_ms = 0;   // the CPU reference run and the comparison
};

struct RunRecord {
  double start_ms = 0;
  double end_ms = 0;
  std::vector<PartitionRun> partitions;  // in plan order
  // Which plan ran it: "plan" (compile()'s); with progressive start also "cpu" (the whole model
  // on the CPU before any of the plan's device partitions compiled; its partitions are that
  // plan's) or "partial" (the plan's partitions, those whose device build is not done on the CPU:
  // PartitionRun::device says where each ran).
  std::string plan = "plan";
};

// A device partition moved to the CPU while running: its outputs failed verification
// (verification_failed, with the errors), or the device failed (device_lost, memory_exceeded).
struct Quarantine {
  int partition = -1;
  std::string device;  // where it was planned
  ReasonCode reason = ReasonCode::kVerificationFailed;
  double max_abs = 0;  // verification only
  double mean_abs = 0;
  std::string detail;
};

class Executable {
 public:
  virtual ~Executable() = default;
  // One request. Inputs in the order of the model's inputs (Model::inputs()); outputs in the
  // order of its outputs.
  // `record`, when given, receives the request's timeline.
  virtual Result<std::vector<Tensor>> run(const std::vector<Tensor>& inputs,
                                          RunRecord* record = nullptr) = 0;
  // Throughput: every request in the pipeline at once (at most `max_in_flight` at a time, 0 for
  // the number of partitions + 1); outputs per request, in request order. The first failing
  // request's error is returned. `records`, when given, gets one record per request.
  virtual Result<std::vector<std::vector<Tensor>>> run_stream(
      const std::vector<std::vector<Tensor>>& requests, int max_in_flight = 0,
      std::vector<RunRecord>* records = nullptr) = 0;
  // A zeroed tensor for the model's input `k` (its dtype and dims) in the host memory that the
  // devices reading that input copy from fastest: a GPU driver's page-locked memory where a GPU
  // partition reads it (a copy two to three times quicker than from ordinary memory on a
  // discrete GPU), ordinary memory otherwise. Fill it and pass it to run() as often as you like;
  // it stays valid after the executable is gone. Outputs read from a GPU come in such memory too.
  // InvalidArgument for `k` out of range.
  virtual Result<Tensor> allocate_input(size_t k) = 0;
  // The plan that runs: schedule()'s, or the one made again after late rejections, with
  // quarantined partitions on the CPU. A copy taken under the executor's lock: any thread may
  // call it, during a run too (a quarantine while running changes the plan).
  virtual Plan plan() const = 0;
  // Compile figures and the quarantine count; a copy, like plan().
  virtual ExecutableStats stats() const = 0;
  virtual std::vector<Quarantine> quarantines() const = 0;
  // Every partition's steps over the runs since compile or reset_profile() (empty or zeros
  // unless ExecutorOptions::profile). Not to be called while a run is in flight.
  virtual std::vector<StepProfile> profile() const = 0;
  virtual void reset_profile() = 0;
};

// Compiles `plan` (made by schedule() for `model`; the Executable keeps the model's graph alive).
// Errors: InvalidArgument for a plan that puts nodes on a device not present here (planned from
// a profile); a CPU partition's compile error; Internal when re-planning does not converge.
Result<std::unique_ptr<Executable>> compile(const Model& model, const Plan& plan,
                                            const ExecutorOptions& options = {});

}  // namespace hsched
