// What the two run-time-built harnesses share (cub/bench.cu: CUB; cub/classic.cu: the CUDA C
// twins): host/src/cub.rs puts this text in front of each before nvcc compiles it, so neither
// file repeats it. Failures print one line "ERROR <what>" on stdout and exit with status 1:
// the Rust side reads that line.
#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#define CHECK(call)                                                                        \
  do {                                                                                     \
    cudaError_t err_ = (call);                                                             \
    if (err_ != cudaSuccess) {                                                             \
      std::printf("ERROR %s failed: %s (%s line %d)\n", #call, cudaGetErrorString(err_), \
                  __FILE__, __LINE__);                                                     \
      std::fflush(stdout);                                                                 \
      std::exit(1);                                                                        \
    }                                                                                      \
  } while (0)

[[noreturn]] static void fail(const std::string& what) {
  std::printf("ERROR %s\n", what.c_str());
  std::fflush(stdout);
  std::exit(1);
}

// Keeps the stream busy for `ns` nanoseconds: the twin of the Rust kernel `stream_hold`
// (kernels/src/timing.rs), launched before the start event of every timed run on both sides so
// that the events time the GPU's work and not the CPU's time to issue it.
__global__ void stream_hold(unsigned int ns) {
  unsigned long long start, now;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  } while (now - start < ns);
}

// CUDA events around the work `f` enqueues on the default stream, as reduce_scan::Backend::time does:
// a stream_hold first (50 µs, doubled up to 2 ms whenever the start event has already happened
// once everything is queued, i.e. the GPU may have waited for the CPU inside the window).
struct Events {
  cudaEvent_t start, stop;
  unsigned int hold_ns = 50000;
  Events() {
    CHECK(cudaEventCreate(&start));
    CHECK(cudaEventCreate(&stop));
  }
  // Microseconds of the work `f` enqueues between the two events.
  template <class F>
  double time(F f) {
    stream_hold<<<1, 1>>>(hold_ns);
    CHECK(cudaGetLastError());
    CHECK(cudaEventRecord(start, 0));
    f();
    CHECK(cudaEventRecord(stop, 0));
    cudaError_t q = cudaEventQuery(start);
    if (q == cudaSuccess) {
      hold_ns = std::min(2 * hold_ns, 2000000u);
    } else if (q == cudaErrorNotReady) {
      cudaError_t e = cudaGetLastError();  // "not ready" is an answer, not an error to keep
      if (e != cudaErrorNotReady) CHECK(e);
    } else {
      CHECK(q);
    }
    CHECK(cudaEventSynchronize(stop));
    float ms = 0;
    CHECK(cudaEventElapsedTime(&ms, start, stop));
    return double(ms) * 1e3;
  }
};
