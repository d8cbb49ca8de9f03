//! A card's code: the Rust kernel beside its CUDA C twin (`cub/classic.cu`), line against
//! line, with the lines that have no counterpart on the other side marked.
//!
//! Lines are paired by a longest common subsequence over "matching" lines: two lines match
//! when, once the CUDA built-ins are spelled as the device layer spells them
//! (`threadIdx.x` → `thread_idx_x`, `__syncthreads` → `sync_threads`, …) and types, `let`,
//! `mut`, `unsafe` and punctuation are dropped, at least half of their words are shared. A
//! marked line is one the other language has no line for: a fix, a guard, a `// SAFETY:`
//! contract, or a different way to write the same step.

use std::collections::BTreeSet;
use std::fmt::Write as _;

use super::html::escape;

/// `cub/classic.cu`, where the CUDA C twins are.
pub const CLASSIC_CU: &str = include_str!("../../../cub/classic.cu");

/// The text of `pub unsafe fn name` (its signature and body) in the Rust source `src`.
pub fn rust_fn(src: &str, name: &str) -> Option<String> {
    let lines: Vec<&str> = src.lines().collect();
    let at = lines.iter().position(|l| {
        l.trim_start()
            .strip_prefix("pub unsafe fn ")
            .and_then(|r| r.strip_prefix(name))
            .is_some_and(|r| r.starts_with('(') || r.starts_with('<'))
    })?;
    braced(&lines[at..])
}

/// [`rust_fn`], with each function of the same file that the kernel calls (its rounds, its
/// last warp: the lesson's code that the kernel keeps in helpers) inserted after the first
/// line that calls it, so that the steps read in the order they run, as in the C twin.
pub fn rust_fn_with_helpers(src: &str, name: &str) -> Option<String> {
    let kernel = rust_fn(src, name)?;
    let lines: Vec<&str> = src.lines().collect();
    let mut helpers: Vec<(String, String)> = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        let t = l.trim_start();
        if t.starts_with("pub unsafe fn ") || t.starts_with("//") || t.contains('|') {
            continue;
        }
        let Some(after) = t.split_once("fn ").map(|(_, a)| a) else { continue };
        let helper: String = after.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
        if helper.is_empty() || helper == name {
            continue;
        }
        if let Some(body) = braced(&lines[i..]) {
            helpers.push((helper, body));
        }
    }
    let mut out: Vec<String> = Vec::new();
    for line in kernel.lines() {
        out.push(line.to_string());
        let code = line.split("//").next().unwrap_or("");
        for (_, body) in helpers.iter_mut().filter(|(h, b)| !b.is_empty() && calls(code, h)) {
            let indent = &line[..line.len() - line.trim_start().len()];
            out.extend(std::mem::take(body).lines().map(|l| format!("{indent}{l}")));
        }
    }
    Some(out.join("\n"))
}

/// Does this line of code call `f`?
fn calls(code: &str, f: &str) -> bool {
    code.match_indices(f).any(|(at, _)| {
        let before = code[..at].chars().next_back().is_none_or(|c| !(c.is_alphanumeric() || c == '_'));
        let rest = &code[at + f.len()..];
        before && (rest.starts_with('(') || rest.starts_with("::<"))
    })
}

/// The text of the CUDA C function `name` (`__global__ void name(` …) in `src`, with the
/// `template` line above it where there is one.
pub fn c_fn(src: &str, name: &str) -> Option<String> {
    let lines: Vec<&str> = src.lines().collect();
    let at = lines.iter().position(|l| l.contains("__global__") && l.contains(&format!(" {name}(")))?;
    let from = if at > 0 && lines[at - 1].trim_start().starts_with("template") { at - 1 } else { at };
    braced(&lines[from..])
}

/// The lines from the first up to the one that closes the first `{`, dedented.
fn braced(lines: &[&str]) -> Option<String> {
    let mut depth = 0i32;
    let mut opened = false;
    for (i, l) in lines.iter().enumerate() {
        let code = l.split("//").next().unwrap_or("");
        for c in code.chars() {
            match c {
                '{' => {
                    depth += 1;
                    opened = true;
                }
                '}' => depth -= 1,
                _ => {}
            }
        }
        if opened && depth == 0 {
            let indent = lines[0].len() - lines[0].trim_start().len();
            let text: Vec<&str> = lines[..=i].iter().map(|l| l.get(indent..).unwrap_or(l.trim_start())).collect();
            return Some(text.join("\n"));
        }
    }
    None
}

