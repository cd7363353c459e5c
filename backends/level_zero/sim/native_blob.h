// The simulated driver's native graph binary (what pfnGetNativeBinary returns and pfnCreate takes
// with ZE_GRAPH_FORMAT_NATIVE), little endian:
//   12 bytes "HSCHEDSIMNPU", u32 format version (1), u64 payload size, u64 FNV-1a-64 of the
//   payload, then the payload: the NGRAPH_LITE bytes the graph was created from.
// Loading one still compiles the IR for the CPU; what it saves a real driver (the NPU compiler)
// is what hsched's native-binary cache is about, and the format lets that path run for real.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

namespace hsched::zesim {

inline constexpr uint32_t kNativeBlobVersion = 1;
inline constexpr size_t kNativeBlobHeaderBytes = 12 + 4 + 8 + 8;

std::vector<uint8_t> make_native_blob(std::span<const uint8_t> payload);
// The payload, or nullopt when the magic, version, size or checksum do not match.
std::optional<std::span<const uint8_t>> parse_native_blob(std::span<const uint8_t> blob);

}  // namespace hsched::zesim
