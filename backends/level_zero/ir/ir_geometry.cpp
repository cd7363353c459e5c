#include "backends/level_zero/ir/ir_geometry.h"

#include <algorithm>
#include <string>

namespace hsched::ir::detail {

Result<SpatialGeometry> spatial_geometry(const Node& node, const std::vector<int64_t>& in,
                                         const std::vector<int64_t>& out,
                                         const std::vector<int64_t>& kernel, bool transposed) {
  if (in.size() < 3 || in.size() != out.size() || kernel.size() != in.size() - 2) {
    return unimplemented("spatial rank of input, output and kernel differ");
  }
  const size_t rank = kernel.size();
  auto strides = node.attr_ints("strides");
  auto dilations = node.attr_ints("dilations");
  auto pads = node.attr_ints("pads");
  auto output_padding = node.attr_ints("output_padding");
  if (strides.empty()) strides.assign(rank, 1);
  if (dilations.empty()) dilations.assign(rank, 1);
  if (pads.empty()) pads.assign(2 * rank, 0);
  if (output_padding.empty()) output_padding.assign(rank, 0);
  if (strides.size() != rank || dilations.size() != rank || pads.size() != 2 * rank ||
      output_padding.size() != rank) {
    return unimplemented(
        "strides, dilations, pads or output_padding do not match the spatial rank");
  }
  const std::string auto_pad = node.attr_string("auto_pad", "NOTSET");
  if (auto_pad != "NOTSET" && auto_pad != "SAME_UPPER" && auto_pad != "SAME_LOWER" &&
      auto_pad != "VALID") {
    return unimplemented("auto_pad '" + auto_pad + "'");
  }
  SpatialGeometry g;
  for (size_t i = 0; i < rank; ++i) {
    const int64_t k = kernel[i], s = strides[i], d = dilations[i];
    if (k < 1 || s < 1 || d < 1 || k > (int64_t{1} << 20) || s > (int64_t{1} << 20) ||
        d > (int64_t{1} << 20)) {
      return unimplemented("kernel, stride or dilation outside [1, 2^20]");
    }
    if (pads[i] < 0 || pads[i + rank] < 0) return unimplemented("negative pads");
    const int64_t extent = (k - 1) * d + 1;
    const int64_t small = transposed ? in[i + 2] : out[i + 2];
    const int64_t large = transposed ? out[i + 2] : in[i + 2];
    if (small < 1 || large < 0) return unimplemented("empty spatial dims");
    int64_t begin = pads[i], end = pads[i + rank];
    if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      const int64_t total = std::max<int64_t>(0, (small - 1) * s + extent - large);
      begin = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
      end = total - begin;
    } else if (auto_pad == "VALID") {
      begin = end = 0;
    }
    const int64_t needed_end = (small - 1) * s + extent - large - begin;
    g.declared_pads_end.push_back(end);
    int64_t extra_output = 0;
    if (transposed) {
      // The end pad absorbs output_padding and output_shape; past zero it becomes output padding.
      end = needed_end;
      if (end < 0) {
        extra_output = -end;
        end = 0;
      }
    } else if (needed_end > end) {
      end = needed_end;
      g.pads_end_extended = true;
    }
    if (begin >= (int64_t{1} << 20) || end >= (int64_t{1} << 20)) {
      return unimplemented("pads past 2^20");
    }
    const int64_t size = transposed ? (small - 1) * s + extent - begin - end + extra_output
                                    : (large + begin + end - extent) / s + 1;
    if ((transposed ? size != large : (large + begin + end < extent || size != small))) {
      return unimplemented("output size " + std::to_string(out[i + 2]) +
                           " does not follow from the attributes");
    }
    g.kernel.push_back(k);
    g.strides.push_back(s);
    g.dilations.push_back(d);
    g.pads_begin.push_back(begin);
    g.pads_end.push_back(end);
    g.output_padding.push_back(extra_output);
  }
  return g;
}

bool ceil_rounding_matches(const SpatialGeometry& geometry, const std::vector<int64_t>& in,
                           const std::vector<int64_t>& out) {
  for (size_t i = 0; i < geometry.kernel.size(); ++i) {
    const int64_t span =
        in[i + 2] + geometry.pads_begin[i] + geometry.declared_pads_end[i] - geometry.kernel[i];
    if (span < 0) return false;
    const int64_t s = geometry.strides[i];
    if ((span + s - 1) / s + 1 != out[i + 2]) return false;
  }
  return true;
}

void set_onnx_geometry(Node& node, const SpatialGeometry& geometry, bool with_dilations) {
  node.attributes["kernel_shape"] = geometry.kernel;
  node.attributes["strides"] = geometry.strides;
  if (with_dilations) node.attributes["dilations"] = geometry.dilations;
  std::vector<int64_t> pads = geometry.pads_begin;
  pads.insert(pads.end(), geometry.pads_end.begin(), geometry.pads_end.end());
  node.attributes["pads"] = pads;
  if (std::any_of(geometry.output_padding.begin(), geometry.output_padding.end(),
                  [](int64_t p) { return p != 0; })) {
    node.attributes["output_padding"] = geometry.output_padding;
  }
}

}  // namespace hsched::ir::detail
