// Runs the built `hsched` program (HSCHED_CLI_PATH) with arguments and captures what it prints.
#pragma once

#include <cstdlib>
#include <fcntl.h>
#include <fstream>
#include <spawn.h>
#include <sstream>
#include <string>
#include <unistd.h>
#include <vector>

#include <gtest/gtest.h>
#include <sys/wait.h>

namespace hsched::cli_test {

struct CliRun {
  int exit_code = -1;  // -1 when the program did not exit normally (a crash)
  std::string out;
  std::string err;
};

inline std::string read_and_remove(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  ::unlink(path.c_str());
  return text.str();
}

inline std::string make_temp_file() {
  std::string pattern = ::testing::TempDir() + "hsched_cli_XXXXXX";
  const int fd = ::mkstemp(pattern.data());
  if (fd >= 0) ::close(fd);
  return pattern;
}

// stdout and stderr go to temporary files, which cannot fill up and block the child as pipes can.
inline CliRun run_cli(const std::vector<std::string>& args) {
  const std::string out_path = make_temp_file();
  const std::string err_path = make_temp_file();
  std::vector<std::string> argv_storage{HSCHED_CLI_PATH};
  argv_storage.insert(argv_storage.end(), args.begin(), args.end());
  std::vector<char*> argv;
  argv.reserve(argv_storage.size() + 1);
  for (auto& arg : argv_storage) argv.push_back(arg.data());
  argv.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, out_path.c_str(), O_WRONLY | O_TRUNC,
                                   0600);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, err_path.c_str(), O_WRONLY | O_TRUNC,
                                   0600);
  CliRun run;
  pid_t pid = 0;
  if (posix_spawn(&pid, HSCHED_CLI_PATH, &actions, nullptr, argv.data(), environ) == 0) {
    int status = 0;
    if (::waitpid(pid, &status, 0) == pid && WIFEXITED(status)) {
      run.exit_code = WEXITSTATUS(status);
    }
  }
  posix_spawn_file_actions_destroy(&actions);
  run.out = read_and_remove(out_path);
  run.err = read_and_remove(err_path);
  return run;
}

inline int count_lines(const std::string& text) {
  int lines = 0;
  for (char c : text) lines += c == '\n' ? 1 : 0;
  return lines;
}

}  // namespace hsched::cli_test
