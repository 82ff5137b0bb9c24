// The message of the UserError an action throws, for tests that check what
// a refusal says.
#pragma once

#include "support/Error.h"

#include <string>

namespace gnnjit::test {

/// The UserError's message, or "(no error)" when `action` returns normally
/// (any other exception propagates and fails the test).
template <typename F> std::string userErrorText(F &&action) {
  try {
    action();
  } catch (const UserError &e) {
    return e.what();
  }
  return "(no error)";
}

} // namespace gnnjit::test
