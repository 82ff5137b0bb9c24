// SHA-256 as lowercase hex: content addresses and dump names.
#pragma once

#include <llvm/ADT/StringRef.h>
#include <llvm/Support/SHA256.h>

#include <string>
#include <string_view>

namespace gnnjit::runtime {

/// Incremental SHA-256 whose parts are length-prefixed, so ("ab", "c") and
/// ("a", "bc") hash differently.
class KeyHasher {
public:
  KeyHasher &add(std::string_view part) {
    uint64_t size = part.size();
    sha_.update(llvm::StringRef(reinterpret_cast<const char *>(&size), sizeof size));
    sha_.update(llvm::StringRef(part.data(), part.size()));
    return *this;
  }
  std::string hex() {
    static constexpr char kDigits[] = "0123456789abcdef";
    std::string out;
    for (unsigned char byte : sha_.final()) {
      out += kDigits[byte >> 4];
      out += kDigits[byte & 15];
    }
    return out;
  }

private:
  llvm::SHA256 sha_;
};

inline std::string sha256Hex(std::string_view text) { return KeyHasher().add(text).hex(); }

} // namespace gnnjit::runtime
