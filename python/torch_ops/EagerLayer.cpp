// gnnjit's torch operator library: a layer's eager CUDA call, forward and
// backward, as a C++ autograd function, so a training step runs no Python
// in gnnjit's backward and little in its forward (the Python path's
// autograd.Function, tensor allocations and argument lists cost 100 us and
// more a layer on a small graph). gnnjit._torch_ops loads it; gnnjit._eager
// calls gnnjit_eager::layer for plain eager CUDA calls, with the address of
// a Runner made once per compiled layer and graph. The runner itself stays in
// gnnjit._core, reached through RunnerBridge.h's C table: this library
// shares no C++ types with _core and links only torch.
#include "python/core/RunnerBridge.h"

#include <ATen/ops/empty.h>
#include <ATen/ops/zeros.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <torch/autograd.h>
#include <torch/custom_class.h>
#include <torch/library.h>

#include <string>
#include <vector>

namespace gnnjit::torch_ops {

namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

/// How the forward makes a saved value: the output it is, or new memory.
struct SavedSpec {
  int64_t aliasedOutput; ///< index among the layer's outputs, or -1
  int64_t rows, width;
  c10::ScalarType dtype;
};

/// A compiled layer on one graph (a gnnjit._core.CudaLayer, kept alive
/// while this lives), with the shapes of what each pass makes.
class Runner : public torch::CustomClassHolder {
public:
  /// forwardShapes: (rows, width) of each forward result; outputSlots: each
  /// output's index among them; saved: (aliased output or -1, rows, width,
  /// dtype: 0 float32, 1 int32, 2 int64) of each saved value.
  Runner(int64_t bridge, int64_t handle, int64_t owner, std::vector<int64_t> forwardShapes,
         std::vector<int64_t> outputSlots, std::vector<int64_t> saved)
      : bridge_(reinterpret_cast<const GnnjitRunnerBridge *>(bridge)), handle_(reinterpret_cast<void *>(handle)),
        owner_(reinterpret_cast<void *>(owner)), forwardShapes_(pairs(forwardShapes, "forward shapes")),
        outputSlots_(std::move(outputSlots)) {
    TORCH_CHECK(bridge_ != nullptr && bridge_->version == GNNJIT_RUNNER_BRIDGE_VERSION,
                "gnnjit: the torch operator library and gnnjit._core disagree on their bridge's version; reinstall "
                "gnnjit");
    TORCH_CHECK(saved.size() % 4 == 0, "gnnjit_eager.Runner: saved takes 4 integers a value");
    for (size_t k = 0; k < saved.size(); k += 4)
      saved_.push_back({saved[k], saved[k + 1], saved[k + 2], dtypeOf(saved[k + 3])});
    for (int64_t slot : outputSlots_)
      TORCH_CHECK(slot >= 0 && slot < static_cast<int64_t>(forwardShapes_.size()), "gnnjit_eager.Runner: slot ",
                  slot, " names no forward result");
    bridge_->retain(owner_);
  }
  ~Runner() override { bridge_->release(owner_); }
  Runner(const Runner &) = delete;
  Runner &operator=(const Runner &) = delete;

  /// The backward's result shapes and each input's gradient among them (-1:
  /// none, the gradient is zero); given once, before the first backward.
  void setBackward(std::vector<int64_t> shapes, std::vector<int64_t> gradientSlots) {
    backwardShapes_ = pairs(shapes, "backward shapes");
    gradientSlots_ = std::move(gradientSlots);
    hasBackward_ = true;
  }
  bool hasBackward() const { return hasBackward_; }

  void call(bool backward, const std::vector<int64_t> &flat, cudaStream_t stream, uint64_t seed,
            bool backwardFollows) const {
    char message[4096];
    const int32_t status = bridge_->call(handle_, backward, flat.data(), flat.size(), stream, seed, backwardFollows,
                                         message, sizeof message);
    if (status == GNNJIT_BRIDGE_OUT_OF_MEMORY)
      TORCH_CHECK_WITH(OutOfMemoryError, false, message);
    TORCH_CHECK(status == GNNJIT_BRIDGE_OK, message);
  }

  const std::vector<std::pair<int64_t, int64_t>> &forwardShapes() const { return forwardShapes_; }
  const std::vector<int64_t> &outputSlots() const { return outputSlots_; }
  const std::vector<SavedSpec> &saved() const { return saved_; }
  const std::vector<std::pair<int64_t, int64_t>> &backwardShapes() const { return backwardShapes_; }
  const std::vector<int64_t> &gradientSlots() const { return gradientSlots_; }

private:
  static std::vector<std::pair<int64_t, int64_t>> pairs(const std::vector<int64_t> &flat, const char *what) {
    TORCH_CHECK(flat.size() % 2 == 0, "gnnjit_eager.Runner: ", what, " take (rows, width) pairs");
    std::vector<std::pair<int64_t, int64_t>> out;
    for (size_t k = 0; k < flat.size(); k += 2)
      out.emplace_back(flat[k], flat[k + 1]);
    return out;
  }
  static c10::ScalarType dtypeOf(int64_t code) {
    TORCH_CHECK(code >= 0 && code <= 2, "gnnjit_eager.Runner: saved dtype code ", code);
    return code == 0 ? c10::kFloat : code == 1 ? c10::kInt : c10::kLong;
  }

