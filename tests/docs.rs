//! Every registered kernel's doc comment follows `docs/kernel-doc-template.md`: a one-line
//! summary, then the sections `# Concept`, `# Previous problem → fix`, `# Execution`,
//! `# Launch`, `# Preconditions`, `# Safety`, `# Measured`, in that order (a kernel may add
//! sections of its own between them).
//!
//! The doc is read from the kernel's source file: `kernels/src/reduce/<name>.rs` (or
//! `sumsq/`) for a reduction variant, `kernels/src/scan/<name>.rs` for a scan variant (every
//! kernel it launches), wherever in `kernels/src/scan/` a tuning shape or experiment of a scan is
//! declared (its own function, an explicit `warpspec_shape!(@entry [ … ] name, …)`, or the
//! template of the macro that declares it: `lookback_shape!`, `lookback_hinted!` with
//! `lookback_ablation!`, `warpspec_ahead!`, …), and `lookback_generic` in `kernels/src/scan/lookback.rs`
//! for the typed scans, the generic bodies `arg_reduce_generic` and `transform_reduce_generic`
//! for the library's operations (`reduce_scan::ops`), and the generic bodies in
//! `kernels/src/check.rs` for the benches' check kernels. Only the headings are checked, not what the sections
//! say.

use std::path::PathBuf;

use libtest_mimic::{Failed, Trial};
use reduce_scan::registry::{self, Family};
use reduce_scan::scan;

/// The sections of the template, in order.
pub const SECTIONS: [&str; 7] =
    ["# Concept", "# Previous problem → fix", "# Execution", "# Launch", "# Preconditions", "# Safety", "# Measured"];

/// A kernel whose doc is checked: the name the failure reports, its file under
/// `kernels/src/`, and the function whose doc it is.
struct KernelDoc {
    variant: &'static str,
    file: String,
    function: &'static str,
}

/// The file (under `kernels/src/scan/`, without `.rs`) of scan variant `name`: its name, less a
/// tuning shape's `_{w}x{i}x{s}` suffix.
fn scan_file(name: &str) -> &str {
    match name.rsplit_once('_') {
        Some((base, shape)) if shape.split('x').count() > 1 && shape.split('x').all(|p| p.parse::<u32>().is_ok()) => {
            base
        }
        _ => name,
    }
}

fn registered() -> Vec<KernelDoc> {
    let mut out = Vec::new();
    for v in registry::all() {
        let dir = if v.family == Family::SumOfSquares { "sumsq" } else { "reduce" };
        out.push(KernelDoc { variant: v.name, file: format!("{dir}/{}.rs", v.name), function: v.name });
    }
    // The typed instantiations `{name}__{type}_{op}` are `typed_kernel!` instances: one doc, on
    // the generic body `{name}_generic` in the variant's file.
    for name in registry::generic_names() {
        let function: &'static str = Box::leak(format!("{name}_generic").into_boxed_str());
        out.push(KernelDoc { variant: name, file: format!("reduce/{name}.rs"), function });
    }
    // The other rows of the generic scans, `{name}__{type}_{op}`: one doc, on the generic body
    // `{file}_generic` of the file the variant's kernel is in (a tuning shape's file is its
    // base scan's: `lookback_warpspec_8x12x6` is in `lookback_warpspec.rs`).
    for name in scan::generic_names() {
        let file = scan_file(name);
        let function: &'static str = Box::leak(format!("{file}_generic").into_boxed_str());
        out.push(KernelDoc { variant: name, file: format!("scan/{file}.rs"), function });
    }
    // The library's operations (`reduce_scan::ops`): one doc on each kernel's generic body,
    // `{kernel}_generic` in `reduce/{kernel}.rs`.
    let mut kernels: Vec<&'static str> = reduce_scan::ops::Operation::ALL.iter().map(|o| o.kernel()).collect();
    kernels.dedup();
    for name in kernels {
        let function: &'static str = Box::leak(format!("{name}_generic").into_boxed_str());
        out.push(KernelDoc { variant: name, file: format!("reduce/{name}.rs"), function });
    }
    // The benches' check kernels (`kernels/src/check.rs`): one doc on each generic body.
    for function in ["count_mismatches_generic", "count_outside_generic"] {
        out.push(KernelDoc { variant: "check", file: "check.rs".into(), function });
    }
    for v in scan::all().filter(|v| !v.tuning) {
        for s in v.symbols() {
            out.push(KernelDoc { variant: v.name, file: format!("scan/{}.rs", v.name), function: s });
        }
    }
    out
}

