// How many CPU threads hsched uses unless told.
#pragma once

namespace hsched {

// The CPU threads a run uses unless told: the physical cores of the CPUs this process may run on
// (its affinity mask; hyperthreads of one core count once), at least 1. ONNX Runtime and
// OpenVINO default to the same.
int default_cpu_threads();

}  // namespace hsched
