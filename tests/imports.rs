//! No circle of imports between the files of `host/src`, nor of `cli/src` (issue #38; the
//! command line left `host/src` for a crate of its own in issue #59): read every file's paths
//! into the crate (`use crate::…`, `super::…`, `self::…`, a child module's name, and the same
//! paths written in code), resolve each to the file that defines the item (through the
//! re-exports of the modules on the way: `pub use`), and fail when files reach each other in a
//! circle.
//!
//! A module and the modules inside it are one unit: a `mod.rs` that declares, re-exports or
//! calls its children, and a child that uses what its parent defines, are not a circle. Every
//! other pair of files is: two siblings that use each other (`reduce/sum.rs` ↔
//! `reduce/typed/mod.rs`, `cli/metrics.rs` ↔ `cli/reduce.rs`), or any longer ring. Test code
//! (`#[cfg(test)] mod tests`, `tests.rs`) is left out: it may reach anywhere.
//!
//! `IMPORTS_SRC=DIR` checks another tree instead (an older checkout's `host/src`: at 4d8056f,
//! before #38, it finds the circles and two more).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use libtest_mimic::Trial;

/// A module: its path from the crate root (`["reduce", "registry"]`).
type Module = Vec<String>;

/// What the checker knows of one module of the crate.
#[derive(Default, Debug)]
struct ModInfo {
    /// The file that holds it (an inline module's is its parent's).
    file: String,
    /// Its child modules.
    children: BTreeSet<String>,
    /// What it re-exports: a name → the path it names (relative to this module), and the globs.
    reexports: BTreeMap<String, Vec<String>>,
    globs: Vec<Vec<String>>,
    /// Every path into the crate its code writes, with `use` aliases already expanded.
    paths: Vec<Vec<String>>,
}

/// The code of a file: comments, doc comments, string and char literals blanked, test modules
/// cut.
fn code_of(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        let trimmed = line.trim_start();
        if trimmed.starts_with("#[cfg(test)]") && lines.peek().is_some_and(|l| l.trim_start().starts_with("mod ")) {
            break;
        }
        let mut s = String::new();
        let (mut chars, mut in_str) = (line.chars().peekable(), false);
        while let Some(c) = chars.next() {
            match c {
                '"' => {
                    in_str = !in_str;
                    s.push(' ');
                }
                '\\' if in_str => {
                    chars.next();
                }
                '/' if !in_str && chars.peek() == Some(&'/') => break,
                _ if in_str => s.push(' '),
                _ => s.push(c),
            }
        }
        out.push_str(&s);
        out.push('\n');
    }
    out
}

/// Every `use` tree of `code` expanded into paths, with the name each binds (its last segment,
/// or its `as`), and whether it is a re-export (`pub use`).
fn use_paths(code: &str) -> Vec<(Vec<String>, String, bool)> {
    let mut out = Vec::new();
    let mut rest = code;
    while let Some(at) = rest.find("use ") {
        let before = &rest[..at];
        let starts = before.chars().last().is_none_or(|c| c == '\n' || c == ' ' || c == ';' || c == '{' || c == ')');
        let public = before.trim_end().ends_with("pub") || before.trim_end().ends_with(')');
        let Some(end) = rest[at..].find(';') else { break };
        let tree = rest[at + 4..at + end].to_string();
        rest = &rest[at + end + 1..];
        if starts {
            expand(&tree, &[], public, &mut out);
        }
    }
    out
}

/// Expands one use tree (`a::b::{c, d::e as f}`) under `prefix`.
fn expand(tree: &str, prefix: &[String], public: bool, out: &mut Vec<(Vec<String>, String, bool)>) {
    let tree = tree.trim();
    if let Some(open) = tree.find('{') {
        let head: Vec<String> =
            tree[..open].split("::").map(str::trim).filter(|s| !s.is_empty()).map(String::from).collect();
        let inner = &tree[open + 1..tree.rfind('}').unwrap_or(tree.len())];
        let mut path = prefix.to_vec();
        path.extend(head);
        let (mut depth, mut start) = (0, 0);
        for (i, c) in inner.char_indices() {
            match c {
                '{' => depth += 1,
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    expand(&inner[start..i], &path, public, out);
                    start = i + 1;
                }
                _ => {}
            }
        }
        expand(&inner[start..], &path, public, out);
        return;
    }
    if tree.is_empty() {
        return;
    }
    let (path, alias) = match tree.split_once(" as ") {
        Some((p, a)) => (p, Some(a.trim().to_string())),
        None => (tree, None),
    };
    let mut full = prefix.to_vec();
    full.extend(path.split("::").map(|s| s.trim().to_string()).filter(|s| !s.is_empty()));
    let name = alias.unwrap_or_else(|| full.last().cloned().unwrap_or_default());
    out.push((full, name, public));
}

