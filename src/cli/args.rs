//! clap definitions: parsing only. Each command's behaviour lives in its own module.

use std::path::PathBuf;

use clap::{ArgGroup, Args, Parser, Subcommand};

#[derive(Debug, Parser)]
#[command(
    name = "vl",
    version,
    about = "VibeLearn: learn from the code your AI assistant writes with you",
    long_about = "VibeLearn watches your AI-assisted coding sessions through IDE hooks, extracts the concepts \
                  you met and drills you on them with spaced repetition.\n\nStart with `vl demo` to see the \
                  whole pipeline on a sample session.",
    after_help = "Examples:\n  vl demo\n  vl install claude-code\n  vl quiz --limit 5\n  vl jobs list --state dead"
)]
pub struct Cli {
    /// None: `vl` alone, which an IDE runs when it drops a hook's `args`; see
    /// [`crate::cli::hook_cmd::run_bare`].
    #[command(subcommand)]
    pub command: Option<Command>,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run, start, stop or inspect the background worker.
    #[command(after_help = "Examples:\n  vl worker start\n  vl worker status\n  vl worker stop")]
    Worker {
        #[command(subcommand)]
        action: WorkerAction,
    },
    /// Run the whole pipeline on a recorded sample session, offline, and print the result.
    #[command(
        after_help = "Needs no keys and no network; uses a temporary data directory.\n\nExamples:\n  vl demo\n  \
                            vl demo --verbose\n  vl demo --keep   (then quiz yourself on the demo's questions)"
    )]
    Demo {
        /// Print every concept and question with its code, not only the summary.
        #[arg(long)]
        verbose: bool,
        /// Keep the demo's data directory and say how to run `vl quiz` on it.
        #[arg(long)]
        keep: bool,
    },
    /// IDE hook entry point: reads the event JSON on stdin, prints one JSON line, exits 0.
    #[command(
        after_help = "Platforms: claude-code, cursor, gemini, codex, copilot, raw\nEvents: session-start, session-init, observation, \
                            file-edit, summarize, session-complete\nWithout them, the event comes from stdin's \
                            hook_event_name (SessionStart, UserPromptSubmit, PostToolUse, beforeSubmitPrompt, …).\n\nExample:\n  echo '{\"session_id\":\"s1\",\"prompt\":\"hi\"}' | vl hook claude-code session-init"
    )]
    Hook {
        /// claude-code, cursor, gemini, codex, copilot or raw (default: from stdin's `hook_event_name`).
        platform: Option<String>,
        /// session-start, session-init, observation, file-edit, summarize or session-complete
        /// (default: from stdin's `hook_event_name`).
        event: Option<String>,
    },
    /// Spaced-repetition quiz (FSRS): re-asks, due reviews, then new questions; rate each answer 1-4.
    #[command(after_help = "Each answer is one line, then a rating line: 1 Again, 2 Hard, 3 Good, 4 Easy (Enter \
                            accepts the suggestion; o = I was right). A missed card comes back before the sitting \
                            ends. Each answer is saved at once; Ctrl-C or the end of input stops without losing any. \
                            The guide: docs/QUIZ.md.\n\nExamples:\n  vl quiz\n  vl quiz --limit 5\n  vl quiz --session\n  \
                            vl quiz --leeches\n  vl quiz next --json\n  printf 'b\\n\\ntrue\\n4\\n' | vl quiz --limit 2")]
    Quiz(QuizArgs),
    /// Learning summary: sessions, concepts, questions due, mastered concepts, streak, provider health.
    #[command(after_help = "Reads the database only; works whether or not the worker runs.\n\nExample:\n  vl status")]
    Status,
    /// Leeches first, then concepts under 70 % mastery (FSRS recall probability), each with a bar.
    #[command(after_help = "Example:\n  vl gaps")]
    Gaps,
    /// Write your cards out: to Anki's text import (stable guids, re-import updates) or Markdown.
    #[command(
        after_help = "Examples:\n  vl export anki --out vibelearn.txt\n  vl export anki --deck Study --project shop\n  \
                            vl export markdown --out notes/"
    )]
    Export {
        #[command(subcommand)]
        target: ExportTarget,
    },
    /// Inspect and repair the job queue; works whether or not the worker runs.
    #[command(after_help = "Uses the worker's HTTP API when it runs, the database directly when it does not.\n\n\
                            Examples:\n  vl jobs list --state dead\n  vl jobs show 42\n  \
                            vl jobs replay --state dead --kind analyze_concepts\n  vl jobs stats --json")]
    Jobs {
        #[command(subcommand)]
        action: JobsAction,
    },
    /// Analyse a session now (stack, static, concepts, quiz, sync) and show each step's progress.
    #[command(after_help = "Without SESSION, the latest session with code changes. Starts the worker if it is not \
                            running. Enqueues the sync step even when VIBELEARN_AUTO_SYNC=false. Exits non-zero \
                            if a step ends dead.\n\nExamples:\n  vl sync\n  vl sync 5f0c2a7e-session-id")]
    Sync {
        /// The session id (as the IDE gave it); default: the latest session with code changes.
        session: Option<String>,
    },
    /// Store, show or remove the key of your upstream VibeLearn account.
    #[command(after_help = "The key is kept in <data>/config.json, readable only by you (mode 0600); the next sync \
                            job uses it, no restart needed.\n\nExamples:\n  vl login vl_live_0123456789abcdef\n  \
                            echo \"$KEY\" | vl login -\n  vl login --status\n  vl login --logout")]
    Login(LoginArgs),
    /// Show which LLM provider VibeLearn uses and why, or choose one (written to settings.json).
    #[command(after_help = "An API key is used only for the provider you choose here (or in VIBELEARN_PROVIDER): \
                            never because it is in some environment. auto = the claude CLI when it answers, else \
                            offline. Choosing a provider whose key only this shell has copies the key into \
                            settings.json (readable only by you), so every worker finds it.\n\nExamples:\n  \
                            vl provider\n  vl provider gemini\n  vl provider offline")]
    Provider {
        /// auto, anthropic, openai, gemini, openrouter, command or offline; none: show the choice.
        name: Option<String>,
    },
    /// Register VibeLearn's hooks with an IDE (idempotent; keeps your other settings).
    #[command(after_help = "Examples:\n  vl install claude-code\n  vl install claude-code --statusline\n  \
                      vl install cursor --project .\n  vl install cursor\n  vl install claude-code --add-to-path")]
    Install {
        /// Put the folder of the installed `vl` on your PATH, the way rustup does (your shell's
        /// profile files; the user PATH on Windows); `vl uninstall` takes it out again.
        #[arg(long, global = true)]
        add_to_path: bool,
        #[command(subcommand)]
        target: InstallTarget,
    },
    /// Remove exactly what `vl install` added, keeping your other settings.
    #[command(after_help = "A file nobody but install changed gets your own bytes back exactly; \
                            from any other, only what install added comes out, every other byte kept. A file \
                            install created goes only when nothing else is in it. A status line that \
                            `--statusline` replaced is put back. The copy of vl goes when no agent's hooks \
                            run it any more.\n\nExamples:\n  vl uninstall claude-code\n  \
                            vl uninstall cursor --project .")]
    Uninstall {
        #[command(subcommand)]
        target: UninstallTarget,
    },
    /// One short line for an IDE status bar: questions due, streak, concepts of the project.
    #[command(after_help = "For Claude Code's statusLine setting (`vl install claude-code --statusline` sets \
                            it up): reads the status JSON on stdin, prints one line, always exits 0.\n\n\
                            Example:\n  echo '{\"cwd\":\"'$PWD'\"}' | vl statusline")]
    Statusline,
    /// Open the worker's dashboard in your browser (starting the worker if needed).
    #[command(after_help = "The page needs your key (<data>/worker.key). This command asks the worker for a \
                            one-time code (good once, for a minute) and hands the page that code, which the page \
                            trades for the key: the key itself is in no URL, no command line and no log. Without \
                            a desktop browser, open the printed address and paste the key from <data>/worker.key \
                            into the page.\n\nExample:\n  vl dashboard")]
    Dashboard,
}

