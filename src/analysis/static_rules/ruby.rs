//! Rules for Ruby: classes (Rails' …Controller names are layered), `Struct.new`, Rails and
//! Sinatra routes (`get '/x'`, `resources :users`), ActiveRecord queries, begin/rescue, blocks
//! with parameters and lambdas, Enumerable with blocks, RSpec/minitest tests, `enum`,
//! `include Singleton`, threads, queues and mutexes.
//!
//! Ruby calls often omit parentheses (`User.all`, `get 'about'`), so these rules read
//! `Receiver.method` pairs and leading words instead of call sites.

use super::text::{find_word, ident_after, ident_at, layered_suffix, path_after, path_before, strip_word};
use super::{FileCtx, Sink};

const ROUTE_VERBS: [&str; 6] = ["get", "post", "put", "patch", "delete", "match"];
/// ActiveRecord class methods that read or write the database (`User.where`).
const AR_CLASS_METHODS: [&str; 24] = [
    "where",
    "find",
    "find_by",
    "find_by!",
    "all",
    "first",
    "last",
    "create",
    "create!",
    "joins",
    "includes",
    "order",
    "pluck",
    "count",
    "exists?",
    "find_or_create_by",
    "update_all",
    "delete_all",
    "destroy_all",
    "select",
    "limit",
    "group",
    "find_each",
    "find_sql",
];
/// Query methods distinctive enough to count on any receiver (`current_user.posts.where`).
const AR_CHAIN_METHODS: [&str; 6] = ["where", "find_by", "find_by!", "joins", "includes", "pluck"];
const ENUMERABLE: [&str; 16] = [
    "map",
    "select",
    "reject",
    "each",
    "reduce",
    "inject",
    "each_with_object",
    "flat_map",
    "sum",
    "group_by",
    "sort_by",
    "detect",
    "each_with_index",
    "filter_map",
    "any?",
    "all?",
];
const TEST_WORDS: [&str; 8] = ["describe", "RSpec.describe", "context", "it", "specify", "scenario", "feature", "test"];

#[derive(Default)]
struct State {
    class: Option<String>,
}

pub(super) fn scan(ctx: &FileCtx, sink: &mut Sink) {
    let mut st = State::default();
    for (i, m) in ctx.lines() {
        let t = m.trim_start();
        if t.is_empty() {
            continue;
        }
        definitions(&mut st, i, t, sink);
        routes_and_tests(ctx, i, m, t, sink);
        method_pairs(i, m, sink);
        bare_queries(i, t, sink);
        blocks(i, m, sink);
        misc(&st, i, m, t, sink);
    }
}

fn definitions(st: &mut State, i: usize, t: &str, sink: &mut Sink) {
    if let Some(rest) = strip_word(t, "class") {
        let name = path_after(rest, 0);
        if name.is_empty() {
            return; // `class << self`
        }
        sink.emit("class", name, i);
        if layered_suffix(name) {
            sink.emit("layered_class", name, i);
        }
        if rest.contains("Struct.new") {
            sink.emit("struct", name, i);
        }
        st.class = Some(name.to_string());
    }
    if let Some(rest) = strip_word(t, "def") {
        if let Some(name) = ident_after(rest, 0).filter(|n| n.starts_with("test_")) {
            sink.emit("test", name, i);
        }
        if rest.trim_start().starts_with("self.instance") {
            sink.emit("singleton", st.class.as_deref().unwrap_or("instance"), i);
        }
    }
    // `Point = Struct.new(:x, :y)` / `Point = Data.define(:x, :y)`.
    let name = ident_at(t, 0);
    if !name.is_empty() && name.as_bytes()[0].is_ascii_uppercase() {
        let rhs = t[name.len()..].trim_start().strip_prefix('=').map(str::trim_start).unwrap_or("");
        if rhs.starts_with("Struct.new") {
            sink.emit("struct", name, i);
        } else if rhs.starts_with("Data.define") {
            sink.emit("dataclass", name, i);
        }
    }
    if let Some(rest) = strip_word(t, "enum") {
        let attr = ident_after(rest.trim_start().trim_start_matches(':'), 0);
        if let Some(attr) = attr {
            sink.emit("enum", attr, i);
        }
    }
}