/// The paths into the crate written in `code` outside `use` lines: `crate::a::b`,
/// `super::super::x`, `self::y`, and `alias::z` for a name a `use` bound.
fn code_paths(code: &str, aliases: &BTreeMap<String, Vec<String>>) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    for line in code.lines().filter(|l| !l.trim_start().starts_with("use ") && !l.trim_start().starts_with("pub use "))
    {
        let bytes = line.as_bytes();
        let mut i = 0;
        while i < line.len() {
            let starts =
                i == 0 || !(bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'_' || bytes[i - 1] == b':');
            if !starts || !(bytes[i].is_ascii_alphabetic() || bytes[i] == b'_') {
                i += 1;
                continue;
            }
            let mut j = i;
            while j < line.len()
                && (bytes[j].is_ascii_alphanumeric() || bytes[j] == b'_' || line[j..].starts_with("::"))
            {
                j += if line[j..].starts_with("::") { 2 } else { 1 };
            }
            let segs: Vec<String> = line[i..j].split("::").filter(|s| !s.is_empty()).map(String::from).collect();
            if segs.len() >= 2 {
                if matches!(segs[0].as_str(), "crate" | "super" | "self") {
                    out.push(segs);
                } else if let Some(target) = aliases.get(&segs[0]) {
                    let mut full = target.clone();
                    full.extend(segs[1..].iter().cloned());
                    out.push(full);
                }
            }
            i = j.max(i + 1);
        }
    }
    out
}

/// Every module of the crate rooted at `src` (its `lib.rs`), with what it re-exports and uses.
fn modules(src: &Path) -> BTreeMap<Module, ModInfo> {
    let mut mods = BTreeMap::new();
    collect(src, &src.join("lib.rs"), vec![], &mut mods);
    mods
}

fn collect(src: &Path, file: &Path, module: Module, mods: &mut BTreeMap<Module, ModInfo>) {
    let Ok(text) = std::fs::read_to_string(file) else { return };
    let code = code_of(&text);
    let name = file.strip_prefix(src).unwrap_or(file).display().to_string();
    let mut info = ModInfo { file: name, ..Default::default() };
    for line in code.lines() {
        let t = line.trim_start().trim_start_matches("pub(crate) ").trim_start_matches("pub ");
        if let Some(child) = t.strip_prefix("mod ").and_then(|r| r.strip_suffix(';')) {
            let child = child.trim().to_string();
            if child == "tests" {
                continue;
            }
            let dir = if file.ends_with("mod.rs") || file.ends_with("lib.rs") {
                file.parent().map(Path::to_path_buf)
            } else {
                Some(file.with_extension(""))
            };
            let dir = dir.unwrap_or_else(|| PathBuf::from("."));
            let path =
                [dir.join(format!("{child}.rs")), dir.join(&child).join("mod.rs")].into_iter().find(|p| p.exists());
            if let Some(path) = path {
                let mut m = module.clone();
                m.push(child.clone());
                collect(src, &path, m, mods);
                info.children.insert(child);
            }
        }
    }
    let mut aliases = BTreeMap::new();
    for (path, bound, public) in use_paths(&code) {
        if path.last().is_some_and(|s| s == "*") {
            if public {
                info.globs.push(path[..path.len() - 1].to_vec());
            }
            continue;
        }
        if public {
            info.reexports.insert(bound.clone(), path.clone());
        }
        aliases.insert(bound, path.clone());
        info.paths.push(path);
    }
    info.paths.extend(code_paths(&code, &aliases));
    mods.insert(module, info);
}

/// The file that defines what `path` (written in `module`) names, or `None` outside the crate.
fn resolve(mods: &BTreeMap<Module, ModInfo>, module: &Module, path: &[String], depth: usize) -> Option<String> {
    if depth > 16 || path.is_empty() {
        return None;
    }
    let mut at: Module = match path[0].as_str() {
        "crate" => vec![],
        "self" => module.clone(),
        "super" => module[..module.len().saturating_sub(1)].to_vec(),
        first if mods.get(module).is_some_and(|m| m.children.contains(first)) => module.clone(),
        _ => return None,
    };
    let mut rest = match path[0].as_str() {
        "crate" | "self" | "super" => &path[1..],
        _ => path,
    };
    while rest.first().is_some_and(|s| s == "super") {
        at.pop();
        rest = &rest[1..];
    }
    for (k, seg) in rest.iter().enumerate() {
        let info = mods.get(&at)?;
        if info.children.contains(seg) {
            at.push(seg.clone());
            continue;
        }
        if let Some(target) = info.reexports.get(seg) {
            let mut full = target.clone();
            full.extend(rest[k + 1..].iter().cloned());
            return resolve(mods, &at, &full, depth + 1);
        }
        for glob in &info.globs {
            let mut full = glob.clone();
            full.extend(rest[k..].iter().cloned());
            if let Some(file) = resolve(mods, &at, &full, depth + 1).filter(|f| *f != info.file) {
                return Some(file);
            }
        }
        return Some(info.file.clone());
    }
    mods.get(&at).map(|m| m.file.clone())
}

