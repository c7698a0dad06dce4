//! The category vocabulary of SPEC §6.3: the fourteen canonical names and the alias table
//! that maps what models actually write onto them.

/// The fourteen categories a concept may carry; anything else becomes `"general"`.
pub const CATEGORIES: [&str; 14] = [
    "async_pattern",
    "error_handling",
    "design_pattern",
    "architecture_pattern",
    "oop_pattern",
    "functional_pattern",
    "concurrency",
    "database_pattern",
    "api_design",
    "testing",
    "security",
    "state_management",
    "type_system",
    "react_pattern",
];

/// What models actually write instead of the canonical names, keyed in the form produced by
/// `category_key` (lowercase, words joined by `_`). Plural forms and a trailing `_pattern(s)`
/// are handled by `normalize_category` itself, so they need no entry here.
pub(super) const CATEGORY_ALIASES: &[(&str, &str)] = &[
    ("async", "async_pattern"),
    ("asynchronous", "async_pattern"),
    ("async_await", "async_pattern"),
    ("async_programming", "async_pattern"),
    ("asynchronous_programming", "async_pattern"),
    ("promise", "async_pattern"),
    ("future", "async_pattern"),
    ("asyncio", "async_pattern"),
    ("error", "error_handling"),
    ("exception", "error_handling"),
    ("exception_handling", "error_handling"),
    ("error_management", "error_handling"),
    ("fault_tolerance", "error_handling"),
    ("design", "design_pattern"),
    ("gof", "design_pattern"),
    ("architecture", "architecture_pattern"),
    ("architectural", "architecture_pattern"),
    ("software_architecture", "architecture_pattern"),
    ("project_structure", "architecture_pattern"),
    ("oop", "oop_pattern"),
    ("object_oriented", "oop_pattern"),
    ("object_oriented_programming", "oop_pattern"),
    ("class", "oop_pattern"),
    ("inheritance", "oop_pattern"),
    ("functional", "functional_pattern"),
    ("functional_programming", "functional_pattern"),
    ("fp", "functional_pattern"),
    ("concurrent", "concurrency"),
    ("parallelism", "concurrency"),
    ("parallel", "concurrency"),
    ("threading", "concurrency"),
    ("thread", "concurrency"),
    ("multithreading", "concurrency"),
    ("goroutine", "concurrency"),
    ("synchronization", "concurrency"),
    ("database", "database_pattern"),
    ("db", "database_pattern"),
    ("orm", "database_pattern"),
    ("sql", "database_pattern"),
    ("data_access", "database_pattern"),
    ("persistence", "database_pattern"),
    ("query", "database_pattern"),
    ("api", "api_design"),
    ("rest", "api_design"),
    ("rest_api", "api_design"),
    ("http", "api_design"),
    ("graphql", "api_design"),
    ("endpoint", "api_design"),
    ("routing", "api_design"),
    ("web_api", "api_design"),
    ("test", "testing"),
    ("unit_testing", "testing"),
    ("tdd", "testing"),
    ("auth", "security"),
    ("authentication", "security"),
    ("authorization", "security"),
    ("secure_coding", "security"),
    ("state", "state_management"),
    ("global_state", "state_management"),
    ("store", "state_management"),
    ("type", "type_system"),
    ("typing", "type_system"),
    ("generic", "type_system"),
    ("static_typing", "type_system"),
    ("type_safety", "type_system"),
    ("react", "react_pattern"),
    ("hook", "react_pattern"),
    ("react_hook", "react_pattern"),
    ("component", "react_pattern"),
    ("jsx", "react_pattern"),
    ("nextjs", "react_pattern"),
    ("next_js", "react_pattern"),
];

/// Maps whatever category text a provider wrote to one of `CATEGORIES`, or `"general"`.
///
/// "Async Patterns", "async-pattern" and "ASYNC_PATTERNS" all become `async_pattern`: the text
/// is keyed (lowercase, words joined by `_`), then tried as is, without a plural `s`, and
/// without a `_pattern(s)` suffix, each against the canonical names and the alias table.
pub fn normalize_category(raw: &str) -> &'static str {
    let key = category_key(raw);
    let mut candidates = vec![key.as_str()];
    for suffix in ["s", "_patterns", "_pattern"] {
        if let Some(stripped) = key.strip_suffix(suffix) {
            candidates.push(stripped);
        }
    }
    for candidate in candidates {
        if let Some(found) = CATEGORIES.iter().find(|c| **c == candidate) {
            return found;
        }
        if let Some((_, target)) = CATEGORY_ALIASES.iter().find(|(alias, _)| *alias == candidate) {
            return target;
        }
    }
    "general"
}

/// Lowercase, with every run of non-alphanumeric characters turned into one `_`.
fn category_key(raw: &str) -> String {
    words(raw).join("_")
}

/// The lowercase alphanumeric words of `text`, in order.
pub(super) fn words(text: &str) -> Vec<String> {
    text.to_lowercase().split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()).map(str::to_string).collect()
}
