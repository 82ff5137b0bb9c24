#include "python/core/Arrays.h"

#include "support/Error.h"

#include <fmt/format.h>

#include <cstring>

namespace nb = nanobind;

namespace gnnjit::python {

std::string dtypeName(nb::dlpack::dtype dtype) {
  const char *kind = dtype.code == static_cast<uint8_t>(nb::dlpack::dtype_code::Int)     ? "int"
                     : dtype.code == static_cast<uint8_t>(nb::dlpack::dtype_code::UInt)  ? "uint"
                     : dtype.code == static_cast<uint8_t>(nb::dlpack::dtype_code::Float) ? "float"
                     : dtype.code == static_cast<uint8_t>(nb::dlpack::dtype_code::Bool)  ? "bool"
                                                                                          : "other";
  return fmt::format("{}{}", kind, dtype.bits);
}

namespace {

bool isFloat(nb::dlpack::dtype t, int bits) {
  return t.code == static_cast<uint8_t>(nb::dlpack::dtype_code::Float) && t.bits == bits && t.lanes == 1;
}
bool isInt(nb::dlpack::dtype t, int bits) {
  return t.code == static_cast<uint8_t>(nb::dlpack::dtype_code::Int) && t.bits == bits && t.lanes == 1;
}

/// Element `offset` (in elements) of a float32 or float64 array.
double floatAt(const AnyArray &a, int64_t offset) {
  if (isFloat(a.dtype(), 64))
    return static_cast<const double *>(a.data())[offset];
  return static_cast<const float *>(a.data())[offset];
}

void requireFloat(const AnyArray &a, const std::string &what) {
  if (!isFloat(a.dtype(), 32) && !isFloat(a.dtype(), 64))
    throwUserError("{} must hold float32 or float64 values; got {}", what, dtypeName(a.dtype()));
}

} // namespace

ref::Tensor toTensor(const AnyArray &array, const std::string &what) {
  requireFloat(array, what);
  if (array.ndim() != 1 && array.ndim() != 2)
    throwUserError("{} must be a 1-D or 2-D array (rows x features); got {} dimensions", what, array.ndim());
  const int64_t rows = array.ndim() == 2 ? static_cast<int64_t>(array.shape(0)) : 1;
  const int64_t cols = static_cast<int64_t>(array.shape(array.ndim() - 1));
  const int64_t rowStride = array.ndim() == 2 ? array.stride(0) : 0;
  const int64_t colStride = array.stride(array.ndim() - 1);
  ref::Tensor t(rows, cols);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c)
      t.at(r, c) = floatAt(array, r * rowStride + c * colStride);
  return t;
}

std::vector<std::vector<int64_t>> toIntRows(const AnyArray &array, const std::string &what) {
  const bool i64 = isInt(array.dtype(), 64), i32 = isInt(array.dtype(), 32);
  if (!i64 && !i32)
    throwUserError("{} must hold int64 or int32 values; got {}", what, dtypeName(array.dtype()));
  if (array.ndim() != 2)
    throwUserError("{} must be a 2-D array; got {} dimensions", what, array.ndim());
  std::vector<std::vector<int64_t>> rows(array.shape(0), std::vector<int64_t>(array.shape(1)));
  for (size_t r = 0; r < array.shape(0); ++r)
    for (size_t c = 0; c < array.shape(1); ++c) {
      const int64_t offset = static_cast<int64_t>(r) * array.stride(0) + static_cast<int64_t>(c) * array.stride(1);
      rows[r][c] = i64 ? static_cast<const int64_t *>(array.data())[offset]
                       : static_cast<const int32_t *>(array.data())[offset];
    }
  return rows;
}

std::vector<float> toFloats(const AnyArray &array, const std::string &what) {
  requireFloat(array, what);
  if (array.ndim() != 1)
    throwUserError("{} must be a 1-D array; got {} dimensions", what, array.ndim());
  std::vector<float> values(array.shape(0));
  for (size_t i = 0; i < values.size(); ++i)
    values[i] = static_cast<float>(floatAt(array, static_cast<int64_t>(i) * array.stride(0)));
  return values;
}

namespace {

/// A numpy array of `shape` owning a heap copy of `count` elements.
template <typename T> nb::object ownedNumpy(const T *values, size_t count, std::initializer_list<size_t> shape) {
  T *copy = new T[count > 0 ? count : 1];
  if (count > 0)
    std::memcpy(copy, values, count * sizeof(T));
  nb::capsule owner(copy, [](void *p) noexcept { delete[] static_cast<T *>(p); });
  return nb::cast(nb::ndarray<nb::numpy, T>(copy, shape.size(), shape.begin(), owner));
}

} // namespace

nb::object numpyArray(const ref::Tensor &tensor) {
  return ownedNumpy(tensor.values.data(), tensor.values.size(),
                    {static_cast<size_t>(tensor.rows), static_cast<size_t>(tensor.cols)});
}

template <typename T> nb::object numpyVector(const std::vector<T> &values) {
  return ownedNumpy(values.data(), values.size(), {values.size()});
}
template <typename T> nb::object numpyMatrix(const std::vector<T> &values, int64_t rows, int64_t cols) {
  if (static_cast<int64_t>(values.size()) != rows * cols)
    throwInternalError("a {} x {} array from {} values", rows, cols, values.size());
  return ownedNumpy(values.data(), values.size(), {static_cast<size_t>(rows), static_cast<size_t>(cols)});
}
template nb::object numpyMatrix(const std::vector<int64_t> &, int64_t, int64_t);
template nb::object numpyMatrix(const std::vector<float> &, int64_t, int64_t);

template nb::object numpyVector(const std::vector<int64_t> &);
template nb::object numpyVector(const std::vector<float> &);
template nb::object numpyVector(const std::vector<double> &);

} // namespace gnnjit::python
