// Exploration for issue 37: of the time `lookback_warpspec_8x12x6` takes over a device-to-device
// copy, how much is the data path, how much the compute warps' own work on a tile, how much the
// hand-off to the look-ahead warp, and how much the look-back across blocks? (On an H100, with
// drawn tiles, all but the look-back run at cudaMemcpy's speed and the look-back adds about 5 %:
// docs/scan-warpspec.md, docs/measurements/2026-11-27-h100/scan-steps-*.)
// One kernel, the Rust scan's block in CUDA C, built up a step at a time (STEP):
//
//   store     the data path: the ring filled by the bulk-copy engine, emptied by 8 compute warps'
//             16-byte streaming stores (copy_kernels.cu's bulk_in_stg_out, with the Rust
//             producer's L2 evict-first hint): a copy.
//   one_pass  + each tile scanned in one pass: a lane's 12 blocked elements read once, reduced,
//             scanned across the warp and (after a named barrier) across the 8 warps; scanned in
//             registers, written back blocked, read again striped and stored. A scan of each
//             tile on its own.
//   two_pass  + the Rust kernel's passes instead: each tile reduced 4 uses ahead of its scan
//             (warp totals to shared, named barrier), and scanned by reading the lane's chunks
//             twice more (the lane total and warp scan again, then the scan in place). Tiles
//             still scanned on their own.
//   handoff   + the look-ahead warp between the passes: compute warp 0 hands it each reduced tile
//             (*summed*), it scans the warp totals and hands each compute warp its offset
//             (*ready*), with no look-back (each tile's prefix is 0). Tiles still on their own.
//   full      + the decoupled look-back: compute warp 0 publishes each tile's aggregate, the
//             look-ahead warp looks back over 32 predecessors at a time (sleeping 256 ns between
//             polls of a window with a word not yet published) and publishes the inclusive
//             prefix: the whole inclusive scan, as the Rust kernel computes it.
//   lookahead_reduces  the whole scan with the work split otherwise (as CUB's warp-specialized
//             scan splits it, with one warp for both of its reduce and look-ahead roles): the
//             look-ahead warp reduces each tile as soon as it lands (the compute warps' region
//             totals too), publishes its aggregate at once, looks back and hands out the offsets;
//             the compute warps scan each tile in one pass. A tile's aggregate no longer waits
//             for the compute warps to finish scanning the tiles before it.
//
// Each step twice (or three times), by how the producer gets its tiles (TICKETS):
//   (dealt)        round-robin: block b takes tiles b, b + grid, b + 2 grid, ...
//   _drawn         from a ticket counter, one atomic add per tile by the producer after the wait
//                  for the stage, as the Rust kernel draws them (the tiles go to whichever block
//                  asks first);
//   _drawn_ahead   (full only) drawn one use ahead: the add for the next tile right after the
//                  current tile's load, its round trip overlapping the wait for the stage.
//
// And forms of the whole scan, drawn (session 29; each a template argument, step_of):
//   split          a reduce warp of its own publishes each tile's aggregate as it lands (11 warps)
//   _spin, _wide, _pairs   the look-back without sleeping; 128 predecessors a round trip (4 loads
//                  a lane); 64 in one 16-byte load a lane
//   _sector, _half_sector, _half_line, _line, _spread   the status words 4, 2, 8 or 16 words
//                  apart, or a sector's worth spread over the packed room (status_at)
//   _two           two look-ahead warps taking the uses in turn (with _line, _sector,
//                  _half_sector: and the status words so spaced)
//   _reduce3, _reduce2   the compute warps reduce 3 or 2 uses ahead instead of 4
// A row with a probed twin launches it once more after its timed launches: per tile, the
// look-ahead warp's waits, look-back time, round trips, polls and distance to the nearest
// prefix, compute warp 0's waits (print_probe), and each tile's landing, aggregate and prefix
// times (print_timeline), on stderr.
//
// Shape as the Rust kernel's 8x12x6: 8 compute warps × 12 int32 each (3,072 per 12 KiB tile), a
// ring of 6 stages, 3 blocks per SM; warp 0 the producer (lane 0 loads), warp 1 the look-ahead
// warp. With every block resident, dealt and drawn tiles are both deadlock-free. Each step and
// cudaMemcpy alternate in `rounds` rounds (argv[1], default 3; further arguments name the steps
// to run, default all; a name not in STEPS: one line, exit 2) on one 2^28-int32 buffer (its last
// tile short); each time is the median of 10 launches after an untimed one; every result is
// checked (store: the input; one_pass to handoff: each tile's own inclusive scan; full: the
// inclusive scan). Output CSV on stdout, the columns of copy_kernels.cu's:
// round,what,shape,blocks_per_sm,median_us,gb_per_s_rw
//
//   nvcc -O3 -arch=sm_90 -std=c++17 -o "$dir/ss" scripts/gpu/explore/scan_steps.cu && "$dir/ss"
//   (scripts/gpu/copy_bound.sh builds and runs it in a private temporary folder)

#include "../../../cub/harness_common.cuh"
// The ring primitives, the timing rule and the check, shared with copy_kernels.cu.
#include "explore.cuh"

constexpr size_t N = size_t(1) << 28;
constexpr int WARPS = 8, ROWS = 3, ITEMS = 4 * ROWS, STAGES = 6, AHEAD = STAGES - 2;
constexpr int TILE_LEN = WARPS * 32 * ITEMS;  // int32 per tile
constexpr int TILE = TILE_LEN * 4;            // bytes per tile
constexpr int PER_SM = 3;
constexpr unsigned SLEEP_NS = 256;
static_assert(STAGES % 2 == 0, "two look-ahead warps take the uses in turn: each stage must stay one warp's");
// Status words: the high half is epoch << 2 | flag, the low half the value.
constexpr unsigned INVALID = 0, AGGREGATE = 1, PREFIX = 2;

