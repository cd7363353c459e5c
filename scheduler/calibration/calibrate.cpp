#include "scheduler/calibration/calibrate.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <memory>
#include <set>
#include <thread>
#include <tuple>
#include <utility>

#include "hsched/config.h"
#include "scheduler/calibration/calibrate_specs.h"
#include "scheduler/planner/cost_model.h"
#include "scheduler/planner/schedule.h"
#include "scheduler/runtime/compile.h"
#include "scheduler/runtime/partition_program.h"

namespace hsched::calibration {
namespace {

constexpr int kProgressSteps = 100;  // progress reported in 1% steps
// Every benchmark runs as a short and a long chain (or fan) of equal nodes: the difference is
// the nodes alone, without the partition's overhead or the layout changes at its ends.
constexpr int kShortChain = 2;
constexpr int kLongChain = 8;
constexpr int kTinyChain = 9;        // the long tiny chain of the overhead benchmark
constexpr int kStreamLong = 321;     // OpenCL: the tiny chain past kStreamKnee
constexpr double kMergeWork = 0.02;  // points closer than 2% in work become one
constexpr size_t kProbeStride = 6;   // every 6th benchmark is kept as measured in the probe
// Idle time before a wake-up run: past libgomp's spin (its default GOMP_SPINCOUNT, about 1 ms)
// and oneTBB's, as a device waiting for another's partition.
constexpr std::chrono::milliseconds kIdle{2};

// ---------------------------------------------------------------------------------------------
// A benchmark compiled for the device.

// What a benchmark's run reports: its partitions' compute (less their copies), their copies, or
// (through the executor only) the caller's wall time of the request outside its partitions.
enum class Part { kCompute, kUpload, kDownload, kDispatch };

// A curve of the profile: DeviceProfile::curves' (class, precision), or with `qdq` its
// qdq_curves' class.
using CurveKey = std::tuple<CostClass, Precision, bool>;

struct Bench {
  Spec spec;
  std::unique_ptr<Graph> graph;      // the Executable refers to it: it must not move
  std::shared_ptr<Program> program;  // run directly (curves), or ...
  std::unique_ptr<Executable> exe;   // ... through the executor (overheads)
  std::vector<Tensor> inputs;
  double work = 0;  // per node, in the class's unit
  double compile_ms = 0;
  bool baseline = false;  // the previous pair's chains without what they measure
};

// How calibration compiles: the CPU with its thread count, OpenCL programs cached.
ExecutorOptions executor_options_of(const CalibrateOptions& options) {
  ExecutorOptions executor;
  executor.cache_dir = options.cache_dir;
  executor.cpu_threads = options.cpu_threads;
  executor.time_transfers = true;  // the copy classes are measured apart from the compute
  return executor;
}

// Builds, plans on `device` alone (the host as the plan's last resort) and compiles: through
// `compiler` as one partition run directly on this thread (the nodes' own time), or, without
// one, through the executor (what a partition costs around its nodes). An Unimplemented status:
// the device does not take every node (the benchmark is skipped).
Result<Bench> make_bench(Spec spec, int nodes, const DeviceProfile& device,
                         const DeviceProfile& host, const CalibrateOptions& options,
                         runtime::PartitionCompiler* compiler) {
  Bench bench;
  bench.spec = std::move(spec);
  bench.spec.nodes = nodes;
  HSCHED_ASSIGN_OR_RETURN(Graph graph, spec_graph(bench.spec, nodes));
  bench.graph = std::make_unique<Graph>(std::move(graph));
  Target target;
  target.name = "calibrate";
  target.source = "calibrate";
  target.devices.push_back(host);
  if (device.id != host.id) target.devices.push_back(device);
  // A QDQ graph runs in the device's base precision, its 8-bit steps made by its Q/DQ nodes.
  const Precision planned = bench.spec.quantized ? base_precision(device) : bench.spec.precision;
  const Policy policy = devices_policy(device.id, planned);
  HSCHED_ASSIGN_OR_RETURN(Plan plan, schedule(*bench.graph, target, policy));
  for (const NodePlacement& node : plan.nodes) {
    if (node.device != device.id || node.precision != planned) {
      std::string why = node.detail.empty() ? "" : " (" + node.detail + ")";
      return Status(ErrorCode::kUnimplemented, bench.spec.name + ": " + device.id +
                                                   " does not take " +
                                                   bench.graph->node(node.node).op_type + why);
    }
  }
  bench.inputs = random_inputs(*bench.graph);
  HSCHED_ASSIGN_OR_RETURN(bench.work, point_work(bench.spec, nodes, device, bench.graph.get()));
  const auto start = std::chrono::steady_clock::now();
  if (compiler != nullptr) {
    // Every node in one partition, a fan of independent nodes included.
    Partition whole;
    whole.device = device.id;
    for (size_t n = 0; n < bench.graph->nodes().size(); ++n) {
      whole.nodes.push_back(static_cast<NodeId>(n));
    }
    Result<std::shared_ptr<Program>> program = compiler->compile(plan, whole, *bench.graph);
    compiler->forget_programs();  // the next benchmark's nodes have the same ids
    if (!program.is_ok()) {
      return Status(ErrorCode::kUnimplemented, bench.spec.name + ": " + device.id +
                                                   " failed to compile it (" +
                                                   program.status().message() + ")");
    }
    bench.program = std::move(*program);
  } else {
    HSCHED_ASSIGN_OR_RETURN(bench.exe, compile(*bench.graph, plan, executor_options_of(options)));
  }
  bench.compile_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return bench;
}

// Writes a buffer a few times the size of the private caches of the `threads` cores that run.
// In a model each layer's weights come from the shared cache or memory, not from the core's
// own: a chain run again and again would keep them there, and measure faster than any model
// runs. Not the shared cache: a model's weights stay there from one run to the next.
void evict_private_caches(int threads) {
  static const size_t per_core = [] {
    const long l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
    return l2 > 0 ? static_cast<size_t>(l2) : size_t{1} << 20;
  }();
  const size_t bytes = std::clamp(per_core * static_cast<size_t>(std::max(1, threads)) * 4,
                                  size_t{4} << 20, size_t{64} << 20);
  static std::vector<unsigned char> buffer;
  if (buffer.size() < bytes) buffer.resize(bytes);
  static unsigned char pass = 0;
  ++pass;
  for (size_t i = 0; i < bytes; i += 64) buffer[i] = pass;
}

// A benchmark's timed run; `evict_threads` > 0: the private caches of that many cores are
// evicted first (evict_private_caches).
BenchRun run_of(Bench& bench, Part part, int evict_threads) {
  if (bench.program != nullptr && !bench.spec.timed_op.empty()) {
    return [&bench, evict_threads]() -> Result<double> {
      if (evict_threads > 0) evict_private_caches(evict_threads);
      bench.program->reset_profile();
      CopyRecord io;
      HSCHED_RETURN_IF_ERROR(bench.program->run(bench.inputs, &io).status());
      std::vector<StepProfile> steps;
      bench.program->append_profile(steps);
      double ms = 0;
      for (const StepProfile& step : steps) {
        if (step.op == bench.spec.timed_op) ms += step.mean_ms;
      }
      return ms;
    };
  }
  if (bench.program != nullptr) {
    return [&bench, part, evict_threads]() -> Result<double> {
      if (evict_threads > 0) evict_private_caches(evict_threads);
      CopyRecord io;
      const auto start = std::chrono::steady_clock::now();
      const Result<std::vector<Tensor>> outputs = bench.program->run(bench.inputs, &io);
      const double wall =
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
              .count();
      // The outputs are released after the clock stopped: a fan's outputs on a GPU are as large
      // as its nodes' work, and freeing 8 MiB the read wrote took 0.5 ms here, which the fan's
      // nodes would have been charged (a model frees only its last outputs).
      HSCHED_RETURN_IF_ERROR(outputs.status());
      switch (part) {
        case Part::kUpload:
          return io.upload_ms;
        case Part::kDownload:
          return io.download_ms;
        case Part::kCompute:
        case Part::kDispatch:
          break;
      }
      return wall - io.upload_ms - io.download_ms;
    };
  }
  return [&bench, part]() -> Result<double> {
    RunRecord record;
    const auto start = std::chrono::steady_clock::now();
    HSCHED_RETURN_IF_ERROR(bench.exe->run(bench.inputs, &record).status());
    // The caller's wall time, as `hsched run` times a request: its wake at the end included.
    const double wall =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    double ms = part == Part::kDispatch ? wall : 0;
    for (const PartitionRun& run : record.partitions) {
      switch (part) {
        case Part::kUpload:
          ms += run.upload_ms;
          break;
        case Part::kDownload:
          ms += run.download_ms;
          break;
        case Part::kCompute:
          ms += run.end_ms - run.start_ms - run.upload_ms - run.download_ms;
          break;
        case Part::kDispatch:
          ms -= run.end_ms - run.start_ms;
          break;
      }
    }
    return ms;
  };
}

// A curve the cost model can use: sorted by work; points closer than kMergeWork become one
// (equal works cannot be interpolated between), named after all; then each point's rate
// (work / ms) is the median of its own and its neighbours' (one odd shape or one noisy round
// does not bend the curve), and time never falls as work grows.
Curve smoothed(Curve curve) {
  std::sort(curve.begin(), curve.end(),
            [](const CurvePoint& a, const CurvePoint& b) { return a.work < b.work; });
  Curve out;
  int count = 0;
  for (const CurvePoint& point : curve) {
    if (!out.empty() && point.work <= out.back().work * (1 + kMergeWork)) {
      CurvePoint& last = out.back();
      ++count;
      last.ms += (point.ms - last.ms) / count;
      last.spread = std::max(last.spread, point.spread);
      last.bench += "+" + point.bench;
      continue;
    }
    out.push_back(point);
    count = 1;
  }
  std::vector<double> rate(out.size());
  for (size_t i = 0; i < out.size(); ++i) rate[i] = out[i].work / out[i].ms;
  for (size_t i = 1; i + 1 < out.size(); ++i) {
    out[i].ms = out[i].work / median_of({rate[i - 1], rate[i], rate[i + 1]});
  }
  for (size_t i = 1; i < out.size(); ++i) out[i].ms = std::max(out[i].ms, out[i - 1].ms);
  return out;
}

// The earlier point that holds `bench` (named alone or merged with others), or nullptr.
const CurvePoint* find_point(const DeviceProfile& previous, const std::string& bench) {
  const auto in = [&](const Curve& curve) -> const CurvePoint* {
    for (const CurvePoint& point : curve) {
      const std::string names = "+" + point.bench + "+";
      if (names.find("+" + bench + "+") != std::string::npos) return &point;
    }
    return nullptr;
  };
  for (const auto& [key, curve] : previous.curves) {
    if (const CurvePoint* point = in(curve)) return point;
  }
  for (const auto& [key, curve] : previous.qdq_curves) {
    if (const CurvePoint* point = in(curve)) return point;
  }
  return nullptr;
}

std::string figure_line(const std::string& what, const std::string& bench, double work, bool flop,
                        double ms, double spread) {
  char line[200];
  const double rate = ms > 0 ? work / ms / 1e6 : 0;  // GFLOP/s or GB/s
  std::snprintf(line, sizeof(line), "%-15s %-28s %9.3g %-5s %9.4f ms %8.1f %-7s +-%.0f%%",
                what.c_str(), bench.c_str(), flop ? work / 1e6 : work / 1024.0,
                flop ? "MFLOP" : "KiB", ms, rate, flop ? "GFLOP/s" : "GB/s", spread * 100);
  return line;
}

// How a profile names the CPU thread count it was measured with.
std::string threads_text(const CalibrateOptions& options) {
  return std::to_string(options.cpu_threads) + " CPU threads";
}

std::string today_utc() {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char text[32];
  std::strftime(text, sizeof(text), "%Y-%m-%d %H:%M UTC", &utc);
  return text;
}

// The figures the roofline falls back on for what has no curve, from the curves: peaks (the
// best compute rate per precision), memory bandwidth (the best elementwise rate), the link's
// latency and bandwidth (the copy curves' ends). Copy curves the executor did not time (inputs
// read in place) are dropped.
void summarize_curves(DeviceProfile& profile) {
  for (const auto& [key, curve] : profile.curves) {
    for (const CurvePoint& point : curve) {
      const double rate = point.work / point.ms / 1e6;
      if (is_compute_class(key.first)) {
        double& peak = profile.peak_gflops[key.second];
        peak = std::max(peak, rate);
      } else if (key.first == CostClass::kElementwise) {
        profile.memory_bandwidth_gbps = std::max(profile.memory_bandwidth_gbps, rate);
      }
    }
  }
  // A link whose copies the executor did not time (inputs read in place) has no copy curve.
  for (CostClass side : {CostClass::kUpload, CostClass::kDownload}) {
    const auto curve = profile.curves.find({side, Precision::kFp32});
    if (curve == profile.curves.end()) continue;
    const bool timed = std::any_of(curve->second.begin(), curve->second.end(),
                                   [](const CurvePoint& p) { return p.ms > 1e-4; });
    if (!timed) profile.curves.erase(curve);
  }
  if (const auto upload = profile.curves.find({CostClass::kUpload, Precision::kFp32});
      upload != profile.curves.end() && upload->second.size() >= 2) {
    const CurvePoint& small = upload->second.front();
    const CurvePoint& large = upload->second.back();
    profile.transfer_latency_ms = small.ms;
    const double gbps = (large.work - small.work) / std::max(1e-6, large.ms - small.ms) / 1e6;
    if (gbps > 0 && gbps < 1e4) profile.transfer_bandwidth_gbps = gbps;
  }
}

}  // namespace

Result<CalibrationReport> calibrate_one_device(const DeviceProfile& device, const DeviceProfile& host,
                                           const DeviceProfile* previous,
                                           const CalibrateOptions& options) {
  if (!device.present) {
    return invalid_argument("calibrate: " + device.id + " is not present on this machine");
  }
  CalibrationReport report;
  DeviceProfile& profile = report.profile;
  profile = device;
  profile.curves.clear();
  profile.qdq_curves.clear();
  const std::string threads = threads_text(options);
  const bool reuse = previous != nullptr && !options.fresh && previous->name == device.name &&
                     previous->locator == device.locator &&
                     previous->calibration.find(threads) != std::string::npos;

  // A check measures its probe alone (no copies, no long streams); a calibration keeps every
  // kProbeStride-th benchmark in the probe.
  const bool check = !options.only.empty();
  std::set<std::string> probe_names;
  std::vector<Spec> specs = specs_for(device);
  for (size_t i = 0; i < specs.size(); ++i) {
    const std::string& name = specs[i].name;
    const bool probe =
        check ? std::find(options.only.begin(), options.only.end(), name) != options.only.end()
              : i % kProbeStride == 0;
    if (probe) probe_names.insert(name);
  }
  if (check) {
    std::erase_if(specs, [&](const Spec& spec) { return probe_names.count(spec.name) == 0; });
  }
  // The overhead chains and the copies in the device's base precision: an NPU computes no fp32.
  const auto in_base = [base = base_precision(device)](Spec spec) {
    spec.precision = base;
    return spec;
  };
  std::vector<Spec> copy_specs;
  if (device.api != DeviceApi::kHost && !device.zero_copy && !check) {
    for (int64_t elements :
         {int64_t{1} << 10, int64_t{64} << 10, int64_t{1} << 20, int64_t{8} << 20}) {
      copy_specs.push_back(in_base(copy_spec(elements)));
    }
  }

  const ExecutorOptions executor_options = executor_options_of(options);
  runtime::PartitionCompiler compiler(executor_options);
  ExecutorOptions profiling_options = executor_options;
  profiling_options.profile = true;
  runtime::PartitionCompiler profiling_compiler(profiling_options);
  std::vector<Bench> benches;
  std::vector<CurvePoint> reused;
  std::vector<CurveKey> reused_keys;
  const auto add_bench = [&](Spec spec) -> Status {
    if (reuse) {
      if (const CurvePoint* point = find_point(*previous, spec.name)) {
        // Its work counted as the cost model counts it now, which may differ from then.
        HSCHED_ASSIGN_OR_RETURN(const double work, point_work(spec, kShortChain, device));
        reused.push_back(*point);
        reused.back().bench = spec.name;
        reused.back().work = work;
        reused_keys.push_back({spec.cost_class, spec.precision, spec.quantized});
        ++report.reused;
        if (probe_names.count(spec.name) != 0) {
          for (const CurvePoint& probe : previous->probe) {
            if (probe.bench == spec.name) profile.probe.push_back(probe);
          }
        }
        return Status::ok();
      }
    }
    // benches holds each spec's short chain, then its long one; then, for a spec with a
    // baseline, the baseline's two.
    std::vector<Spec> chains{spec};
    if (spec.baseline) {
      Spec& baseline = chains.emplace_back(spec);
      baseline.name += "_baseline";
      baseline.build = std::exchange(baseline.baseline, nullptr);
      baseline.work_node = 0;  // its work is not plotted
    }
    std::vector<Bench> made;
    for (const Spec& chain : chains) {
      for (int nodes : {kShortChain, kLongChain}) {
        Result<Bench> bench = make_bench(chain, nodes, device, host, options,
                                         chain.timed_op.empty() ? &compiler : &profiling_compiler);
        if (bench.status().code() == ErrorCode::kUnimplemented) {
          ++report.skipped;
          report.lines.push_back("skipped         " + bench.status().message());
          return Status::ok();
        }
        HSCHED_RETURN_IF_ERROR(bench.status());
        bench->baseline = made.size() >= 2;
        made.push_back(std::move(*bench));
      }
    }
    for (Bench& bench : made) benches.push_back(std::move(bench));
    return Status::ok();
  };
  // The overhead chains come first and are always measured: everything else is net of them.
  // The first compile of a session may build programs from source; the second one is what a
  // deployment with a warm program cache pays, and what the compile figures are taken from.
  HSCHED_RETURN_IF_ERROR(
      make_bench(in_base(tiny_spec(1)), 1, device, host, options, nullptr).status());
  HSCHED_ASSIGN_OR_RETURN(Bench tiny_one,
                          make_bench(in_base(tiny_spec(1)), 1, device, host, options, nullptr));
  HSCHED_ASSIGN_OR_RETURN(Bench tiny_long, make_bench(in_base(tiny_spec(kTinyChain)), kTinyChain,
                                                      device, host, options, nullptr));
  HSCHED_ASSIGN_OR_RETURN(Bench wake,
                          make_bench(in_base(wake_spec()), 1, device, host, options, nullptr));
  // OpenCL: tiny chains as long as models' partitions, whose kernels past kStreamKnee may cost
  // more than the short chains' (a driver's limit on queued commands).
  std::vector<Bench> streams;
  if (device.api == DeviceApi::kOpenCl && !check) {
    for (int nodes : {kStreamKnee, kStreamLong}) {
      HSCHED_ASSIGN_OR_RETURN(Bench stream, make_bench(in_base(tiny_spec(nodes)), nodes, device,
                                                       host, options, nullptr));
      streams.push_back(std::move(stream));
    }
  }
  for (Spec& spec : specs) HSCHED_RETURN_IF_ERROR(add_bench(std::move(spec)));
  std::vector<Bench> copy_benches;
  for (Spec& spec : copy_specs) {
    const std::string base = spec.name;
    const bool have = reuse && find_point(*previous, base + "_up") != nullptr &&
                      find_point(*previous, base + "_down") != nullptr;
    if (have) {
      for (const auto& [suffix, cost_class] :
           {std::pair{"_up", CostClass::kUpload}, std::pair{"_down", CostClass::kDownload}}) {
        reused.push_back(*find_point(*previous, base + suffix));
        reused.back().bench = base + suffix;
        reused_keys.push_back({cost_class, Precision::kFp32, false});
        ++report.reused;
      }
      continue;
    }
    HSCHED_ASSIGN_OR_RETURN(Bench bench,
                            make_bench(std::move(spec), 1, device, host, options, &compiler));
    copy_benches.push_back(std::move(bench));
  }

  // measured[0..2]: the tiny chains, and the tiny partition's request outside its span.
  constexpr size_t kFirstBench = 3;
  std::vector<BenchRun> runs{run_of(tiny_one, Part::kCompute, 0),
                             run_of(tiny_long, Part::kCompute, 0),
                             run_of(tiny_one, Part::kDispatch, 0)};
  const bool on_host = device.api == DeviceApi::kHost;
  const int evict_threads = on_host ? options.cpu_threads : 0;
  for (Bench& bench : benches) runs.push_back(run_of(bench, Part::kCompute, evict_threads));
  for (Bench& bench : copy_benches) {
    runs.push_back(run_of(bench, Part::kUpload, 0));
    runs.push_back(run_of(bench, Part::kDownload, 0));
  }
  const size_t first_stream = runs.size();
  for (Bench& bench : streams) runs.push_back(run_of(bench, Part::kCompute, 0));
  // A partition that uses the device's threads, run back to back and after the device idled,
  // as one that waits for another device's partition: its threads went to sleep meanwhile. On the
  // host also the tiny partition after idling: what any partition pays to be handed over, the
  // rest being the OpenMP team's wake, paid by partitions that run a oneDNN primitive.
  const auto after_idle = [](BenchRun run) -> BenchRun {
    return [run = std::move(run)]() {
      std::this_thread::sleep_for(kIdle);
      return run();
    };
  };
  if (on_host) runs.push_back(after_idle(run_of(tiny_one, Part::kCompute, 0)));
  runs.push_back(run_of(wake, Part::kCompute, 0));
  runs.push_back(after_idle(run_of(wake, Part::kCompute, 0)));
  int shown = -1;
  const auto progress = [&](int done, int total) {
    const int step = total > 0 ? kProgressSteps * done / total : kProgressSteps;
    if (options.progress && step != shown) options.progress(device.id, done, total);
    shown = step;
  };
  HSCHED_ASSIGN_OR_RETURN(Measurement measurement,
                          measure_alternating(runs, options.protocol, progress));
  const std::vector<Measured>& measured = measurement.benches;
  std::string rounds = std::to_string(options.protocol.rounds) + " rounds";
  if (measurement.rounds_run > options.protocol.rounds) {
    rounds += " (" + std::to_string(measurement.first_round + 1) + "-" +
              std::to_string(measurement.first_round + options.protocol.rounds) + " of " +
              std::to_string(measurement.rounds_run) + ": the rounds disagreed)";
  }
  char noise[40];
  std::snprintf(noise, sizeof(noise), ", median spread +-%.0f%%", measurement.noise * 100);
  report.rounds = rounds + noise;
  report.rounds_agreed = measurement.agreed;
  report.lines.push_back("rounds          " + report.rounds);

  // Overheads: a node of the tiny chain, and what a partition costs beyond its nodes.
  const double tiny_node_ms = std::max(0.0, (measured[1].ms - measured[0].ms) / (kTinyChain - 1));
  profile.launch_overhead_ms = tiny_node_ms;
  profile.run_overhead_ms = std::max(0.0, measured[0].ms - tiny_node_ms);
  report.lines.push_back(figure_line("overhead", "run (per partition)", 0, false,
                                     profile.run_overhead_ms, measured[0].spread));
  report.lines.push_back(
      figure_line("overhead", "launch (per node)", 0, false, tiny_node_ms, measured[1].spread));
  if (!streams.empty()) {
    const Measured& knee = measured[first_stream];
    const Measured& past = measured[first_stream + 1];
    const double below = (knee.ms - measured[1].ms) / (kStreamKnee - kTinyChain);
    const double above = (past.ms - knee.ms) / (kStreamLong - kStreamKnee);
    profile.stream_overhead_ms = std::max(0.0, above - below);
    report.lines.push_back(
        figure_line("overhead", "stream (per kernel past " + std::to_string(kStreamKnee) + ")", 0,
                    false, profile.stream_overhead_ms, past.spread));
  }
  profile.dispatch_overhead_ms = std::max(0.0, measured[2].ms);
  report.lines.push_back(figure_line("overhead", "dispatch (executor)", 0, false,
                                     profile.dispatch_overhead_ms, measured[2].spread));
  // Wake: the partition after idling less back to back; on the host the tiny partition's share
  // is the hand-over, the rest the OpenMP team's.
  const double wake_ms = std::max(0.0, measured.back().ms - measured[measured.size() - 2].ms);
  const Measured& hand_over = on_host ? measured[measured.size() - 3] : measured.back();
  profile.wake_overhead_ms =
      on_host ? std::clamp(hand_over.ms - measured[0].ms, 0.0, wake_ms) : wake_ms;
  profile.team_wake_overhead_ms = wake_ms - profile.wake_overhead_ms;
  report.lines.push_back(figure_line("overhead", "wake (after idling)", 0, false,
                                     profile.wake_overhead_ms, hand_over.spread));
  if (on_host) {
    report.lines.push_back(figure_line("overhead", "team wake (oneDNN)", 0, false,
                                       profile.team_wake_overhead_ms, measured.back().spread));
  }

  // Curves: per-node time, the long chain's less the short one's over the nodes between them.
  std::map<CurveKey, Curve> curves;
  std::vector<double> compile_per_node;
  const double extra_nodes = kLongChain - kShortChain;
  // The long chain's time less the short one's: `nodes` more nodes. `noise` in ms.
  const auto difference = [&](size_t b, double& noise) {
    const Measured& short_m = measured[kFirstBench + b];
    const Measured& long_m = measured[kFirstBench + 1 + b];
    noise += long_m.spread * long_m.ms + short_m.spread * short_m.ms;
    return long_m.ms - short_m.ms;
  };
  for (size_t b = 0; b + 1 < benches.size(); b += 2) {
    const Bench& bench = benches[b + 1];
    if (bench.baseline) continue;
    double noise = 0;
    double extra_ms = difference(b, noise);
    if (b + 3 < benches.size() && benches[b + 3].baseline) extra_ms -= difference(b + 2, noise);
    const double ms = std::max(1e-6, extra_ms / extra_nodes);
    // The noise of a difference: the chains' spreads, relative to what is left.
    constexpr double kMaxSpread = 100;  // a difference lost in the noise says so, boundedly
    const double spread = std::min(kMaxSpread, noise / std::max(1e-6, extra_ms));
    curves[{bench.spec.cost_class, bench.spec.precision, bench.spec.quantized}].push_back(
        {bench.spec.name, bench.work, ms, spread});
    if (probe_names.count(bench.spec.name) != 0) {
      // The long chain's own time: a difference of two chains is too noisy to tell a speed by.
      const Measured& chain = measured[kFirstBench + 1 + b];
      profile.probe.push_back({bench.spec.name, bench.work, chain.ms, chain.spread});
    }
    compile_per_node.push_back(
        std::max(0.0, (bench.compile_ms - benches[b].compile_ms) / extra_nodes));
    report.lines.push_back(figure_line(
        std::string(cost_class_name(bench.spec.cost_class)) + " " +
            (bench.spec.quantized ? "qdq" : precision_name(bench.spec.precision)),
        bench.spec.name, bench.work, is_compute_class(bench.spec.cost_class), ms, spread));
    ++report.measured;
  }
  for (size_t c = 0; c < copy_benches.size(); ++c) {
    const Bench& bench = copy_benches[c];
    const double bytes = static_cast<double>(bench.inputs.at(0).byte_size());
    for (int side = 0; side < 2; ++side) {
      const Measured& m =
          measured[kFirstBench + benches.size() + 2 * c + static_cast<size_t>(side)];
      const CostClass cost_class = side == 0 ? CostClass::kUpload : CostClass::kDownload;
      const std::string name = bench.spec.name + (side == 0 ? "_up" : "_down");
      curves[{cost_class, Precision::kFp32, false}].push_back(
          {name, bytes, std::max(1e-6, m.ms), m.spread});
      report.lines.push_back(
          figure_line(cost_class_name(cost_class), name, bytes, false, m.ms, m.spread));
      ++report.measured;
    }
  }
  for (size_t r = 0; r < reused.size(); ++r) curves[reused_keys[r]].push_back(reused[r]);
  for (auto& [key, curve] : curves) {
    const auto& [cost_class, precision, qdq] = key;
    (qdq ? profile.qdq_curves[cost_class] : profile.curves[{cost_class, precision}]) =
        smoothed(std::move(curve));
  }

  // Scalars for what has no curve (the roofline's fallbacks) and for reports.
  if (reuse || compile_per_node.empty()) {
    if (reuse) profile.compile_ms_per_node = previous->compile_ms_per_node;
  } else {
    profile.compile_ms_per_node = median_of(compile_per_node);
  }
  profile.compile_ms_per_partition =
      reuse ? previous->compile_ms_per_partition : tiny_one.compile_ms;
  summarize_curves(profile);
  profile.calibration = "hsched calibrate, " + today_utc() + ", " + threads + ", " + rounds;
  return report;
}

Result<SpeedCheck> check_one_device(const DeviceProfile& device, const DeviceProfile& host,
                                const DeviceProfile& calibrated, const CalibrateOptions& options) {
  if (calibrated.probe.empty()) {
    return invalid_argument(device.id +
                            ": the profile keeps no probe to time again (calibrated before "
                            "hsched kept one); calibrate it again with --fresh");
  }
  if (calibrated.calibration.find(threads_text(options)) == std::string::npos) {
    return invalid_argument(device.id + ": calibrated as \"" + calibrated.calibration +
                            "\", not with " + threads_text(options) + " (pass --threads)");
  }
  CalibrateOptions again = options;
  again.fresh = true;
  again.only.clear();
  for (const CurvePoint& point : calibrated.probe) again.only.push_back(point.bench);
  HSCHED_ASSIGN_OR_RETURN(CalibrationReport now, calibrate_one_device(device, host, nullptr, again));
  SpeedCheck check;
  std::vector<double> ratios;
  for (const CurvePoint& then : calibrated.probe) {
    const auto found = std::find_if(now.profile.probe.begin(), now.profile.probe.end(),
                                    [&](const CurvePoint& p) { return p.bench == then.bench; });
    if (found == now.profile.probe.end()) {
      check.lines.push_back(then.bench + ": not measured now (no longer a benchmark, or " +
                            device.id + " does not take it)");
      continue;
    }
    const double ratio = found->ms / then.ms;
    ratios.push_back(ratio);
    char line[200];
    std::snprintf(line, sizeof(line), "%-28s then %9.4f ms +-%.0f%%  now %9.4f ms +-%.0f%%  %5.2fx",
                  then.bench.c_str(), then.ms, then.spread * 100, found->ms, found->spread * 100,
                  ratio);
    check.lines.push_back(line);
  }
  if (ratios.empty()) {
    return invalid_argument(device.id + ": none of the profile's probe benchmarks runs now");
  }
  check.probes = static_cast<int>(ratios.size());
  const auto [lowest, highest] = std::minmax_element(ratios.begin(), ratios.end());
  check.lowest = *lowest;
  check.highest = *highest;
  check.ratio = median_of(std::move(ratios));
  return check;
}

}  // namespace hsched::calibration

namespace hsched {

Result<CalibrationReport> calibrate_device(const DeviceProfile& device, const DeviceProfile& host,
                                           const DeviceProfile* previous,
                                           const CalibrateOptions& options) {
  return calibration::calibrate_one_device(device, host, previous, options);
}

Result<SpeedCheck> check_device(const DeviceProfile& device, const DeviceProfile& host,
                                const DeviceProfile& calibrated, const CalibrateOptions& options) {
  return calibration::check_one_device(device, host, calibrated, options);
}

}  // namespace hsched
