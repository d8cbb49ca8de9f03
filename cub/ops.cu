// CUB's counterparts of the library's operations (reduce_scan::ops: argmin, argmax, dot,
// sum_of_squares, norm), timed with CUDA events in the same run as ours. host/src/cub_ops.rs
// builds this file with nvcc at run time, as host/src/cub.rs builds bench.cu (the same cache,
// the same checks), runs it and parses its output.
//
//   ops OP TYPE N REPEAT FILE_A [FILE_B]
//     OP = argmin | argmax: cub::DeviceReduce::ArgMin / ArgMax (KeyValuePair<int, T> output);
//          dot: cub::DeviceReduce::TransformReduce over the indices 0..N, i -> a[i]*b[i], plus;
//          sum_of_squares, norm: the same with i -> a[i]*a[i] (the norm's square root is taken
//          on the host, outside the timing: what is timed is the reduction).
//     TYPE = i32 u32 i64 u64 f32 f64. Reads N elements of TYPE (little-endian) from FILE_A (and,
//     for dot, FILE_B), allocates the output and CUB's temporary storage outside any timing,
//     makes 3 warm-up calls, then REPEAT calls each between two CUDA events (Events: the same
//     method as the Rust side's), and prints one line
//     RESULT op=OP n=N repeat=R median_us=M min_us=m times_us=t,... value=HEX index=I
//     with the last call's result (value bits zero-extended to 64, hex; index -1 for a value).
// Integer products and sums are done in the unsigned type of the same width (they wrap, as ours
// do; a signed overflow would be undefined in C++). Any failure prints "ERROR <what>".
#define CCCL_IGNORE_DEPRECATED_API
#include <cub/cub.cuh>
#include <cuda/std/functional>
#include <thrust/iterator/counting_iterator.h>
#include <type_traits>

// The type products and sums are computed in: the unsigned type of an integer's width.
template <class T>
using Acc = typename std::conditional<std::is_integral<T>::value, std::make_unsigned<T>, std::common_type<T>>::type::type;

template <class T>
struct ProductAt {
  const T* a;
  const T* b;
  __device__ Acc<T> operator()(long long i) const { return Acc<T>(a[i]) * Acc<T>(b[i]); }
};

template <class T>
struct SquareAt {
  const T* a;
  __device__ Acc<T> operator()(long long i) const { return Acc<T>(a[i]) * Acc<T>(a[i]); }
};

template <class T>
static std::vector<T> read_file(long long n, const char* file) {
  std::vector<T> host(static_cast<size_t>(n));
  FILE* f = std::fopen(file, "rb");
  if (!f) fail(std::string("cannot open ") + file);
  size_t got = std::fread(host.data(), sizeof(T), host.size(), f);
  std::fclose(f);
  if (got != host.size()) fail(std::string(file) + " holds fewer than N elements");
  return host;
}

template <class T>
static T* upload(const std::vector<T>& host) {
  T* d = nullptr;
  CHECK(cudaMalloc(&d, sizeof(T) * host.size()));
  CHECK(cudaMemcpy(d, host.data(), sizeof(T) * host.size(), cudaMemcpyHostToDevice));
  return d;
}

static void print_result(const std::string& op, long long n, const std::vector<double>& times, unsigned long long bits,
                         long long index) {
  std::vector<double> sorted = times;
  std::sort(sorted.begin(), sorted.end());
  size_t m = sorted.size() / 2;
  double median = sorted.size() % 2 ? sorted[m] : (sorted[m - 1] + sorted[m]) / 2;
  std::printf("RESULT op=%s n=%lld repeat=%zu median_us=%.3f min_us=%.3f times_us=", op.c_str(), n, times.size(),
              median, sorted.front());
  for (size_t i = 0; i < times.size(); ++i) std::printf(i ? ",%.3f" : "%.3f", times[i]);
  std::printf(" value=%llx index=%lld\n", bits, index);
}

// Times `call(temp, bytes)` (first asked for its storage size) REPEAT times after 3 warm-ups.
template <class F>
static std::vector<double> timed(long long repeat, F call) {
  void* temp = nullptr;
  size_t bytes = 0;
  call(temp, bytes);
  CHECK(cudaMalloc(&temp, std::max<size_t>(bytes, 1)));
  for (int i = 0; i < 3; ++i) call(temp, bytes);
  CHECK(cudaDeviceSynchronize());
  Events ev;
  std::vector<double> times;
  for (long long r = 0; r < repeat; ++r) times.push_back(ev.time([&] { call(temp, bytes); }));
  CHECK(cudaFree(temp));
  return times;
}

