#include "hsched/trace.h"

#include <algorithm>
#include <cmath>
#include <map>

#include <nlohmann/json.hpp>

#include "hsched/atomic_file.h"

namespace hsched {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr int kPid = 1;

// One "X" event before it has a track; times in ms on the executor's time line.
struct Event {
  std::string name;
  std::string cat;
  double start_ms = 0;
  double end_ms = 0;
  json args = json::object();
};

// A partition run or a compile step, with the events drawn inside it on the same track.
struct Span {
  std::string device;
  Event event;
  std::vector<Event> inner;
};

// Nanoseconds, so that an event inside another one stays inside after the unit change.
int64_t to_ns(double ms) { return std::llround(ms * 1e6); }

json complete_event(const Event& event, int tid) {
  const int64_t start = to_ns(event.start_ms);
  const int64_t end = std::max(start, to_ns(event.end_ms));
  return {{"name", event.name},
          {"cat", event.cat},
          {"ph", "X"},
          {"ts", static_cast<double>(start) / 1000.0},
          {"dur", static_cast<double>(end - start) / 1000.0},
          {"pid", kPid},
          {"tid", tid},
          {"args", event.args}};
}

json metadata_event(const std::string& name, int tid, json args) {
  return {{"name", name}, {"ph", "M"}, {"pid", kPid}, {"tid", tid}, {"args", std::move(args)}};
}

// [start, start + ms] within [lo, hi].
Event inner_event(std::string name, std::string cat, double start, double ms, double lo,
                  double hi) {
  Event event{std::move(name), std::move(cat), 0, 0, json::object()};
  event.start_ms = std::clamp(start, lo, hi);
  event.end_ms = std::clamp(start + std::max(ms, 0.0), event.start_ms, hi);
  return event;
}

Span partition_span(const Plan& plan, const RunRecord& record, const PartitionRun& run,
                    size_t request) {
  Span span;
  span.device = run.device;
  const double start = run.start_ms;
  const double end = std::max(run.start_ms, run.end_ms);
  span.event = {"partition " + std::to_string(run.partition),
                "partition",
                start,
                end,
                {{"request", request}, {"partition", run.partition}, {"plan", record.plan}}};
  // A request of progressive start's CPU plan ran partitions of that plan, not of `plan`.
  const bool known = record.plan != "cpu" && run.partition >= 0 &&
                     static_cast<size_t>(run.partition) < plan.partitions.size();
  if (known) {
    const Partition& partition = plan.partitions[static_cast<size_t>(run.partition)];
    span.event.args["nodes"] = partition.nodes.size();
    span.event.args["predicted_ms"] = partition.compute_ms;
    if (partition.device != run.device) span.event.args["planned_device"] = partition.device;
  }
  // The order inside a device partition: its inputs written, its kernels, its outputs read back,
  // then the CPU reference and the comparison.
  if (run.upload_bytes > 0 || run.zero_copy_bytes > 0 || run.upload_ms > 0) {
    Event upload = inner_event("upload", "transfer", start, run.upload_ms, start, end);
    upload.args = {{"bytes", run.upload_bytes},
                   {"zero_copy_bytes", run.zero_copy_bytes},
                   {"partition", run.partition}};
    span.inner.push_back(std::move(upload));
  }
  const double verify_ms = run.verified ? std::max(run.verify_ms, 0.0) : 0.0;
  if (run.download_bytes > 0 || run.download_ms > 0) {
    const double ms = std::max(run.download_ms, 0.0);
    Event download = inner_event("download", "transfer", end - verify_ms - ms, ms, start, end);
    download.args = {{"bytes", run.download_bytes}, {"partition", run.partition}};
    span.inner.push_back(std::move(download));
  }
  if (run.verified) {
    Event verify = inner_event("verify", "verify", end - verify_ms, verify_ms, start, end);
    verify.args = {{"partition", run.partition}};
    span.inner.push_back(std::move(verify));
  }
  return span;
}

Span compile_span(const CompileRecord& record) {
  Span span;
  span.device = record.device;
  span.event = {"compile partition " + std::to_string(record.partition),
                "compile",
                record.start_ms,
                std::max(record.start_ms, record.end_ms),
                {{"partition", record.partition}}};
  if (!record.error.empty()) span.event.args["error"] = record.error;
  return span;
}

// Thread tracks: one per device (the target's order first), more where spans overlap.
class Tracks {
 public:
  explicit Tracks(const Plan& plan) {
    for (const DeviceProfile& device : plan.target.devices) order_.push_back(device.id);
  }

