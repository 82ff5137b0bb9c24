// cuSPARSE SpMM over a graph's CSR on the device: Y = A * X with A a CSR of
// float values (one per stored edge) and X, Y dense row-major float matrices.
// Everything that depends only on the matrix and F is made once and kept:
// descriptors, the workspace per F, the algorithm per F (the one the stage's
// config names, or the faster of CSR ALG1/ALG2, timed once with the shared
// event timer), and cusparseSpMM_preprocess where the algorithm uses it.
// The timed choice is kept for the process by shape class (device, index
// type, F, rows and entries to a power of two): a matrix like one timed
// before takes its algorithm untimed, so a graph built per training step
// costs no timing runs and no synchronisation.
//
// CSR ALG3 is never used: with CUDA 13.0 on an H100 it leaves a long row
// (a hub) unwritten, or reads outside its buffers, on graphs with skewed
// degrees; on an H200 it also misread rows whose stride is not a multiple
// of 4 floats. tests/exec/CusparseSpmmGpuTest.cpp holds such matrices.
//
// cuSPARSE keeps one active preprocessed buffer per sparse-matrix descriptor,
// so each F gets its own descriptor of the same arrays; its buffer stays valid
// while X and Y (pointers, leading dimensions) change, as the cuSPARSE docs
// allow for matB and matC.
#pragma once

#include "graph/Csr.h"

#include <cuda_runtime_api.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>

namespace gnnjit::exec {

/// A CSR already on the device. Offsets, indices share one index type.
struct DeviceCsrView {
  int64_t rows = 0, cols = 0, nnz = 0;
  graph::IndexType index = graph::IndexType::Int32;
  const void *offsets = nullptr; ///< rows + 1 entries
  const void *indices = nullptr; ///< nnz column indices
};

/// Y (rows x F, row stride ldy) = A (rows x cols CSR, `values` per position)
/// times X (cols x F, row stride ldx). Pointers are device pointers; the
/// matrix arrays must outlive this object. F >= 1 and ld >= F, else UserError.
/// An empty matrix (no rows or no entries) writes zeros and calls no cuSPARSE
/// routine. One object is used from one thread at a time.
class CusparseSpmm {
public:
  CusparseSpmm(DeviceCsrView csr, const float *values);
  ~CusparseSpmm();
  CusparseSpmm(const CusparseSpmm &) = delete;
  CusparseSpmm &operator=(const CusparseSpmm &) = delete;

  /// With the fastest CSR algorithm for F, timed on the first call (or that
  /// of a matrix of the same shape class, timed before).
  void multiply(const float *x, int64_t ldx, float *y, int64_t ldy, int64_t F, cudaStream_t stream);
  /// With CSR algorithm `algorithm` (1 or 2; 0: the faster, as above).
  /// Anything else, ALG3 included, is a UserError.
  void multiply(const float *x, int64_t ldx, float *y, int64_t ldy, int64_t F, int algorithm, cudaStream_t stream);
  /// The algorithm chosen for F ("alg1" or "alg2"), choosing it now if
  /// needed (on scratch X and Y, freed afterwards); "none" for an empty matrix.
  std::string algorithmName(int64_t F, cudaStream_t stream);
  /// Device bytes this object holds (workspaces).
  size_t workspaceBytes() const;

private:
  struct State;
  std::unique_ptr<State> state_;
};

/// The same product with nothing kept: handle, descriptors and workspace are
/// made and destroyed in every call, the default algorithm, no preprocessing
/// (what a framework calling cuSPARSE per step does). For benchmarks.
void cusparseSpmmUncached(DeviceCsrView csr, const float *values, const float *x, int64_t ldx, float *y, int64_t ldy,
                          int64_t F, cudaStream_t stream);

} // namespace gnnjit::exec
