//! The learner's file beside the project's kernel: a line diff (longest common subsequence)
//! of the two, with the doc comments and the exercise's markers left out.

/// `text` without doc comments, lesson and exercise markers and repeated blank lines, with
/// the kernels crate named as an exercise names it.
pub fn normalise(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for line in text.lines() {
        // An exercise file's copy of private helpers of the kernels crate ends the kernel.
        if line.starts_with("// Helpers of kernels/src/") {
            break;
        }
        let t = line.trim_start();
        let skip = t.starts_with("///")
            || t.starts_with("//!")
            || t.starts_with("#[doc")
            || t.starts_with("// EXERCISE")
            || t.starts_with("// The lesson's code, which the lesson before does not have");
        if skip {
            continue;
        }
        let line = line.replace("crate::", "kernels::").trim_end().to_string();
        if line.is_empty() && out.last().is_none_or(|l| l.is_empty()) {
            continue;
        }
        out.push(line);
    }
    out
}

/// The lines of `a` and `b` as a unified diff body: hunks of changes with `context` lines
/// around them (`-` only in `a`, `+` only in `b`).
pub fn unified(a: &[String], b: &[String], context: usize) -> String {
    let ops = script(a, b);
    let changed: Vec<bool> = ops.iter().map(|op| !matches!(op, Op::Same(_))).collect();
    let mut out = String::new();
    let mut last_shown = None;
    for (i, op) in ops.iter().enumerate() {
        let near = (i.saturating_sub(context)..=(i + context).min(ops.len() - 1)).any(|j| changed[j]);
        if !near {
            continue;
        }
        if last_shown.is_some_and(|l: usize| l + 1 < i) || (last_shown.is_none() && i > 0) {
            out.push_str("@@\n");
        }
        last_shown = Some(i);
        match op {
            Op::Same(l) => out.push_str(&format!(" {l}\n")),
            Op::Del(l) => out.push_str(&format!("-{l}\n")),
            Op::Add(l) => out.push_str(&format!("+{l}\n")),
        }
    }
    if out.is_empty() {
        out.push_str("(no difference: your kernel is the project's)\n");
    }
    out
}

enum Op<'a> {
    Same(&'a str),
    Del(&'a str),
    Add(&'a str),
}

/// The edit script from `a` to `b`.
fn script<'a>(a: &'a [String], b: &'a [String]) -> Vec<Op<'a>> {
    let (n, m) = (a.len(), b.len());
    // lcs[i][j]: the longest common subsequence of a[i..] and b[j..].
    let mut lcs = vec![vec![0u32; m + 1]; n + 1];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            lcs[i][j] = if a[i] == b[j] { lcs[i + 1][j + 1] + 1 } else { lcs[i + 1][j].max(lcs[i][j + 1]) };
        }
    }
    let (mut i, mut j, mut ops) = (0, 0, Vec::new());
    while i < n || j < m {
        if i < n && j < m && a[i] == b[j] {
            ops.push(Op::Same(&a[i]));
            (i, j) = (i + 1, j + 1);
        } else if i < n && (j == m || lcs[i + 1][j] >= lcs[i][j + 1]) {
            ops.push(Op::Del(&a[i]));
            i += 1;
        } else {
            ops.push(Op::Add(&b[j]));
            j += 1;
        }
    }
    ops
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_changed_line_shows_as_minus_and_plus_with_context() {
        let a: Vec<String> = ["a", "b", "c", "d"].map(String::from).to_vec();
        let b: Vec<String> = ["a", "B", "c", "d"].map(String::from).to_vec();
        assert_eq!(unified(&a, &b, 1), " a\n-b\n+B\n c\n");
        assert_eq!(unified(&a, &a, 1), "(no difference: your kernel is the project's)\n");
    }

    #[test]
    fn normalising_drops_docs_and_markers() {
        let text = "/// doc\nuse crate::x;\n\n\n// EXERCISE 1: do it\nfn f() {}\n";
        assert_eq!(normalise(text), ["use kernels::x;", "", "fn f() {}"]);
    }
}
