// A value or the error that prevented it: for failures a caller handles as
// data (the autotuner scores a config that does not compile as infinity).
#pragma once

#include "support/Error.h"

#include <utility>
#include <variant>

namespace gnnjit::runtime {

template <typename T, typename E> class Expected {
public:
  Expected(T value) : state_(std::in_place_index<0>, std::move(value)) {}
  Expected(E error) : state_(std::in_place_index<1>, std::move(error)) {}

  bool ok() const { return state_.index() == 0; }
  explicit operator bool() const { return ok(); }

  /// The value; throws the error when there is none.
  T &value() & {
    throwIfError();
    return std::get<0>(state_);
  }
  const T &value() const & {
    throwIfError();
    return std::get<0>(state_);
  }
  T value() && {
    throwIfError();
    return std::move(std::get<0>(state_));
  }

  const E &error() const {
    if (ok())
      throwInternalError("Expected::error() called on a value");
    return std::get<1>(state_);
  }

private:
  void throwIfError() const {
    if (!ok())
      throw std::get<1>(state_);
  }

  std::variant<T, E> state_;
};

} // namespace gnnjit::runtime
