// Shared pieces of the oneDNN kernels: dims and tags, fused post-ops, and the ports through which
// activations cross a primitive's boundary (reordered when the value's layout differs from the
// primitive's).
#pragma once

#include <oneapi/dnnl/dnnl.hpp>

#include <algorithm>
#include <optional>
#include <span>
#include <vector>

#include "backends/cpu/kernels/kernel.h"
#include "backends/cpu/kernels/post_ops.h"

namespace hsched::cpu {

using dnnl::memory;

memory::dims to_dnnl_dims(const std::vector<int64_t>& dims);
memory::format_tag plain_tag(size_t rank);          // a, ab, abc, abcd, abcde
memory::format_tag channels_last_tag(size_t rank);  // abc->acb, abcd->acdb, abcde->acdeb
// An activation's desc: f32 unless `type` says otherwise (bf16 inside a bf16 primitive).
memory::desc f32_desc(const std::vector<int64_t>& dims, bool channels_last,
                      memory::data_type type = memory::data_type::f32);

// Spatial pads for Conv/pools from auto_pad, pads and the static output size, so that oneDNN's
// floor formula yields exactly `out` (ceil_mode and SAME padding included).
struct SpatialParams {
  memory::dims kernel, strides, dilation, pad_l, pad_r;  // dilation in oneDNN's form (d - 1)
  // The trailing pads the attributes declare (auto_pad resolved); pad_r may exceed them where
  // a pool's ceil_mode needs room past the declared padding.
  memory::dims declared_pad_r;
};
Result<SpatialParams> spatial_params(const KernelSpec& spec, const std::vector<int64_t>& kernel,
                                     size_t spatial_rank, bool transposed);

// Builds the primitive attribute: `chain` (a kernel's own post-ops, e.g. Gemm's alpha and C),
// then `ops`; the i-th binary add of `ops` reads a tensor described by `add_mds[i]` (a residual
// with the output's shape and layout, or a broadcast bias row). An empty `add_mds[i]` makes that
// add a `sum` post-op instead: the caller puts the tensor in the destination before executing
// (brgconv takes `sum` where oneDNN 2.6 falls back to a slower convolution for a binary add).
dnnl::primitive_attr make_post_op_attr(const std::vector<PostOp>& ops,
                                       const std::vector<memory::desc>& add_mds,
                                       dnnl::post_ops chain = {});

// A post-op chain of one round to nearest even: an 8-bit primitive's requantization rounds before
// its destination zero point is added, as ONNX Runtime's (MLAS) does; without it oneDNN adds the
// zero point in fp32 first, which moves a value within fp32 rounding of a .5 boundary.
dnnl::post_ops round_post_op();

// The position in the oneDNN chain that make_post_op_attr builds of `ops[i]`, counted from the
// chain's first op of `ops` (HardSigmoid is two oneDNN post-ops): DNNL_ARG_ATTR_MULTIPLE_POST_OP's
// index for an add's tensor.
int dnnl_post_op_index(const std::vector<PostOp>& ops, size_t i);

// An activation entering or leaving a primitive. `user` is the value as stored by the program,
// `inner` what the primitive wants; when they differ, a reorder through a buffer owned by the
// port. Threading: one run at a time (the program's contract).
class ActivationPort {
 public:
  ActivationPort() = default;
  ActivationPort(const dnnl::engine& engine, const memory::desc& user, const memory::desc& inner,
                 bool is_input);
  // Input: binds the user data and returns the memory to pass (reordered when needed).
  dnnl::memory& prepare(dnnl::stream& stream, const void* user_data);
  // Output: after the primitive ran, moves its result to the user's buffer when needed.
  void finish(dnnl::stream& stream);

 private:
  dnnl::memory user_;
  dnnl::memory inner_;
  std::optional<dnnl::reorder> reorder_;
  bool is_input_ = true;
};

// Runs `build` (creating oneDNN primitives): false when oneDNN throws (it has no such primitive
// here), for fast paths that leave the node to another kernel then.
template <typename Fn>
bool dnnl_builds(Fn&& build) {
  try {
    build();
    return true;
  } catch (const dnnl::error&) {
    return false;
  }
}

// Builds a oneDNN kernel, with oneDNN's exceptions (unsupported shapes/formats) as an
// Unimplemented Status. oneDNN divides by zero-size dims (SIGFPE) rather than throw, so zero-size
// values never reach it: a node whose outputs are all empty gets a kernel that does nothing, and
// one with an empty input but a non-empty output is refused.
template <typename Fn>
Result<std::unique_ptr<Kernel>> dnnl_try(const KernelSpec& spec, Fn&& fn) {
  const auto empty = [](const Value* v) {
    return v != nullptr && v->shape.is_static() && v->shape.elements() == 0;
  };
  if (!spec.outputs.empty() && std::all_of(spec.outputs.begin(), spec.outputs.end(),
                                           [&](const Value* v) { return v == nullptr || empty(v); })) {
    return make_kernel(
        [](std::span<const Tensor* const>, std::span<Tensor* const>) { return Status::ok(); });
  }
  for (const Value* v : spec.inputs) {
    if (empty(v)) {
      return unsupported(spec, "input '" + v->name + "' is empty (" + v->shape.to_string() +
                                   ") and the output is not; oneDNN cannot run it");
    }
  }
  try {
    return fn();
  } catch (const dnnl::error& e) {
    return unsupported(spec, std::string("oneDNN: ") + e.what());
  }
}

}  // namespace hsched::cpu