#[derive(Debug, Subcommand)]
pub enum JobsAction {
    /// List jobs, newest first, with filters.
    #[command(after_help = "States: available, running, succeeded, retryable, dead, cancelled, held.\n\
                            Kinds: ingest, analyze_stack, analyze_static, analyze_concepts, analyze_quiz, sync, \
                            optimize_scheduler.\n\n\
                            Examples:\n  vl jobs list --state dead --kind sync\n  vl jobs list --since 2h --json\n  \
                            vl jobs list --session 5f0c2a7e --limit 100")]
    List {
        /// Only jobs in this state.
        #[arg(long)]
        state: Option<String>,
        /// Only jobs of this kind.
        #[arg(long)]
        kind: Option<String>,
        /// Only the jobs of this session.
        #[arg(long)]
        session: Option<String>,
        /// Only jobs created since T: ms since the epoch, or a duration ago like 30m, 2h, 1d.
        #[arg(long, value_name = "T")]
        since: Option<String>,
        /// At most N jobs (1–1000).
        #[arg(long, value_name = "N", default_value_t = 50)]
        limit: usize,
        /// Only jobs older than this id (the `next_before` of the previous page).
        #[arg(long, value_name = "ID")]
        before: Option<i64>,
        /// Print the JSON of `GET /api/jobs`.
        #[arg(long)]
        json: bool,
    },
    /// Show one job: payload, result, and every attempt with its error.
    #[command(after_help = "Examples:\n  vl jobs show 42\n  vl jobs show 42 --json")]
    Show {
        id: i64,
        /// Print the JSON of `GET /api/jobs/:id`.
        #[arg(long)]
        json: bool,
    },
    /// Move dead, cancelled or succeeded jobs back to available (attempts reset, history kept).
    #[command(
        group(ArgGroup::new("which").required(true).args(["ids", "state"])),
        after_help = "Either job ids, or --state with optional --kind and --since.\n\nExamples:\n  vl jobs replay 42 43\n  \
                      vl jobs replay --state dead --kind analyze_concepts\n  vl jobs replay --state dead --since 1d"
    )]
    Replay {
        /// The jobs to replay.
        #[arg(value_name = "ID", conflicts_with = "state")]
        ids: Vec<i64>,
        /// Replay every job in this state: dead, cancelled or succeeded.
        #[arg(long)]
        state: Option<String>,
        /// With --state: only jobs of this kind.
        #[arg(long, requires = "state")]
        kind: Option<String>,
        /// With --state: only jobs finished since T (ms since the epoch, or 30m, 2h, 1d ago).
        #[arg(long, value_name = "T", requires = "state")]
        since: Option<String>,
        /// Print `{"replayed":[ids]}`.
        #[arg(long)]
        json: bool,
    },
    /// Cancel queued, retryable, running, held or dead jobs, and the jobs waiting on them.
    #[command(after_help = "A running job's late result is discarded. Jobs that depend on a cancelled job \
                            (a later pipeline step) are cancelled with it: they could never run.\n\n\
                            Example:\n  vl jobs cancel 42 43")]
    Cancel {
        /// The jobs to cancel.
        #[arg(value_name = "ID", required = true)]
        ids: Vec<i64>,
        /// Print `{"cancelled":[ids]}`.
        #[arg(long)]
        json: bool,
    },
    /// Resume the jobs held because a provider refused our credentials (HTTP 401/403, or no key).
    #[command(after_help = "Held jobs become available and the jobs the refusal killed are replayed; \
                            the provider gets one call first. A provider also resumes by itself when \
                            its credentials change (a new key at worker start; `vl login` for the upstream), \
                            and an LLM provider refused for its account (not logged in, no credit) when a \
                            try of it answers (5 min after the pause, then at doubling intervals up to hourly).\n\n\
                            Examples:\n  vl jobs resume\n  vl jobs resume --provider anthropic\n  \
                            vl jobs resume --provider upstream")]
    Resume {
        /// Only this provider (anthropic, openai, gemini, openrouter, command, upstream).
        #[arg(long, value_name = "P")]
        provider: Option<String>,
        /// Print the JSON of `POST /api/jobs/resume`.
        #[arg(long)]
        json: bool,
    },
    /// Counts per state and kind, the oldest waiting job's age, and recent throughput.
    #[command(after_help = "Examples:\n  vl jobs stats\n  vl jobs stats --json")]
    Stats {
        /// Print the JSON of `GET /api/jobs/stats`.
        #[arg(long)]
        json: bool,
    },
    /// Apply retention now: delete succeeded/cancelled jobs past VIBELEARN_RETENTION_SUCCEEDED_HOURS
    /// and dead ones past VIBELEARN_RETENTION_DEAD_DAYS.
    #[command(after_help = "Example:\n  vl jobs prune")]
    Prune {
        /// Print `{"pruned":n}`.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, Args)]
#[command(group(ArgGroup::new("action").required(true).args(["key", "status", "logout"])))]
pub struct LoginArgs {
    /// Your API key; `-` reads it from stdin (keeps it out of your shell history).
    #[arg(value_name = "API_KEY")]
    pub key: Option<String>,
    /// Show whether a key is stored (masked).
    #[arg(long)]
    pub status: bool,
    /// Remove the stored key.
    #[arg(long)]
    pub logout: bool,
}

#[derive(Debug, Subcommand)]
pub enum InstallTarget {
    /// Add the hooks to ~/.claude/settings.json (every other byte of it kept).
    #[command(after_help = "Each hook runs `<this vl> hook claude-code <event>`. Re-running changes nothing; an \
                            earlier install is upgraded in place.\n\nExamples:\n  vl install claude-code\n  \
                            vl install claude-code --statusline")]
    ClaudeCode {
        /// Also set Claude Code's status line to `vl statusline` (a status line of yours is
        /// kept aside and put back by `vl uninstall claude-code`).
        #[arg(long)]
        statusline: bool,
    },
    /// Add the hooks to .cursor/hooks.json of a project, or ~/.cursor/hooks.json.
    #[command(after_help = "Each hook runs `<this vl> hook cursor <event>`. Re-running changes nothing.\n\n\
                            Examples:\n  vl install cursor --project .\n  vl install cursor")]
    Cursor {
        /// Install for this project (DIR/.cursor/hooks.json) instead of for the user.
        #[arg(long, value_name = "DIR")]
        project: Option<PathBuf>,
    },
    /// Add the hooks to ~/.gemini/settings.json (Gemini CLI runs them in trusted folders).
    Gemini,
    /// Add the hooks to ~/.codex/hooks.json and trust them in Codex (through `codex app-server`).
    Codex,
    /// Add the hooks to ~/.copilot/settings.json (the user's file only: Copilot CLI also runs a
    /// repository's hooks, and would run both).
    Copilot,
}

#[derive(Debug, Subcommand)]
pub enum UninstallTarget {
    /// Remove VibeLearn's hooks (and its status line) from ~/.claude/settings.json.
    ClaudeCode,
    /// Remove VibeLearn's hooks from .cursor/hooks.json of a project, or ~/.cursor/hooks.json.
    Cursor {
        /// The project (DIR/.cursor/hooks.json) instead of the user's file.
        #[arg(long, value_name = "DIR")]
        project: Option<PathBuf>,
    },
    /// Remove VibeLearn's hooks from ~/.gemini/settings.json.
    Gemini,
    /// Remove VibeLearn's hooks from ~/.codex/hooks.json, and their trust entries.
    Codex,
    /// Remove VibeLearn's hooks from ~/.copilot/settings.json.
    Copilot,
}

/// `vl quiz` options.
#[derive(Debug, clap::Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct QuizArgs {
    #[command(subcommand)]
    pub action: Option<QuizAction>,
    /// Only one session's questions; `--session` alone picks the latest session with questions.
    #[arg(long, value_name = "ID", num_args = 0..=1)]
    pub session: Option<Option<String>>,
    /// Only the questions of this project (its folder name, as `vl status` shows it).
    #[arg(long, value_name = "P")]
    pub project: Option<String>,
    /// Drill the leeches (cards suspended after too many lapses), due or not.
    #[arg(long)]
    pub leeches: bool,
    /// Ask at most N questions (re-asks and follow-ups earned on the way come on top).
    #[arg(long, value_name = "N", default_value_t = DEFAULT_QUIZ_LIMIT, value_parser = clap::value_parser!(u32).range(1..=500))]
    pub limit: u32,
}

