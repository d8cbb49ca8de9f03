#!/usr/bin/env python3
"""Writes the starting file of every `./x learn` exercise, learn/start/NN_<lesson>.rs, from the
kernel of the lesson before it in kernels/src: the previous lesson's code, renamed to the
lesson's kernel, with the change the lesson teaches left to make and the place marked
`// EXERCISE N: …`. Doc comments and the lesson markers are dropped (the exercise's text is
what `./x learn N` prints); paths `crate::` become `kernels::`.

    scripts/learn_start.py          rewrite every starting file, the bug hunts' too (the
                                    learner's copies in learn/exercises/ are never touched)

The exercises themselves (title, text, goal) are in learn/course/src/exercises.rs; EXERCISES below
lists, for each, the file it starts from, where its marker goes and what it says; HUNTS the bug
hunts; LOOKBACK_START is exercise 24's file, written out (see there why).
"""
import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parent.parent

# (number, lesson, starts from, anchor: a line of the previous file the marker goes above,
#  marker text, items-per-thread constant to add or None)
EXERCISES = [
    (1, "neighbored_less", "reduce/neighbored", "let works = |tid: u32, stride: u32|",
     "map the working threads to the first ones: thread tid works on index 2*stride*tid", None),
    (2, "interleaved", "reduce/neighbored_less", "let index = neighbored_less_index(tid, stride);",
     "pair elements `stride` apart, stride halving from block/2: thread tid adds idata[tid + stride]", None),
    (3, "unroll2", "reduce/interleaved", "let (start, len) = block_segment(n, b, block);",
     "each block first adds 2 data blocks (set ITEMS_PER_THREAD to 2 and fold before the tree)", 1),
    (4, "unroll8", "reduce/unroll2", "for k in 0..2 {",
     "fold 8 data blocks per block (ITEMS_PER_THREAD = 8)", 2),
    (5, "unroll_warps8", "reduce/unroll8", "while stride > 0 {",
     "stop the barrier loop at stride 32 and finish the last warp with sync_warp(FULL_MASK) between levels", None),
    (6, "complete_unroll_warps8", "reduce/unroll_warps8", "while stride > WARP_SIZE {",
     "write out the rounds for strides 512, 256, 128 and 64 (each under `if block >= 2*stride`): no loop", None),
    (7, "complete_unroll", "reduce/complete_unroll_warps8", "let block = block_dim_x();",
     "use the compile-time BLOCK instead of block_dim_x(), and put each barrier inside its `if BLOCK >= …`",
     None),
    (8, "smem", "reduce/gmem", "let idata = unsafe { g_idata.offset(start as usize) };",
     "copy the block's segment into a shared array and run the tree there; only thread 0 writes to global memory",
     None),
    (9, "smem_unroll4", "reduce/smem", "let idx = block_idx_x() as usize * block as usize + tid as usize;",
     "each thread first adds 4 elements a block apart (ITEMS_PER_THREAD = 4)", 1),
    (10, "smem_unroll4_dyn", "reduce/smem_unroll4", "let smem = static_shared!(SMEM: [i32; SHARED_TREE_SLOTS]);",
     "size the shared array at launch: dynamic_shared::<i32>(block_dim_x() as usize)", None),
    (11, "warp_shuffle", "reduce/smem_unroll4", "let smem = static_shared!(SMEM: [i32; SHARED_TREE_SLOTS]);",
     "sum each warp with shfl_down_sync (5 steps, no shared memory), then the warps' sums with one barrier", 4),
    (12, "squares_coalesced", "sumsq/squares_chunked", "let (first, end) = chunk_bounds(",
     "let thread t read elements t, t + blockDim, t + 2·blockDim, …: each warp load one line", None),
    (13, "bit", "scan/bit", "// Thread t's top node is band node",
     "build the levels in a shared array of BIT_BLOCK words (static_shared!): each thread puts its top node "
     "there, the levels add in shared memory, and each thread stores its band once at the end", None),
    (14, "blelloch", "scan/blelloch_unpadded", "let temp = static_shared!(BLELLOCH_UNPADDED_TEMP",
     "pad the tree: node i at padded(i), in an array of padded_len(BLELLOCH_LEAVES as usize) words, "
     "wherever the tree is indexed (the leaves, the sweeps, the root), here and in blelloch_reduce", None),
    (19, "redux", "reduce/warp_shuffle", "let total = unsafe { block_sum(sum, slots, warp_sum_shfl) };",
     "sum each warp with one instruction: give block_sum a warp step that returns "
     "reduce_add_sync(FULL_MASK, value) (redux.sync, sm_80 and newer)", None),
    (20, "grid_stride", "reduce/warp_shuffle", "let start = block_idx_x() as usize * ITEMS_PER_THREAD * block;",
     "set RESIDENT_GRID to true (a grid of the GPU's size, whatever n) and loop: thread g adds elements g, "
     "g + gridDim*blockDim, … below n", None),
    (21, "vector_loads", "reduce/grid_stride", "let mut i = global_idx_x();",
     "read 16 bytes per load: split the input at its 16-byte boundaries (split_for_v4), load the aligned body "
     "with load_v4_nc, four vectors per thread per trip, and the unaligned head and tail one element at a time", None),
    (22, "single_pass", "reduce/vector_loads", "if thread_idx_x() == 0 {",
     "finish on the device: thread 0 publishes the block's sum to g_partials, fences, draws a ticket; the block "
     "that draws the last ticket adds every partial into g_out[0] and puts the ticket back to 0", None),
    (23, "atomic_accumulate", "reduce/atomic_accumulate", "// SAFETY: g_acc holds two elements, and the precondition",
     "sum the block first (block_sum), then let thread 0 alone add the block's sum into the result: one atomic "
     "per block", None),
]

