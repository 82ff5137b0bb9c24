// Runs the gnnjit binary as a user would and captures what it prints.
#pragma once

#include <array>
#include <cstdio>
#include <string>
#include <cstdlib>
#include <sys/wait.h>
#include <unistd.h>

namespace gnnjit::test {

struct CommandResult {
  int exitCode = -1;
  std::string out; ///< stdout
  std::string err; ///< stderr
};

/// Runs `args` (already shell-quoted) after the gnnjit binary through /bin/sh.
/// `path` in single quotes, for a command line run by the shell.
inline std::string shellQuoted(const std::string &path) {
  std::string quoted(1, '\'');
  quoted.append(path).push_back('\'');
  return quoted;
}

inline CommandResult runGnnjit(const std::string &args) {
  char errPath[] = "/tmp/gnnjit-stderr-XXXXXX";
  const int fd = mkstemp(errPath);
  if (fd >= 0)
    close(fd);
  const std::string command = std::string("'") + GNNJIT_BINARY + "' " + args + " 2>" + errPath;
  CommandResult result;
  if (FILE *pipe = popen(command.c_str(), "r")) {
    std::array<char, 4096> buffer;
    size_t n;
    while ((n = fread(buffer.data(), 1, buffer.size(), pipe)) > 0)
      result.out.append(buffer.data(), n);
    const int status = pclose(pipe);
    result.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
  if (FILE *err = fopen(errPath, "r")) {
    std::array<char, 4096> buffer;
    size_t n;
    while ((n = fread(buffer.data(), 1, buffer.size(), err)) > 0)
      result.err.append(buffer.data(), n);
    fclose(err);
  }
  std::remove(errPath);
  return result;
}

} // namespace gnnjit::test
