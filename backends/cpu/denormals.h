// Flush-to-zero (FTZ) and denormals-are-zero (DAZ) on the threads that run CPU programs.
//
// Subnormal floats take x86 cores' slow microcoded path: one random attention mask made
// bert_mini's attention MatMuls 60x slower (3.3 ms each instead of 0.05). ONNX Runtime and
// OpenVINO flush them; so does hsched, by default (CpuOptions::flush_denormals; the executor's
// ExecutorOptions::flush_denormals). Results differ from IEEE only for values below 1.2e-38.
//
// The mode is a per-thread register (MXCSR), set for the duration of a CPU program's compile or
// run on every thread it uses: the host thread (DenormalsScope); the program's oneTBB arena,
// whose tasks run with the settings of the thread that initialized it (CpuProgram initializes
// it under a DenormalsScope); and libgomp's team, which oneDNN's primitives run on
// (set_team_denormals: team threads keep their register between regions, so the team is set
// again only when the mode changes).
#pragma once

namespace hsched::cpu {

// True when this thread flushes denormals (FTZ and DAZ both set).
bool thread_flushes_denormals();

// Sets this thread's FTZ and DAZ to `flush` for the scope's life; restores them after.
class DenormalsScope {
 public:
  explicit DenormalsScope(bool flush);
  ~DenormalsScope();
  DenormalsScope(const DenormalsScope&) = delete;
  DenormalsScope& operator=(const DenormalsScope&) = delete;

 private:
  unsigned saved_;
};

// Sets FTZ and DAZ to `flush` on every thread of the calling thread's OpenMP team of `threads`
// (the host thread's; oneDNN's primitives run there). A no-op when the team is already set so.
// Call on the host thread only.
void set_team_denormals(bool flush, int threads);

}  // namespace hsched::cpu