enum Work { STORE, ONE_PASS, TWO_PASS, HANDOFF, FULL, AGG_FIRST, SPLIT };
enum Tickets { DEALT, DRAWN, DRAWN_AHEAD };
// How the look-ahead warp looks back (full): 32 predecessors a round trip, sleeping SLEEP_NS
// between polls (as the Rust kernel); the same without sleeping; 128 a round trip (4 loads a
// lane in flight), waiting only for the words after the nearest prefix; 64 a round trip in one
// load a lane (two neighbouring words, 16 bytes), waiting only for the words after the nearest
// prefix (packed words only).
enum LookBack { WINDOW_32, WINDOW_32_SPIN, WINDOW_128, WINDOW_64_PAIRS };
// Where tile t's status word lies (full): status[t] (packed, as the Rust kernel: 16 words a
// 128-byte line), status[2 t] (two a 32-byte sector), status[4 t] (one a sector), status[8 t]
// (two a line), status[16 t] (one a line), or spread:
// within each whole group of 128 tiles (1 KiB, 32 sectors), tile 128 g + r at word
// 128 g + 4 (r % 32) + r / 32, so that 32 consecutive tiles lie in 32 sectors as with one a
// sector, in the packed layout's room (a last, partial group packed).
enum Spacing { PACKED, SECTOR, LINE, SPREAD, HALF_SECTOR, HALF_LINE };
__host__ __device__ constexpr int stride_words(int spacing) {
  return spacing == LINE ? 16 : spacing == HALF_LINE ? 8 : spacing == SECTOR ? 4 : spacing == HALF_SECTOR ? 2 : 1;
}
template <int SPACING>
__device__ __forceinline__ size_t status_at(size_t t, size_t tiles) {
  if (SPACING != SPREAD) return t * stride_words(SPACING);
  const size_t group = t / 128 * 128;
  return group + 128 <= tiles ? group + 4 * (t % 32) + t % 128 / 32 : t;
}
// A step: what the block does, how its producer gets tiles, how it looks back, whether it
// records where the time goes (PROBED: one more launch, Probe below), how its status words lie,
// and how many look-ahead warps share the tiles (1, or 2 taking uses in turn), as one template
// argument.
__host__ __device__ constexpr int step_of(int work, int tickets, int look = WINDOW_32, bool probed = false,
                                          int spacing = PACKED, int lookers = 1) {
  return work + 8 * tickets + 32 * look + 128 * probed + 256 * (spacing % 4) + 1024 * (lookers - 1) +
         8192 * (spacing / 4);
}
__host__ __device__ constexpr int work_of(int step) { return step % 8; }
__host__ __device__ constexpr int tickets_of(int step) { return step / 8 % 4; }
__host__ __device__ constexpr int look_of(int step) { return step / 32 % 4; }
__host__ __device__ constexpr bool probed(int step) { return step / 128 % 2; }
__host__ __device__ constexpr int spacing_of(int step) { return step / 256 % 4 + 4 * (step / 8192 % 2); }
__host__ __device__ constexpr int lookers_of(int step) { return 1 + step / 1024 % 2; }
// A reduce warp of its own (split)?
__host__ __device__ constexpr int reducers_of(int step) { return work_of(step) == SPLIT ? 1 : 0; }
// How many uses ahead of its scan the compute warps reduce a tile (full): 4 (as the Rust
// kernel: STAGES - 2), 3 or 2.
__host__ __device__ constexpr int ahead_of(int step) { return AHEAD - step / 2048 % 4; }
__host__ __device__ constexpr int with_ahead(int step, int ahead) { return step + 2048 * (AHEAD - ahead); }
__host__ __device__ constexpr int threads_of(int step) {
  return (WARPS + 1 + lookers_of(step) + reducers_of(step)) * 32;
}
// Does the step look back (the whole scan, its look-ahead warp doing it)?
__host__ __device__ constexpr bool chained(int step) { return work_of(step) == FULL || work_of(step) == SPLIT; }
// The launches a run makes, each with its own zeroed ticket counter.
constexpr unsigned MAX_LAUNCHES = 4096;

// One block's shared state: the ring, each stage's ticket, the compute warps' totals and
// offsets per stage, and four barriers per stage.
struct Ring {
  int* tiles;
  int* ticket;   // [STAGES]
  int* totals;   // [STAGES][WARPS]
  int* offsets;  // [STAGES][WARPS]
  int* end_use;  // the use that got the end ticket (two look-ahead warps: the other one stops too)
  unsigned long long *full, *summed, *ready, *empty;
};

struct Args {
  const int* in;
  int* out;
  unsigned long long* status;
  unsigned* counters;  // [MAX_LAUNCHES], zero; launch `epoch` draws from counters[epoch]
  size_t n, tiles;
  unsigned epoch;
  // Where not null, the producer leaves here, per block, the tiles it loaded and its SM:
  // taken[b] = tiles << 8 | smid.
  unsigned* taken;
  // A probed step's sums over every block (PROBE_* below); zero before the launch.
  unsigned long long* probe;
  // A probed step also leaves, per tile, the globaltimer (ns) when the tile had landed (seen by
  // the warp that reduces it), its aggregate was published, and its inclusive prefix:
  // stamps[4 t + STAMP_*].
  unsigned long long* stamps;
};
enum Stamp { STAMP_LANDED, STAMP_AGGREGATE, STAMP_PREFIX };

// What a probed step adds up (SM clock cycles from clock64; the look-ahead warp's lane 0 and
// compute warp 0's lane 0, summed over blocks). HIST + w: look-backs that took w round trips
// (31: 31 or more).
enum Probe {
  PROBE_TILES,           // tiles the look-ahead warps looked back for
  PROBE_SUMMED_WAIT,     // look-ahead warp: cycles waiting for the compute warps' totals
  PROBE_LOOK_BACK,       // look-ahead warp: cycles in the look-back
  PROBE_TRIPS,           // look-back round trips (windows read)
  PROBE_POLLS,           // polls of a window with a word not yet published
  PROBE_DISTANCE,        // tiles back to the nearest inclusive prefix
  PROBE_SCANNED,         // tiles compute warp 0 scanned
  PROBE_FULL_WAIT,       // compute warp 0: cycles waiting for a tile's load (first pass)
  PROBE_READY_WAIT,      // compute warp 0: cycles waiting for the offsets (second pass)
  PROBE_CLOCK0, PROBE_CLOCK1, PROBE_TIMER0, PROBE_TIMER1,  // block 0's clock64 and globaltimer
  PROBE_HIST = 16,
  PROBE_WORDS = PROBE_HIST + 32
};
__device__ __forceinline__ unsigned long long global_timer() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__device__ __forceinline__ unsigned long long status_word(unsigned epoch, unsigned flag, int value) {
  return (static_cast<unsigned long long>(epoch << 2 | flag) << 32) | unsigned(value);
}
__device__ __forceinline__ unsigned status_flag(unsigned long long w, unsigned epoch) {
  const unsigned hi = unsigned(w >> 32);
  return hi >> 2 == epoch ? (hi & 3) : INVALID;
}
template <int SPACING = PACKED>
__device__ __forceinline__ void publish(const Args& a, size_t tile, unsigned flag, int value) {
  asm volatile("st.relaxed.gpu.global.u64 [%0], %1;" ::"l"(a.status + status_at<SPACING>(tile, a.tiles)), "l"(status_word(a.epoch, flag, value))
               : "memory");
}
template <int SPACING = PACKED>
__device__ __forceinline__ unsigned long long status_or_prefix(const Args& a, long pred) {
  if (pred < 0) return status_word(a.epoch, PREFIX, 0);
  unsigned long long w;
  asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(w) : "l"(a.status + status_at<SPACING>(pred, a.tiles)) : "memory");
  return w;
}

__device__ __forceinline__ int warp_inclusive(int v, int lane) {
#pragma unroll
  for (int d = 1; d < 32; d *= 2) {
    const int u = __shfl_up_sync(~0u, v, d);
    if (lane >= d) v += u;
  }
  return v;
}
__device__ __forceinline__ int warp_sum(int v) {
#pragma unroll
  for (int d = 16; d > 0; d /= 2) v += __shfl_xor_sync(~0u, v, d);
  return v;
}
__device__ __forceinline__ void compute_barrier() { asm volatile("bar.sync 1, %0;" ::"r"(WARPS * 32) : "memory"); }

