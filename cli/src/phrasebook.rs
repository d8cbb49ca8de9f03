//! The CUDA C ↔ Rust phrasebook: one table, [`ROWS`], from which `docs/phrasebook.md` and
//! the report's phrasebook section are generated ([`markdown`], [`html`]).
//!
//! Each row pairs a CUDA C construct with this project's device layer
//! (`kernels::device::…`), the Rust-CUDA project's `cuda_std` spelling, and the kernel file
//! of ours where it first appears in teaching order. The tests check that the generated
//! file is up to date and that every public function and macro of `device/src/`
//! appears in some row's device-layer column.

/// One row of the phrasebook.
#[derive(Clone, Copy, Debug)]
pub struct Row {
    /// The CUDA C construct.
    pub cuda: &'static str,
    /// Our device-layer equivalent (`kernels::device::…`).
    pub device: &'static str,
    /// The Rust-CUDA `cuda_std` equivalent (names as in cuda_std 0.2; check your version).
    pub cuda_std: &'static str,
    /// The kernel file (under `kernels/src/`) where it first appears, or how it is used.
    pub first_in: &'static str,
}

const fn row(cuda: &'static str, device: &'static str, cuda_std: &'static str, first_in: &'static str) -> Row {
    Row { cuda, device, cuda_std, first_in }
}

