//! `select`: the `auto` order, explicit providers and their missing keys.

use std::time::Duration;

use super::TempDir;
use crate::llm::{LlmRequest, ProviderSettings, Selected, select};

fn settings(provider: &str) -> ProviderSettings {
    ProviderSettings {
        provider: provider.into(),
        anthropic_model: "claude-sonnet-4-5".into(),
        openai_model: "gpt-4o-mini".into(),
        gemini_model: "gemini-2.0-flash".into(),
        openrouter_model: "anthropic/claude-sonnet-4.5".into(),
        anthropic_base_url: "https://api.anthropic.com".into(),
        openai_base_url: "https://api.openai.com/v1".into(),
        openrouter_base_url: "https://openrouter.ai/api/v1".into(),
        gemini_base_url: "https://generativelanguage.googleapis.com/v1beta".into(),
        path_var: Some("/nonexistent-vl-dir".into()),
        ..ProviderSettings::default()
    }
}

fn with_keys(provider: &str, keys: &[&str]) -> ProviderSettings {
    let mut s = settings(provider);
    for key in keys {
        let value = Some(format!("{key}-key"));
        match *key {
            "anthropic" => s.anthropic_key = value,
            "openai" => s.openai_key = value,
            "gemini" => s.gemini_key = value,
            "openrouter" => s.openrouter_key = value,
            other => panic!("no such key {other}"),
        }
    }
    s
}

fn chosen(s: &ProviderSettings) -> &'static str {
    select(s).map(|p| p.name()).unwrap_or_else(|e| panic!("select failed: {e}"))
}

#[test]
fn auto_spends_no_key_and_names_the_ones_it_leaves() {
    let all = with_keys("auto", &["openrouter", "gemini", "openai", "anthropic"]);
    assert_eq!(chosen(&all), "offline", "keys alone choose nothing (issue 42)");
    let unused: Vec<&str> = all.unused_keys().into_iter().map(|(setting, _)| setting).collect();
    assert_eq!(unused, ["ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY", "OPENROUTER_API_KEY"]);
    assert_eq!(with_keys("", &["gemini"]).unused_keys(), [("GEMINI_API_KEY", "gemini")]);
    // Named: that provider spends its key, and nothing is left "unused".
    let named = with_keys("gemini", &["gemini", "openai"]);
    assert_eq!(chosen(&named), "gemini");
    assert!(named.unused_keys().is_empty());
}

#[test]
fn auto_with_nothing_is_offline() {
    assert!(matches!(select(&settings("auto")), Ok(Selected::Offline)));
    // Blank keys count as unset.
    let mut s = settings("auto");
    s.anthropic_key = Some("  ".into());
    assert_eq!(chosen(&s), "offline");
}

#[test]
#[cfg_attr(windows, ignore = "a #!/bin/sh script as claude; PATHEXT lookup is tested in platform")]
fn auto_falls_back_to_the_claude_cli_on_path() {
    let dir = TempDir::new();
    dir.file("claude", "#!/bin/sh\necho \"args: $*\"\ncat\n", true);
    let mut s = settings("auto");
    s.path_var = Some(format!("/nonexistent-vl-dir::{}", dir.path().display()));
    let Ok(Selected::Remote(provider)) = select(&s) else { panic!("expected the claude CLI") };
    assert_eq!(provider.name(), "command");
    let request = LlmRequest { system: "S".into(), prompt: "P".into(), max_tokens: 5 };
    let answer = provider.complete(&request, Duration::from_secs(5));
    assert_eq!(answer, Ok("args: -p --output-format text\nS\n\nP".to_string()));
}

/// The stand-in for a `claude` CLI that is installed but not logged in, as the real one says it.
const NOT_LOGGED_IN: &str = "#!/bin/sh\ncat > /dev/null\necho 'Not logged in · Please run /login'\nexit 1\n";

#[test]
#[cfg_attr(windows, ignore = "a #!/bin/sh script as claude")]
fn a_claude_cli_that_is_not_logged_in_is_left_for_offline_and_not_tried_again_within_its_back_off() {
    let dir = TempDir::new();
    let count = dir.path().join("tries");
    let script = format!("#!/bin/sh\necho x >> '{}'\n{}", count.display(), &NOT_LOGGED_IN[10..]);
    dir.file("claude", &script, true);
    let mut s = settings("auto");
    s.path_var = Some(dir.path().display().to_string());
    let choice = select(&s).expect("auto never fails");
    let Selected::Remote(provider) = &choice else { panic!("the CLI is found on PATH") };
    assert_eq!(provider.known_unavailable(), None, "not tried yet");
    assert!(matches!(choice.usable(), Selected::Offline), "a CLI that fails its try is not used");
    let why = provider.known_unavailable().expect("the try has ended");
    assert!(why.contains("Not logged in · Please run /login"), "in the CLI's own words: {why}");
    assert!(why.contains("exited with 1"), "{why}");
    // Kept for the back-off (5 min; `probe`'s tests drive it past): asking again runs nothing.
    assert!(matches!(choice.usable(), Selected::Offline));
    provider.start_check();
    assert_eq!(std::fs::read_to_string(&count).unwrap().lines().count(), 1, "tried once within the back-off");
}