  // The track `span` goes on: the device's first track whose last span has ended.
  int place(const Span& span) {
    std::vector<Lane>& lanes = lanes_[span.device];
    for (Lane& lane : lanes) {
      if (lane.end_ns <= to_ns(span.event.start_ms)) {
        lane.end_ns = to_ns(span.event.end_ms);
        return lane.tid;
      }
    }
    lanes.push_back({++placed_tracks_, to_ns(span.event.end_ms)});
    return lanes.back().tid;
  }

  // Renumbers the tracks (device order, then lane) and returns the old -> new tid map, with
  // the metadata events naming and ordering them.
  std::map<int, int> finish(json& events) const {
    std::vector<std::string> devices;
    for (const std::string& id : order_) {
      if (lanes_.count(id) != 0) devices.push_back(id);
    }
    for (const auto& [id, lanes] : lanes_) {
      if (std::find(devices.begin(), devices.end(), id) == devices.end()) devices.push_back(id);
    }
    std::map<int, int> tids;
    int next = 1;
    for (size_t d = 0; d < devices.size(); ++d) {
      const std::vector<Lane>& lanes = lanes_.at(devices[d]);
      for (size_t k = 0; k < lanes.size(); ++k) {
        const int tid = next++;
        tids[lanes[k].tid] = tid;
        const std::string name =
            k == 0 ? devices[d] : devices[d] + " (" + std::to_string(k + 1) + ")";
        events.push_back(metadata_event("thread_name", tid, {{"name", name}}));
        events.push_back(metadata_event("thread_sort_index", tid,
                                        {{"sort_index", static_cast<int>(d * 1000 + k)}}));
      }
    }
    return tids;
  }

 private:
  struct Lane {
    int tid = 0;  // provisional (order of creation) until finish()
    int64_t end_ns = 0;
  };
  std::vector<std::string> order_;
  std::map<std::string, std::vector<Lane>> lanes_;
  int placed_tracks_ = 0;
};

}  // namespace

std::string chrome_trace(const Plan& plan, const ExecutableStats& stats,
                         const std::vector<RunRecord>& records) {
  std::vector<Span> spans;
  for (const CompileRecord& record : stats.compiles) spans.push_back(compile_span(record));
  for (size_t request = 0; request < records.size(); ++request) {
    for (const PartitionRun& run : records[request].partitions) {
      spans.push_back(partition_span(plan, records[request], run, request));
    }
  }
  // Earliest first, the longer of two that start together first: a track takes spans in order.
  std::stable_sort(spans.begin(), spans.end(), [](const Span& a, const Span& b) {
    if (to_ns(a.event.start_ms) != to_ns(b.event.start_ms))
      return to_ns(a.event.start_ms) < to_ns(b.event.start_ms);
    return to_ns(a.event.end_ms) > to_ns(b.event.end_ms);
  });
  Tracks tracks(plan);
  std::vector<int> provisional;
  for (const Span& span : spans) provisional.push_back(tracks.place(span));

  json events = json::array();
  events.push_back(metadata_event("process_name", 0, {{"name", "hsched " + plan.model}}));
  const std::map<int, int> tids = tracks.finish(events);
  for (size_t i = 0; i < spans.size(); ++i) {
    const int tid = tids.at(provisional[i]);
    events.push_back(complete_event(spans[i].event, tid));
    for (const Event& inner : spans[i].inner) events.push_back(complete_event(inner, tid));
  }
  json trace = {{"traceEvents", std::move(events)},
                {"displayTimeUnit", "ms"},
                {"otherData",
                 {{"model", plan.model},
                  {"target", plan.target.name},
                  {"policy", plan.policy.name},
                  {"predicted_ms", plan.predicted_ms},
                  {"requests", records.size()}}}};
  return trace.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
}

Status write_trace_file(const fs::path& path, const std::string& trace) {
  return write_file_atomically(path, trace);
}

}  // namespace hsched
