// hsched/trace.h: run records as Chrome trace-event JSON (parsed back with nlohmann): one thread
// track per device, partitions on the device they ran on, transfers and verification inside their
// partition, compile steps, overlapping requests on extra tracks; the file written whole or not
// at all.
#include "hsched/trace.h"

#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/temp_dir.h"

namespace hsched {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// cpu0 and ocl0; partitions cpu0 (2 nodes), ocl0 (3 nodes), cpu0 (1 node).
Plan two_device_plan() {
  Plan plan;
  plan.model = "m.onnx";
  plan.target.name = "t";
  DeviceProfile cpu;
  cpu.id = "cpu0";
  DeviceProfile gpu;
  gpu.id = "ocl0";
  gpu.kind = DeviceKind::kGpu;
  gpu.api = DeviceApi::kOpenCl;
  plan.target.devices = {cpu, gpu};
  plan.partitions = {
      {0, "cpu0", {0, 1}, 0.5, 0}, {1, "ocl0", {2, 3, 4}, 1.25, 10}, {2, "cpu0", {5}, 0.25, 0}};
  return plan;
}

PartitionRun host_run(int partition, const std::string& device, double start, double end) {
  PartitionRun run;
  run.partition = partition;
  run.device = device;
  run.start_ms = start;
  run.end_ms = end;
  return run;
}

// One request from `t`: cpu0 [t, t+1], ocl0 [t+1, t+4] with an upload, a download and a
// verification, cpu0 [t+4, t+5].
RunRecord request_at(double t) {
  RunRecord record;
  record.start_ms = t;
  record.end_ms = t + 5;
  record.partitions.push_back(host_run(0, "cpu0", t, t + 1));
  PartitionRun device = host_run(1, "ocl0", t + 1, t + 4);
  device.upload_bytes = 4096;
  device.upload_ms = 0.25;
  device.download_bytes = 1024;
  device.download_ms = 0.5;
  device.verified = true;
  device.verify_ms = 1;
  record.partitions.push_back(device);
  record.partitions.push_back(host_run(2, "cpu0", t + 4, t + 5));
  return record;
}

ExecutableStats compile_stats() {
  ExecutableStats stats;
  stats.compiles = {{0, "cpu0", 0, 2, "", ""}, {1, "ocl0", 0, 3, "build_failed: boom", ""}};
  return stats;
}

struct ParsedTrace {
  json events;                             // "X" events
  std::map<int, std::string> track_names;  // tid -> thread_name
};

ParsedTrace parse(const std::string& text) {
  const json trace = json::parse(text);
  EXPECT_EQ(trace["displayTimeUnit"], "ms");
  ParsedTrace parsed;
  parsed.events = json::array();
  for (const json& event : trace["traceEvents"]) {
    EXPECT_EQ(event["pid"], 1);
    if (event["ph"] == "M" && event["name"] == "thread_name") {
      parsed.track_names[event["tid"].get<int>()] = event["args"]["name"].get<std::string>();
    } else if (event["ph"] == "X") {
      EXPECT_GE(event["dur"].get<double>(), 0.0) << event.dump();
      parsed.events.push_back(event);
    } else {
      EXPECT_EQ(event["ph"], "M") << event.dump();
    }
  }
  return parsed;
}

std::vector<json> of_cat(const ParsedTrace& trace, const std::string& cat) {
  std::vector<json> found;
  for (const json& event : trace.events) {
    if (event["cat"] == cat) found.push_back(event);
  }
  return found;
}

double end_us(const json& event) { return event["ts"].get<double>() + event["dur"].get<double>(); }

bool inside(const json& inner, const json& outer) {
  constexpr double kSlack = 1e-6;
  return inner["tid"] == outer["tid"] && inner["ts"].get<double>() >= outer["ts"].get<double>() &&
         end_us(inner) <= end_us(outer) + kSlack;
}

// On every track, two events are either disjoint or one holds the other.
void expect_nested_per_track(const ParsedTrace& trace) {
  for (size_t i = 0; i < trace.events.size(); ++i) {
    for (size_t j = i + 1; j < trace.events.size(); ++j) {
      const json& a = trace.events[i];
      const json& b = trace.events[j];
      if (a["tid"] != b["tid"]) continue;
      const bool disjoint =
          end_us(a) <= b["ts"].get<double>() + 1e-6 || end_us(b) <= a["ts"].get<double>() + 1e-6;
      EXPECT_TRUE(disjoint || inside(a, b) || inside(b, a)) << a.dump() << "\n" << b.dump();
    }
  }
}

TEST(ChromeTraceTest, OneTrackPerDeviceWithPartitionsWhereTheyRan) {
  const Plan plan = two_device_plan();
  const ParsedTrace trace =
      parse(chrome_trace(plan, ExecutableStats{}, {request_at(10), request_at(20)}));
  ASSERT_EQ(trace.track_names.size(), 2u);
  std::map<std::string, int> tid_of;
  for (const auto& [tid, name] : trace.track_names) tid_of[name] = tid;
  ASSERT_EQ(tid_of.count("cpu0"), 1u);
  ASSERT_EQ(tid_of.count("ocl0"), 1u);

  const std::vector<json> partitions = of_cat(trace, "partition");
  ASSERT_EQ(partitions.size(), 6u);
  std::set<std::pair<int, int>> seen;  // (request, partition)
  for (const json& event : partitions) {
    const int partition = event["args"]["partition"].get<int>();
    const Partition& planned = plan.partitions[static_cast<size_t>(partition)];
    EXPECT_EQ(event["name"], "partition " + std::to_string(partition));
    EXPECT_EQ(event["tid"], tid_of[planned.device]) << event.dump();
    EXPECT_EQ(event["args"]["nodes"], planned.nodes.size());
    EXPECT_DOUBLE_EQ(event["args"]["predicted_ms"].get<double>(), planned.compute_ms);
    EXPECT_FALSE(event["args"].contains("planned_device"));
    seen.insert({event["args"]["request"].get<int>(), partition});
  }
  EXPECT_EQ(seen.size(), 6u);
  // Times in microseconds: request 1's OpenCL partition spans 21..24 ms.
  for (const json& event : partitions) {
    if (event["args"]["request"] == 1 && event["args"]["partition"] == 1) {
      EXPECT_DOUBLE_EQ(event["ts"].get<double>(), 21000.0);
      EXPECT_DOUBLE_EQ(event["dur"].get<double>(), 3000.0);
    }
  }
  expect_nested_per_track(trace);
}

TEST(ChromeTraceTest, TransfersAndVerificationNestInsideTheirPartition) {
  const ParsedTrace trace =
      parse(chrome_trace(two_device_plan(), ExecutableStats{}, {request_at(0)}));
  const std::vector<json> transfers = of_cat(trace, "transfer");
  const std::vector<json> verifies = of_cat(trace, "verify");
  ASSERT_EQ(transfers.size(), 2u);  // host partitions copy nothing
  ASSERT_EQ(verifies.size(), 1u);
  json device_partition;
  for (const json& event : of_cat(trace, "partition")) {
    if (event["args"]["partition"] == 1) device_partition = event;
  }
  ASSERT_FALSE(device_partition.is_null());
  std::map<std::string, json> by_name;
  for (const json& event : transfers) by_name[event["name"].get<std::string>()] = event;
  ASSERT_EQ(by_name.count("upload"), 1u);
  ASSERT_EQ(by_name.count("download"), 1u);
  EXPECT_EQ(by_name["upload"]["args"]["bytes"], 4096);
  EXPECT_EQ(by_name["download"]["args"]["bytes"], 1024);
  EXPECT_DOUBLE_EQ(by_name["upload"]["ts"].get<double>(), 1000.0);  // first thing inside
  EXPECT_DOUBLE_EQ(by_name["upload"]["dur"].get<double>(), 250.0);
  EXPECT_DOUBLE_EQ(by_name["download"]["dur"].get<double>(), 500.0);
  EXPECT_DOUBLE_EQ(verifies[0]["dur"].get<double>(), 1000.0);
  EXPECT_DOUBLE_EQ(end_us(verifies[0]), 4000.0);  // last thing inside
  EXPECT_LE(end_us(by_name["download"]), verifies[0]["ts"].get<double>());
  for (const json& event : {by_name["upload"], by_name["download"], verifies[0]}) {
    EXPECT_TRUE(inside(event, device_partition)) << event.dump();
  }
  expect_nested_per_track(trace);
}

TEST(ChromeTraceTest, CompileStepsGoOnTheirDeviceTrackWithTheirError) {
  const ParsedTrace trace = parse(chrome_trace(two_device_plan(), compile_stats(), {}));
  ASSERT_EQ(trace.track_names.size(), 2u);
  const std::vector<json> compiles = of_cat(trace, "compile");
  ASSERT_EQ(compiles.size(), 2u);
  for (const json& event : compiles) {
    const std::string device = event["args"]["partition"] == 0 ? "cpu0" : "ocl0";
    EXPECT_EQ(trace.track_names.at(event["tid"].get<int>()), device);
  }
  const json& failed = compiles[0]["args"]["partition"] == 1 ? compiles[0] : compiles[1];
  EXPECT_EQ(failed["args"]["error"], "build_failed: boom");
  EXPECT_DOUBLE_EQ(failed["dur"].get<double>(), 3000.0);
}

// Requests in flight at once overlap on a device: the later span goes to a second track of that
// device rather than overlapping on one track (which trace viewers draw wrongly).
TEST(ChromeTraceTest, OverlappingRequestsGetAnExtraTrackOfTheirDevice) {
  const ParsedTrace trace =
      parse(chrome_trace(two_device_plan(), ExecutableStats{}, {request_at(0), request_at(2)}));
  std::multiset<std::string> names;
  for (const auto& [tid, name] : trace.track_names) names.insert(name);
  // ocl0 [1, 4] and [3, 6] overlap; cpu0 [0,1] [2,3] [4,5] [6,7] do not.
  EXPECT_EQ(names, (std::multiset<std::string>{"cpu0", "ocl0", "ocl0 (2)"}));
  EXPECT_EQ(of_cat(trace, "partition").size(), 6u);
  expect_nested_per_track(trace);
}

TEST(ChromeTraceTest, QuarantinedPartitionIsDrawnOnTheCpuWithItsPlannedDevice) {
  Plan plan = two_device_plan();
  RunRecord record;
  record.partitions.push_back(host_run(1, "cpu0", 0, 2));
  const ParsedTrace trace = parse(chrome_trace(plan, ExecutableStats{}, {record}));
  ASSERT_EQ(trace.track_names.size(), 1u);
  EXPECT_EQ(trace.track_names.begin()->second, "cpu0");
  const std::vector<json> partitions = of_cat(trace, "partition");
  ASSERT_EQ(partitions.size(), 1u);
  EXPECT_EQ(partitions[0]["args"]["planned_device"], "ocl0");
}

TEST(ChromeTraceTest, FileIsWrittenWholeOrNotAtAll) {
  test::TempDir dir;
  const std::string trace = chrome_trace(two_device_plan(), compile_stats(), {request_at(0)});
  ASSERT_TRUE(write_trace_file(dir / "t.json", trace).is_ok());
  std::ifstream in(dir / "t.json", std::ios::binary);
  const std::string read((std::istreambuf_iterator<char>(in)), {});
  EXPECT_EQ(read, trace);

  const Status missing = write_trace_file(dir / "no" / "t.json", trace);
  ASSERT_FALSE(missing.is_ok());
  EXPECT_NE(missing.message().find((dir / "no" / "t.json").string()), std::string::npos)
      << missing.message();
  EXPECT_EQ(missing.message().find('\n'), std::string::npos);

  // A folder in the way: the rename fails and the temporary file is removed.
  fs::create_directories(dir / "taken");
  const Status taken = write_trace_file(dir / "taken", trace);
  ASSERT_FALSE(taken.is_ok());
  EXPECT_NE(taken.message().find("cannot write"), std::string::npos) << taken.message();
  std::set<std::string> left;
  for (const auto& entry : fs::directory_iterator(dir.path())) {
    left.insert(entry.path().filename().string());
  }
  EXPECT_EQ(left, (std::set<std::string>{"t.json", "taken"}));
}

}  // namespace
}  // namespace hsched
