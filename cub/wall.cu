// What a CUB user waits for a sum: the wall time of a loop of synchronous calls, each
// cub::DeviceReduce::Sum followed by cudaMemcpy of its one result word to the host (what a
// caller who wants the answer writes), next to the time to queue the Sum alone and the GPU's
// time for it (CUDA events). The twin of examples/time_to_answer.rs, same CSV columns.
//
//   nvcc -O3 -arch=sm_90 -o wall cub/wall.cu && ./wall CALLS ROUND LOG2...
#include <cub/cub.cuh>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CHECK(x)                                                                          \
  do {                                                                                    \
    cudaError_t e = (x);                                                                  \
    if (e != cudaSuccess) {                                                               \
      std::fprintf(stderr, "wall: %s: %s\n", #x, cudaGetErrorString(e));                  \
      std::exit(1);                                                                       \
    }                                                                                     \
  } while (0)

static double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

static double now_us() {
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: wall CALLS ROUND LOG2...\n");
    return 2;
  }
  int calls = std::atoi(argv[1]), round = std::atoi(argv[2]);
  if (calls <= 0) {
    std::fprintf(stderr, "wall: CALLS must be a positive whole number\n");
    return 2;
  }
  for (int a = 3; a < argc; ++a) {
    int k = std::atoi(argv[a]);
    if (k < 1 || k > 30) {
      std::fprintf(stderr, "wall: sizes are exponents 1..30\n");
      return 2;
    }
    size_t n = size_t(1) << k;
    std::vector<int> host(n);
    int expected = 0;
    for (size_t i = 0; i < n; ++i) {
      host[i] = int(unsigned(i) * 2654435761u) >> 20;  // the example's values
      expected = int(unsigned(expected) + unsigned(host[i]));
    }
    int *d_in, *d_out;
    CHECK(cudaMalloc(&d_in, n * sizeof(int)));
    CHECK(cudaMalloc(&d_out, sizeof(int)));
    CHECK(cudaMemcpy(d_in, host.data(), n * sizeof(int), cudaMemcpyHostToDevice));
    size_t temp_bytes = 0;
    void* d_temp = nullptr;
    CHECK(cub::DeviceReduce::Sum(d_temp, temp_bytes, d_in, d_out, int(n)));
    CHECK(cudaMalloc(&d_temp, temp_bytes));
    int got = 0;
    for (int i = 0; i < 20; ++i) {  // warm
      CHECK(cub::DeviceReduce::Sum(d_temp, temp_bytes, d_in, d_out, int(n)));
      CHECK(cudaMemcpy(&got, d_out, sizeof(int), cudaMemcpyDeviceToHost));
    }
    std::vector<double> wall, enqueue, device;
    for (int i = 0; i < calls; ++i) {
      double t = now_us();
      CHECK(cub::DeviceReduce::Sum(d_temp, temp_bytes, d_in, d_out, int(n)));
      CHECK(cudaMemcpy(&got, d_out, sizeof(int), cudaMemcpyDeviceToHost));
      wall.push_back(now_us() - t);
      if (got != expected) {
        std::fprintf(stderr, "wall: n = %zu: CUB's sum is %d, expected %d\n", n, got, expected);
        return 1;
      }
    }
    for (int i = 0; i < calls; ++i) {
      double t = now_us();
      CHECK(cub::DeviceReduce::Sum(d_temp, temp_bytes, d_in, d_out, int(n)));
      enqueue.push_back(now_us() - t);
      CHECK(cudaDeviceSynchronize());
    }
    cudaEvent_t e0, e1;
    CHECK(cudaEventCreate(&e0));
    CHECK(cudaEventCreate(&e1));
    for (int i = 0; i < 30; ++i) {
      CHECK(cudaEventRecord(e0));
      CHECK(cub::DeviceReduce::Sum(d_temp, temp_bytes, d_in, d_out, int(n)));
      CHECK(cudaEventRecord(e1));
      CHECK(cudaEventSynchronize(e1));
      float ms = 0;
      CHECK(cudaEventElapsedTime(&ms, e0, e1));
      device.push_back(ms * 1e3);
    }
    std::printf("%d,%zu,%.2f,%.2f,%.2f,%.2f\n", round, n, median(wall), *std::min_element(wall.begin(), wall.end()),
                median(enqueue), median(device));
    CHECK(cudaFree(d_in));
    CHECK(cudaFree(d_out));
    CHECK(cudaFree(d_temp));
    CHECK(cudaEventDestroy(e0));
    CHECK(cudaEventDestroy(e1));
  }
  return 0;
}
