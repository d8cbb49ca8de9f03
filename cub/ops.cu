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
//   segmented OP TYPE N SEGMENTS REPEAT FILE OFFSETS_FILE
//     cub::DeviceSegmentedReduce::Sum / Min / Max / ArgMin / ArgMax (OP = sum | min | max |
//     argmin | argmax) over SEGMENTS + 1 offsets (u32, little-endian) of the N elements in FILE,
//     segment s = [offsets[s], offsets[s + 1]); timed as above; the last call's values go to
//     FILE.out (TYPE) and, for argmin/argmax, its indices within the segments to FILE.idx (i32:
//     CUB's KeyValuePair keys, 1 for an empty segment, whose value is CUB's, not ours).
//     RESULT op=segmented_OP n=N repeat=R median_us=M min_us=m times_us=t,... value=0 index=-1
//   histogram TYPE N BINS LOWER UPPER REPEAT FILE
//     cub::DeviceHistogram::HistogramEven of the N samples of TYPE (u8 u16 u32 i32 f32) in FILE,
//     BINS bins over [LOWER, UPPER) (decimal; `long long` levels for the integer types, whose
//     upper bound may be 2^32, `float` for f32); timed as above, the zeroing of the counters
//     included (CUB's own init kernel); the last call's BINS counters (u32) go to FILE.out.
//     RESULT op=histogram n=N repeat=R median_us=M min_us=m times_us=t,... value=0 index=-1
//   select KIND TYPE N REPEAT OUTCOMES OPERAND FILE [FLAGS_FILE]
//     KIND = if | partition_if: cub::DeviceSelect::If / cub::DevicePartition::If with a functor
//     that compares an element with OPERAND (hex bits of TYPE: i32 u32 f32 u8 u16) and keeps it
//     where the outcome (1 below, 2 equal, 4 above, 8 unordered) is in the mask OUTCOMES (the rule of
//     kernels::select::Predicate); flagged | partition_flagged: DeviceSelect::Flagged /
//     DevicePartition::Flagged by the N bytes of FLAGS_FILE; unique: DeviceSelect::Unique;
//     run_length: DeviceRunLengthEncode::Encode (the runs' lengths, i32, go to FILE.len).
//     Timed as above; the last call's output (the kept elements or the runs' first elements, or
//     all N for a partition) goes to FILE.out, and its kept count is the RESULT line's value:
//     RESULT op=select_KIND n=N repeat=R median_us=M min_us=m times_us=t,... value=KEPT_HEX index=-1
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

static void write_file(const std::string& path, const void* data, size_t bytes) {
  FILE* f = std::fopen(path.c_str(), "wb");
  if (!f || std::fwrite(data, 1, bytes, f) != bytes) fail("cannot write " + path);
  std::fclose(f);
}

