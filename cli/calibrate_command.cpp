#include "cli/calibrate_command.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <set>
#include <sstream>

#include "hsched/atomic_file.h"
#include "hsched/calibrate.h"
#include "hsched/config.h"

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

// This machine's devices (those of --devices), the host among them found again by its API;
// `host` gets the host's profile, `found` (when given) every device found here.
Result<Target> devices_here(const CalibrateArgs& args, DeviceProfile& host,
                            Target* found = nullptr) {
  Target target = discover_target();
  if (found != nullptr) *found = target;
  if (!args.devices.empty()) {
    HSCHED_ASSIGN_OR_RETURN(target, restrict_devices(target, args.devices));
  }
  for (DeviceProfile& device : target.devices) {
    // The host is found again by its API: a calibrated profile runs where it was measured.
    if (device.api == DeviceApi::kHost) {
      device.locator = "host";
      host = device;
    }
  }
  return target;
}

// `--check FILE`: each device of the profile present here, its probe timed again.
Result<std::string> run_check(const CalibrateArgs& args, const CalibrateOptions& options,
                              std::ostream& err) {
  HSCHED_ASSIGN_OR_RETURN(Target calibrated, load_target(args.check));
  DeviceProfile host;
  HSCHED_ASSIGN_OR_RETURN(Target here, devices_here(args, host));
  std::ostringstream text;
  int checked = 0;
  for (const DeviceProfile& device : here.devices) {
    const DeviceProfile* then = same_device(calibrated, device);
    if (then == nullptr) continue;
    Result<SpeedCheck> check = check_device(device, host, *then, options);
    err << "\n";
    if (!check.is_ok()) return check.status().with_context(args.check);
    ++checked;
    for (const std::string& line : check->lines) text << "  " << line << "\n";
    char summary[160];
    std::snprintf(summary, sizeof(summary),
                  "%s: now/then %.2f (median of %d probes, %.2f to %.2f): %.0f%% %s than at "
                  "calibration",
                  device.id.c_str(), check->ratio, check->probes, check->lowest, check->highest,
                  std::abs(check->ratio - 1) * 100, check->ratio >= 1 ? "slower" : "faster");
    text << summary << " (" << then->calibration << ")\n";
  }
  if (checked == 0) {
    return invalid_argument(args.check + ": none of its devices is on this machine");
  }
  return text.str();
}

}  // namespace

Result<std::string> run_calibrate(const CalibrateArgs& args, std::ostream& err) {
  if (args.threads < 1 || args.threads > kMaxThreads) {
    return invalid_argument("--threads must be in [1, " + std::to_string(kMaxThreads) + "]");
  }
  if (args.rounds < 1 || args.rounds > kMaxRounds) {
    return invalid_argument("--rounds must be in [1, " + std::to_string(kMaxRounds) + "]");
  }
  CalibrateOptions options;
  options.cpu_threads = args.threads;
  options.fresh = args.fresh;
  options.protocol.rounds = args.rounds;
  options.progress = [&err](const std::string& device, int done, int total) {
    draw_bar(err, device, done, total);
  };
  if (!args.check.empty()) return run_check(args, options, err);
  if (args.output.empty()) return invalid_argument("-o: no file given");
  HSCHED_ASSIGN_OR_RETURN(Target previous, previous_target(args.output, args.fresh));
  DeviceProfile host;
  Target found;
  HSCHED_ASSIGN_OR_RETURN(Target target, devices_here(args, host, &found));
  Target calibrated;
  calibrated.name = "calibrated-" + host_name();
  calibrated.source = args.output;
  std::ostringstream text;
  std::set<std::string> listed;  // what --devices names: it keeps the host CPU in any case
  if (!args.devices.empty()) {
    HSCHED_ASSIGN_OR_RETURN(listed, listed_devices(found, args.devices));
  }
  for (const DeviceProfile& device : target.devices) {
    // The host CPU that --devices did not name keeps its earlier calibration (the loop below),
    // so that `--devices gpu --fresh` measures the GPU again, not the CPU too.
    if (device.id == host.id && !args.devices.empty() && listed.count(device.id) == 0 &&
        same_device(previous, device) != nullptr) {
      continue;
    }
    Result<CalibrationReport> report =
        calibrate_device(device, host, same_device(previous, device), options);
    err << "\n";
    if (!report.is_ok()) return report.status().with_context("calibrate " + device.id);
    text << device.id << " (" << device.name << "): " << report->measured << " measured, "
         << report->reused << " reused, " << report->skipped << " not supported\n";
    for (const std::string& line : report->lines) text << "  " << line << "\n";
    if (!report->rounds_agreed) {
      err << "hsched: warning: " << device.id << ": its rounds did not agree (" << report->rounds
          << "): its speed moved while it was measured, so its figures may be off; calibrate it "
             "again when the machine is quiet\n";
    }
    calibrated.devices.push_back(std::move(report->profile));
  }
  // A device of this machine that --devices left out keeps its earlier calibration: calibrating
  // the CPU again does not drop the GPU's.
  for (DeviceProfile& earlier : bind_present(previous, found).devices) {
    const bool id_taken = std::any_of(calibrated.devices.begin(), calibrated.devices.end(),
                                      [&](const DeviceProfile& d) { return d.id == earlier.id; });
    if (!earlier.present || id_taken || same_device(calibrated, earlier) != nullptr) continue;
    text << earlier.id << " (" << earlier.name << "): kept as calibrated before ("
         << earlier.calibration << "), not in --devices\n";
    calibrated.devices.push_back(std::move(earlier));
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