/// Words that carry no step of the algorithm: types, bindings, qualifiers.
const NOISE: &[&str] = &[
    "let",
    "mut",
    "unsafe",
    "as",
    "usize",
    "u32",
    "i32",
    "u64",
    "int",
    "unsigned",
    "long",
    "const",
    "volatile",
    "pub",
    "fn",
    "void",
    "__global__",
    "__shared__",
    "bool",
    "auto",
    "static_shared",
    "some",
    "else",
];

/// The words of a line, CUDA built-ins spelled the device layer's way.
fn words(line: &str) -> BTreeSet<String> {
    let code = line.split("//").next().unwrap_or("");
    let spelled = code
        .replace("threadIdx.x", "thread_idx_x")
        .replace("blockIdx.x", "block_idx_x")
        .replace("blockDim.x", "block_dim_x")
        .replace("gridDim.x", "grid_dim_x")
        .replace("__syncthreads", "sync_threads")
        .replace("__syncwarp", "sync_warp")
        .replace("__shfl_down_sync", "shfl_down");
    spelled
        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty() && !NOISE.contains(w))
        .map(str::to_string)
        .collect()
}

fn is_comment_or_blank(line: &str) -> bool {
    let t = line.trim();
    t.is_empty() || t.starts_with("//") || t == "}" || t == "{"
}

/// Two lines match: at least half of the words of the two are shared.
fn matches(a: &BTreeSet<String>, b: &BTreeSet<String>) -> bool {
    let shared = a.intersection(b).count();
    let all = a.union(b).count();
    all > 0 && 2 * shared >= all
}

/// The lines of `rust` and `c` paired: `(Some(i), Some(j))` a matched pair, one side `None`
/// for a line the other language has no counterpart for. Comments, blank lines and lone
/// braces are never matched (they sit on their own rows, unmarked).
pub fn align(rust: &[&str], c: &[&str]) -> Vec<(Option<usize>, Option<usize>)> {
    let (rw, cw): (Vec<_>, Vec<_>) = (rust.iter().map(|l| words(l)).collect(), c.iter().map(|l| words(l)).collect());
    let ok =
        |i: usize, j: usize| !is_comment_or_blank(rust[i]) && !is_comment_or_blank(c[j]) && matches(&rw[i], &cw[j]);
    // lcs[i][j]: the longest chain of matches in rust[i..] and c[j..].
    let mut lcs = vec![vec![0u32; c.len() + 1]; rust.len() + 1];
    for i in (0..rust.len()).rev() {
        for j in (0..c.len()).rev() {
            lcs[i][j] = if ok(i, j) { lcs[i + 1][j + 1] + 1 } else { lcs[i + 1][j].max(lcs[i][j + 1]) };
        }
    }
    let (mut i, mut j, mut out) = (0, 0, Vec::new());
    while i < rust.len() || j < c.len() {
        if i < rust.len() && j < c.len() && ok(i, j) && lcs[i][j] == lcs[i + 1][j + 1] + 1 {
            out.push((Some(i), Some(j)));
            (i, j) = (i + 1, j + 1);
        } else if j == c.len() || (i < rust.len() && lcs[i + 1][j] >= lcs[i][j + 1]) {
            out.push((Some(i), None));
            i += 1;
        } else {
            out.push((None, Some(j)));
            j += 1;
        }
    }
    out
}

