#include "backends/cpu/denormals.h"

#include <omp.h>
#include <xmmintrin.h>

namespace hsched::cpu {
namespace {

constexpr unsigned kFtz = 0x8000;  // MXCSR bit 15: flush results to zero
constexpr unsigned kDaz = 0x0040;  // MXCSR bit 6: read denormal inputs as zero
constexpr unsigned kBoth = kFtz | kDaz;

void set_mode(bool flush) {
  const unsigned csr = _mm_getcsr();
  _mm_setcsr(flush ? (csr | kBoth) : (csr & ~kBoth));
}

// The mode libgomp's team was last set to by set_team_denormals (-1: never). The team belongs
// to the host thread, the only caller.
thread_local int g_team_mode = -1;
thread_local int g_team_threads = 0;

}  // namespace

bool thread_flushes_denormals() { return (_mm_getcsr() & kBoth) == kBoth; }

DenormalsScope::DenormalsScope(bool flush) : saved_(_mm_getcsr()) { set_mode(flush); }

DenormalsScope::~DenormalsScope() { _mm_setcsr(saved_); }

void set_team_denormals(bool flush, int threads) {
  if (g_team_mode == static_cast<int>(flush) && g_team_threads == threads) return;
#pragma omp parallel num_threads(threads)
  set_mode(flush);
  g_team_mode = static_cast<int>(flush);
  g_team_threads = threads;
}

}  // namespace hsched::cpu
