// Devices and targets: what a device is and what the cost model knows of it. A Target is the set
// of devices a plan is made for: the devices found on this machine, or a profile of a machine we
// do not have (configs/targets/*.yaml). Units: ms, bytes, GFLOP/s (GOP/s for int8), GB/s.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace hsched {

enum class DeviceKind { kCpu, kGpu, kNpu };
enum class DeviceApi { kHost, kOpenCl, kLevelZero };  // kHost: the CPU backend (oneDNN/oneTBB)
enum class Precision { kFp32, kFp16, kBf16, kInt8 };

// Lower-case names as used in configs, flags and reports: "cpu", "opencl", "fp16"...
const char* device_kind_name(DeviceKind kind);
const char* device_api_name(DeviceApi api);
const char* precision_name(Precision precision);
std::optional<DeviceKind> parse_device_kind(const std::string& name);
std::optional<DeviceApi> parse_device_api(const std::string& name);
std::optional<Precision> parse_precision(const std::string& name);

// Op classes group op types for policies and for the cost model's efficiencies.
enum class OpClass {
  kConvLinear,     // Conv, ConvTranspose, Gemm, MatMul
  kPooling,        // MaxPool, AveragePool, GlobalAveragePool
  kNormalization,  // LayerNormalization, InstanceNormalization, BatchNormalization, Softmax
  kElementwise,    // unary and binary arithmetic, activations, comparisons, Where, Cast
  kReduction,      // ReduceMean, ReduceSum, ReduceMax, ArgMax
  kDataMovement,   // Reshape, Transpose, Concat, Split, Slice, Gather, Pad, Resize, Expand...
  kOther,          // everything else
};
inline constexpr int kOpClassCount = 7;
const char* op_class_name(OpClass op_class);  // "conv_linear", "pooling", ...
std::optional<OpClass> parse_op_class(const std::string& name);
OpClass op_class_of(const std::string& op_type);

// The classes of work `hsched calibrate` measures, each as a curve of time against size (FLOP for
// the compute classes, bytes moved for the others). Finer than OpClass: a depthwise convolution
// and a batch-1 matrix-vector product run at rates far from a dense convolution's.
enum class CostClass {
  kConv,           // Conv, ConvTranspose with a kernel wider than 1x1; work: FLOP
  kPointwiseConv,  // Conv with a 1x1 kernel (and no grouping); work: FLOP
  kDepthwiseConv,  // Conv with one group per input channel; work: FLOP
  // The next three: FLOP. A device without the curve of one of them times such a Conv on the
  // class above it would have at stride 1 and more channels.
  kStemConv,              // Conv of one group over at most 3 channels (an image's first layer)
  kStridedConv,           // other Conv of one group whose stride skips pixels (downsampling)
  kStridedDepthwiseConv,  // depthwise Conv whose stride skips pixels
  kGemm,                  // MatMul, Gemm with more than a few rows; work: FLOP
  // MatMul, Gemm with at most kGemvMaxRows rows (batch-1 FC layers), and convolutions of at most
  // that many output pixels (squeeze-excitation); work: FLOP
  kGemv,            // the last class counted in FLOP (the compute classes come first)
  kElementwise,     // arithmetic, activations without a transcendental function (Add, Relu...);
                    // work: bytes read + written (so for every class below)
  kTranscendental,  // elementwise ops computing a polynomial or division per element (Sigmoid,
                    // Erf, Tanh, Exp...): far slower per byte than arithmetic on a CPU
  kEpilogue,  // a transcendental op fused into its producer's step (GELU's Erf after a MatMul on
              // the CPU): what it adds to that step; CPU only
  kNormalization,
  kChannelNorm,  // LayerNorm over an image's channels run as one kernel (ConvNeXt); bytes, and
                 // 1 KiB a pixel (a row of channels)
  kPooling,
  kGlobalPool,  // GlobalAveragePool, GlobalMaxPool: a reduction over each channel's pixels
  kReduction,
  kDataMovement,
  kConcat,    // Concat: a copy of each input into its place; bytes. A device without the curve
              // times it as data_movement (whose benchmarks transpose)
  kQuantize,  // QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear as steps of their own (no
              // quantized layer took them in); bytes. A device without the curve: elementwise
  kUpload,    // host -> device copy of one tensor; work: bytes
  kDownload,  // device -> host copy of one tensor; work: bytes
};
inline constexpr int kCostClassCount = 21;
inline constexpr int64_t kGemvMaxRows = 4;
const char* cost_class_name(CostClass cost_class);  // "conv", "depthwise_conv", ...
std::optional<CostClass> parse_cost_class(const std::string& name);
bool is_compute_class(CostClass cost_class);  // work counted in FLOP

// One measurement of a curve: the median time of one node (launch included) or copy of `work`
// FLOP or bytes, and the spread of the round medians it came from ((max - min) / median).
struct CurvePoint {
  std::string bench;  // the microbenchmark's name: how a re-run finds what it already measured
  double work = 0;
  double ms = 0;
  double spread = 0;
};
using Curve = std::vector<CurvePoint>;  // ascending work

// Kernels of one partition run before a device's stream_overhead_ms applies: the length of the
// tiny chain calibration measures it past.
inline constexpr int kStreamKnee = 129;

