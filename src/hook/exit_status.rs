//! A shell call's exit status, read from where each agent's CLI writes it (SPEC §3.4), never
//! from a number found in the command's own output. Pure: text in, the status out.
//!
//! The command's output is the user's text: a `cat CHANGELOG.md` may say "returns exit code
//! 2", a CI log "Exit Code: 1 (flaky job)". Reading the first "exit code N" anywhere (what this
//! replaced) stored such calls as failed, and phantom failures became questions. So each CLI's
//! own framing is parsed, and only there:
//!
//! - Copilot CLI ends `textResultForLlm` with a trailer line `<shellId: N completed with exit
//!   code M>` ([`copilot_trailer`]): only the last non-empty line counts.
//! - Gemini CLI writes `Output: <output>` and then its own lines — `Error:`, `Exit Code:`,
//!   `Signal:`, `Background PIDs:`, `Process Group PGID:`, in that order (0.61 writes only those
//!   that apply, older versions all of them, `Exit Code: 0` included), inside an
//!   `<untrusted_context>` wrapper ([`gemini_trailer`]). Its `returnDisplay` is the output
//!   itself, so what follows `Output: <returnDisplay>` is the trailer; without that anchor the
//!   trailer is the run of those lines, in that order, at the end.
//! - Codex heads a tool's output with `Exit code: N` (apply_patch) or `Process exited with code
//!   N` (a shell's `function_call_output` in its transcript), then `Output:` and the output
//!   ([`codex_header`]): only the lines before `Output:` count. Its transcript's
//!   `item_completed` carries the status as a number, which `codex.rs` prefers.
//!
//! Each returns the status the CLI wrote, 0 included; `None` when it wrote none (the call is
//! then not known to have failed).

/// Copilot CLI's trailer: `<shellId: N completed with exit code M>` as the last non-empty line.
pub fn copilot_trailer(text: &str) -> Option<i64> {
    let last = text.lines().rev().map(str::trim).find(|l| !l.is_empty())?;
    let inner = last.strip_prefix("<shellId:")?.strip_suffix('>')?;
    let (shell, code) = inner.split_once(" completed with exit code ")?;
    let shell = shell.trim();
    (!shell.is_empty() && !shell.contains(char::is_whitespace)).then_some(())?;
    integer(code)
}

/// Gemini CLI's own keys after the output, in the order it writes them.
const GEMINI_TRAILER: [&str; 5] = ["Error:", "Exit Code:", "Signal:", "Background PIDs:", "Process Group PGID:"];

/// Gemini CLI's closing `Exit Code:` line of `llm_content`, `display` being the call's
/// `returnDisplay` (the command's output) when it has one.
pub fn gemini_trailer(llm_content: &str, display: Option<&str>) -> Option<i64> {
    let anchored = display.map(str::trim_end).filter(|d| !d.is_empty()).and_then(|d| {
        llm_content.find(&format!("Output: {d}")).map(|at| &llm_content[at + "Output: ".len() + d.len()..])
    });
    match anchored {
        Some(trailer) => trailer.lines().find_map(|line| gemini_exit_line(line.trim())),
        None => gemini_tail(llm_content),
    }
}

/// Walks back from the end over Gemini's trailer lines (each key at most once, in its order);
/// the `Exit Code:` met there.
fn gemini_tail(llm_content: &str) -> Option<i64> {
    let mut below = GEMINI_TRAILER.len();
    for line in llm_content.lines().rev().map(str::trim) {
        if line.is_empty() || line == "</untrusted_context>" {
            continue;
        }
        // A line that is none of its keys (or one out of order) is the output's: no status.
        let rank = GEMINI_TRAILER[..below].iter().position(|key| line.starts_with(key))?;
        if GEMINI_TRAILER[rank] == "Exit Code:" {
            return gemini_exit_line(line);
        }
        below = rank;
    }
    None
}

/// `Exit Code: N` as a whole line (`(none)` when there was no status).
fn gemini_exit_line(line: &str) -> Option<i64> {
    integer(line.strip_prefix("Exit Code:")?)
}

/// Codex's header lines before `Output:` (`Exit code: N`, `Process exited with code N`,
/// `Wall time: …`, `Chunk ID: …`, `Original token count: …`): the status among them.
pub fn codex_header(text: &str) -> Option<i64> {
    const KEYS: [&str; 3] = ["Wall time:", "Chunk ID:", "Original token count:"];
    for line in text.lines().map(str::trim_end) {
        if line == "Output:" {
            return None;
        }
        if let Some(code) = line.strip_prefix("Exit code:").or_else(|| line.strip_prefix("Process exited with code")) {
            return integer(code);
        }
        if !KEYS.iter().any(|key| line.starts_with(key)) {
            return None; // past the header: the output's own text
        }
    }
    None
}