# Exercise 13 starts from `bit` itself, with the seed's first form of the in-block build: the
# levels add in global memory (the tree's own words), not in a shared array. The text of
# bit_build's body from its shared array to its store, and what replaces it.
BIT_SHARED_FROM = "let smem = static_shared!(BIT_NODES: [i32; BIT_BLOCK as usize]);"
BIT_SHARED_TO = "unsafe { store_band(tree, j0, stride, count, n, nodes) };"
BIT_GLOBAL = """let tid = thread_idx_x() as usize;
        let j0 = (block_idx_x() as usize * BIT_BLOCK as usize + tid) * BIT_ITEMS as usize;
        let (n, stride) = (n as usize, stride.max(1) as usize);
        // Band nodes j < count exist (`index::bit_positions`, the host's grid, is the same).
        let count = n / stride;

        // SAFETY: src holds n aligned elements (preconditions).
        let nodes = fenwick4(unsafe { load_band(src, j0, stride, count, n) });
        // SAFETY: tree holds n aligned elements; these positions are this thread's alone.
        unsafe { store_band(tree, j0, stride, count, n, nodes) };

        // Thread t's top node is band node 4(first + t) + 3, at tree position top(t); it exists
        // when that node is below `count`.
        let first = block_idx_x() as usize * BIT_BLOCK as usize;
        let items = BIT_ITEMS as usize;
        let top = |t: usize| ((first + t) * items + items) * stride - 1;
        let exists = (first + tid) * items + items - 1 < count;
        let mut d = 1usize;
        while d < BIT_BLOCK as usize {
            sync_threads();
            if (tid + 1).is_multiple_of(2 * d) && exists {
                // SAFETY: top(tid) < n, as the node exists, and so does the node of tid - d < tid.
                // Only thread tid writes top(tid) at this level; top(tid - d) has
                // (tid - d + 1) % 2d == d != 0, so no thread writes it at this level.
                unsafe { tree.write(top(tid), tree.read(top(tid)).wrapping_add(tree.read(top(tid - d)))) };
            }
            d *= 2;
        }"""


def bit_in_global_memory(body):
    """`bit`'s starting body: bit_build's levels in global memory (see BIT_GLOBAL)."""
    start = body.index(BIT_SHARED_FROM)
    end = body.index(BIT_SHARED_TO, start) + len(BIT_SHARED_TO)
    return body[:start] + BIT_GLOBAL + body[end:]

