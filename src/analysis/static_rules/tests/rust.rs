//! Rust: the old rules' table (ported), plus trait impls, bounded vs unbounded generics, and
//! `?` named by what the enclosing function returns.

use super::{check, found};

#[test]
fn every_pattern_positive_and_negative() {
    let positives: &[(&str, &str, &str)] = &[
        ("pub struct User {\n    id: i64,\n}", "struct", "User"),
        ("pub(crate) struct UserRepository;", "layered_class", "UserRepository"),
        ("enum Role { Admin, Member }", "enum", "Role"),
        ("pub trait Store: Send {\n    fn get(&self);\n}", "trait", "Store"),
        ("type Db = Arc<Pool>;", "type_alias", "Db"),
        ("#[derive(Debug, Clone,\n    Serialize)]\nstruct A;", "derive_macro", "Debug, Clone, Serialize"),
        ("fn first<'a>(x: &'a str) -> &'a str { x }", "lifetime", "'a"),
        ("pub async fn list_users(State(db): State<Db>) {}", "async_function", "list_users"),
        ("async fn f() { let rows = sqlx::query(\"x\").fetch_all(&pool).await?; }", "await", "fetch_all"),
        ("async fn f() { let u = load(id).await; }", "await", "load"),
        ("fn f() -> Result<i32, E> { let n = s.parse::<i32>()?; }", "error_handling", "? on Result"),
        ("fn parse(s: &str) -> Result<u8, Error> {}", "error_handling", "Result"),
        ("fn main() -> anyhow::Result<()> {}", "error_handling", "Result"),
        ("fn f() { let h = tokio::spawn(async move { work().await }); }", "spawned_task", "tokio::spawn"),
        ("fn f() { std::thread::spawn(|| run()); }", "spawned_task", "thread::spawn"),
        ("async fn f() { let (a, b) = tokio::join!(f(), g()); }", "promise_combinator", "tokio::join!"),
        ("async fn f() { let all = futures::future::join_all(fs).await; }", "promise_combinator", "join_all"),
        ("fn f() { let (tx, rx) = mpsc::channel(16); }", "channel", "mpsc::channel"),
        ("fn f() { let m = Arc::new(Mutex::new(0)); }", "mutex", "Mutex"),
        ("struct S { m: Arc<RwLock<u8>> }", "mutex", "RwLock"),
        ("static CONFIG: OnceLock<Config> = OnceLock::new();", "singleton", "CONFIG"),
        ("lazy_static! {\n    static ref RE: u8 = 1;\n}", "singleton", "lazy_static!"),
        ("fn f() { let ids: Vec<_> = xs.iter().map(|u| u.id).collect(); }", "closure", "map"),
        ("fn f() { let ids: Vec<_> = xs.iter().map(|u| u.id).collect(); }", "higher_order_function", "map"),
        ("fn f() { let f = move |x| x + 1; }", "closure", "closure"),
        ("fn apply<F: Fn(i32) -> i32>(f: F) {}", "higher_order_function", "apply"),
        ("fn apply(f: impl FnMut(u8)) {}", "higher_order_function", "apply"),
        ("fn f() { let v: Vec<String> = xs.iter().map(String::from).collect(); }", "higher_order_function", "map"),
        ("fn f() { Router::new().route(\"/users\", get(list).post(create)); }", "api_route", "GET /users"),
        ("fn f() { Router::new().route(\"/users\", get(list).post(create)); }", "api_route", "POST /users"),
        ("#[get(\"/health\")]\nasync fn health() {}", "api_route", "GET /health"),
        ("fn f() { r.route(\"/a\", get(x)).route(\"/b\", post(y)); }", "api_route", "POST /b"),
        ("fn f() { sqlx::query_as::<_, User>(\"SELECT 1\"); }", "db_query", "sqlx::query_as"),
        ("fn f() { let u = users.load::<User>(&mut conn)?; }", "db_query", "load"),
        ("fn f() { let q = \"SELECT * FROM notes WHERE id = ?\"; }", "db_query", "SELECT notes"),
        ("#[test]\nfn adds() {}", "test", "adds"),
        ("#[tokio::test]\nasync fn serves() {}", "test", "serves"),
        ("#[test]\n#[ignore]\nfn slow() {}", "test", "slow"),
        ("impl Drop for TempDir {\n    fn drop(&mut self) {}\n}", "context_manager", "Drop for TempDir"),
        ("impl<'a> Iterator for Lexer<'a> {\n    type Item = Token;\n}", "trait_impl", "Iterator for Lexer<'a>"),
        ("impl<C> fmt::Display for Quoted<C> {}", "trait_impl", "fmt::Display for Quoted<C>"),
        ("fn show<T: Display>(t: T) {}", "generic", "bounded T: Display"),
        ("fn show<T>(t: T) where T: Clone {}", "generic", "bounded T: Clone"),
        ("struct Wrapper<T> { t: T }", "generic", "unbounded T"),
    ];
    let negatives: &[(&str, &str)] = &[
        ("fn f() { let structure = 1; }", "struct"),
        ("struct User;", "layered_class"),
        ("fn f() { let enumerate = xs.iter().enumerate(); }", "enum"),
        ("fn f() { let traits = 1; }", "trait"),
        ("trait T { type Item; }", "type_alias"),
        ("#[allow(dead_code)]\nstruct A;", "derive_macro"),
        ("fn f() { 'outer: loop { break 'outer; } }", "lifetime"),
        ("fn f() { let c = 'a'; }", "lifetime"),
        ("fn sync_fn() {}", "async_function"),
        ("fn f() { let awaited = 1; }", "await"),
        ("fn f<T: ?Sized>() {}", "error_handling"),
        ("fn f() { let h = spawn_thread(); }", "spawned_task"),
        ("fn f() { let j = path.join(\"x\"); }", "promise_combinator"),
        ("fn f() { let c = channel(); }", "channel"),
        ("fn f() { let mutex_count = 1; }", "mutex"),
        ("static N: u8 = 1;", "singleton"),
        ("fn f() { let b = a || c; }", "closure"),
        ("fn f() { let o = x.map(Some); }", "higher_order_function"),
        ("fn f() { let o = x.map(Json).ok_or(E::NotFound); }", "higher_order_function"),
        ("fn f() { let r = map.get(\"/x\"); }", "api_route"),
        ("fn f() { let q = query_builder(); }", "db_query"),
        ("fn helper() {}", "test"),
        ("impl Lexer {\n    fn new() -> Self { Lexer }\n}", "trait_impl"),
        // A word alone is no pattern: `generic` in a cfg name.
        ("#[cfg(feature = \"generic\")]\nfn f(x: u8) {}", "generic"),
    ];
    check("src/main.rs", "//", positives, negatives);
}

