// The `hsched` program as a function, so that main() stays thin and tests can drive it.
#pragma once

#include <ostream>

namespace hsched::cli {

// Exit codes of the program.
inline constexpr int kExitOk = 0;
inline constexpr int kExitError = 2;  // any error: bad flag, bad model, internal failure

// Parses `argv`, runs the subcommand and writes its report to `out`. On any error writes exactly
// one line "hsched: error: <message>" to `err`, nothing to `out`, and returns kExitError.
// Never throws.
int run(int argc, const char* const* argv, std::ostream& out, std::ostream& err);

}  // namespace hsched::cli