/// The doc of `kernel`, a tuning shape or experiment of a scan, from whichever file of
/// `kernels/src/scan/` declares it: its own `pub unsafe fn`, an explicit
/// `warpspec_shape!(@entry [ … ] kernel, …)` block, or the template of the macro that
/// `mac!(kernel, …)` invokes (`lookback_shape!`, `warpspec_ahead!`, …; with the doc lines of the
/// macro it hands them to in `other! { … }`, as `lookback_hinted!` does to `lookback_ablation!`),
/// or, for `mac!(label: kernel, …)`, the template of the arm `(label: …)` of `mac`.
/// A declaring call is one that starts a line, `mac!(kernel, …)`; a macro's template is the first
/// run of doc lines in its body (its first arm's). The file's name and the doc, or `None` (a
/// failure of the test, not a skip).
fn tuning_doc(files: &[(String, String)], kernel: &str) -> Option<(String, Vec<String>)> {
    files.iter().find_map(|(name, src)| {
        let doc = doc_of(src, kernel).or_else(|| entry_doc(src, kernel)).or_else(|| {
            let (call, label) = src.lines().find_map(|l| {
                let (mac, rest) = l.split_once('!')?;
                let ident = |w: &str| !w.is_empty() && w.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
                let args = rest.strip_prefix('(').filter(|_| ident(mac))?;
                if args.starts_with(&format!("{kernel},")) {
                    return Some((mac, None));
                }
                let (label, after) = args.split_once(": ")?;
                after.starts_with(&format!("{kernel},")).then_some((mac, Some(label))).filter(|_| ident(label))
            })?;
            match label {
                None => macro_template(src, call),
                Some(label) => arm_template(src, call, label),
            }
        })?;
        Some((format!("scan/{name}"), doc))
    })
}

/// The files of `kernels/src/scan/` (name, text), in name order, read once for every kernel.
fn scan_sources(scan_dir: &std::path::Path) -> Result<Vec<(String, String)>, Failed> {
    let entries = std::fs::read_dir(scan_dir).map_err(|e| format!("{}: {e}", scan_dir.display()))?;
    let mut files = Vec::new();
    for path in entries.filter_map(|e| e.ok().map(|e| e.path())) {
        let src = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        files.push((path.file_name().map(|f| f.to_string_lossy().into_owned()).unwrap_or_default(), src));
    }
    files.sort();
    Ok(files)
}

/// A doc line as `doc_of` gives it: the text of a `///` line, or (for `#[doc = …]`) a stand-in
/// line; `None` for any other line.
fn doc_line(line: &str) -> Option<String> {
    let l = line.trim_start();
    if let Some(text) = l.strip_prefix("///") {
        Some(text.strip_prefix(' ').unwrap_or(text).to_string())
    } else {
        l.starts_with("#[doc").then(|| "(a #[doc] attribute)".to_string())
    }
}

/// The doc lines between `@entry [` and the `] kernel,` that closes them.
fn entry_doc(src: &str, kernel: &str) -> Option<Vec<String>> {
    let lines: Vec<&str> = src.lines().collect();
    let end = lines.iter().position(|l| l.trim_start().starts_with(&format!("] {kernel},")))?;
    let start = lines[..end].iter().rposition(|l| l.trim_end().ends_with("@entry ["))?;
    Some(lines[start + 1..end].iter().filter_map(|l| doc_line(l)).collect())
}

/// The first run of doc lines in `macro_rules! mac` (its first arm's template), and after them
/// those of a macro of this file it hands them to (`other! {` right before the run).
fn macro_template(src: &str, mac: &str) -> Option<Vec<String>> {
    let lines: Vec<&str> = src.lines().collect();
    let at = lines.iter().position(|l| l.trim_end() == format!("macro_rules! {mac} {{"))?;
    let body = &lines[at + 1..];
    let first = body.iter().position(|l| doc_line(l).is_some())?;
    let run: Vec<String> = body[first..].iter().map_while(|l| doc_line(l)).collect();
    let handed_to = body[..first].last().and_then(|l| l.trim().strip_suffix("! {")).filter(|m| *m != "kernel");
    let after = handed_to.and_then(|other| macro_template(src, other)).unwrap_or_default();
    Some(run.into_iter().chain(after).collect())
}

