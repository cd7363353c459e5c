// Standard output for the command's own output alone.
//
// Libraries hsched loads write to file descriptor 1 by themselves: CLBlast prints an OpenCL build
// log there when one of its kernels fails to build (hsched then runs that partition on the CPU
// and succeeds), which corrupted `--json` reports under load. While a ReportOutput lives,
// descriptor 1 points at standard error and stream() writes to the standard output the process
// started with. Not thread-safe; made once, by main(), before anything else runs.
#pragma once

#include <ext/stdio_filebuf.h>

#include <memory>
#include <ostream>

namespace hsched::cli {

class ReportOutput {
 public:
  ReportOutput();
  ~ReportOutput();  // flushes stream() and gives descriptor 1 back its standard output
  ReportOutput(const ReportOutput&) = delete;
  ReportOutput& operator=(const ReportOutput&) = delete;

  // Where the command writes what it prints (std::cout when standard output could not be set
  // aside: it was closed, or no descriptor was left).
  std::ostream& stream() { return stream_ ? *stream_ : *fallback_; }

  // Flushes stream(); false when a write failed (a full disk, a closed pipe).
  bool flush();

 private:
  int saved_fd_ = -1;  // the original standard output, -1 when not set aside
  std::unique_ptr<__gnu_cxx::stdio_filebuf<char>> buffer_;
  std::unique_ptr<std::ostream> stream_;
  std::ostream* fallback_;
};

}  // namespace hsched::cli
