#include "cli/RunTensors.h"

#include "cli/TensorFiles.h"
#include "exec/RandomInputs.h"
#include "ref/Bindings.h"
#include "support/Error.h"
#include "support/Message.h"

#include <algorithm>
#include <vector>

namespace gnnjit::cli {

namespace {

constexpr uint64_t kFirstGradientStream = 1000;

/// A reader of DIR/NAME whose shape the tensor must have.
TensorFileReader openChecked(const std::string &dir, const BoundTensor &t) {
  TensorFileReader reader(dir, t.name);
  if (reader.rows() != t.rows || reader.cols() != t.cols)
    throwUserError("'{}' is {} x {}, but {} '{}' needs {} x {} on this graph and layer",
                   clipForMessage(reader.headerPath().string()), reader.rows(), reader.cols(),
                   t.outputGradient ? "output gradient" : "input", t.name, t.rows, t.cols);
  return reader;
}

} // namespace

std::vector<BoundTensor> boundTensors(const lower::LoweredLayer &lowered, const graph::Graph &graph, bool backward) {
  std::vector<BoundTensor> bound;
  const std::vector<dsl::InputPtr> &inputs = lowered.layer.inputs();
  for (size_t k = 0; k < inputs.size(); ++k)
    bound.push_back({inputs[k]->name, ref::bindingRows(*inputs[k], graph), inputs[k]->shape.size(), k + 1, false});
  if (backward) {
    const std::vector<dsl::InputPtr> &grads = lowered.backward.plan.outputGradients;
    for (size_t k = 0; k < grads.size(); ++k)
      bound.push_back({grads[k]->name, graph.numNodes(), grads[k]->shape.size(), kFirstGradientStream + k, true});
  }
  return bound;
}

ref::TensorMap hostTensors(const std::vector<BoundTensor> &bound, const TensorSource &source) {
  ref::TensorMap host;
  for (const BoundTensor &t : bound) {
    if (!source.fromFiles()) {
      host[t.name] = exec::randomHostTensor(t.rows, t.cols, exec::tensorSeed(source.seed, t.stream));
      continue;
    }
    TensorFileReader reader = openChecked(source.dir, t);
    ref::Tensor tensor(t.rows, t.cols);
    reader.read(tensor.values.data(), tensor.values.size());
    host[t.name] = std::move(tensor);
  }
  return host;
}

void makeDeviceTensors(const std::vector<BoundTensor> &bound, const TensorSource &source, exec::OwnedTensors &owned) {
  for (const BoundTensor &t : bound) {
    const exec::DeviceTensor &d = owned.add(t.name, t.rows, t.cols);
    if (!source.fromFiles()) {
      exec::fillRandom(d, exec::tensorSeed(source.seed, t.stream));
      continue;
    }
    TensorFileReader reader = openChecked(source.dir, t);
    std::vector<double> block;
    exec::uploadRowBlocks(d, [&](int64_t, int64_t rows, float *values) {
      block.resize(static_cast<size_t>(rows * t.cols));
      reader.read(block.data(), block.size());
      std::transform(block.begin(), block.end(), values, [](double v) { return static_cast<float>(v); });
    });
  }
}

void uploadTensors(const std::vector<BoundTensor> &bound, const ref::TensorMap &host, exec::OwnedTensors &owned) {
  for (const BoundTensor &t : bound)
    exec::upload(host.at(t.name), owned.add(t.name, t.rows, t.cols));
}

void writeDeviceTensorFile(const std::string &dir, const std::string &name, const exec::DeviceTensor &t) {
  TensorFileWriter writer(dir, name, t.rows, t.cols);
  std::vector<double> block;
  exec::forEachRowBlock(t, [&](int64_t, int64_t rows, const float *values) {
    block.assign(values, values + rows * t.cols);
    writer.write(block.data(), block.size());
  });
  writer.finish();
}

} // namespace gnnjit::cli
