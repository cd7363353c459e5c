// The flow-graph executor of a compiled plan (scheduler/runtime/plan_executable.h; the contract in
// include/hsched/executor.h): partitions as nodes of a oneTBB flow graph, requests as messages,
// device partitions on a thread per device, CPU partitions on the process's host thread.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <functional>
#include <iomanip>
#include <optional>
#include <set>
#include <sstream>
#include <utility>

#include "scheduler/runtime/plan_executable.h"

namespace hsched::runtime {

const DeviceProfile* host_of(const Target& target) {
  for (const DeviceProfile& device : target.devices) {
    if (device.api == DeviceApi::kHost) return &device;
  }
  return nullptr;
}

// run_stream's requests: each finished request lets the next one in.
struct Stream {
  std::vector<std::unique_ptr<Request>> requests;
  // Taking the next request and submitting it happen under one lock, so that requests enter the
  // flow graph in their order even when several finish at once (each partition then runs them
  // in that order).
  std::mutex submit_mutex;
  size_t next = 0;
};

// One request in flight: its values, and how many predecessors each partition still waits for.
struct Request {
  std::vector<std::optional<Tensor>> values;    // per graph value, while needed
  std::unique_ptr<std::atomic<int>[]> pending;  // per partition: predecessors not finished
  std::unique_ptr<std::atomic<int>[]> readers;  // per value: reading partitions not finished
  std::atomic<int> sinks_left{0};               // partitions nobody reads from, not finished
  // Every hand-over between partitions releases and acquires this, so the order the flow graph
  // guarantees is also visible to ThreadSanitizer (Debian's libtbb is not instrumented).
  std::atomic<int> handoff{0};
  std::atomic<bool> failed{false};
  std::atomic<bool> finished{false};
  std::mutex error_mutex;
  Status error;
  RunRecord record;
  std::vector<Tensor> outputs;
  Stream* stream = nullptr;
  size_t sequence = 0;  // its number among the requests submitted: gated partitions keep order
};

// A partition as a node of the flow graph.
struct PartitionNode {
  CompiledPartition compiled;
  std::string device;  // where it is planned
  bool on_host = true;
  Tolerance tolerance;  // the policy's for its precision (fp16 when every node is)
  int predecessors = 0;
  bool sink = true;
  std::atomic<bool> quarantined{false};
  tbb::flow::sender<Request*>* out = nullptr;
  tbb::flow::receiver<Request*>* in = nullptr;  // the gate when several predecessors
};

namespace {

using HostNode = tbb::flow::function_node<Request*, Request*>;
using DeviceNode = tbb::flow::async_node<Request*, Request*>;
using Gate = tbb::flow::multifunction_node<Request*, std::tuple<Request*>>;
using FinishNode = tbb::flow::function_node<Request*>;

}  // namespace

PlanExecutable::PlanExecutable(const Graph& graph, std::shared_ptr<const Graph> owner, Plan plan,
                               std::vector<CompiledPartition> partitions, ExecutableStats stats,
                               Clock::time_point origin, const ExecutorOptions& options)
    : graph_owner_(std::move(owner)),
      graph_model_(graph),
      plan_(std::move(plan)),
      stats_(std::move(stats)),
      origin_(origin),
      options_(options),
      device_output_hook_(installed_device_output_hook()),
      is_output_(graph.values().size(), 0) {
  for (ValueId id : graph.outputs()) is_output_[static_cast<size_t>(id)] = 1;
  if (const DeviceProfile* cpu = host_of(plan_.target)) {
    cpu_device_ = cpu->id;
    cpu_profile_ = *cpu;
  }
  for (size_t p = 0; p < partitions.size(); ++p) {
    auto node = std::make_unique<PartitionNode>();
    node->compiled = std::move(partitions[p]);
    const Partition& planned = plan_.partitions[p];
    node->device = planned.device;
    const DeviceProfile* device = plan_.target.find(planned.device);
    node->on_host = device == nullptr || device->api == DeviceApi::kHost;
    bool all_fp16 = !planned.nodes.empty();
    for (NodeId id : planned.nodes) all_fp16 &= plan_.nodes[id].precision == Precision::kFp16;
    const auto tolerance =
        plan_.policy.tolerances.find(all_fp16 ? Precision::kFp16 : Precision::kFp32);
    if (tolerance != plan_.policy.tolerances.end()) node->tolerance = tolerance->second;
    partitions_.push_back(std::move(node));
  }
  build_flow_graph();
}

PlanExecutable::~PlanExecutable() {
  graph_.wait_for_all();
  threads_.clear();  // joined before the nodes their jobs used are destroyed
}

double PlanExecutable::now_ms() const { return ms_between(origin_, Clock::now()); }

void PlanExecutable::build_flow_graph() {
  start_ = std::make_unique<tbb::flow::broadcast_node<Request*>>(graph_);
  finish_ = std::make_unique<FinishNode>(graph_, tbb::flow::unlimited, [this](Request* request) {
    request->handoff.load(std::memory_order_acquire);  // before the captures are read
    finish(*request);
  });
  std::vector<int> producer(graph_model_.values().size(), -1);
  for (size_t p = 0; p < partitions_.size(); ++p) {
    for (ValueId id : partitions_[p]->compiled.part.outputs) {
      producer[static_cast<size_t>(id)] = static_cast<int>(p);
    }
  }
  // Nodes: a device partition hands its work to its device's thread. A CPU partition runs on the
  // host thread too (CpuProgram::run), its TBB thread blocked meanwhile.
  for (size_t p = 0; p < partitions_.size(); ++p) {
    PartitionNode& node = *partitions_[p];
    if (node.on_host) {
      auto host = std::make_unique<HostNode>(graph_, tbb::flow::serial, [this, p](Request* r) {
        r->handoff.load(std::memory_order_acquire);  // before the captures are read
        run_partition(p, *r);
        return r;
      });
      node.out = host.get();
      node.in = host.get();
      nodes_.push_back(std::move(host));
      continue;
    }
    auto& thread = threads_[node.device];
    if (!thread) thread = std::make_unique<WorkThread>();
    WorkThread* device_thread = thread.get();
    auto device = std::make_unique<DeviceNode>(
        graph_, tbb::flow::serial,
        [this, p, device_thread](Request* r, DeviceNode::gateway_type& gateway) {
          r->handoff.load(std::memory_order_acquire);
          gateway.reserve_wait();
          device_thread->post([this, p, r, &gateway] {
            run_partition(p, *r);
            gateway.try_put(r);
            gateway.release_wait();
          });
        });
    node.out = &tbb::flow::output_port<0>(*device);  // an async_node's successors go on its port
    node.in = device.get();
    nodes_.push_back(std::move(device));
  }
  // Edges: one per (producer partition, reader partition); a reader of several waits at a gate.
  for (size_t p = 0; p < partitions_.size(); ++p) {
    PartitionNode& node = *partitions_[p];
    std::set<int> from;
    for (ValueId id : node.compiled.part.inputs) {
      const int q = producer[static_cast<size_t>(id)];
      if (q >= 0 && q != static_cast<int>(p)) from.insert(q);
    }
    node.predecessors = static_cast<int>(from.size());
    if (from.size() > 1) {
      auto gate = std::make_unique<Gate>(
          graph_, tbb::flow::unlimited, [p](Request* r, Gate::output_ports_type& ports) {
            r->handoff.load(std::memory_order_acquire);
            const bool last = r->pending[p].fetch_sub(1, std::memory_order_acq_rel) == 1;
            r->handoff.fetch_add(1, std::memory_order_acq_rel);
            if (last) std::get<0>(ports).try_put(r);
          });
      // The gate passes requests on as their last predecessor finishes, in whatever order its
      // tasks run; the sequencer hands them to the partition in submission order.
      auto order = std::make_unique<tbb::flow::sequencer_node<Request*>>(
          graph_, [](Request* r) { return r->sequence; });
      tbb::flow::make_edge(tbb::flow::output_port<0>(*gate), *order);
      tbb::flow::make_edge(*order, *node.in);
      node.in = gate.get();
      nodes_.push_back(std::move(gate));
      nodes_.push_back(std::move(order));
    }
    if (from.empty()) tbb::flow::make_edge(*start_, *node.in);
    for (int q : from) {
      tbb::flow::make_edge(*partitions_[static_cast<size_t>(q)]->out, *node.in);
      partitions_[static_cast<size_t>(q)]->sink = false;
    }
  }
  bool any_sink = false;
  for (const auto& node : partitions_) {
    if (!node->sink) continue;
    tbb::flow::make_edge(*node->out, *finish_);
    any_sink = true;
  }
  if (!any_sink) tbb::flow::make_edge(*start_, *finish_);  // no partitions: outputs are inputs
}

Result<std::unique_ptr<Request>> PlanExecutable::make_request(const std::vector<Tensor>& inputs) {
  const std::vector<ValueId>& graph_inputs = graph_model_.inputs();
  if (inputs.size() != graph_inputs.size()) {
    return invalid_argument("the model takes " + std::to_string(graph_inputs.size()) + " inputs, " +
                            std::to_string(inputs.size()) + " given");
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Value& value = graph_model_.value(graph_inputs[i]);
    if (inputs[i].dtype() != value.dtype || inputs[i].dims() != value.shape.dims) {
      return invalid_argument("input '" + value.name + "' is " +
                              std::string(dtype_name(inputs[i].dtype())) + " " +
                              inputs[i].shape().to_string() + " but the model needs " +
                              std::string(dtype_name(value.dtype)) + " " + value.shape.to_string());
    }
  }
  auto request = std::make_unique<Request>();
  const size_t value_count = graph_model_.values().size();
  request->values.resize(value_count);
  for (size_t i = 0; i < inputs.size(); ++i) {
    request->values[static_cast<size_t>(graph_inputs[i])] = inputs[i];
  }
  request->pending = std::make_unique<std::atomic<int>[]>(partitions_.size());
  request->readers = std::make_unique<std::atomic<int>[]>(value_count);
  for (size_t v = 0; v < value_count; ++v) request->readers[v].store(0, std::memory_order_relaxed);
  int sinks = 0;
  request->record.partitions.resize(partitions_.size());
  for (size_t p = 0; p < partitions_.size(); ++p) {
    const PartitionNode& node = *partitions_[p];
    request->pending[p].store(node.predecessors, std::memory_order_relaxed);
    for (ValueId id : node.compiled.part.inputs) {
      request->readers[static_cast<size_t>(id)].fetch_add(1, std::memory_order_relaxed);
    }
    sinks += node.sink ? 1 : 0;
    request->record.partitions[p].partition = static_cast<int>(p);
  }
  request->sinks_left.store(std::max(sinks, 1), std::memory_order_relaxed);
  const bool staged = std::any_of(partitions_.begin(), partitions_.end(),
                                  [](const auto& node) { return !node->compiled.program; });
  if (staged) {
    request->record.plan = "partial";
    std::lock_guard<std::mutex> lock(plan_mutex_);
    ++stats_.requests_partial;
  }
  return request;
}

void PlanExecutable::submit(Request& request) {
  request.sequence = submitted_.fetch_add(1, std::memory_order_relaxed);
  request.record.start_ms = now_ms();
  request.handoff.fetch_add(1, std::memory_order_acq_rel);
  start_->try_put(&request);
}

Result<std::vector<Tensor>> PlanExecutable::compute_or_catch(size_t p,
                                                             const std::vector<Tensor>& inputs,
                                                             PartitionRun& record) {
  try {
    return compute(p, inputs, record);
  } catch (const std::bad_alloc&) {
    return Status(ErrorCode::kResourceExhausted, "memory_exceeded: out of host memory");
  } catch (const std::exception& error) {
    return internal_error(std::string("executor: ") + error.what());
  }
}

void PlanExecutable::run_partition(size_t p, Request& request) {
  request.handoff.load(std::memory_order_acquire);
  PartitionNode& node = *partitions_[p];
  PartitionRun& record = request.record.partitions[p];
  record.start_ms = now_ms();
  const Subgraph& part = node.compiled.part;
  if (!request.failed.load(std::memory_order_acquire)) {
    std::vector<Tensor> inputs;
    inputs.reserve(part.inputs.size());
    for (ValueId id : part.inputs) {
      const std::optional<Tensor>& value = request.values[static_cast<size_t>(id)];
      if (value) inputs.push_back(*value);
    }
    auto outputs = inputs.size() == part.inputs.size()
                       ? compute_or_catch(p, inputs, record)
                       : Result<std::vector<Tensor>>(
                             internal_error("executor: an input of the partition is not computed"));
    if (outputs.is_ok()) {
      for (size_t k = 0; k < outputs->size(); ++k) {
        request.values[static_cast<size_t>(part.outputs[k])] = std::move((*outputs)[k]);
      }
    } else {
      std::lock_guard<std::mutex> lock(request.error_mutex);
      if (!request.failed.load(std::memory_order_relaxed)) {
        request.error = outputs.status().with_context(
            "partition " + std::to_string(plan_.partitions[p].id) + " on " + record.device);
        request.failed.store(true, std::memory_order_release);
      }
    }
  }
  // Values no later partition reads are released (the run's outputs are kept).
  for (ValueId id : part.inputs) {
    const size_t v = static_cast<size_t>(id);
    if (request.readers[v].fetch_sub(1, std::memory_order_acq_rel) == 1 && !is_output_[v]) {
      request.values[v].reset();
    }
  }
  record.end_ms = now_ms();
  request.handoff.fetch_add(1, std::memory_order_acq_rel);
}

void PlanExecutable::finish(Request& request) {
  request.handoff.load(std::memory_order_acquire);
  if (request.sinks_left.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
  if (!request.failed.load(std::memory_order_acquire)) {
    for (ValueId id : graph_model_.outputs()) {
      const Value& value = graph_model_.value(id);
      std::optional<Tensor>& computed = request.values[static_cast<size_t>(id)];
      if (value.is_constant()) {
        request.outputs.push_back(value.constant->clone());
      } else if (computed) {
        request.outputs.push_back(std::move(*computed));
      } else {
        request.error = internal_error("executor: output '" + value.name + "' was not computed");
        request.failed.store(true, std::memory_order_release);
        break;
      }
    }
  }
  request.values.clear();
  request.record.end_ms = now_ms();
  if (Stream* stream = request.stream) {
    std::lock_guard<std::mutex> lock(stream->submit_mutex);
    if (stream->next < stream->requests.size()) submit(*stream->requests[stream->next++]);
  }
  // Last: run()/run_stream() may free the request and the stream once they see this.
  request.finished.store(true, std::memory_order_release);
}

// Partition p's outputs for `inputs`: from its device, verified when asked; from the CPU once
// quarantined, or when the device fails now (which quarantines it).
Result<std::vector<Tensor>> PlanExecutable::compute(size_t p, const std::vector<Tensor>& inputs,
                                                    PartitionRun& record) {
  PartitionNode& node = *partitions_[p];
  record.device = node.device;
  if (node.on_host) {
    std::lock_guard<std::mutex> turn(host_turn_);
    record.start_ms = now_ms();
    return node.compiled.program->run(inputs, nullptr);
  }
  // A staged partition's program is set before the request is submitted (install()).
  if (!node.compiled.program || node.quarantined.load(std::memory_order_acquire)) {
    record.device = cpu_device_;
    HSCHED_ASSIGN_OR_RETURN(Program * fallback, cpu_fallback(node));
    return fallback->run(inputs, nullptr);
  }
  CopyRecord io;
  io.timed = options_.time_transfers || options_.profile;
  auto outputs = node.compiled.program->run(inputs, &io);
  if (outputs.is_ok() && device_output_hook_) {
    const Status planted = device_output_hook_(static_cast<int>(p), *outputs);
    if (!planted.is_ok()) outputs = planted;
  }
  record.upload_bytes = io.upload_bytes;
  record.zero_copy_bytes = io.zero_copy_bytes;
  record.upload_ms = io.upload_ms;
  record.download_bytes = io.download_bytes;
  record.download_ms = io.download_ms;
  if (!outputs.is_ok()) {
    if (outputs.status().code() == ErrorCode::kInvalidArgument) return outputs;
    // The device failed: this request and every later one run the partition on the CPU.
    HSCHED_ASSIGN_OR_RETURN(Program * fallback, cpu_fallback(node));
    const Status& error = outputs.status();
    quarantine(p, {static_cast<int>(p), node.device,
                   error.code() == ErrorCode::kResourceExhausted ? ReasonCode::kMemoryExceeded
                                                                 : ReasonCode::kDeviceLost,
                   0, 0, error.message()});
    record.device = cpu_device_;
    return fallback->run(inputs, nullptr);
  }
  if (!node.compiled.verify) return outputs;
  const auto verify_start = Clock::now();
  auto want = node.compiled.reference->run(inputs, nullptr);
  record.verified = true;
  record.verify_ms = ms_between(verify_start, Clock::now());
  if (!want.is_ok()) return want.status().with_context("the CPU reference");
  const Deviation deviation =
      compare_outputs(node.compiled.part.graph, *outputs, *want, node.tolerance);
  if (deviation.within) return outputs;
  std::ostringstream detail;
  detail << std::setprecision(4) << "outputs differ from the CPU fp32 reference beyond atol "
         << node.tolerance.atol << " + rtol " << node.tolerance.rtol << ": max abs error "
         << deviation.max_abs << ", mean abs error " << deviation.mean_abs << " ("
         << deviation.detail << ")";
  quarantine(p, {static_cast<int>(p), node.device, ReasonCode::kVerificationFailed,
                 deviation.max_abs, deviation.mean_abs, detail.str()});
  record.device = cpu_device_;
  return want;
}

// The CPU program of a device partition (its verification reference or staged program, or
// compiled now). Called on the partition's device thread, or on run()'s for a plan of one
// partition (under the run lock), like every other use of node.compiled.reference.
Result<Program*> PlanExecutable::cpu_fallback(PartitionNode& node) {
  if (!node.compiled.reference) {
    HSCHED_ASSIGN_OR_RETURN(node.compiled.reference,
                            compile_cpu_program(node.compiled.part.graph, cpu_profile_, options_));
  }
  return node.compiled.reference.get();
}

// The partition's outputs come from the CPU from now on; the plan says so (a rejection and a
// fallback per node, final: the flag is never cleared).
void PlanExecutable::quarantine(size_t p, Quarantine quarantine) {
  PartitionNode& node = *partitions_[p];
  std::lock_guard<std::mutex> lock(plan_mutex_);
  if (node.quarantined.exchange(true, std::memory_order_acq_rel)) return;
  Partition& partition = plan_.partitions[p];
  for (NodeId id : partition.nodes) {
    NodePlacement& placement = plan_.nodes[id];
    plan_.rejections.push_back(
        {id, partition.device, placement.precision, quarantine.reason, quarantine.detail});
    std::erase_if(plan_.fallbacks, [id](const Fallback& fallback) { return fallback.node == id; });
    plan_.fallbacks.push_back({id, Choice{partition.device, placement.precision}, cpu_device_,
                               Precision::kFp32, quarantine.reason, quarantine.detail});
    placement.device = cpu_device_;
    placement.precision = Precision::kFp32;
    placement.reason = PlacementReason::kFallback;
    placement.detail = std::string(reason_code_name(quarantine.reason)) + " on " + partition.device;
  }
  partition.device = cpu_device_;
  quarantines_.push_back(std::move(quarantine));
  ++stats_.quarantined;
}

// From the first device program that reads the input and offers memory (Program::host_memory).
Result<Tensor> PlanExecutable::allocate_input(size_t k) {
  const std::vector<ValueId>& graph_inputs = graph_model_.inputs();
  if (k >= graph_inputs.size()) {
    return invalid_argument("no input " + std::to_string(k) + ": the model takes " +
                            std::to_string(graph_inputs.size()));
  }
  const ValueId id = graph_inputs[k];
  const Value& value = graph_model_.value(id);
  const size_t bytes = static_cast<size_t>(value.shape.elements()) * dtype_size(value.dtype);
  if (bytes == 0) return Tensor(value.dtype, value.shape.dims);
  std::lock_guard<std::mutex> between_requests(run_mutex_);  // install() changes programs
  for (const auto& node : partitions_) {
    const std::vector<ValueId>& reads = node->compiled.part.inputs;
    if (node->on_host || !node->compiled.program ||
        std::find(reads.begin(), reads.end(), id) == reads.end()) {
      continue;
    }
    if (std::shared_ptr<std::byte> data = node->compiled.program->host_memory(bytes)) {
      std::memset(data.get(), 0, bytes);
      return Tensor(value.dtype, value.shape.dims, std::move(data));
    }
  }
  return Tensor(value.dtype, value.shape.dims);
}

Result<std::vector<Tensor>> PlanExecutable::run(const std::vector<Tensor>& inputs,
                                                RunRecord* record) {
  std::lock_guard<std::mutex> lock(run_mutex_);
  HSCHED_ASSIGN_OR_RETURN(std::unique_ptr<Request> request, make_request(inputs));
  if (partitions_.size() == 1) {
    // One partition overlaps with nothing: it runs on this thread, without the hand-offs to the
    // flow graph and the device's thread and back (tens of microseconds a request on a GPU
    // host). The run lock keeps it apart from the flow graph's use of the same program.
    request->record.start_ms = now_ms();
    run_partition(0, *request);
    finish(*request);
  } else {
    submit(*request);
    graph_.wait_for_all();
  }
  if (!request->finished.load(std::memory_order_acquire)) {
    return internal_error("executor: the flow graph stopped before the request finished");
  }
  if (record != nullptr) *record = request->record;
  if (request->failed.load(std::memory_order_acquire)) return request->error;
  return std::move(request->outputs);
}

Result<std::vector<std::vector<Tensor>>> PlanExecutable::run_stream(
    const std::vector<std::vector<Tensor>>& requests, int max_in_flight,
    std::vector<RunRecord>* records) {
  std::lock_guard<std::mutex> lock(run_mutex_);
  Stream stream;
  for (const std::vector<Tensor>& inputs : requests) {
    auto request = make_request(inputs);
    if (!request.is_ok()) {
      return request.status().with_context("request " + std::to_string(stream.requests.size()));
    }
    (*request)->stream = &stream;
    stream.requests.push_back(std::move(request).value());
  }
  const size_t in_flight =
      max_in_flight > 0 ? static_cast<size_t>(max_in_flight) : partitions_.size() + 1;
  {
    std::lock_guard<std::mutex> submitting(stream.submit_mutex);
    for (; stream.next < std::min(in_flight, stream.requests.size()); ++stream.next) {
      submit(*stream.requests[stream.next]);
    }
  }
  graph_.wait_for_all();
  std::vector<std::vector<Tensor>> outputs;
  if (records != nullptr) records->clear();
  for (size_t i = 0; i < stream.requests.size(); ++i) {
    Request& request = *stream.requests[i];
    if (!request.finished.load(std::memory_order_acquire)) {
      return internal_error("executor: the flow graph stopped before request " + std::to_string(i) +
                            " finished");
    }
    if (request.failed.load(std::memory_order_acquire)) {
      return request.error.with_context("request " + std::to_string(i));
    }
    if (records != nullptr) records->push_back(request.record);
    outputs.push_back(std::move(request.outputs));
  }
  return outputs;
}

std::vector<StepProfile> PlanExecutable::profile() const {
  std::vector<StepProfile> steps;
  for (const auto& node : partitions_) {
    if (node->compiled.program) node->compiled.program->append_profile(steps);
  }
  return steps;
}

void PlanExecutable::reset_profile() {
  for (const auto& node : partitions_) {
    if (node->compiled.program) node->compiled.program->reset_profile();
  }
}

std::vector<size_t> PlanExecutable::staged() const {
  std::vector<size_t> staged;
  for (size_t p = 0; p < partitions_.size(); ++p) {
    if (!partitions_[p]->compiled.program) staged.push_back(p);
  }
  return staged;
}

const Graph& PlanExecutable::partition_graph(size_t p) const {
  return partitions_[p]->compiled.part.graph;
}

void PlanExecutable::install(size_t p, std::shared_ptr<Program> program,
                             const CompileRecord& record, const CacheCounts& counts) {
  {
    std::lock_guard<std::mutex> between_requests(run_mutex_);
    PartitionNode& node = *partitions_[p];
    node.compiled.program = std::move(program);
    // Its CPU program's weights need not stay beside the device's: without verification it is
    // compiled again only if the partition is ever quarantined (cpu_fallback).
    if (!node.compiled.verify) node.compiled.reference.reset();
  }
  std::lock_guard<std::mutex> lock(plan_mutex_);
  stats_.compiles.push_back(record);
  stats_.programs_built = counts.built;
  stats_.programs_loaded = counts.loaded;
}

}  // namespace hsched::runtime