fn routes_and_tests(ctx: &FileCtx, i: usize, m: &str, t: &str, sink: &mut Sink) {
    let col = m.len() - t.len();
    // In a request spec `get "/users"` performs a request; it does not declare a route.
    let spec = ctx.path.ends_with("_spec.rb") || ctx.path.ends_with("_test.rb");
    for verb in ROUTE_VERBS.iter().filter(|_| !spec) {
        if let Some(rest) = strip_word(t, verb) {
            let start = col + verb.len() + (rest.len() - rest.trim_start_matches([' ', '(']).len());
            if let Some(path) = ctx.string_at(i, start) {
                sink.emit("api_route", &format!("{} {path}", verb.to_ascii_uppercase()), i);
            }
        }
    }
    for kw in ["resources", "resource"] {
        if let Some(rest) = strip_word(t, kw)
            && let Some(name) = ident_after(rest.trim_start().trim_start_matches(':'), 0)
        {
            sink.emit("api_route", &format!("{kw} {name}"), i);
        }
    }
    if strip_word(t, "root").is_some() {
        sink.emit("api_route", "GET /", i);
    }
    for kw in TEST_WORDS {
        let Some(rest) = t.strip_prefix(kw) else {
            continue;
        };
        if !rest.starts_with([' ', '(']) {
            continue;
        }
        let body = m.trim_end();
        if !(body.ends_with(" do") || body.ends_with('{') || body.contains(" do |")) {
            continue;
        }
        let start = col + kw.len() + (rest.len() - rest.trim_start_matches([' ', '(']).len());
        let title = ctx.string_at(i, start).map(str::to_string).or_else(|| {
            let p = path_after(m, start);
            (!p.is_empty() && p.as_bytes()[0].is_ascii_uppercase()).then(|| p.to_string())
        });
        if let Some(title) = title {
            sink.emit("test", &title, i);
        }
    }
}

/// `Receiver.method` pairs: ActiveRecord queries and Enumerable-with-block calls.
fn method_pairs(i: usize, m: &str, sink: &mut Sink) {
    let b = m.as_bytes();
    for (dot, _) in m.match_indices('.') {
        let mut meth = ident_at(m, dot + 1);
        if meth.is_empty() {
            continue;
        }
        let end = dot + 1 + meth.len();
        if matches!(b.get(end), Some(b'!' | b'?')) {
            meth = &m[dot + 1..=end];
        }
        let after = &m[dot + 1 + meth.len()..];
        let recv = path_before(m, dot);
        let constant = recv.as_bytes().first().is_some_and(u8::is_ascii_uppercase) && !recv.contains('.');
        if (constant
            && AR_CLASS_METHODS.contains(&meth)
            && !matches!(recv, "Struct" | "Data" | "Thread" | "Mutex" | "Queue"))
            || AR_CHAIN_METHODS.contains(&meth)
        {
            let name = if constant { format!("{recv}.{meth}") } else { meth.to_string() };
            sink.emit("db_query", &name, i);
        }
        if ENUMERABLE.contains(&meth) {
            // `each_with_object([]) { |x, acc| … }`: skip the arguments to reach the block.
            let a = match after.strip_prefix('(') {
                Some(_) if !after.starts_with("(&:") => {
                    super::text::matching_paren(after, 0).map_or("", |c| &after[c + 1..])
                }
                _ => after,
            };
            let a = a.trim_start();
            if a.starts_with("do") || a.starts_with('{') || a.starts_with("(&:") {
                sink.emit("higher_order_function", meth, i);
            }
        }
    }
}

/// Query methods called on the implicit `self` of a model (`where(…)` in a scope or class
/// method body), at the start of a statement.
fn bare_queries(i: usize, t: &str, sink: &mut Sink) {
    for meth in AR_CHAIN_METHODS {
        if t.strip_prefix(meth).is_some_and(|r| r.starts_with('(')) {
            sink.emit("db_query", meth, i);
        }
    }
    for (p, _) in t.match_indices("{ ") {
        let inner = &t[p + 2..];
        if AR_CHAIN_METHODS.iter().any(|m| inner.strip_prefix(m).is_some_and(|r| r.starts_with('('))) {
            sink.emit("db_query", ident_at(inner, 0), i);
        }
    }
}

/// Blocks with parameters (`do |x|`, `{ |x| … }`) and lambdas.
fn blocks(i: usize, m: &str, sink: &mut Sink) {
    for p in find_word(m, "do") {
        if m[p + 2..].trim_start().starts_with('|') {
            sink.emit("closure", &block_owner(m, p), i);
        }
    }
    for (p, _) in m.match_indices('{') {
        if m[p + 1..].trim_start().starts_with('|') {
            sink.emit("closure", &block_owner(m, p), i);
        }
    }
    if m.contains("->(") || m.contains("-> {") || m.contains("->{") || find_word(m, "lambda").next().is_some() {
        sink.emit("closure", "lambda", i);
    }
    if find_word(m, "proc").next().is_some() || m.contains("Proc.new") {
        sink.emit("closure", "proc", i);
    }
}

/// The method a block at `at` is passed to: `users.each do |u|` → `each`.
fn block_owner(m: &str, at: usize) -> String {
    let mut end = at;
    let before = m[..end].trim_end();
    if before.ends_with(')') {
        end = super::text::matching_open_paren(m, before.len() - 1).unwrap_or(end);
    }
    let path = path_before(m, end);
    let last = path.rsplit(['.', ':']).next().unwrap_or("");
    if last.is_empty() { "block".into() } else { last.into() }
}

