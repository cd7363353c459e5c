// Ending a process that uses hsched. A driver call past its compile deadline goes on alone on a
// worker thread, possibly inside a driver; such a worker must never meet static destructors (the
// driver's, its compiler's). Returning from main() or calling exit() is safe too (an exit handler
// does the same bounded wait); exit_process() makes the end explicit where it is called.
#pragma once

namespace hsched {

// Ends the process with `code`: flushes stdio, waits up to 2 s for compile workers, then exits
// normally (std::exit) when none is left, or with _exit (no destructors: a worker may be inside
// a driver whose statics they would tear down) when some still run.
[[noreturn]] void exit_process(int code);

}  // namespace hsched
