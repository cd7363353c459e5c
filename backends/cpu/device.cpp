#include "backends/cpu/device.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <thread>

#include "backends/cpu/kernels/quant_util.h"

namespace hsched::cpu {
namespace {

// Estimates, stated once: a core streams about 8 GB/s from DRAM and a desktop/laptop memory
// system saturates between ~10 and ~100 GB/s. A oneDNN primitive or TBB parallel loop costs a
// few microseconds to dispatch. `hsched calibrate` replaces all of these with measurements.
constexpr double kBandwidthPerCoreGbps = 8;
constexpr double kMinBandwidthGbps = 8;
constexpr double kMaxBandwidthGbps = 100;
constexpr double kCpuLaunchOverheadMs = 0.002;
constexpr double kCpuCompileMsPerNode = 0.05;  // primitive creation and weight reorders
constexpr double kConvLinearEfficiency = 0.6;  // oneDNN conv/matmul at batch 1
constexpr double kDefaultEfficiency = 0.3;     // TBB kernels
constexpr double kFallbackGhz = 2.0;

// The value of the first "key : value" line of /proc/cpuinfo with this key, or "".
std::string cpuinfo_field(const std::string& key) {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    const size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string name = line.substr(0, colon);
    while (!name.empty() && (name.back() == ' ' || name.back() == '\t')) name.pop_back();
    if (name != key) continue;
    const size_t start = line.find_first_not_of(' ', colon + 1);
    return start == std::string::npos ? std::string() : line.substr(start);
  }
  return {};
}

double probe_ghz() {
  std::ifstream max_freq("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq");  // kHz
  double khz = 0;
  if (max_freq >> khz && khz > 0) return khz / 1e6;
  try {
    const double mhz = std::stod(cpuinfo_field("cpu MHz"));
    // Rounded to 0.1 GHz: the current clock wanders between reads, plans should not.
    if (mhz > 0 && std::isfinite(mhz)) return std::round(mhz / 100) / 10;
  } catch (const std::exception&) {
  }
  return kFallbackGhz;
}

int probe_fp32_flop_per_cycle() {
#if defined(__x86_64__) || defined(__i386__)
  // A multiply-add is 2 FLOP: AVX-512 with one FMA unit and AVX2 with two both give 32.
  if (__builtin_cpu_supports("fma") &&
      (__builtin_cpu_supports("avx512f") || __builtin_cpu_supports("avx2"))) {
    return 32;
  }
  if (__builtin_cpu_supports("avx")) return 16;
#endif
  return 8;
}

}  // namespace

CpuFacts probe_cpu() {
  CpuFacts facts;
  facts.name = cpuinfo_field("model name");
  if (facts.name.empty()) facts.name = "CPU";
  facts.cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  facts.ghz = probe_ghz();
  facts.fp32_flop_per_cycle = probe_fp32_flop_per_cycle();
#if defined(__x86_64__) || defined(__i386__)
  facts.bf16 = __builtin_cpu_supports("avx512bf16");
#endif
  // As oneDNN sees the CPU (AVX512_VNNI, or AVX_VNNI without AVX-512 as on Core Ultra): the
  // ISA its int8 kernels take; clang 14's __builtin_cpu_supports knows no "avxvnni".
  facts.vnni = exact_int8_products();
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page_size = sysconf(_SC_PAGE_SIZE);
  if (pages > 0 && page_size > 0) facts.memory_bytes = int64_t{pages} * page_size;
  return facts;
}

DeviceProfile cpu_profile(const CpuFacts& facts) {
  DeviceProfile cpu;
  cpu.id = "cpu0";
  cpu.name = facts.name + " (" + std::to_string(facts.cores) + " threads, discovered)";
  cpu.kind = DeviceKind::kCpu;
  cpu.api = DeviceApi::kHost;
  cpu.present = true;
  cpu.peak_gflops[Precision::kFp32] = facts.cores * facts.ghz * facts.fp32_flop_per_cycle;
  if (facts.bf16) cpu.peak_gflops[Precision::kBf16] = 2 * cpu.peak_gflops[Precision::kFp32];
  if (facts.vnni) cpu.peak_gflops[Precision::kInt8] = 4 * cpu.peak_gflops[Precision::kFp32];
  cpu.efficiency[OpClass::kConvLinear] = kConvLinearEfficiency;
  cpu.default_efficiency = kDefaultEfficiency;
  cpu.memory_bandwidth_gbps =
      std::clamp(facts.cores * kBandwidthPerCoreGbps, kMinBandwidthGbps, kMaxBandwidthGbps);
  cpu.launch_overhead_ms = kCpuLaunchOverheadMs;
  cpu.zero_copy = true;  // the host: its memory is the one graph inputs and outputs live in
  cpu.memory_bytes = facts.memory_bytes;
  cpu.compile_ms_per_node = kCpuCompileMsPerNode;
  cpu.ops = {"*"};
  return cpu;
}

}  // namespace hsched::cpu
