//! The learner's files: `learn/exercises/NN_<lesson>.rs`, each copied once from its starting
//! file in `learn/start/` when its exercise opens (`course/src/open.rs`: the first at once, each next
//! one when the one before it passes, any one that `./x learn N` asks for), and never
//! overwritten (the learner's work is theirs; `./x learn N --reset` keeps a copy before it
//! starts over). An exercise not yet open is compiled from its starting file, which stays out
//! of the learner's folder: it holds the previous exercise's answer.
//!
//! With `LEARN_GPU=1` (`./x learn N --gpu`) it also compiles the learner's files to PTX, for
//! sm_70 (which every supported GPU loads) and sm_80 (exercise 19 teaches its `redux.sync`, so
//! that exercise's module is left out of the sm_70 build: `SM_80_ONLY`; a GPU loads the newest
//! build it runs). A crate generated in OUT_DIR holds them as modules and depends on the kernels crate with its `no-entries` feature, so that the learner's kernels
//! are the PTX's only entries; `reduce-scan-build` builds it as it builds the project's kernels
//! (runtime/build.rs) and a user's kernel crate. Without it, the embedded PTX is empty and `--gpu` says how to get it.
use std::env;
use std::fs;
use std::path::{Path, PathBuf};

#[path = "course/src/open.rs"]
mod open;

