// Pieces of the OpenVINO IR text format shared by the writer and the reader: element type and
// port precision names, attribute value formatting and parsing, fp16 bits, and the bounds applied
// to everything read from an IR model (untrusted input).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "hsched/dtype.h"
#include "hsched/status.h"

namespace hsched::ir::detail {

inline constexpr size_t kMaxXmlBytes = size_t{256} << 20;     // 256 MiB of XML
inline constexpr size_t kMaxWeightsBytes = size_t{16} << 30;  // 16 GiB of weights
inline constexpr size_t kMaxLayers = size_t{1} << 20;
inline constexpr size_t kMaxEdges = size_t{1} << 22;
inline constexpr size_t kMaxPortsPerLayer = 4096;  // a Concat of many inputs
inline constexpr size_t kMaxNameBytes = 4096;
inline constexpr size_t kMaxAttributeInts = 64;                 // strides, pads, shapes...
inline constexpr int64_t kMaxIrTensorBytes = int64_t{1} << 32;  // one tensor at most 4 GiB
inline constexpr int64_t kMaxIrTotalBytes = int64_t{1} << 36;   // all output ports together

// OpenVINO element type names ("f32", "f16", "i64", "i32", "i8", "u8", "boolean") and port
// precision names ("FP32", "FP16", "I64"...). Only the types hsched represents.
std::string_view element_type_name(DType type);
std::optional<DType> element_type_from_name(std::string_view name);
std::string_view port_precision_name(DType type);

// "1,2,3" (empty string for an empty list).
std::string format_ints(const std::vector<int64_t>& values);
// Shortest text that reads back as the same float.
std::string format_float(float value);

// Strict parsers for attribute values; `what` names the attribute in the error.
Result<int64_t> parse_int(std::string_view text, std::string_view what);
Result<double> parse_double(std::string_view text, std::string_view what);
// Comma-separated integers, at most `max_count`, each within [lo, hi]. Empty text: empty list.
Result<std::vector<int64_t>> parse_ints(std::string_view text, std::string_view what,
                                        size_t max_count, int64_t lo, int64_t hi);

// Tensor names of a port: OpenVINO separates several with ',' and escapes a ',' in a name as "\,"
// (and nothing else: a '\' before any other character is the character itself, as OpenVINO's IR
// reader reads it).
std::string escape_port_name(std::string_view name);
std::string first_port_name(std::string_view names);

}  // namespace hsched::ir::detail
