//! The command line of `./x learn`: the list of exercises and the learner's progress, a check
//! and its verdict, the solution beside the learner's file, a reset, and the GPU run.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use crate::exercises::{Attempt, EXERCISES, Exercise, Measure};
use crate::{check, diff, open, profile};

/// What the learner's program (`learn/src/main.rs`) brings to the course: its kernels, compiled
/// from the learner's files, and their PTX.
pub struct Learner {
    /// One attempt per exercise, in order: the learner's file where the exercise is open, its
    /// starting file until then.
    pub attempts: [Attempt; 27],
    /// The learner's kernels as PTX, built under `LEARN_GPU=1` (`./x learn N --gpu`); empty
    /// otherwise.
    pub ptx: &'static reduce_scan::ptx::Module,
}

/// The `learn/` folder: the checkout the course was built in (this crate is `learn/course/`), or,
/// for a binary carried to a machine without Rust (a GPU host, `scripts/gpu/learn_gpu.sh`),
/// `learn/` under the current folder, the same checkout's copy there.
fn learn_dir() -> PathBuf {
    match Path::new(env!("CARGO_MANIFEST_DIR")).parent() {
        Some(built) if built.is_dir() => built.to_path_buf(),
        _ => PathBuf::from("learn"),
    }
}

/// Where passed exercises are remembered.
fn progress_file() -> PathBuf {
    learn_dir().join("exercises/.progress")
}

fn passed_ones() -> Vec<u32> {
    open::passed_in(&std::fs::read_to_string(progress_file()).unwrap_or_default())
}

/// The learner's file of `ex`.
fn learner_file(ex: &Exercise) -> PathBuf {
    learn_dir().join("exercises").join(ex.file())
}

/// Opens `ex`: copies its starting file into the learner's folder if it is not there yet (the
/// build compiled that same starting file in its place, so a check that follows, `checking`, is
/// of it). Says so on `err`. An error is one line.
fn open_exercise(ex: &Exercise, checking: bool, err: &mut dyn std::io::Write) -> Result<(), String> {
    let mine = learner_file(ex);
    if mine.exists() {
        return Ok(());
    }
    let start = learn_dir().join("start").join(ex.file());
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    let copied = std::fs::read(&start).and_then(|text| {
        use std::io::Write;
        if let Some(folder) = mine.parent() {
            std::fs::create_dir_all(folder)?;
        }
        options.open(&mine)?.write_all(&text)
    });
    copied.map_err(|e| {
        format!("learn: cannot open exercise {}: copying {} to {}: {e}", ex.number, start.display(), mine.display())
    })?;
    let then = if checking {
        "this first check runs its starting file, the same text".to_string()
    } else {
        format!("a copy of its starting file; `./x learn {}` checks it", ex.number)
    };
    let _ = writeln!(err, "opened exercise {}: your file is learn/exercises/{} ({then})", ex.number, ex.file());
    Ok(())
}

/// Opens the exercise after `ex`, once `ex` passed (see `open.rs`).
fn open_next(ex: &Exercise) {
    if let Some(next) = EXERCISES.iter().find(|e| e.number == ex.number + 1)
        && open::opens_by_itself(next.number, &passed_ones())
    {
        let _ = open_exercise(next, false, &mut std::io::stderr());
    }
}

fn remember(number: u32, passed: bool) {
    let mut done: Vec<u32> = passed_ones().into_iter().filter(|&n| n != number).collect();
    if passed {
        done.push(number);
    }
    done.sort_unstable();
    let text: String = done.iter().map(|n| format!("{n} passed\n")).collect();
    // Written only when it changes: the build watches learn/exercises/, so a rewrite would make
    // the next check rebuild.
    if std::fs::read_to_string(progress_file()).ok().as_deref() != Some(text.as_str()) {
        let _ = std::fs::write(progress_file(), text);
    }
}

/// Writes `text` to stdout. A closed pipe (`./x learn | head -1`) ends the writing quietly: the
/// reader has what it wanted, and the exit status is the check's.
fn say(text: &str) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes()).and_then(|()| out.flush());
}

