#include "backends/opencl/program.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <optional>
#include <set>

#include "backends/opencl/kernels/ops_integer.h"
#include "backends/opencl/kernels/ops_scratch.h"
#include "backends/opencl/kernels/ops_util.h"
#include "backends/opencl/step_plan.h"

namespace hsched::opencl {
namespace {

using detail::check_cl;

// Bools are held on the device as 1 and 0, 8-bit quantized data as its integer values.
Tensor as_floats(const Tensor& t) {
  Tensor floats(DType::kF32, t.dims());
  auto out = floats.values<float>();
  if (t.dtype() == DType::kI8) {
    std::copy(t.values<int8_t>().begin(), t.values<int8_t>().end(), out.begin());
  } else if (t.dtype() == DType::kU8) {
    std::copy(t.values<uint8_t>().begin(), t.values<uint8_t>().end(), out.begin());
  } else {  // bool
    std::transform(t.values<uint8_t>().begin(), t.values<uint8_t>().end(), out.begin(),
                   [](uint8_t b) { return b != 0 ? 1.0f : 0.0f; });
  }
  return floats;
}

// The device's floats as `dtype` (bool, u8 or i8; the 8-bit values are integers in range).
Tensor floats_as(const Tensor& floats, DType dtype) {
  Tensor t(dtype, floats.dims());
  const auto in = floats.values<float>();
  if (dtype == DType::kI8) {
    std::transform(in.begin(), in.end(), t.values<int8_t>().begin(),
                   [](float f) { return static_cast<int8_t>(f); });
  } else if (dtype == DType::kU8) {
    std::transform(in.begin(), in.end(), t.values<uint8_t>().begin(),
                   [](float f) { return static_cast<uint8_t>(f); });
  } else {
    std::transform(in.begin(), in.end(), t.values<uint8_t>().begin(),
                   [](float f) { return f != 0.0f ? 1 : 0; });
  }
  return t;
}

Result<cl::Buffer> device_buffer(const cl::Context& context, int64_t bytes, const Value& value) {
  cl_int error = CL_SUCCESS;
  cl::Buffer buffer(context, CL_MEM_READ_WRITE, static_cast<size_t>(std::max<int64_t>(bytes, 1)),
                    nullptr, &error);
  HSCHED_RETURN_IF_ERROR(check_cl(
      error, "buffer of " + std::to_string(bytes) + " bytes for value '" + value.name + "'"));
  return buffer;
}

Status enqueue_marker(cl::CommandQueue& queue, cl::Event& event) {
  return check_cl(queue.enqueueMarkerWithWaitList(nullptr, &event), "marker while profiling");
}

// From the first event's start to the last one's end, of finished commands on a profiling queue.
Result<double> events_span_ms(const std::vector<cl::Event>& events) {
  if (events.empty()) return 0.0;
  cl_ulong start = 0, end = 0;
  HSCHED_RETURN_IF_ERROR(check_cl(
      events.front().getProfilingInfo(CL_PROFILING_COMMAND_START, &start), "profiling info"));
  HSCHED_RETURN_IF_ERROR(
      check_cl(events.back().getProfilingInfo(CL_PROFILING_COMMAND_END, &end), "profiling info"));
  return end > start ? static_cast<double>(end - start) * 1e-6 : 0.0;
}

}  // namespace

ClProgram::ClProgram(const Graph& graph, std::shared_ptr<DeviceRuntime> device,
                     const OpKernels* ops)
    : graph_(graph), device_(std::move(device)), ops_(ops) {}

Result<std::unique_ptr<ClProgram>> ClProgram::compile(const Graph& graph,
                                                      std::shared_ptr<DeviceRuntime> device,
                                                      Storage storage, int64_t deadline_ms,
                                                      bool profile) {
  for (NodeId id = 0; id < static_cast<NodeId>(graph.nodes().size()); ++id) {
    const Node& node = graph.node(id);
    if (const auto unsupported = check_node(graph, node)) {
      return invalid_argument("node '" + node_label(graph, id) + "' (" + node.op_type +
                              "): " + unsupported->detail);
    }
  }
  HSCHED_ASSIGN_OR_RETURN(const OpKernels* ops, device->kernels(storage, deadline_ms));
  std::unique_ptr<ClProgram> program(new ClProgram(graph, std::move(device), ops));
  cl_int error = CL_SUCCESS;
  program->queue_ = cl::CommandQueue(program->device_->context(), program->device_->info().device,
                                     profile ? CL_QUEUE_PROFILING_ENABLE : 0, &error);
  HSCHED_RETURN_IF_ERROR(check_cl(error, "clCreateCommandQueue"));
  HSCHED_RETURN_IF_ERROR(program->plan_steps());
  program->profile_ = profile;
  program->reset_profile();
  HSCHED_RETURN_IF_ERROR(program->allocate());
  HSCHED_RETURN_IF_ERROR(program->allocate_error_flag());
  HSCHED_RETURN_IF_ERROR(program->upload_constants());
  HSCHED_RETURN_IF_ERROR(program->run_constant_steps());
  // Where a graph input's buffer is bound anew per run, its readers' kernels would keep the one
  // bound when they were recorded. Elsewhere inputs are written into their own buffers, which
  // their readers' recordings keep.
  if (program->rebinds_inputs()) {
    for (Step& step : program->steps_) {
      if (program->reads_graph_input(step)) step.replay = Replay::kNever;
    }
  }
  return program;
}

Status ClProgram::plan_steps() {
  HSCHED_ASSIGN_OR_RETURN(std::vector<detail::PlannedStep> planned, detail::plan_kernels(graph_));
  for (detail::PlannedStep& step : planned) {
    if (step.view) {
      ++stats_.aliased_views;
    } else if (step.once) {
      ++stats_.constant_steps;
    } else {
      ++stats_.kernels;
    }
    stats_.fused_epilogues += static_cast<int>(step.absorbed.size());
    steps_.push_back(
        Step{.node = step.node, .op = std::move(step.op), .view = step.view, .once = step.once});
    // Kernels that read a host input given per run are set up anew each run.
    for (size_t i = 0; i < steps_.back().op.inputs.size(); ++i) {
      if (host_input_per_run(graph_, steps_.back().op, i)) steps_.back().replay = Replay::kNever;
    }
  }
  return Status::ok();
}

Status ClProgram::allocate() {
  buffers_.assign(graph_.values().size(), nullptr);
  // Values some kernel reads from a buffer: not those only read on the host.
  std::vector<bool> read_by_kernels(graph_.values().size(), false);
  for (ValueId id : graph_.outputs()) read_by_kernels[static_cast<size_t>(id)] = true;
  for (const Step& step : steps_) {
    for (size_t i = 0; i < step.op.inputs.size(); ++i) {
      const ValueId in = step.op.inputs[i];
      if (in != kNoValue && !host_input_per_run(graph_, step.op, i)) {
        read_by_kernels[static_cast<size_t>(in)] = true;
      }
    }
  }
  auto ensure = [&](ValueId id) -> Status {
    const Value& value = graph_.value(id);
    const bool held = held_on_device(value.dtype) || held_as_is(value.dtype);
    const bool needed = value.producer != kNoNode || read_by_kernels[static_cast<size_t>(id)];
    if (buffers_[static_cast<size_t>(id)] || !held || !needed) return Status::ok();
    const int64_t bytes =
        value.shape.elements() * static_cast<int64_t>(held_bytes(ops_->storage(), value.dtype));
    HSCHED_ASSIGN_OR_RETURN(cl::Buffer buffer, device_buffer(device_->context(), bytes, value));
    buffers_[static_cast<size_t>(id)] = std::make_shared<cl::Buffer>(std::move(buffer));
    (value.is_constant() ? stats_.constant_bytes : stats_.activation_bytes) += bytes;
    return Status::ok();
  };
  for (ValueId id : graph_.inputs()) HSCHED_RETURN_IF_ERROR(ensure(id));
  for (const Step& step : steps_) {
    const Node& node = step.op;
    for (ValueId in : node.inputs) {
      if (in != kNoValue) HSCHED_RETURN_IF_ERROR(ensure(in));
    }
    if (step.view) {  // the output is the data input's bytes
      buffers_[static_cast<size_t>(node.outputs[0])] =
          buffers_[static_cast<size_t>(node.inputs[0])];
      continue;
    }
    for (ValueId out : node.outputs) {
      if (out != kNoValue) HSCHED_RETURN_IF_ERROR(ensure(out));
    }
  }
  return Status::ok();
}

// Kernels that find what the host could not check before the run (an integer division by zero,
// an index out of range) set bits of one device int (ops.h: RunError), cleared before each run
// and read after it: where the program has such nodes.
Status ClProgram::allocate_error_flag() {
  for (const Step& step : steps_) {
    const cl_int bits = run_errors_of(graph_, step.op);
    for (size_t bit = 0; bit < checking_.size(); ++bit) {
      if ((bits & (1 << bit)) == 0) continue;
      checking_[bit] +=
          (checking_[bit].empty() ? "'" : ", '") + node_label(graph_, step.node) + "'";
    }
  }
  if (std::all_of(checking_.begin(), checking_.end(), [](const auto& s) { return s.empty(); })) {
    return Status::ok();
  }
  cl_int error = CL_SUCCESS;
  error_flag_ = cl::Buffer(device_->context(), CL_MEM_READ_WRITE, sizeof(cl_int), nullptr, &error);
  return check_cl(error, "buffer of the run's error flag");
}

// The error flag after a run: a blocking read, so every command of the run has finished. A flag
// found set is cleared for the next run (a run that finds none leaves it clear).
Status ClProgram::check_error_flag() {
  if (!error_flag_) return check_cl(queue_.finish(), "finish of the run");
  cl_int flag = 0;
  HSCHED_RETURN_IF_ERROR(
      check_cl(queue_.enqueueReadBuffer(*error_flag_, CL_TRUE, 0, sizeof(flag), &flag),
               "read of the run's error flag"));
  if (flag != 0) HSCHED_RETURN_IF_ERROR(clear_error_flag());
  if (flag & kDivisionByZero) {
    return invalid_argument("integer division by zero (node " + checking_[0] + ")");
  }
  if (flag & kIndexOutOfRange) {
    return invalid_argument("an index out of range (node " + checking_[1] + ")");
  }
  return Status::ok();
}

Status ClProgram::clear_error_flag() {
  if (!error_flag_) return Status::ok();
  return check_cl(queue_.enqueueFillBuffer(*error_flag_, cl_int{0}, 0, sizeof(cl_int)),
                  "clear of the error flag");
}

// Host inputs made by an earlier step of this program are read back for `step`'s host code: a
// blocking read, so every command before it has finished.
Status ClProgram::read_back_host_inputs(const Step& step) {
  for (size_t i = 0; i < step.op.inputs.size(); ++i) {
    const ValueId in = step.op.inputs[i];
    if (!host_input_per_run(graph_, step.op, i) || graph_.value(in).producer == kNoNode) continue;
    const size_t v = static_cast<size_t>(in);
    if (run_inputs_[v] != nullptr) continue;  // read already in this run
    HSCHED_ASSIGN_OR_RETURN(Tensor values, read_output(in));
    read_back_[v] = std::move(values);
    run_inputs_[v] = &*read_back_[v];
  }
  return Status::ok();
}

Status ClProgram::upload_constants() {
  for (ValueId id = 0; id < static_cast<ValueId>(graph_.values().size()); ++id) {
    const Value& value = graph_.value(id);
    if (value.is_constant() && buffers_[static_cast<size_t>(id)]) {
      HSCHED_RETURN_IF_ERROR(write_input(*value.constant, id));
    }
  }
  return check_cl(queue_.finish(), "upload of constants");
}

// The steps that read only constants, once: their outputs' buffers keep the values (no value
// shares another's buffer but views of it), which every run reads. A bad index or division
// they find is an error of the compile.
Status ClProgram::run_constant_steps() {
  run_inputs_.assign(graph_.values().size(), nullptr);
  read_back_.assign(graph_.values().size(), std::nullopt);
  HSCHED_RETURN_IF_ERROR(clear_error_flag());  // a new buffer's bytes are undefined
  Status status = Status::ok();
  for (const Step& step : steps_) {
    if (!step.once || step.view) continue;
    status = read_back_host_inputs(step);
    if (status.is_ok()) {
      status = enqueue_node(*ops_, queue_, step.op, operands_for(step.op), {}).status();
    }
    if (!status.is_ok()) {
      status = status.with_context("node '" + node_label(graph_, step.node) + "' (" +
                                   step.op.op_type + ")");
      break;
    }
  }
  if (status.is_ok()) status = check_cl(queue_.finish(), "finish of the constant steps");
  if (status.is_ok()) status = check_error_flag();
  run_inputs_.clear();
  read_back_.clear();
  return status;
}

// Enqueues host -> device of `input` into value `id`'s buffer. With fp16 storage the fp32 bytes
// go to the queue's staging buffer (ops_scratch.h) that a kernel converts; the in-order queue
// runs the next use of that buffer only after the conversion. A bool or 8-bit tensor is converted
// to floats first and written with a blocking write: the converted copy dies with this call.
Status ClProgram::write_input(const Tensor& input, ValueId id) {
  const cl::Buffer& buffer = *buffers_[static_cast<size_t>(id)];
  const int64_t count = input.elements();
  if (count == 0) return Status::ok();
  if (held_as_is(input.dtype())) {  // held as they are
    return check_cl(queue_.enqueueWriteBuffer(buffer, CL_FALSE, 0, input.byte_size(), input.raw()),
                    "write of '" + graph_.value(id).name + "'");
  }
  const bool converted = input.dtype() != DType::kF32;
  const Tensor floats = converted ? as_floats(input) : input;
  const cl_bool blocking = converted ? CL_TRUE : CL_FALSE;
  if (ops_->storage() == Storage::kFloat32) {
    return check_cl(
        queue_.enqueueWriteBuffer(buffer, blocking, 0, floats.byte_size(), floats.raw()),
        "write of '" + graph_.value(id).name + "'");
  }
  HSCHED_ASSIGN_OR_RETURN(cl::Buffer staging,
                          detail::scratch_buffer(*ops_, queue_, detail::ScratchSlot::kStaging,
                                                 static_cast<size_t>(count) * sizeof(float)));
  HSCHED_RETURN_IF_ERROR(
      check_cl(queue_.enqueueWriteBuffer(staging, blocking, 0, floats.byte_size(), floats.raw()),
               "write of '" + graph_.value(id).name + "'"));
  return detail::enqueue_convert(*ops_, queue_, staging, buffer, count, true).status();
}

// Input `id` for one run. On a device that shares host memory (PoCL, integrated GPUs) the
// kernels read the caller's tensor in place (CL_MEM_USE_HOST_PTR): fp32 storage binds it as the
// value's buffer (every view shares that cl::Buffer object, so they see it too; `borrowed` keeps
// the device buffer to put back), fp16 storage converts from it. Returns whether it was zero-copy.
Result<bool> ClProgram::bind_input(const Tensor& input, ValueId id,
                                   std::vector<std::pair<size_t, cl::Buffer>>& borrowed) {
  const size_t v = static_cast<size_t>(id);
  if (!buffers_[v]) return false;  // read on the host only (operands_for)
  if (!device_->info().host_unified_memory || input.elements() == 0 || !buffers_[v] ||
      input.dtype() != DType::kF32) {
    HSCHED_RETURN_IF_ERROR(write_input(input, id));
    return false;
  }
  cl_int error = CL_SUCCESS;
  cl::Buffer host(device_->context(), CL_MEM_READ_ONLY | CL_MEM_USE_HOST_PTR, input.byte_size(),
                  const_cast<std::byte*>(input.raw()), &error);  // read only: never written
  HSCHED_RETURN_IF_ERROR(check_cl(error, "binding of input '" + graph_.value(id).name + "'"));
  if (!rebinds_inputs()) {  // fp16 storage: converted into the value's own buffer
    HSCHED_RETURN_IF_ERROR(
        detail::enqueue_convert(*ops_, queue_, host, *buffers_[v], input.elements(), true)
            .status());
    return true;
  }
  borrowed.emplace_back(v, std::move(*buffers_[v]));
  *buffers_[v] = std::move(host);
  return true;
}

// A tensor for a read from the device: in the device's page-locked memory where the pool has
// room, which the driver copies into directly.
Tensor ClProgram::host_tensor(DType dtype, const std::vector<int64_t>& dims) const {
  const size_t bytes = static_cast<size_t>(hsched::Shape(dims).elements()) * dtype_size(dtype);
  if (bytes > 0) {
    if (std::shared_ptr<std::byte> data = device_->pinned().acquire(bytes)) {
      return Tensor(dtype, dims, std::move(data));
    }
  }
  return Tensor::uninitialized(dtype, dims);
}

// Device -> host of value `id`: a bool or 8-bit value is read as the floats it is held in.
Result<Tensor> ClProgram::enqueue_read(ValueId id, bool blocking) {
  const Value& value = graph_.value(id);
  const cl_bool wait = blocking ? CL_TRUE : CL_FALSE;
  if (held_as_is(value.dtype)) {  // held as they are
    Tensor integers = host_tensor(value.dtype, value.shape.dims);
    if (integers.elements() == 0) return integers;
    HSCHED_RETURN_IF_ERROR(
        check_cl(queue_.enqueueReadBuffer(*buffers_[static_cast<size_t>(id)], wait, 0,
                                          integers.byte_size(), integers.raw()),
                 "read of '" + value.name + "'"));
    return integers;
  }
  Tensor output = host_tensor(DType::kF32, value.shape.dims);
  const int64_t count = output.elements();
  if (count == 0) return Tensor(value.dtype, value.shape.dims);
  const cl::Buffer* source = buffers_[static_cast<size_t>(id)].get();
  cl::Buffer staging;
  if (ops_->storage() != Storage::kFloat32) {
    // One staging buffer for every read: the in-order queue finishes a read before the next
    // conversion overwrites it.
    HSCHED_ASSIGN_OR_RETURN(staging,
                            detail::scratch_buffer(*ops_, queue_, detail::ScratchSlot::kStaging,
                                                   static_cast<size_t>(count) * sizeof(float)));
    HSCHED_RETURN_IF_ERROR(
        detail::enqueue_convert(*ops_, queue_, *source, staging, count, false).status());
    source = &staging;
  }
  HSCHED_RETURN_IF_ERROR(
      check_cl(queue_.enqueueReadBuffer(*source, wait, 0, output.byte_size(), output.raw()),
               "read of '" + value.name + "'"));
  return output;
}

Tensor ClProgram::as_value(ValueId id, Tensor read) const {
  const DType dtype = graph_.value(id).dtype;
  return read.dtype() == dtype ? read : floats_as(read, dtype);
}

// Device -> host of value `id` with a blocking read: every command before it has finished.
Result<Tensor> ClProgram::read_output(ValueId id) {
  HSCHED_ASSIGN_OR_RETURN(Tensor read, enqueue_read(id, true));
  return as_value(id, std::move(read));
}

std::vector<ClStepTime> ClProgram::profile() const {
  if (!profile_) return {};
  std::vector<ClStepTime> steps = step_totals_;
  const double runs = static_cast<double>(std::max<int64_t>(profiled_runs_, 1));
  for (ClStepTime& step : steps) {
    step.enqueue_ms /= runs;
    step.total_ms /= runs;
    step.device_ms /= runs;
  }
  return steps;
}

void ClProgram::reset_profile() {
  step_totals_.clear();
  for (const Step& step : steps_) {
    if (!step.view && !step.once) step_totals_.push_back({step.node, 0, 0});
  }
  profiled_runs_ = 0;
}

NodeOperands ClProgram::operands_for(const Node& node) {
  NodeOperands operands;
  operands.opset = graph_.opset;  // Softmax before opset 13 coerces to 2-D
  if (error_flag_) operands.error_flag = &*error_flag_;
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    const ValueId in = node.inputs[i];
    Operand operand;
    if (in != kNoValue) {
      const Value& value = graph_.value(in);
      operand.buffer = buffers_[static_cast<size_t>(in)].get();
      operand.shape = value.shape.dims;
      operand.dtype = value.dtype;
      if (value.is_constant()) {
        operand.constant = &*value.constant;
      } else if (host_input_per_run(graph_, node, i)) {
        operand.constant = run_inputs_[static_cast<size_t>(in)];
      }
    }
    operands.inputs.push_back(std::move(operand));
  }
  for (ValueId out : node.outputs) {
    operands.outputs.push_back(out == kNoValue ? nullptr
                                               : buffers_[static_cast<size_t>(out)].get());
    operands.output_shapes.push_back(out == kNoValue ? Shape{} : graph_.value(out).shape.dims);
  }
  return operands;
}