/// A whole (optionally negative) integer, surrounding spaces allowed, nothing else.
fn integer(text: &str) -> Option<i64> {
    let text = text.trim();
    let digits = text.strip_prefix('-').unwrap_or(text);
    (!digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())).then(|| text.parse().ok())?
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copilots_trailer_is_the_last_line_and_nothing_else() {
        assert_eq!(copilot_trailer("added 1 package\n<shellId: 0 completed with exit code 0>"), Some(0));
        assert_eq!(copilot_trailer("error TS2322\n<shellId: 1 completed with exit code 1>\n"), Some(1));
        // The reproduction: the changelog's own text quotes an exit code.
        let changelog =
            "## 2.0\n- `vl check` returns exit code 2 on a bad file\n<shellId: 0 completed with exit code 0>";
        assert_eq!(copilot_trailer(changelog), Some(0));
        assert_eq!(copilot_trailer("the script exits with exit code 3"), None, "no trailer: no status");
        assert_eq!(copilot_trailer("<shellId: 0 completed with exit code 0>\nmore output after it"), None);
        assert_eq!(copilot_trailer("<shellId: 0 completed with exit code 1 (flaky)>"), None);
    }

    #[test]
    fn geminis_closing_exit_code_line_after_the_output() {
        // Gemini CLI 0.61, recorded: the failed build, and a success with no Exit Code line.
        let failed = "<untrusted_context>\nOutput: src/cart.ts(2,10): error TS2322: Type 'string' is not assignable to type 'number'.\nExit Code: 1\nProcess Group PGID: 10610\n</untrusted_context>";
        let display = "src/cart.ts(2,10): error TS2322: Type 'string' is not assignable to type 'number'.";
        assert_eq!(gemini_trailer(failed, Some(display)), Some(1));
        assert_eq!(gemini_trailer(failed, None), Some(1), "without the anchor, from the end");
        let ok =
            "<untrusted_context>\nOutput: added 1 package in 0.1s\nProcess Group PGID: 10596\n</untrusted_context>";
        assert_eq!(gemini_trailer(ok, Some("added 1 package in 0.1s")), None);
        // The reproduction (the older form that always writes the status).
        let quoting = "Command: ./ci.sh\nDirectory: (root)\nOutput: retrying\nExit Code: 1 (flaky job)\npassed\nError: (none)\nExit Code: 0\nSignal: (none)\nBackground PIDs: (none)\nProcess Group PGID: 4242";
        assert_eq!(gemini_trailer(quoting, Some("retrying\nExit Code: 1 (flaky job)\npassed")), Some(0));
        assert_eq!(gemini_trailer(quoting, None), Some(0));
        // Output that ends with a line exactly like Gemini's own, in a success of 0.61's form:
        // the anchor tells the output from the trailer.
        let tricky =
            "<untrusted_context>\nOutput: $ cat notes.txt\nExit Code: 1\nProcess Group PGID: 7\n</untrusted_context>";
        assert_eq!(gemini_trailer(tricky, Some("$ cat notes.txt\nExit Code: 1")), None);
        assert_eq!(gemini_trailer("Output: x\nExit Code: (none)\nSignal: 9", Some("x")), None);
    }

    #[test]
    fn codexs_header_before_the_output() {
        assert_eq!(
            codex_header("Exit code: 0\nWall time: 0 seconds\nOutput:\nSuccess. Updated the following files:\n"),
            Some(0)
        );
        assert_eq!(codex_header("Exit code: 1\nOutput:\nFailed to find expected lines"), Some(1));
        let shell = "Chunk ID: a56b5f\nWall time: 0.0000 seconds\nProcess exited with code 1\nOriginal token count: 21\nOutput:\nerror\n";
        assert_eq!(codex_header(shell), Some(1));
        let quoting = "Chunk ID: 0133b1\nWall time: 0.0000 seconds\nProcess exited with code 0\nOutput:\nProcess exited with code 1\nExit code: 2\n";
        assert_eq!(codex_header(quoting), Some(0));
        assert_eq!(codex_header("Wall time: 1 seconds\nOutput:\nExit code: 2\n"), None, "no status in the header");
        assert_eq!(codex_header("make: *** Exit code: 2"), None);
    }
}
