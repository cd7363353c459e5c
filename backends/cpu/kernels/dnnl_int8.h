// Dynamic int8 quantization for the oneDNN Conv, MatMul and Gemm kernels of a node the plan
// computes in int8 ("_int8"): weights quantized once, symmetric int8 with one scale per output
// channel; the activation quantized at each run to uint8 over its own range (the scale and zero
// point of ONNX's DynamicQuantizeLinear); products summed exactly in int32 (VNNI); the output
// written in f32, scaled per channel by activation scale x weight scale. ONNX Runtime's dynamic
// quantization computes the same way.
#pragma once

#include <span>
#include <vector>

#include "backends/cpu/kernels/dnnl_util.h"

namespace hsched::cpu {

// Weights quantized symmetrically to int8: `data` has the f32 values' order, `scales` one value
// per output channel (max |w| / 127 over the channel, 1 for an all-zero channel).
struct Int8Weights {
  std::vector<int8_t> data;
  std::vector<float> scales;
};
// The output channel of element i of `w` is (i / inner) % channels.
Int8Weights quantize_weights(std::span<const float> w, int64_t channels, int64_t inner);

// The int8 parameters of a primitive: the weights' scales as its output scales (one per output
// channel, along axis `channel_axis` of the destination), and the source's zero point, given at
// each run.
void set_int8_params(dnnl::primitive_attr& attr, const std::vector<float>& weight_scales,
                     int channel_axis);
// Appends to `chain` the multiplication by the activation's scale, given at each run
// (DynamicInt8Input::scale_memory()): a binary post-op, since oneDNN 2.6's convolutions take no
// run-time output scales. It must come before any other post-op.
void append_int8_scale(dnnl::post_ops& chain, int dst_rank);

// The activation input of an int8 primitive: the f32 value as the program stores it (`user`),
// quantized at each run into `inner` (u8, the primitive's layout) with the scale and zero point
// of its range, in one reorder.
class DynamicInt8Input {
 public:
  DynamicInt8Input() = default;
  DynamicInt8Input(const dnnl::engine& engine, const memory::desc& user, const memory::desc& inner,
                   int64_t elements, int dst_rank);
  // Measures the range of `user_data`, quantizes it and returns the u8 memory to pass.
  dnnl::memory& prepare(dnnl::stream& stream, const void* user_data);
  float scale() const { return scale_; }
  // For DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_SRC (one s32), set by prepare.
  dnnl::memory& zero_point() { return zero_point_; }
  // For append_int8_scale's post-op (one f32), set by prepare.
  dnnl::memory& scale_memory() { return scale_memory_; }

 private:
  dnnl::memory user_, inner_, reorder_scale_, reorder_zero_point_, zero_point_, scale_memory_;
  std::optional<dnnl::reorder> reorder_;
  int64_t elements_ = 0;
  float scale_ = 1.0f;
};

}  // namespace hsched::cpu
