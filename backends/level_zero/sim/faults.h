// Faults the simulated NPU driver injects, from the environment variable HSCHED_ZE_SIM_FAULTS
// (comma-separated key=value; docs/level-zero.md has the table):
//   build_delay_s=S       pfnCreate sleeps S seconds (0 <= S <= 86400) before building
//   device_lost_after=N   graph executions 1..N run; the (N+1)th loses the device
//   oom=1                 device/shared allocations and graph creation: out of device memory
//   corrupt_output=1      graph outputs are perturbed after every execution
// and how strictly it behaves as Intel's driver and compiler do (sim.h lists the behaviours):
//   driver_version=M.m    the driver release it behaves as and reports (default 1.10)
//   unsupported_layers=T:T  the compiler's op table lacks these layer types: the query of
//                         supported layers leaves them out and a build with them fails
//   failing_layers=T:T    builds of IR with layers of these types fail, while the query of
//                         supported layers lists them ("supported, then the compile failed")
//   lenient=1             the behaviours of a lenient driver: outputs named after their values,
//                         no limit of graphs per context, Gelu's tanh form computed as such
// A bad key or value is ignored with one line on the error stream naming the key.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace hsched::zesim {

struct Faults {
  double build_delay_s = 0;
  std::optional<int64_t> device_lost_after;
  bool oom = false;
  bool corrupt_output = false;
  int driver_major = 1;
  int driver_minor = 10;
  bool lenient = false;
  std::vector<std::string> unsupported_layers;
  std::vector<std::string> failing_layers;
};

inline constexpr const char* kFaultsEnv = "HSCHED_ZE_SIM_FAULTS";

Faults parse_faults(std::string_view spec, std::ostream& errors);

}  // namespace hsched::zesim
