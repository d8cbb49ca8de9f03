//! The learner's files: `learn/exercises/NN_<lesson>.rs`, each copied once from its starting
//! file in `learn/start/` when it is not there yet, and never overwritten (the learner's work
//! is theirs; `./x learn N --reset` keeps a copy before it starts over). Also gives the binary
//! the run path to the stub libcuda that host/build.rs built, as the root package does.
use std::fs;
use std::path::Path;

fn main() {
    let start = Path::new("start");
    let work = Path::new("exercises");
    fs::create_dir_all(work).expect("cannot create learn/exercises/");
    println!("cargo:rerun-if-changed=start");
    for entry in fs::read_dir(start).expect("learn/start/ holds the starting files") {
        let path = entry.expect("a starting file").path();
        let mine = work.join(path.file_name().expect("a file name"));
        if !mine.exists() {
            fs::copy(&path, &mine).expect("cannot copy a starting file into learn/exercises/");
        }
        println!("cargo:rerun-if-changed={}", mine.display());
    }
    println!("cargo:rerun-if-env-changed=DEP_CUDASTUB_DIR");
    if let Ok(dir) = std::env::var("DEP_CUDASTUB_DIR")
        && !dir.is_empty()
    {
        println!("cargo:rustc-link-arg=-Wl,-rpath,{dir}");
    }
}