/// The first run of doc lines after the arm `(label: …)` of `macro_rules! mac`, both inside the
/// macro (up to its closing `}` alone on a line) and before the next arm.
fn arm_template(src: &str, mac: &str, label: &str) -> Option<Vec<String>> {
    let lines: Vec<&str> = src.lines().collect();
    let at = lines.iter().position(|l| l.trim_end() == format!("macro_rules! {mac} {{"))?;
    let end = at + lines[at..].iter().position(|l| l.trim_end() == "}")?;
    let arm = at + lines[at..end].iter().position(|l| l.trim_start().starts_with(&format!("({label}: $")))?;
    let next_arm = |l: &&str| l.trim_start().starts_with('(') && l.trim_end().ends_with("=> {");
    let arm_end = lines[arm + 1..end].iter().position(next_arm).map_or(end, |k| arm + 1 + k);
    let first = arm + lines[arm..arm_end].iter().position(|l| doc_line(l).is_some())?;
    Some(lines[first..arm_end].iter().map_while(|l| doc_line(l)).collect())
}

/// The `///` lines right above `pub unsafe fn <function>` (attributes between them are
/// skipped), without the `///`, top to bottom; `None` if the file has no such function.
fn doc_of(src: &str, function: &str) -> Option<Vec<String>> {
    let lines: Vec<&str> = src.lines().collect();
    let at = lines.iter().position(|l| {
        let l = l.trim_start();
        l.strip_prefix("pub unsafe fn ")
            .and_then(|rest| rest.strip_prefix(function))
            .is_some_and(|rest| rest.starts_with('(') || rest.starts_with('<'))
    })?;
    let mut doc = Vec::new();
    for l in lines[..at].iter().rev() {
        let l = l.trim_start();
        if let Some(text) = l.strip_prefix("///") {
            doc.push(text.strip_prefix(' ').unwrap_or(text).to_string());
        } else if !l.starts_with("#[") {
            break;
        }
    }
    doc.reverse();
    Some(doc)
}

/// What is wrong with a doc, or `None`.
fn check_doc(doc: &[String]) -> Option<String> {
    let mut problems = Vec::new();
    match doc.first() {
        Some(first) if !first.trim().is_empty() && !first.starts_with('#') => {}
        _ => problems.push("no one-line summary as its first line".to_string()),
    }
    let headings: Vec<&str> = doc.iter().map(|l| l.trim_end()).filter(|l| l.starts_with("# ")).collect();
    let missing: Vec<&str> = SECTIONS.iter().copied().filter(|s| !headings.contains(s)).collect();
    if !missing.is_empty() {
        problems.push(format!("missing section(s): {}", missing.join(", ")));
    }
    let order: Vec<&str> = headings.iter().copied().filter(|h| SECTIONS.contains(h)).collect();
    let expected: Vec<&str> = SECTIONS.iter().copied().filter(|s| order.contains(s)).collect();
    if order != expected {
        problems.push(format!("sections out of order: {} (expected {})", order.join(", "), expected.join(", ")));
    }
    (!problems.is_empty()).then(|| problems.join("; "))
}

/// What is wrong with a variant's kernel doc, if anything: none found (`missing` says where it
/// was looked for) or one, found in `kernels/src/{file}`, that breaks the template.
fn doc_failure(variant: &str, kernel: &str, found: Option<(&str, &[String])>, missing: &str) -> Option<String> {
    match found {
        None => Some(format!("variant {variant}: {missing}")),
        Some((file, doc)) => {
            check_doc(doc).map(|p| format!("variant {variant} (kernel {kernel}, kernels/src/{file}): {p}"))
        }
    }
}

fn check_all() -> Result<(), Failed> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("kernels/src");
    let mut failures = Vec::new();
    for k in registered() {
        let path = root.join(&k.file);
        let src = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        let missing = format!("no `pub unsafe fn {}` in kernels/src/{}", k.function, k.file);
        let doc = doc_of(&src, k.function);
        failures.extend(doc_failure(k.variant, k.function, doc.as_deref().map(|d| (k.file.as_str(), d)), &missing));
    }
    // The scans' tuning shapes and experiments, from the macros that declare most of them.
    let sources = scan_sources(&root.join("scan"))?;
    for v in scan::all().filter(|v| v.tuning) {
        for kernel in v.symbols() {
            let found = tuning_doc(&sources, kernel);
            let missing = format!("no doc for kernel {kernel} in kernels/src/scan/");
            failures.extend(doc_failure(
                v.name,
                kernel,
                found.as_ref().map(|(f, d)| (f.as_str(), d.as_slice())),
                &missing,
            ));
        }
    }
    if failures.is_empty() { Ok(()) } else { Err(failures.join("\n").into()) }
}

