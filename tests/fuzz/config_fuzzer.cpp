// libFuzzer target for the YAML config loaders (include/hsched/config.h): any bytes, read as a
// target profile, a policy and a deployment file, must give the config or one InvalidArgument
// line, never a crash, a sanitizer report, a leak or a hang. A target that loads must also survive
// target_yaml()'s round trip (config.h: load_target(target_yaml(t)) gives t back): written
// out and read again it loads, and writes the same YAML.
//
// The loaders read files: each input is written to a file in a folder of this process's own
// (deployments resolve `target:`/`policy:` paths against it, and bare names against configs/).
// `target: this-machine` gets a fixed two-device target instead of discovering devices.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "hsched/config.h"

namespace {

namespace fs = std::filesystem;
using namespace hsched;

const fs::path& work_dir() {
  static const fs::path* const kDir = [] {
    std::string pattern = (fs::temp_directory_path() / "hsched-config-fuzz-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) {
      std::perror("config_fuzzer: mkdtemp");
      std::abort();
    }
    std::atexit([] {
      std::error_code ignored;
      fs::remove_all(*kDir, ignored);
    });
    return new fs::path(pattern);
  }();
  return *kDir;
}

void write_file(const fs::path& path, const char* data, size_t size) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(data, static_cast<std::streamsize>(size));
  if (!out) {
    std::fprintf(stderr, "config_fuzzer: cannot write %s\n", path.c_str());
    std::abort();
  }
}

Target fake_machine() {
  Target target;
  target.name = kThisMachineTarget;
  target.source = "discovered";
  DeviceProfile cpu;
  cpu.id = "cpu0";
  cpu.name = "fuzz CPU";
  cpu.kind = DeviceKind::kCpu;
  cpu.api = DeviceApi::kHost;
  cpu.present = true;
  target.devices.push_back(cpu);
  return target;
}

void check_round_trip(const Target& target) {
  const std::string yaml = target_yaml(target, "round trip");
  const fs::path path = work_dir() / "round-trip.yaml";
  write_file(path, yaml.data(), yaml.size());
  const Result<Target> again = load_target(path.string());
  if (!again.is_ok()) {
    std::fprintf(stderr, "config_fuzzer: target_yaml() wrote a target load_target refuses: %s\n",
                 again.status().message().c_str());
    std::abort();
  }
  const std::string yaml_again = target_yaml(*again, "round trip");
  if (yaml_again != yaml) {
    std::fprintf(stderr, "config_fuzzer: the target changed in the round trip:\n%s\n---\n%s\n",
                 yaml.c_str(), yaml_again.c_str());
    std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const fs::path path = work_dir() / "input.yaml";
  write_file(path, reinterpret_cast<const char*>(data), size);
  if (const Result<Target> target = load_target(path.string()); target.is_ok()) {
    check_round_trip(*target);
  }
  static_cast<void>(load_policy(path.string()));
  static_cast<void>(load_deployment(path.string(), fake_machine));
  return 0;
}
