//! `vl demo`, the main job, as a newcomer runs it: no keys, no network, exit 0; a short summary
//! by default, every question with `--verbose`, and with `--keep` a data dir `vl quiz` drills.

use crate::util::VL;

#[test]
fn vl_demo_runs_the_whole_pipeline_offline_and_prints_stack_concepts_and_questions() {
    let home = tempfile::tempdir().unwrap();
    let mut command = std::process::Command::new(VL);
    command.args(["demo", "--verbose"]).env_clear();
    crate::util::keep_essential_env(&mut command);
    let output = command.env("HOME", home.path()).env(vibelearn::platform::HOME_ENV, home.path()).output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "vl demo failed: {stdout}\n{}", String::from_utf8_lossy(&output.stderr));
    for expected in [
        "Detected stack",
        "framework   Next.js",
        "orm         Prisma",
        "Tailwind CSS",
        "Concepts met",
        "sync              succeeded (skipped: no_api_key)",
    ] {
        assert!(stdout.contains(expected), "missing {expected:?} in:\n{stdout}");
    }
    for step in ["analyze_stack", "analyze_static", "analyze_concepts", "analyze_quiz"] {
        assert!(
            stdout.lines().any(|l| l.trim_start().starts_with(step) && l.contains("succeeded")),
            "{step} did not succeed:\n{stdout}"
        );
    }
    let concepts = stdout.lines().filter(|l| l.starts_with("  • ")).count();
    assert!((3..=8).contains(&concepts), "{concepts} concepts:\n{stdout}");
    let questions: usize = stdout
        .lines()
        .find_map(|l| l.strip_prefix("Quiz questions (").and_then(|r| r.strip_suffix(')')))
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    let per_concept = vibelearn::llm::offline::QUESTIONS_PER_CONCEPT;
    assert!(
        // At most two per concept; a concept whose questions would teach nothing about the
        // code goes unasked (issue 40, `offline::teaches`), so at least half are asked here.
        (concepts.div_ceil(2)..=concepts * per_concept).contains(&questions),
        "up to {per_concept} questions per concept:\n{stdout}"
    );
    // The grounded share counts the questions that show where their code comes from, whatever
    // share the offline generator reaches.
    let (grounded, total) = stdout
        .lines()
        .find_map(|l| l.strip_prefix("Grounded  "))
        .and_then(|rest| {
            let mut words = rest.split(' ');
            Some((words.next()?.parse::<usize>().ok()?, words.nth(1)?.parse::<usize>().ok()?))
        })
        .unwrap_or_else(|| panic!("no grounded share in:\n{stdout}"));
    assert_eq!(total, questions, "{stdout}");
    assert_eq!(grounded, stdout.lines().filter(|l| l.trim_start().starts_with("↳ ")).count(), "{stdout}");
    assert!(!stdout.contains("hunter2"), "the sample's private prompt part must not appear");
    // Nothing is left in the user's home: the demo works in a temporary directory.
    assert!(std::fs::read_dir(home.path()).unwrap().next().is_none(), "the demo wrote into HOME");
}

fn demo(home: &std::path::Path, args: &[&str]) -> String {
    let mut command = std::process::Command::new(VL);
    command.arg("demo").args(args).env_clear();
    crate::util::keep_essential_env(&mut command);
    let output = command.env("HOME", home).env(vibelearn::platform::HOME_ENV, home).output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(output.status.success(), "vl demo {args:?}: {stdout}\n{}", String::from_utf8_lossy(&output.stderr));
    stdout
}

#[test]
fn vl_demo_prints_a_short_summary_and_keeps_a_data_dir_to_quiz_from_on_request() {
    let home = tempfile::tempdir().unwrap();
    let short = demo(home.path(), &[]);
    assert!(short.lines().count() <= 30, "a summary that fits a screen ({} lines):\n{short}", short.lines().count());
    for expected in ["stack     TypeScript · Next.js · Prisma", "Concepts met (", "Quiz questions (", "Grounded  "] {
        assert!(short.contains(expected), "missing {expected:?} in:\n{short}");
    }
    assert!(short.contains("vl demo --verbose") && short.contains("vl demo --keep"), "{short}");
    // --keep: the data dir stays, and `vl quiz` on it asks the demo's questions.
    let kept = demo(home.path(), &["--keep"]);
    let data_dir = kept
        .lines()
        .find_map(|l| l.trim().strip_prefix("VIBELEARN_DATA_DIR=")?.strip_suffix(" vl quiz"))
        .unwrap_or_else(|| panic!("no command to quiz from the kept dir:\n{kept}"))
        .to_owned();
    let mut quiz = std::process::Command::new(VL);
    quiz.args(["quiz", "--limit", "1"]).env_clear();
    crate::util::keep_essential_env(&mut quiz);
    let quiz = quiz
        .env("HOME", home.path())
        .env(vibelearn::platform::HOME_ENV, home.path())
        .env("VIBELEARN_DATA_DIR", &data_dir)
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let asked = String::from_utf8_lossy(&quiz.stdout);
    assert!(quiz.status.success() && asked.contains("Question 1 ·") && asked.contains("Concept:"), "{asked}");
    let scratch = std::path::Path::new(&data_dir).parent().unwrap().to_owned();
    assert!(scratch.starts_with(std::env::temp_dir()), "kept under the temporary directory: {data_dir}");
    std::fs::remove_dir_all(scratch).unwrap();
    assert!(std::fs::read_dir(home.path()).unwrap().next().is_none(), "the demo wrote into HOME");
}
