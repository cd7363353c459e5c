// Discovery: the devices of this machine as a Target ("this-machine"). Each kind of device is
// found by its own discoverer (the CPU now; OpenCL and Level Zero devices with their backends),
// so adding one is adding a function to the list, not an #ifdef.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "hsched/device.h"

namespace hsched::sched {

// Returns the devices one API finds (possibly none). Ids are assigned by discover_target
// (kind name + index: "cpu0", "gpu0", "gpu1"), so discoverers need not know of each other; a
// discoverer that wants its own id family sets id to "<family>*" ("ocl*": "ocl0", "ocl1"...).
// Contract: never throws, never fails the discovery of others (a missing driver = no devices).
using Discoverer = std::function<std::vector<DeviceProfile>()>;

// What the CPU figures are estimated from (probe_cpu() reads them from this machine).
struct CpuFacts {
  std::string name;             // /proc/cpuinfo "model name"
  int cores = 1;                // logical cores: std::thread::hardware_concurrency()
  double ghz = 2.0;             // max frequency (cpufreq) or the current "cpu MHz"
  int fp32_flop_per_cycle = 8;  // per core: 32 with AVX-512+FMA or AVX2+FMA (2 units), 16 AVX
  int64_t memory_bytes = 0;     // physical memory
};
CpuFacts probe_cpu();

// The CPU as the planner sees it, from `facts`: fp32 peak = cores x GHz x FLOP/cycle, memory
// bandwidth and overheads estimated (see discover.cpp), every op its backend implements ("*"),
// present, API host.
DeviceProfile cpu_profile(const CpuFacts& facts);

// The discoverers of this build, CPU first (it is the host).
std::vector<Discoverer> default_discoverers();

// Runs the discoverers in order and numbers the devices per kind (or per requested family). Target name "this-machine"
// (kThisMachineTarget),
// source "discovered"; every device has present = true.
Target discover_target(const std::vector<Discoverer>& discoverers);
Target discover_target();

}  // namespace hsched::sched
