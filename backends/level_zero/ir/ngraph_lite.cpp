// The NGRAPH_LITE payload the NPU graph extension takes (see ir.h for the layout).
#include <cstring>

#include "backends/level_zero/ir/ir.h"
#include "backends/level_zero/ir/ir_format.h"

namespace hsched::ir {
namespace {

void put_le(std::vector<uint8_t>& out, uint64_t value, size_t bytes) {
  for (size_t i = 0; i < bytes; ++i) out.push_back(static_cast<uint8_t>(value >> (8 * i)));
}

uint64_t get_le(std::span<const uint8_t> in, size_t offset, size_t bytes) {
  uint64_t value = 0;
  for (size_t i = 0; i < bytes; ++i) value |= uint64_t{in[offset + i]} << (8 * i);
  return value;
}

}  // namespace

std::vector<uint8_t> pack_ngraph_lite(const IrModel& model, uint16_t major, uint16_t minor) {
  std::vector<uint8_t> out;
  out.reserve(24 + model.xml.size() + model.weights.size());
  put_le(out, major, 2);
  put_le(out, minor, 2);
  put_le(out, 2, 4);
  put_le(out, model.xml.size(), 8);
  out.insert(out.end(), model.xml.begin(), model.xml.end());
  put_le(out, model.weights.size(), 8);
  out.insert(out.end(), model.weights.begin(), model.weights.end());
  return out;
}

Result<IrModel> unpack_ngraph_lite(std::span<const uint8_t> payload) {
  constexpr size_t kHeader = 8;
  if (payload.size() < kHeader + 8) {
    return invalid_argument("NGRAPH_LITE payload: " + std::to_string(payload.size()) +
                            " bytes, shorter than its header");
  }
  const uint64_t count = get_le(payload, 4, 4);
  if (count != 2) {
    return invalid_argument("NGRAPH_LITE payload: " + std::to_string(count) +
                            " buffers (2 expected: xml, weights)");
  }
  size_t offset = kHeader;
  std::span<const uint8_t> parts[2];
  const uint64_t limits[2] = {detail::kMaxXmlBytes, detail::kMaxWeightsBytes};
  const char* names[2] = {"xml", "weights"};
  for (int i = 0; i < 2; ++i) {
    if (payload.size() - offset < 8) {
      return invalid_argument(std::string("NGRAPH_LITE payload: truncated before the ") + names[i] +
                              " size");
    }
    const uint64_t size = get_le(payload, offset, 8);
    offset += 8;
    if (size > limits[i] || size > payload.size() - offset) {
      return invalid_argument(std::string("NGRAPH_LITE payload: ") + names[i] + " size " +
                              std::to_string(size) + " exceeds the " +
                              std::to_string(payload.size() - offset) + " bytes left");
    }
    parts[i] = payload.subspan(offset, static_cast<size_t>(size));
    offset += static_cast<size_t>(size);
  }
  if (offset != payload.size()) {
    return invalid_argument("NGRAPH_LITE payload: " + std::to_string(payload.size() - offset) +
                            " trailing bytes");
  }
  IrModel model;
  model.xml.assign(reinterpret_cast<const char*>(parts[0].data()), parts[0].size());
  model.weights.assign(parts[1].begin(), parts[1].end());
  return model;
}

}  // namespace hsched::ir