#[test]
#[cfg_attr(windows, ignore = "a #!/bin/sh script as claude")]
fn a_claude_cli_that_answers_its_try_is_used() {
    let dir = TempDir::new();
    dir.file("claude", "#!/bin/sh\ncat > /dev/null\necho OK\n", true);
    let mut s = settings("auto");
    s.path_var = Some(dir.path().display().to_string());
    let choice = select(&s).expect("auto never fails");
    if let Selected::Remote(provider) = &choice {
        provider.start_check();
    }
    assert_eq!(choice.usable().name(), "command");
    let Selected::Remote(provider) = &choice else { panic!("the CLI is found on PATH") };
    assert_eq!(provider.known_unavailable(), None);
}

#[test]
#[cfg_attr(windows, ignore = "a #!/bin/sh script as the command")]
fn a_named_command_that_is_not_logged_in_is_refused_like_a_401() {
    let dir = TempDir::new();
    dir.file("claude", NOT_LOGGED_IN, true);
    let mut s = settings("command");
    s.llm_command = Some(format!("'{}' -p", dir.path().join("claude").display()));
    let Ok(Selected::Remote(provider)) = select(&s) else { panic!("a named command is used") };
    assert_eq!(provider.unavailable(), None, "a provider the user named is not second-guessed");
    let request = LlmRequest { system: "S".into(), prompt: "P".into(), max_tokens: 5 };
    let error = provider.complete(&request, Duration::from_secs(5)).expect_err("not logged in");
    let crate::llm::LlmError::Auth(message) = error else { panic!("expected Auth, got {error:?}") };
    assert!(message.contains("stdout: Not logged in · Please run /login"), "{message}");
}

#[test]
fn a_claude_file_that_is_not_executable_is_ignored() {
    let dir = TempDir::new();
    dir.file("claude", "not a program", false);
    let mut s = settings("auto");
    s.path_var = Some(dir.path().display().to_string());
    assert_eq!(chosen(&s), "offline");
}

#[test]
fn explicit_providers_need_their_key() {
    for (provider, setting) in [
        ("anthropic", "ANTHROPIC_API_KEY"),
        ("openai", "OPENAI_API_KEY"),
        ("gemini", "GEMINI_API_KEY"),
        ("openrouter", "OPENROUTER_API_KEY"),
    ] {
        let error = select(&settings(provider)).err().unwrap_or_else(|| panic!("{provider} without key"));
        assert_eq!(error.provider_without_key(), Some(provider));
        let error = error.to_string();
        assert!(error.contains(&format!("VIBELEARN_PROVIDER={provider}")) && error.contains(setting), "{error}");
        assert_eq!(chosen(&with_keys(provider, &[provider])), provider);
    }
}

#[test]
fn openai_at_a_custom_base_url_needs_no_key() {
    let mut s = settings("openai");
    s.openai_base_url = "http://localhost:11434/v1".into();
    assert_eq!(chosen(&s), "openai");
}

#[test]
fn command_needs_its_command_line() {
    let error = select(&settings("command")).err().expect("command without a command line");
    assert_eq!(error.provider_without_key(), None);
    let error = error.to_string();
    assert!(error.contains("VIBELEARN_LLM_COMMAND"), "{error}");
    let mut s = settings("command");
    s.llm_command = Some("".into());
    assert!(select(&s).is_err());
    s.llm_command = Some("my-llm --json".into());
    assert_eq!(chosen(&s), "command");
}

#[test]
fn offline_and_unknown_names() {
    assert_eq!(chosen(&with_keys("Offline", &["anthropic"])), "offline");
    let error = select(&settings("chatgpt")).err().expect("unknown provider").to_string();
    assert!(error.contains("chatgpt") && error.contains("anthropic"), "{error}");
}

#[test]
fn debug_output_hides_keys() {
    let shown = format!("{:?}", with_keys("auto", &["anthropic", "openai"]));
    assert!(!shown.contains("anthropic-key") && shown.contains("set"), "{shown}");
}

#[test]
#[cfg_attr(windows, ignore = "a #!/bin/sh script as claude")]
fn a_provider_asked_outside_the_runner_is_checked_first_so_a_cli_not_logged_in_runs_once() {
    // The quiz's rubric grader asks its provider directly, once per free-text answer; it must
    // make the check a job makes (issue 41, point 11), not launch the CLI for every answer.
    let dir = TempDir::new();
    let count = dir.path().join("runs");
    let script = format!("#!/bin/sh\necho x >> '{}'\n{}", count.display(), &NOT_LOGGED_IN[10..]);
    dir.file("claude", &script, true);
    let mut s = settings("auto");
    s.path_var = Some(dir.path().display().to_string());
    let grader = select(&s).expect("auto never fails").into_checked().expect("the CLI on PATH");
    let request = LlmRequest { system: String::new(), prompt: "grade this".into(), max_tokens: 5 };
    for answer in 1..=3 {
        let refused = grader.complete(&request, Duration::from_secs(5)).unwrap_err();
        assert!(refused.to_string().contains("Not logged in"), "answer {answer}: {refused}");
    }
    assert_eq!(std::fs::read_to_string(&count).unwrap().lines().count(), 1, "one try, not one run per answer");
    assert!(select(&settings("offline")).unwrap().into_checked().is_none(), "offline cannot grade prose");
}
