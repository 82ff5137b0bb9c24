// The code generator's version, printed in every kernel's provenance header
// and folded into the disk cache key, so CUBINs built from an older
// generator's output are never mistaken for this one's.
#pragma once

namespace gnnjit::codegen {

inline constexpr char kGeneratorVersion[] = "gnnjit-codegen 0.2.0"; // 0.2: attention heads padded, dropout

} // namespace gnnjit::codegen
