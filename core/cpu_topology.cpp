// default_cpu_threads(): the physical cores of the CPUs this process may run on, from its
// affinity mask and the kernel's topology files (two hyperthreads of a core count once).
#include <sched.h>

#include <algorithm>
#include <fstream>
#include <set>
#include <string>
#include <utility>

#include "hsched/threads.h"

namespace hsched {
namespace {

// A number from a topology file of `cpu`, or -1 when it cannot be read.
long topology_value(int cpu, const char* file) {
  std::ifstream in("/sys/devices/system/cpu/cpu" + std::to_string(cpu) + "/topology/" + file);
  long value = -1;
  if (!(in >> value)) return -1;
  return value;
}

int count_physical_cores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return 1;
  std::set<std::pair<long, long>> cores;  // (package, core)
  int cpus = 0;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (!CPU_ISSET(cpu, &set)) continue;
    ++cpus;
    const long package = topology_value(cpu, "physical_package_id");
    const long core = topology_value(cpu, "core_id");
    // Without topology (some containers) each CPU counts as a core of its own.
    cores.emplace(core < 0 ? cpu : package, core < 0 ? cpu : core);
  }
  return std::max<int>(1, cores.empty() ? cpus : static_cast<int>(cores.size()));
}

}  // namespace

int default_cpu_threads() {
  static const int cores = count_physical_cores();
  return cores;
}

}  // namespace hsched
