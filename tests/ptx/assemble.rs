//! `ptxas -v` over a whole PTX module, in pieces, with each piece's log kept from one run to the
//! next (issue #60: after a one-line kernel edit, most of the module is what ptxas read last
//! time, and six assemblies of the whole module were a third of `tests/main.rs`).
//!
//! A module is split into [`CHUNKS`] pieces: each is the module with only some of its entries
//! (chosen by a hash of the entry's name, so an entry stays in its piece from one build to the
//! next), everything else kept (header, declarations, the `.func` bodies). ptxas reports each
//! function by itself (registers, stack frame, spills, static shared memory), so the pieces'
//! logs together say what the module's log says: `tests/ptx.rs`'s `chunks_report_what_the_module_does`
//! compares them function by function.
//!
//! A piece's log is kept under the test build's target folder (`CARGO_TARGET_TMPDIR`, in the
//! user's own space), one file per (architecture, target, piece) slot, so the folder never
//! grows: the file holds the key it was made for (a 128-bit hash of ptxas's `--version`, its
//! size and time, the target and the piece's text, and the text's length) and is used only
//! where the key is the same. A piece ptxas rejects is never kept. Where the folder cannot be
//! written (a bundle run on another machine), every piece is assembled, as before.

use std::hash::{Hash, Hasher};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

use libtest_mimic::Failed;

/// The pieces of a module: 32 of the kernels' ~310 entries' worth each about 1/32 of the
/// module; ptxas's start costs about 0.05 s a call (16 pieces of the sm_90 module took 12.3 s
/// against 11.5 s whole, on the 2-core machine).
pub const CHUNKS: usize = 32;

/// One top-level item of a module: an entry (its name) or anything else (`None`).
type Item<'a> = (Option<&'a str>, &'a str);

/// The module's top-level items in order: each `.entry` with its body (from its first line to
/// the `}` that closes it), and the text between them.
fn items(ptx: &str) -> Vec<Item<'_>> {
    let mut out = Vec::new();
    let (mut start, mut entry, mut depth, mut opened) = (0, None, 0i32, false);
    let mut at = 0;
    for line in ptx.split_inclusive('\n') {
        if entry.is_none() && depth == 0 {
            let name = line.strip_prefix(".visible .entry ").or_else(|| line.strip_prefix(".entry "));
            if let Some(rest) = name {
                if at > start {
                    out.push((None, &ptx[start..at]));
                }
                start = at;
                entry = Some(rest.split(['(', ' ', '\n']).next().unwrap_or(rest));
                opened = false;
            }
        }
        depth += line.matches('{').count() as i32 - line.matches('}').count() as i32;
        opened |= line.contains('{');
        at += line.len();
        if entry.is_some() && opened && depth == 0 {
            out.push((entry.take(), &ptx[start..at]));
            start = at;
        }
    }
    if at > start {
        out.push((entry, &ptx[start..at]));
    }
    out
}

/// The piece an entry belongs to: FNV-1a of its name (stable across builds and toolchains).
fn chunk_of(name: &str) -> usize {
    let h = name.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3));
    (h % CHUNKS as u64) as usize
}

/// The module split into [`CHUNKS`] modules, each with the entries of its piece and every
/// other item; pieces without an entry are left out.
pub fn chunks(ptx: &str) -> Vec<String> {
    let items = items(ptx);
    (0..CHUNKS)
        .filter(|&k| items.iter().any(|(e, _)| e.is_some_and(|e| chunk_of(e) == k)))
        .map(|k| items.iter().filter(|(e, _)| e.is_none_or(|e| chunk_of(e) == k)).map(|(_, t)| *t).collect())
        .collect()
}

/// What a log is kept under: ptxas (its version, size and time), the target, the text.
fn key(ptxas: &Identity, target: &str, text: &str) -> String {
    let half = |salt: u64| {
        let mut h = std::collections::hash_map::DefaultHasher::new();
        (salt, &ptxas.0, target, text).hash(&mut h);
        h.finish()
    };
    format!("{:016x}{:016x}-{}", half(1), half(2), text.len())
}

/// ptxas as a key sees it: `--version`'s output, its size and modification time.
#[derive(Clone)]
struct Identity(String);

