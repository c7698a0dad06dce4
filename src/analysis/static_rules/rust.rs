//! Rules for Rust: items (struct, enum, trait, type alias), `#[derive]` lists, lifetimes,
//! async fns and `.await`, `?` and `Result` returns, tokio/std tasks, channels, locks,
//! one-time statics (`OnceLock`, `lazy_static!`), closures and iterator adaptors, axum/actix
//! routes, sqlx/Diesel/SeaORM queries and `#[test]` functions.
//!
//! The lexer already told char literals from lifetimes, so in the masked text a `'` followed by
//! an identifier is always a lifetime or a loop label; the rule below keeps the lifetimes.

use super::text::{
    calls, enclosing_open_paren, find_word, ident_after, is_ident, layered_suffix, matching_open_paren, path_before,
    prev_non_space, strip_modifiers, strip_word,
};
use super::{FileCtx, Sink};

const MODIFIERS: [&str; 8] = ["pub", "pub(crate)", "pub(super)", "unsafe", "const", "async", "extern", "default"];
const HOF_METHODS: [&str; 20] = [
    "map",
    "filter",
    "filter_map",
    "flat_map",
    "fold",
    "for_each",
    "any",
    "all",
    "find",
    "find_map",
    "and_then",
    "reduce",
    "take_while",
    "skip_while",
    "position",
    "max_by_key",
    "min_by_key",
    "sort_by",
    "sort_by_key",
    "retain",
];
const ROUTE_VERBS: [&str; 5] = ["get", "post", "put", "patch", "delete"];
/// Look-ahead for a `#[derive(` list split over lines.
const DERIVE_LOOKAHEAD: usize = 6;

#[derive(Default)]
struct State {
    /// A `#[test]`-like attribute waiting for its `fn`.
    pending_test: bool,
}

pub(super) fn scan(ctx: &FileCtx, sink: &mut Sink) {
    let mut st = State::default();
    for (i, m) in ctx.lines() {
        let t = m.trim_start();
        if t.is_empty() {
            continue;
        }
        if t.starts_with("#[") || t.starts_with("#![") {
            attribute(ctx, &mut st, i, t, sink);
            continue;
        }
        items(&mut st, i, t, sink);
        // A type's own cleanup (issue 31): `impl Drop for TempDir {`.
        if let Some(rest) = t.strip_prefix("impl Drop for ").or_else(|| t.strip_prefix("impl<'_> Drop for ")) {
            let name: String = rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
            sink.emit("context_manager", &format!("Drop for {name}"), i);
        }
        lifetimes(i, m, sink);
        errors_and_await(i, m, sink);
        closures(i, m, sink);
        call_rules(ctx, i, m, sink);
        singletons_and_locks(i, m, sink);
    }
}

fn attribute(ctx: &FileCtx, st: &mut State, i: usize, t: &str, sink: &mut Sink) {
    let body = t.trim_start_matches("#[").trim_start_matches("#![");
    if let Some(rest) = body.strip_prefix("derive(") {
        sink.emit("derive_macro", &derive_list(ctx, i, rest), i);
        return;
    }
    let path = super::text::path_after(body, 0);
    let last = path.rsplit("::").next().unwrap_or("");
    if matches!(last, "test" | "rstest" | "test_case") || path.ends_with("::test") {
        st.pending_test = true;
    }
    if ROUTE_VERBS.contains(&last) && body[path.len()..].starts_with('(') {
        let col = ctx.masked_line(i).find(path).map_or(0, |p| p + path.len() + 1);
        if let Some(route) = ctx.string_at(i, col) {
            sink.emit("api_route", &format!("{} {route}", last.to_ascii_uppercase()), i);
        }
    }
}

