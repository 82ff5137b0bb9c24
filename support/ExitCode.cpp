#include "support/ExitCode.h"

#include "support/Error.h"
#include "support/Message.h"

#include <fmt/format.h>

#include <cstdio>
#include <exception>
#include <filesystem>
#include <new>

namespace gnnjit {

ExitCode reportCurrentException(std::string_view program) {
  try {
    throw;
  } catch (const UserError &e) {
    fmt::print(stderr, "{}: error: {}\n", program, e.what());
    return kExitUserError;
  } catch (const InternalError &e) {
    fmt::print(stderr, "{}: {}\n", program, e.what());
    return kExitInternalError;
  } catch (const LibraryError &e) {
    if (e.blame() == LibraryError::Blame::Machine) {
      fmt::print(stderr, "{}: error: {}\n", program, e.what());
      return kExitUserError;
    }
    fmt::print(stderr, "{}: internal error (a bug in gnnjit, please report it): {}\n", program, e.what());
    return kExitInternalError;
  } catch (const std::filesystem::filesystem_error &e) {
    // A path the user named that cannot be read (too long, a loop of links,
    // no permission) where no loader caught it first: theirs to fix.
    fmt::print(stderr, "{}: error: cannot access '{}': {}\n", program, clipForMessage(e.path1().string()),
               e.code().message());
    return kExitUserError;
  } catch (const std::bad_alloc &) {
    fmt::print(stderr, "{}: error: out of host memory (an allocation failed); this machine has too little free "
                       "memory for this run\n",
               program);
    return kExitUserError;
  } catch (const std::exception &e) {
    fmt::print(stderr, "{}: internal error (a bug in gnnjit, please report it): {}\n", program, e.what());
    return kExitInternalError;
  } catch (...) {
    fmt::print(stderr, "{}: internal error (a bug in gnnjit, please report it): an unknown exception\n", program);
    return kExitInternalError;
  }
}

} // namespace gnnjit