/// `println!` through [`say`].
macro_rules! out {
    ($($arg:tt)*) => { say(&format!("{}\n", format_args!($($arg)*))) };
}

fn list() -> ExitCode {
    let done = passed_ones();
    out!("The book's lessons as exercises ({} of {} passed). Check one: ./x learn N", done.len(), EXERCISES.len());
    for ex in &EXERCISES {
        let mark = if done.contains(&ex.number) { "[x]" } else { "[ ]" };
        let shut = if learner_file(ex).exists() { "" } else { ", not open yet" };
        out!("{mark} {:>2}  {:<24} {}  (from {}{shut})", ex.number, ex.kernel(), ex.title, ex.from);
    }
    out!(
        "Your files: learn/exercises/. Each is copied from learn/start/ when its exercise opens (the next one when \
         one passes, or any one you check: ./x learn N), and never overwritten."
    );
    ExitCode::SUCCESS
}

/// What `./x learn N` prints for `report`: the exercise, the answer, the faults, the measure
/// and the verdict (the README's "Learn" walkthrough is this text, checked by a test).
pub fn render(ex: &Exercise, report: &check::Report, passed: &[u32]) -> String {
    use std::fmt::Write;
    let mut t = String::new();
    let _ = match ex.hunt {
        Some(bug) => writeln!(
            t,
            "exercise {} of {}: {}_{bug}, the project's {} with a bug planted — {}",
            ex.number,
            EXERCISES.len(),
            ex.lesson,
            ex.lesson,
            ex.title
        ),
        None => {
            writeln!(t, "exercise {} of {}: {}, from {} — {}", ex.number, EXERCISES.len(), ex.lesson, ex.from, ex.title)
        }
    };
    let _ = writeln!(t, "the book: {}", ex.book);
    let _ = writeln!(t, "your file: learn/exercises/{}", ex.file());
    let _ = writeln!(t);
    let blocks: Vec<String> = check::BLOCKS.iter().map(|b| b.to_string()).collect();
    let (first, last) = (check::SIZES[0], check::SIZES[check::SIZES.len() - 1]);
    let sizes = if reduce_scan::scan::find(ex.lesson).is_ok() {
        format!("{} sizes ({first} to {last}), inclusive and exclusive", check::SIZES.len())
    } else {
        let v = reduce_scan::registry::find(ex.lesson).ok();
        // The kernels of 16-byte loads start their input 0 to 3 elements past a boundary.
        let shifted = v.is_some_and(|v| v.grid == reduce_scan::reduce::plan::Grid::Resident && v.items_per_thread > 1);
        let shifted = if shifted { ", each 0 to 3 elements past a 16-byte boundary" } else { "" };
        format!("{} sizes ({first} to {last}){shifted} at blocks {}", check::SIZES.len(), blocks.join(" and "))
    };
    let _ = match (&report.wrong, &report.fault) {
        (_, Some(_)) => writeln!(t, "answer   none: the emulator stopped the kernel (below)"),
        (Some(wrong), None) => writeln!(t, "answer   WRONG: {wrong}"),
        (None, None) => writeln!(t, "answer   right at {sizes}"),
    };
    let _ = match &report.fault {
        Some(fault) => writeln!(t, "faults   {fault}"),
        None => writeln!(t, "faults   none (memcheck, racecheck, initcheck, synccheck)"),
    };
    let name = ex.goal.measure().name();
    // Where the measure comes from: the file's text, or the counted run's shape.
    let shape = match ex.goal.measure() {
        Measure::Loops | Measure::StaticShared => String::new(),
        _ => format!(" at n = {}, block {}", report.measure_n, check::MEASURE_BLOCK),
    };
    let judged = report.wrong.is_none() && report.fault.is_none();
    let _ = match report.measure {
        Some(m) => {
            let mark = match (judged, ex.goal.met(m)) {
                (false, _) => "not judged until the answer is right",
                (true, true) => "reached",
                (true, false) => "not yet",
            };
            writeln!(t, "measure  {name} {}{} ({}): {mark}", fmt(m), shape, ex.goal.want())
        }
        None => writeln!(t, "measure  {name} not taken (the kernel did not run)"),
    };
    let _ = writeln!(t);
    t.push_str(&verdict(ex, report, passed));
    t
}

