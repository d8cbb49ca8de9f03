//! The starting files, which this crate compiles: each lesson's fails its check for the lesson's
//! reason (its measure misses the goal), each bug hunt's is stopped by the check its bug is for,
//! and the README's walkthrough is what the check of exercise 1's prints. The course's other
//! tests are its own (`learn/course/src/tests.rs`).

use course::check;
use course::cli::render;
use course::exercises::{EXERCISES, solution};

use crate::attempts::starting;

mod ncu;

#[test]
fn every_starting_file_fails_for_its_lessons_reason() {
    let start = starting();
    for ex in EXERCISES.iter().filter(|e| e.hunt.is_none()) {
        let report = check::check(ex, &start[(ex.number - 1) as usize]);
        let at = format!("exercise {} ({}) starting file", ex.number, ex.lesson);
        assert!(report.fault.is_none(), "{at}: a fault: {:?}", report.fault);
        assert!(report.wrong.is_none(), "{at}: a wrong answer: {:?}", report.wrong);
        let m = report.measure.unwrap_or_else(|| panic!("{at}: no measure"));
        assert!(!ex.goal.met(m), "{at}: its {} is {m}, which already meets {:?}", ex.goal.measure().name(), ex.goal);
        assert!(!report.passed(ex), "{at}: passes");
        // What the learner reads names the lesson's counter, its value and its goal.
        let text = render(ex, &report, &[]);
        let line = format!("measure  {} ", ex.goal.measure().name());
        assert!(
            text.contains(&line) && text.contains(&ex.goal.want()),
            "{at}: the check does not name its counter:\n{text}"
        );
        assert!(text.contains("): not yet") && text.contains("NOT YET."), "{at}: not a failure:\n{text}");
    }
}

/// A bug hunt's starting file is stopped by the emulator's check its bug is for, with the line
/// of the learner's file; its measure is the lesson's and already met, so only the fault stands
/// between it and a pass.
#[test]
fn every_bug_hunt_is_caught_by_its_check() {
    let start = starting();
    for ex in EXERCISES.iter().filter(|e| e.hunt.is_some()) {
        let report = check::check(ex, &start[(ex.number - 1) as usize]);
        let at = format!("exercise {} (a bug hunt in {}) starting file", ex.number, ex.lesson);
        let fault = report.fault.clone().unwrap_or_else(|| panic!("{at}: no fault; wrong: {:?}", report.wrong));
        let kind = match ex.hunt {
            Some("nobarrier" | "volatile" | "nofence") => "race",
            Some("offbyone") => "out of bounds",
            _ => "had written",
        };
        assert!(fault.contains(kind), "{at}: the fault should be {kind:?}: {fault}");
        assert!(
            fault.contains(&format!("learn/start/{}:", ex.file())),
            "{at}: the fault names no line of the file: {fault}"
        );
        assert!(fault.starts_with("n = "), "{at}: the fault names no shape: {fault}");
        assert!(!report.passed(ex), "{at}: passes");
        let text = render(ex, &report, &[]);
        assert!(text.contains("NOT YET: fix the fault first."), "{at}:\n{text}");
    }
}

/// The README's "Learn" walkthrough is what `./x learn 1` prints: on the starting file, and
/// with the lesson's change made (the project's kernel).
#[test]
fn the_readme_walkthrough_is_what_learn_prints() {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../README.md")).unwrap();
    let ex = &EXERCISES[0];
    for (marker, attempt) in [("start", starting()[0]), ("solution", solution(ex))] {
        let want = render(ex, &check::check(ex, &attempt), &[]);
        let open = format!("<!-- learn: {marker} -->\n```text\n$ ./x learn 1\n");
        let got = readme.split_once(&open).and_then(|(_, rest)| rest.split_once("```\n")).map(|(block, _)| block);
        assert_eq!(got, Some(want.as_str()), "README.md's `{marker}` walkthrough; it should read:\n{want}");
    }
}
