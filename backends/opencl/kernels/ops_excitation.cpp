// A squeeze-and-excitation block's 1x1 Convs in one launch (enqueue_squeeze_excitation,
// ops_spatial.h): the spatial program's se_gate.
#include "backends/opencl/kernels/ops.h"
#include "backends/opencl/kernels/ops_scratch.h"
#include "backends/opencl/kernels/ops_spatial.h"
#include "backends/opencl/kernels/ops_util.h"

namespace hsched::opencl {
namespace {

// Mirrors SeShape in kernel_sources_conv.h.
struct SeShape {
  cl_int c, mid, c_out, has_b1, has_b2, op1, op2;
  cl_float alpha1, beta1, alpha2, beta2;
};
constexpr int64_t kOutputsPerGroup = 64;

}  // namespace

Result<cl::Event> enqueue_squeeze_excitation(const OpKernels& ops, cl::CommandQueue& queue,
                                             const cl::Buffer& m, const cl::Buffer& w1,
                                             const cl::Buffer& w2, const SqueezeExcitation& se,
                                             cl::Buffer& y, const Events& wait) {
  if (se.batch <= 0 || se.channels <= 0 || se.hidden <= 0 || se.out_channels <= 0 ||
      se.channels > kMaxExcitedChannels || se.hidden > kMaxExcitationHidden) {
    return invalid_argument("ops: squeeze-and-excitation of " + std::to_string(se.channels) +
                            " channels and " + std::to_string(se.hidden) +
                            " hidden is beyond one work group");
  }
  HSCHED_RETURN_IF_ERROR(
      detail::check_int_range(std::max({se.batch * se.channels, se.hidden * se.channels,
                                        se.out_channels * se.hidden, se.batch * se.out_channels}),
                              "squeeze-and-excitation operand"));
  const Activation none{.op = UnaryOp::kRelu};
  const Activation a1 = se.act1.value_or(none), a2 = se.act2.value_or(none);
  const SeShape shape{static_cast<cl_int>(se.channels),
                      static_cast<cl_int>(se.hidden),
                      static_cast<cl_int>(se.out_channels),
                      static_cast<cl_int>(se.b1 != nullptr),
                      static_cast<cl_int>(se.b2 != nullptr),
                      se.act1 ? static_cast<cl_int>(a1.op) : cl_int{-1},
                      se.act2 ? static_cast<cl_int>(a2.op) : cl_int{-1},
                      a1.alpha,
                      a1.beta,
                      a2.alpha,
                      a2.beta};
  HSCHED_ASSIGN_OR_RETURN(cl::Kernel kernel, detail::queue_kernel(ops, queue, "se_gate"));
  HSCHED_RETURN_IF_ERROR(detail::set_args(kernel, "se_gate", m, w1, detail::or_null(se.b1), w2,
                                          detail::or_null(se.b2), y, shape));
  const auto groups =
      static_cast<size_t>((se.out_channels + kOutputsPerGroup - 1) / kOutputsPerGroup);
  return detail::launch_range(queue, kernel,
                              cl::NDRange(groups * 256, static_cast<size_t>(se.batch)),
                              cl::NDRange(256, 1), wait, "se_gate");
}

}  // namespace hsched::opencl