template <class T>
static int run_arg(const std::string& op, long long n, long long repeat, const char* file) {
  T* in = upload(read_file<T>(n, file));
  cub::KeyValuePair<int, T>* out = nullptr;
  CHECK(cudaMalloc(&out, sizeof(*out)));
  int num = static_cast<int>(n);
  auto times = timed(repeat, [&](void* temp, size_t& bytes) {
    if (op == "argmin") {
      CHECK(cub::DeviceReduce::ArgMin(temp, bytes, in, out, num));
    } else {
      CHECK(cub::DeviceReduce::ArgMax(temp, bytes, in, out, num));
    }
  });
  cub::KeyValuePair<int, T> got;
  CHECK(cudaMemcpy(&got, out, sizeof(got), cudaMemcpyDeviceToHost));
  unsigned long long bits = 0;
  std::memcpy(&bits, &got.value, sizeof(T));
  print_result(op, n, times, bits, got.key);
  CHECK(cudaFree(out));
  CHECK(cudaFree(in));
  return 0;
}

template <class T>
static int run_transform(const std::string& op, long long n, long long repeat, const char* file_a,
                         const char* file_b) {
  T* a = upload(read_file<T>(n, file_a));
  T* b = op == "dot" ? upload(read_file<T>(n, file_b)) : nullptr;
  Acc<T>* out = nullptr;
  CHECK(cudaMalloc(&out, sizeof(*out)));
  thrust::counting_iterator<long long> indices(0);
  auto times = timed(repeat, [&](void* temp, size_t& bytes) {
    if (op == "dot") {
      CHECK(cub::DeviceReduce::TransformReduce(temp, bytes, indices, out, n, cuda::std::plus<Acc<T>>{},
                                               ProductAt<T>{a, b}, Acc<T>(0)));
    } else {
      CHECK(cub::DeviceReduce::TransformReduce(temp, bytes, indices, out, n, cuda::std::plus<Acc<T>>{},
                                               SquareAt<T>{a}, Acc<T>(0)));
    }
  });
  Acc<T> got;
  CHECK(cudaMemcpy(&got, out, sizeof(got), cudaMemcpyDeviceToHost));
  unsigned long long bits = 0;
  std::memcpy(&bits, &got, sizeof(got));
  print_result(op, n, times, bits, -1);
  CHECK(cudaFree(out));
  if (b) CHECK(cudaFree(b));
  CHECK(cudaFree(a));
  return 0;
}

template <class T>
static int run(const std::string& op, long long n, long long repeat, const char* file_a, const char* file_b) {
  if (op == "argmin" || op == "argmax") return run_arg<T>(op, n, repeat, file_a);
  return run_transform<T>(op, n, repeat, file_a, file_b);
}

int main(int argc, char** argv) {
  if (argc < 7 || std::strcmp(argv[1], "ops") != 0) {
    fail("usage: ops ops OP TYPE N REPEAT FILE_A [FILE_B]   (OP = argmin | argmax | dot | sum_of_squares | norm)");
  }
  std::string op = argv[2], type = argv[3];
  if (op != "argmin" && op != "argmax" && op != "dot" && op != "sum_of_squares" && op != "norm") {
    fail("OP must be argmin, argmax, dot, sum_of_squares or norm, got `" + op + "`");
  }
  char* end = nullptr;
  long long n = std::strtoll(argv[4], &end, 10);
  long long repeat = std::strtoll(argv[5], nullptr, 10);
  if (n < 1 || n > INT_MAX || repeat < 1) fail("N must be in 1..=2^31-1 and REPEAT at least 1");
  if (op == "dot" && argc < 8) fail("dot needs FILE_A and FILE_B");
  const char* a = argv[6];
  const char* b = argc >= 8 ? argv[7] : nullptr;
  if (type == "i32") return run<int32_t>(op, n, repeat, a, b);
  if (type == "u32") return run<uint32_t>(op, n, repeat, a, b);
  if (type == "i64") return run<int64_t>(op, n, repeat, a, b);
  if (type == "u64") return run<uint64_t>(op, n, repeat, a, b);
  if (type == "f32") return run<float>(op, n, repeat, a, b);
  if (type == "f64") return run<double>(op, n, repeat, a, b);
  fail("TYPE must be i32, u32, i64, u64, f32 or f64, got `" + type + "`");
}