/// The quiz as a JSON API for IDE front ends (SPEC §7).
#[derive(Debug, Subcommand)]
pub enum QuizAction {
    /// Print the next due card as JSON, without its answer.
    #[command(after_help = "Example:\n  vl quiz next --json")]
    Next(QuizNextArgs),
    /// Grade an answer, schedule the card, print the explanation and the next due time as JSON.
    #[command(after_help = "Objective types are graded by the answer (the rating is suggested, --rating \
                            overrides it); free-text types need --rating 1-4.\n\nExamples:\n  \
                            vl quiz answer q-3f2a b --json\n  vl quiz answer q-3f2a 'It borrows' --rating 3 --json")]
    Answer(QuizAnswerArgs),
}

#[derive(Debug, clap::Args)]
pub struct QuizNextArgs {
    /// Print JSON (the only format; the flag keeps the command line self-describing).
    #[arg(long)]
    pub json: bool,
    #[arg(long, value_name = "ID")]
    pub session: Option<String>,
    #[arg(long, value_name = "P")]
    pub project: Option<String>,
}

#[derive(Debug, clap::Args)]
pub struct QuizAnswerArgs {
    /// The question id, as `vl quiz next --json` printed it.
    pub id: String,
    /// The answer (quote it when it has spaces; it may start with `-`).
    #[arg(allow_hyphen_values = true)]
    pub answer: String,
    /// Again 1, Hard 2, Good 3, Easy 4; required for free-text types.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u8).range(1..=4))]
    pub rating: Option<u8>,
    #[arg(long)]
    pub json: bool,
}