// Lane l's two status words base + 2l and base + 2l + 1 (base even: 16 bytes, aligned), in one
// load; below 0, inclusive prefixes of 0.
__device__ __forceinline__ void status_pair(const Args& a, long base, int lane, unsigned long long& lo,
                                            unsigned long long& hi) {
  const long at = base + 2 * lane;
  if (at < 0) {
    lo = hi = status_word(a.epoch, PREFIX, 0);
    return;
  }
  asm volatile("ld.relaxed.gpu.global.v2.u64 {%0, %1}, [%2];" : "=l"(lo), "=l"(hi) : "l"(a.status + at) : "memory");
}

// What a probed look-back counts (every lane the same).
struct Walk {
  unsigned trips = 0, polls = 0;
  long distance = 0;
};

// The exclusive prefix of `tile` over its predecessors: the decoupled look-back by one warp,
// 32 predecessors a round trip (the Rust `look_back`); SPIN: polls without sleeping; SPACING:
// where the status words lie.
template <bool SPIN, int SPACING = PACKED>
__device__ int look_back(const Args& a, size_t tile, int lane, Walk& walk) {
  int exclusive = 0;
  long end = long(tile);
  while (true) {
    const long pred = end - 32 + lane;
    unsigned long long w = status_or_prefix<SPACING>(a, pred);
    ++walk.trips;
    while (!__all_sync(~0u, status_flag(w, a.epoch) != INVALID)) {
      ++walk.polls;
      if (status_flag(w, a.epoch) == INVALID) {
        if (!SPIN) __nanosleep(SLEEP_NS);
        w = status_or_prefix<SPACING>(a, pred);
      }
    }
    const int value = int(unsigned(w));
    const unsigned prefixes = __ballot_sync(~0u, status_flag(w, a.epoch) == PREFIX);
    if (prefixes) {
      const int nearest = 31 - __clz(prefixes);
      walk.distance = long(tile) - (end - 32 + nearest);
      return exclusive + warp_sum(lane >= nearest ? value : 0);
    }
    exclusive += warp_sum(value);
    end -= 32;
  }
}

// The same, 64 words a round trip, one 16-byte load a lane: the window base .. base + 63 with
// base even (the first window may reach the tile itself, one past its predecessors: words at
// or past the tile are not read as predecessors). Only the words after the nearest inclusive
// prefix must be published; polls reload the lane's pair.
__device__ int look_back_pairs(const Args& a, size_t tile, int lane, Walk& walk) {
  int exclusive = 0;
  long base = long((tile + 1) & ~size_t(1)) - 64;
  const long limit = long(tile);
  while (true) {
    unsigned long long lo, hi;
    status_pair(a, base, lane, lo, hi);
    ++walk.trips;
    const long at = base + 2 * lane;
    while (true) {
      const bool lo_prefix = at < limit && status_flag(lo, a.epoch) == PREFIX;
      const bool hi_prefix = at + 1 < limit && status_flag(hi, a.epoch) == PREFIX;
      const unsigned bl = __ballot_sync(~0u, lo_prefix), bh = __ballot_sync(~0u, hi_prefix);
      // The nearest prefix's place in the window (-1: none).
      const int nearest = max(bh ? 2 * (31 - __clz(bh)) + 1 : -1, bl ? 2 * (31 - __clz(bl)) : -1);
      const bool lo_adds = at < limit && 2 * lane >= nearest, hi_adds = at + 1 < limit && 2 * lane + 1 >= nearest;
      const bool missing = (lo_adds && status_flag(lo, a.epoch) == INVALID) ||
                           (hi_adds && status_flag(hi, a.epoch) == INVALID);
      if (!__any_sync(~0u, missing)) {
        exclusive += warp_sum((lo_adds ? int(unsigned(lo)) : 0) + (hi_adds ? int(unsigned(hi)) : 0));
        if (nearest >= 0) {
          walk.distance = long(tile) - (base + nearest);
          return exclusive;
        }
        break;
      }
      ++walk.polls;
      __nanosleep(SLEEP_NS);
      status_pair(a, base, lane, lo, hi);
    }
    base -= 64;
  }
}

// The same, 128 predecessors a round trip: lane l reads end - 128 + 32 j + l for j = 0..3, all
// four loads in flight at once. Only the words after the nearest inclusive prefix must be
// published (an older word is never added); polls reload the words still unpublished.
__device__ int look_back_wide(const Args& a, size_t tile, int lane, Walk& walk) {
  constexpr int J = 4;
  int exclusive = 0;
  long end = long(tile);
  while (true) {
    unsigned long long w[J];
#pragma unroll
    for (int j = 0; j < J; ++j) w[j] = status_or_prefix(a, end - 32 * (J - j) + lane);
    ++walk.trips;
    while (true) {
      // The nearest prefix: the highest lane of the highest j with one (j = J: none).
      int pj = -1, nearest = 0;
#pragma unroll
      for (int j = 0; j < J; ++j) {
        const unsigned prefixes = __ballot_sync(~0u, status_flag(w[j], a.epoch) == PREFIX);
        if (prefixes) pj = j, nearest = 31 - __clz(prefixes);
      }
      bool missing = false;  // a word this lane must add, not yet published
#pragma unroll
      for (int j = 0; j < J; ++j)
        if ((j > pj || (j == pj && lane >= nearest)) && status_flag(w[j], a.epoch) == INVALID) missing = true;
      if (!__any_sync(~0u, missing)) {
        int part = 0;
#pragma unroll
        for (int j = 0; j < J; ++j)
          if (j > pj || (j == pj && lane >= nearest)) part += int(unsigned(w[j]));
        exclusive += warp_sum(part);
        if (pj >= 0) {
          walk.distance = long(tile) - (end - 32 * (J - pj) + nearest);
          return exclusive;
        }
        break;
      }
      ++walk.polls;
      __nanosleep(SLEEP_NS);
#pragma unroll
      for (int j = 0; j < J; ++j)
        if (status_flag(w[j], a.epoch) == INVALID) w[j] = status_or_prefix(a, end - 32 * (J - j) + lane);
    }
    end -= 32 * J;
  }
}

