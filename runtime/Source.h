// The first JIT stage: CUDA C++ text with the headers it includes.
#pragma once

#include <string>
#include <vector>

namespace gnnjit::runtime {

/// A header served to `#include "name"` from memory, never from disk.
struct Header {
  std::string name;
  std::string text;
};

struct Source {
  std::string name; ///< file name in logs and dumps, e.g. "gcn_forward.cu"
  std::string text;
  std::vector<Header> headers;
};

} // namespace gnnjit::runtime