template <class T>
static int run_segmented(const std::string& op, long long n, long long segments, long long repeat, const char* file,
                         const char* offsets_file) {
  T* in = upload(read_file<T>(n, file));
  unsigned* offsets = upload(read_file<unsigned>(segments + 1, offsets_file));
  int num = static_cast<int>(segments);
  bool arg = op == "argmin" || op == "argmax";
  T* out = nullptr;
  cub::KeyValuePair<int, T>* pairs = nullptr;
  if (arg) {
    CHECK(cudaMalloc(&pairs, sizeof(*pairs) * size_t(segments)));
  } else {
    CHECK(cudaMalloc(&out, sizeof(T) * size_t(segments)));
  }
  auto times = timed(repeat, [&](void* temp, size_t& bytes) {
    if (op == "sum") {
      CHECK(cub::DeviceSegmentedReduce::Sum(temp, bytes, in, out, num, offsets, offsets + 1));
    } else if (op == "min") {
      CHECK(cub::DeviceSegmentedReduce::Min(temp, bytes, in, out, num, offsets, offsets + 1));
    } else if (op == "max") {
      CHECK(cub::DeviceSegmentedReduce::Max(temp, bytes, in, out, num, offsets, offsets + 1));
    } else if (op == "argmin") {
      CHECK(cub::DeviceSegmentedReduce::ArgMin(temp, bytes, in, pairs, num, offsets, offsets + 1));
    } else {
      CHECK(cub::DeviceSegmentedReduce::ArgMax(temp, bytes, in, pairs, num, offsets, offsets + 1));
    }
  });
  std::vector<T> values(static_cast<size_t>(segments));
  if (arg) {
    std::vector<cub::KeyValuePair<int, T>> got(static_cast<size_t>(segments));
    CHECK(cudaMemcpy(got.data(), pairs, sizeof(got[0]) * got.size(), cudaMemcpyDeviceToHost));
    std::vector<int> keys(got.size());
    for (size_t i = 0; i < got.size(); ++i) {
      values[i] = got[i].value;
      keys[i] = got[i].key;
    }
    write_file(std::string(file) + ".idx", keys.data(), sizeof(int) * keys.size());
    CHECK(cudaFree(pairs));
  } else {
    CHECK(cudaMemcpy(values.data(), out, sizeof(T) * values.size(), cudaMemcpyDeviceToHost));
    CHECK(cudaFree(out));
  }
  write_file(std::string(file) + ".out", values.data(), sizeof(T) * values.size());
  print_result("segmented_" + op, n, times, 0, -1);
  CHECK(cudaFree(offsets));
  CHECK(cudaFree(in));
  return 0;
}

template <class T>
static int run(const std::string& op, long long n, long long repeat, const char* file_a, const char* file_b) {
  if (op == "argmin" || op == "argmax") return run_arg<T>(op, n, repeat, file_a);
  return run_transform<T>(op, n, repeat, file_a, file_b);
}

// `segmented OP TYPE N SEGMENTS REPEAT FILE OFFSETS_FILE`.
static int segmented(int argc, char** argv) {
  if (argc != 9) fail("usage: segmented OP TYPE N SEGMENTS REPEAT FILE OFFSETS_FILE");
  std::string op = argv[2], type = argv[3];
  if (op != "sum" && op != "min" && op != "max" && op != "argmin" && op != "argmax") {
    fail("OP must be sum, min, max, argmin or argmax, got `" + op + "`");
  }
  long long n = std::strtoll(argv[4], nullptr, 10), segments = std::strtoll(argv[5], nullptr, 10);
  long long repeat = std::strtoll(argv[6], nullptr, 10);
  if (n < 1 || n > INT_MAX || segments < 1 || segments > INT_MAX || repeat < 1) {
    fail("N and SEGMENTS must be in 1..=2^31-1 and REPEAT at least 1");
  }
  const char* file = argv[7];
  const char* offsets = argv[8];
  if (type == "i32") return run_segmented<int32_t>(op, n, segments, repeat, file, offsets);
  if (type == "u32") return run_segmented<uint32_t>(op, n, segments, repeat, file, offsets);
  if (type == "i64") return run_segmented<int64_t>(op, n, segments, repeat, file, offsets);
  if (type == "u64") return run_segmented<uint64_t>(op, n, segments, repeat, file, offsets);
  if (type == "f32") return run_segmented<float>(op, n, segments, repeat, file, offsets);
  if (type == "f64") return run_segmented<double>(op, n, segments, repeat, file, offsets);
  fail("TYPE must be i32, u32, i64, u64, f32 or f64, got `" + type + "`");
}

template <class T, class Level>
static int run_histogram(long long n, int bins, Level lower, Level upper, long long repeat, const char* file) {
  T* in = upload(read_file<T>(n, file));
  unsigned* counts = nullptr;
  CHECK(cudaMalloc(&counts, sizeof(unsigned) * size_t(bins)));
  auto times = timed(repeat, [&](void* temp, size_t& bytes) {
    CHECK(cub::DeviceHistogram::HistogramEven(temp, bytes, in, counts, bins + 1, lower, upper, n));
  });
  std::vector<unsigned> got(static_cast<size_t>(bins));
  CHECK(cudaMemcpy(got.data(), counts, sizeof(unsigned) * got.size(), cudaMemcpyDeviceToHost));
  write_file(std::string(file) + ".out", got.data(), sizeof(unsigned) * got.size());
  print_result("histogram", n, times, 0, -1);
  CHECK(cudaFree(counts));
  CHECK(cudaFree(in));
  return 0;
}

