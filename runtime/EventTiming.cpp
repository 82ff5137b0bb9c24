#include "runtime/EventTiming.h"

#include "runtime/CudaCheck.h"

#include <algorithm>
#include <vector>

namespace gnnjit::runtime {

namespace {

struct Event {
  cudaEvent_t event = nullptr;
  Event() { GNNJIT_CUDA_CHECK(cudaEventCreate(&event)); }
  ~Event() { (void)cudaEventDestroy(event); }
  Event(const Event &) = delete;
  Event &operator=(const Event &) = delete;
};

} // namespace

double medianMs(const std::function<void()> &fn, int warmup, int reps, cudaStream_t stream) {
  for (int i = 0; i < warmup; ++i)
    fn();
  GNNJIT_CUDA_CHECK(cudaStreamSynchronize(stream));
  Event start, stop;
  std::vector<float> ms;
  for (int i = 0; i < std::max(1, reps); ++i) {
    GNNJIT_CUDA_CHECK(cudaEventRecord(start.event, stream));
    fn();
    GNNJIT_CUDA_CHECK(cudaEventRecord(stop.event, stream));
    GNNJIT_CUDA_CHECK(cudaEventSynchronize(stop.event));
    float t = 0;
    GNNJIT_CUDA_CHECK(cudaEventElapsedTime(&t, start.event, stop.event));
    ms.push_back(t);
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

} // namespace gnnjit::runtime