/// The side-by-side table: Rust left, C right; a line without a counterpart is marked
/// (`class="only"`), comments and braces are not.
pub fn side_by_side(rust: &str, c: &str, c_title: &str) -> String {
    let (r, cl): (Vec<&str>, Vec<&str>) = (rust.lines().collect(), c.lines().collect());
    let rows = align(&r, &cl);
    let marked = rows
        .iter()
        .filter(|(a, b)| match (a, b) {
            (Some(i), None) => !is_comment_or_blank(r[*i]),
            (None, Some(j)) => !is_comment_or_blank(cl[*j]),
            _ => false,
        })
        .count();
    let mut t = format!(
        "<h4>The kernel beside its CUDA C twin ({marked} lines without a counterpart, marked)</h4>\
         <table class=\"code\"><tr><th class=\"l\">Rust</th><th class=\"l\">CUDA C: {}</th></tr>",
        escape(c_title)
    );
    let cell = |line: Option<&str>, alone: bool| match line {
        None => "<td></td>".to_string(),
        Some(l) => {
            let class = if alone && !is_comment_or_blank(l) { " class=\"only\"" } else { "" };
            format!("<td{class}><code>{}</code></td>", escape(l))
        }
    };
    for (a, b) in rows {
        let alone = a.is_none() || b.is_none();
        let _ = write!(t, "<tr>{}{}</tr>", cell(a.map(|i| r[i]), alone), cell(b.map(|j| cl[j]), alone));
    }
    t.push_str("</table>");
    t
}

/// The Rust kernel alone, for a kernel without a twin.
pub fn rust_alone(rust: &str, why: &str) -> String {
    format!("<h4>The kernel</h4><p class=\"note\">{}</p><pre>{}</pre>", escape(why), escape(rust))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn built_ins_and_types_do_not_make_lines_differ() {
        assert!(matches(&words("let tid = thread_idx_x();"), &words("unsigned int tid = threadIdx.x;")));
        assert!(matches(&words("sync_threads();"), &words("__syncthreads();")));
        assert!(!matches(&words("if tid == 0 {"), &words("for (int stride = 1; stride < blockDim.x; stride *= 2) {")));
    }

    #[test]
    fn alignment_pairs_matches_in_order_and_leaves_the_rest_alone() {
        let rust = ["let tid = thread_idx_x();", "// SAFETY: in bounds", "let x = 2 * tid;", "sync_threads();"];
        let c = ["unsigned int tid = threadIdx.x;", "__syncthreads();", "out[0] = 1;"];
        assert_eq!(
            align(&rust, &c),
            [(Some(0), Some(0)), (Some(1), None), (Some(2), None), (Some(3), Some(1)), (None, Some(2))]
        );
    }

    #[test]
    fn every_twin_and_its_kernel_are_found() {
        for (variant, c_name) in crate::twins::TWINS.iter().filter(|(_, c)| !c.contains(' ')) {
            let c_name = c_name.split('<').next().unwrap();
            let c = c_fn(CLASSIC_CU, c_name).unwrap_or_else(|| panic!("{variant}: no {c_name} in classic.cu"));
            assert!(c.ends_with('}') && c.contains("__global__"), "{variant}: {c}");
            let v = crate::registry::find(variant).unwrap();
            let src = super::super::source_text(&super::super::reduce_source(v)).unwrap();
            let r = rust_fn(&src, v.name).unwrap_or_else(|| panic!("{variant}: no pub unsafe fn"));
            assert!(r.starts_with("pub unsafe fn") && r.ends_with('}'), "{variant}: {r}");
        }
        let html = side_by_side(
            &rust_fn_with_helpers(&super::super::source_text("reduce/neighbored.rs").unwrap(), "neighbored").unwrap(),
            &c_fn(CLASSIC_CU, "reduceNeighbored").unwrap(),
            "reduceNeighbored",
        );
        roxmltree::Document::parse(&format!("<div>{html}</div>")).expect("well-formed");
        let pair = "<tr><td><code>    let tid = thread_idx_x();</code></td><td><code>  unsigned int tid = threadIdx.x;</code></td></tr>";
        assert!(html.contains(pair), "{html}");
        assert!(html.contains("class=\"only\"") && !html.contains("class=\"only\"><code>// SAFETY"), "{html}");
        // The rounds the kernel calls come with it, where it calls them, and its barrier
        // meets the C one.
        let barrier = "sync_threads();</code></td><td><code>    __syncthreads();</code></td>";
        assert!(html.contains("unsafe fn rounds") && html.contains(barrier), "{html}");
    }
}
