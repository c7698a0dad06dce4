//! clap definitions: parsing only. Each command's behaviour lives in its own module.

use clap::{Parser, Subcommand};

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
    #[command(subcommand)]
    pub command: Command,
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
    #[command(after_help = "Needs no keys and no network; uses a temporary data directory.\n\nExample:\n  vl demo")]
    Demo,
    /// IDE hook entry point: reads the event JSON on stdin, prints one JSON line, exits 0.
    #[command(after_help = "Platforms: claude-code, cursor, raw\nEvents: session-start, session-init, observation, \
                            file-edit, summarize, session-complete\n\nExample:\n  echo '{\"session_id\":\"s1\",\"prompt\":\"hi\"}' | vl hook claude-code session-init")]
    Hook {
        /// claude-code, cursor or raw.
        platform: String,
        /// session-start, session-init, observation, file-edit, summarize or session-complete.
        event: String,
    },
    /// Spaced-repetition quiz on your sessions' concepts: due reviews first, then new questions.
    #[command(after_help = "Answers are read one per line, so a pipe works too; each answer is saved at once, and \
                            Ctrl-C or the end of input stops without losing any.\n\nExamples:\n  vl quiz\n  \
                            vl quiz --limit 5\n  vl quiz --session\n  printf 'b\\ntrue\\n' | vl quiz --limit 2")]
    Quiz(QuizArgs),
    /// Learning summary: sessions, concepts, questions due, mastered concepts, streak, provider health.
    #[command(after_help = "Reads the database only; works whether or not the worker runs.\n\nExample:\n  vl status")]
    Status,
    /// Concepts under 50 % mastery, weakest first, each with a bar.
    #[command(after_help = "Example:\n  vl gaps")]
    Gaps,
}

/// `vl quiz` options.
#[derive(Debug, clap::Args)]
pub struct QuizArgs {
    /// Only one session's questions; `--session` alone picks the latest session with questions.
    #[arg(long, value_name = "ID", num_args = 0..=1)]
    pub session: Option<Option<String>>,
    /// Ask at most N questions (follow-ups earned on the way come on top).
    #[arg(long, value_name = "N", default_value_t = DEFAULT_QUIZ_LIMIT, value_parser = clap::value_parser!(u32).range(1..=500))]
    pub limit: u32,
}

/// Questions per `vl quiz` run unless `--limit` says otherwise: about five minutes.
pub const DEFAULT_QUIZ_LIMIT: u32 = 10;

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