// Warp 0, lane 0: stage k % STAGES gets, once the compute warps gave it back, tile
// blockIdx.x + k × gridDim.x (up to full) or the next ticket (drawn: after the wait; drawn_ahead:
// drawn after the previous use's load); the ticket past the last tile ends every role.
template <int STEP>
__device__ void produce(const Ring& r, const Args& a) {
  unsigned* counter = a.counters + a.epoch;
  size_t ahead = tickets_of(STEP) == DRAWN_AHEAD ? atomicAdd(counter, 1u) : 0;
  for (size_t k = 0;; ++k) {
    const int s = int(k % STAGES);
    if (k >= STAGES) mbar_wait(&r.empty[s], unsigned(k / STAGES - 1) & 1);
    size_t t = blockIdx.x + k * gridDim.x;
    if (tickets_of(STEP) == DRAWN) t = atomicAdd(counter, 1u);
    if (tickets_of(STEP) == DRAWN_AHEAD) t = ahead;
    r.ticket[s] = int(t < a.tiles ? t : a.tiles);
    if (t >= a.tiles) {
      mbar_arrive(&r.full[s]);
      if (a.taken) {
        unsigned sm;
        asm("mov.u32 %0, %%smid;" : "=r"(sm));
        a.taken[blockIdx.x] = unsigned(k) << 8 | sm;
      }
      return;
    }
    const unsigned bytes = unsigned(a.n - t * TILE_LEN < size_t(TILE_LEN) ? (a.n - t * TILE_LEN) * 4 : TILE);
    bulk_load<true>(r.tiles + s * TILE_LEN, a.in + t * TILE_LEN, bytes, &r.full[s]);
    if (tickets_of(STEP) == DRAWN_AHEAD) ahead = atomicAdd(counter, 1u);
  }
}

// Warp 1 (handoff, full): per tile, the compute warps' offsets from their totals, after the
// look-back (full) or with a prefix of 0 (handoff). With two look-ahead warps, warp 1 + looker
// takes the uses k = looker, looker + 2, ... (an even ring: each stage always the same warp's).
template <int STEP>
__device__ void look_ahead(const Ring& r, const Args& a, int looker, int lane) {
  // Probed: the sums of Probe's look-ahead words, and the histogram (lane w: trips == w).
  unsigned long long tiles = 0, summed_wait = 0, in_look_back = 0, trips = 0, polls = 0, distance = 0, hist = 0;
  for (size_t k = looker;; k += lookers_of(STEP)) {
    const int s = int(k % STAGES);
    const long long t0 = probed(STEP) ? clock64() : 0;
    mbar_wait(&r.summed[s], unsigned(k / STAGES) & 1);
    if (lookers_of(STEP) == 2 && k >= size_t(*r.end_use)) break;
    const size_t tile = size_t(r.ticket[s]);
    if (tile >= a.tiles) break;
    const int own = lane < WARPS ? r.totals[s * WARPS + lane] : 0;
    const int inclusive = warp_inclusive(own, lane);
    int prefix = 0;
    if (chained(STEP) && tile > 0) {
      const long long t1 = probed(STEP) ? clock64() : 0;
      Walk walk;
      if (look_of(STEP) == WINDOW_128) prefix = look_back_wide(a, tile, lane, walk);
      else if (look_of(STEP) == WINDOW_64_PAIRS) prefix = look_back_pairs(a, tile, lane, walk);
      else prefix = look_back<look_of(STEP) == WINDOW_32_SPIN, spacing_of(STEP)>(a, tile, lane, walk);
      const int aggregate = __shfl_sync(~0u, inclusive, WARPS - 1);
      if (lane == 0) publish<spacing_of(STEP)>(a, tile, PREFIX, prefix + aggregate);
      if (probed(STEP) && lane == 0) a.stamps[4 * tile + STAMP_PREFIX] = global_timer();
      if (probed(STEP)) {
        ++tiles, summed_wait += t1 - t0, in_look_back += clock64() - t1;
        trips += walk.trips, polls += walk.polls, distance += walk.distance;
        hist += lane == int(min(walk.trips, 31u));
      }
    }
    if (lane < WARPS) r.offsets[s * WARPS + lane] = prefix + inclusive - own;
    mbar_arrive(&r.ready[s]);
  }
  if (probed(STEP)) {
    if (lane == 0) {
      const unsigned long long sums[] = {tiles, summed_wait, in_look_back, trips, polls, distance};
      for (int i = 0; i < 6; ++i) atomicAdd(a.probe + PROBE_TILES + i, sums[i]);
    }
    atomicAdd(a.probe + PROBE_HIST + lane, hist);
  }
}

// Warp 1 (lookahead_reduces): per tile, as soon as it lands, the compute warps' region totals
// (the lanes read the tile striped: rows 3w .. 3w + 2 of 32 chunks are region w), the aggregate
// published at once, then the look-back, the prefix, and the compute warps' offsets.
// Lane w < WARPS: the total of compute warp w's region of stage s (read striped: rows
// 3w .. 3w + 2 of 32 chunks are region w); 0 in the other lanes.
__device__ __forceinline__ int region_totals(const Ring& r, int s, int lane) {
  const int4* chunks = reinterpret_cast<const int4*>(r.tiles + s * TILE_LEN);
  int own = 0;
#pragma unroll
  for (int w = 0; w < WARPS; ++w) {
    int part = 0;
#pragma unroll
    for (int j = 0; j < ROWS; ++j) {
      const int4 c = chunks[(w * ROWS + j) * 32 + lane];
      part += c.x + c.y + c.z + c.w;
    }
    const int total = warp_sum(part);
    if (lane == w) own = total;
  }
  return own;
}

// The use k that got the end ticket: tells the look-ahead warp(s) (lane 0 of the warp that
// hands it the totals). Two look-ahead warps: the other one waits for use k + 1 (its stage's
// last use, k - 5, scanned already), and stops at end_use.
template <int STEP>
__device__ void summed_end(const Ring& r, size_t k) {
  *r.end_use = int(k);
  mbar_arrive(&r.summed[k % STAGES]);
  if (lookers_of(STEP) == 2) mbar_arrive(&r.summed[(k + 1) % STAGES]);
}

__device__ void look_ahead_reducing(const Ring& r, const Args& a, int lane) {
  for (size_t k = 0;; ++k) {
    const int s = int(k % STAGES);
    mbar_wait(&r.full[s], unsigned(k / STAGES) & 1);
    const size_t tile = size_t(r.ticket[s]);
    if (tile >= a.tiles) return;
    const int own = region_totals(r, s, lane);
    const int inclusive = warp_inclusive(own, lane);
    const int aggregate = __shfl_sync(~0u, inclusive, WARPS - 1);
    int prefix = 0;
    if (tile == 0) {
      if (lane == 0) publish(a, tile, PREFIX, aggregate);
    } else {
      if (lane == 0) publish(a, tile, AGGREGATE, aggregate);
      Walk walk;
      prefix = look_back<false>(a, tile, lane, walk);
      if (lane == 0) publish(a, tile, PREFIX, prefix + aggregate);
    }
    if (lane < WARPS) r.offsets[s * WARPS + lane] = prefix + inclusive - own;
    mbar_arrive(&r.ready[s]);
  }
}

