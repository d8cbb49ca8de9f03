//! The course's own tests: every exercise's project kernel passes its check, the exercises
//! follow the book, the verdict's wording, the README's claims about the course, and the
//! check's models. The tests of the starting files are the learner crate's (`learn/src/tests.rs`),
//! which compiles them.

use crate::check;
use crate::cli::render;
use crate::exercises::{EXERCISES, Measure, solution};

#[test]
fn the_projects_kernel_passes_every_exercise() {
    for ex in &EXERCISES {
        let report = check::check(ex, &solution(ex));
        let at = format!("exercise {} ({}), the project's kernel", ex.number, ex.lesson);
        assert!(report.fault.is_none(), "{at}: a fault: {:?}", report.fault);
        assert!(report.wrong.is_none(), "{at}: a wrong answer: {:?}", report.wrong);
        let m = report.measure.unwrap_or_else(|| panic!("{at}: no measure"));
        assert!(ex.goal.met(m), "{at}: its {} is {m}, the goal {:?}", ex.goal.measure().name(), ex.goal);
    }
}

#[test]
fn the_exercises_follow_the_book_and_name_registered_kernels() {
    assert!(EXERCISES.len() >= 24);
    assert!(EXERCISES.iter().filter(|e| e.hunt.is_some()).count() >= 4);
    for (i, ex) in EXERCISES.iter().enumerate() {
        assert_eq!(ex.number as usize, i + 1);
        // A registered variant, or a lesson kernel that no registry holds,
        // and then an entry of the project's PTX.
        let lesson_kernel = |name: &str| {
            crate::exercises::LESSON_KERNELS.contains(&name)
                && reduce_scan::ptx::ARCHES.iter().all(|(_, _, ptx)| reduce_scan::ptx::entries(ptx).contains(&name))
        };
        let registered = |name| {
            reduce_scan::registry::find(name).is_ok() || reduce_scan::scan::find(name).is_ok() || lesson_kernel(name)
        };
        assert!(registered(ex.lesson), "{}", ex.lesson);
        let from = ex.from.split(',').next().unwrap_or_default();
        assert!(registered(from), "{}", ex.from);
        assert!(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").join(ex.solution_path()).exists());
        let start = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../start").join(ex.file());
        let text = std::fs::read_to_string(&start).unwrap_or_else(|e| panic!("{}: {e}", start.display()));
        assert!(text.contains(&format!("EXERCISE {}:", ex.number)), "{}: no EXERCISE marker", start.display());
        let _ = Measure::Loops;
    }
}

/// The first check after an exercise opens runs its starting file (compiled before the copy):
/// its fault names the learner's copy, every mention of it.
#[test]
fn a_fault_in_the_starting_file_names_the_learners_copy() {
    let ex = &EXERCISES[24];
    let file = ex.file();
    let fault =
        format!("n = 1, block 128: race … wrote it at learn/start/{file}:23, then … read it at learn/start/{file}:65");
    let mut report = check::Report { wrong: None, fault: Some(fault), measure: None, measure_n: check::MEASURE_N };
    report.name_learners_file(&file);
    let got = report.fault.unwrap();
    assert!(!got.contains("learn/start/"), "{got}");
    assert_eq!(got.matches(&format!("learn/exercises/{file}:")).count(), 2, "{got}");
}

/// After a fault or a wrong answer the verdict speaks of that, not of the lesson's hint, and the
/// measure is not judged.
#[test]
fn a_fault_or_a_wrong_answer_is_what_the_verdict_speaks_of() {
    let ex = &EXERCISES[1];
    let fault = "racecheck: … n = 33, block 128: … at learn/exercises/02_interleaved.rs:50".to_string();
    let wrong = "n = 1025, block 128: block 1 wrote 5, expected 7 (the sum of its 128 elements from 128)".to_string();
    for (report, says) in [
        (
            check::Report { wrong: None, fault: Some(fault), measure: None, measure_n: check::MEASURE_N },
            "NOT YET: fix the fault first.",
        ),
        (
            check::Report { wrong: Some(wrong), fault: None, measure: Some(2.0), measure_n: check::MEASURE_N },
            "NOT YET: the answer is wrong.",
        ),
    ] {
        let text = render(ex, &report, &[]);
        assert!(text.contains(says), "exercise 2: the verdict should say {says:?}:\n{text}");
        let hint = ex.text.split_whitespace().take(6).collect::<Vec<_>>().join(" ");
        assert!(!text.contains(&hint), "exercise 2: the lesson's hint is repeated after a failure:\n{text}");
        assert!(!text.contains("reached"), "exercise 2: a measure is judged after a failure:\n{text}");
    }
}

/// What the README's "Learn" section says of the exercises holds: their number, one topic per
/// exercise, and the ones that do not start from the previous lesson's kernel.
#[test]
fn the_readme_says_what_the_exercises_are() {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../README.md")).unwrap();
    let learn = readme.split_once("## Learn: the lessons as exercises").expect("README.md has a Learn section").1;
    let learn = learn.split_whitespace().collect::<Vec<_>>().join(" ");
    let n = EXERCISES.iter().filter(|e| e.hunt.is_none()).count();
    let hunts = EXERCISES.len() - n;
    assert!(
        learn.contains(&format!("into {} exercises: {n} lessons", EXERCISES.len()))
            && learn.contains(&format!("then {hunts} bug hunts")),
        "README.md's Learn section: the number of exercises ({}), of lessons ({n}) and of bug hunts ({hunts})",
        EXERCISES.len()
    );
    let topics = learn.split_once("):").and_then(|(_, rest)| rest.split_once("; then ")).map(|(t, _)| t);
    let topics = topics.expect("README.md's Learn section lists the topics, then `; then N bug hunts`");
    assert_eq!(topics.split(';').count(), n, "README.md's Learn section: one topic per exercise:{topics}");
    // The exceptions named: every exercise whose `from` is not the lesson before it.
    for ex in EXERCISES.iter().skip(1).filter(|e| e.hunt.is_none()) {
        let previous = EXERCISES[(ex.number - 2) as usize].lesson;
        let from = ex.from.split(',').next().unwrap_or_default();
        if from != previous {
            let named =
                format!("{}, {}`{from}`", ex.number, if ex.number == 8 { "which starts from " } else { "from " });
            assert!(
                learn.contains(&named),
                "README.md's Learn section should name exercise {}'s start: {named:?}",
                ex.number
            );
        }
    }
}

/// The README's command list is `./x`'s: as many commands as it says, each one `./x` knows.
#[test]
fn the_readme_lists_the_commands_of_x() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
    let readme = std::fs::read_to_string(format!("{root}/README.md")).unwrap();
    let x = std::fs::read_to_string(format!("{root}/x")).unwrap();
    let section = readme.split_once("## The commands").expect("README.md has `## The commands`").1;
    let block = section.split_once("```sh\n").and_then(|(_, b)| b.split_once("```")).map(|(b, _)| b).unwrap();
    let commands: Vec<&str> = block.lines().filter_map(|l| l.strip_prefix("./x ")?.split_whitespace().next()).collect();
    assert!(section.contains(&format!("`./x` has {}:", ["", "one", "two", "three", "four", "five"][commands.len()])));
    for c in &commands {
        assert!(x.contains(&format!("\n  {c})")), "README.md lists `./x {c}`, which x does not have");
    }
    let layout = format!("./x {}", commands.join(" | "));
    assert!(readme.contains(&layout), "README.md's layout line for x should read {layout:?}");
    for term in ["PTX", "CUB", "ncu", "sector", "BIT", "redux.sync", "Decoupled look-back"] {
        let glossary = std::fs::read_to_string(format!("{root}/docs/glossary.md")).unwrap();
        assert!(glossary.contains(term), "docs/glossary.md does not explain {term}");
    }
}