bool ClProgram::rebinds_inputs() const {
  return device_->info().host_unified_memory && ops_->storage() == Storage::kFloat32;
}

bool ClProgram::reads_graph_input(const Step& step) const {
  for (ValueId input : graph_.inputs()) {
    const cl::Buffer* bound = buffers_[static_cast<size_t>(input)].get();
    for (ValueId in : step.op.inputs) {
      if (in != kNoValue && bound != nullptr && buffers_[static_cast<size_t>(in)].get() == bound) {
        return true;
      }
    }
  }
  return false;
}

Status ClProgram::enqueue_step(Step& step, std::vector<cl::Event>* events) {
  if (step.replay == Replay::kReady) {
    for (const detail::RecordedLaunch& launch : step.launches) {
      cl::Event* event = events != nullptr ? &events->emplace_back() : nullptr;
      HSCHED_RETURN_IF_ERROR(
          check_cl(queue_.enqueueNDRangeKernel(launch.kernel, cl::NullRange, launch.global,
                                               launch.local, nullptr, event),
                   "replay of a kernel"));
    }
    return Status::ok();
  }
  const bool record = step.replay == Replay::kRecordNext && runs_ > 0;
  detail::Recording recording;
  std::optional<detail::RecordScope> scope;
  if (record) scope.emplace(recording);
  // Not replayed: markers around the op layer's commands bound their time on the device.
  if (events != nullptr) HSCHED_RETURN_IF_ERROR(enqueue_marker(queue_, events->emplace_back()));
  HSCHED_RETURN_IF_ERROR(enqueue_node(*ops_, queue_, step.op, operands_for(step.op), {}).status());
  if (events != nullptr) HSCHED_RETURN_IF_ERROR(enqueue_marker(queue_, events->emplace_back()));
  if (record) {
    step.replay = recording.replayable ? Replay::kReady : Replay::kNever;
    if (recording.replayable) step.launches = std::move(recording.launches);
  }
  return Status::ok();
}