/// Asked once per test run for the run's ptxas (each of the six assemblies used to run
/// `ptxas --version` again); asked afresh for any other.
fn identity(ptxas: &Path) -> Identity {
    static ONE: std::sync::OnceLock<(PathBuf, Identity)> = std::sync::OnceLock::new();
    let (path, known) = ONE.get_or_init(|| (ptxas.to_path_buf(), ask_identity(ptxas)));
    if path == ptxas { known.clone() } else { ask_identity(ptxas) }
}

fn ask_identity(ptxas: &Path) -> Identity {
    let version = Command::new(ptxas).arg("--version").output().map(|o| o.stdout).unwrap_or_default();
    let meta = std::fs::metadata(ptxas).ok().map(|m| (m.len(), m.modified().ok()));
    Identity(format!("{}|{meta:?}|{}", String::from_utf8_lossy(&version), ptxas.display()))
}

/// The folder of kept logs, made private (0700) where it is new; none where the test build's
/// folder is not here (this binary run on another machine), or where the folder is another
/// user's or writable by others.
fn cache_dir() -> Option<PathBuf> {
    use std::os::unix::fs::{DirBuilderExt, MetadataExt};
    let tmp = Path::new(env!("CARGO_TARGET_TMPDIR"));
    let dir = tmp.join("ptxas-logs");
    let owner = std::fs::metadata(tmp).ok()?.uid();
    if !dir.exists() {
        std::fs::DirBuilder::new().mode(0o700).create(&dir).ok()?;
    }
    let meta = std::fs::symlink_metadata(&dir).ok()?;
    (meta.is_dir() && meta.uid() == owner && meta.mode() & 0o022 == 0).then_some(dir)
}

/// The kept log of `slot` if it was made for `key`.
fn kept(dir: &Path, slot: &str, key: &str) -> Option<String> {
    let text = std::fs::read_to_string(dir.join(slot)).ok()?;
    let (first, log) = text.split_once('\n')?;
    (first == key).then(|| log.to_string())
}

/// Keeps `log` in `slot` under `key`: written to a private file of a random name, then renamed
/// over the slot (another test process may read it meanwhile). A failure only means no reuse.
fn keep(dir: &Path, slot: &str, key: &str, log: &str) {
    let write = || -> std::io::Result<()> {
        let mut f = tempfile::Builder::new().prefix(".piece-").tempfile_in(dir)?;
        write!(f, "{key}\n{log}")?;
        f.persist(dir.join(slot)).map_err(|e| e.error)?;
        Ok(())
    };
    let _ = write();
}

/// What ptxas made of a piece: its log, `None` where ptxas has no such target, or why it failed.
type Outcome = Result<Option<String>, String>;

/// ptxas over one piece: its log, `None` where ptxas has no `target`, or why it failed.
fn run(ptxas: &Path, target: &str, text: &str) -> Outcome {
    let dir = crate::common::private_dir("reduce-ptx-")?;
    let file = dir.path().join("piece.ptx");
    std::fs::write(&file, text).map_err(|e| e.to_string())?;
    let o = Command::new(ptxas)
        .args([&format!("-arch={target}"), "-v", "-o", "/dev/null"])
        .arg(&file)
        .output()
        .map_err(|e| format!("running {}: {e}", ptxas.display()))?;
    let log = String::from_utf8_lossy(&o.stderr).into_owned();
    if !o.status.success() && log.contains("is not defined for option 'gpu-name'") {
        return Ok(None);
    }
    if !o.status.success() {
        let names: Vec<&str> = items(text).into_iter().filter_map(|(e, _)| e).collect();
        return Err(format!("ptxas -arch={target} rejects the piece holding {}:\n{log}", names.join(", ")));
    }
    Ok(Some(log))
}

