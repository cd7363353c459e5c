#include "cli/calibrate_command.h"

#include <unistd.h>

#include <filesystem>
#include <sstream>

#include "graph/atomic_file.h"
#include "scheduler/calibrate.h"
#include "scheduler/config_yaml.h"
#include "scheduler/discover.h"
#include "scheduler/target_select.h"

namespace hsched::cli {
namespace {

namespace fs = std::filesystem;

constexpr int kBarWidth = 30;
constexpr int kMaxThreads = 1024;
constexpr int kMaxRounds = 100;

// "calibrate cpu0 [##########..........]  33%", redrawn in place.
void draw_bar(std::ostream& err, const std::string& device, int done, int total) {
  const int filled = total > 0 ? kBarWidth * done / total : kBarWidth;
  err << "\rcalibrate " << device << " [" << std::string(static_cast<size_t>(filled), '#')
      << std::string(static_cast<size_t>(kBarWidth - filled), '.') << "] "
      << (total > 0 ? 100 * done / total : 100) << "%" << std::flush;
}

// The earlier calibration in `path`, when the file is there; a file that is not a target
// profile is an error (it would be overwritten) unless `fresh`.
Result<Target> previous_target(const std::string& path, bool fresh) {
  std::error_code ec;
  if (!fs::exists(path, ec)) return Target{};
  Result<Target> loaded = load_target(path);
  if (!loaded.is_ok() && fresh) return Target{};
  if (!loaded.is_ok()) {
    return invalid_argument(loaded.status().message() +
                            " (-o names an existing file that is not a target profile; "
                            "--fresh overwrites it)");
  }
  return loaded;
}

const DeviceProfile* same_device(const Target& target, const DeviceProfile& device) {
  for (const DeviceProfile& d : target.devices) {
    if (d.name == device.name && d.locator == device.locator) return &d;
  }
  return nullptr;
}

std::string host_name() {
  char name[256] = {};
  if (::gethostname(name, sizeof(name) - 1) != 0 || name[0] == '\0') return "this-machine";
  std::string id;
  for (const char c : std::string(name))
    id += std::isalnum(static_cast<unsigned char>(c)) ? c : '-';
  return id;
}

}  // namespace

Result<std::string> run_calibrate(const CalibrateArgs& args, std::ostream& err) {
  if (args.threads < 1 || args.threads > kMaxThreads) {
    return invalid_argument("--threads must be in [1, " + std::to_string(kMaxThreads) + "]");
  }
  if (args.rounds < 1 || args.rounds > kMaxRounds) {
    return invalid_argument("--rounds must be in [1, " + std::to_string(kMaxRounds) + "]");
  }
  if (args.output.empty()) return invalid_argument("-o: no file given");
  HSCHED_ASSIGN_OR_RETURN(Target previous, previous_target(args.output, args.fresh));
  Target target = sched::discover_target();
  if (!args.devices.empty()) {
    HSCHED_ASSIGN_OR_RETURN(target, sched::restrict_devices(target, args.devices));
  }
  DeviceProfile host;
  for (DeviceProfile& device : target.devices) {
    // The host is found again by its API: a calibrated profile runs where it was measured.
    if (device.api == DeviceApi::kHost) {
      device.locator = "host";
      host = device;
    }
  }

  sched::CalibrateOptions options;
  options.cpu_threads = args.threads;
  options.fresh = args.fresh;
  options.protocol.rounds = args.rounds;
  options.progress = [&err](const std::string& device, int done, int total) {
    draw_bar(err, device, done, total);
  };
  Target calibrated;
  calibrated.name = "calibrated-" + host_name();
  calibrated.source = args.output;
  std::ostringstream text;
  for (const DeviceProfile& device : target.devices) {
    Result<sched::CalibrationReport> report =
        sched::calibrate_device(device, host, same_device(previous, device), options);
    err << "\n";
    if (!report.is_ok()) return report.status().with_context("calibrate " + device.id);
    text << device.id << " (" << device.name << "): " << report->measured << " measured, "
         << report->reused << " reused, " << report->skipped << " not supported\n";
    for (const std::string& line : report->lines) text << "  " << line << "\n";
    calibrated.devices.push_back(std::move(report->profile));
  }
  const std::string header =
      "Target profile measured by `hsched calibrate` on " + host_name() +
      ".\n"
      "Each curve point: one node's median time (ms) for its work (FLOP, or bytes moved), and\n"
      "the spread of the round medians it came from. Use it with --target " +
      args.output + ".";
  HSCHED_RETURN_IF_ERROR(write_file_atomically(args.output, target_yaml(calibrated, header)));
  text << "wrote " << args.output << " (use it with --target " << args.output << ")\n";
  return text.str();
}

}  // namespace hsched::cli