int ClProgram::replayed_steps() const {
  return static_cast<int>(std::count_if(steps_.begin(), steps_.end(), [](const Step& step) {
    return step.replay == Replay::kReady;
  }));
}

int ClProgram::replayed_launches() const {
  size_t launches = 0;
  for (const Step& step : steps_) {
    if (step.replay == Replay::kReady) launches += step.launches.size();
  }
  return static_cast<int>(launches);
}

Result<std::vector<Tensor>> ClProgram::run(const std::vector<Tensor>& inputs, CopyRecord* copies) {
  std::lock_guard<std::mutex> lock(run_mutex_);
  const std::vector<ValueId>& graph_inputs = graph_.inputs();
  if (inputs.size() != graph_inputs.size()) {
    return invalid_argument("the partition takes " + std::to_string(graph_inputs.size()) +
                            " inputs, " + std::to_string(inputs.size()) + " given");
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Value& value = graph_.value(graph_inputs[i]);
    if (inputs[i].dtype() != value.dtype || inputs[i].dims() != value.shape.dims) {
      return invalid_argument("input '" + value.name + "' is " +
                              std::string(dtype_name(inputs[i].dtype())) + " " +
                              inputs[i].shape().to_string() + " but the partition needs " +
                              std::string(dtype_name(value.dtype)) + " " + value.shape.to_string());
    }
  }
  run_inputs_.assign(graph_.values().size(), nullptr);
  read_back_.assign(graph_.values().size(), std::nullopt);
  for (size_t i = 0; i < inputs.size(); ++i) {
    run_inputs_[static_cast<size_t>(graph_inputs[i])] = &inputs[i];
  }
  // Inputs bound in place on a device that shares host memory, with the buffer to put back.
  std::vector<std::pair<size_t, cl::Buffer>> borrowed;
  using Clock = std::chrono::steady_clock;
  const auto ms_since = [](Clock::time_point start) {
    return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
  };
  Result<std::vector<Tensor>> result = [&]() -> Result<std::vector<Tensor>> {
    const auto upload_start = Clock::now();
    int64_t copied = 0, shared = 0;
    for (size_t i = 0; i < inputs.size(); ++i) {
      HSCHED_ASSIGN_OR_RETURN(const bool zero_copy,
                              bind_input(inputs[i], graph_inputs[i], borrowed));
      (zero_copy ? shared : copied) += static_cast<int64_t>(inputs[i].byte_size());
    }
    const bool timed = copies != nullptr && copies->timed;
    if (timed) {
      HSCHED_RETURN_IF_ERROR(check_cl(queue_.finish(), "finish after the writes"));
      copies->upload_ms = ms_since(upload_start);
    }
    if (copies != nullptr) {
      copies->upload_bytes = copied;
      copies->zero_copy_bytes = shared;
    }
    if (profile_) HSCHED_RETURN_IF_ERROR(check_cl(queue_.finish(), "finish before profiling"));
    size_t kernel = 0;  // index of the step among those that enqueue work
    for (Step& step : steps_) {
      if (step.view || step.once) continue;
      HSCHED_RETURN_IF_ERROR(read_back_host_inputs(step));
      const auto start = Clock::now();
      std::vector<cl::Event> events;
      const Status enqueued = enqueue_step(step, profile_ ? &events : nullptr);
      if (!enqueued.is_ok()) {
        return enqueued.with_context("node '" + node_label(graph_, step.node) + "' (" +
                                     step.op.op_type + ")");
      }
      if (!profile_) continue;
      const auto enqueued_at = Clock::now();
      HSCHED_RETURN_IF_ERROR(check_cl(queue_.finish(), "finish while profiling"));
      ClStepTime& total = step_totals_[kernel++];
      total.enqueue_ms += std::chrono::duration<double, std::milli>(enqueued_at - start).count();
      total.total_ms += std::chrono::duration<double, std::milli>(Clock::now() - start).count();
      HSCHED_ASSIGN_OR_RETURN(const double device_ms, events_span_ms(events));
      total.device_ms += device_ms;
    }
    profiled_runs_ += profile_ ? 1 : 0;
    if (timed) HSCHED_RETURN_IF_ERROR(check_cl(queue_.finish(), "finish before the reads"));
    const auto download_start = Clock::now();
    // The reads queue up behind the kernels; the error flag's blocking read (or a finish) after
    // them is the run's one wait for the device.
    std::vector<Tensor> outputs;
    for (ValueId id : graph_.outputs()) {
      HSCHED_ASSIGN_OR_RETURN(Tensor output, enqueue_read(id, false));
      outputs.push_back(std::move(output));
    }
    HSCHED_RETURN_IF_ERROR(check_error_flag());
    for (size_t k = 0; k < outputs.size(); ++k) {
      outputs[k] = as_value(graph_.outputs()[k], std::move(outputs[k]));
    }
    if (copies != nullptr) {
      if (timed) copies->download_ms = ms_since(download_start);
      copies->download_bytes = 0;
      for (const Tensor& output : outputs)
        copies->download_bytes += static_cast<int64_t>(output.byte_size());
    }
    ++runs_;
    return outputs;
  }();
  // On a failure part-way, commands may still read the caller's input memory or write the
  // outputs' host memory: wait for them. A kernel may have set the error flag before it.
  if (!result.is_ok()) clear_error_flag();
  if (!result.is_ok() || !borrowed.empty()) queue_.finish();
  for (auto& [id, own] : borrowed) *buffers_[id] = std::move(own);
  run_inputs_.clear();
  read_back_.clear();
  return result;
}

}  // namespace hsched::opencl