fn main() {
    let start = Path::new("start");
    let work = Path::new("exercises");
    let folder_time = fs::metadata(work).and_then(|m| m.modified()).ok();
    fs::create_dir_all(work).expect("cannot create learn/exercises/");
    renumbered(work, ("13_blelloch.rs", 13), ("14_blelloch.rs", 14));
    println!("cargo:rerun-if-changed=start");
    // A file that `./x learn N` opens (copies in) changes the folder: the build then compiles it
    // (and `.progress`, in the folder, says which exercises open by themselves).
    println!("cargo:rerun-if-changed=exercises");
    let passed = open::passed_in(&fs::read_to_string(work.join(".progress")).unwrap_or_default());
    let mut starts: Vec<PathBuf> = fs::read_dir(start)
        .expect("learn/start/ holds the starting files")
        .map(|e| e.expect("a file").path())
        .collect();
    starts.sort();
    let here = env::current_dir().expect("the learn/ folder");
    let mut files = Vec::new();
    for path in starts {
        let name = path.file_name().expect("a file name").to_string_lossy().into_owned();
        let number: u32 = name[..2].parse().expect("a starting file's name begins with its number");
        let mine = work.join(&name);
        if !mine.exists() && open::opens_by_itself(number, &passed) {
            fs::copy(&path, &mine).expect("cannot copy a starting file into learn/exercises/");
            // Copied with its time, as `cp -p` does (see `settled`).
            settled(&mine, fs::metadata(&path).and_then(|m| m.modified()).ok());
        }
        // The learner's file where it is there; the starting file until the exercise opens.
        let used = if mine.exists() { mine } else { path };
        println!("cargo:rerun-if-changed={}", used.display());
        files.push((name, here.join(used)));
    }
    // The folder keeps the time it had (a new one takes learn/start/'s), see `settled`.
    settled(work, folder_time.or_else(|| fs::metadata(start).and_then(|m| m.modified()).ok()));
    let out_dir = PathBuf::from(env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
    write_work(&out_dir, &files);
    println!("cargo:rerun-if-env-changed=LEARN_GPU");
    if env::var("LEARN_GPU").is_ok_and(|v| v == "1") {
        learner_ptx(&out_dir, &files);
    } else {
        for arch in ARCHES {
            let file = out_dir.join(format!("learner_{arch}.ptx"));
            if fs::read_to_string(&file).map_or(true, |old| !old.is_empty()) {
                fs::write(file, "").expect("cannot write the learner's PTX");
            }
        }
    }
}

/// Sets `path`'s modification time back to `time`. Cargo compares what a build script watches
/// with the time the script *started*, so the folder and file this script itself writes (the
/// first exercise copied in on a fresh checkout) would make every next build run it again and
/// recompile the learner's crate: a build with no change would compile something (`./x test`'s
/// no-rebuild check). A change made after this build (`./x learn N` opening a file, the learner's
/// edits) still gives a newer time, and reruns it.
fn settled(path: &Path, time: Option<std::time::SystemTime>) {
    let Some(time) = time else { return };
    // A folder opens read-only like a file; its time is set through that handle (futimens).
    if let Err(e) = fs::File::open(path).and_then(|f| f.set_modified(time)) {
        println!("cargo:warning=cannot set the time of {}: {e} (the next build reruns this script)", path.display());
    }
}

/// The architectures the learner's PTX is built for (`src/main.rs` includes one file of each).
const ARCHES: [&str; 2] = ["sm_70", "sm_80"];

/// The exercise files whose kernels need sm_80 (`redux.sync`): left out of the sm_70 build.
const SM_80_ONLY: [&str; 1] = ["19_redux.rs"];

/// An exercise that moved from number `old.1` to `new.1` (Blelloch's padding became 14 when the
/// BIT scan came before it): the learner's file moves to its new name, and its progress with it,
/// before the starting files are copied, so their work stays theirs.
fn renumbered(work: &Path, old: (&str, u32), new: (&str, u32)) {
    let (from, to) = (work.join(old.0), work.join(new.0));
    if !from.exists() || to.exists() {
        return;
    }
    // The file's own mentions of its number (its header and marker comments) follow it.
    let text = fs::read_to_string(&from).expect("cannot read a renumbered exercise file");
    let (o, n) = (old.1, new.1);
    let text = [("Exercise", ":"), ("EXERCISE", ":"), ("./x learn", " "), ("./x learn", "`")]
        .iter()
        .fold(text, |t, (word, after)| t.replace(&format!("{word} {o}{after}"), &format!("{word} {n}{after}")));
    fs::write(&to, text).expect("cannot write a renumbered exercise file");
    fs::remove_file(&from).expect("cannot remove the old name of a renumbered exercise file");
    let progress = work.join(".progress");
    if let Ok(text) = fs::read_to_string(&progress) {
        let passed = format!("{} passed", old.1);
        let moved: String =
            text.lines().map(|l| if l == passed { format!("{} passed\n", new.1) } else { format!("{l}\n") }).collect();
        fs::write(&progress, moved).expect("cannot update learn/exercises/.progress");
    }
    println!("cargo:warning=learn/exercises/{} is now {} (exercise {} became {})", old.0, new.0, old.1, new.1);
}

/// `work_modules.rs` (the learner's exercise modules, `e01` …, each at the file the build
/// uses) and `work_source.rs` (the macro `work_source!("NN_<lesson>.rs")`: that file's text),
/// both included by `src/main.rs`.
fn write_work(out_dir: &Path, files: &[(String, PathBuf)]) {
    let mut modules = String::new();
    let mut source = String::from("macro_rules! work_source {\n");
    for (name, path) in files {
        let path = path.display().to_string().replace('\\', "/");
        modules.push_str(&format!("#[path = \"{path}\"]\npub mod e{};\n", &name[..2]));
        source.push_str(&format!("    (\"{name}\") => {{ include_str!(\"{path}\") }};\n"));
    }
    source.push_str("}\n");
    write_if_changed(&out_dir.join("work_modules.rs"), &modules);
    write_if_changed(&out_dir.join("work_source.rs"), &source);
}

/// The learner's files compiled to PTX for sm_70 and sm_80 (see the module doc).
fn learner_ptx(out_dir: &Path, files: &[(String, PathBuf)]) {
    let here = env::current_dir().expect("the learn/ folder");
    let krate = out_dir.join("learner-ptx");
    fs::create_dir_all(krate.join("src")).expect("cannot create the learner's PTX crate");
    let kernels = here.join("../kernels").canonicalize().expect("the kernels crate");
    let manifest = format!(
        "[package]\nname = \"learner-ptx\"\nversion = \"0.0.0\"\nedition = \"2024\"\n\n[lib]\npath = \"src/lib.rs\"\n\n\
         [dependencies]\nkernels = {{ package = \"reduce-scan-kernels\", path = \"{}\", features = [\"no-entries\"] }}\n\n\
         [features]\nno-entries = []\n\n[workspace]\n",
        kernels.display()
    );
    write_if_changed(&krate.join("Cargo.toml"), &manifest);
    let mut lib = String::from(
        "#![no_std]\n#![feature(abi_ptx, stdarch_nvptx, asm_experimental_arch, macro_metavar_expr_concat)]\n\
         #![allow(unused, internal_features)]\n// The panic handler is the kernels crate's.\n\n",
    );
    for (name, file) in files {
        let module = format!("e{}", &name[..2]);
        let path = file.canonicalize().expect("an exercise file");
        if SM_80_ONLY.contains(&name.as_str()) {
            lib.push_str("#[cfg(any(not(target_arch = \"nvptx64\"), target_feature = \"sm_80\"))]\n");
        }
        lib.push_str(&format!("#[path = \"{}\"]\npub mod {module};\n", path.display()));
    }
    // The host times launches behind `stream_hold` (kernels/src/timing.rs), which the
    // project's PTX has: the same kernel here.
    lib.push_str(
        "kernels::kernel! { pub unsafe fn stream_hold(ns: u32) { let start = kernels::device::clock::globaltimer(); \
         while kernels::device::clock::globaltimer().wrapping_sub(start) < u64::from(ns) {} } }\n",
    );
    // complete_unroll is a generic function: one entry per block size, named as the project's.
    for block in [32, 64, 128, 256, 512, 1024] {
        lib.push_str(&format!(
            "kernels::kernel! {{ pub unsafe fn complete_unroll_{block}(a: kernels::device::global::GlobalMut<i32>, \
             b: kernels::device::global::GlobalMut<i32>, n: u32) {{ unsafe {{ e07::complete_unroll::<{block}>(a, b, n) }} }} }}\n"
        ));
    }
    write_if_changed(&krate.join("src/lib.rs"), &lib);
    // The same PTX build as the project's kernels and a user's kernel crate (reduce-scan-build),
    // for sm_70 and sm_80; a compile error stops the build with rustc's diagnostics for the
    // learner's file:line.
    // `./x learn N --gpu` builds the rest for the emulator (REDUCE_SCAN_NO_PTX=1): the learner's
    // PTX is built regardless.
    reduce_scan_build::Ptx::crate_at(&krate).name("learner").arches(&ARCHES).always().build();
}

/// Writes the generated crate's file only when its text changes: the PTX build reruns when the
/// crate's files are newer than its last run.
fn write_if_changed(path: &Path, text: &str) {
    if fs::read_to_string(path).is_ok_and(|old| old == text) {
        return;
    }
    fs::write(path, text).expect("cannot write the learner's PTX crate");
}