  const GnnjitRunnerBridge *bridge_;
  void *handle_, *owner_;
  std::vector<std::pair<int64_t, int64_t>> forwardShapes_;
  std::vector<int64_t> outputSlots_;
  std::vector<SavedSpec> saved_;
  std::vector<std::pair<int64_t, int64_t>> backwardShapes_;
  std::vector<int64_t> gradientSlots_;
  bool hasBackward_ = false;
};

/// Appends (pointer, rows, cols, row stride) of `t` as rows the kernels read
/// in place (2-D, unit column stride, row stride at least the width; other
/// layouts copied to contiguous rows, kept in `kept` until the call is
/// queued), as gnnjit._layer_cache._flat_args does.
void appendRows(const at::Tensor &t, std::vector<int64_t> &flat, std::vector<at::Tensor> &kept) {
  at::Tensor rows = t;
  int64_t stride = 0;
  if (t.dim() == 2) {
    stride = t.stride(0);
    if ((t.stride(1) != 1 && t.size(1) > 1) || stride < t.size(1)) {
      rows = t.contiguous();
      stride = t.size(1);
    }
  } else {
    rows = t.contiguous().reshape({t.size(0), -1});
    stride = rows.size(1);
  }
  if (!rows.is_same(t))
    kept.push_back(rows);
  const int64_t r = rows.size(0), c = rows.size(1);
  flat.insert(flat.end(), {reinterpret_cast<int64_t>(rows.data_ptr()), r, c, r > 1 ? stride : c});
}

int64_t pointerOf(const at::Tensor &t) { return reinterpret_cast<int64_t>(t.data_ptr()); }

cudaStream_t currentStream(const at::Tensor &t) {
  return c10::cuda::getCurrentCUDAStream(t.device().index()).stream();
}

/// What a forward pass makes: the outputs in the layer's order, and the
/// saved values that alias no output.
struct ForwardResults {
  variable_list outputs, own;
};

ForwardResults runForward(const Runner &runner, at::TensorList inputs, int64_t seed, bool backwardFollows) {
  TORCH_CHECK(!inputs.empty() && inputs[0].is_cuda(), "gnnjit_eager::layer runs CUDA tensors");
  const c10::cuda::CUDAGuard guard(inputs[0].device());
  const at::TensorOptions floats = inputs[0].options().dtype(c10::kFloat);
  std::vector<int64_t> flat;
  flat.reserve(4 * inputs.size() + runner.forwardShapes().size() + runner.saved().size());
  std::vector<at::Tensor> kept;
  for (const at::Tensor &t : inputs)
    appendRows(t, flat, kept);
  variable_list results;
  for (const auto &[rows, width] : runner.forwardShapes()) {
    results.push_back(at::empty({rows, width}, floats));
    flat.push_back(pointerOf(results.back()));
  }
  ForwardResults out;
  for (const SavedSpec &s : runner.saved())
    if (s.aliasedOutput < 0) {
      out.own.push_back(at::empty({s.rows, s.width}, floats.dtype(s.dtype)));
      flat.push_back(pointerOf(out.own.back()));
    }
  runner.call(false, flat, currentStream(inputs[0]), static_cast<uint64_t>(seed), backwardFollows);
  for (int64_t slot : runner.outputSlots())
    out.outputs.push_back(results[slot]);
  return out;
}

/// The outputs, then the saved values: what gnnjit_eager::layer returns.
variable_list joined(ForwardResults results) {
  variable_list all = std::move(results.outputs);
  all.insert(all.end(), results.own.begin(), results.own.end());
  return all;
}

/// The layer's pass as an autograd function: forward(runner, inputs, seed,
/// backward_follows) -> the outputs in the layer's order, then the values
/// the forward saves (not differentiable).
class EagerLayer : public torch::autograd::Function<EagerLayer> {
public:
  static variable_list forward(AutogradContext *ctx, const c10::intrusive_ptr<Runner> &runner, at::TensorList inputs,
                               int64_t seed, bool backwardFollows) {
    ForwardResults results = runForward(*runner, inputs, seed, backwardFollows);
    const variable_list &outputs = results.outputs, &own = results.own;
    ctx->mark_non_differentiable(own);
    ctx->set_materialize_grads(false); // an output no loss reached stays undefined (zero)
    // The backward reads the inputs and every saved value, in the layout's order.
    variable_list keptForBackward(inputs.begin(), inputs.end());
    size_t nextOwn = 0;
    for (const SavedSpec &s : runner->saved())
      keptForBackward.push_back(s.aliasedOutput >= 0 ? outputs[s.aliasedOutput] : own[nextOwn++]);
    ctx->save_for_backward(keptForBackward);
    ctx->saved_data["runner"] = runner;
    ctx->saved_data["seed"] = seed;
    return joined(std::move(results));
  }