/// "Debug, Clone, Serialize" from `#[derive(Debug, Clone,\n Serialize)]`.
fn derive_list(ctx: &FileCtx, i: usize, first: &str) -> String {
    let mut text = first.to_string();
    let mut j = i + 1;
    while !text.contains(')') && j < ctx.line_count() && j <= i + DERIVE_LOOKAHEAD {
        text.push(' ');
        text.push_str(ctx.masked_line(j).trim());
        j += 1;
    }
    let inner = text.split(')').next().unwrap_or("");
    inner.split(',').map(str::trim).filter(|s| !s.is_empty()).collect::<Vec<_>>().join(", ")
}

fn items(st: &mut State, i: usize, t: &str, sink: &mut Sink) {
    let is_async = t.split_whitespace().take_while(|w| *w != "fn").any(|w| w == "async");
    let d = strip_modifiers(t, &MODIFIERS);
    // `extern "C" fn`: the ABI string is masked to `" "`; skip it.
    let d = match d.strip_prefix('"').and_then(|r| r.split_once('"')) {
        Some((_, rest)) => strip_modifiers(rest, &MODIFIERS),
        None => d,
    };
    if let Some(name) = strip_word(d, "struct").and_then(|r| ident_after(r, 0)) {
        sink.emit("struct", name, i);
        if layered_suffix(name) {
            sink.emit("layered_class", name, i);
        }
    } else if let Some(name) = strip_word(d, "enum").and_then(|r| ident_after(r, 0)) {
        sink.emit("enum", name, i);
    } else if let Some(name) = strip_word(d, "trait").and_then(|r| ident_after(r, 0)) {
        sink.emit("trait", name, i);
    } else if let Some(name) = strip_word(d, "type").and_then(|r| ident_after(r, 0)) {
        if d.contains('=') {
            sink.emit("type_alias", name, i);
        }
    } else if let Some(rest) = strip_word(d, "fn") {
        let Some(name) = ident_after(rest, 0) else {
            return;
        };
        if is_async {
            sink.emit("async_function", name, i);
        }
        if std::mem::take(&mut st.pending_test) {
            sink.emit("test", name, i);
        }
        if let Some((_, ret)) = rest.split_once("->")
            && ret.trim_start().split('<').next().is_some_and(|r| r.ends_with("Result"))
        {
            sink.emit("error_handling", "Result", i);
        }
        if ["Fn(", "FnMut(", "FnOnce("].iter().any(|f| find_word(rest, f).next().is_some()) {
            sink.emit("higher_order_function", name, i);
        }
    }
}

/// `'a` after `<`, `,`, `&`, `+` or `:` (generics, references, bounds) — not loop labels.
fn lifetimes(i: usize, m: &str, sink: &mut Sink) {
    let b = m.as_bytes();
    for (p, _) in m.match_indices('\'') {
        let name_len = b[p + 1..].iter().take_while(|&&c| is_ident(c)).count();
        if name_len == 0 {
            continue;
        }
        if let Some((_, c)) = prev_non_space(m, p)
            && matches!(c, b'<' | b',' | b'&' | b'+' | b':')
        {
            sink.emit("lifetime", &m[p..p + 1 + name_len], i);
        }
    }
}

fn errors_and_await(i: usize, m: &str, sink: &mut Sink) {
    let b = m.as_bytes();
    for (p, _) in m.match_indices('?') {
        let before = p.checked_sub(1).map(|q| b[q]);
        let after = b.get(p + 1).copied();
        let operand = before.is_some_and(|c| is_ident(c) || matches!(c, b')' | b']' | b'?' | b'>'));
        let ends = after.is_none_or(|c| !is_ident(c));
        if operand && ends {
            sink.emit("error_handling", "? operator", i);
        }
    }
    if m.contains(".map_err(") {
        sink.emit("error_handling", "map_err", i);
    }
    for (p, _) in m.match_indices(".await") {
        if b.get(p + 6).is_some_and(|&c| is_ident(c)) {
            continue;
        }
        let end = if p > 0 && b[p - 1] == b')' { matching_open_paren(m, p - 1).unwrap_or(p) } else { p };
        let target = path_before(m, end);
        sink.emit("await", if target.is_empty() { ".await" } else { target }, i);
    }
}

