//! The session summary the offline provider writes: what was built (stack, files, the kinds
//! of code seen), the developer's intent (their first prompt, quoted), and the architecture
//! decisions the stack and patterns reveal. Facts only; nothing is guessed.

use super::select::language_of;
use crate::analysis::concepts::{Concept, SessionSummary};
use crate::analysis::model::{Pattern, SourceFile, StackProfile};
use crate::analysis::stack::display_language;
use std::cmp::Reverse;
use std::collections::{BTreeMap, BTreeSet};

/// Longest first prompt quoted in the summary, in characters.
const MAX_INTENT_CHARS: usize = 200;

/// Human labels for the pattern types worth naming in a summary.
fn pattern_label(pattern_type: &str) -> Option<&'static str> {
    Some(match pattern_type {
        "api_route" => "API routes",
        "react_hook" => "React hooks",
        "server_action" => "server actions",
        "client_component" => "client components",
        "db_query" => "database queries",
        "async_function" | "await" => "async code",
        "promise_combinator" => "concurrent async calls",
        "error_handling" => "error handling",
        "goroutine" | "channel" | "spawned_task" | "mutex" => "concurrency",
        "test" => "tests",
        "layered_class" => "service and repository classes",
        "interface" | "type_alias" | "trait" | "struct" | "enum" | "dataclass" => "type definitions",
        "decorator" => "decorators",
        "generator" => "generators",
        _ => return None,
    })
}

pub(super) fn summary(
    stack: &StackProfile,
    patterns: &[Pattern],
    files: &[SourceFile],
    prompts: &[String],
    concepts: &[Concept],
) -> SessionSummary {
    SessionSummary {
        what_was_built: what_was_built(stack, patterns, files),
        developer_intent: developer_intent(prompts, concepts),
        architecture_decisions: decisions(stack, patterns),
    }
}

fn what_was_built(stack: &StackProfile, patterns: &[Pattern], files: &[SourceFile]) -> String {
    if files.is_empty() {
        return "A session with no captured source files.".to_string();
    }
    let mut languages: Vec<String> = Vec::new();
    let detected = stack.languages.iter().map(String::as_str);
    for lang in detected.chain(files.iter().filter_map(|f| language_of(&f.path))) {
        let shown = display_language(lang).to_string();
        if !languages.contains(&shown) {
            languages.push(shown);
        }
    }
    let subject = match (&stack.framework, languages.is_empty()) {
        (Some(fw), true) => format!("a {fw} project"),
        (Some(fw), false) => format!("a {fw} project in {}", languages.join(" and ")),
        (None, false) => format!("{} code", languages.join(" and ")),
        (None, true) => "code".to_string(),
    };
    let prefix = common_dir(files);
    let names: Vec<&str> = files.iter().take(3).map(|f| &f.path[prefix..]).collect();
    let more = if files.len() > 3 { ", …" } else { "" };
    let plural = if files.len() == 1 { "" } else { "s" };
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for label in patterns.iter().filter_map(|p| pattern_label(&p.pattern_type)) {
        *counts.entry(label).or_default() += 1;
    }
    let mut features: Vec<(&str, usize)> = counts.into_iter().collect();
    features.sort_by_key(|f| Reverse(f.1));
    let features: Vec<&str> = features.iter().take(3).map(|f| f.0).collect();
    let involving = if features.is_empty() { String::new() } else { format!(", involving {}", features.join(", ")) };
    format!("Changes to {subject} across {} file{plural} ({}{more}){involving}.", files.len(), names.join(", "))
}

/// How a language is written in prose ("TypeScript", "C#"); unknown names pass through.
/// Byte length of the directory prefix all file paths share ("/home/x/proj/"), so the
/// summary can name files relative to it; 0 when they share none.
fn common_dir(files: &[SourceFile]) -> usize {
    let Some(first) = files.first() else { return 0 };
    let mut len = first.path.rfind('/').map_or(0, |i| i + 1);
    for f in files {
        while len > 0 && !(f.path.starts_with(&first.path[..len]) && f.path.len() > len) {
            len = first.path[..len - 1].rfind('/').map_or(0, |i| i + 1);
        }
    }
    len
}

fn developer_intent(prompts: &[String], concepts: &[Concept]) -> String {
    let first = prompts.iter().map(|p| p.split_whitespace().collect::<Vec<_>>().join(" ")).find(|p| !p.is_empty());
    match first {
        Some(p) if p.chars().count() > MAX_INTENT_CHARS => {
            let cut: String = p.chars().take(MAX_INTENT_CHARS).collect();
            format!("The developer asked: \"{}…\"", cut.trim_end())
        }
        Some(p) => format!("The developer asked: \"{p}\""),
        None if concepts.is_empty() => "No prompt was captured.".to_string(),
        None => {
            let names: Vec<&str> = concepts.iter().take(3).map(|c| c.name.as_str()).collect();
            format!("No prompt was captured; the code suggests work involving {}.", names.join(", "))
        }
    }
}

fn decisions(stack: &StackProfile, patterns: &[Pattern]) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(fw) = &stack.framework {
        out.push(format!("Built on {fw}"));
    }
    let others: Vec<&str> =
        stack.frameworks.iter().map(String::as_str).filter(|f| Some(*f) != stack.framework.as_deref()).collect();
    if !others.is_empty() {
        out.push(format!("Also uses {}", others.join(", ")));
    }
    let items = [
        (&stack.orm, "Data access through"),
        (&stack.state_management, "Client state managed with"),
        (&stack.auth, "Authentication with"),
    ];
    for (item, phrase) in items {
        if let Some(item) = item {
            out.push(format!("{phrase} {item}"));
        }
    }
    for (list, phrase) in [(&stack.testing, "Tests with"), (&stack.styling, "Styling with")] {
        if !list.is_empty() {
            out.push(format!("{phrase} {}", list.join(", ")));
        }
    }
    let layered: BTreeSet<&str> =
        patterns.iter().filter(|p| p.pattern_type == "layered_class").map(|p| p.name.as_str()).collect();
    if !layered.is_empty() {
        out.push(format!("Layered classes: {}", layered.into_iter().take(4).collect::<Vec<_>>().join(", ")));
    }
    let routes = patterns.iter().filter(|p| p.pattern_type == "api_route").count();
    if routes > 0 {
        out.push(format!("{routes} API route handler{}", if routes == 1 { "" } else { "s" }));
    }
    if patterns.iter().any(|p| p.pattern_type == "server_action") {
        out.push("Mutations through server actions".to_string());
    }
    out
}
