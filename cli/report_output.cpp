#include "cli/report_output.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <iostream>

namespace hsched::cli {
namespace {

// On a terminal each write goes out at once, so the output interleaves with standard error as
// it is written; into a pipe or a file, in blocks.
constexpr size_t kPipeBufferBytes = 64 * 1024;

}  // namespace

ReportOutput::ReportOutput() : fallback_(&std::cout) {
  std::cout.flush();
  std::fflush(stdout);
  const int saved = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);  // not handed to child processes
  if (saved < 0) return;
  if (dup2(STDERR_FILENO, STDOUT_FILENO) < 0) {
    close(saved);
    return;
  }
  saved_fd_ = saved;
  const size_t buffer_bytes = isatty(saved) ? 1 : kPipeBufferBytes;  // 1: unbuffered
  buffer_ = std::make_unique<__gnu_cxx::stdio_filebuf<char>>(saved, std::ios::out, buffer_bytes);
  stream_ = std::make_unique<std::ostream>(buffer_.get());
}

ReportOutput::~ReportOutput() {
  if (saved_fd_ < 0) return;
  flush();
  std::cout.flush();
  std::fflush(stdout);
  dup2(saved_fd_, STDOUT_FILENO);
  stream_.reset();
  buffer_.reset();  // closes saved_fd_
}

bool ReportOutput::flush() {
  std::ostream& out = stream();
  out.flush();
  return !out.fail();
}

}  // namespace hsched::cli
