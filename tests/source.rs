//! Rules the kernels' source keeps, checked on the text of `kernels/src`:
//!
//! * **Memory goes through the device layer.** Outside `device/src/`, no kernel code
//!   names a raw pointer or dereferences one: global memory is [`Global`]/[`GlobalMut`] and
//!   shared memory [`Shared`], whose every access the emulator checks (bounds, races,
//!   initialisation) and which compile to the plain instructions on the GPU. A raw access
//!   would be invisible to the emulator's checks, and could read or write host memory out of
//!   bounds there.
//!
//! * **Each lesson's code is in its file.** The chapter-3 and chapter-5 kernels (the global-
//!   and shared-memory families) are written out in full, as the book's are: the loop, the
//!   index, the unrolled loads and rounds of a lesson are in the file that teaches them, so a
//!   diff of two consecutive lessons shows the fix. Each file names its lesson's code, the
//!   file before it in the family does not have it, and no lesson file takes a tree, fold or
//!   last warp from `collective` or from another lesson.
//!
//! * **Nothing under a name another user can predict in the shared temporary folder**
//!   (issue 41), checked on the text of `host/src`, `cli/src`, `runtime/src`, `builder/src`, `learn/src` and `learn/course/src`: no
//!   `std::env::temp_dir()` and no `"/tmp/…"` path. Temporary files and folders come from the
//!   `tempfile` crate (random name, `O_EXCL`, mode 0600/0700: `runtime/src/private.rs`). A test that
//!   needs a fixed name (one that plants a link where the old code wrote) says why on the line
//!   above, in a comment `// fixed temp name: WHY`.
//!
//! [`Global`]: kernels::device::global::Global
//! [`GlobalMut`]: kernels::device::global::GlobalMut
//! [`Shared`]: kernels::device::shared::Shared

use std::path::{Path, PathBuf};

use libtest_mimic::{Failed, Trial};

/// What raw pointer code looks like: each pattern and why it is refused.
const RAW: &[(&str, &str)] = &[
    ("*const ", "a raw pointer type"),
    ("*mut ", "a raw pointer type"),
    ("ptr::", "core::ptr"),
    ("addr_of", "a raw pointer to a place"),
    (".as_ptr(", "a raw pointer out of a device-layer type"),
    (".add(", "raw pointer arithmetic"),
    (".byte_add(", "raw pointer arithmetic"),
    (".offset_from(", "raw pointer arithmetic"),
    (".read()", "a raw pointer load"),
    (".read_volatile()", "a raw pointer load"),
    (".read_unaligned(", "a raw pointer load"),
    (".write_unaligned(", "a raw pointer store"),
    ("from_raw", "a device-layer type from a raw pointer"),
    ("transmute", "a reinterpreted value"),
];

/// Every `.rs` file under `dir`, sorted.
fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = entry.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|e| e == "rs") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// The code of a line: what precedes `//` (comments and docs say `*p`, code may not).
fn code(line: &str) -> &str {
    line.find("//").map_or(line, |at| &line[..at])
}

/// `file:line: pattern (why)` for every raw pointer use outside `device/src/`.
fn raw_uses(root: &Path) -> Vec<String> {
    let device = root.join("device");
    let mut found = Vec::new();
    for file in rust_files(root).into_iter().filter(|f| !f.starts_with(&device)) {
        let text = std::fs::read_to_string(&file).unwrap_or_default();
        let name = file.strip_prefix(root.parent().unwrap_or(root)).unwrap_or(&file).display().to_string();
        for (line, n) in text.lines().zip(1..) {
            for (pattern, why) in RAW.iter().filter(|(p, _)| code(line).contains(p)) {
                found.push(format!("{name}:{n}: `{}` ({why}): {}", pattern.trim(), line.trim()));
            }
        }
    }
    found
}

/// What names a path in the shared temporary folder, and why it is refused there.
const SHARED_TEMP: &[(&str, &str)] = &[
    ("temp_dir()", "a path in the shared temporary folder: use tempfile (a private folder or file)"),
    ("\"/tmp/", "a fixed path in the shared temporary folder"),
    ("\"/tmp\"", "the shared temporary folder"),
    ("\"/var/tmp", "the shared temporary folder"),
];

/// The comment that lets a test use a fixed temporary name, on the line above it (or on it).
const FIXED_TEMP_NAME: &str = "// fixed temp name: ";

/// `file:line: pattern (why)` for every path in the shared temporary folder in the `.rs` files
/// under `roots`, but for those whose line or the one above says why a fixed name is needed.
fn shared_temp_names(roots: &[PathBuf]) -> Vec<String> {
    let mut found = Vec::new();
    for root in roots {
        for file in rust_files(root) {
            let text = std::fs::read_to_string(&file).unwrap_or_default();
            let lines: Vec<&str> = text.lines().collect();
            let name = file.strip_prefix(root.parent().unwrap_or(root)).unwrap_or(&file).display().to_string();
            for (i, line) in lines.iter().enumerate() {
                let says_why = |l: &str| l.split_once(FIXED_TEMP_NAME).is_some_and(|(_, why)| !why.trim().is_empty());
                if says_why(line) || i.checked_sub(1).is_some_and(|above| says_why(lines[above])) {
                    continue;
                }
                for (pattern, why) in SHARED_TEMP.iter().filter(|(p, _)| code(line).contains(p)) {
                    found.push(format!("{name}:{}: `{pattern}` ({why}): {}", i + 1, line.trim()));
                }
            }
        }
    }
    found
}

