// Dynamic int8 quantization for the oneDNN kernels (see dnnl_int8.h).
#include "backends/cpu/kernels/dnnl_int8.h"

#include <cmath>
#include <mutex>

#include "backends/cpu/kernels/parallel.h"

namespace hsched::cpu {
namespace {

constexpr float kInt8Max = 127.0f;
constexpr float kUint8Levels = 255.0f;

dnnl::memory scalar_memory(const dnnl::engine& engine, memory::data_type type) {
  return dnnl::memory(memory::desc({1}, type, memory::format_tag::a), engine);
}

// One f32 of rank `rank` (all dims 1): a value broadcast over a destination of that rank.
memory::desc scale_desc(int rank) {
  return memory::desc(memory::dims(static_cast<size_t>(rank), 1), memory::data_type::f32,
                      plain_tag(static_cast<size_t>(rank)));
}

template <typename T>
void set_scalar(dnnl::memory& m, T value) {
  *static_cast<T*>(m.get_data_handle()) = value;
}

// The smallest and largest finite-or-infinite values of `x`, NaNs skipped (comparisons with NaN
// are false), both 0 when every value is NaN.
std::pair<float, float> value_range(const float* x, int64_t n) {
  float lo = 0.0f, hi = 0.0f;  // the range always holds 0, as DynamicQuantizeLinear's
  std::mutex merge;
  parallel_range(n, [&](int64_t begin, int64_t end) {
    float l = 0.0f, h = 0.0f;
    for (int64_t i = begin; i < end; ++i) {
      l = x[i] < l ? x[i] : l;
      h = x[i] > h ? x[i] : h;
    }
    const std::lock_guard<std::mutex> lock(merge);
    lo = std::min(lo, l);
    hi = std::max(hi, h);
  });
  return {lo, hi};
}

}  // namespace

Int8Weights quantize_weights(std::span<const float> w, int64_t channels, int64_t inner) {
  Int8Weights q;
  std::vector<float> largest(static_cast<size_t>(channels), 0.0f);
  const auto channel_of = [&](size_t i) {
    return static_cast<size_t>((static_cast<int64_t>(i) / inner) % channels);
  };
  for (size_t i = 0; i < w.size(); ++i) {
    const float magnitude = std::fabs(w[i]);
    float& m = largest[channel_of(i)];
    m = magnitude > m ? magnitude : m;  // NaN never wins
  }
  q.scales.resize(largest.size());
  for (size_t c = 0; c < largest.size(); ++c) {
    const float scale = largest[c] / kInt8Max;
    q.scales[c] = std::isfinite(scale) && scale > 0.0f ? scale : 1.0f;
  }
  q.data.resize(w.size());
  for (size_t i = 0; i < w.size(); ++i) {
    const float v = std::nearbyint(w[i] / q.scales[channel_of(i)]);
    q.data[i] = static_cast<int8_t>(v >= kInt8Max ? kInt8Max : v > -kInt8Max ? v : -kInt8Max);
  }
  return q;
}

void set_int8_params(dnnl::primitive_attr& attr, const std::vector<float>& weight_scales,
                     int channel_axis) {
  attr.set_output_scales(1 << channel_axis, weight_scales);
  attr.set_zero_points(DNNL_ARG_SRC, 0, {DNNL_RUNTIME_S32_VAL});
}

void append_int8_scale(dnnl::post_ops& chain, int dst_rank) {
  chain.append_binary(dnnl::algorithm::binary_mul, scale_desc(dst_rank));
}

DynamicInt8Input::DynamicInt8Input(const dnnl::engine& engine, const memory::desc& user,
                                   const memory::desc& inner, int64_t elements, int dst_rank)
    : user_(user, engine, DNNL_MEMORY_NONE),
      inner_(inner, engine),
      reorder_scale_(scalar_memory(engine, memory::data_type::f32)),
      reorder_zero_point_(scalar_memory(engine, memory::data_type::s32)),
      zero_point_(scalar_memory(engine, memory::data_type::s32)),
      scale_memory_(scale_desc(dst_rank), engine),
      elements_(elements) {
  dnnl::primitive_attr attr;
  attr.set_output_scales(0, {DNNL_RUNTIME_F32_VAL});
  attr.set_zero_points(DNNL_ARG_DST, 0, {DNNL_RUNTIME_S32_VAL});
  reorder_ = dnnl::reorder(dnnl::reorder::primitive_desc(user_, inner_, attr));
}

dnnl::memory& DynamicInt8Input::prepare(dnnl::stream& stream, const void* user_data) {
  const auto [lo, hi] = value_range(static_cast<const float*>(user_data), elements_);
  scale_ = (hi - lo) / kUint8Levels;
  int32_t zero_point = 0;
  if (std::isfinite(scale_) && scale_ > 0.0f) {
    zero_point = static_cast<int32_t>(std::nearbyint(std::clamp(-lo / scale_, 0.0f, kUint8Levels)));
  } else {
    scale_ = 1.0f;  // all zeros (or infinite: the output is then meaningless, as in fp16)
  }
  set_scalar(reorder_scale_, 1.0f / scale_);
  set_scalar(reorder_zero_point_, zero_point);
  set_scalar(zero_point_, zero_point);
  set_scalar(scale_memory_, scale_);
  user_.set_data_handle(const_cast<void*>(user_data));
  reorder_->execute(stream, {{DNNL_ARG_FROM, user_},
                             {DNNL_ARG_TO, inner_},
                             {DNNL_ARG_ATTR_OUTPUT_SCALES, reorder_scale_},
                             {DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_DST, reorder_zero_point_}});
  return inner_;
}

}  // namespace hsched::cpu