# Exercise 23 starts from `atomic_accumulate` itself, with no block reduction: every thread adds
# its own sum into the result with an atomic. The text of the kernel's block sum and atomic, and
# what replaces it.
BLOCK_ATOMIC = """        // SAFETY: every thread gets here; the block is a multiple of 32, at most 1024.
        let total = unsafe { block_sum(sum, slots, warp_sum_shfl) };
        if thread_idx_x() == 0 {
            // SAFETY: g_acc holds two elements, and the precondition made this one 0.
            unsafe { red_add_i32(g_acc.offset((epoch % 2) as usize), total) };
        }
"""
THREAD_ATOMIC = """        // SAFETY: g_acc holds two elements, and the precondition made this one 0.
        unsafe { red_add_i32(g_acc.offset((epoch % 2) as usize), sum) };
"""

# Exercise 22 starts from `vector_loads` with `single_pass`'s arguments: its partials go to
# `g_partials`, and `g_ticket` and `g_out` wait for the lesson.
SINGLE_PASS_ARGS = (
    "pub unsafe fn single_pass(g_idata: Global<i32>, g_odata: GlobalMut<i32>, n: u32) {",
    "pub unsafe fn single_pass(\n        g_idata: Global<i32>,\n        g_partials: GlobalMut<i32>,\n"
    "        g_ticket: GlobalMut<u32>,\n        g_out: GlobalMut<i32>,\n        n: u32,\n    ) {",
)

# Exercise 20's host switch: the grid the check launches (`learn/course/src/check.rs`).
RESIDENT_GRID = """/// The grid the host launches: `false`, one block per `ITEMS_PER_THREAD × blockDim` elements (the
/// grid sized to the data, which this kernel needs); `true`, as many blocks as the GPU holds at
/// once, whatever n (`Grid::Resident`, the grid sized to the machine: the project's kernel is
/// registered so). Read by `./x learn`, not by the kernel.
pub const RESIDENT_GRID: bool = false;"""

# What the starting file is, where it is not simply the previous lesson's kernel.
FROM_NOTE = {13: " with its tree levels in global memory", 22: " with `single_pass`'s arguments",
             23: " with an atomic per thread and no block sum"}

ITEMS_DOC = "/// Elements each thread adds before the tree: the grid is ceil(n / (block × ITEMS_PER_THREAD))."


