// The host CPU as found from /proc, sysfs and cpuid, and its DeviceProfile (figures estimated
// until `hsched calibrate` measures them).
#pragma once

#include <cstdint>
#include <string>

#include "hsched/device.h"

namespace hsched::cpu {

// What the CPU figures are estimated from (probe_cpu() reads them from this machine).
struct CpuFacts {
  std::string name;             // /proc/cpuinfo "model name"
  int cores = 1;                // logical cores: std::thread::hardware_concurrency()
  double ghz = 2.0;             // max frequency (cpufreq) or the current "cpu MHz"
  int fp32_flop_per_cycle = 8;  // per core: 32 with AVX-512+FMA or AVX2+FMA (2 units), 16 AVX
  bool bf16 = false;            // AVX512_BF16: oneDNN's bf16 convolutions and matmuls
  bool vnni = false;            // AVX512_VNNI or AVX_VNNI: oneDNN's exact int8 products
  int64_t memory_bytes = 0;     // physical memory
};
CpuFacts probe_cpu();

// The CPU as the planner sees it, from `facts`: fp32 peak = cores x GHz x FLOP/cycle (bf16 twice
// that where the CPU has AVX512_BF16, whose dot product does two multiply-adds a lane; int8 four
// times where it has VNNI, four 8-bit multiply-adds a lane), memory
// bandwidth and overheads estimated (see device.cpp), every op its backend implements ("*"),
// present, API host, id "cpu0".
DeviceProfile cpu_profile(const CpuFacts& facts);

}  // namespace hsched::cpu