/// The verdict's lines of [`render`]: the next exercise after a pass (or, after the last, which
/// are left of those not in `passed`), else what to do now.
fn verdict(ex: &Exercise, report: &check::Report, passed: &[u32]) -> String {
    if report.passed(ex) {
        return match EXERCISES.iter().find(|e| e.number == ex.number + 1) {
            Some(n) => format!("PASSED. Next: ./x learn {} ({}).\n", n.number, n.kernel()),
            None => {
                let left: Vec<String> = EXERCISES
                    .iter()
                    .filter(|e| e.number != ex.number && !passed.contains(&e.number))
                    .map(|e| e.number.to_string())
                    .collect();
                match left.len() {
                    0 => "PASSED. That was the last exercise, and every one has passed.\n".to_string(),
                    _ => format!(
                        "PASSED. That was the last exercise; not passed yet: {} (./x learn lists them).\n",
                        left.join(", ")
                    ),
                }
            }
        };
    }
    let why = match (&report.fault, &report.wrong) {
        (Some(_), _) => "NOT YET: fix the fault first. Its line above names the check that stopped the kernel, the \
                         size and block it ran at, the block and thread, and the line of your file."
            .to_string(),
        (None, Some(_)) => "NOT YET: the answer is wrong. The line above says where: the size and block, and the \
                            first block sum (or scan element) that differs from the CPU's. Look at which elements \
                            your loop and your index leave out or count twice there."
            .to_string(),
        (None, None) => format!("NOT YET. {}", ex.text),
    };
    format!(
        "{}\nThe place is marked EXERCISE in your file; the project's kernel: ./x learn {} --solution\n",
        wrap(&why, 96),
        ex.number
    )
}

/// `text` in lines of at most `width` characters, broken at spaces.
fn wrap(text: &str, width: usize) -> String {
    let mut lines: Vec<String> = vec![String::new()];
    for word in text.split_whitespace() {
        let line = lines.last_mut().expect("one line at least");
        if !line.is_empty() && line.chars().count() + 1 + word.chars().count() > width {
            lines.push(word.to_string());
        } else {
            if !line.is_empty() {
                line.push(' ');
            }
            line.push_str(word);
        }
    }
    lines.join("\n")
}

/// Opens the GPU with the learner's PTX in place of the project's, for exercise `ex`: one line
/// saying why not where the build has no PTX or the GPU is too old for the lesson's instruction.
fn learner_gpu(ex: &Exercise, ptx: &'static reduce_scan::ptx::Module) -> Result<reduce_scan::Backend, String> {
    if !ptx.built() {
        return Err("this build has no PTX of your kernels; `./x learn N --gpu` builds it".into());
    }
    reduce_scan::ptx::load_module_instead(ptx).map_err(|e| e.to_string())?;
    let backend = reduce_scan::Backend::gpu().map_err(|e| e.to_string())?;
    let need = match reduce_scan::registry::find(ex.lesson) {
        Ok(v) => v.min_cc,
        Err(_) => reduce_scan::scan::find(ex.lesson).map_or((7, 0), |s| s.min_cc),
    };
    let info = backend.info();
    if info.compute_capability < need {
        return Err(format!(
            "exercise {} ({}) needs compute capability {}.{} or newer ({} is an sm_{}{} instruction); {} has {}.{}, \
             so your kernel cannot run on it. The emulator's check above is the exercise's verdict.",
            ex.number,
            ex.lesson,
            need.0,
            need.1,
            if ex.lesson == "redux" { "redux.sync" } else { "its kernel's" },
            need.0,
            need.1,
            info.name,
            info.compute_capability.0,
            info.compute_capability.1
        ));
    }
    Ok(backend)
}