// `histogram TYPE N BINS LOWER UPPER REPEAT FILE`.
static int histogram(int argc, char** argv) {
  if (argc != 9) fail("usage: histogram TYPE N BINS LOWER UPPER REPEAT FILE");
  std::string type = argv[2];
  long long n = std::strtoll(argv[3], nullptr, 10), bins = std::strtoll(argv[4], nullptr, 10);
  long long repeat = std::strtoll(argv[7], nullptr, 10);
  if (n < 1 || n > INT_MAX || bins < 1 || bins > 4096 || repeat < 1) {
    fail("N must be in 1..=2^31-1, BINS in 1..=4096 and REPEAT at least 1");
  }
  const char* file = argv[8];
  long long lo = std::strtoll(argv[5], nullptr, 10), hi = std::strtoll(argv[6], nullptr, 10);
  int b = static_cast<int>(bins);
  if (type == "u8") return run_histogram<uint8_t, long long>(n, b, lo, hi, repeat, file);
  if (type == "u16") return run_histogram<uint16_t, long long>(n, b, lo, hi, repeat, file);
  if (type == "u32") return run_histogram<uint32_t, long long>(n, b, lo, hi, repeat, file);
  if (type == "i32") return run_histogram<int32_t, long long>(n, b, lo, hi, repeat, file);
  if (type == "f32") {
    float flo = std::strtof(argv[5], nullptr), fhi = std::strtof(argv[6], nullptr);
    return run_histogram<float, float>(n, b, flo, fhi, repeat, file);
  }
  fail("TYPE must be u8, u16, u32, i32 or f32, got `" + type + "`");
}

// kernels::select::Predicate: keep x where the outcome of comparing it with `operand` is in
// `outcomes`.
template <class T>
struct Outcomes {
  T operand;
  unsigned outcomes;
  __device__ bool operator()(const T& x) const {
    unsigned o = x < operand ? 1u : x == operand ? 2u : x > operand ? 4u : 8u;
    return (outcomes & o) != 0;
  }
};

template <class T>
static int run_select(const std::string& kind, long long n, long long repeat, unsigned outcomes,
                      unsigned long long operand_bits, const char* file, const char* flags_file) {
  T* in = upload(read_file<T>(n, file));
  unsigned char* flags = nullptr;
  if (flags_file) flags = upload(read_file<unsigned char>(n, flags_file));
  T* out = nullptr;
  int* kept = nullptr;
  int* lengths = nullptr;
  CHECK(cudaMalloc(&out, sizeof(T) * size_t(n)));
  CHECK(cudaMalloc(&kept, sizeof(int)));
  if (kind == "run_length") CHECK(cudaMalloc(&lengths, sizeof(int) * size_t(n)));
  Outcomes<T> keep;
  std::memcpy(&keep.operand, &operand_bits, sizeof(T));
  keep.outcomes = outcomes;
  int num = static_cast<int>(n);
  auto times = timed(repeat, [&](void* temp, size_t& bytes) {
    if (kind == "if") CHECK(cub::DeviceSelect::If(temp, bytes, in, out, kept, num, keep));
    if (kind == "partition_if") CHECK(cub::DevicePartition::If(temp, bytes, in, out, kept, num, keep));
    if (kind == "flagged") CHECK(cub::DeviceSelect::Flagged(temp, bytes, in, flags, out, kept, num));
    if (kind == "partition_flagged") CHECK(cub::DevicePartition::Flagged(temp, bytes, in, flags, out, kept, num));
    if (kind == "unique") CHECK(cub::DeviceSelect::Unique(temp, bytes, in, out, kept, num));
    if (kind == "run_length") CHECK(cub::DeviceRunLengthEncode::Encode(temp, bytes, in, out, lengths, kept, num));
  });
  int got = 0;
  CHECK(cudaMemcpy(&got, kept, sizeof(int), cudaMemcpyDeviceToHost));
  size_t written = kind.rfind("partition", 0) == 0 ? size_t(n) : size_t(got);
  std::vector<T> values(written);
  CHECK(cudaMemcpy(values.data(), out, sizeof(T) * written, cudaMemcpyDeviceToHost));
  write_file(std::string(file) + ".out", values.data(), sizeof(T) * values.size());
  if (lengths) {
    std::vector<int> runs(static_cast<size_t>(got));
    CHECK(cudaMemcpy(runs.data(), lengths, sizeof(int) * runs.size(), cudaMemcpyDeviceToHost));
    write_file(std::string(file) + ".len", runs.data(), sizeof(int) * runs.size());
    CHECK(cudaFree(lengths));
  }
  print_result("select_" + kind, n, times, static_cast<unsigned long long>(got), -1);
  CHECK(cudaFree(kept));
  CHECK(cudaFree(out));
  if (flags) CHECK(cudaFree(flags));
  CHECK(cudaFree(in));
  return 0;
}

