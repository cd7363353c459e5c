// ReportOutput: what the command prints reaches standard output alone, whatever else the process
// writes to descriptor 1.
#include "cli/report_output.h"

#include <fcntl.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <iostream>
#include <string>

#include <gtest/gtest.h>

namespace hsched::cli {
namespace {

std::string read_all(int fd) {
  std::string text;
  std::array<char, 4096> chunk{};
  for (ssize_t n; (n = read(fd, chunk.data(), chunk.size())) > 0;) {
    text.append(chunk.data(), static_cast<size_t>(n));
  }
  return text;
}

// Descriptors 1 and 2 of the test process point at pipes for the life of one of these.
class CapturedStdio {
 public:
  CapturedStdio() {
    std::cout.flush();
    std::fflush(stdout);
    std::fflush(stderr);
    if (pipe(out_) != 0 || pipe(err_) != 0) std::abort();
    saved_out_ = dup(STDOUT_FILENO);
    saved_err_ = dup(STDERR_FILENO);
    dup2(out_[1], STDOUT_FILENO);
    dup2(err_[1], STDERR_FILENO);
    close(out_[1]);
    close(err_[1]);
  }
  // Puts descriptors 1 and 2 back; then out() and err() read what was written.
  void restore() {
    std::cout.flush();
    std::fflush(stdout);
    std::fflush(stderr);
    dup2(saved_out_, STDOUT_FILENO);
    dup2(saved_err_, STDERR_FILENO);
    close(saved_out_);
    close(saved_err_);
    out_text_ = read_all(out_[0]);
    err_text_ = read_all(err_[0]);
    close(out_[0]);
    close(err_[0]);
  }
  const std::string& out() const { return out_text_; }
  const std::string& err() const { return err_text_; }

 private:
  int out_[2] = {-1, -1};
  int err_[2] = {-1, -1};
  int saved_out_ = -1;
  int saved_err_ = -1;
  std::string out_text_;
  std::string err_text_;
};

TEST(ReportOutputTest, WhatOthersWriteToStandardOutputGoesToStandardError) {
  CapturedStdio stdio;
  bool flushed = false;
  {
    ReportOutput output;
    // As CLBlast prints a failed build's log, and as a library writing to the descriptor would.
    std::printf("OpenCL compiler error/warning: build log\n");
    std::fflush(stdout);
    std::cout << "through std::cout\n";
    std::cout.flush();
    if (write(STDOUT_FILENO, "raw\n", 4) != 4) std::abort();
    output.stream() << "{\"report\": 1}\n";
    flushed = output.flush();
  }
  std::printf("after\n");  // descriptor 1 is standard output again
  stdio.restore();
  EXPECT_TRUE(flushed);
  EXPECT_EQ(stdio.out(), "{\"report\": 1}\nafter\n");
  EXPECT_EQ(stdio.err(), "OpenCL compiler error/warning: build log\nthrough std::cout\nraw\n");
}

TEST(ReportOutputTest, AFailedWriteIsReported) {
  CapturedStdio stdio;
  const int full = open("/dev/full", O_WRONLY);
  ASSERT_GE(full, 0);
  const int saved = dup(STDOUT_FILENO);
  dup2(full, STDOUT_FILENO);
  close(full);
  bool flushed = true;
  {
    ReportOutput output;
    output.stream() << "a report /dev/full cannot take\n";
    flushed = output.flush();
  }
  dup2(saved, STDOUT_FILENO);
  close(saved);
  stdio.restore();
  EXPECT_FALSE(flushed);
}

}  // namespace
}  // namespace hsched::cli