/// Questions per `vl quiz` run unless `--limit` says otherwise: about five minutes.
pub const DEFAULT_QUIZ_LIMIT: u32 = 10;

#[derive(Debug, Subcommand)]
pub enum ExportTarget {
    /// Anki's text-import format: File > Import in Anki, then pick the file.
    Anki {
        /// The file to write (default: vibelearn-anki.txt in the current directory).
        #[arg(long, value_name = "FILE")]
        out: Option<PathBuf>,
        /// The parent deck; each project becomes `NAME::<project>`.
        #[arg(long, value_name = "NAME", default_value = "VibeLearn")]
        deck: String,
        /// Only this project's cards.
        #[arg(long, value_name = "P")]
        project: Option<String>,
    },
    /// One readable Markdown file per project.
    Markdown {
        /// The directory to write into (default: vibelearn-markdown in the current directory).
        #[arg(long, value_name = "DIR")]
        out: Option<PathBuf>,
    },
}

#[derive(Debug, Subcommand)]
pub enum WorkerAction {
    /// Run the worker in the foreground (HTTP server + job runner) until stopped.
    Run,
    /// Start a detached worker if none is healthy; prints one JSON line and always exits 0.
    Start,
    /// Stop the running worker gracefully.
    Stop,
    /// Show whether the worker runs, with pid, port, uptime and queue summary.
    Status,
}