/// `|x| …`, `|| …`, `move |x| …` where an expression starts (argument, binding, block).
fn closures(i: usize, m: &str, sink: &mut Sink) {
    let b = m.as_bytes();
    let mut p = 0;
    while let Some(off) = m[p..].find('|') {
        let at = p + off;
        p = at + 1;
        let prev = prev_non_space(m, at);
        let after_move = m[..at].trim_end().ends_with("move");
        let starts_expr = match prev {
            None => true,
            Some((_, c)) => matches!(c, b'(' | b',' | b'=' | b'{' | b';') || after_move,
        };
        if !starts_expr {
            continue;
        }
        // `||` is a closure without parameters; otherwise the parameter list must close.
        let closes = b.get(at + 1) == Some(&b'|') || m[at + 1..].contains('|');
        if !closes {
            continue;
        }
        let name = match prev {
            Some((q, b'(')) => callee(m, q),
            Some((q, b',')) => enclosing_open_paren(m, q).map_or("closure".into(), |o| callee(m, o)),
            _ if after_move => {
                let mv = m[..at].trim_end().len() - 4;
                match prev_non_space(m, mv) {
                    Some((q, b'(')) => callee(m, q),
                    _ => "closure".into(),
                }
            }
            _ => "closure".into(),
        };
        sink.emit("closure", &name, i);
        // Skip over the parameter list so its closing `|` is not read as another closure.
        p = if b.get(at + 1) == Some(&b'|') { at + 2 } else { m[at + 1..].find('|').map_or(m.len(), |e| at + 2 + e) };
    }
}

fn callee(m: &str, open: usize) -> String {
    let path = path_before(m, open);
    let last = path.rsplit(['.', ':']).next().unwrap_or("");
    if last.is_empty() { "closure".into() } else { last.into() }
}

/// The last two `::` segments of a path: `std::thread::spawn` → `thread::spawn`.
fn tail2(path: &str) -> String {
    let segs: Vec<&str> = path.split("::").collect();
    segs[segs.len().saturating_sub(2)..].join("::")
}

fn call_rules(ctx: &FileCtx, i: usize, m: &str, sink: &mut Sink) {
    for c in calls(m) {
        let path = c.path(m);
        let tail = tail2(&path);
        match c.name {
            "spawn" if matches!(tail.as_str(), "tokio::spawn" | "task::spawn" | "thread::spawn" | "rayon::spawn") => {
                sink.emit("spawned_task", &tail, i)
            }
            "spawn_blocking" | "spawn_local" => sink.emit("spawned_task", c.name, i),
            "join!" | "try_join!" | "select!" => sink.emit("promise_combinator", &path, i),
            "join_all" | "try_join_all" | "select_all" => sink.emit("promise_combinator", c.name, i),
            "channel" | "unbounded_channel" | "sync_channel" | "bounded" | "unbounded" if !c.recv.is_empty() => {
                sink.emit("channel", &tail, i)
            }
            "route" if c.method => axum_route(ctx, i, m, c.open, sink),
            "query" | "query_as" | "query_scalar" | "query!" | "query_as!" | "query_scalar!"
                if c.recv.is_empty() || c.recv == "sqlx" =>
            {
                sink.emit("db_query", &path, i)
            }
            "fetch_one" | "fetch_all" | "fetch_optional" | "fetch" | "get_result" | "get_results" | "load"
                if c.method =>
            {
                sink.emit("db_query", c.name, i)
            }
            "insert_into" | "update" | "delete" if c.recv == "diesel" => sink.emit("db_query", &path, i),
            "find" | "find_by_id" | "insert" if c.recv.ends_with("Entity") => sink.emit("db_query", &path, i),
            _ => {}
        }
        if c.method && HOF_METHODS.contains(&c.name) {
            // Only this call's own arguments (to the closing paren, or the line's end).
            let close = super::text::matching_paren(m, c.open).unwrap_or(m.len());
            let args = m[c.open + 1..close].trim();
            let args = args.strip_prefix("move").map_or(args, str::trim_start);
            let fn_path = args.contains("::") && args.bytes().all(|b| is_ident(b) || b == b':');
            if args.starts_with('|') || fn_path {
                sink.emit("higher_order_function", c.name, i);
            }
        }
    }
}

