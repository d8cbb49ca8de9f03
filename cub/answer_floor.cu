// The floor under a synchronous call's wall time on this machine: what it costs to launch
// work and learn on the host that it finished, with kernels that do nothing else (one
// thread). Four ways, each a loop of calls, one CSV row per way:
//
//   one_launch    one kernel writes the answer, then a flag (st.release.sys), into mapped
//                 page-locked host memory; the host spins on the flag (the library's way)
//   two_launches  an empty kernel, then a second one that publishes as above (the way of a
//                 kernel that cannot publish its own answer: publish_answer)
//   graph         one_launch's kernel as a CUDA graph of one node, launched with
//                 cudaGraphLaunch (the flag reset by the host before each launch)
//   sync_copy     the empty kernel, then cudaMemcpy of one word (stream synchronisation)
//
//   nvcc -O3 -arch=sm_90 -o answer_floor cub/answer_floor.cu && ./answer_floor CALLS ROUND
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CHECK(x)                                                                          \
  do {                                                                                    \
    cudaError_t e = (x);                                                                  \
    if (e != cudaSuccess) {                                                               \
      std::fprintf(stderr, "answer_floor: %s: %s\n", #x, cudaGetErrorString(e));          \
      std::exit(1);                                                                       \
    }                                                                                     \
  } while (0)

__global__ void nothing(int* word) {
  if (threadIdx.x == 1024) *word = 0;  // never: keeps the parameter
}

__global__ void publish(unsigned long long* value, unsigned* flag, unsigned seq) {
  *value = seq;
  asm volatile("st.release.sys.global.u32 [%0], %1;" ::"l"(flag), "r"(seq) : "memory");
}

static double now_us() {
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

static void row(const char* way, int round, std::vector<double> v) {
  std::sort(v.begin(), v.end());
  std::printf("%s,%d,%.2f,%.2f\n", way, round, v[v.size() / 2], v.front());
}

int main(int argc, char** argv) {
  if (argc != 3 || std::atoi(argv[1]) <= 0) {
    std::fprintf(stderr, "usage: answer_floor CALLS ROUND (CALLS a positive whole number)\n");
    return 2;
  }
  int calls = std::atoi(argv[1]), round = std::atoi(argv[2]);
  unsigned long long* h_words;
  CHECK(cudaHostAlloc(&h_words, 16, cudaHostAllocMapped));
  h_words[0] = h_words[1] = 0;
  unsigned long long* d_value;
  CHECK(cudaHostGetDevicePointer(&d_value, h_words, 0));
  unsigned* d_flag = reinterpret_cast<unsigned*>(d_value + 1);
  volatile unsigned* h_flag = reinterpret_cast<volatile unsigned*>(h_words + 1);
  int* d_word;
  CHECK(cudaMalloc(&d_word, sizeof(int)));
  cudaStream_t s;
  CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  unsigned seq = 0;
  auto spin = [&](unsigned want) {
    while (*h_flag != want) {
    }
  };
  std::vector<double> one, two, graph, copy;
  // The graph: publish(value, flag, 1), the host clearing the flag before each launch.
  cudaGraph_t g;
  cudaGraphExec_t ge;
  CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  publish<<<1, 1, 0, s>>>(d_value, d_flag, 1u);
  CHECK(cudaStreamEndCapture(s, &g));
  CHECK(cudaGraphInstantiate(&ge, g, 0));
  for (int i = 0; i < calls + 20; ++i) {  // the ways alternate call by call; 20 warm calls
    bool keep = i >= 20;
    double t = now_us();
    publish<<<1, 1, 0, s>>>(d_value, d_flag, ++seq);
    spin(seq);
    if (keep) one.push_back(now_us() - t);
    t = now_us();
    nothing<<<1, 1, 0, s>>>(d_word);
    publish<<<1, 1, 0, s>>>(d_value, d_flag, ++seq);
    spin(seq);
    if (keep) two.push_back(now_us() - t);
    *h_flag = 0;
    t = now_us();
    CHECK(cudaGraphLaunch(ge, s));
    spin(1);
    if (keep) graph.push_back(now_us() - t);
    int got = 0;
    t = now_us();
    nothing<<<1, 1, 0, s>>>(d_word);
    CHECK(cudaMemcpyAsync(&got, d_word, sizeof(int), cudaMemcpyDeviceToHost, s));
    CHECK(cudaStreamSynchronize(s));
    if (keep) copy.push_back(now_us() - t);
  }
  CHECK(cudaStreamSynchronize(s));
  CHECK(cudaGetLastError());
  std::printf("way,round,wall_us_median,wall_us_min\n");
  row("one_launch", round, one);
  row("two_launches", round, two);
  row("graph", round, graph);
  row("sync_copy", round, copy);
  return 0;
}
