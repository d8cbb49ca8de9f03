//! The learner's files: `learn/exercises/NN_<lesson>.rs`, each copied once from its starting
//! file in `learn/start/` when it is not there yet, and never overwritten (the learner's work
//! is theirs; `./x learn N --reset` keeps a copy before it starts over).
//!
//! With `LEARN_GPU=1` (`./x learn N --gpu`) it also compiles the learner's files to PTX (sm_70,
//! which every supported GPU loads): a crate generated in OUT_DIR holds them as modules and
//! depends on the kernels crate with its `no-entries` feature, so that the learner's kernels
//! are the PTX's only entries; `reduce-scan-build` builds it as it builds the project's kernels
//! (runtime/build.rs) and a user's kernel crate. Without it, the embedded PTX is empty and `--gpu` says how to get it.
use std::env;
use std::fs;
use std::path::{Path, PathBuf};

fn main() {
    let start = Path::new("start");
    let work = Path::new("exercises");
    fs::create_dir_all(work).expect("cannot create learn/exercises/");
    renumbered(work, ("13_blelloch.rs", 13), ("14_blelloch.rs", 14));
    println!("cargo:rerun-if-changed=start");
    for entry in fs::read_dir(start).expect("learn/start/ holds the starting files") {
        let path = entry.expect("a starting file").path();
        let mine = work.join(path.file_name().expect("a file name"));
        if !mine.exists() {
            fs::copy(&path, &mine).expect("cannot copy a starting file into learn/exercises/");
        }
        println!("cargo:rerun-if-changed={}", mine.display());
    }
    println!("cargo:rerun-if-env-changed=LEARN_GPU");
    let out_dir = PathBuf::from(env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
    if env::var("LEARN_GPU").is_ok_and(|v| v == "1") {
        learner_ptx(&out_dir, work);
    } else {
        let file = out_dir.join("learner_sm_70.ptx");
        if fs::read_to_string(&file).map_or(true, |old| !old.is_empty()) {
            fs::write(file, "").expect("cannot write the learner's PTX");
        }
    }
}

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

/// The learner's files compiled to PTX for sm_70 (see the module doc).
fn learner_ptx(out_dir: &Path, work: &Path) {
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
    let mut files: Vec<PathBuf> =
        fs::read_dir(work).expect("learn/exercises/").filter_map(|e| Some(e.ok()?.path())).collect();
    files.retain(|p| p.extension().is_some_and(|e| e == "rs"));
    files.sort();
    for file in &files {
        let stem = file.file_stem().expect("a file name").to_string_lossy().into_owned();
        let module = format!("e{}", &stem[..2]);
        let path = here.join(file).canonicalize().expect("an exercise file");
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
    // for sm_70 alone; a compile error stops the build with rustc's diagnostics for the learner's
    // file:line.
    // `./x learn N --gpu` builds the rest for the emulator (REDUCE_SCAN_NO_PTX=1): the learner's
    // PTX is built regardless.
    reduce_scan_build::Ptx::crate_at(&krate).name("learner").arches(&["sm_70"]).always().build();
}

/// Writes the generated crate's file only when its text changes: the PTX build reruns when the
/// crate's files are newer than its last run.
fn write_if_changed(path: &Path, text: &str) {
    if fs::read_to_string(path).is_ok_and(|old| old == text) {
        return;
    }
    fs::write(path, text).expect("cannot write the learner's PTX crate");
}
