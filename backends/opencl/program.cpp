#include "backends/opencl/program.h"

#include "backends/opencl/ops_util.h"

namespace hsched::opencl {
namespace {

using detail::check_cl;

bool is_float(const Value& value) { return value.dtype == DType::kF32; }

Result<cl::Buffer> device_buffer(const cl::Context& context, int64_t bytes, const Value& value) {
  cl_int error = CL_SUCCESS;
  cl::Buffer buffer(context, CL_MEM_READ_WRITE, static_cast<size_t>(std::max<int64_t>(bytes, 1)),
                    nullptr, &error);
  HSCHED_RETURN_IF_ERROR(check_cl(error, "buffer of " + std::to_string(bytes) +
                                             " bytes for value '" + value.name + "'"));
  return buffer;
}

// Enqueues fp32 <-> storage conversion of `count` elements (fp16 storage only).
Status convert(const OpKernels& ops, cl::CommandQueue& queue, const cl::Buffer& from,
               const cl::Buffer& to, int64_t count, bool to_storage) {
  const char* name = to_storage ? "float_to_storage" : "storage_to_float";
  HSCHED_ASSIGN_OR_RETURN(cl::Kernel kernel, ops.kernel(name));
  HSCHED_RETURN_IF_ERROR(detail::set_args(kernel, name, from, to, static_cast<cl_int>(count)));
  return detail::launch(queue, kernel, count, {}, name).status();
}

}  // namespace

ClProgram::ClProgram(const Graph& graph, std::shared_ptr<DeviceRuntime> device,
                     const OpKernels* ops)
    : graph_(graph), device_(std::move(device)), ops_(ops) {}

Result<std::unique_ptr<ClProgram>> ClProgram::compile(const Graph& graph,
                                                      std::shared_ptr<DeviceRuntime> device,
                                                      Storage storage, int64_t deadline_ms) {
  for (NodeId id = 0; id < static_cast<NodeId>(graph.nodes().size()); ++id) {
    if (const auto unsupported = check_node(graph, graph.node(id))) {
      return invalid_argument("node '" + node_label(graph, id) + "' (" + graph.node(id).op_type +
                              "): " + unsupported->detail);
    }
  }
  HSCHED_ASSIGN_OR_RETURN(const OpKernels* ops, device->kernels(storage, deadline_ms));
  std::unique_ptr<ClProgram> program(new ClProgram(graph, std::move(device), ops));
  cl_int error = CL_SUCCESS;
  program->queue_ = cl::CommandQueue(program->device_->context(), program->device_->info().device,
                                     0, &error);
  HSCHED_RETURN_IF_ERROR(check_cl(error, "clCreateCommandQueue"));
  HSCHED_ASSIGN_OR_RETURN(std::vector<NodeId> order, graph.topological_order());
  for (NodeId id : order) {
    if (is_view_op(graph.node(id).op_type)) {
      ++program->stats_.aliased_views;
    } else {
      program->order_.push_back(id);
    }
  }
  program->stats_.kernels = static_cast<int>(program->order_.size());
  HSCHED_RETURN_IF_ERROR(program->allocate());
  HSCHED_RETURN_IF_ERROR(program->upload_constants());
  return program;
}

Status ClProgram::allocate() {
  buffers_.assign(graph_.values().size(), nullptr);
  const size_t element_bytes = storage_bytes(ops_->storage());
  HSCHED_ASSIGN_OR_RETURN(std::vector<NodeId> order, graph_.topological_order());
  auto ensure = [&](ValueId id) -> Status {
    const Value& value = graph_.value(id);
    if (buffers_[static_cast<size_t>(id)] || !is_float(value)) return Status::ok();
    const int64_t bytes = value.shape.elements() * static_cast<int64_t>(element_bytes);
    HSCHED_ASSIGN_OR_RETURN(cl::Buffer buffer, device_buffer(device_->context(), bytes, value));
    buffers_[static_cast<size_t>(id)] = std::make_shared<cl::Buffer>(std::move(buffer));
    (value.is_constant() ? stats_.constant_bytes : stats_.activation_bytes) += bytes;
    return Status::ok();
  };
  for (ValueId id : graph_.inputs()) HSCHED_RETURN_IF_ERROR(ensure(id));
  for (NodeId id : order) {
    const Node& node = graph_.node(id);
    for (ValueId in : node.inputs) {
      if (in != kNoValue) HSCHED_RETURN_IF_ERROR(ensure(in));
    }
    if (is_view_op(node.op_type)) {  // the output is the data input's bytes
      buffers_[static_cast<size_t>(node.outputs[0])] = buffers_[static_cast<size_t>(node.inputs[0])];
      continue;
    }
    for (ValueId out : node.outputs) {
      if (out != kNoValue) HSCHED_RETURN_IF_ERROR(ensure(out));
    }
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

// Enqueues host -> device of `input` into value `id`'s buffer. With fp16 storage the fp32 bytes
// go to a temporary buffer that a kernel converts; OpenCL keeps the temporary alive until then.
Status ClProgram::write_input(const Tensor& input, ValueId id) {
  const cl::Buffer& buffer = *buffers_[static_cast<size_t>(id)];
  const int64_t count = input.elements();
  if (count == 0) return Status::ok();
  if (ops_->storage() == Storage::kFloat32) {
    return check_cl(queue_.enqueueWriteBuffer(buffer, CL_FALSE, 0, input.byte_size(), input.raw()),
                    "write of '" + graph_.value(id).name + "'");
  }
  HSCHED_ASSIGN_OR_RETURN(cl::Buffer staging,
                          device_buffer(device_->context(), count * 4, graph_.value(id)));
  HSCHED_RETURN_IF_ERROR(
      check_cl(queue_.enqueueWriteBuffer(staging, CL_FALSE, 0, input.byte_size(), input.raw()),
               "write of '" + graph_.value(id).name + "'"));
  return convert(*ops_, queue_, staging, buffer, count, true);
}

// Device -> host of value `id` with a blocking read: every command before it has finished.
Result<Tensor> ClProgram::read_output(ValueId id) {
  const Value& value = graph_.value(id);
  Tensor output(value.dtype, value.shape.dims);
  const int64_t count = output.elements();
  if (count == 0) return output;
  const cl::Buffer* source = buffers_[static_cast<size_t>(id)].get();
  cl::Buffer staging;
  if (ops_->storage() != Storage::kFloat32) {
    HSCHED_ASSIGN_OR_RETURN(staging, device_buffer(device_->context(), count * 4, value));
    HSCHED_RETURN_IF_ERROR(convert(*ops_, queue_, *source, staging, count, false));
    source = &staging;
  }
  HSCHED_RETURN_IF_ERROR(
      check_cl(queue_.enqueueReadBuffer(*source, CL_TRUE, 0, output.byte_size(), output.raw()),
               "read of '" + value.name + "'"));
  return output;
}

NodeOperands ClProgram::operands_for(const Node& node) {
  NodeOperands operands;
  for (ValueId in : node.inputs) {
    Operand operand;
    if (in != kNoValue) {
      const Value& value = graph_.value(in);
      operand.buffer = buffers_[static_cast<size_t>(in)].get();
      operand.shape = value.shape.dims;
      if (value.is_constant()) operand.constant = &*value.constant;
    }
    operands.inputs.push_back(std::move(operand));
  }
  for (ValueId out : node.outputs) {
    operands.outputs.push_back(out == kNoValue ? nullptr : buffers_[static_cast<size_t>(out)].get());
    operands.output_shapes.push_back(out == kNoValue ? Shape{} : graph_.value(out).shape.dims);
  }
  return operands;
}

Result<std::vector<Tensor>> ClProgram::run(const std::vector<Tensor>& inputs) {
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
  Result<std::vector<Tensor>> result = [&]() -> Result<std::vector<Tensor>> {
    for (size_t i = 0; i < inputs.size(); ++i) {
      HSCHED_RETURN_IF_ERROR(write_input(inputs[i], graph_inputs[i]));
    }
    for (NodeId id : order_) {
      const Node& node = graph_.node(id);
      auto enqueued = enqueue_node(*ops_, queue_, node, operands_for(node), {});
      if (!enqueued.is_ok()) {
        return enqueued.status().with_context("node '" + node_label(graph_, id) + "' (" +
                                              node.op_type + ")");
      }
    }
    std::vector<Tensor> outputs;
    for (ValueId id : graph_.outputs()) {
      HSCHED_ASSIGN_OR_RETURN(Tensor output, read_output(id));
      outputs.push_back(std::move(output));
    }
    return outputs;
  }();
  // On a failure part-way, commands may still read the caller's input memory: wait for them.
  if (!result.is_ok()) queue_.finish();
  return result;
}

}  // namespace hsched::opencl