/// axum/actix `.route("/users", get(list).post(create))` → one route per verb on the line.
fn axum_route(ctx: &FileCtx, i: usize, m: &str, open: usize, sink: &mut Sink) {
    let Some(path) = ctx.string_at(i, open + 1) else {
        return;
    };
    // This call's own arguments: a second `.route(` on the line has its own verbs.
    let rest = match super::text::matching_paren(m, open) {
        Some(close) => &m[open + 1..close],
        None => super::text::ahead(m, open + 1),
    };
    let mut any = false;
    for verb in ROUTE_VERBS {
        if find_word(rest, &format!("{verb}(")).next().is_some() {
            sink.emit("api_route", &format!("{} {path}", verb.to_ascii_uppercase()), i);
            any = true;
        }
    }
    if !any {
        sink.emit("api_route", &format!("ROUTE {path}"), i);
    }
}

fn singletons_and_locks(i: usize, m: &str, sink: &mut Sink) {
    for lock in ["Mutex", "RwLock"] {
        if find_word(m, lock).any(|p| m[p + lock.len()..].starts_with('<') || m[p + lock.len()..].starts_with("::new"))
        {
            sink.emit("mutex", lock, i);
        }
    }
    let once = ["OnceLock", "OnceCell", "LazyLock", "Lazy"]
        .into_iter()
        .find(|w| find_word(m, w).any(|p| m[p + w.len()..].starts_with('<')));
    let once = once.or_else(|| ["lazy_static!", "thread_local!"].into_iter().find(|w| m.contains(w)));
    if let Some(kind) = once {
        let name = find_word(m, "static").next().and_then(|p| ident_after(m, p + 6)).filter(|n| *n != "ref");
        let name = name.or_else(|| find_word(m, "ref").next().and_then(|p| ident_after(m, p + 3)));
        sink.emit("singleton", name.unwrap_or(kind), i);
    }
}

#[cfg(test)]
mod tests {
    use super::super::testutil::{check, found};

