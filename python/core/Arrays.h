// Arrays across the Python boundary: any CPU array nanobind accepts (numpy,
// or a DLPack producer such as a torch tensor), read with its own dtype and
// strides into the core's types, and the core's results handed back as new
// numpy arrays that own their memory.
#pragma once

#include "ref/Tensor.h"

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

#include <cstdint>
#include <string>
#include <vector>

namespace gnnjit::python {

using AnyArray = nanobind::ndarray<nanobind::device::cpu>;

/// "int64", "float32", ... for messages.
std::string dtypeName(nanobind::dlpack::dtype dtype);

/// A 2-D float array (float32 or float64) as a reference tensor; a 1-D one
/// as one row. `what` names it in errors.
ref::Tensor toTensor(const AnyArray &array, const std::string &what);
/// Element (r, c) of a 2-D integer array (int32 or int64) as int64, for
/// every element: rows[r][c]. `what` names it in errors.
std::vector<std::vector<int64_t>> toIntRows(const AnyArray &array, const std::string &what);
/// A 1-D float array (float32 or float64) as floats.
std::vector<float> toFloats(const AnyArray &array, const std::string &what);

/// New numpy arrays owning a copy of `values`.
nanobind::object numpyArray(const ref::Tensor &tensor);
template <typename T> nanobind::object numpyVector(const std::vector<T> &values);
/// A rows x cols numpy array of row-major `values`.
template <typename T> nanobind::object numpyMatrix(const std::vector<T> &values, int64_t rows, int64_t cols);

} // namespace gnnjit::python