  static variable_list backward(AutogradContext *ctx, variable_list grads) {
    // Differentiating the backward (create_graph=True) would need a formula
    // for it; refusing beats gradients of gradients silently left out.
    TORCH_CHECK(!torch::autograd::GradMode::is_enabled(),
                "gnnjit layers are differentiable once: a backward with create_graph=True is not supported");
    const auto runner = ctx->saved_data["runner"].toCustomClass<Runner>();
    TORCH_CHECK(runner->hasBackward(), "gnnjit_eager::layer: the runner was made without its backward's shapes");
    const variable_list stored = ctx->get_saved_variables(); // the inputs, then the saved values
    const auto numInputs = static_cast<int64_t>(stored.size() - runner->saved().size());
    const auto numOutputs = static_cast<int64_t>(runner->outputSlots().size());
    const at::Tensor &first = stored[0];
    const c10::cuda::CUDAGuard guard(first.device());
    const at::TensorOptions floats = first.options().dtype(c10::kFloat);

    std::vector<int64_t> flat;
    std::vector<at::Tensor> kept;
    for (int64_t k = 0; k < numInputs; ++k)
      appendRows(stored[k], flat, kept);
    const auto &forwardShapes = runner->forwardShapes();
    for (int64_t k = 0; k < numOutputs; ++k) {
      const at::Tensor &d = grads[k];
      if (!d.defined()) { // no loss reached this output: its gradient is zero
        const auto &[rows, width] = forwardShapes[runner->outputSlots()[k]];
        const at::Tensor zeros = at::zeros({rows, width}, floats);
        kept.push_back(zeros);
        appendRows(zeros, flat, kept);
      } else {
        appendRows(d.scalar_type() == c10::kFloat ? d : d.to(c10::kFloat), flat, kept);
      }
    }
    variable_list results;
    for (const auto &[rows, width] : runner->backwardShapes()) {
      results.push_back(at::empty({rows, width}, floats));
      flat.push_back(pointerOf(results.back()));
    }
    for (size_t k = numInputs; k < stored.size(); ++k)
      flat.insert(flat.end(), {pointerOf(stored[k]), static_cast<int64_t>(stored[k].nbytes())});
    runner->call(true, flat, currentStream(first), static_cast<uint64_t>(ctx->saved_data["seed"].toInt()), true);

    variable_list out{at::Tensor()}; // the runner
    for (int64_t k = 0; k < numInputs; ++k) {
      const int64_t slot = runner->gradientSlots()[k];
      out.push_back(slot >= 0 ? results[slot] : at::zeros_like(stored[k]));
    }
    out.push_back(at::Tensor()); // seed
    out.push_back(at::Tensor()); // backward_follows
    return out;
  }
};

bool recordsGradient(at::TensorList inputs) {
  if (!torch::autograd::GradMode::is_enabled())
    return false;
  for (const at::Tensor &t : inputs)
    if (t.requires_grad())
      return true;
  return false;
}

/// `runner` is the address of a live Runner (Runner.address(); the caller
/// holds it for the call): a custom-class argument costs some 13 us a call
/// in torch's Python binding, an int about 1. The call takes its own
/// reference, which the autograd graph keeps for the backward.
std::vector<at::Tensor> layer(int64_t address, at::TensorList inputs, int64_t seed, bool backwardFollows) {
  TORCH_CHECK(address != 0, "gnnjit_eager::layer: no runner");
  const auto runner = c10::intrusive_ptr<Runner>::unsafe_reclaim_from_nonowning(reinterpret_cast<Runner *>(address));
  if (!recordsGradient(inputs)) // inference: the pass alone, without an autograd function's bookkeeping
    return joined(runForward(*runner, inputs, seed, backwardFollows));
  return EagerLayer::apply(runner, inputs, seed, backwardFollows);
}

} // namespace

TORCH_LIBRARY(gnnjit_eager, m) {
  m.class_<Runner>("Runner")
      .def(torch::init<int64_t, int64_t, int64_t, std::vector<int64_t>, std::vector<int64_t>, std::vector<int64_t>>())
      .def("set_backward", &Runner::setBackward)
      .def("has_backward", &Runner::hasBackward)
      .def("address", [](const c10::intrusive_ptr<Runner> &self) { return reinterpret_cast<int64_t>(self.get()); });
  // Composite: the function records itself with autograd; gnnjit._eager
  // calls it only in plain eager mode on CUDA tensors.
  m.def("layer(int runner, Tensor[] inputs, int seed, bool backward_follows) -> Tensor[]", &layer);
}

} // namespace gnnjit::torch_ops
