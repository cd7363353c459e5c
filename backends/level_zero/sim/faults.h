// Faults the simulated NPU driver injects, from the environment variable HSCHED_ZE_SIM_FAULTS
// (comma-separated key=value; docs/level-zero.md has the table):
//   build_delay_s=S       pfnCreate sleeps S seconds (0 <= S <= 86400) before building
//   device_lost_after=N   graph executions 1..N run; the (N+1)th loses the device
//   oom=1                 device/shared allocations and graph creation: out of device memory
//   corrupt_output=1      graph outputs are perturbed after every execution
// A bad key or value is ignored with one line on the error stream naming the key.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string_view>

namespace hsched::zesim {

struct Faults {
  double build_delay_s = 0;
  std::optional<int64_t> device_lost_after;
  bool oom = false;
  bool corrupt_output = false;
};

inline constexpr const char* kFaultsEnv = "HSCHED_ZE_SIM_FAULTS";

Faults parse_faults(std::string_view spec, std::ostream& errors);

}  // namespace hsched::zesim
