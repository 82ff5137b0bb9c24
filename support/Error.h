// Two kinds of error, as docs/architecture.md asks: the user's (bad input, bad graph,
// bad options: say what and how to fix it) and internal (a bug in gnnjit).
#pragma once

#include <fmt/format.h>

#include <stdexcept>
#include <string>

namespace gnnjit {

/// A problem with what the user gave us. The message says what is wrong and,
/// where it can, how to fix it.
class UserError : public std::runtime_error {
public:
  explicit UserError(const std::string &message) : std::runtime_error(message) {}
};

/// A broken invariant inside gnnjit: a bug, never the user's fault.
class InternalError : public std::logic_error {
public:
  explicit InternalError(const std::string &message)
      : std::logic_error("internal error (a bug in gnnjit, please report it): " + message) {}
};

/// A call into a library or the driver failed (CUDA, cuSPARSE). Who is to
/// blame depends on how it failed: the machine (no GPU, no driver, out of
/// device memory: the user can act on it) or gnnjit (an invalid argument, a
/// kernel that faulted: a bug). Not a UserError, so a kernel fault is never
/// blamed on the user's input.
class LibraryError : public std::runtime_error {
public:
  enum class Blame : unsigned char { Machine, Gnnjit };
  LibraryError(const std::string &message, Blame blame) : std::runtime_error(message), blame_(blame) {}
  Blame blame() const { return blame_; }

private:
  Blame blame_;
};

template <typename... Args>
[[noreturn]] void throwUserError(fmt::format_string<Args...> format, Args &&...args) {
  throw UserError(fmt::format(format, std::forward<Args>(args)...));
}

template <typename... Args>
[[noreturn]] void throwInternalError(fmt::format_string<Args...> format, Args &&...args) {
  throw InternalError(fmt::format(format, std::forward<Args>(args)...));
}

} // namespace gnnjit