// The lane's chunks of compute warp cw's region of stage s, blocked (lane owns ITEMS in a row).
__device__ __forceinline__ int blocked_at(int s, int cw, int lane, int row) {
  return s * TILE_LEN + cw * 32 * ITEMS + lane * ITEMS + row * 4;
}
__device__ __forceinline__ int striped_at(int s, int cw, int lane, int row) {
  return s * TILE_LEN + cw * 32 * ITEMS + (row * 32 + lane) * 4;
}
__device__ __forceinline__ int lane_total(const Ring& r, int s, int cw, int lane) {
  int own = 0;
#pragma unroll
  for (int row = 0; row < ROWS; ++row) {
    const int4 c = *reinterpret_cast<const int4*>(r.tiles + blocked_at(s, cw, lane, row));
    own += c.x + c.y + c.z + c.w;
  }
  return own;
}

// Stores compute warp cw's region of stage s (striped: 16-byte stores, 512 consecutive bytes a
// row) to the tile's place in the output, then gives the stage back to the producer.
__device__ __forceinline__ void store_and_give_back(const Ring& r, const Args& a, size_t tile, int s, int cw,
                                                    int lane) {
  const size_t base = tile * TILE_LEN;
#pragma unroll
  for (int row = 0; row < ROWS; ++row) {
    const int at = striped_at(s, cw, lane, row);
    const size_t i = base + (at - s * TILE_LEN);
    if (i < a.n) __stcs(reinterpret_cast<int4*>(a.out + i), *reinterpret_cast<const int4*>(r.tiles + at));
  }
  fence_proxy_async();
  __syncwarp();
  if (lane == 0) mbar_arrive(&r.empty[s]);
}

// Scans the lane's chunks in place after `run`, then stores the warp's region striped and
// gives the stage back.
__device__ __forceinline__ void scan_and_store(const Ring& r, const Args& a, size_t tile, int s, int cw, int lane,
                                               int run) {
#pragma unroll
  for (int row = 0; row < ROWS; ++row) {
    int4* p = reinterpret_cast<int4*>(r.tiles + blocked_at(s, cw, lane, row));
    int4 c = *p;
    c.x += run, c.y += c.x, c.z += c.y, c.w += c.z, run = c.w;
    *p = c;
  }
  __syncwarp();
  store_and_give_back(r, a, tile, s, cw, lane);
}

// The first pass of two_pass, handoff and full over use k: the warp's total to shared, then
// (after the compute warps' barrier) compute warp 0 publishes the aggregate (full) and hands the
// tile on (handoff, full). False at the end ticket.
// Probed, compute warp 0 adds up its waits (Probe's compute words).
struct Waits {
  unsigned long long scanned = 0, full = 0, ready = 0;
};

template <int STEP>
__device__ bool reduce(const Ring& r, const Args& a, size_t k, int cw, int lane, Waits& waits) {
  const int s = int(k % STAGES);
  const long long t0 = probed(STEP) ? clock64() : 0;
  mbar_wait(&r.full[s], unsigned(k / STAGES) & 1);
  if (probed(STEP)) waits.full += clock64() - t0;
  const size_t tile = size_t(r.ticket[s]);
  if (tile >= a.tiles) {
    if (work_of(STEP) >= HANDOFF && cw == 0 && lane == 0) summed_end<STEP>(r, k);
    return false;
  }
  if (probed(STEP) && cw == 0 && lane == 0) a.stamps[4 * tile + STAMP_LANDED] = global_timer();
  const int inclusive = warp_inclusive(lane_total(r, s, cw, lane), lane);
  if (lane == 31) r.totals[s * WARPS + cw] = inclusive;
  compute_barrier();
  if (work_of(STEP) >= HANDOFF && cw == 0 && lane == 0) {
    if (work_of(STEP) == FULL) {
      int aggregate = 0;
      for (int w = 0; w < WARPS; ++w) aggregate += r.totals[s * WARPS + w];
      publish<spacing_of(STEP)>(a, tile, tile == 0 ? PREFIX : AGGREGATE, aggregate);
      if (probed(STEP)) a.stamps[4 * tile + STAMP_AGGREGATE] = global_timer();
    }
    mbar_arrive(&r.summed[s]);
  }
  return true;
}

// The second pass over use k: the lane total and warp scan again, the warp's offset (from the
// totals in two_pass, from the look-ahead warp after), the scan in place and the store.
template <int STEP>
__device__ void scan_store(const Ring& r, const Args& a, size_t k, int cw, int lane, Waits& waits) {
  const int s = int(k % STAGES);
  const int own = lane_total(r, s, cw, lane);
  const int before = warp_inclusive(own, lane) - own;
  const size_t tile = size_t(r.ticket[s]);
  int offset = 0;
  if (work_of(STEP) == TWO_PASS) {
    for (int w = 0; w < cw; ++w) offset += r.totals[s * WARPS + w];
  } else {
    const long long t0 = probed(STEP) ? clock64() : 0;
    mbar_wait(&r.ready[s], unsigned(k / STAGES) & 1);
    if (probed(STEP)) waits.ready += clock64() - t0, ++waits.scanned;
    offset = r.offsets[s * WARPS + cw];
  }
  scan_and_store(r, a, tile, s, cw, lane, offset + before);
}

// Compute warp 0's waits into the probe, and block 0's end stamps.
__device__ void report_waits(const Args& a, const Waits& waits) {
  atomicAdd(a.probe + PROBE_SCANNED, waits.scanned);
  atomicAdd(a.probe + PROBE_FULL_WAIT, waits.full);
  atomicAdd(a.probe + PROBE_READY_WAIT, waits.ready);
  if (blockIdx.x == 0) a.probe[PROBE_CLOCK1] = clock64(), a.probe[PROBE_TIMER1] = global_timer();
}

// The reduce warp (split): per tile, as soon as it lands, the compute warps' region totals to
// shared and the aggregate published, then the tile handed to the look-ahead warp. It never
// waits for the look-back.
template <int STEP>
__device__ void reduce_warp(const Ring& r, const Args& a, int lane) {
  for (size_t k = 0;; ++k) {
    const int s = int(k % STAGES);
    mbar_wait(&r.full[s], unsigned(k / STAGES) & 1);
    const size_t tile = size_t(r.ticket[s]);
    if (tile >= a.tiles) {
      if (lane == 0) summed_end<STEP>(r, k);
      return;
    }
    if (probed(STEP) && lane == 0) a.stamps[4 * tile + STAMP_LANDED] = global_timer();
    const int own = region_totals(r, s, lane);
    if (lane < WARPS) r.totals[s * WARPS + lane] = own;
    const int aggregate = warp_sum(own);
    if (lane == 0) publish<spacing_of(STEP)>(a, tile, tile == 0 ? PREFIX : AGGREGATE, aggregate);
    if (probed(STEP) && lane == 0) a.stamps[4 * tile + STAMP_AGGREGATE] = global_timer();
    __syncwarp();
    if (lane == 0) mbar_arrive(&r.summed[s]);
  }
}