def start_text(number, lesson, source, anchor, marker, items):
    prev = source.split("/")[1]
    text = (ROOT / "kernels" / "src" / f"{source}.rs").read_text()
    lines = []
    for line in text.split("\n"):
        s = line.strip()
        if s.startswith("///") or s.startswith("//!") or s.startswith("#[doc"):
            continue
        if s.startswith("// The lesson's code, which the lesson before does not have"):
            continue
        lines.append(line)
    body = "\n".join(lines)
    body = body.replace("crate::", "kernels::")
    # The doc comments are left out, so a comment's pointer into them would lead nowhere.
    body = body.replace(" (step 4 of the docs)", "")
    body = body.replace("a warp barrier per level (see the docs for\n        // why the book's lock-step `volatile` version races on Volta and later).",
                        "a warp barrier per level (the book's lock-step `volatile`\n        // version, without it, races on Volta and later: exercise 17).")
    if "use super::ITEMS_PER_THREAD;\n" in body:
        body = import_in_order(body.replace("use super::ITEMS_PER_THREAD;\n", ""), "use kernels::reduce::ITEMS_PER_THREAD;")
    body = untyped(body)
    body = body.replace(f"pub unsafe fn {prev}(", f"pub unsafe fn {lesson}(")
    if source.startswith("scan/"):
        # The scan's two kernels, `{prev}_block` and `{prev}_reduce`, become the lesson's; its
        # helpers from the project's private modules come with the file (see scan_helpers).
        body = body.replace(f"pub unsafe fn {prev}_", f"pub unsafe fn {lesson}_")
        body = body.replace(
            "use super::blelloch::{BLELLOCH_BLOCK, BLELLOCH_LEAVES, BLELLOCH_TILE, load_leaf, store_leaf};",
            "use helpers::{load_leaf, store_leaf};\nuse kernels::scan::{BLELLOCH_BLOCK, BLELLOCH_LEAVES, BLELLOCH_TILE};",
        )
        body = body.replace("use super::index::", "use kernels::scan::index::")
        body = body.replace(
            "use super::lookback::{load_chunk_guarded, store_chunk_guarded};",
            "use helpers::{load_chunk_guarded, store_chunk_guarded};",
        )
    if lesson == "bit":
        body = bit_in_global_memory(body)
    if number == 22:
        assert body.count(SINGLE_PASS_ARGS[0]) == 1, "exercise 22: vector_loads' signature"
        body = body.replace(SINGLE_PASS_ARGS[0], SINGLE_PASS_ARGS[1])
        body = body.replace("g_odata.write(", "g_partials.write(").replace("g_odata holds", "g_partials holds")
    if number == 23:
        assert body.count(BLOCK_ATOMIC) == 1, "exercise 23: atomic_accumulate's block sum and atomic"
        body = body.replace(BLOCK_ATOMIC, THREAD_ATOMIC)
    if lesson == "complete_unroll":
        body = body.replace(
            "kernel! {\n    pub unsafe fn complete_unroll(",
            "#[inline(always)]\npub unsafe fn complete_unroll<const BLOCK: u32>(",
        )
        body = _dedent_kernel_block(body)
    out, placed = [], False
    for line in body.split("\n"):
        if not placed and anchor in line:
            indent = line[: len(line) - len(line.lstrip())]
            out.append(f"{indent}// EXERCISE {number}: {marker}.")
            placed = True
        out.append(line)
    assert placed, f"exercise {number}: anchor {anchor!r} not in {source}.rs"
    header = [
        f"//! Exercise {number}: `{lesson}`, from `{prev}`{FROM_NOTE.get(number, '')}. `./x learn {number}` says what to change and why,",
        f"//! and checks this file; `./x learn {number} --solution` shows the project's kernel beside it.",
        "//! The place to change is marked `EXERCISE`.",
        "",
    ]
    body = "\n".join(out)
    if lesson == "complete_unroll":
        body = body.replace("use kernels::kernel;\n", "")
    # The registry's shared-memory constants stay with the project's kernels.
    body = re.sub(r"\npub const \w+_SHARED_BYTES: u32 = [^;]*;\n", "\n", body)
    if "SHARED_TREE_SMEM_BYTES" not in body.split("use kernels::collective::block::", 1)[-1].split("\n", 1)[-1]:
        body = body.replace("{SHARED_TREE_SLOTS, SHARED_TREE_SMEM_BYTES}", "SHARED_TREE_SLOTS")
    if source.startswith("sumsq/"):
        body = body.replace("use super::{square, start_block_clock, stop_block_clock};", "use helpers::{square, start_block_clock, stop_block_clock};") + sumsq_helpers()
    if source.startswith("scan/"):
        body += scan_helpers()
    # What the typed instantiations, the shared-memory constants or the lesson's edit leave unused.
    body = prune_imports(body, keep={"warp_sum_shfl"} if number == 23 else set())
    body = re.sub(r"\n{3,}", "\n\n", body).strip("\n") + "\n"
    if items is not None:
        body = after_uses(body, [ITEMS_DOC, f"pub const ITEMS_PER_THREAD: u32 = {items};"])
    if number == 20:
        body = after_uses(body, RESIDENT_GRID.split("\n"))
    return "\n".join(header) + body


def after_uses(body, lines):
    """`body` with `lines` after its last `use`, a blank line before them."""
    parts = body.split("\n")
    uses_end = max(i for i, l in enumerate(parts) if l.startswith("use "))
    parts[uses_end + 1 : uses_end + 1] = [""] + lines
    return "\n".join(parts)


def import_in_order(body, line):
    """`body` with the `use` line `line` among its own, before the first that sorts after it."""
    parts = body.split("\n")
    at = next((i for i, l in enumerate(parts) if l.startswith("use ") and l > line), None)
    if at is None:
        at = max(i for i, l in enumerate(parts) if l.startswith("use ")) + 1
    parts.insert(at, line)
    return "\n".join(parts)


def untyped(body):
    """`body` without its typed instantiations (`typed_kernel!` and the generic function and
    helpers after it, from the `…_shared_bytes::<T>` function on): an exercise is the `i32` sum."""
    lines = body.split("\n")
    for i, line in enumerate(lines):
        if re.match(r"^pub const fn \w+_shared_bytes<T>", line) or line.startswith("typed_kernel!("):
            return "\n".join(lines[:i]).rstrip("\n") + "\n"
    return body