/// The circles of the crate at `src`: each a list of files, every one reaching the next.
fn circles(src: &Path) -> Vec<Vec<String>> {
    let mods = modules(src);
    let module_of: BTreeMap<String, Module> = mods.iter().map(|(m, i)| (i.file.clone(), m.clone())).collect();
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (module, info) in &mods {
        for path in &info.paths {
            let Some(target) = resolve(&mods, module, path, 0) else { continue };
            let Some(to) = module_of.get(&target) else { continue };
            // A module and the modules inside it are one unit.
            if to.starts_with(module) || module.starts_with(to) {
                continue;
            }
            edges.entry(info.file.clone()).or_default().insert(target);
        }
    }
    strongly_connected(&edges).into_iter().filter(|c| c.len() > 1).collect()
}

/// Tarjan's strongly connected components of `edges`.
fn strongly_connected(edges: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    struct State<'a> {
        edges: &'a BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on: BTreeSet<&'a str>,
        out: Vec<Vec<String>>,
    }
    fn visit<'a>(s: &mut State<'a>, v: &'a str) {
        let i = s.index.len();
        s.index.insert(v, i);
        s.low.insert(v, i);
        s.stack.push(v);
        s.on.insert(v);
        for w in s.edges.get(v).into_iter().flatten() {
            let w = w.as_str();
            if !s.index.contains_key(w) {
                visit(s, w);
                let lw = s.low[w];
                let lv = s.low.get_mut(v).expect("visited");
                *lv = (*lv).min(lw);
            } else if s.on.contains(w) {
                let iw = s.index[w];
                let lv = s.low.get_mut(v).expect("visited");
                *lv = (*lv).min(iw);
            }
        }
        if s.low[v] == s.index[v] {
            let mut component = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on.remove(w);
                component.push(w.to_string());
                if w == v {
                    break;
                }
            }
            component.sort();
            s.out.push(component);
        }
    }
    let mut s =
        State { edges, index: BTreeMap::new(), low: BTreeMap::new(), stack: vec![], on: BTreeSet::new(), out: vec![] };
    for v in edges.keys() {
        if !s.index.contains_key(v.as_str()) {
            visit(&mut s, v);
        }
    }
    s.out
}

/// The crate roots checked: the library's and the command line's (`IMPORTS_SRC=DIR`: that tree
/// alone).
fn checked_srcs() -> Vec<PathBuf> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    std::env::var_os("IMPORTS_SRC")
        .map_or_else(|| vec![root.join("host/src"), root.join("cli/src")], |d| vec![d.into()])
}

pub fn trials() -> Vec<Trial> {
    vec![
        Trial::test("imports::no_circle_in_host_src_or_cli_src", || {
            let srcs = checked_srcs();
            let modules: usize = srcs.iter().map(|src| modules(src).len()).sum();
            if modules < 60 {
                return Err(format!("expected the library's and the command line's modules under {srcs:?}").into());
            }
            let found: Vec<String> = srcs
                .iter()
                .flat_map(|src| circles(src).into_iter().map(move |c| format!("{}: {}", src.display(), c.join(" ↔ "))))
                .collect();
            match found[..] {
                [] => Ok(()),
                ref found => Err(format!(
                    "files that import each other (tests/imports.rs says what counts):\n  {}",
                    found.join("\n  ")
                )
                .into()),
            }
        }),
        Trial::test("imports::the_check_sees_a_circle", || {
            // The checker itself: two siblings that use each other (one through the parent's
            // re-export, one in code), a parent and child that do (not a circle), a ring of three.
            let dir = std::env::temp_dir().join(format!("reduction-imports-{}", std::process::id()));
            let m = dir.join("m");
            std::fs::create_dir_all(&m).map_err(|e| e.to_string())?;
            let files = [
                ("lib.rs", "pub mod m;\npub mod x;\npub mod y;\npub mod z;\npub use m::a::A;\n"),
                ("m/mod.rs", "pub mod a;\npub mod b;\npub use b::B;\nfn f() { a::g(); }\n"),
                ("m/a.rs", "use super::B;\npub struct A;\npub fn g() {}\n"),
                (
                    "m/b.rs",
                    "// use super::a::A; (a comment)\npub struct B;\nfn h() { super::a::g(); }\nfn p() { super::f(); }\n",
                ),
                ("x.rs", "use crate::y::Y;\npub struct X;\n"),
                ("y.rs", "pub struct Y;\nfn f() -> crate::z::Z { todo!() }\n"),
                ("z.rs", "use crate::{m::b::B, x::X};\npub struct Z;\n"),
            ];
            for (name, text) in files {
                std::fs::write(dir.join(name), text).map_err(|e| e.to_string())?;
            }
            let found = circles(&dir);
            let _ = std::fs::remove_dir_all(&dir);
            let want =
                vec![vec!["m/a.rs".to_string(), "m/b.rs".into()], vec!["x.rs".into(), "y.rs".into(), "z.rs".into()]];
            if found == want { Ok(()) } else { Err(format!("expected {want:?}, found {found:?}").into()) }
        }),
    ]
}