// A compute warp (cw = 0 .. WARPS - 1).
template <int STEP>
__device__ void compute(const Ring& r, const Args& a, int cw, int lane) {
  if constexpr (work_of(STEP) == STORE || work_of(STEP) == ONE_PASS) {
    for (size_t k = 0;; ++k) {
      const int s = int(k % STAGES);
      mbar_wait(&r.full[s], unsigned(k / STAGES) & 1);
      const size_t tile = size_t(r.ticket[s]);
      if (tile >= a.tiles) return;
      int run = 0;
      if (work_of(STEP) == ONE_PASS) {
        const int own = lane_total(r, s, cw, lane);
        const int inclusive = warp_inclusive(own, lane);
        if (lane == 31) r.totals[s * WARPS + cw] = inclusive;
        compute_barrier();
        for (int w = 0; w < cw; ++w) run += r.totals[s * WARPS + w];
        run += inclusive - own;
        scan_and_store(r, a, tile, s, cw, lane, run);
      } else {
        store_and_give_back(r, a, tile, s, cw, lane);
      }
    }
  } else if constexpr (work_of(STEP) == AGG_FIRST || work_of(STEP) == SPLIT) {
    // One pass a tile: the offset comes from the look-ahead warp; the tile was reduced by it
    // (lookahead_reduces) or by the reduce warp (split).
    Waits waits;
    for (size_t k = 0;; ++k) {
      const int s = int(k % STAGES);
      const unsigned parity = unsigned(k / STAGES) & 1;
      const long long t0 = probed(STEP) ? clock64() : 0;
      mbar_wait(&r.full[s], parity);
      const long long t1 = probed(STEP) ? clock64() : 0;
      const size_t tile = size_t(r.ticket[s]);
      if (tile >= a.tiles) break;
      const int own = lane_total(r, s, cw, lane);
      const int before = warp_inclusive(own, lane) - own;
      const long long t2 = probed(STEP) ? clock64() : 0;
      mbar_wait(&r.ready[s], parity);
      if (probed(STEP)) waits.full += t1 - t0, waits.ready += clock64() - t2, ++waits.scanned;
      scan_and_store(r, a, tile, s, cw, lane, r.offsets[s * WARPS + cw] + before);
    }
    if (probed(STEP) && cw == 0 && lane == 0) report_waits(a, waits);
  } else {
    // Reduce AHEAD uses ahead of the scan, as the Rust kernel's compute warps do.
    Waits waits;
    size_t end = SIZE_MAX, next = 0;
    for (; next < size_t(ahead_of(STEP)) && end == SIZE_MAX; ++next)
      if (!reduce<STEP>(r, a, next, cw, lane, waits)) end = next;
    for (size_t k = 0; k < end; ++k) {
      if (end == SIZE_MAX) {
        if (!reduce<STEP>(r, a, next, cw, lane, waits)) end = next;
        ++next;
      }
      scan_store<STEP>(r, a, k, cw, lane, waits);
    }
    if (probed(STEP) && cw == 0 && lane == 0) report_waits(a, waits);
  }
}

template <int STEP>
__global__ void __launch_bounds__(threads_of(STEP), PER_SM) scan_step(Args a) {
  extern __shared__ __align__(128) int ring[];
  __shared__ __align__(8) unsigned long long bars[4 * STAGES];
  __shared__ int ctrl[STAGES * (1 + 2 * WARPS) + 1];
  const Ring r{ring,        ctrl, ctrl + STAGES, ctrl + STAGES * (1 + WARPS), ctrl + STAGES * (1 + 2 * WARPS),
               bars,        bars + STAGES,        bars + 2 * STAGES,          bars + 3 * STAGES};
  if (threadIdx.x == 0) {
    *r.end_use = INT_MAX;
    for (int s = 0; s < STAGES; ++s) {
      mbar_init(&r.full[s], 1);
      mbar_init(&r.summed[s], 1);
      mbar_init(&r.ready[s], 32);
      mbar_init(&r.empty[s], WARPS);
    }
    fence_barrier_init();
  }
  __syncthreads();
  if (probed(STEP) && blockIdx.x == 0 && threadIdx.x == 0)
    a.probe[PROBE_CLOCK0] = clock64(), a.probe[PROBE_TIMER0] = global_timer();
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (warp == 0) {
    if (lane == 0) produce<STEP>(r, a);
  } else if (warp <= lookers_of(STEP)) {
    if (work_of(STEP) == AGG_FIRST) look_ahead_reducing(r, a, lane);
    else if (work_of(STEP) >= HANDOFF) look_ahead<STEP>(r, a, warp - 1, lane);
  } else if (warp <= lookers_of(STEP) + reducers_of(STEP)) {
    if constexpr (reducers_of(STEP)) reduce_warp<STEP>(r, a, lane);
  } else {
    compute<STEP>(r, a, warp - 1 - lookers_of(STEP) - reducers_of(STEP), lane);
  }
}

template <int STEP>
void launch(Args a, int grid, cudaStream_t s) {
  static const bool raised = raise_shared(scan_step<STEP>, STAGES * TILE);
  (void)raised;
  scan_step<STEP><<<grid, threads_of(STEP), STAGES * TILE, s>>>(a);
}

// The input (a fixed xorshift sequence in -100..100), each tile's own inclusive scan, and the
// inclusive scan, wrapping as int32 does on the GPU.
void reference_data(std::vector<int>& input, std::vector<int>& tile_scan, std::vector<int>& scan) {
  uint32_t x = 0x2545F491u;
  unsigned run = 0, tile_run = 0;
  for (size_t i = 0; i < input.size(); ++i) {
    x ^= x << 13, x ^= x >> 17, x ^= x << 5;
    input[i] = int(x % 201) - 100;
    if (i % TILE_LEN == 0) tile_run = 0;
    run += unsigned(input[i]), tile_run += unsigned(input[i]);
    scan[i] = int(run), tile_scan[i] = int(tile_run);
  }
}

// Two lines on stderr from the producers' record of one launch (taken[b] = tiles << 8 | smid):
// the tiles per block and per SM (fewest, median, most, and the SMs at each end), then every
// SM's tiles. %smid need not be below the SM count: indexed by it, keeping the SMs that ran.
void print_tile_spread(const char* name, const std::vector<unsigned>& taken) {
  std::vector<unsigned> per_block, per_sm(256, 0), blocks_on(256, 0);
  for (unsigned t : taken) {
    per_block.push_back(t >> 8);
    per_sm[t & 255] += t >> 8;
    ++blocks_on[t & 255];
  }
  std::vector<int> sms;
  for (int i = 0; i < 256; ++i)
    if (blocks_on[i]) sms.push_back(i);
  std::sort(sms.begin(), sms.end(), [&](int x, int y) { return per_sm[x] < per_sm[y]; });
  std::sort(per_block.begin(), per_block.end());
  const size_t last = sms.size() - 1;
  fprintf(stderr,
          "scan_steps: %s tiles per block min %u median %u max %u; per SM min %u (SM %d, %d, %d) max %u (SM %d, %d, %d)\n",
          name, per_block.front(), per_block[per_block.size() / 2], per_block.back(), per_sm[sms[0]], sms[0], sms[1],
          sms[2], per_sm[sms[last]], sms[last], sms[last - 1], sms[last - 2]);
  fprintf(stderr, "scan_steps: %s tiles by SM (smid:tiles):", name);
  for (int i = 0; i < 256; ++i)
    if (blocks_on[i]) fprintf(stderr, " %d:%u", i, per_sm[i]);
  fprintf(stderr, "\n");
}

