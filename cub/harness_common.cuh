// What the two run-time-built harnesses share (cub/bench.cu: CUB; cub/classic.cu: the CUDA C
// twins): host/src/cub.rs puts this text in front of each before nvcc compiles it, so neither
// file repeats it. Failures print one line "ERROR <what>" on stdout and exit with status 1:
// the Rust side reads that line.
#include <algorithm>
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