// `select KIND TYPE N REPEAT OUTCOMES OPERAND FILE [FLAGS_FILE]`.
static int select_mode(int argc, char** argv) {
  if (argc != 9 && argc != 10) fail("usage: select KIND TYPE N REPEAT OUTCOMES OPERAND FILE [FLAGS_FILE]");
  std::string kind = argv[2], type = argv[3];
  bool flagged = kind == "flagged" || kind == "partition_flagged";
  if (kind != "if" && kind != "partition_if" && kind != "unique" && kind != "run_length" && !flagged) {
    fail("KIND must be if, flagged, unique, run_length, partition_if or partition_flagged, got `" + kind + "`");
  }
  if (flagged != (argc == 10)) fail("FLAGS_FILE is given exactly for the flagged kinds");
  long long n = std::strtoll(argv[4], nullptr, 10), repeat = std::strtoll(argv[5], nullptr, 10);
  if (n < 1 || n > INT_MAX || repeat < 1) fail("N must be in 1..=2^31-1 and REPEAT at least 1");
  unsigned outcomes = static_cast<unsigned>(std::strtoul(argv[6], nullptr, 10));
  unsigned long long operand = std::strtoull(argv[7], nullptr, 16);
  const char* flags = argc == 10 ? argv[9] : nullptr;
  if (type == "i32") return run_select<int32_t>(kind, n, repeat, outcomes, operand, argv[8], flags);
  if (type == "u32") return run_select<uint32_t>(kind, n, repeat, outcomes, operand, argv[8], flags);
  if (type == "f32") return run_select<float>(kind, n, repeat, outcomes, operand, argv[8], flags);
  if (type == "u8") return run_select<uint8_t>(kind, n, repeat, outcomes, operand, argv[8], flags);
  if (type == "u16") return run_select<uint16_t>(kind, n, repeat, outcomes, operand, argv[8], flags);
  fail("TYPE must be i32, u32, f32, u8 or u16, got `" + type + "`");
}

int main(int argc, char** argv) {
  if (argc >= 2 && std::strcmp(argv[1], "segmented") == 0) return segmented(argc, argv);
  if (argc >= 2 && std::strcmp(argv[1], "select") == 0) return select_mode(argc, argv);
  if (argc >= 2 && std::strcmp(argv[1], "histogram") == 0) return histogram(argc, argv);
  if (argc < 7 || std::strcmp(argv[1], "ops") != 0) {
    fail("usage: ops OP TYPE N REPEAT FILE_A [FILE_B] (OP = argmin | argmax | dot | sum_of_squares | norm), or segmented …");
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
