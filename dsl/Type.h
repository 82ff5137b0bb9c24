// Element types, shapes and levels of DSL values.
//
// Shapes: every value is [heads, dim]; an axis of size 1 broadcasts. So a
// scalar is [1, 1], a feature vector [1, dim], a per-head scalar [heads, 1].
// Two shapes combine when, on each axis, they are equal or one of them is 1
// (numpy's rule on two axes).
//
// Levels say where a value lives: on every edge, at the source or the
// destination of an edge, or once for the whole layer (parameters and
// constants). Combining values takes the finer level (src + dst = edge).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace gnnjit::dsl {

/// Storage type of an input or output. Arithmetic is always f32 (the
/// reference executor uses f64).
enum class DType : uint8_t { F32, F16, BF16 };

std::string_view dtypeName(DType type);
std::optional<DType> parseDType(std::string_view name);

/// The most elements one value may have (heads x dim): a node's row is
/// indexed with 32-bit integers in generated kernels.
inline constexpr int64_t kMaxShapeSize = (int64_t{1} << 31) - 1;

struct Shape {
  int64_t heads = 1;
  int64_t dim = 1;

  static Shape scalar() { return {1, 1}; }
  static Shape vector(int64_t dim) { return {1, dim}; }
  static Shape perHead(int64_t heads) { return {heads, 1}; }

  int64_t size() const { return heads * dim; }
  bool isScalar() const { return heads == 1 && dim == 1; }
  bool operator==(const Shape &) const = default;
};

/// "[4, 32]".
std::string shapeText(Shape shape);

/// The broadcast of two shapes, or nothing when they do not combine.
std::optional<Shape> broadcast(Shape a, Shape b);

/// Where a value lives. Order matters: join() takes the finer of two.
enum class Level : uint8_t {
  Global, ///< one value for the whole layer: parameters, constants
  Src,    ///< one value per node, read at the source j of an edge j -> i
  Dst,    ///< one value per node, read at the destination i
  Edge,   ///< one value per edge
};

std::string_view levelName(Level level);

/// The level of a value computed from values at levels a and b.
Level join(Level a, Level b);

} // namespace gnnjit::dsl
