#include "backends/level_zero/sim/faults.h"

#include <charconv>
#include <cmath>
#include <string>
#include <system_error>

namespace hsched::zesim {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

template <typename T>
std::optional<T> parse_number(std::string_view text) {
  T value{};
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (text.empty() || ec != std::errc() || ptr != end) return std::nullopt;
  return value;
}

std::optional<bool> parse_flag(std::string_view text) {
  if (text == "1") return true;
  if (text == "0") return false;
  return std::nullopt;
}

}  // namespace

Faults parse_faults(std::string_view spec, std::ostream& errors) {
  Faults faults;
  const auto reject = [&](std::string_view key, std::string_view value, const char* why) {
    errors << "ze_hsched_sim: " << kFaultsEnv << ": key '" << key << "' (value '" << value
           << "') ignored: " << why << "\n";
  };
  while (!spec.empty()) {
    const size_t comma = spec.find(',');
    const std::string_view item = trim(spec.substr(0, comma));
    spec = comma == std::string_view::npos ? std::string_view() : spec.substr(comma + 1);
    if (item.empty()) continue;
    const size_t eq = item.find('=');
    const std::string_view key = trim(item.substr(0, eq));
    const std::string_view value = eq == std::string_view::npos ? "" : trim(item.substr(eq + 1));
    if (key == "build_delay_s") {
      const auto seconds = parse_number<double>(value);
      if (!seconds || !std::isfinite(*seconds) || *seconds < 0 || *seconds > 86400) {
        reject(key, value, "expected seconds in [0, 86400]");
      } else {
        faults.build_delay_s = *seconds;
      }
    } else if (key == "device_lost_after") {
      const auto count = parse_number<int64_t>(value);
      if (!count || *count < 0) {
        reject(key, value, "expected a count of executions >= 0");
      } else {
        faults.device_lost_after = *count;
      }
    } else if (key == "oom" || key == "corrupt_output" || key == "lenient") {
      const auto flag = parse_flag(value);
      if (!flag) {
        reject(key, value, "expected 0 or 1");
      } else {
        (key == "oom"       ? faults.oom
         : key == "lenient" ? faults.lenient
                            : faults.corrupt_output) = *flag;
      }
    } else if (key == "unsupported_layers" || key == "failing_layers") {
      std::vector<std::string>& types =
          key == "unsupported_layers" ? faults.unsupported_layers : faults.failing_layers;
      types.clear();
      for (std::string_view rest = value; !rest.empty();) {
        const size_t colon = rest.find(':');
        const std::string_view type = trim(rest.substr(0, colon));
        if (!type.empty()) types.emplace_back(type);
        rest = colon == std::string_view::npos ? std::string_view() : rest.substr(colon + 1);
      }
    } else if (key == "driver_version") {
      const size_t dot = value.find('.');
      const auto major = parse_number<int>(value.substr(0, dot));
      const auto minor = dot == std::string_view::npos ? std::optional<int>()
                                                       : parse_number<int>(value.substr(dot + 1));
      if (!major || !minor || *major < 0 || *major > 0xFFFF || *minor < 0 || *minor > 0xFFFF) {
        reject(key, value, "expected MAJOR.MINOR");
      } else {
        faults.driver_major = *major;
        faults.driver_minor = *minor;
      }
    } else {
      reject(key, value,
             "unknown key (build_delay_s, device_lost_after, oom, corrupt_output, driver_version, "
             "unsupported_layers, failing_layers, lenient)");
    }
  }
  return faults;
}

}  // namespace hsched::zesim