/// The line above a chapter-3 or chapter-5 kernel that names its lesson's code: one line of
/// the kernel, present in its file and absent from the file of the lesson before it in the
/// family. It lives in the lesson's own file, so a new lesson is still three edits.
const LESSON_MARKER: &str = "// The lesson's code, which the lesson before does not have (tests/source.rs): `";

/// A lesson file's named line, and its text without the marker line.
fn lesson_of(text: &str) -> (Option<&str>, String) {
    let line = text.lines().find_map(|l| l.strip_prefix(LESSON_MARKER)?.strip_suffix('`'));
    let code = text.lines().filter(|l| !l.starts_with(LESSON_MARKER)).collect::<Vec<_>>().join("\n");
    (line, code)
}

/// Problems with the lesson files: a lesson whose line is missing, or already in the lesson
/// before it; a lesson file that imports a lesson's code from elsewhere.
fn lesson_problems(root: &Path) -> Vec<String> {
    use reduce_scan::reduce::registry::{self, Family};
    let mut problems = Vec::new();
    let read = |name: &str| std::fs::read_to_string(root.join(format!("reduce/{name}.rs"))).unwrap_or_default();
    for family in [Family::GlobalMemory, Family::SharedMemory] {
        let names: Vec<&str> = registry::all().filter(|v| v.family == family).map(|v| v.name).collect();
        for (i, name) in names.iter().enumerate() {
            let text = read(name);
            let (Some(line), code) = lesson_of(&text) else {
                problems.push(format!("reduce/{name}.rs: no line `{LESSON_MARKER}…`` naming its lesson's code"));
                continue;
            };
            if !code.contains(line) {
                problems.push(format!("reduce/{name}.rs: its lesson's code `{line}` is not in the file"));
            }
            if let Some(previous) = i.checked_sub(1).map(|p| names[p])
                && lesson_of(&read(previous)).1.contains(line)
            {
                problems.push(format!("reduce/{name}.rs: `{line}` is already in {previous}.rs, the lesson before"));
            }
            for (at, code) in text.lines().zip(1..).filter(|(l, _)| l.starts_with("use ")).map(|(l, n)| (n, l)) {
                let lesson_import = code.contains("crate::reduce::")
                    || (code.contains("crate::collective::") && !code.contains("SHARED_TREE_"));
                if lesson_import {
                    problems.push(format!("reduce/{name}.rs:{at}: `{code}`: a lesson's code comes from elsewhere"));
                }
            }
        }
    }
    problems
}

fn kernels_src() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("kernels/src")
}

/// Issue 41: no name in the shared temporary folder in `host/src`, `cli/src`, `runtime/src`, `builder/src`,
/// `learn/src`, `learn/course/src`.
fn no_predictable_temp_names() -> Result<(), Failed> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let roots: Vec<PathBuf> = ["host/src", "cli/src", "runtime/src", "builder/src", "learn/src", "learn/course/src"]
        .iter()
        .map(|d| root.join(d))
        .collect();
    let files: usize = roots.iter().map(|r| rust_files(r).len()).sum();
    if files < 40 {
        return Err(format!(
            "expected the host, command line, runtime, builder and learn sources, found {files} files"
        )
        .into());
    }
    match shared_temp_names(&roots)[..] {
        [] => Ok(()),
        ref uses => Err(format!(
            "a name in the shared temporary folder (use tempfile; a test that needs a fixed name says why on the \
             line above: `{FIXED_TEMP_NAME}WHY`):\n  {}",
            uses.join("\n  ")
        )
        .into()),
    }
}

/// The checker itself: it flags each pattern, and not a comment or a name that says why.
fn the_shared_temp_check_sees_fixed_names() -> Result<(), Failed> {
    let dir = crate::common::private_dir("reduce-source-")?;
    let src = dir.path().join("src");
    std::fs::create_dir_all(&src).map_err(|e| e.to_string())?;
    let text = "fn f() {\n    // std::env::temp_dir() in a comment is fine\n    \
                let a = std::env::temp_dir().join(\"x\");\n    let b = Path::new(\"/tmp/x\");\n    \
                // fixed temp name: the old name, where this test plants a link\n    \
                let c = std::env::temp_dir().join(\"y\");\n    // fixed temp name:\n    \
                let d = std::env::temp_dir();\n}\n";
    std::fs::write(src.join("bad.rs"), text).map_err(|e| e.to_string())?;
    let found = shared_temp_names(&[src]);
    let lines: Vec<&str> = found.iter().map(|u| u.split(": ").next().unwrap_or("")).collect();
    let expected = ["src/bad.rs:3", "src/bad.rs:4", "src/bad.rs:8"];
    let ends = lines.len() == expected.len() && lines.iter().zip(expected).all(|(l, e)| l.ends_with(e));
    if ends { Ok(()) } else { Err(format!("expected fixed names at {expected:?}, got {found:#?}").into()) }
}