fn misc(st: &State, i: usize, m: &str, t: &str, sink: &mut Sink) {
    if t == "begin" {
        sink.emit("error_handling", "begin/rescue", i);
    }
    if let Some(rest) = strip_word(t, "rescue") {
        let exc = path_after(rest, 0);
        sink.emit("error_handling", &if exc.is_empty() { "rescue".to_string() } else { format!("rescue {exc}") }, i);
    } else if find_word(m, "rescue").next().is_some() {
        sink.emit("error_handling", "rescue", i);
    }
    if strip_word(t, "rescue_from").is_some() {
        sink.emit("error_handling", "rescue_from", i);
    }
    if t.starts_with("include Singleton") || m.contains("@instance ||=") {
        sink.emit("singleton", st.class.as_deref().unwrap_or("Singleton"), i);
    }
    for (needle, ty, name) in [
        ("Mutex.new", "mutex", "Mutex"),
        ("Monitor.new", "mutex", "Monitor"),
        ("Thread.new", "spawned_task", "Thread.new"),
        ("Ractor.new", "spawned_task", "Ractor.new"),
        (".perform_later", "spawned_task", "perform_later"),
        ("Queue.new", "channel", "Queue"),
        ("Enumerator.new", "generator", "Enumerator"),
    ] {
        if m.contains(needle) {
            sink.emit(ty, name, i);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::testutil::{check, found};

    #[test]
    fn every_rule_positive_and_negative() {
        let positives: &[(&str, &str, &str)] = &[
            ("class User < ApplicationRecord\nend", "class", "User"),
            ("class UsersController < ApplicationController\nend", "layered_class", "UsersController"),
            ("Point = Struct.new(:x, :y)", "struct", "Point"),
            ("Coord = Data.define(:lat, :lng)", "dataclass", "Coord"),
            ("enum status: { draft: 0, published: 1 }", "enum", "status"),
            ("get '/about', to: 'pages#about'", "api_route", "GET /about"),
            ("post \"/login\" do\nend", "api_route", "POST /login"),
            ("resources :users", "api_route", "resources users"),
            ("root 'home#index'", "api_route", "GET /"),
            ("@users = User.where(active: true)", "db_query", "User.where"),
            ("user = User.find_by!(email: e)", "db_query", "User.find_by!"),
            ("current_user.posts.includes(:tags)", "db_query", "includes"),
            ("scope :active, -> { where(deactivated_at: nil) }", "db_query", "where"),
            ("  joins(:posts)\n    .group(:id)", "db_query", "joins"),
            ("xs.each_with_object([]) { |x, acc| acc << x }", "higher_order_function", "each_with_object"),
            ("begin\n  x\nrescue ActiveRecord::RecordNotFound => e\nend", "error_handling", "begin/rescue"),
            (
                "begin\n  x\nrescue ActiveRecord::RecordNotFound => e\nend",
                "error_handling",
                "rescue ActiveRecord::RecordNotFound",
            ),
            ("rescue_from ActiveRecord::RecordNotFound, with: :not_found", "error_handling", "rescue_from"),
            ("users.each do |u|\n  puts u\nend", "closure", "each"),
            ("names = users.map { |u| u.name }", "closure", "map"),
            ("square = ->(x) { x * x }", "closure", "lambda"),
            ("names = users.map(&:name)", "higher_order_function", "map"),
            ("RSpec.describe User, type: :model do\nend", "test", "User"),
            ("it 'validates email' do\nend", "test", "validates email"),
            ("def test_creates_user\nend", "test", "test_creates_user"),
            ("class Config\n  include Singleton\nend", "singleton", "Config"),
            ("lock = Mutex.new", "mutex", "Mutex"),
            ("t = Thread.new { work }", "spawned_task", "Thread.new"),
            ("q = Queue.new", "channel", "Queue"),
            ("e = Enumerator.new do |y|\nend", "generator", "Enumerator"),
        ];
        let negatives: &[(&str, &str)] = &[
            ("klass = 1", "class"),
            ("class User\nend", "layered_class"),
            ("Point = Hash.new", "struct"),
            ("Point = Hash.new", "dataclass"),
            ("enumerable = 1", "enum"),
            ("params.get(1)\ngetter 'x'", "api_route"),
            ("hash.find { |k| k }", "db_query"),
            ("where_clause = 1", "db_query"),
            ("rescued = 1", "error_handling"),
            ("items.each do\nend", "closure"),
            ("names.select(:id)", "higher_order_function"),
            ("describe_thing\nit", "test"),
            ("instance = 1", "singleton"),
            ("mutex = 1", "mutex"),
            ("thread = 1", "spawned_task"),
            ("queue = []", "channel"),
            ("yielder = 1", "generator"),
        ];
        check("app/models/user.rb", "#", positives, negatives);
    }

    #[test]
    fn request_specs_do_not_declare_routes() {
        let f = found("spec/requests/users_spec.rb", "it 'lists' do\n  get '/users'\nend\n");
        assert!(f.iter().all(|(t, _)| t != "api_route"), "{f:?}");
    }

    #[test]
    fn heredocs_strings_and_comments_are_not_code() {
        let src = "sql = <<~SQL\n  User.where(x) rescue\nSQL\ns = \"Thread.new #{1}\"\n=begin\nresources :x\n=end\n";
        let f = found("a.rb", src);
        assert!(
            f.iter().all(|(t, _)| t != "db_query" && t != "spawned_task" && t != "api_route" && t != "error_handling"),
            "{f:?}"
        );
    }
}
