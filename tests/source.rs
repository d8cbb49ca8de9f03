//! Rules the kernels' source keeps, checked on the text of `kernels/src`:
//!
//! * **Memory goes through the device layer.** Outside `kernels/src/device/`, no kernel code
//!   names a raw pointer or dereferences one: global memory is [`Global`]/[`GlobalMut`] and
//!   shared memory [`Shared`], whose every access the emulator checks (bounds, races,
//!   initialisation) and which compile to the plain instructions on the GPU. A raw access
//!   would be invisible to the emulator's checks, and could read or write host memory out of
//!   bounds there.
//!
//! [`Global`]: kernels::device::global::Global
//! [`GlobalMut`]: kernels::device::global::GlobalMut
//! [`Shared`]: kernels::device::shared::Shared

use std::path::{Path, PathBuf};

use libtest_mimic::Trial;

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

/// `file:line: pattern (why)` for every raw pointer use outside `kernels/src/device/`.
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

fn kernels_src() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("kernels/src")
}

pub fn trials() -> Vec<Trial> {
    vec![
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
                    "raw pointer code outside kernels/src/device/ (use Global/GlobalMut/Shared):\n  {}",
                    uses.join("\n  ")
                )
                .into()),
            }
        }),
        Trial::test("source::the_raw_access_check_sees_raw_access", || {
            // The checker itself: it must flag each kind of raw access, and not a comment.
            let dir = std::env::temp_dir().join(format!("reduction-source-{}", std::process::id()));
            let reduce = dir.join("reduce");
            std::fs::create_dir_all(&reduce).map_err(|e| e.to_string())?;
            std::fs::create_dir_all(dir.join("device")).map_err(|e| e.to_string())?;
            let bad = "fn k(p: *mut i32) {\n    // p.add(1) in a comment is fine\n    unsafe { *p.add(1) = smem.as_ptr().read() };\n}\n";
            std::fs::write(reduce.join("bad.rs"), bad).map_err(|e| e.to_string())?;
            std::fs::write(dir.join("device/ok.rs"), "fn f(p: *mut i32) { p.add(1); }\n").map_err(|e| e.to_string())?;
            let uses = raw_uses(&dir);
            let _ = std::fs::remove_dir_all(&dir);
            let lines: Vec<&str> = uses.iter().map(|u| u.split(": ").next().unwrap_or("")).collect();
            let expected = ["reduce/bad.rs:1", "reduce/bad.rs:3", "reduce/bad.rs:3", "reduce/bad.rs:3"];
            let ends = lines.len() == expected.len() && lines.iter().zip(expected).all(|(l, e)| l.ends_with(e));
            if ends { Ok(()) } else { Err(format!("expected raw uses at {expected:?}, got {uses:#?}").into()) }
        }),
    ]
}