/// The command line's crates (clap, plotters, csv, serde_json) in the `[dependencies]` of a
/// manifest, where they are not optional: a crate that depends on the kit or the library must get
/// none of them (issue #59). The `[dependencies]` table's lines, as `name = …`.
fn cli_dependencies(manifest: &str) -> Vec<String> {
    let mut table = String::new();
    let mut found = Vec::new();
    for line in manifest.lines().map(str::trim) {
        if line.starts_with('[') {
            table = line.to_string();
        } else if table == "[dependencies]"
            && let Some((name, spec)) = line.split_once('=')
            && ["clap", "plotters", "csv", "serde_json", "serde"].contains(&name.trim())
            && !spec.contains("optional = true")
        {
            found.push(name.trim().to_string());
        }
    }
    found
}

/// The kit's crates and the library depend on none of the command line's crates (the runtime's
/// CSV and JSON are behind its `formats` feature, which only the command line turns on).
fn the_kit_and_the_library_carry_no_cli_crates() -> Result<(), Failed> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let mut problems = Vec::new();
    for krate in ["device", "collective", "builder", "runtime", "host"] {
        let manifest = std::fs::read_to_string(root.join(krate).join("Cargo.toml")).map_err(|e| e.to_string())?;
        for dep in cli_dependencies(&manifest) {
            problems.push(format!("{krate}/Cargo.toml depends on {dep}"));
        }
    }
    let cli = std::fs::read_to_string(root.join("cli/Cargo.toml")).map_err(|e| e.to_string())?;
    if cli_dependencies(&cli).len() < 4 {
        problems.push("the check no longer sees the command line's own dependencies in cli/Cargo.toml".into());
    }
    if problems.is_empty() { Ok(()) } else { Err(problems.join("; ").into()) }
}

pub fn trials() -> Vec<Trial> {
    vec![
        Trial::test("source::the_kit_and_the_library_carry_no_cli_crates", the_kit_and_the_library_carry_no_cli_crates),
        Trial::test("source::no_raw_memory_access_outside_the_device_layer", || {
            let root = kernels_src();
            let files = rust_files(&root).len();
            if files < 40 {
                return Err(
                    format!("expected the kernels' sources under {}, found {files} files", root.display()).into()
                );
            }
            match raw_uses(&root)[..] {
                [] => Ok(()),
                ref uses => Err(format!(
                    "raw pointer code outside device/src/ (use Global/GlobalMut/Shared):\n  {}",
                    uses.join("\n  ")
                )
                .into()),
            }
        }),
        Trial::test("source::each_lesson_holds_its_code", || match lesson_problems(&kernels_src())[..] {
            [] => Ok(()),
            ref problems => Err(problems.join("\n").into()),
        }),
        Trial::test("source::no_predictable_names_in_the_shared_temp_folder", no_predictable_temp_names),
        Trial::test("source::the_shared_temp_check_sees_fixed_names", the_shared_temp_check_sees_fixed_names),
        Trial::test("source::the_raw_access_check_sees_raw_access", || {
            // The checker itself: it must flag each kind of raw access, and not a comment.
            let tmp = crate::common::private_dir("reduce-source-")?;
            let dir = tmp.path().join("kernels");
            let reduce = dir.join("reduce");
            std::fs::create_dir_all(&reduce).map_err(|e| e.to_string())?;
            std::fs::create_dir_all(dir.join("device")).map_err(|e| e.to_string())?;
            let bad = "fn k(p: *mut i32) {\n    // p.add(1) in a comment is fine\n    unsafe { *p.add(1) = smem.as_ptr().read() };\n}\n";
            std::fs::write(reduce.join("bad.rs"), bad).map_err(|e| e.to_string())?;
            std::fs::write(dir.join("device/ok.rs"), "fn f(p: *mut i32) { p.add(1); }\n").map_err(|e| e.to_string())?;
            let uses = raw_uses(&dir);
            let lines: Vec<&str> = uses.iter().map(|u| u.split(": ").next().unwrap_or("")).collect();
            let expected = ["reduce/bad.rs:1", "reduce/bad.rs:3", "reduce/bad.rs:3", "reduce/bad.rs:3"];
            let ends = lines.len() == expected.len() && lines.iter().zip(expected).all(|(l, e)| l.ends_with(e));
            if ends { Ok(()) } else { Err(format!("expected raw uses at {expected:?}, got {uses:#?}").into()) }
        }),
    ]
}