/// Runs the learner's kernel on the GPU at the committed set's shape, beside the project's
/// committed figure.
fn gpu(ex: &Exercise, attempt: &Attempt, ptx: &'static reduce_scan::ptx::Module) -> Result<String, String> {
    let backend = learner_gpu(ex, ptx)?;
    let (wrong, times) = check::on_gpu(&backend, ex, attempt, 10)?;
    let median = times.get(times.len() / 2).copied().unwrap_or(f64::NAN);
    let mut t = format!(
        "on the GPU ({}): your kernel {median:.1} µs at n = 2^24, block {} (median of {} timed runs, CUDA events; \
         {} PTX built from your file); its answer {}",
        backend.info().name,
        check::MEASURE_BLOCK,
        times.len(),
        ptx.for_compute_capability(backend.info().compute_capability).map_or("no", |(arch, _)| arch),
        wrong.as_deref().map_or("agrees with the CPU".to_string(), |w| format!("is WRONG: {w}"))
    );
    let kind = reduce_scan::scan::find(ex.lesson).ok().map(|_| "inclusive");
    if let Some(f) = reduce_scan_cli::committed::figures(ex.lesson, kind) {
        let p = reduce_scan_cli::committed::provenance();
        t.push_str(&format!(
            "\nthe project's {} measured {:.1} µs at the same shape ({} on {}, {})",
            ex.lesson,
            f.time_us,
            p.gpu,
            p.date,
            reduce_scan_cli::committed::SET
        ));
    }
    t.push('\n');
    t.push_str(&match (reduce_scan::metrics::find_ncu(), std::env::current_exe()) {
        (Some(ncu), Ok(exe)) => profile::beside_emulator(ex, attempt, &ncu, &exe)
            .unwrap_or_else(|why| format!("Nsight Compute: {why}; the emulator's counters: ./x learn {}", ex.number)),
        (None, _) => format!(
            "Nsight Compute: no ncu here (set NCU, put ncu on the PATH, or install the CUDA toolkit); the emulator's \
             counters: ./x learn {}",
            ex.number
        ),
        (_, Err(e)) => format!("Nsight Compute: cannot find this program to profile it: {e}"),
    });
    Ok(t)
}

/// `learn N --gpu-child`: one run of the learner's kernel on the GPU at the check's measure shape,
/// for Nsight Compute to profile ([`profile::beside_emulator`] starts it under ncu).
fn gpu_child(ex: &Exercise, learner: &Learner) -> ExitCode {
    let attempt = learner.attempts[(ex.number - 1) as usize];
    let ran = learner_gpu(ex, learner.ptx).and_then(|backend| check::profiled_run(&backend, ex, &attempt));
    match ran {
        Ok(()) => ExitCode::SUCCESS,
        Err(why) => {
            eprintln!("learn: {}: {why}", profile::GPU_CHILD);
            ExitCode::from(2)
        }
    }
}

fn fmt(x: f64) -> String {
    if x.fract() == 0.0 { format!("{x:.0}") } else { format!("{x:.2}") }
}

fn solution(ex: &Exercise) -> ExitCode {
    let mine = learner_file(ex);
    let theirs = learn_dir().join("..").join(ex.solution_path());
    let read = |p: &Path| std::fs::read_to_string(p).map_err(|e| format!("learn: cannot read {}: {e}", p.display()));
    match (read(&mine), read(&theirs)) {
        (Ok(a), Ok(b)) => {
            out!("--- learn/exercises/{} (yours)", ex.file());
            out!("+++ {} (the project's, doc comments left out)", ex.solution_path());
            say(&diff::unified(&diff::normalise(&a), &diff::normalise(&b), 2));
            ExitCode::SUCCESS
        }
        (Err(e), _) | (_, Err(e)) => {
            eprintln!("{e}");
            ExitCode::from(2)
        }
    }
}

