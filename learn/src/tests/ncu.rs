//! `./x learn N --gpu`'s Nsight Compute table (`course::profile`), with a stand-in ncu: the
//! learner's kernel profiled in a child run, its counters beside the emulator's.

use std::path::Path;

use course::exercises::EXERCISES;
use course::profile::{GPU_CHILD, beside_emulator};

use crate::attempts::starting;

/// Held by each test while its stand-in ncu is written and run. Without it, one test's
/// fork can inherit the other's script while it is still open for writing, and the other's
/// exec then fails with "Text file busy" (ETXTBSY).
static STAND_IN: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// A private temporary folder for a stand-in ncu (random name, mode 0700, removed on drop).
fn private_dir() -> tempfile::TempDir {
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::Permissions::from_mode(0o700);
    tempfile::Builder::new().prefix("learn-fake-ncu-").permissions(mode).tempdir().unwrap()
}

/// A stand-in for ncu: it records its arguments and writes, as its CSV log, one launch of
/// `neighbored_less` with a global load efficiency of 12.5 % and 4,096 load requests.
fn fake_ncu(dir: &Path) -> std::path::PathBuf {
    let csv = "\"ID\",\"Process ID\",\"Process Name\",\"Host Name\",\"Kernel Name\",\"Context\",\"Stream\",\
               \"Section Name\",\"Metric Name\",\"Metric Unit\",\"Metric Value\"\n\
               \"0\",\"1\",\"learn\",\"h\",\"neighbored_less\",\"1\",\"7\",\"s\",\
               \"smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.pct\",\"%\",\"12.5\"\n\
               \"0\",\"1\",\"learn\",\"h\",\"neighbored_less\",\"1\",\"7\",\"s\",\
               \"l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum\",\"sector\",\"16,384\"\n\
               \"0\",\"1\",\"learn\",\"h\",\"neighbored_less\",\"1\",\"7\",\"s\",\
               \"l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum\",\"request\",\"4,096\"\n";
    std::fs::write(dir.join("sample.csv"), csv).unwrap();
    let script = format!(
        "#!/bin/sh\nprintf '%s\\n' \"$@\" > '{dir}/args'\nwhile [ $# -gt 0 ]; do\n  if [ \"$1\" = --log-file ]; \
         then cp '{dir}/sample.csv' \"$2\"; fi\n  shift\ndone\n",
        dir = dir.display()
    );
    let path = dir.join("ncu");
    std::fs::write(&path, script).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o700)).unwrap();
    path
}

#[test]
fn ncus_counters_stand_beside_the_emulators() {
    let _one_at_a_time = STAND_IN.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let dir = private_dir();
    let ncu = fake_ncu(dir.path());
    let ex = &EXERCISES[0];
    let text = beside_emulator(ex, &starting()[0], &ncu, Path::new("/bin/true")).unwrap();
    let args = std::fs::read_to_string(dir.path().join("args")).unwrap();
    // ncu was told to profile the learner's kernel in a child run of this program.
    let args: Vec<&str> = args.lines().collect();
    for want in [&["-k", "regex:^(neighbored_less)$"][..], &["/bin/true", "1", GPU_CHILD]] {
        assert!(args.windows(want.len()).any(|w| w == want), "{want:?} not in ncu's arguments {args:?}");
    }
    // Its values beside the emulator's, the lesson's counter marked.
    let line = |what: &str| text.lines().find(|l| l.starts_with(what)).unwrap_or_else(|| panic!("{what}:\n{text}"));
    let gld = line("global load efficiency %");
    assert!(gld.trim_end().ends_with("12.50"), "{gld}");
    let req = line("global load requests");
    assert!(req.trim_end().ends_with("4096"), "{req}");
    let lanes = line("active lanes per global request");
    assert!(lanes.contains("5.35") && lanes.contains("—") && lanes.contains("the lesson's counter"), "{lanes}");
    assert!(text.starts_with("Nsight Compute on your kernel (1 launch(es)) at n = 65536, block 512"), "{text}");
}

#[test]
fn a_run_that_profiled_nothing_says_so() {
    let _one_at_a_time = STAND_IN.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let dir = private_dir();
    let ncu = fake_ncu(dir.path());
    // Exercise 2's kernel is `interleaved`: the sample holds only `neighbored_less`.
    let e = beside_emulator(&EXERCISES[1], &starting()[1], &ncu, Path::new("/bin/true")).unwrap_err();
    assert_eq!(e, "ncu profiled none of your kernels (interleaved)");
}
