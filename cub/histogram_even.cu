// CUB's DeviceHistogram::HistogramEven on the samples of examples/histogram_even.rs (the same
// hash of the index, the same three distributions), timed the same way: the median of RUNS
// calls, each between two CUDA events, the counters checked against a CPU count, and their
// FNV-1a hash printed beside the Rust example's.
//
//   nvcc -O3 -arch=sm_90 -o histogram_even cub/histogram_even.cu
//   ./histogram_even N RUNS      (CSV: distribution,n,bins,median_us,gb_per_s,counts_hash,check)
#include <cub/cub.cuh>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstdint>
#include <climits>
#include <vector>

#define CHECK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
  fprintf(stderr, "histogram_even: %s: %s\n", #x, cudaGetErrorString(e_)); exit(1); } } while (0)

static uint64_t mix(uint64_t x) {
  uint64_t z = x + 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

static uint32_t sample(int dist, uint64_t i) {
  if (dist == 0) return (uint32_t)(mix(i) >> 32);
  if (dist == 3) return (uint32_t)(mix(i) >> 34);
  if (dist == 1) return mix(i) % 10 != 0 ? 0x12345678u : (uint32_t)(mix(i) >> 32);
  return (uint32_t)(mix(i) % 1100);
}

int main(int argc, char **argv) {
  if (argc != 3) { fprintf(stderr, "usage: histogram_even N RUNS\n"); return 2; }
  size_t n = strtoull(argv[1], nullptr, 10);
  int runs = atoi(argv[2]);
  const char *names[4] = {"uniform", "skewed", "narrow", "uniform30"};
  const long long lowers[4] = {0, 0, 0, 0}, uppers[4] = {1ll << 32, 1ll << 32, 1000, 1ll << 30};
  const int bins = 256;
  printf("distribution,n,bins,median_us,gb_per_s,counts_hash,check\n");
  for (int d = 0; d < 4; d++) {
    std::vector<uint32_t> h(n);
    for (size_t i = 0; i < n; i++) h[i] = sample(d, i);
    std::vector<uint32_t> want(bins, 0);
    for (size_t i = 0; i < n; i++) {
      long long s = h[i];
      if (s >= lowers[d] && s < uppers[d])
        want[(unsigned long long)(s - lowers[d]) * bins / (unsigned long long)(uppers[d] - lowers[d])]++;
    }
    uint32_t *d_in, *d_hist;
    CHECK(cudaMalloc(&d_in, n * 4));
    CHECK(cudaMalloc(&d_hist, bins * 4));
    CHECK(cudaMemcpy(d_in, h.data(), n * 4, cudaMemcpyHostToDevice));
    size_t temp_bytes = 0;
    void *temp = nullptr;
    // The levels' type: `long long` where the upper bound is 2^32, `int` where it fits (CUB's
    // arithmetic follows the levels' type: the narrowest that holds the bounds is its fastest).
    auto call = [&]() {
      if (uppers[d] > INT32_MAX)
        return cub::DeviceHistogram::HistogramEven(temp, temp_bytes, d_in, d_hist, bins + 1, lowers[d], uppers[d], (long long)n);
      return cub::DeviceHistogram::HistogramEven(temp, temp_bytes, d_in, d_hist, bins + 1, (int)lowers[d], (int)uppers[d], (long long)n);
    };
    CHECK(call());
    CHECK(cudaMalloc(&temp, temp_bytes));
    cudaEvent_t a, b;
    CHECK(cudaEventCreate(&a));
    CHECK(cudaEventCreate(&b));
    std::vector<float> times;
    for (int r = -3; r < runs; r++) {
      CHECK(cudaEventRecord(a));
      CHECK(call());
      CHECK(cudaEventRecord(b));
      CHECK(cudaEventSynchronize(b));
      float ms;
      CHECK(cudaEventElapsedTime(&ms, a, b));
      if (r >= 0) times.push_back(ms * 1000.0f);
    }
    std::vector<uint32_t> got(bins);
    CHECK(cudaMemcpy(got.data(), d_hist, bins * 4, cudaMemcpyDeviceToHost));
    std::sort(times.begin(), times.end());
    double med = runs % 2 ? times[runs / 2] : 0.5 * (times[runs / 2 - 1] + times[runs / 2]);
    uint64_t fnv = 0xcbf29ce484222325ull;
    for (int k = 0; k < bins; k++)
      for (int j = 0; j < 4; j++) fnv = (fnv ^ ((got[k] >> (8 * j)) & 0xff)) * 0x100000001b3ull;
    printf("%s,%zu,%d,%.2f,%.1f,%016llx,%s\n", names[d], n, bins, med, n * 4.0 / med / 1e3,
           (unsigned long long)fnv, got == want ? "PASS" : "FAIL");
    CHECK(cudaFree(d_in)); CHECK(cudaFree(d_hist)); CHECK(cudaFree(temp));
  }
  return 0;
}