/// The phrasebook, in the order a reader meets the constructs.
pub static ROWS: &[Row] = &[
    row(
        "`threadIdx.x` (`.y`, `.z`)",
        "`thread::thread_idx_x()` (`thread_idx_y`, `thread_idx_z`)",
        "`thread::thread_idx_x()`",
        "reduce/neighbored.rs",
    ),
    row(
        "`blockIdx.x` (`.y`, `.z`)",
        "`thread::block_idx_x()` (`block_idx_y`, `block_idx_z`)",
        "`thread::block_idx_x()`",
        "reduce/neighbored.rs",
    ),
    row(
        "`blockDim.x` (`.y`, `.z`)",
        "`thread::block_dim_x()` (`block_dim_y`, `block_dim_z`)",
        "`thread::block_dim_x()`",
        "reduce/neighbored.rs",
    ),
    row(
        "`gridDim.x` (`.y`, `.z`)",
        "`thread::grid_dim_x()` (`grid_dim_y`, `grid_dim_z`)",
        "`thread::grid_dim_x()`",
        "reduce/grid_stride.rs",
    ),
    row(
        "`blockIdx.x * blockDim.x + threadIdx.x`",
        "`thread::global_idx_x()`",
        "`thread::index_1d()`",
        "reduce/grid_stride.rs",
    ),
    row(
        "`threadIdx.x % 32`, `threadIdx.x / 32`",
        "`thread::lane_id()`, `thread::warp_id()`",
        "`warp::lane_id()`; the warp: `thread::thread_idx_x() / 32`",
        "collective/block.rs (via reduce/warp_shuffle.rs)",
    ),
    row(
        "`warpSize`, `0xffffffff`",
        "`device::WARP_SIZE`, `device::FULL_MASK`",
        "`32`, `u32::MAX`",
        "reduce/unroll_warps8.rs",
    ),
    row(
        "`const int *g_idata`, `int *g_odata` (kernel parameters in global memory)",
        "`global::Global<i32>`, `global::GlobalMut<i32>` (`as_const()`; the host passes `DeviceBuffer::as_ptr()`, `from_erased` for a type-erased one)",
        "`*const i32`, `*mut i32` (or `&[i32]`, `&mut [i32]`)",
        "reduce/neighbored.rs",
    ),
    row(
        "`g_idata[i]`, `g_odata[i] = v`, `g_idata + i`",
        "`Global::read(i)`, `GlobalMut::write(i, v)`, `offset(i)` (`wrapping_offset(i)`, `cast::<U>()`, `addr()`, `is_null()`)",
        "`*p.add(i)`, `*p.add(i) = v`, `p.add(i)`",
        "reduce/neighbored.rs",
    ),
    row("`__syncthreads()`", "`thread::sync_threads()`", "`thread::sync_threads()`", "reduce/neighbored.rs"),
    row(
        "a named barrier among some warps: `asm(\"bar.sync %0, %1;\" :: \"r\"(id), \"r\"(threads))`",
        "`thread::named_barrier_sync(id, threads)`",
        "none: inline `asm!`",
        "scan/lookback_warpspec.rs",
    ),
    row("`__syncwarp(mask)`", "`warp::sync_warp(mask)`", "`warp::sync_warp(mask)`", "reduce/unroll_warps8.rs"),
    row(
        "`__shared__ int smem[N];`",
        "`static_shared!(smem: [i32; N])` → `shared::Shared<T>`",
        "`#[address_space(shared)] static mut` / `shared_array![i32; N]`",
        "reduce/smem.rs",
    ),
    row(
        "`extern __shared__ int smem[];`",
        "`shared::dynamic_shared::<i32>(len)`",
        "`shared::dynamic_shared_mem::<i32>()`",
        "reduce/smem_unroll4_dyn.rs",
    ),
    row(
        "`smem[i]`, `smem[i] = v`",
        "`Shared::read(i)`, `Shared::write(i, v)` (`Shared::from_raw`, `offset`, `as_ptr`)",
        "raw pointer reads and writes",
        "reduce/smem.rs",
    ),
    row(
        "`volatile int *vsmem = smem;`",
        "`Shared::read_volatile(i)`, `Shared::write_volatile(i, v)` (the classic kernels use `sync_warp` instead)",
        "`core::ptr::read_volatile` / `write_volatile`",
        "scan/lookback.rs",
    ),
    row(
        "`__shfl_down_sync(mask, v, d)`",
        "`warp::shfl_down_sync(mask, v, d)`",
        "`warp::warp_shuffle_down(mask, v, d, 32)`",
        "collective/warp.rs (via reduce/warp_shuffle.rs)",
    ),
    row(
        "`__shfl_up_sync`, `__shfl_xor_sync`, `__shfl_sync`",
        "`warp::shfl_up_sync`, `warp::shfl_xor_sync`, `warp::shfl_sync`",
        "`warp::warp_shuffle_up` / `_xor` / `_idx`",
        "scan/lookback.rs",
    ),
    row(
        "`__ballot_sync`, `__all_sync`, `__any_sync`",
        "`warp::ballot_sync`, `warp::all_sync`, `warp::any_sync`",
        "`warp::warp_vote_ballot` / `_all` / `_any`",
        "scan/lookback.rs",
    ),
    row(
        "`__reduce_add_sync(mask, v)` (`min`, `max`)",
        "`warp::reduce_add_sync(mask, v)` (`reduce_min_sync`, `reduce_max_sync`; for `u32`: `reduce_add_sync_u32`, `reduce_min_sync_u32`, `reduce_max_sync_u32`)",
        "`warp::warp_reduce(mask, v, WarpReductionOp::Add)` (`Min`, `Max`)",
        "reduce/redux.rs",
    ),
    row(
        "`atomicAdd(&x, v)`",
        "`atomic::atomic_add_i32(p, v)`, `atomic::atomic_add_u32(p, v)`, `atomic::atomic_add_u64(p, v)`",
        "`atomic::intrinsics::atomic_fetch_add_relaxed_i32_device` or `core::sync::atomic`",
        "reduce/single_pass.rs",
    ),
    row(
        "`atomicAdd(&x, v)` with the result unused (PTX `red`)",
        "`atomic::red_add_i32(p, v)`",
        "same as `atomicAdd`",
        "reduce/atomic_accumulate.rs",
    ),
    row(
        "`atomicAdd` / `atomicMin` / `atomicMax` on `unsigned`, `long long`, `float`, `double`, result unused",
        "`atomic::red_add_u32`, `red_add_u64`, `red_add_f32`, `red_add_f64`, `atomic::red_min_s32`, `red_max_s32`, `red_min_u32`, `red_max_u32`, `red_min_s64`, `red_max_s64`, `red_min_u64`, `red_max_u64`; float min/max (no CUDA builtin): `atomic::red_min_f32`, `red_max_f32`, `red_min_f64`, `red_max_f64`",
        "`atomic::atomic_add`, `atomic_min`, `atomic_max` (no float min/max)",
        "reduce/atomic_accumulate.rs (`atomic_accumulate__*`)",
    ),
    row(
        "`__threadfence()`",
        "`atomic::thread_fence()`",
        "`atomic::intrinsics::fence_sc_device()`",
        "reduce/single_pass.rs",
    ),
    row(
        "`cuda::atomic_ref<…, thread_scope_device>` `load(acquire)` / `store(release)` (and relaxed)",
        "`atomic::load_acquire_u32`, `load_acquire_u64`, `atomic::store_release_u32`, `store_release_u64`, `atomic::load_relaxed_u32`, `load_relaxed_u64`, `atomic::store_relaxed_u32`, `store_relaxed_u64`; at system scope (host memory mapped into the device) `atomic::store_release_sys_u32`",
        "`core::sync::atomic` on global memory",
        "scan/lookback.rs",
    ),
    row(
        "`__ldg(p)` / `const __restrict__`",
        "`Global::load_v4_nc(i)` (`ld.global.nc.v4`)",
        "`arch::ldg` (none for vectors)",
        "collective/thread.rs (via reduce/vector_loads.rs)",
    ),
    row(
        "vector types: `int4 v = *(int4 *)p;`",
        "`Global::load_v4(i)`, `GlobalMut::store_v4(i, v)`, `global::Vec4`; in shared memory `Shared::read_v4`, `Shared::write_v4`",
        "`vek::Vec4` loads",
        "collective/thread.rs (via reduce/vector_loads.rs)",
    ),
    row(
        "`cp.async` / `cuda::memcpy_async` to shared memory",
        "`Shared::copy_async_v4(i, src)`, `shared::copy_async_commit()`, `shared::copy_async_wait::<N>()`",
        "none: inline `asm!`",
        "scan/lookback.rs",
    ),
    row(
        "`atomicCAS(p, expected, new)` (64-bit)",
        "`atomic::atomic_cas_u64(p, expected, new)` (`atom.relaxed.gpu.cas.b64`)",
        "`core::sync::atomic` `compare_exchange` on global memory",
        "scan/lookback_bulk.rs (the tile tickets)",
    ),
    row(
        "`atomicAdd(p + i, v)`, `atomicSub`, `atomicMin`, `atomicMax`, `atomicAnd`, `atomicOr`, `atomicXor`, `atomicExch`, `atomicCAS(p + i, cmp, v)`, `atomicInc(p + i, limit)`, `atomicDec` on global memory",
        "`p.atomic_add(i, v)` on a `global::GlobalMut<T>` (`atomic_sub`, `atomic_min`, `atomic_max`, `atomic_and`, `atomic_or`, `atomic_xor`, `atomic_exch`, `atomic_cas(i, cmp, v)`, `atomic_inc(i, limit)`, `atomic_dec(i, limit)`; `atom.relaxed.gpu.global`; the types: traits `atomic::AtomicAdd` … `AtomicDec`)",
        "`atomic::intrinsics::atomic_fetch_add_relaxed_i32_device` and kin, or `core::sync::atomic`",
        "atomics.rs (`atomic_every_int`)",
    ),
    row(
        "the same on shared memory: `atomicAdd(&smem[i], v)` …",
        "`smem.atomic_add(i, v)` on a `shared::Shared<T>` (every operation of the row above; `atom.relaxed.cta.shared`)",
        "`atomic::intrinsics::atomic_fetch_add_relaxed_i32_block` and kin on a shared pointer",
        "histogram/histogram_shared.rs (`./x learn 26`); atomics.rs (`atomic_histogram`)",
    ),
    row(
        "`atomicAdd(&smem[i], v)` whose result is not used (nvcc: `red.shared.add`)",
        "`smem.red_add(i, v)` on a `shared::Shared<u32>` (`i32`, `u64`, `i64`; `red.relaxed.cta.shared.add`)",
        "`atomic::intrinsics::atomic_fetch_add_relaxed_i32_block` with the result dropped",
        "examples/my-kernels (`hist256`)",
    ),
    row(
        "a device-side launch (dynamic parallelism): `kernel<<<grid, block, 0, cudaStreamTailLaunch>>>(args…)` (`cudaStreamFireAndForget`); nvcc's `cudaGetParameterBufferV2` + `cudaLaunchDeviceV2`, linked with `-rdc=true -lcudadevrt`",
        "`launch_device!(kernel<<<(grid, block, DeviceStream::Tail)>>>(args…))` (`launch::DeviceStream::FireAndForget`; `DeviceStream::handle()` is the `cudaStream_t`; `launch::param_offset` places each argument in the parameter buffer)",
        "none: an `extern \"C\"` declaration of the device runtime's functions",
        "reduce/recursive_reduce.rs",
    ),
    row(
        "CUDA graphs: `cudaGraphCreate` + `cudaGraphAddKernelNode` + `cudaGraphInstantiate`, then `cudaGraphLaunch`",
        "`Gpu::kernel_graph(name, grid, block, shared, params)` (one kernel node, instantiated), `Gpu::answer_from_graph(stream, &graph)`; the library's `Backend::answer_graph`",
        "none: the driver API (`cust::sys`)",
        "the host: the synchronous `i32` sum's repeats of one shape (`reduce_scan::Reducer`)",
    ),
    row(
        "the last block by the sum's own atomic: `old = atomicAdd((unsigned long long*)tally, ((u64)(unsigned)sum << 24) | 1)`",
        "`atomic::atomic_add_u64(tally, index::tally_add(sum))`, then `index::tally_count(old)` and `index::tally_sum(old)`",
        "`core::sync::atomic::AtomicU64::fetch_add`",
        "reduce/atomic_accumulate_to_host.rs",
    ),
    row(
        "TMA bulk copies (sm_90): `cuda::memcpy_async(smem, gmem, bytes, bar)` with a `cuda::barrier`; `cp.async.bulk` shared → global; `fence.proxy.async`",
        "`bulk::Mbarrier` (`at`, `init`, `arrive_expect_tx`, `arrive`, `try_wait_parity`, `wait_parity`), `Shared::copy_bulk(i, src, count, bar, policy)`, `Shared::store_bulk(i, dst, count, policy)`, `bulk::bulk_commit()`, `bulk::bulk_wait_read::<N>()`, `bulk::fence_proxy_async()`",
        "none: inline `asm!`",
        "scan/lookback_bulk.rs",
    ),
    row(
        "`__stcs(int4*)`; `createpolicy` + `cp.async … L2::cache_hint`; `cp.async … L2::256B`",
        "`GlobalMut::store_v4_streaming(i, v)`; `global::l2_evict_first_policy()` + `Shared::copy_async_v4_evict_first(i, src, policy)`; `Shared::copy_async_v4_prefetch256(i, src)`",
        "none: inline `asm!`",
        "scan/lookback.rs (the cache-hint ablations)",
    ),
    row(
        "`cuda::ptx::prefetch_L2(p)` (libcu++; `asm(\"prefetch.global.L2 [%0];\")`)",
        "`Global::prefetch_l2(i)` (`prefetch.global.L2`; the emulator checks the address and moves nothing); `Slice::prefetch_l2(i)` (no `unsafe`: nothing past the end)",
        "none: inline `asm!`",
        "select.rs",
    ),
    row(
        "`a % b` (a remainder nvcc keeps; LLVM turns one by a power of two into an AND)",
        "`math::rem_u32(a, b)` (`rem.u32`, kept)",
        "`a % b`",
        "reduce/neighbored_modulo.rs",
    ),
    row(
        "`fminf(a, b)`, `fmaxf`, `fmin`, `fmax` (PTX `min.f32`, `max.f32`, `min.f64`, `max.f64`: a NaN operand is ignored, −0.0 < +0.0)",
        "`math::min_f32(a, b)`, `math::max_f32`, `math::min_f64`, `math::max_f64` (the float `Min`/`Max` operators add the NaN: `Element::minimum`)",
        "`a.min(b)` (core's `f32::min`: LLVM's `minnum`, which may return either zero)",
        "collective/types.rs (via reduce/warp_shuffle.rs's `f32_min`)",
    ),
    row("`clock64()`", "`clock::clock64()`", "`clock::clock64()` (`thread::clock64`)", "sumsq/squares_one_thread.rs"),
    row(
        "`%globaltimer` (inline `asm(\"mov.u64 %0, %%globaltimer;\")`)",
        "`clock::globaltimer()`",
        "none: inline `asm!`",
        "timing.rs",
    ),
    row("`__nanosleep(ns)`", "`clock::nanosleep(ns)`", "none: inline `asm!`", "scan/lookback.rs"),
    row(
        "`idx = blockIdx.x * blockDim.x * k + threadIdx.x; if (idx < n)` (a block's segment of `k` data blocks)",
        "`kernels::index::block_segment(n, b, seg)` → `(start, len)` (the kernels crate's index helpers, not the \
         device layer; `segment_len(n, start, seg)`, `div_ceil(a, b)`)",
        "none: the arithmetic by hand",
        "reduce/neighbored.rs",
    ),
    row(
        "`int index = 2 * stride * tid;` (`reduceNeighboredLess`)",
        "`kernels::index::neighbored_less_index(tid, stride)`",
        "none: the arithmetic by hand",
        "reduce/neighbored_less.rs",
    ),
    row(
        "`idata[tid + k * blockDim.x]` (the unrolled loads), `if (idx + k * blockDim.x < n)`",
        "`kernels::index::fold_index(tid, block, k)`, `fold_count(len, block, tid, factor)` (how many exist)",
        "none: the arithmetic by hand",
        "reduce/unroll2.rs",
    ),
    row("`__trap()` / `assert`", "`device::trap(reason)`", "`core::intrinsics::abort()` / `panic!`", "broken.rs"),
    row(
        "`__global__ void k(…)`",
        "`kernel! { pub unsafe fn k(…) }` (`#[unsafe(no_mangle)] extern \"ptx-kernel\"`)",
        "`#[kernel] pub unsafe fn k(…)`",
        "reduce/neighbored.rs",
    ),
    row(
        "`extern \"C\" __global__ void k(…)` in a crate of your own; `template <typename T> __global__ void k(…)` with explicit instantiations",
        "`kernel! { pub fn k(…) { … } }` (safe, or `pub unsafe fn`), `kernel! { pub fn k<T: Bound>(…) for [f32, f64] { … } }` (entries `k__f32`, `k__f64`); each makes `k::KERNEL` (or `<f32 as k::Instance>::KERNEL`), a `kernel::KernelFn` (`name`, `run`)",
        "`#[kernel] pub unsafe fn k(…)`",
        "examples/my-kernels/src/lib.rs (README: \"Your kernel, your crate\")",
    ),
    row(
        "`const T *p, size_t n`: `if (i < n) v = p[i];`",
        "`slice::Slice<T>`: `get(i)` (`Option`), `at(i)` (checked: past the end traps), `len()`, `is_empty()`; `Slice::from_raw_parts(global, len)` (`unsafe`), `as_global()` (the unchecked pointer)",
        "`&[T]` kernel parameters",
        "examples/my-kernels/src/lib.rs",
    ),
    row(
        "`T *out`, each thread writing `out[blockIdx.x * blockDim.x + threadIdx.x]` (and the grid-stride loop's indices)",
        "`slice::DisjointSlice<T>`: `set(i, v)`, `get(i)` with `i` a `slice::ThreadIndex` (`ThreadIndex::global()`, `ThreadIndex::grid_stride(n)`, `.get()` its number); `DisjointSlice::from_raw_parts`, `as_global_mut()`",
        "`DisjointSlice` (cuda-oxide), or `*mut T` with `unsafe`",
        "the README's template (`ThreadIndex::grid_stride`)",
    ),
    row(
        "`if (threadIdx.x == 0) partials[blockIdx.x] = v;`",
        "`slice::PerBlock<T>`: `set(leader, v)` with `slice::BlockLeader::get()` (`Some` in thread 0; `.block()` is `blockIdx.x`); `PerBlock::from_raw_parts`, `as_global_mut()`",
        "`*mut T` with `unsafe`",
        "examples/my-kernels/src/lib.rs",
    ),
    row(
        "`T *hist, size_t n`, `atomicAdd(&hist[i], v)` from any thread",
        "`slice::AtomicSlice<T>`: `hist.atomic_add(i, v)` and every atomic of the rows above, safe (the index checked); `AtomicSlice::from_raw_parts`, `as_global_mut()`; the host's `DeviceBuffer::atomic()`",
        "`*mut T` with `unsafe`",
        "atomics.rs (`atomic_histogram`)",
    ),
    row(
        "CUB `cub::BlockReduce<T, THREADS>(temp).Sum(v)` / `Reduce(v, op)`, `cub::BlockScan<T, THREADS>(temp).InclusiveScan(v, op)` / `ExclusiveScan`, with `__shared__ typename …::TempStorage temp;`",
        "the collective layer (`reduce-scan-collective`, `kernels::collective`): `BlockReduce::new(block_slots!(NAME: T)).sum(v)` / `reduce::<Op>(v)`, `BlockScan::new(block_slots!(NAME: T)).inclusive::<Op>(v)` / `exclusive::<Op>(v)`",
        "none",
        "the README's template (`BlockReduce`)",
    ),
    row(
        "CUB `cub::WarpReduce<T>(temp).Reduce(v, op)`, `cub::WarpScan<T>(temp).InclusiveScan(v, op)`",
        "`warp::warp_reduce_shfl::<T, Op>(v)`, `warp::warp_scan_inclusive::<T, Op>(v)` (collective layer)",
        "none",
        "reduce/warp_shuffle.rs (`warp_reduce_shfl`)",
    ),
    row(
        "CUB `cub::WarpReduce<T, LOGICAL_WARP_THREADS>(temp).Reduce(v, op)` (a reduction per group of lanes)",
        "`warp::logical_warp_reduce_shfl::<T, Op>(v, lanes)`, `warp::logical_warp_arg_reduce::<T, Op>(arg, lanes)` (collective layer; each group's first lane)",
        "none",
        "reduce/segmented_warp.rs (a logical warp per short segment)",
    ),
    row(
        "`cuda::std::plus<>`, `cuda::minimum<>`, `cuda::maximum<>` over `int`, `unsigned`, `long long`, `float`, `double`",
        "`types::Sum`, `types::Min`, `types::Max` (`types::Operator<T>`), over `types::Element` (`i32`, `u32`, `i64`, `u64`, `f32`, `f64`; `Element::times` multiplies)",
        "none",
        "reduce/warp_shuffle.rs (the typed instantiations)",
    ),
    row(
        "`k<<<grid, block, smem>>>(args)`",
        "host: `backend::Kernel` launched by `reduce::Reduction` (`Backend::launch`: `cuLaunchKernel`)",
        "cust: `launch!(module.k<<<grid, block, smem, stream>>>(args))`",
        "host/src/reduce/mod.rs",
    ),
    row(
        "`cudaMemcpy(d, h, n, cudaMemcpyHostToDevice)`",
        "host: `Backend::upload`, `Backend::download` (`cuMemcpyHtoD`, `cuMemcpyDtoH`)",
        "cust: `DeviceBuffer::from_slice`, `CopyDestination::copy_to`",
        "runtime/src/backend",
    ),
    row(
        "`cudaEventCreate`, `cudaEventRecord`, `cudaEventElapsedTime`",
        "host: `timing` (`Backend::time`: `cuEventCreate`, `cuEventRecord`, `cuEventElapsedTime`)",
        "cust: `event::Event`",
        "runtime/src/timing.rs",
    ),
];