def prune_imports(body, keep):
    """`body` with the names its `use` lines bring in but nothing else in it names taken out
    (what dropping the typed instantiations leaves unused), except those in `keep` (what the
    lesson's change will use)."""
    lines = body.split("\n")
    rest = "\n".join(l for l in lines if not l.startswith("use "))
    used = lambda name: name in keep or re.search(rf"\b{re.escape(name)}\b", rest) is not None
    out = []
    for line in lines:
        m = re.match(r"^use (.*)::\{(.*)\};$", line)
        if m:
            names = [n.strip() for n in m.group(2).split(",") if used(n.strip().split(" as ")[-1])]
            if len(names) > 1:
                out.append(f"use {m.group(1)}::{{{', '.join(names)}}};")
            elif names:
                out.append(f"use {m.group(1)}::{names[0]};")
            continue
        m = re.match(r"^use (.*)::(\w+);$", line)
        if m and not used(m.group(2)):
            continue
        out.append(line)
    return "\n".join(out)


HELPERS = "// Helpers of kernels/src/sumsq/mod.rs, copied so that this file compiles on its own:"


def sumsq_helpers():
    """The sum of squares' private helpers (square, the block clock), for its exercise file."""
    text = (ROOT / "kernels/src/sumsq/mod.rs").read_text()
    start = text.index("/// `x²`")
    uses = [l.replace("crate::", "kernels::") for l in text.split("\n") if l.startswith("use crate::")]
    code = "\n".join(l for l in text[start:].split("\n") if not l.strip().startswith("///"))
    code = code.replace("crate::", "kernels::").replace("\nfn ", "\npub(super) fn ").replace("\nunsafe fn ", "\npub(super) unsafe fn ")
    inner = "\n".join(uses) + "\n\n" + code.strip("\n")
    inner = "\n".join(("    " + l) if l else l for l in inner.split("\n"))
    return "\n" + HELPERS + "\nmod helpers {\n" + inner + "\n}\n"


def function_text(path, name):
    """The text of `fn name` in kernels/src/PATH, doc comments left out, `pub(super)` dropped."""
    lines = (ROOT / "kernels/src" / path).read_text().split("\n")
    start = next(i for i, l in enumerate(lines) if re.match(rf"^(pub\(super\) )?(unsafe )?fn {name}\b", l))
    while start > 0 and lines[start - 1].startswith("#["):
        start -= 1
    depth, end = 0, None
    for i in range(start, len(lines)):
        depth += lines[i].count("{") - lines[i].count("}")
        if depth == 0 and "{" in "".join(lines[start : i + 1]):
            end = i
            break
    text = "\n".join(l for l in lines[start : end + 1] if not l.strip().startswith("///"))
    return text.replace("pub(super) ", "pub(super) ").replace("crate::", "kernels::")


def scan_helpers():
    """Blelloch's leaf loads and stores, private to the project's scan modules, for its exercise."""
    fns = [function_text("scan/blelloch.rs", "load_leaf"), function_text("scan/blelloch.rs", "store_leaf"),
           function_text("scan/lookback.rs", "load_chunk_guarded"),
           function_text("scan/lookback.rs", "store_chunk_guarded")]
    uses = ["use kernels::device::global::{Global, GlobalMut};", "use kernels::scan::BLELLOCH_LEAF;"]
    inner = "\n".join(uses) + "\n\n" + "\n\n".join(fns)
    inner = "\n".join(("    " + l) if l else l for l in inner.split("\n"))
    return ("\n" + HELPERS.replace("sumsq/mod.rs", "scan/ (blelloch.rs, lookback.rs)") + "\nmod helpers {\n"
            + inner + "\n}\n")


def _dedent_kernel_block(body):
    """complete_unroll's starting body: a plain generic function, not inside `kernel! { … }`."""
    lines = body.split("\n")
    start = next(i for i, l in enumerate(lines) if l.startswith("pub unsafe fn complete_unroll<"))
    depth, end = 0, None
    for i in range(start, len(lines)):
        depth += lines[i].count("{") - lines[i].count("}")
        if depth == 0 and i > start:
            end = i
            break
    fn = [l[4:] if l.startswith("    ") else l for l in lines[start + 1 : end + 1]]
    # drop the closing brace of `kernel! {`
    rest = lines[end + 1 :]
    if rest and rest[0].strip() == "}":
        rest = rest[1:]
    return "\n".join(lines[: start + 1] + fn + rest)


