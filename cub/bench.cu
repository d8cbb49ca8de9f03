// CUB in the same run as our kernels: times cub::DeviceReduce::Sum and
// cub::DeviceScan::InclusiveSum on int32 with CUDA events, and checks each result.
//
// host/src/cub.rs builds this file with nvcc at run time (-O3 -arch=sm_XX of the device),
// runs it and parses its output; nothing else in the project needs nvcc.
//
// One measurement:
//   bench OP N REPEAT
//     OP = reduce_sum | inclusive_sum. Allocates the input (N int32, a fixed full-range
//     pattern, so sums wrap), the output and CUB's temporary storage outside any timing;
//     3 untimed warm-up calls; then REPEAT calls, each between two CUDA events on the
//     default stream (start; one CUB call; stop; wait); verifies the last result against the
//     CPU. Prints one line:
//     RESULT op=OP n=N repeat=R median_us=M min_us=m times_us=t1,t2,...
// Batches (the criterion benches, which time `iters` launches between two events):
//   bench --serve
//     Reads lines "OP N ITERS [shared]" from stdin (`shared`, for diagnostics: every call of a
//     reduction writes the same output word, and only it is checked); for each, prepares and verifies (OP, N) once,
//     then times ITERS back-to-back calls between two events (no synchronisation between
//     them) and prints
//     BATCH op=OP n=N iters=I total_us=T enqueue_us=E  (E: the CPU's time to issue the calls)
//     Exits at end of input.
// Typed kernels (issue 14): `bench typed TYPE OP N REPEAT FILE` (DeviceReduce) and
//   `bench typed-scan TYPE OP N REPEAT FILE` (DeviceScan), described at typed_run / typed_scan_run.
// Any failure prints "ERROR <what>" and exits with status 1.
#include <cub/cub.cuh>
#include <type_traits>


enum class Op { ReduceSum, InclusiveSum };

static Op parse_op(const char* s) {
  if (std::strcmp(s, "reduce_sum") == 0) return Op::ReduceSum;
  if (std::strcmp(s, "inclusive_sum") == 0) return Op::InclusiveSum;
  fail(std::string("unknown op `") + s + "`; the ops are reduce_sum, inclusive_sum");
}

static const char* op_name(Op op) { return op == Op::ReduceSum ? "reduce_sum" : "inclusive_sum"; }

