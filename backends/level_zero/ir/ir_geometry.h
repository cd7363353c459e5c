// Window geometry of ONNX Conv, ConvTranspose and pools resolved to explicit pads, the form the
// IR is written in (shapes are static, so auto_pad, output_shape and ceil_mode become numbers).
// The resolution follows the CPU backend's (backends/cpu/kernels/dnnl_util.cpp), the reference.
#pragma once

#include <cstdint>
#include <vector>

#include "graph/graph.h"
#include "hsched/status.h"

namespace hsched::ir::detail {

struct SpatialGeometry {
  std::vector<int64_t> kernel, strides, dilations, pads_begin, pads_end;
  std::vector<int64_t> output_padding;  // ConvTranspose only: where the end pad would go negative
  bool pads_end_extended = false;       // a pool's ceil_mode needed room past the declared pads
  std::vector<int64_t> declared_pads_end;  // pads_end before that extension
};

// Whether OpenVINO's rounding_type="ceil" on the declared pads gives `out` on every axis:
// ceil((in + pads_begin + pads_end - kernel) / stride) + 1 (its pooling shape inference). It does
// not when ONNX drops a last window that would start in the end padding, which OpenVINO keeps.
bool ceil_rounding_matches(const SpatialGeometry& geometry, const std::vector<int64_t>& in,
                           const std::vector<int64_t>& out);

// `in` and `out` are the static NCX dims of the node's data input and output; `kernel` the window
// (a Conv's from its weights when the attribute is absent). Unimplemented with the reason when
// the attributes cannot be expressed or do not give `out`.
Result<SpatialGeometry> spatial_geometry(const Node& node, const std::vector<int64_t>& in,
                                         const std::vector<int64_t>& out,
                                         const std::vector<int64_t>& kernel, bool transposed);

// The geometry back in the form of ONNX attributes (explicit pads, auto_pad NOTSET).
void set_onnx_geometry(Node& node, const SpatialGeometry& geometry, bool with_dilations);

}  // namespace hsched::ir::detail