    #[test]
    fn every_rule_positive_and_negative() {
        let positives: &[(&str, &str, &str)] = &[
            ("pub struct User {\n    id: i64,\n}", "struct", "User"),
            ("pub(crate) struct UserRepository;", "layered_class", "UserRepository"),
            ("enum Role { Admin, Member }", "enum", "Role"),
            ("pub trait Store: Send {\n    fn get(&self);\n}", "trait", "Store"),
            ("type Db = Arc<Pool>;", "type_alias", "Db"),
            ("#[derive(Debug, Clone,\n    Serialize)]\nstruct A;", "derive_macro", "Debug, Clone, Serialize"),
            ("fn first<'a>(x: &'a str) -> &'a str { x }", "lifetime", "'a"),
            ("pub async fn list_users(State(db): State<Db>) {}", "async_function", "list_users"),
            ("let rows = sqlx::query(\"x\").fetch_all(&pool).await?;", "await", "fetch_all"),
            ("let u = load(id).await;", "await", "load"),
            ("let n = s.parse::<i32>()?;", "error_handling", "? operator"),
            ("fn parse(s: &str) -> Result<u8, Error> {}", "error_handling", "Result"),
            ("fn main() -> anyhow::Result<()> {}", "error_handling", "Result"),
            ("let h = tokio::spawn(async move { work().await });", "spawned_task", "tokio::spawn"),
            ("std::thread::spawn(|| run());", "spawned_task", "thread::spawn"),
            ("let (a, b) = tokio::join!(f(), g());", "promise_combinator", "tokio::join!"),
            ("let all = futures::future::join_all(fs).await;", "promise_combinator", "join_all"),
            ("let (tx, rx) = mpsc::channel(16);", "channel", "mpsc::channel"),
            ("let m = Arc::new(Mutex::new(0));", "mutex", "Mutex"),
            ("static CONFIG: OnceLock<Config> = OnceLock::new();", "singleton", "CONFIG"),
            ("lazy_static! {\n    static ref RE: u8 = 1;\n}", "singleton", "lazy_static!"),
            ("let ids: Vec<_> = xs.iter().map(|u| u.id).collect();", "closure", "map"),
            ("let ids: Vec<_> = xs.iter().map(|u| u.id).collect();", "higher_order_function", "map"),
            ("let f = move |x| x + 1;", "closure", "closure"),
            ("fn apply<F: Fn(i32) -> i32>(f: F) {}", "higher_order_function", "apply"),
            ("let v: Vec<String> = xs.iter().map(String::from).collect();", "higher_order_function", "map"),
            ("Router::new().route(\"/users\", get(list).post(create))", "api_route", "GET /users"),
            ("Router::new().route(\"/users\", get(list).post(create))", "api_route", "POST /users"),
            ("#[get(\"/health\")]\nasync fn health() {}", "api_route", "GET /health"),
            ("r.route(\"/a\", get(x)).route(\"/b\", post(y))", "api_route", "POST /b"),
            ("sqlx::query_as::<_, User>(\"SELECT 1\")", "db_query", "sqlx::query_as"),
            ("let u = users.load::<User>(&mut conn)?;", "db_query", "load"),
            ("#[test]\nfn adds() {}", "test", "adds"),
            ("#[tokio::test]\nasync fn serves() {}", "test", "serves"),
        ];
        let negatives: &[(&str, &str)] = &[
            ("let structure = 1;", "struct"),
            ("struct User;", "layered_class"),
            ("let enumerate = xs.iter().enumerate();", "enum"),
            ("let traits = 1;", "trait"),
            ("trait T { type Item; }", "type_alias"),
            ("#[allow(dead_code)]\nstruct A;", "derive_macro"),
            ("'outer: loop { break 'outer; }", "lifetime"),
            ("let c = 'a';", "lifetime"),
            ("fn sync_fn() {}", "async_function"),
            ("let awaited = 1;", "await"),
            ("fn f<T: ?Sized>() {}", "error_handling"),
            ("let h = spawn_thread();", "spawned_task"),
            ("let j = path.join(\"x\");", "promise_combinator"),
            ("let c = channel();", "channel"),
            ("let mutex_count = 1;", "mutex"),
            ("static N: u8 = 1;", "singleton"),
            ("let b = a || c;", "closure"),
            ("let o = x.map(Some);", "higher_order_function"),
            ("let o = x.map(Json).ok_or(E::NotFound);", "higher_order_function"),
            ("let r = map.get(\"/x\");", "api_route"),
            ("let q = query_builder();", "db_query"),
            ("fn helper() {}", "test"),
        ];
        check("src/main.rs", "//", positives, negatives);
    }

    #[test]
    fn each_route_call_keeps_its_own_verbs() {
        let f = found("a.rs", "r.route(\"/a\", get(x)).route(\"/b\", post(y));\n");
        assert!(f.contains(&("api_route".into(), "GET /a".into())), "{f:?}");
        assert!(!f.contains(&("api_route".into(), "POST /a".into())), "{f:?}");
    }

    #[test]
    fn strings_chars_and_comments_are_not_code() {
        let src = "let s = r#\"tokio::spawn(x)?\"#;\nlet c = '?';\n/// tokio::join!(a)\nlet l = '|';\n";
        let f = found("a.rs", src);
        assert!(f.is_empty(), "{f:?}");
    }
}