// The project's input generator (host/src/input.rs), ported so that CUB sums the very values
// our kernels sum: SplitMix64 from `seed`, each 64-bit draw giving two 32-bit words (low half
// first). A reduction gets `Input::small` (the low byte as a signed value, -128..=127); a scan
// gets `Input::full_range` (the whole word).
static uint64_t splitmix64(uint64_t& state) {
  state += 0x9E3779B97F4A7C15ull;
  uint64_t z = state;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

static void generate(std::vector<int32_t>& out, int n, Op op, uint64_t seed) {
  out.resize(n);
  uint64_t state = seed;
  auto value = [&](uint32_t w) {
    return op == Op::ReduceSum ? int32_t(int8_t(uint8_t(w))) : int32_t(w);
  };
  for (int i = 0; i < n; i += 2) {
    uint64_t w = splitmix64(state);
    out[i] = value(uint32_t(w));
    if (i + 1 < n) out[i + 1] = value(uint32_t(w >> 32));
  }
}

// Device buffers and temporary storage for one (op, n), reused across calls.
struct Workspace {
  Op op = Op::ReduceSum;
  int n = 0;
  uint64_t seed = 1;
  int* in = nullptr;
  int* out = nullptr;
  void* temp = nullptr;
  size_t temp_bytes = 0;
  std::vector<int32_t> host;

  void release() {
    if (in) CHECK(cudaFree(in));
    if (out) CHECK(cudaFree(out));
    if (temp) CHECK(cudaFree(temp));
    in = out = nullptr;
    temp = nullptr;
    temp_bytes = 0;
    n = 0;
  }

  void prepare(Op new_op, long long new_n, uint64_t new_seed) {
    if (new_n < 1 || new_n > INT_MAX) fail("n must be in 1..=" + std::to_string(INT_MAX));
    if (in && n == new_n && op == new_op && seed == new_seed) return;
    release();
    op = new_op;
    n = static_cast<int>(new_n);
    seed = new_seed;
    generate(host, n, op, seed);
    CHECK(cudaMalloc(&in, sizeof(int) * size_t(n)));
    CHECK(cudaMemcpy(in, host.data(), sizeof(int) * size_t(n), cudaMemcpyHostToDevice));
    CHECK(cudaMalloc(&out, sizeof(int) * (op == Op::ReduceSum ? size_t(1) : size_t(n))));
    if (op == Op::ReduceSum) {
      CHECK(cub::DeviceReduce::Sum(nullptr, temp_bytes, in, out, n));
    } else {
      CHECK(cub::DeviceScan::InclusiveSum(nullptr, temp_bytes, in, out, n));
    }
    CHECK(cudaMalloc(&temp, std::max<size_t>(temp_bytes, 1)));
    call();
    CHECK(cudaDeviceSynchronize());
    verify();
  }

  // One CUB call on the default stream: the timed work.
  void call() {
    if (op == Op::ReduceSum) {
      CHECK(cub::DeviceReduce::Sum(temp, temp_bytes, in, out, n));
    } else {
      CHECK(cub::DeviceScan::InclusiveSum(temp, temp_bytes, in, out, n));
    }
  }

  // The last call's result against the CPU (wrapping 32-bit arithmetic).
  void verify() {
    if (op == Op::ReduceSum) {
      uint32_t want = 0;
      for (int32_t x : host) want += static_cast<uint32_t>(x);
      int32_t got = 0;
      CHECK(cudaMemcpy(&got, out, sizeof(int), cudaMemcpyDeviceToHost));
      if (static_cast<uint32_t>(got) != want) {
        fail("DeviceReduce::Sum n=" + std::to_string(n) + ": expected " +
             std::to_string(static_cast<int32_t>(want)) + ", got " + std::to_string(got));
      }
    } else {
      std::vector<int32_t> got(n);
      CHECK(cudaMemcpy(got.data(), out, sizeof(int) * size_t(n), cudaMemcpyDeviceToHost));
      uint32_t run = 0;
      for (int i = 0; i < n; ++i) {
        run += static_cast<uint32_t>(host[i]);
        if (static_cast<uint32_t>(got[i]) != run) {
          fail("DeviceScan::InclusiveSum n=" + std::to_string(n) + ": element " + std::to_string(i) +
               " expected " + std::to_string(static_cast<int32_t>(run)) + ", got " + std::to_string(got[i]));
        }
      }
    }
  }
};


static long long parse_count(const char* s, const char* what) {
  char* end = nullptr;
  long long v = std::strtoll(s, &end, 10);
  if (!end || *end != '\0' || v < 1) fail(std::string(what) + " must be a positive integer, got `" + s + "`");
  return v;
}

static int one(Op op, long long n, long long repeat, uint64_t seed) {
  Workspace w;
  w.prepare(op, n, seed);
  Events ev;
  for (int i = 0; i < 3; ++i) w.call();
  std::vector<double> times;
  for (long long r = 0; r < repeat; ++r) {
    times.push_back(ev.time([&] { w.call(); }));
    w.verify();  // every timed call's result, outside the timing
  }
  std::vector<double> sorted = times;
  std::sort(sorted.begin(), sorted.end());
  size_t m = sorted.size() / 2;
  double median = sorted.size() % 2 ? sorted[m] : (sorted[m - 1] + sorted[m]) / 2;
  std::printf("RESULT op=%s n=%lld repeat=%lld median_us=%.3f min_us=%.3f times_us=", op_name(op), n, repeat,
              median, sorted.front());
  for (size_t i = 0; i < times.size(); ++i) std::printf(i ? ",%.3f" : "%.3f", times[i]);
  std::printf("\n");
  w.release();
  return 0;
}

// Serves batches: `OP N ITERS` → ITERS calls back to back between two events. A reduction
// writes each call's sum to its own output word (allocated, outside the timing, for the batch),
// and every one of them is checked after the timing; a scan's calls share one output, of which
// the last is checked.
static int serve() {
  Workspace w;
  Events ev;
  int* outs = nullptr;
  long long outs_len = 0;
  char line[256];
  while (std::fgets(line, sizeof line, stdin)) {
    char op_s[64];
    long long n = 0, iters = 0;
    char mode[16] = "";
    int got_fields = std::sscanf(line, "%63s %lld %lld %15s", op_s, &n, &iters, mode);
    bool shared = std::strcmp(mode, "shared") == 0;  // diagnostics: every call to one output word
    if (got_fields < 3 || iters < 1 || (got_fields == 4 && !shared)) {
      fail(std::string("bad request `") + line + "`; expected `OP N ITERS`");
    }
    Op op = parse_op(op_s);
    w.prepare(op, n, 1);
    double total = 0, enqueue_us = 0;
    if (op == Op::ReduceSum) {
      if (outs_len < iters) {
        if (outs) CHECK(cudaFree(outs));
        CHECK(cudaMalloc(&outs, sizeof(int) * size_t(iters)));
        outs_len = iters;
      }
      total = ev.time([&] {
        auto t0 = std::chrono::steady_clock::now();
        for (long long i = 0; i < iters; ++i) CHECK(cub::DeviceReduce::Sum(w.temp, w.temp_bytes, w.in, outs + (shared ? 0 : i), w.n));
        enqueue_us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
      });
      std::vector<int32_t> got(static_cast<size_t>(iters));
      CHECK(cudaMemcpy(got.data(), outs, sizeof(int) * size_t(iters), cudaMemcpyDeviceToHost));
      uint32_t want = 0;
      for (int32_t x : w.host) want += static_cast<uint32_t>(x);
      for (long long i = 0; i < (shared ? 1 : iters); ++i) {
        if (static_cast<uint32_t>(got[size_t(i)]) != want) {
          fail("DeviceReduce::Sum n=" + std::to_string(n) + ", call " + std::to_string(i) + " of a batch: expected " +
               std::to_string(static_cast<int32_t>(want)) + ", got " + std::to_string(got[size_t(i)]));
        }
      }
    } else {
      total = ev.time([&] {
        for (long long i = 0; i < iters; ++i) w.call();
      });
      w.verify();
    }
    // enqueue_us: the CPU's time to issue the calls. Near total_us, the batch measured the CPU.
    std::printf("BATCH op=%s n=%lld iters=%lld total_us=%.3f enqueue_us=%.3f\n", op_name(op), n, iters, total,
                enqueue_us);
    std::fflush(stdout);
  }
  if (outs) CHECK(cudaFree(outs));
  w.release();
  return 0;
}

// Typed reductions (issue 14): `bench typed TYPE OP N REPEAT FILE` reads N elements of TYPE
// (i32 u32 i64 u64 f32 f64, little-endian, as the Rust side wrote them) from FILE, then times
// REPEAT calls of cub::DeviceReduce::Sum / Min / Max (OP = sum | min | max), each to its own
// output, as `one` does, and prints
//   RESULT typed=TYPE op=OP n=N repeat=R median_us=M min_us=m times_us=t,... results=HEX,...
// with the distinct result bit patterns of all calls (hex, zero-extended to 64 bits): the Rust
// side checks each against its CPU reference (bit for bit, or within the float-sum bound).
// The N elements of TYPE in FILE, as the Rust side wrote them.
template <class T>
static std::vector<T> read_input(long long n, const char* file) {
  std::vector<T> host(static_cast<size_t>(n));
  FILE* f = std::fopen(file, "rb");
  if (!f) fail(std::string("cannot open ") + file);
  size_t got = std::fread(host.data(), sizeof(T), host.size(), f);
  std::fclose(f);
  if (got != host.size()) fail(std::string(file) + " holds fewer than N elements");
  return host;
}

// The RESULT line of the typed modes: the times and the distinct result bit patterns.
template <class T>
static void print_typed_result(const std::string& op, long long n, const std::vector<double>& times,
                               const std::vector<T>& results) {
  std::vector<unsigned long long> bits;
  for (T x : results) {
    unsigned long long b = 0;
    std::memcpy(&b, &x, sizeof(T));
    if (std::find(bits.begin(), bits.end(), b) == bits.end()) bits.push_back(b);
  }
  std::vector<double> sorted = times;
  std::sort(sorted.begin(), sorted.end());
  size_t m = sorted.size() / 2;
  double median = sorted.size() % 2 ? sorted[m] : (sorted[m - 1] + sorted[m]) / 2;
  std::printf("RESULT typed=1 op=%s n=%lld repeat=%zu median_us=%.3f min_us=%.3f times_us=", op.c_str(), n,
              times.size(), median, sorted.front());
  for (size_t i = 0; i < times.size(); ++i) std::printf(i ? ",%.3f" : "%.3f", times[i]);
  std::printf(" results=");
  for (size_t i = 0; i < bits.size(); ++i) std::printf(i ? ",%llx" : "%llx", bits[i]);
  std::printf("\n");
}

template <class T>
static int typed_run(const std::string& op, long long n, long long repeat, const char* file) {
  std::vector<T> host = read_input<T>(n, file);
  T *in = nullptr, *outs = nullptr;
  CHECK(cudaMalloc(&in, sizeof(T) * host.size()));
  CHECK(cudaMemcpy(in, host.data(), sizeof(T) * host.size(), cudaMemcpyHostToDevice));
  CHECK(cudaMalloc(&outs, sizeof(T) * size_t(repeat + 1)));
  int num = static_cast<int>(n);
  void* temp = nullptr;
  size_t temp_bytes = 0;
  auto call = [&](T* out) {
    if (op == "sum") {
      CHECK(cub::DeviceReduce::Sum(temp, temp_bytes, in, out, num));
    } else if (op == "min") {
      CHECK(cub::DeviceReduce::Min(temp, temp_bytes, in, out, num));
    } else {
      CHECK(cub::DeviceReduce::Max(temp, temp_bytes, in, out, num));
    }
  };
  call(outs);  // temp == nullptr: asks for the temporary storage's size
  CHECK(cudaMalloc(&temp, std::max<size_t>(temp_bytes, 1)));
  for (int i = 0; i < 3; ++i) call(outs + repeat);
  CHECK(cudaDeviceSynchronize());
  Events ev;
  std::vector<double> times;
  for (long long r = 0; r < repeat; ++r) times.push_back(ev.time([&] { call(outs + r); }));
  std::vector<T> results(static_cast<size_t>(repeat));
  CHECK(cudaMemcpy(results.data(), outs, sizeof(T) * results.size(), cudaMemcpyDeviceToHost));
  print_typed_result(op, n, times, results);
  CHECK(cudaFree(temp));
  CHECK(cudaFree(outs));
  CHECK(cudaFree(in));
  return 0;
}

// Min and max as kernels::types defines them (NaN propagates as the canonical NaN, -0.0 < +0.0),
// not as cub::Min/cub::Max (`b < a ? b : a`, which let a NaN win or lose by position). For
// integers they are plain min and max.
template <class T, bool SMALLEST>
struct TotalOrder {
  __device__ __forceinline__ T operator()(const T& a, const T& b) const {
    if constexpr (std::is_same<T, float>::value) {
      if (isnan(a) || isnan(b)) return __uint_as_float(SMALLEST ? 0xffc00000u : 0x7fc00000u);
      if (a == b) {
        unsigned x = __float_as_uint(a), y = __float_as_uint(b);
        return __uint_as_float(SMALLEST ? (x | y) : (x & y));
      }
    } else if constexpr (std::is_same<T, double>::value) {
      if (isnan(a) || isnan(b)) {
        return __longlong_as_double(SMALLEST ? (long long)0xfff8000000000000ull : 0x7ff8000000000000ll);
      }
      if (a == b) {
        long long x = __double_as_longlong(a), y = __double_as_longlong(b);
        return __longlong_as_double(SMALLEST ? (x | y) : (x & y));
      }
    }
    return SMALLEST ? (b < a ? b : a) : (b > a ? b : a);
  }
};

// Typed scans: `bench typed-scan TYPE OP N REPEAT FILE` times REPEAT calls of
// cub::DeviceScan::InclusiveSum (sum) or InclusiveScan with TotalOrder (min, max), all to one
// output, and prints the typed RESULT line with the distinct bit patterns of the last element
// of every call; the last call's whole output goes to FILE.out (little-endian), for the Rust
// side to check element by element.
template <class T>
static int typed_scan_run(const std::string& op, long long n, long long repeat, const char* file) {
  std::vector<T> host = read_input<T>(n, file);
  T *in = nullptr, *out = nullptr;
  CHECK(cudaMalloc(&in, sizeof(T) * host.size()));
  CHECK(cudaMemcpy(in, host.data(), sizeof(T) * host.size(), cudaMemcpyHostToDevice));
  CHECK(cudaMalloc(&out, sizeof(T) * host.size()));
  int num = static_cast<int>(n);
  void* temp = nullptr;
  size_t temp_bytes = 0;
  auto call = [&] {
    if (op == "sum") {
      CHECK(cub::DeviceScan::InclusiveSum(temp, temp_bytes, in, out, num));
    } else if (op == "min") {
      CHECK(cub::DeviceScan::InclusiveScan(temp, temp_bytes, in, out, TotalOrder<T, true>(), num));
    } else {
      CHECK(cub::DeviceScan::InclusiveScan(temp, temp_bytes, in, out, TotalOrder<T, false>(), num));
    }
  };
  call();  // temp == nullptr: asks for the temporary storage's size
  CHECK(cudaMalloc(&temp, std::max<size_t>(temp_bytes, 1)));
  for (int i = 0; i < 3; ++i) call();
  CHECK(cudaDeviceSynchronize());
  Events ev;
  std::vector<double> times;
  std::vector<T> lasts(static_cast<size_t>(repeat));
  for (long long r = 0; r < repeat; ++r) {
    times.push_back(ev.time([&] { call(); }));
    CHECK(cudaMemcpy(&lasts[size_t(r)], out + (n - 1), sizeof(T), cudaMemcpyDeviceToHost));
  }
  CHECK(cudaMemcpy(host.data(), out, sizeof(T) * host.size(), cudaMemcpyDeviceToHost));
  std::string out_file = std::string(file) + ".out";
  FILE* f = std::fopen(out_file.c_str(), "wb");
  if (!f || std::fwrite(host.data(), sizeof(T), host.size(), f) != host.size()) fail("cannot write " + out_file);
  std::fclose(f);
  print_typed_result(op, n, times, lasts);
  CHECK(cudaFree(temp));
  CHECK(cudaFree(out));
  CHECK(cudaFree(in));
  return 0;
}

// `bench typed …` (reduce) and `bench typed-scan …` (scan): TYPE OP N REPEAT FILE.
static int typed(int argc, char** argv) {
  bool scan = std::strcmp(argv[1], "typed-scan") == 0;
  if (argc != 7) fail(std::string("usage: bench ") + argv[1] + " TYPE OP N REPEAT FILE");
  std::string type = argv[2], op = argv[3];
  if (op != "sum" && op != "min" && op != "max") fail("OP must be sum, min or max, got `" + op + "`");
  long long n = parse_count(argv[4], "N"), repeat = parse_count(argv[5], "REPEAT");
  if (n > INT_MAX) fail("N must be at most " + std::to_string(INT_MAX));
  const char* file = argv[6];
  if (type == "i32") return scan ? typed_scan_run<int32_t>(op, n, repeat, file) : typed_run<int32_t>(op, n, repeat, file);
  if (type == "u32") return scan ? typed_scan_run<uint32_t>(op, n, repeat, file) : typed_run<uint32_t>(op, n, repeat, file);
  if (type == "i64") return scan ? typed_scan_run<int64_t>(op, n, repeat, file) : typed_run<int64_t>(op, n, repeat, file);
  if (type == "u64") return scan ? typed_scan_run<uint64_t>(op, n, repeat, file) : typed_run<uint64_t>(op, n, repeat, file);
  if (type == "f32") return scan ? typed_scan_run<float>(op, n, repeat, file) : typed_run<float>(op, n, repeat, file);
  if (type == "f64") return scan ? typed_scan_run<double>(op, n, repeat, file) : typed_run<double>(op, n, repeat, file);
  fail("TYPE must be i32, u32, i64, u64, f32 or f64, got `" + type + "`");
}

int main(int argc, char** argv) {
  if (argc >= 2 && (std::strcmp(argv[1], "typed") == 0 || std::strcmp(argv[1], "typed-scan") == 0)) {
    return typed(argc, argv);
  }
  if (argc == 2 && std::strcmp(argv[1], "--serve") == 0) return serve();
  if (argc != 4 && argc != 5) {
    fail("usage: bench OP N REPEAT [SEED] | bench --serve | bench typed|typed-scan TYPE OP N REPEAT FILE   (OP = reduce_sum | inclusive_sum; SEED defaults to 1)");
  }
  uint64_t seed = argc == 5 ? std::strtoull(argv[4], nullptr, 10) : 1;
  return one(parse_op(argv[1]), parse_count(argv[2], "N"), parse_count(argv[3], "REPEAT"), seed);
}