/// A grid-stride loop's blocks: thread g of G adds g, g + G, …, so the model's block of every
/// element is the block of the thread that a loop written out adds it in.
#[test]
fn the_grid_stride_model_is_the_loops_assignment() {
    assert_eq!(check::grid_stride_block(0, 128, 4), 0);
    assert_eq!(check::grid_stride_block(127, 128, 4), 0);
    assert_eq!(check::grid_stride_block(128, 128, 4), 1);
    assert_eq!(check::grid_stride_block(511, 128, 4), 3);
    assert_eq!(check::grid_stride_block(512, 128, 4), 0);
    assert_eq!(check::grid_stride_block(1000, 128, 4), 3);
    for (n, block, grid) in [(1usize, 32usize, 1usize), (1025, 128, 3), (4097, 64, 5)] {
        let mut owner = vec![usize::MAX; n];
        for b in 0..grid {
            for t in 0..block {
                let mut i = b * block + t;
                while i < n {
                    assert_eq!(owner[i], usize::MAX, "element {i} added twice");
                    owner[i] = b;
                    i += grid * block;
                }
            }
        }
        for (i, &b) in owner.iter().enumerate() {
            assert_eq!(check::grid_stride_block(i, block, grid), b, "n = {n}, block {block}, grid {grid}: element {i}");
        }
    }
}

/// No answer the check makes is the value a last-block kernel's output word starts with: the
/// check takes that value to mean "the kernel left the partials for the host".
#[test]
fn no_checked_sum_is_the_unwritten_mark() {
    use reduce_scan::input::Input;
    for &n in check::SIZES {
        let data = Input::full_range(n, 0x1EA4 ^ n as u64).data;
        assert_ne!(data.iter().fold(0i32, |a, &x| a.wrapping_add(x)), check::UNWRITTEN, "n = {n}");
    }
    for n in [check::MEASURE_N, check::MEASURE_SCAN_N] {
        let data = Input::small(n, 1).data;
        assert_ne!(data.iter().fold(0i32, |a, &x| a.wrapping_add(x)), check::UNWRITTEN, "n = {n}");
    }
}

/// Every buffer the check allocates has a name a learner reads in a fault, and a fault that
/// names the check's file gets it (issue #61: `allocated at learn/course/src/check.rs:197`).
#[test]
fn a_fault_names_the_checks_buffers_by_what_they_are() {
    let lines = check::allocation_lines();
    assert!(lines.len() >= 7, "the check allocates in more places than {lines:?}");
    for (at, name) in lines {
        assert!(check::BUFFERS.iter().any(|(n, _)| n == name), "check.rs:{at} allocates `{name}`, not in BUFFERS");
    }
    let (at, _) = lines.iter().find(|(_, name)| *name == "input").expect("the check uploads `input`");
    let fault = format!(
        "n = 33, block 32: read out of bounds: … a buffer of 33 × 4-byte elements (132 bytes) at 0x10, allocated at \
         learn/course/src/check.rs:{at}"
    );
    let got = check::name_check_buffers(&fault);
    assert!(!got.contains("learn/course/"), "{got}");
    assert!(
        got.ends_with("at 0x10, the input (the kernel's first argument, g_idata), which the check allocated"),
        "{got}"
    );
}
