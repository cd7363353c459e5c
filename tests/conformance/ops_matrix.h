// docs/ops.md from the conformance table: per case, per column (cpu, opencl on PoCL, the
// simulated NPU) and precision, "yes" (check() accepts it) or the reason code of its refusal,
// with the refusals' details below. conformance_test's OpsMatrix tests write it
// (HSCHED_OPS_MD=path) or compare it with the committed page.
#pragma once

#include <string>

namespace hsched::conformance {

// The page, from matrix_device() of each slot; every slot's device must be present.
std::string ops_markdown();

// Whether this machine has the devices the page describes (matrix_device of every slot).
bool has_matrix_devices();

}  // namespace hsched::conformance
