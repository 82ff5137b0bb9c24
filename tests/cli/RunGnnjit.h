// Runs the gnnjit binary as a user would and captures what it prints.
// $GNNJIT_BINARY names the binary where the tests run on another machine
// than the one that built them (scripts/gpu_checks.sh sets it); by default,
// the one this build made.
#pragma once

#include <array>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

namespace gnnjit::test {

struct CommandResult {
  int exitCode = -1;
  std::string out; ///< stdout
  std::string err; ///< stderr
  /// The largest resident set of the command's processes, in bytes (from
  /// wait4: the shell and the gnnjit it ran).
  long long peakRssBytes = -1;
};

/// `path` in single quotes, for a command line run by the shell.
inline std::string shellQuoted(const std::string &path) {
  std::string quoted(1, '\'');
  quoted.append(path).push_back('\'');
  return quoted;
}

/// The gnnjit binary the tests run: $GNNJIT_BINARY, else this build's.
inline std::string gnnjitBinary() {
  const char *env = std::getenv("GNNJIT_BINARY");
  return env && *env ? env : GNNJIT_BINARY;
}

/// Runs `args` (already shell-quoted) after the gnnjit binary through /bin/sh.
inline CommandResult runGnnjit(const std::string &args) {
  char errPath[] = "/tmp/gnnjit-stderr-XXXXXX";
  const int fd = mkstemp(errPath);
  if (fd >= 0)
    close(fd);
  const std::string command = shellQuoted(gnnjitBinary()) + " " + args + " 2>" + errPath;
  CommandResult result;
  int pipeFds[2];
  if (pipe(pipeFds) == 0) {
    std::fflush(nullptr);
    const pid_t pid = fork();
    if (pid == 0) {
      dup2(pipeFds[1], STDOUT_FILENO);
      close(pipeFds[0]);
      close(pipeFds[1]);
      execl("/bin/sh", "sh", "-c", command.c_str(), static_cast<char *>(nullptr));
      _exit(127);
    }
    close(pipeFds[1]);
    if (pid > 0) {
      std::array<char, 4096> buffer;
      ssize_t n;
      while ((n = read(pipeFds[0], buffer.data(), buffer.size())) != 0) {
        if (n > 0)
          result.out.append(buffer.data(), static_cast<size_t>(n));
        else if (errno != EINTR)
          break;
      }
      int status = 0;
      rusage usage{};
      pid_t waited;
      while ((waited = wait4(pid, &status, 0, &usage)) < 0 && errno == EINTR) {
      }
      if (waited == pid) {
        result.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
        result.peakRssBytes = static_cast<long long>(usage.ru_maxrss) * 1024; // Linux reports KiB
      }
    }
    close(pipeFds[0]);
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