// One device as the planner sees it. Figures come from a target profile (with their sources in
// the YAML) or from discovery on this machine; `present` says which.
struct DeviceProfile {
  std::string id;    // unique in its target: "cpu0", "gpu0", "npu0"; what `hsched devices` prints
  std::string name;  // human-readable: "Intel Arc Graphics (Xe-LPG, 8 Xe-cores)"
  DeviceKind kind = DeviceKind::kCpu;
  DeviceApi api = DeviceApi::kHost;
  bool present = false;  // true: found on this machine and can run; false: planned from a profile
  // How the device's backend finds a present device again ("opencl:PLATFORM:DEVICE"); empty for
  // the host CPU and for devices planned from a profile.
  std::string locator;
  // What identifies the hardware across APIs, "" when the driver does not say: the PCI address
  // as lspci prints it ("0000:03:00.0") and the device UUID (32 lower-case hex digits). Discovery
  // lists a device two APIs see once, under the first backend that finds it, with the other
  // API's view in `views`.
  std::string pci_address;
  std::string uuid;
  struct View {
    DeviceApi api = DeviceApi::kHost;
    std::string name;
    std::string locator;
    std::string matched_by;  // "pci 0000:03:00.0", "uuid 8680..."
  };
  std::vector<View> views;

  std::map<Precision, double> peak_gflops;  // per computed precision; absent = not supported
  std::map<OpClass, double> efficiency;     // fraction of peak reached per op class (0..1];
                                            // absent classes use `default_efficiency`
  double default_efficiency = 0.5;
  double memory_bandwidth_gbps = 0;  // device memory (for integrated devices: the shared DRAM)
  double launch_overhead_ms = 0;     // per node (kernel launch / primitive dispatch)
  bool zero_copy = false;            // shares host memory: no copy at partition boundaries
  double transfer_bandwidth_gbps = 0;  // to/from host when not zero-copy (PCIe, ...)
  double transfer_latency_ms = 0;      // per transfer when not zero-copy; sync cost otherwise
  int64_t memory_bytes = 0;            // capacity usable for weights and activations
  // Most partitions one plan puts on the device, 0 for no limit: an NPU driver holds 255 graphs
  // per context (Intel's gives each graph a command queue). Past it the planner moves the
  // smallest partitions elsewhere (reason device_limit).
  int64_t max_partitions = 0;
  double compile_ms_per_node = 0;      // first-run compile cost (JIT, graph compile)
  double compile_ms_per_partition = 0;
  double run_overhead_ms = 0;  // per partition per run: dispatch, waits, output buffers
  // OpenCL: per kernel past the first kStreamKnee of one partition run (measured by `hsched
  // calibrate` as tiny chains of kStreamKnee nodes and longer; on the H200 machine's driver 7 us
  // a kernel up to there and 11.5 past it).
  double stream_overhead_ms = 0;
  // Added to a partition that starts after another device's (its threads slept meanwhile):
  // waking them (measured by `hsched calibrate`). On the host, the threads that hand a partition
  // over; `team_wake_overhead_ms` more when the partition runs a oneDNN primitive (conv, gemm,
  // pooling), whose OpenMP team slept too.
  double wake_overhead_ms = 0;
  double team_wake_overhead_ms = 0;
  // Per partition per run, outside it: the executor handing the partition to its thread and its
  // end on to what follows (measured by `hsched calibrate` through the executor). In the plan's
  // run time, not in the partition's own.
  double dispatch_overhead_ms = 0;

  // Measured by `hsched calibrate`: per class and precision, time against size. Where a curve
  // exists the cost model interpolates it instead of the roofline above. The byte classes are
  // measured in fp32 and used for every precision by the bytes moved.
  std::map<std::pair<CostClass, Precision>, Curve> curves;
  // Measured by `hsched calibrate` on QDQ graphs, per compute class: a QDQ model's quantized
  // layers as the device runs them on 8-bit data, whatever precision the partition is planned in.
  // Apart from `curves`' int8, which on the CPU is its dynamic quantization of fp32 graphs.
  std::map<CostClass, Curve> qdq_curves;
  std::string calibration;  // how and when: "hsched calibrate 2026-11-24, 2 threads"; "" if not
  // A sample of the calibration's benchmarks, each its long chain's time as measured: `hsched
  // calibrate --check` times them again and tells how far the device's speed moved since.
  std::vector<CurvePoint> probe;

  // Op types this device runs; "*" means every op its backend implements (the CPU).
  std::vector<std::string> ops;
  // Precisions the device computes in natively (keys of peak_gflops, in preference order).
  std::vector<Precision> precisions() const;
  bool supports_op(const std::string& op_type) const;
};

struct Target {
  std::string name;    // "core-ultra-7-155h", "this-machine"
  std::string source;  // the YAML file it came from, or "discovered"
  std::vector<DeviceProfile> devices;

  const DeviceProfile* find(const std::string& id) const;
};

// Resolves a device selector against a target: a kind ("cpu", "gpu", "npu"), an API
// ("opencl", "level_zero", "host") or a device id. Kind "cpu" matches CPU devices of API host
// only (a CPU-type OpenCL device such as PoCL's is selected by "opencl" or its id). Returns the matching device ids, in target
// order; empty when nothing matches.
std::vector<std::string> match_devices(const Target& target, const std::string& selector);

}  // namespace hsched