# The bug hunts: the project's kernel of a lesson with one bug planted, and its kernel renamed
# for the bug (the learner's PTX holds every exercise's kernels, so names must differ).
# (number, lesson, bug: the kernel's name is `{lesson}_{bug}`, the planted text: (what, with what)
#  replaced exactly once, items-per-thread constant or None). The marker says where to look only
# as far as the kernel; the emulator's report is the lesson.
HUNTS = [
    (15, "interleaved", "nobarrier",
     ("            sync_threads();\n            stride >>= 1;\n        }\n        return;\n",
      "            stride >>= 1;\n        }\n        return;\n"), None),
    (16, "unroll2", "offbyone",
     ("    if fold_index(tid, block, 1) < len {", "    if fold_index(tid, block, 1) <= len {"), None),
    (17, "unroll_warps8", "volatile",
     ("        add_pair(idata, tid, 32, len);\n        sync_warp(FULL_MASK);\n        add_pair(idata, tid, 16, len);\n"
      "        sync_warp(FULL_MASK);\n        add_pair(idata, tid, 8, len);\n        sync_warp(FULL_MASK);\n",
      "        add_pair(idata, tid, 32, len);\n        add_pair(idata, tid, 16, len);\n        add_pair(idata, tid, 8, len);\n"),
     None),
    (18, "smem", "uninit",
     ("        let x = if idx < n as usize { unsafe { g_idata.read(idx) } } else { 0 };\n"
      "        // SAFETY: tid < blockDim <= 1024; each thread writes its own slot.\n"
      "        unsafe { smem.write(tid as usize, x) };\n",
      "        if idx < n as usize {\n"
      "            // SAFETY: tid < blockDim <= 1024; each thread writes its own slot.\n"
      "            unsafe { smem.write(tid as usize, g_idata.read(idx)) };\n"
      "        }\n"), None),
    (25, "single_pass", "nofence",
     ("            thread_fence(); // release: the partial before the ticket\n", ""), None),
]