/// `ptxas -arch=target -v` over `ptx` (built for `arch`), piece by piece, the pieces' logs in
/// order; kept logs reused; up to one ptxas per core at once. `None` where ptxas has no
/// `target`.
pub fn assemble(ptxas: &Path, arch: &str, target: &str, ptx: &str) -> Result<Option<String>, Failed> {
    let me = identity(ptxas);
    let dir = cache_dir();
    let pieces = chunks(ptx);
    let logs: Vec<std::sync::Mutex<Option<Outcome>>> = pieces.iter().map(|_| Default::default()).collect();
    let next = std::sync::atomic::AtomicUsize::new(0);
    let workers = std::thread::available_parallelism().map_or(1, |n| n.get()).min(pieces.len());
    std::thread::scope(|s| {
        for _ in 0..workers {
            s.spawn(|| {
                loop {
                    let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    let Some(text) = pieces.get(i) else { break };
                    let (slot, key) = (format!("{arch}_for_{target}_{i:02}"), key(&me, target, text));
                    let got = match dir.as_deref().and_then(|d| kept(d, &slot, &key)) {
                        Some(log) => Ok(Some(log)),
                        None => {
                            let got = run(ptxas, target, text);
                            if let (Some(d), Ok(Some(log))) = (&dir, &got) {
                                keep(d, &slot, &key, log);
                            }
                            got
                        }
                    };
                    *logs[i].lock().unwrap() = Some(got);
                }
            });
        }
    });
    let mut all = String::new();
    for log in logs {
        match log.into_inner().unwrap() {
            Some(Ok(Some(log))) => all.push_str(&log),
            Some(Ok(None)) => return Ok(None),
            Some(Err(e)) => return Err(format!("the {arch} PTX: {e}").into()),
            None => return Err("a piece was not assembled".into()),
        }
    }
    Ok(Some(all))
}

/// Every entry of `ptx` is in exactly one piece, and every piece holds all the rest of the
/// module, in order.
pub fn check_pieces(ptx: &str) -> Result<(), Failed> {
    let rest: String = items(ptx).into_iter().filter(|(e, _)| e.is_none()).map(|(_, t)| t).collect();
    let mut seen: Vec<&str> = Vec::new();
    let pieces = chunks(ptx);
    for piece in &pieces {
        let own: String = items(piece).into_iter().filter(|(e, _)| e.is_none()).map(|(_, t)| t).collect();
        if own != rest {
            return Err("a piece does not hold the module's text outside its entries".into());
        }
        seen.extend(items(piece).into_iter().filter_map(|(e, _)| e));
    }
    let mut want = reduce_scan::ptx::entries(ptx);
    want.sort_unstable();
    seen.sort_unstable();
    if seen != want {
        return Err(format!("the pieces hold {} entries, the module {}", seen.len(), want.len()).into());
    }
    Ok(())
}

/// ptxas's report of every function (registers, barriers, shared memory, stack frame, spills),
/// by function: the lines after "Function properties for" and "Compiling entry function". The
/// one reading of a `ptxas -v` log here (`static_smem` and the stack-frame check use it too).
pub fn by_function(log: &str) -> std::collections::BTreeMap<String, Vec<String>> {
    let mut out = std::collections::BTreeMap::<String, Vec<String>>::new();
    let mut f = String::new();
    for line in log.lines() {
        let named =
            line.split("Compiling entry function '").nth(1).or_else(|| line.split("Function properties for ").nth(1));
        if let Some(rest) = named {
            f = rest.split('\'').next().unwrap_or(rest).trim().to_string();
        } else if line.contains("Used ") || line.contains("stack frame") {
            let v = out.entry(f.clone()).or_default();
            let line = line.trim().to_string();
            if !v.contains(&line) {
                v.push(line);
            }
        }
    }
    out
}

/// ptxas says of each function in the pieces what it says in the module: the first
/// `entries` entries of `ptx` (and the rest of it) as one module, and the same in pieces.
pub fn check_pieces_report_the_same(ptxas: &Path, target: &str, ptx: &str, entries: usize) -> Result<(), Failed> {
    let all = items(ptx);
    let keep: Vec<&str> = all.iter().filter_map(|(e, _)| *e).take(entries).collect();
    let small: String = all.iter().filter(|(e, _)| e.is_none_or(|e| keep.contains(&e))).map(|(_, t)| *t).collect();
    let whole = run(ptxas, target, &small)?.ok_or_else(|| format!("ptxas has no {target}"))?;
    let mut pieces = String::new();
    for piece in chunks(&small) {
        pieces.push_str(&run(ptxas, target, &piece)?.ok_or_else(|| format!("ptxas has no {target}"))?);
    }
    let (whole, pieces) = (by_function(&whole), by_function(&pieces));
    if whole.len() < entries {
        return Err(format!("ptxas reported {} functions of a module of {entries} entries", whole.len()).into());
    }
    if whole != pieces {
        let f = whole.keys().find(|f| whole.get(*f) != pieces.get(*f)).cloned().unwrap_or_default();
        return Err(format!("{f}: the module says {:?}, its pieces {:?}", whole.get(&f), pieces.get(&f)).into());
    }
    Ok(())
}