fn reset(ex: &Exercise) -> ExitCode {
    let mine = learner_file(ex);
    if !mine.exists() {
        eprintln!(
            "learn: exercise {} is not open yet, so there is nothing to reset (./x learn {} opens it)",
            ex.number, ex.number
        );
        return ExitCode::from(2);
    }
    let stamp = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let copy = mine.with_extension(format!("rs.bak-{stamp}"));
    if let Err(e) = std::fs::copy(&mine, &copy).and_then(|_| std::fs::remove_file(&mine)) {
        eprintln!("learn: cannot keep a copy of {}: {e}; nothing was changed", mine.display());
        return ExitCode::from(2);
    }
    remember(ex.number, false);
    out!("your file is kept as {}; the next build copies the starting file back", copy.display());
    ExitCode::SUCCESS
}

/// The first check after an exercise opens ran its starting file, compiled before the file was
/// copied in (`open_exercise`): where the learner's file still holds that same text, a fault or a
/// wrong answer names the learner's file, the one they will edit, not `learn/start/`'s.
fn in_learners_file(ex: &Exercise, report: &mut check::Report) {
    let start = learn_dir().join("start").join(ex.file());
    let same = matches!((std::fs::read(&start), std::fs::read(learner_file(ex))), (Ok(a), Ok(b)) if a == b);
    if same {
        report.name_learners_file(&ex.file());
    }
}

/// Checks `attempt` as `ex`, prints the report, remembers the verdict and, on a pass, opens the
/// next exercise. Whether it passed.
fn checked(ex: &Exercise, attempt: &Attempt) -> bool {
    let mut report = check::check(ex, attempt);
    in_learners_file(ex, &mut report);
    let passed = report.passed(ex);
    say(&render(ex, &report, &passed_ones()));
    remember(ex.number, passed);
    if passed {
        open_next(ex);
    }
    passed
}

/// `./x learn [N [--gpu | --solution | --reset]]` with the learner's kernels: the arguments are
/// the program's. Exit status: 0 when the exercise passes (or the list), 1 when not yet, 2 for
/// bad input.
pub fn run(learner: &Learner) -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let usage = "usage: ./x learn [N [--gpu | --solution | --reset]]";
    let Some(first) = args.first() else { return list() };
    let known = EXERCISES.len();
    let Some(ex) = first.parse::<u32>().ok().and_then(|n| EXERCISES.iter().find(|e| e.number == n)) else {
        eprintln!("learn: no exercise `{first}`; the exercises are 1 to {known} (./x learn lists them)");
        return ExitCode::from(2);
    };
    let second = args.get(1).map(String::as_str);
    // Checking an exercise, or asking for its solution, opens it (its file is the learner's).
    if matches!(second, None | Some("--gpu" | "--solution"))
        && let Err(e) = open_exercise(ex, second != Some("--solution"), &mut std::io::stderr())
    {
        eprintln!("{e}");
        return ExitCode::from(2);
    }
    match second {
        None => {
            let attempt = learner.attempts[(ex.number - 1) as usize];
            if checked(ex, &attempt) { ExitCode::SUCCESS } else { ExitCode::from(1) }
        }
        Some("--gpu") if args.len() == 2 => {
            let attempt = learner.attempts[(ex.number - 1) as usize];
            let passed = checked(ex, &attempt);
            match gpu(ex, &attempt, learner.ptx) {
                Ok(text) => out!("\n{text}"),
                Err(why) => {
                    eprintln!("learn: --gpu: {why}");
                    return ExitCode::from(2);
                }
            }
            if passed { ExitCode::SUCCESS } else { ExitCode::from(1) }
        }
        Some("--solution") if args.len() == 2 => solution(ex),
        Some(profile::GPU_CHILD) if args.len() == 2 => gpu_child(ex, learner),
        Some("--reset") if args.len() == 2 => reset(ex),
        Some(other) => {
            eprintln!("learn: unknown argument `{other}`; {usage}");
            ExitCode::from(2)
        }
    }
}
