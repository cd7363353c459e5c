// Reading YAML config files with a key path for every error: a ConfigNode is one YAML node and
// where it sits ("devices[1].peak_gflops.fp16"), so that a message can say exactly which key is
// wrong. The schemas themselves (targets, policies, deployments) are in config_yaml.cpp.
//
// Contract: nothing here throws on any input; every problem comes back as an InvalidArgument
// Status whose message is "<key path>: <what is wrong>" (the caller prefixes the file).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "hsched/status.h"

namespace hsched::config {

// The allowed range of a number, for checks and messages ("must be in (0, 1]").
struct Bounds {
  double min = 0;
  double max = 0;
  bool min_exclusive = false;  // (min, max] instead of [min, max]

  bool contains(double value) const;
  std::string describe() const;
};

// Whether a key must be present.
enum class Need { kRequired, kOptional };

class ConfigNode {
 public:
  ConfigNode(YAML::Node node, std::string path) : node_(std::move(node)), path_(std::move(path)) {}

  const std::string& path() const { return path_; }
  // InvalidArgument "path: message" ("message" alone at the document's root).
  Status error(const std::string& message) const;
  // "expected a number, got 'fast'": for type errors.
  Status type_error(const char* expected) const;

  // Mappings. `entries` checks that this is a mapping with unique plain-text keys and returns
  // them in file order; `expect_keys` also refuses keys not in `allowed`, naming them.
  Result<std::vector<std::pair<std::string, ConfigNode>>> entries() const;
  Status expect_keys(std::initializer_list<std::string_view> allowed) const;
  // The value of `key`, std::nullopt when absent; only after expect_keys/entries succeeded.
  std::optional<ConfigNode> find(const std::string& key) const;
  // As find, but an absent required key is an error naming it.
  Result<std::optional<ConfigNode>> get(const std::string& key, Need need) const;

  // Sequences: the items, with paths "key[0]", "key[1]"...
  Result<std::vector<ConfigNode>> items() const;

  // Scalars.
  Result<std::string> as_string() const;
  // A name used in flags, reports and file names: letters, digits, '-', '_', '.'.
  Result<std::string> as_identifier() const;
  Result<bool> as_bool() const;
  Result<double> as_number(const Bounds& bounds) const;  // finite and within `bounds`
  Result<int64_t> as_integer(int64_t min, int64_t max) const;

  // Reads `key` into `*out` when present; leaves `*out` (its default) alone when an optional key
  // is absent.
  Status read(const std::string& key, Need need, std::string* out) const;
  Status read(const std::string& key, Need need, bool* out) const;
  Status read(const std::string& key, Need need, const Bounds& bounds, double* out) const;
  Status read(const std::string& key, Need need, int64_t min, int64_t max, int64_t* out) const;
  // The same with any reader `parse(const ConfigNode&) -> Result<T>`.
  template <typename T, typename Parse>
  Status read_with(const std::string& key, Need need, T* out, Parse parse) const {
    HSCHED_ASSIGN_OR_RETURN(std::optional<ConfigNode> value, get(key, need));
    if (!value) return Status::ok();
    HSCHED_ASSIGN_OR_RETURN(*out, parse(*value));
    return Status::ok();
  }

 private:
  std::string child_path(const std::string& key) const;
  std::string describe_value() const;  // "a list", "an empty value", "'text'"...

  YAML::Node node_;
  std::string path_;
};

// The names of an enum whose values are 0..count-1 (Precision, OpClass, FallbackMode...), for
// parsing config values and map keys and for listing the choices in messages.
template <typename Enum>
struct EnumNames {
  const char* what;           // "precision", "op class"
  const char* (*name)(Enum);  // precision_name
  int count;

  std::string list() const {  // "fp32, fp16, bf16, int8"
    std::string text;
    for (int i = 0; i < count; ++i) text += (i == 0 ? "" : ", ") + std::string(name(Enum(i)));
    return text;
  }
  // `text` read at `at`; `is_key`: `text` is a map key and already ends `at`'s path.
  Result<Enum> parse(const std::string& text, const ConfigNode& at, bool is_key) const {
    for (int i = 0; i < count; ++i) {
      if (text == name(Enum(i))) return Enum(i);
    }
    std::string quoted = is_key ? "" : " '" + text + "'";
    return at.error("unknown " + std::string(what) + quoted + " (expected " + list() + ")");
  }
  Result<Enum> parse(const ConfigNode& node) const {
    HSCHED_ASSIGN_OR_RETURN(std::string text, node.as_string());
    return parse(text, node, false);
  }
};

// A list whose items `read_item(const ConfigNode&) -> Result<V>` reads; `allow_empty` false
// refuses `[]`.
template <typename V, typename ReadItem>
Result<std::vector<V>> read_list(const ConfigNode& list, bool allow_empty, ReadItem read_item) {
  HSCHED_ASSIGN_OR_RETURN(std::vector<ConfigNode> items, list.items());
  if (items.empty() && !allow_empty) return list.error("empty list");
  std::vector<V> values;
  for (const ConfigNode& item : items) {
    HSCHED_ASSIGN_OR_RETURN(V value, read_item(item));
    values.push_back(std::move(value));
  }
  return values;
}

// A mapping keyed by enum names (`peak_gflops: {fp32: 4500}`); `read_value` reads each value.
template <typename V, typename Enum, typename ReadValue>
Result<std::map<Enum, V>> read_enum_map(const ConfigNode& map, const EnumNames<Enum>& names,
                                        ReadValue read_value) {
  HSCHED_ASSIGN_OR_RETURN(auto entries, map.entries());
  std::map<Enum, V> values;
  for (const auto& [key, value_node] : entries) {
    HSCHED_ASSIGN_OR_RETURN(Enum key_value, names.parse(key, value_node, true));
    HSCHED_ASSIGN_OR_RETURN(V value, read_value(value_node));
    values.emplace(key_value, std::move(value));
  }
  return values;
}

}  // namespace hsched::config
