// Runs Graphviz `dot` (found on PATH) to turn DOT text into SVG, for the HTML report. Optional by
// design: callers show the DOT source when this fails.
#pragma once

#include <chrono>
#include <string>

#include "hsched/status.h"

namespace hsched::report {

// The SVG document `dot -Tsvg` writes for `dot_source`, from its `<svg` tag on (the XML prolog
// and DOCTYPE dropped, so that it can be inlined in HTML). Unavailable when `dot` is not on PATH,
// exits with an error, writes no SVG, passes `timeout` (then it is killed) or writes more than
// 64 MiB. Runs `dot` directly (no shell); blocks the calling thread until it is done.
Result<std::string> render_svg(const std::string& dot_source,
                               std::chrono::milliseconds timeout = std::chrono::seconds(30));

}  // namespace hsched::report