/// Every name in the Rust column of `docs/device-layer.md`'s tables (a call, a `snake_case`
/// constant or a `CamelCase` type, inside backticks) is in the generated phrasebook, so the overview cannot name what the
/// device layer does not have.
fn device_layer_names_are_in_the_phrasebook() -> Result<(), Failed> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("docs");
    let overview = std::fs::read_to_string(root.join("device-layer.md"))?;
    let phrasebook = std::fs::read_to_string(root.join("phrasebook.md"))?;
    let mut names = Vec::new();
    for row in overview.lines().filter(|l| l.starts_with("| ") && !l.starts_with("| CUDA C")) {
        let Some(rust) = row.split(" | ").nth(1) else { continue };
        for code in rust.split('`').skip(1).step_by(2) {
            // Names of the layer: snake_case calls and constants, and CamelCase types.
            for word in code.split(|c: char| !(c.is_alphanumeric() || c == '_')) {
                let camel = word.chars().next().is_some_and(char::is_uppercase) && word.chars().any(char::is_lowercase);
                if (word.contains('_') || camel || code.contains(&format!("{word}(")))
                    && !names.iter().any(|n| n == word)
                {
                    names.push(word.to_string());
                }
            }
        }
    }
    let missing: Vec<&String> = names.iter().filter(|n| !phrasebook.contains(n.as_str())).collect();
    if names.len() < 20 {
        return Err(format!("only {} calls found in docs/device-layer.md's tables: {names:?}", names.len()).into());
    }
    if missing.is_empty() {
        Ok(())
    } else {
        Err(format!("docs/device-layer.md names {missing:?}, not in the phrasebook").into())
    }
}