/// Escapes `|` for a Markdown table cell.
fn md_cell(s: &str) -> String {
    s.replace('|', "\\|")
}

/// The phrasebook as Markdown: what `docs/phrasebook.md` holds.
pub fn markdown() -> String {
    let mut s = String::from(
        "# CUDA C ↔ Rust phrasebook\n\n\
         <!-- Generated from cli/src/phrasebook.rs; regenerate with `UPDATE_PHRASEBOOK=1 cargo test -p reduce-scan-cli phrasebook`. Do not edit. -->\n\n\
         Device-layer paths are relative to `kernels::device` (`device/src/`). The `cuda_std` column gives \
         the Rust-CUDA project's spelling (cuda_std 0.2; check the version you use). \"First in\" is the file under \
         `kernels/src/` (or `host/src/`) where the construct first appears in teaching order.\n\n\
         | CUDA C | ours (`kernels::device`) | Rust-CUDA `cuda_std` | first in |\n|---|---|---|---|\n",
    );
    for r in ROWS {
        s.push_str(&format!(
            "| {} | {} | {} | {} |\n",
            md_cell(r.cuda),
            md_cell(r.device),
            md_cell(r.cuda_std),
            md_cell(r.first_in)
        ));
    }
    s
}

/// The phrasebook as an HTML table (backticks become `<code>`), for the report.
pub fn html() -> String {
    let mut s = String::from(
        "<table class=\"phrasebook\"><thead><tr><th>CUDA C</th><th>ours (<code>kernels::device</code>)</th><th>Rust-CUDA <code>cuda_std</code></th><th>first in</th></tr></thead><tbody>\n",
    );
    for r in ROWS {
        s.push_str("<tr>");
        for cell in [r.cuda, r.device, r.cuda_std, r.first_in] {
            s.push_str(&format!("<td>{}</td>", crate::report::html::inline(cell)));
        }
        s.push_str("</tr>\n");
    }
    s.push_str("</tbody></table>\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn repo() -> &'static Path {
        Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
    }

    #[test]
    fn phrasebook_md_matches_the_generator() {
        let path = repo().join("docs/phrasebook.md");
        if std::env::var_os("UPDATE_PHRASEBOOK").is_some() {
            std::fs::write(&path, markdown()).unwrap();
        }
        let on_disk = std::fs::read_to_string(&path).expect("docs/phrasebook.md");
        assert!(
            on_disk == markdown(),
            "docs/phrasebook.md is stale: UPDATE_PHRASEBOOK=1 cargo test -p reduce-scan-cli phrasebook"
        );
    }

    #[test]
    fn every_public_device_function_has_a_row() {
        let dir = repo().join("device/src");
        let mut names = Vec::new();
        // The files of device/src and of its module folders (device/src/atomic/).
        let mut files = Vec::new();
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                files.extend(std::fs::read_dir(&path).unwrap().map(|e| e.unwrap().path()));
            } else {
                files.push(path);
            }
        }
        for path in files {
            // emu.rs is the emulator's hook plumbing (no CUDA construct).
            if path.file_name().unwrap() == "emu.rs" {
                continue;
            }
            names.extend(public_names(&std::fs::read_to_string(&path).unwrap()));
        }
        for must in
            ["thread_idx_x", "sync_threads", "shfl_down_sync", "reduce_add_sync", "static_shared", "trap", "atomic_dec"]
        {
            assert!(names.iter().any(|n| n == must), "the scan missed `{must}`: {names:?}");
        }
        let missing: Vec<_> = names.iter().filter(|n| !ROWS.iter().any(|r| mentions(r.device, n))).collect();
        assert!(missing.is_empty(), "public device-layer items with no phrasebook row: {missing:?}");
    }

    /// Does `text` hold `name` as a whole identifier?
    fn mentions(text: &str, name: &str) -> bool {
        let ident = |c: char| c.is_alphanumeric() || c == '_';
        text.match_indices(name).any(|(i, _)| {
            !text[..i].chars().next_back().is_some_and(ident)
                && !text[i + name.len()..].chars().next().is_some_and(ident)
        })
    }

    /// The public functions and exported macros of one device-layer file: `pub fn NAME`,
    /// `pub unsafe fn NAME`, `#[macro_export] macro_rules! NAME`, and the names that local
    /// macros generating `pub fn $name` are invoked with (skipping a private `mod window`).
    fn public_names(src: &str) -> Vec<String> {
        let src = without_private_window(src);
        let mut names = Vec::new();
        let mut generators = Vec::new();
        let lines: Vec<&str> = src.lines().map(str::trim).collect();
        for (i, line) in lines.iter().enumerate() {
            for prefix in ["pub fn ", "pub unsafe fn ", "pub const fn "] {
                if let Some(rest) = line.strip_prefix(prefix) {
                    let name = ident(rest);
                    if !name.is_empty() {
                        names.push(name);
                    }
                }
            }
            if let Some(rest) = line.strip_prefix("macro_rules! ") {
                let name = ident(rest);
                if i > 0 && lines[i - 1] == "#[macro_export]" {
                    names.push(name.clone());
                }
                // A generator names its functions with a `$name` argument; a macro that writes
                // fixed method names (global.rs's `common!`) has them counted as `pub fn` lines.
                let body = lines[i + 1..].iter().take_while(|l| !l.starts_with("macro_rules! "));
                if body.clone().any(|l| l.contains("fn $")) {
                    generators.push(name);
                }
            }
        }
        for mac in generators {
            let call = format!("{mac}!(");
            for (i, line) in lines.iter().enumerate() {
                if line.starts_with(&call) {
                    let first = lines[i + 1..].iter().find(|l| !l.starts_with("///") && !l.starts_with("#["));
                    if let Some(l) = first {
                        names.push(ident(l));
                    }
                }
            }
        }
        names.retain(|n| !n.is_empty());
        names.sort();
        names.dedup();
        names
    }

    fn ident(s: &str) -> String {
        s.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect()
    }

    /// The source without the private `mod window { … }` (its functions are not public API).
    fn without_private_window(src: &str) -> String {
        let Some(start) = src.find("\nmod window {") else { return src.to_string() };
        let mut depth = 0;
        for (i, c) in src[start..].char_indices() {
            match c {
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        return format!("{}{}", &src[..start], &src[start + i + 1..]);
                    }
                }
                _ => {}
            }
        }
        src.to_string()
    }
}
