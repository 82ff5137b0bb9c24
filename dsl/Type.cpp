#include "dsl/Type.h"

#include <fmt/format.h>

namespace gnnjit::dsl {

std::string_view dtypeName(DType type) {
  switch (type) {
  case DType::F32:
    return "f32";
  case DType::F16:
    return "f16";
  case DType::BF16:
    return "bf16";
  }
  return "?";
}

std::optional<DType> parseDType(std::string_view name) {
  for (DType t : {DType::F32, DType::F16, DType::BF16})
    if (dtypeName(t) == name)
      return t;
  return std::nullopt;
}

std::string shapeText(Shape shape) { return fmt::format("[{}, {}]", shape.heads, shape.dim); }

std::optional<Shape> broadcast(Shape a, Shape b) {
  const auto axis = [](int64_t x, int64_t y) -> std::optional<int64_t> {
    if (x == y || y == 1)
      return x;
    if (x == 1)
      return y;
    return std::nullopt;
  };
  const auto heads = axis(a.heads, b.heads);
  const auto dim = axis(a.dim, b.dim);
  if (!heads || !dim)
    return std::nullopt;
  return Shape{*heads, *dim};
}

std::string_view levelName(Level level) {
  switch (level) {
  case Level::Global:
    return "global";
  case Level::Src:
    return "src";
  case Level::Dst:
    return "dst";
  case Level::Edge:
    return "edge";
  }
  return "?";
}

Level join(Level a, Level b) {
  if (a == b)
    return a;
  if (a == Level::Global)
    return b;
  if (b == Level::Global)
    return a;
  return Level::Edge; // src with dst, or either with edge
}

} // namespace gnnjit::dsl
