#include "scheduler/report/graphviz.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <utility>

extern char** environ;  // NOLINT: POSIX declares it nowhere else

namespace hsched::report {
namespace {

constexpr size_t kMaxSvgBytes = size_t{64} << 20;

Status unavailable(const std::string& message) {
  return {ErrorCode::kUnavailable, "graphviz: " + message};
}

// Owns one file descriptor.
class UniqueFd {
 public:
  explicit UniqueFd(int fd = -1) : fd_(fd) {}
  ~UniqueFd() { reset(); }
  UniqueFd(UniqueFd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept {
    if (this != &other) {
      reset();
      fd_ = std::exchange(other.fd_, -1);
    }
    return *this;
  }
  int get() const { return fd_; }
  void reset() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 private:
  int fd_;
};

class SpawnActions {
 public:
  SpawnActions() { ::posix_spawn_file_actions_init(&actions_); }
  ~SpawnActions() { ::posix_spawn_file_actions_destroy(&actions_); }
  SpawnActions(const SpawnActions&) = delete;
  SpawnActions& operator=(const SpawnActions&) = delete;
  posix_spawn_file_actions_t* get() { return &actions_; }

 private:
  posix_spawn_file_actions_t actions_;
};

// Waits for a child this process spawned; kills it first when asked to.
class Child {
 public:
  explicit Child(pid_t pid) : pid_(pid) {}
  ~Child() {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      wait();
    }
  }
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;
  // The wait status (as waitpid reports it).
  int wait() {
    int status = 0;
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
    pid_ = -1;
    return status;
  }

 private:
  pid_t pid_;
};

// An unlinked temporary file holding `bytes`, positioned at its start: dot's stdin. A file
// rather than a pipe, so that writing the input and reading the output never deadlock.
Result<UniqueFd> input_file(const std::string& bytes) {
  std::error_code error;
  std::string path = (std::filesystem::temp_directory_path(error) / "hsched_dot_XXXXXX").string();
  if (error) path = "/tmp/hsched_dot_XXXXXX";
  UniqueFd file(::mkostemp(path.data(), O_CLOEXEC));
  if (file.get() < 0) {
    return unavailable(std::string("cannot create a temporary file: ") + strerror(errno));
  }
  ::unlink(path.c_str());
  size_t written = 0;
  while (written < bytes.size()) {
    const ssize_t n = ::write(file.get(), bytes.data() + written, bytes.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      return unavailable(std::string("cannot write a temporary file: ") + strerror(errno));
    }
    written += static_cast<size_t>(n);
  }
  ::lseek(file.get(), 0, SEEK_SET);
  return file;
}

}  // namespace

Result<std::string> render_svg(const std::string& dot_source, std::chrono::milliseconds timeout) {
  HSCHED_ASSIGN_OR_RETURN(UniqueFd input, input_file(dot_source));
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) {
    return unavailable(std::string("cannot create a pipe: ") + strerror(errno));
  }
  UniqueFd read_end(pipe_fds[0]);
  UniqueFd write_end(pipe_fds[1]);

  SpawnActions actions;
  ::posix_spawn_file_actions_adddup2(actions.get(), input.get(), STDIN_FILENO);
  ::posix_spawn_file_actions_adddup2(actions.get(), write_end.get(), STDOUT_FILENO);
  ::posix_spawn_file_actions_addopen(actions.get(), STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  char arg0[] = "dot";
  char arg1[] = "-Tsvg";
  char* argv[] = {arg0, arg1, nullptr};
  pid_t pid = 0;
  const int spawn_error = ::posix_spawnp(&pid, "dot", actions.get(), nullptr, argv, environ);
  if (spawn_error != 0) {
    return unavailable(std::string("cannot run dot: ") + strerror(spawn_error));
  }
  Child child(pid);
  write_end.reset();  // the child holds its own copy; EOF comes when it exits
  input.reset();

  std::string svg;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  char buffer[1 << 16];
  while (true) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      return unavailable("dot ran past " + std::to_string(timeout.count()) + " ms");
    }
    pollfd poll_fd{read_end.get(), POLLIN, 0};
    const int ready = ::poll(&poll_fd, 1, static_cast<int>(left.count()));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) continue;  // timed out: the deadline check above ends the loop
    const ssize_t n = ::read(read_end.get(), buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return unavailable(std::string("cannot read dot's output: ") + strerror(errno));
    if (n == 0) break;
    svg.append(buffer, static_cast<size_t>(n));
    if (svg.size() > kMaxSvgBytes) return unavailable("dot wrote more than 64 MiB");
  }
  const int status = child.wait();
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    return unavailable(WIFEXITED(status)
                           ? "dot exited with status " + std::to_string(WEXITSTATUS(status))
                           : std::string("dot was killed by a signal"));
  }
  const size_t start = svg.find("<svg");
  if (start == std::string::npos) return unavailable("dot wrote no SVG");
  return svg.substr(start);
}

}  // namespace hsched::report