// One line on stderr from a probed launch's sums (Probe): where the look-ahead warp's and
// compute warp 0's time goes per tile, in ns at the clock block 0 ran at, and how many round
// trips the look-backs took.
void print_probe(const char* name, const std::vector<unsigned long long>& p) {
  const double ghz = double(p[PROBE_CLOCK1] - p[PROBE_CLOCK0]) / double(p[PROBE_TIMER1] - p[PROBE_TIMER0]);
  const double tiles = double(p[PROBE_TILES]), scanned = double(p[PROBE_SCANNED]);
  fprintf(stderr,
          "scan_steps: %s probe: clock %.3f GHz; look-ahead warp per tile: waits for totals %.0f ns, looks back "
          "%.0f ns, %.2f round trips, %.2f polls, nearest prefix %.1f tiles back; compute warp 0 per tile: waits "
          "for the load %.0f ns, for the offsets %.0f ns; round trips (count:look-backs)",
          name, ghz, p[PROBE_SUMMED_WAIT] / ghz / tiles, p[PROBE_LOOK_BACK] / ghz / tiles, p[PROBE_TRIPS] / tiles,
          p[PROBE_POLLS] / tiles, p[PROBE_DISTANCE] / tiles, p[PROBE_FULL_WAIT] / ghz / scanned,
          p[PROBE_READY_WAIT] / ghz / scanned);
  for (int w = 0; w < 32; ++w)
    if (p[PROBE_HIST + w]) fprintf(stderr, " %d%s:%llu", w, w == 31 ? "+" : "", p[PROBE_HIST + w]);
  fprintf(stderr, "\n");
}

// Lines on stderr from a probed launch's stamps: for each eighth of the tiles (by index), the
// median time its tiles landed (from the first landing), and the medians and 90th percentiles
// of aggregate - landed and prefix - aggregate, in µs; then the globaltimer's step (the smallest
// difference between landings).
void print_timeline(const char* name, const std::vector<unsigned long long>& st) {
  const size_t tiles = st.size() / 4;
  unsigned long long first = ~0ull;
  std::vector<unsigned long long> landed;
  for (size_t t = 0; t < tiles; ++t) first = std::min(first, st[4 * t]), landed.push_back(st[4 * t]);
  std::sort(landed.begin(), landed.end());
  unsigned long long step = ~0ull;
  for (size_t i = 1; i < tiles; ++i)
    if (landed[i] > landed[i - 1]) step = std::min(step, landed[i] - landed[i - 1]);
  const auto pct = [](std::vector<double> v, double q) {
    std::sort(v.begin(), v.end());
    return v[size_t(q * (v.size() - 1))];
  };
  unsigned long long last_prefix = 0;
  for (size_t t = 0; t < tiles; ++t) last_prefix = std::max(last_prefix, st[4 * t + STAMP_PREFIX]);
  fprintf(stderr, "scan_steps: %s timeline (globaltimer step %llu ns; last landing %.1f us, last prefix %.1f us):",
          name, step, (landed.back() - first) / 1e3, (last_prefix - first) / 1e3);
  for (int e = 0; e < 8; ++e) {
    std::vector<double> at, agg, pre;
    for (size_t t = std::max<size_t>(1, e * tiles / 8); t < (e + 1) * tiles / 8; ++t) {
      at.push_back((st[4 * t] - first) / 1e3);
      agg.push_back((double(st[4 * t + STAMP_AGGREGATE]) - double(st[4 * t])) / 1e3);
      pre.push_back((double(st[4 * t + STAMP_PREFIX]) - double(st[4 * t + STAMP_AGGREGATE])) / 1e3);
    }
    fprintf(stderr, " | %d/8 at %.0f: agg %.2f (%.2f) pre %.2f (%.2f)", e + 1, pct(at, 0.5), pct(agg, 0.5),
            pct(agg, 0.9), pct(pre, 0.5), pct(pre, 0.9));
  }
  fprintf(stderr, "\n");
}

// Whether the command line (after the rounds) names this step, or names none.
bool picked(int argc, char** argv, const char* name) {
  for (int i = 2; i < argc; ++i)
    if (!strcmp(argv[i], name)) return true;
  return argc <= 2;
}

using Run = void (*)(Args, int, cudaStream_t);
// What a step's output must be: the input (store), each tile's own inclusive scan, or the
// inclusive scan.
enum Want { INPUT, TILE_SCAN, SCAN };
struct Row {
  const char* name;
  Run run;
  Want want;
  bool spread;           // one more launch, counting each block's tiles (the drawn steps)
  Run probed = nullptr;  // one more launch, the step's probed twin
};
// A row of STEP with its probed twin.
template <int STEP>
constexpr Row probed_row(const char* name, bool spread = false) {
  return {name, launch<STEP>, SCAN, spread, launch<STEP + 128 * !probed(STEP)>};
}
constexpr int SECTORED = step_of(FULL, DRAWN, WINDOW_32, false, SECTOR);
constexpr int PAIRS = step_of(FULL, DRAWN, WINDOW_64_PAIRS);
const Row STEPS[] = {
    {"store", launch<step_of(STORE, DEALT)>, INPUT, false},
    {"store_drawn", launch<step_of(STORE, DRAWN)>, INPUT, true},
    {"one_pass", launch<step_of(ONE_PASS, DEALT)>, TILE_SCAN, false},
    {"one_pass_drawn", launch<step_of(ONE_PASS, DRAWN)>, TILE_SCAN, true},
    {"two_pass", launch<step_of(TWO_PASS, DEALT)>, TILE_SCAN, false},
    {"two_pass_drawn", launch<step_of(TWO_PASS, DRAWN)>, TILE_SCAN, true},
    {"handoff", launch<step_of(HANDOFF, DEALT)>, TILE_SCAN, false},
    {"handoff_drawn", launch<step_of(HANDOFF, DRAWN)>, TILE_SCAN, true},
    {"full", launch<step_of(FULL, DEALT)>, SCAN, false},
    probed_row<step_of(FULL, DRAWN)>("full_drawn", true),
    probed_row<step_of(FULL, DRAWN, WINDOW_32_SPIN)>("full_drawn_spin"),
    probed_row<step_of(FULL, DRAWN, WINDOW_128)>("full_drawn_wide"),
    probed_row<PAIRS>("full_drawn_pairs"),
    probed_row<with_ahead(step_of(FULL, DRAWN), 3)>("full_drawn_reduce3"),
    probed_row<with_ahead(step_of(FULL, DRAWN), 2)>("full_drawn_reduce2"),
    probed_row<with_ahead(PAIRS, 3)>("full_drawn_pairs_reduce3"),
    probed_row<with_ahead(PAIRS, 2)>("full_drawn_pairs_reduce2"),
    probed_row<with_ahead(SECTORED, 3)>("full_drawn_sector_reduce3"),
    probed_row<SECTORED>("full_drawn_sector"),
    probed_row<step_of(FULL, DRAWN, WINDOW_32, false, HALF_SECTOR)>("full_drawn_half_sector"),
    probed_row<step_of(FULL, DRAWN, WINDOW_32, false, HALF_LINE)>("full_drawn_half_line"),
    probed_row<step_of(FULL, DRAWN, WINDOW_32, false, SPREAD)>("full_drawn_spread"),
    probed_row<step_of(FULL, DRAWN, WINDOW_32, false, LINE)>("full_drawn_line"),
    probed_row<step_of(FULL, DRAWN, WINDOW_32, false, PACKED, 2)>("full_drawn_two", true),
    probed_row<step_of(FULL, DRAWN, WINDOW_32, false, LINE, 2)>("full_drawn_two_line"),
    probed_row<step_of(FULL, DRAWN, WINDOW_32, false, SECTOR, 2)>("full_drawn_two_sector"),
    probed_row<step_of(FULL, DRAWN, WINDOW_32, false, HALF_SECTOR, 2)>("full_drawn_two_half_sector"),
    {"full_drawn_ahead", launch<step_of(FULL, DRAWN_AHEAD)>, SCAN, true},
    probed_row<step_of(SPLIT, DRAWN)>("split_drawn", true),
    probed_row<step_of(SPLIT, DRAWN, WINDOW_32, false, SECTOR)>("split_drawn_sector"),
    probed_row<step_of(SPLIT, DRAWN, WINDOW_32, false, PACKED, 2)>("split_drawn_two"),
    {"lookahead_reduces", launch<step_of(AGG_FIRST, DEALT)>, SCAN, false},
    {"lookahead_reduces_drawn", launch<step_of(AGG_FIRST, DRAWN)>, SCAN, false},
};