# Exercise 24's starting file is written out here, not made from a kernel file: `lookback` is
# generic over the element type and the operator, with cache hints, tuning shapes and `cp.async`
# loads, and its file is 1,200 lines. The exercise is its `i32` sum written plainly, with the
# tile status protocol (publish the aggregate, look back, publish the prefix) replaced by a warp
# that re-reads the input before its tile.
LOOKBACK_START = r'''//! Exercise 24: `lookback`, from `lookback` with each tile re-reading the input before it. `./x learn 24` says what to change and why,
//! and checks this file; `./x learn 24 --solution` shows the project's kernel beside it.
//! The place to change is marked `EXERCISE`.
//!
//! This file is `lookback` for `i32` sums, written out plainly: one block of 256 threads per
//! tile of 9216 elements, the tile in shared memory, loaded and stored in 16-byte chunks with
//! plain loads and stores. (The project's kernel is generic over the element type and the
//! operator, and copies the tile with `cp.async`: read it with `T = i32` and `O::combine` = `+`.)
use kernels::device::global::{Global, GlobalMut};
use kernels::device::thread::{block_dim_x, block_idx_x, sync_threads, thread_idx_x};
use kernels::device::warp::{shfl_up_sync, shfl_xor_sync};
use kernels::device::{FULL_MASK, WARP_SIZE, trap};
use kernels::scan::index::{blocked_chunk, striped_chunk};
use kernels::scan::{LOOKBACK_ITEMS, LOOKBACK_THREADS, LOOKBACK_TILE};
use kernels::{kernel, static_shared};

/// Threads per block (the host launches exactly this many).
const THREADS: usize = LOOKBACK_THREADS as usize;
/// Elements per thread: 9 chunks of 4.
const ITEMS: usize = LOOKBACK_ITEMS as usize;
/// 16-byte chunks per thread.
const ROWS: usize = ITEMS / 4;
/// Elements per tile: the host launches one block per tile.
const TILE: usize = LOOKBACK_TILE as usize;
/// Warps per block.
const WARPS: usize = THREADS / WARP_SIZE as usize;
/// The shared slot, after the tile and the warps' totals, that carries the tile's prefix.
const PREFIX_SLOT: usize = TILE + WARPS;

/// The sum of `x` over lanes `0..=lane` of a full warp (Hillis–Steele, 5 shuffles).
#[inline(always)]
fn warp_inclusive_scan(mut x: i32, lane: u32) -> i32 {
    let mut d = 1;
    while d < WARP_SIZE {
        let y = shfl_up_sync(FULL_MASK, x, d);
        if lane >= d {
            x = x.wrapping_add(y);
        }
        d *= 2;
    }
    x
}

/// The sum of `x` over a full warp, in every lane (butterfly, 5 shuffles).
#[inline(always)]
fn warp_sum(mut x: i32) -> i32 {
    let mut m = 16;
    while m > 0 {
        x = x.wrapping_add(shfl_xor_sync(FULL_MASK, x, m));
        m /= 2;
    }
    x
}

/// The sum of every element before tile `tile`, in every lane of the warp that calls it: the
/// warp reads them all again.
///
/// # Safety
/// `input` holds at least `tile * TILE` elements; called by all 32 lanes of one warp.
#[inline(always)]
unsafe fn sum_before(input: Global<i32>, tile: usize, lane: u32) -> i32 {
    let mut sum = 0i32;
    let mut i = lane as usize;
    while i < tile * TILE {
        // SAFETY: i < tile * TILE, which the input holds.
        sum = sum.wrapping_add(unsafe { input.read(i) });
        i += WARP_SIZE as usize;
    }
    warp_sum(sum)
}

kernel! {
    pub unsafe fn lookback(
        input: Global<i32>,
        output: GlobalMut<i32>,
        status: GlobalMut<u64>,
        n: u32,
        epoch: u32,
        exclusive: u32,
    ) {
        let smem = static_shared!(LOOKBACK_TILE_WORDS: [i32; TILE + WARPS + 4]);
        if block_dim_x() as usize != THREADS {
            trap("lookback launched with a block size other than LOOKBACK_THREADS");
        }
        let (tid, n) = (thread_idx_x() as usize, n as usize);
        let (lane, warp) = (thread_idx_x() % WARP_SIZE, tid / WARP_SIZE as usize);
        let tile = block_idx_x() as usize;
        let base = tile * TILE;
        let full = base + TILE <= n;

        // 1. Load the tile, striped: chunk r of thread tid is elements (r * THREADS + tid) * 4 ..
        //    + 4 (a warp reads 512 consecutive bytes); in the last, partial tile one element at a
        //    time, 0 past n.
        for r in 0..ROWS {
            let c = striped_chunk(tid, r, THREADS);
            let x = if full {
                // SAFETY: base + c + 4 <= n; 16-byte aligned (an aligned input, c a multiple of 4).
                unsafe { input.load_v4(base + c) }
            } else {
                // SAFETY: each element read is below n.
                let at = |k: usize| if base + c + k < n { unsafe { input.read(base + c + k) } } else { 0 };
                [at(0), at(1), at(2), at(3)]
            };
            // SAFETY: c + 4 <= TILE; this thread's chunk.
            unsafe { smem.write_v4(c, x) };
        }
        sync_threads();

        // 2. Reduce, blocked: thread tid sums its ITEMS consecutive elements (from tid * ITEMS);
        //    an inclusive scan of the threads' sums in each warp; lane 31 leaves the warp's
        //    total after the tile.
        let mut own = 0i32;
        for r in 0..ROWS {
            // SAFETY: in the tile, written before the barrier.
            let x = unsafe { smem.read_v4(blocked_chunk(tid, r, ITEMS)) };
            own = own.wrapping_add(x[0]).wrapping_add(x[1]).wrapping_add(x[2]).wrapping_add(x[3]);
        }
        let incl = warp_inclusive_scan(own, lane);
        if lane == WARP_SIZE - 1 {
            // SAFETY: TILE + warp < PREFIX_SLOT; this warp's slot.
            unsafe { smem.write(TILE + warp, incl) };
        }
        sync_threads();

        // 3. The tile's aggregate (the sum of its elements), and the sum of the warps before
        //    this thread's.
        let (mut aggregate, mut warp_offset) = (0i32, 0i32);
        for w in 0..WARPS {
            // SAFETY: written before the barrier.
            let x = unsafe { smem.read(TILE + w) };
            if w < warp {
                warp_offset = warp_offset.wrapping_add(x);
            }
            aggregate = aggregate.wrapping_add(x);
        }

        // 4. Scan in place: each thread rewrites its elements with their sums within the tile.
        let mut run = warp_offset.wrapping_add(incl.wrapping_sub(own));
        for r in 0..ROWS {
            let at = blocked_chunk(tid, r, ITEMS);
            // SAFETY: this thread's own chunk.
            let x = unsafe { smem.read_v4(at) };
            let mut out = [0i32; 4];
            for k in 0..4 {
                let before = run;
                run = run.wrapping_add(x[k]);
                out[k] = if exclusive != 0 { before } else { run };
            }
            // SAFETY: as above; other threads read it only after the next barrier.
            unsafe { smem.write_v4(at, out) };
        }

        // 5. The tile's prefix: the sum of every element before the tile, from warp 0 to every
        //    thread through the shared slot.
        // EXERCISE 24: publish this tile's aggregate in `status` as soon as step 3 has it, and look back at what the tiles before it published instead of re-reading their input; then publish the tile's inclusive prefix.
        if warp == 0 {
            // SAFETY: the input holds the tiles before this one; the whole warp calls it.
            let prefix = if tile == 0 { 0 } else { unsafe { sum_before(input, tile, lane) } };
            if lane == 0 {
                // SAFETY: read only after the barrier below.
                unsafe { smem.write(PREFIX_SLOT, prefix) };
            }
        }
        sync_threads();
        // SAFETY: written before the barrier.
        let prefix = unsafe { smem.read(PREFIX_SLOT) };

        // 6. Store, striped: each element plus the prefix.
        for r in 0..ROWS {
            let c = striped_chunk(tid, r, THREADS);
            // SAFETY: written before the barrier.
            let v = unsafe { smem.read_v4(c) };
            let out = [v[0].wrapping_add(prefix), v[1].wrapping_add(prefix), v[2].wrapping_add(prefix), v[3].wrapping_add(prefix)];
            if full {
                // SAFETY: base + c + 4 <= n; 16-byte aligned; this thread's chunk.
                unsafe { output.store_v4(base + c, out) };
            } else {
                for (k, &x) in out.iter().enumerate() {
                    if base + c + k < n {
                        // SAFETY: below n; this thread's element.
                        unsafe { output.write(base + c + k, x) };
                    }
                }
            }
        }
    }
}
'''


