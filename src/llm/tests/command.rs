//! The command provider against `sh` one-liners: answer, stdin layout, timeout kill (of the
//! whole process group), exit codes, empty output.

use std::time::{Duration, Instant};

use super::TempDir;
use crate::llm::{CommandProvider, LlmError, LlmRequest, Provider};

const TIMEOUT: Duration = Duration::from_secs(5);
const SHORT_TIMEOUT: Duration = Duration::from_millis(300);
const MARGIN: Duration = Duration::from_millis(700);

fn request() -> LlmRequest {
    LlmRequest { system: "SYSTEM".into(), prompt: "PROMPT".into(), max_tokens: 100 }
}

fn run(line: &str, timeout: Duration) -> Result<String, LlmError> {
    CommandProvider::new(line).complete(&request(), timeout)
}

#[test]
#[cfg_attr(windows, ignore = "sh one-liners; the Windows side of spawn_tree is tested in platform")]
fn stdout_is_the_answer() {
    assert_eq!(run(r#"echo '{"concepts":[]}'"#, TIMEOUT), Ok(r#"{"concepts":[]}"#.to_string()));
}

#[test]
#[cfg_attr(windows, ignore = "sh one-liners; the Windows side of spawn_tree is tested in platform")]
fn stdin_is_system_blank_line_prompt() {
    assert_eq!(run("cat", TIMEOUT), Ok("SYSTEM\n\nPROMPT".to_string()));
}

#[test]
#[cfg_attr(windows, ignore = "sh one-liners; the Windows side of spawn_tree is tested in platform")]
fn the_child_is_marked() {
    assert_eq!(run("echo \"$VIBELEARN_LLM_CHILD\"", TIMEOUT), Ok("1".to_string()));
}

#[test]
#[cfg_attr(windows, ignore = "sh one-liners; the Windows side of spawn_tree is tested in platform")]
fn a_hung_command_is_killed_at_the_timeout() {
    let started = Instant::now();
    let result = run("sleep 5", SHORT_TIMEOUT);
    assert!(started.elapsed() < SHORT_TIMEOUT + MARGIN, "took {:?}", started.elapsed());
    assert!(matches!(&result, Err(LlmError::Transient { message, .. }) if message.contains("killed")), "{result:?}");
}

#[test]
#[cfg_attr(windows, ignore = "sh one-liners; the Windows side of spawn_tree is tested in platform")]
fn the_timeout_kills_the_whole_process_group() {
    let dir = TempDir::new();
    let pid_file = dir.path().join("pid");
    let line = format!("sleep 30 & echo $! > '{}'; wait", pid_file.display());
    assert!(matches!(run(&line, SHORT_TIMEOUT), Err(LlmError::Transient { .. })));
    let pid = std::fs::read_to_string(&pid_file).expect("the script wrote its child's pid");
    assert!(grandchild_ends(pid.trim()), "the background sleep {pid} survived");
}

/// Polls `/proc` (up to 2 s) until `pid` is gone or a zombie: a killed process whose parent
/// died is reaped by init, which may be slow (or absent) in a container.
fn grandchild_ends(pid: &str) -> bool {
    let deadline = Instant::now() + Duration::from_secs(2);
    while Instant::now() < deadline {
        match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
            Err(_) => return true,
            Ok(stat) if stat.rsplit(')').next().is_some_and(|s| s.trim_start().starts_with('Z')) => {
                return true;
            }
            Ok(_) => std::thread::sleep(Duration::from_millis(20)),
        }
    }
    false
}

#[test]
#[cfg_attr(windows, ignore = "sh one-liners; the Windows side of spawn_tree is tested in platform")]
fn a_background_child_holding_stdout_counts_as_hung() {
    let started = Instant::now();
    let result = run("sleep 5 & echo partial", SHORT_TIMEOUT);
    assert!(started.elapsed() < SHORT_TIMEOUT + MARGIN, "took {:?}", started.elapsed());
    assert!(matches!(result, Err(LlmError::Transient { .. })), "{result:?}");
}

#[test]
#[cfg_attr(windows, ignore = "sh one-liners; the Windows side of spawn_tree is tested in platform")]
fn non_zero_exit_is_transient_with_stderr() {
    let result = run("echo 'rate limited, try later' >&2; exit 3", TIMEOUT);
    match result {
        Err(LlmError::Transient { message, .. }) => {
            assert!(message.contains("exited with 3"), "{message}");
            assert!(message.contains("rate limited, try later"), "{message}");
        }
        other => panic!("expected Transient: {other:?}"),
    }
}

#[test]
#[cfg_attr(windows, ignore = "sh one-liners; the Windows side of spawn_tree is tested in platform")]
fn long_stderr_is_cut_to_its_end() {
    let result =
        run("i=0; while [ $i -lt 300 ]; do printf 'noise ' >&2; i=$((i+1)); done; echo THE-END >&2; exit 1", TIMEOUT);
    let message = result.unwrap_err().to_string();
    assert!(message.contains("THE-END") && message.chars().count() < 600, "{message}");
}

#[test]
#[cfg_attr(windows, ignore = "sh one-liners; the Windows side of spawn_tree is tested in platform")]
fn empty_output_is_permanent() {
    assert!(matches!(run("true", TIMEOUT), Err(LlmError::Permanent(_))));
    assert!(matches!(run("echo '   '", TIMEOUT), Err(LlmError::Permanent(_))));
}

#[test]
#[cfg_attr(windows, ignore = "sh one-liners; the Windows side of spawn_tree is tested in platform")]
fn a_missing_command_is_permanent() {
    let result = run("vibelearn-no-such-command-xyz", TIMEOUT);
    assert!(matches!(&result, Err(LlmError::Permanent(m)) if m.contains("127")), "{result:?}");
}

#[test]
#[cfg_attr(windows, ignore = "sh one-liners; the Windows side of spawn_tree is tested in platform")]
fn a_command_ignoring_a_large_stdin_still_answers() {
    let big = LlmRequest { prompt: "x".repeat(1 << 20), ..request() };
    assert_eq!(CommandProvider::new("echo ok").complete(&big, TIMEOUT), Ok("ok".to_string()));
}