// Exits 2 with one line where the command line (after the rounds) names a step not in STEPS,
// which would otherwise run nothing.
void check_picks(int argc, char** argv) {
  for (int i = 2; i < argc; ++i) {
    bool known = false;
    for (const Row& row : STEPS) known = known || !strcmp(argv[i], row.name);
    if (known) continue;
    fprintf(stderr, "scan_steps: no step named '%s'; the steps:", argv[i]);
    for (const Row& row : STEPS) fprintf(stderr, " %s", row.name);
    fprintf(stderr, "\n");
    exit(2);
  }
}

// The device side of a run: the buffers, the stream, the grid and the launches' epochs (every
// launch its own, so that no launch reads an earlier one's status words).
struct Device {
  int *in, *out;
  unsigned long long *status, *probe, *stamps;
  unsigned *counters, *taken;
  size_t tiles;
  int grid;
  cudaStream_t s;
  unsigned epoch = 0;

  Device(const std::vector<int>& input, int sms) : tiles((N + TILE_LEN - 1) / TILE_LEN), grid(PER_SM * sms) {
    CHECK(cudaMalloc(&in, N * 4));
    CHECK(cudaMalloc(&out, N * 4));
    CHECK(cudaMalloc(&status, tiles * 8 * stride_words(LINE)));
    CHECK(cudaMalloc(&counters, MAX_LAUNCHES * 4));
    CHECK(cudaMalloc(&probe, PROBE_WORDS * 8));
    CHECK(cudaMalloc(&stamps, tiles * 32));
    CHECK(cudaMalloc(&taken, grid * 4));
    CHECK(cudaMemset(counters, 0, MAX_LAUNCHES * 4));
    CHECK(cudaMemcpy(in, input.data(), N * 4, cudaMemcpyHostToDevice));
    CHECK(cudaMemset(out, 0, N * 4));
    CHECK(cudaMemset(status, 0, tiles * 8 * stride_words(LINE)));
    CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  }
  void launch_step(Run run, unsigned* taken_to, unsigned long long* probe_to, unsigned long long* stamps_to) {
    if (++epoch >= MAX_LAUNCHES) {
      fprintf(stderr, "scan_steps: more than %u launches; give fewer rounds\n", MAX_LAUNCHES - 1);
      exit(2);
    }
    run(Args{in, out, status, counters, N, tiles, epoch, taken_to, probe_to, stamps_to}, grid, s);
  }
  // One more launch of a drawn step, recording each block's tiles and SM (print_tile_spread).
  void spread(const char* name, Run run) {
    std::vector<unsigned> back(grid);
    CHECK(cudaMemsetAsync(taken, 0, grid * 4, s));
    launch_step(run, taken, nullptr, nullptr);
    CHECK(cudaStreamSynchronize(s));
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy(back.data(), taken, grid * 4, cudaMemcpyDeviceToHost));
    print_tile_spread(name, back);
  }
  // One launch of a step's probed twin (print_probe, print_timeline).
  void probed(const char* name, Run run) {
    std::vector<unsigned long long> sums(PROBE_WORDS), back(tiles * 4);
    CHECK(cudaMemsetAsync(probe, 0, PROBE_WORDS * 8, s));
    CHECK(cudaMemsetAsync(stamps, 0, tiles * 32, s));
    launch_step(run, nullptr, probe, stamps);
    CHECK(cudaStreamSynchronize(s));
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy(sums.data(), probe, PROBE_WORDS * 8, cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(back.data(), stamps, tiles * 32, cudaMemcpyDeviceToHost));
    print_probe(name, sums);
    print_timeline(name, back);
  }
};

int main(int argc, char** argv) {
  const int rounds = rounds_arg(argc, argv, "scan_steps");
  check_picks(argc, argv);
  cudaDeviceProp p;
  CHECK(cudaGetDeviceProperties(&p, 0));
  std::vector<int> input(N), back(N), tile_scan(N), scan(N);
  reference_data(input, tile_scan, scan);
  const std::vector<int>* wants[] = {&input, &tile_scan, &scan};
  Device d(input, p.multiProcessorCount);
  const double bytes = 2.0 * N * 4;
  print_csv_head(p);
  for (int r = 1; r <= rounds; ++r) {
    memcpy_row(r, d.in, d.out, input, back, d.s, "scan_steps");
    for (const Row& row : STEPS) {
      if (!picked(argc, argv, row.name)) continue;
      const double t = median_us([&] { d.launch_step(row.run, nullptr, nullptr, nullptr); }, d.s);
      printf("%d,scan_steps,%s,%d,%.1f,%.1f\n", r, row.name, PER_SM, t, bytes / (t * 1e3));
      fflush(stdout);
      const std::vector<int>& want = *wants[row.want];
      check_and_clear(d.out, want, back, "scan_steps", row.name);
      if (row.spread) {
        d.spread(row.name, row.run);
        check_and_clear(d.out, want, back, "scan_steps", row.name);
      }
      if (row.probed) {
        d.probed(row.name, row.probed);
        check_and_clear(d.out, want, back, "scan_steps", row.name);
      }
    }
  }
  return 0;
}
