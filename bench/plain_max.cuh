// The plain max aggregation a benchmark compares with: one thread per
// (node, feature), consecutive threads on consecutive features of a row (so
// every gather is coalesced), int32 CSR; its backward scatters each result's
// gradient to the arg source with a float atomic (fast, but the order of
// the additions, and so the last bits, change from run to run).
extern "C" __global__ void plain_max_forward(const int *__restrict__ offsets, const int *__restrict__ cols,
                                             const float *__restrict__ x, float *__restrict__ out,
                                             int *__restrict__ args, long long n, int F) {
  const long long t = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  const long long i = t / F;
  const int f = (int)(t % F);
  if (i >= n)
    return;
  float best = 0.0f;
  int arg = -1;
  for (int p = offsets[i]; p < offsets[i + 1]; ++p) {
    const float v = x[(long long)cols[p] * F + f];
    if (arg < 0 || v > best) {
      best = v;
      arg = p;
    }
  }
  out[i * F + f] = best;
  args[i * F + f] = arg;
}

extern "C" __global__ void plain_max_backward(const int *__restrict__ cols, const int *__restrict__ args,
                                              const float *__restrict__ dout, float *__restrict__ dx, long long n,
                                              int F) {
  const long long t = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (t >= n * F)
    return;
  const int arg = args[t];
  if (arg >= 0)
    atomicAdd(&dx[(long long)cols[arg] * F + t % F], dout[t]);
}
