#include "scheduler/config/config_node.h"

#include <cctype>
#include <cmath>
#include <set>
#include <sstream>

namespace hsched::config {
namespace {

// Shortest form that reads back the same: 0.5, 1e-06, 100000.
std::string format_number(double value) {
  std::ostringstream out;
  out << value;
  return out.str();
}

// Values are quoted in messages; a long one is cut so that the message stays one short line.
constexpr size_t kMaxQuoted = 40;

}  // namespace

bool Bounds::contains(double value) const {
  return std::isfinite(value) && (min_exclusive ? value > min : value >= min) && value <= max;
}

std::string Bounds::describe() const {
  return std::string("must be in ") + (min_exclusive ? "(" : "[") + format_number(min) + ", " +
         format_number(max) + "]";
}

Status ConfigNode::error(const std::string& message) const {
  return invalid_argument(path_.empty() ? message : path_ + ": " + message);
}

Status ConfigNode::type_error(const char* expected) const {
  return error(std::string("expected ") + expected + ", got " + describe_value());
}

std::string ConfigNode::describe_value() const {
  switch (node_.Type()) {
    case YAML::NodeType::Undefined:
      return "nothing";
    case YAML::NodeType::Null:
      return "an empty value";
    case YAML::NodeType::Sequence:
      return "a list";
    case YAML::NodeType::Map:
      return "a mapping";
    case YAML::NodeType::Scalar:
      break;
  }
  std::string text = node_.Scalar();
  if (text.size() > kMaxQuoted) text = text.substr(0, kMaxQuoted) + "...";
  for (char& c : text) {
    if (c == '\n' || c == '\r') c = ' ';  // messages are one line
  }
  return "'" + text + "'";
}

std::string ConfigNode::child_path(const std::string& key) const {
  return path_.empty() ? key : path_ + "." + key;
}

Result<std::vector<std::pair<std::string, ConfigNode>>> ConfigNode::entries() const {
  if (!node_.IsMap()) return type_error("a mapping");
  std::vector<std::pair<std::string, ConfigNode>> result;
  std::set<std::string> seen;
  for (const auto& entry : node_) {
    if (!entry.first.IsScalar()) {
      return error("a key is " + ConfigNode(entry.first, "").describe_value() +
                   ", expected plain text");
    }
    const std::string& key = entry.first.Scalar();
    ConfigNode value(entry.second, child_path(key));
    // yaml-cpp keeps both copies of a repeated key; which one wins would be a guess.
    if (!seen.insert(key).second) return value.error("duplicate key");
    result.emplace_back(key, std::move(value));
  }
  return result;
}

Status ConfigNode::expect_keys(std::initializer_list<std::string_view> allowed) const {
  HSCHED_ASSIGN_OR_RETURN(auto all, entries());
  for (const auto& [key, value] : all) {
    bool known = false;
    for (std::string_view name : allowed) known = known || key == name;
    if (known) continue;
    std::string expected;
    for (std::string_view name : allowed) {
      expected += (expected.empty() ? "" : ", ") + std::string(name);
    }
    return value.error("unknown key (expected one of: " + expected + ")");
  }
  return Status::ok();
}

std::optional<ConfigNode> ConfigNode::find(const std::string& key) const {
  if (!node_.IsMap()) return std::nullopt;
  for (const auto& entry : node_) {
    if (entry.first.IsScalar() && entry.first.Scalar() == key) {
      return ConfigNode(entry.second, child_path(key));
    }
  }
  return std::nullopt;
}

Result<std::optional<ConfigNode>> ConfigNode::get(const std::string& key, Need need) const {
  std::optional<ConfigNode> value = find(key);
  if (!value && need == Need::kRequired) return error("missing required key '" + key + "'");
  return value;
}

Result<std::vector<ConfigNode>> ConfigNode::items() const {
  if (!node_.IsSequence()) return type_error("a list");
  std::vector<ConfigNode> result;
  for (size_t i = 0; i < node_.size(); ++i) {
    result.emplace_back(node_[i], path_ + "[" + std::to_string(i) + "]");
  }
  return result;
}

Result<std::string> ConfigNode::as_string() const {
  if (!node_.IsScalar()) return type_error("text");
  return node_.Scalar();
}

Result<std::string> ConfigNode::as_identifier() const {
  HSCHED_ASSIGN_OR_RETURN(std::string text, as_string());
  bool valid = !text.empty();
  for (char c : text) {
    valid =
        valid && (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.');
  }
  if (!valid) return error("'" + text + "' is not a name (letters, digits, '-', '_', '.')");
  return text;
}

Result<bool> ConfigNode::as_bool() const {
  bool value = false;
  if (!node_.IsScalar() || !YAML::convert<bool>::decode(node_, value)) {
    return type_error("true or false");
  }
  return value;
}

Result<double> ConfigNode::as_number(const Bounds& bounds) const {
  double value = 0;
  if (!node_.IsScalar() || !YAML::convert<double>::decode(node_, value)) {
    return type_error("a number");
  }
  if (!bounds.contains(value)) return error(format_number(value) + " " + bounds.describe());
  return value;
}

Result<int64_t> ConfigNode::as_integer(int64_t min, int64_t max) const {
  // Read as a double so that 1e6 is accepted; every bound used is far below 2^53.
  HSCHED_ASSIGN_OR_RETURN(double value,
                          as_number({static_cast<double>(min), static_cast<double>(max), false}));
  if (value != std::floor(value)) return type_error("a whole number");
  return static_cast<int64_t>(value);
}

Status ConfigNode::read(const std::string& key, Need need, std::string* out) const {
  return read_with(key, need, out, [](const ConfigNode& node) { return node.as_string(); });
}

Status ConfigNode::read(const std::string& key, Need need, bool* out) const {
  return read_with(key, need, out, [](const ConfigNode& node) { return node.as_bool(); });
}

Status ConfigNode::read(const std::string& key, Need need, const Bounds& bounds,
                        double* out) const {
  return read_with(key, need, out, [&](const ConfigNode& node) { return node.as_number(bounds); });
}

Status ConfigNode::read(const std::string& key, Need need, int64_t min, int64_t max,
                        int64_t* out) const {
  return read_with(key, need, out,
                   [&](const ConfigNode& node) { return node.as_integer(min, max); });
}

}  // namespace hsched::config