def hunt_text(number, lesson, bug, planted, items):
    """A bug hunt's starting file: the project's `lesson` kernel as `{lesson}_{bug}`, with the
    bug planted (the replacement must match exactly once)."""
    name = f"{lesson}_{bug}"
    text = start_text(number, name, f"reduce/{lesson}", "kernel! {",
                      "a bug hunt. This kernel looks right and is wrong: `./x learn "
                      f"{number}` runs it under the emulator's checks; read the report, find the line, fix it", items)
    what, with_what = planted
    assert text.count(what) == 1, f"hunt {number}: the text to plant the bug in is not in {lesson}.rs once"
    text = text.replace(what, with_what)
    header_end = text.index("//! The place to change is marked `EXERCISE`.")
    header = (f"//! Exercise {number}: a bug hunt in `{name}`, the project's `{lesson}` with one bug planted. `./x learn {number}`\n"
              f"//! checks this file under the emulator's checks; `./x learn {number} --solution` shows the project's kernel beside it.\n")
    return header + text[header_end:]


def main():
    out = ROOT / "learn" / "start"
    out.mkdir(parents=True, exist_ok=True)
    for ex in EXERCISES:
        path = out / f"{ex[0]:02}_{ex[1]}.rs"
        path.write_text(start_text(*ex))
        print(f"wrote {path.relative_to(ROOT)}")
    path = out / "24_lookback.rs"
    path.write_text(LOOKBACK_START)
    print(f"wrote {path.relative_to(ROOT)}")
    for number, lesson, bug, planted, items in HUNTS:
        path = out / f"{number:02}_{lesson}_{bug}.rs"
        path.write_text(hunt_text(number, lesson, bug, planted, items))
        print(f"wrote {path.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