/// Every figure the docs quote agrees with its CSV in the one measurement set: the script
/// that writes them, run in its check mode, finds nothing to rewrite.
fn figures_agree_with_their_csvs() -> Result<(), Failed> {
    let root = env!("CARGO_MANIFEST_DIR");
    let out = std::process::Command::new("python3")
        .args([&format!("{root}/scripts/docs_from_csv.py"), "--check"])
        .output()
        .map_err(|e| format!("cannot run python3 scripts/docs_from_csv.py --check: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr)).into())
    }
}

/// A measured figure (a number with µs, ms, ×, %, GB/s or TB/s) in the README's prose lies
/// inside a block that `scripts/docs_from_csv.py` writes; none is typed by hand.
fn readme_figures_are_generated() -> Result<(), Failed> {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md"))?;
    let hand = hand_typed_figures(&text);
    if hand.is_empty() { Ok(()) } else { Err(format!("README.md: figures typed by hand: {hand:?}").into()) }
}

/// The lines of `text` outside code fences and generated blocks that hold a measured figure.
fn hand_typed_figures(text: &str) -> Vec<String> {
    let (mut fenced, mut generated, mut found) = (false, false, Vec::new());
    for line in text.lines() {
        if line.starts_with("```") {
            fenced = !fenced;
        } else if line.starts_with("<!-- generated: ") {
            generated = true;
        } else if line.starts_with("<!-- end generated -->") {
            generated = false;
        } else if !fenced && !generated && has_figure(line) {
            found.push(line.to_string());
        }
    }
    found
}

/// Does `line` hold a number followed by a unit of measure (`4.5 µs`, `1.18×`, `96 %`)?
fn has_figure(line: &str) -> bool {
    let chars: Vec<char> = line.chars().collect();
    (0..chars.len()).any(|i| {
        if !chars[i].is_ascii_digit() || chars.get(i + 1).is_some_and(|c| c.is_ascii_digit() || *c == '.' || *c == ',')
        {
            return false;
        }
        let rest: String = chars[i + 1..].iter().collect();
        let rest = rest.trim_start();
        ["µs", "ms", "×", "%", "GB/s", "TB/s"].iter().any(|u| rest.starts_with(u))
    })
}

/// The README's histogram kernel (the kernel crate of "Your kernel, your crate") is, to the
/// character, `hist256` of `examples/my-kernels`, which `examples/histogram.rs` times on a GPU
/// against the form without shared-memory atomics: the figures of the one are the other's.
fn readme_histogram_is_the_examples() -> Result<(), Failed> {
    let root = env!("CARGO_MANIFEST_DIR");
    let readme = std::fs::read_to_string(format!("{root}/README.md"))?;
    let lib = std::fs::read_to_string(format!("{root}/examples/my-kernels/src/lib.rs"))?;
    let kernel = |text: &str, what: &str| -> Result<String, Failed> {
        let start = text.find("    /// `bins[b]` gains the count").ok_or(format!("{what}: no hist256 kernel"))?;
        let len = text[start..].find("\n}\n").ok_or(format!("{what}: the hist256 kernel does not end"))?;
        Ok(text[start..start + len].to_string())
    };
    let (from_readme, from_example) = (kernel(&readme, "README")?, kernel(&lib, "examples/my-kernels")?);
    if from_readme != from_example {
        return Err("README's hist256 and examples/my-kernels' differ: make them the same text".into());
    }
    Ok(())
}

/// The README's "Use it from Rust" block is `examples/library_tour.rs` between its markers (which
/// `./x test` runs), line for line with whitespace runs collapsed, but for the README's
/// `let backend = Backend::gpu()?;`, which the example replaces to run without a GPU.
fn readme_tour_is_the_example() -> Result<(), Failed> {
    let root = env!("CARGO_MANIFEST_DIR");
    let readme = std::fs::read_to_string(format!("{root}/README.md"))?;
    let example = std::fs::read_to_string(format!("{root}/examples/library_tour.rs"))?;
    let squash = |l: &str| l.split_whitespace().collect::<Vec<_>>().join(" ");
    let start = readme.find("```rust\nuse reduce_scan::{ArgReducer").ok_or("README: no library tour block")?;
    let block = &readme[start + "```rust\n".len()..];
    let block = &block[..block.find("```").ok_or("README: the tour block does not end")?];
    let from_readme: Vec<String> =
        block.lines().filter(|l| !l.starts_with("let backend = ")).map(squash).filter(|l| !l.is_empty()).collect();
    let begin = example.find("// README: begin").ok_or("example: no `// README: begin`")?;
    let end = example.find("// README: end").ok_or("example: no `// README: end`")?;
    let uses = example.lines().filter(|l| l.starts_with("use reduce_scan::")).map(squash);
    let from_example: Vec<String> = uses
        .chain(
            example[begin..end]
                .lines()
                .skip(1)
                .map(squash)
                .filter(|l| !l.is_empty() && !l.starts_with("// README:") && !l.starts_with("let (backend, _) =")),
        )
        .collect();
    if from_readme == from_example {
        return Ok(());
    }
    let at = from_readme
        .iter()
        .zip(&from_example)
        .position(|(a, b)| a != b)
        .unwrap_or(from_readme.len().min(from_example.len()));
    Err(format!(
        "README's tour and examples/library_tour.rs differ at line {} of the block: README {:?}, example {:?}",
        at + 1,
        from_readme.get(at),
        from_example.get(at)
    )
    .into())
}

pub fn trials() -> Vec<Trial> {
    vec![
        Trial::test("docs::device_layer_names_are_in_the_phrasebook", device_layer_names_are_in_the_phrasebook),
        Trial::test("docs::kernel_doc_template", check_all),
        Trial::test("docs::figures_agree_with_their_csvs", figures_agree_with_their_csvs),
        Trial::test("docs::readme_figures_are_generated", readme_figures_are_generated),
        Trial::test("docs::readme_tour_is_the_example", readme_tour_is_the_example),
        Trial::test("docs::readme_histogram_is_the_examples", readme_histogram_is_the_examples),
        Trial::test("docs::a_hand_typed_figure_is_found", || {
            let text = "prose 101.6 µs here\n<!-- generated: x -->\n1.18× inside\n<!-- end generated -->\n```\n5 %\n```\nn = 2^20, sm_70\n";
            let found = hand_typed_figures(text);
            if found == ["prose 101.6 µs here"] { Ok(()) } else { Err(format!("found {found:?}").into()) }
        }),
        Trial::test("docs::a_labelled_arm_gives_its_own_doc", || {
            let src = "macro_rules! shape {\n    ($n:ident) => {\n        /// First arm.\n    };\n    \
                       (wide: $n:ident) => {\n        /// Wide arm.\n        /// # Concept\n    };\n    \
                       (bare: $n:ident) => {\n        x!();\n    };\n}\n/// After the macro.\n";
            let wide = arm_template(src, "shape", "wide");
            let bare = arm_template(src, "shape", "bare");
            let none = arm_template(src, "shape", "gone");
            if wide.as_deref() == Some(&["Wide arm.".to_string(), "# Concept".to_string()][..])
                && bare.is_none()
                && none.is_none()
            {
                Ok(())
            } else {
                Err(format!("wide {wide:?}, bare (no doc) {bare:?}, gone (no arm) {none:?}").into())
            }
        }),
        Trial::test("docs::checker_reports_missing_sections", || {
            let doc: Vec<String> = ["Sums.", "", "# Concept", "# Execution", "# Launch", "# Safety"]
                .iter()
                .map(|s| s.to_string())
                .collect();
            let problem = check_doc(&doc).ok_or("a doc without four sections passed")?;
            for s in ["# Previous problem → fix", "# Preconditions", "# Measured"] {
                if !problem.contains(s) {
                    return Err(format!("the report does not name {s}: {problem}").into());
                }
            }
            Ok(())
        }),
    ]
}
