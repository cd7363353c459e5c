#include "backends/level_zero/ir/ir_format.h"

#include <charconv>
#include <cmath>

namespace hsched::ir::detail {
namespace {

struct TypeNames {
  DType type;
  std::string_view element_type;
  std::string_view precision;
};
constexpr TypeNames kTypeNames[] = {
    {DType::kF32, "f32", "FP32"},      {DType::kF16, "f16", "FP16"}, {DType::kI64, "i64", "I64"},
    {DType::kI32, "i32", "I32"},       {DType::kI8, "i8", "I8"},     {DType::kU8, "u8", "U8"},
    {DType::kBool, "boolean", "BOOL"},
};

}  // namespace

std::string_view element_type_name(DType type) {
  for (const auto& t : kTypeNames) {
    if (t.type == type) return t.element_type;
  }
  return "undefined";
}

std::optional<DType> element_type_from_name(std::string_view name) {
  for (const auto& t : kTypeNames) {
    if (t.element_type == name) return t.type;
  }
  return std::nullopt;
}

std::string_view port_precision_name(DType type) {
  for (const auto& t : kTypeNames) {
    if (t.type == type) return t.precision;
  }
  return "UNSPECIFIED";
}

std::string format_ints(const std::vector<int64_t>& values) {
  std::string text;
  for (size_t i = 0; i < values.size(); ++i) {
    if (i != 0) text += ',';
    text += std::to_string(values[i]);
  }
  return text;
}

std::string format_float(float value) {
  char buffer[64];
  const auto result = std::to_chars(buffer, buffer + sizeof(buffer), value);
  return std::string(buffer, result.ptr);
}

Result<int64_t> parse_int(std::string_view text, std::string_view what) {
  int64_t value = 0;
  const auto result = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || result.ec != std::errc() || result.ptr != text.data() + text.size()) {
    return invalid_argument("attribute '" + std::string(what) + "': '" +
                            std::string(text.substr(0, 64)) + "' is not an integer");
  }
  return value;
}

Result<double> parse_double(std::string_view text, std::string_view what) {
  double value = 0;
  const auto result = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || result.ec != std::errc() || result.ptr != text.data() + text.size() ||
      !std::isfinite(value)) {
    return invalid_argument("attribute '" + std::string(what) + "': '" +
                            std::string(text.substr(0, 64)) + "' is not a finite number");
  }
  return value;
}

Result<std::vector<int64_t>> parse_ints(std::string_view text, std::string_view what,
                                        size_t max_count, int64_t lo, int64_t hi) {
  std::vector<int64_t> values;
  if (text.empty()) return values;
  size_t start = 0;
  while (true) {
    const size_t comma = text.find(',', start);
    const std::string_view item = text.substr(
        start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
    if (values.size() == max_count) {
      return invalid_argument("attribute '" + std::string(what) + "': more than " +
                              std::to_string(max_count) + " values");
    }
    HSCHED_ASSIGN_OR_RETURN(const int64_t value, parse_int(item, what));
    if (value < lo || value > hi) {
      return invalid_argument("attribute '" + std::string(what) + "': value " +
                              std::to_string(value) + " outside [" + std::to_string(lo) + ", " +
                              std::to_string(hi) + "]");
    }
    values.push_back(value);
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return values;
}

std::string escape_port_name(std::string_view name) {
  std::string text;
  for (char c : name) {
    if (c == ',') text += '\\';
    text += c;
  }
  return text;
}

std::string first_port_name(std::string_view names) {
  std::string name;
  for (size_t i = 0; i < names.size(); ++i) {
    if (names[i] == '\\' && i + 1 < names.size() && names[i + 1] == ',') {
      name += names[++i];
    } else if (names[i] == ',') {
      break;
    } else {
      name += names[i];
    }
  }
  // OpenVINO writes "a, b" too: names carry no surrounding spaces.
  while (!name.empty() && name.front() == ' ') name.erase(name.begin());
  while (!name.empty() && name.back() == ' ') name.pop_back();
  return name;
}

}  // namespace hsched::ir::detail
