// How a gnnjit program ends: the exit codes every program of the project
// uses, and the one place an exception becomes a message and a code.
#pragma once

#include <string_view>

namespace gnnjit {

enum ExitCode : int {
  kExitOk = 0,
  kExitUserError = 1,     ///< the input or the machine: a bad file, an option, no GPU, too little memory
  kExitUsageError = 2,    ///< the command line
  kExitInternalError = 3, ///< a bug in gnnjit (a kernel that faulted, a result off the reference)
};

/// Prints the exception in flight as "PROGRAM: error: ..." (the user's or
/// the machine's) or "PROGRAM: internal error ..." (a bug) on stderr, and
/// returns its exit code. Call it only inside a catch block.
ExitCode reportCurrentException(std::string_view program);

} // namespace gnnjit