#[test]
fn each_route_call_keeps_its_own_verbs() {
    let f = found("a.rs", "fn f() { r.route(\"/a\", get(x)).route(\"/b\", post(y)); }\n");
    assert!(f.contains(&("api_route".into(), "GET /a".into())), "{f:?}");
    assert!(!f.contains(&("api_route".into(), "POST /a".into())), "{f:?}");
}

#[test]
fn strings_chars_and_comments_are_not_code() {
    let src = "fn f() {\nlet s = r#\"tokio::spawn(x)?\"#;\nlet c = '?';\n/// tokio::join!(a)\nlet l = '|';\n}\n";
    let f = found("a.rs", src);
    assert!(f.is_empty(), "{f:?}");
}

#[test]
fn a_question_mark_is_named_by_what_the_function_returns() {
    // Issue 40: `?` on an Option inside Iterator::next is not "converting error types".
    let src = "impl Iterator for Lexer {\n    type Item = Token;\n    fn next(&mut self) -> Option<Token> {\n        let c = self.chars.next()?;\n        Some(Token(c))\n    }\n}\nfn load(p: &Path) -> io::Result<String> {\n    let s = fs::read_to_string(p)?;\n    Ok(s)\n}\n";
    let f = found("src/lexer.rs", src);
    assert!(f.contains(&("error_handling".into(), "? on Option".into())), "{f:?}");
    assert!(f.contains(&("error_handling".into(), "? on Result".into())), "{f:?}");
    let f = found("a.rs", "fn f() { let g = || -> Option<u8> { x.first()? }; }\n");
    assert!(f.contains(&("error_handling".into(), "? in closure".into())), "{f:?}");
}

/// A function bound makes a higher-order function in whichever predicate of the where clause
/// it sits. (Compiled as written, the query missed it behind a predicate without one, `T: Ord`:
/// tree-sitter's analysis of the nested steps judged them unable to fail and did not try the
/// later predicates; see `static_rules::nested`.)
#[test]
fn a_function_bound_is_found_in_any_where_predicate() {
    for src in [
        "fn apply<T, F>(x: T, f: F) -> T where F: Fn(T) -> T, T: Ord { f(x) }",
        "fn apply<T, F>(x: T, f: F) -> T where T: Ord, F: Fn(T) -> T { f(x) }",
        "fn apply<T, F>(x: T, f: F) -> T where T: Ord + Copy, F: Send + FnOnce(T) -> T { f(x) }",
    ] {
        let f = found("a.rs", src);
        assert!(f.contains(&("higher_order_function".into(), "apply".into())), "{src}: {f:?}");
    }
    let f = found("a.rs", "fn apply<T, F>(x: T, f: F) where T: Ord, F: Send {}");
    assert!(!f.iter().any(|(t, _)| t == "higher_order_function"), "{f:?}");
}
