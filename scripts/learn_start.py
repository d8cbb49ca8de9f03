#!/usr/bin/env python3
"""Writes the starting file of every `./x learn` exercise, learn/start/NN_<lesson>.rs, from the
kernel of the lesson before it in kernels/src: the previous lesson's code, renamed to the
lesson's kernel, with the change the lesson teaches left to make and the place marked
`// EXERCISE N: …`. Doc comments and the lesson markers are dropped (the exercise's text is
what `./x learn N` prints); paths `crate::` become `kernels::`.

    scripts/learn_start.py          rewrite every starting file, the bug hunts' too (the
                                    learner's copies in learn/exercises/ are never touched)

The exercises themselves (title, text, goal) are in learn/src/exercises.rs; EXERCISES below
lists, for each, the file it starts from, where its marker goes and what it says.
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
     "pad the tree: node i at padded(i), in an array of padded_len(BLELLOCH_LEAVES) words, here and in "
     "blelloch_reduce and the sweeps", None),
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

# What the starting file is, where it is not simply the previous lesson's kernel.
FROM_NOTE = {13: " with its tree levels in global memory"}

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
    body = re.sub(r"\n{3,}", "\n\n", body).strip("\n") + "\n"
    if items is not None:
        uses_end = max(i for i, l in enumerate(body.split("\n")) if l.startswith("use "))
        parts = body.split("\n")
        parts[uses_end + 1 : uses_end + 1] = ["", ITEMS_DOC, f"pub const ITEMS_PER_THREAD: u32 = {items};"]
        body = "\n".join(parts)
    return "\n".join(header) + body


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
]


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
    for number, lesson, bug, planted, items in HUNTS:
        path = out / f"{number:02}_{lesson}_{bug}.rs"
        path.write_text(hunt_text(number, lesson, bug, planted, items))
        print(f"wrote {path.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