/// `vl hook [PLATFORM] [EVENT]` in its plain form, read without building the parser.
///
/// An agent runs the hook once per tool call, and clap's derive builds the parser of every
/// command before it parses one: ~300,000 of the hook's 1.3 million instructions (callgrind,
/// docs/PERFORMANCE.md). Only what clap would read the same way is taken here: `hook` then at
/// most two words, none starting with `-` and all Unicode. Anything else (`--help`, a third
/// word, a flag) is `None` and goes to clap, which owns the usage and the messages.
pub fn plain_hook_args(args: &[std::ffi::OsString]) -> Option<(Option<String>, Option<String>)> {
    let (command, words) = args.get(1..)?.split_first()?;
    if command != "hook" || words.len() > 2 {
        return None;
    }
    let words: Vec<String> = words.iter().map(|w| w.to_str().map(str::to_owned)).collect::<Option<_>>()?;
    if words.iter().any(|w| w.starts_with('-')) {
        return None;
    }
    let mut words = words.into_iter();
    Some((words.next(), words.next()))
}

#[cfg(test)]
mod tests {
    use std::ffi::OsString;

    use clap::Parser;

    use super::*;

    fn argv(words: &[&str]) -> Vec<OsString> {
        words.iter().map(OsString::from).collect()
    }

    /// What clap makes of the same command line, as the fast path's type.
    fn by_clap(args: &[OsString]) -> Option<(Option<String>, Option<String>)> {
        match Cli::try_parse_from(args).ok()?.command? {
            Command::Hook { platform, event } => Some((platform, event)),
            _ => None,
        }
    }

    #[test]
    fn the_plain_hook_form_reads_as_clap_reads_it() {
        for words in [
            &["vl", "hook", "claude-code", "observation"][..],
            &["vl", "hook", "cursor"],
            &["vl", "hook"],
            &["vl", "hook", "no-such-agent", "no-such-event"],
            &["C:\\bin\\vl.exe", "hook", "gemini", "summarize"],
        ] {
            let args = argv(words);
            let fast = plain_hook_args(&args);
            assert!(fast.is_some(), "{words:?} should take the fast path");
            assert_eq!(fast, by_clap(&args), "{words:?}");
        }
    }

    #[test]
    fn everything_else_goes_to_clap() {
        for words in [
            &["vl"][..],
            &["vl", "status"],
            &["vl", "hook", "--help"],
            &["vl", "hook", "-h"],
            &["vl", "hook", "claude-code", "observation", "extra"],
            &["vl", "hook", "claude-code", "--verbose"],
            &["vl", "worker", "hook"],
        ] {
            assert_eq!(plain_hook_args(&argv(words)), None, "{words:?}");
        }
        let args = vec!["vl".into(), "hook".into(), crate::platform::non_unicode_arg()];
        assert_eq!(plain_hook_args(&args), None, "a word that is not Unicode is clap's to refuse");
    }
}
