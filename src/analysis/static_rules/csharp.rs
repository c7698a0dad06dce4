//! Rules for C#: type declarations (records count as data classes), attributes (ASP.NET
//! `[HttpGet]` routes, xUnit/NUnit/MSTest tests, other attributes as decorators), minimal-API
//! `app.MapGet`, async/await and `Task.WhenAll`, `Task.Run`/threads, `lock`, Entity Framework
//! queries, lambdas and LINQ, singletons and `yield return`.

use super::text::{
    arrow_arg_callee, calls, find_word, has_word, ident_after, ident_at, layered_suffix, strip_modifiers, strip_word,
};
use super::{FileCtx, Sink};

const MODIFIERS: [&str; 14] = [
    "public",
    "private",
    "protected",
    "internal",
    "static",
    "sealed",
    "abstract",
    "partial",
    "readonly",
    "async",
    "virtual",
    "override",
    "unsafe",
    "file",
];
const HTTP_ATTRS: [(&str, &str); 5] =
    [("HttpGet", "GET"), ("HttpPost", "POST"), ("HttpPut", "PUT"), ("HttpPatch", "PATCH"), ("HttpDelete", "DELETE")];
const TEST_ATTRS: [&str; 6] = ["Fact", "Theory", "Test", "TestMethod", "TestCase", "DataTestMethod"];
const MAP_METHODS: [(&str, &str); 5] =
    [("MapGet", "GET"), ("MapPost", "POST"), ("MapPut", "PUT"), ("MapPatch", "PATCH"), ("MapDelete", "DELETE")];
const EF_METHODS: [&str; 14] = [
    "ToListAsync",
    "FirstOrDefaultAsync",
    "SingleOrDefaultAsync",
    "FindAsync",
    "SaveChanges",
    "SaveChangesAsync",
    "FromSqlRaw",
    "FromSqlInterpolated",
    "ExecuteSqlRaw",
    "Include",
    "AnyAsync",
    "CountAsync",
    "AddAsync",
    "ExecuteUpdateAsync",
];
const LINQ: [&str; 12] = [
    "Select",
    "Where",
    "Aggregate",
    "OrderBy",
    "OrderByDescending",
    "Any",
    "All",
    "First",
    "FirstOrDefault",
    "GroupBy",
    "SelectMany",
    "Count",
];

#[derive(Default)]
struct State {
    class: Option<String>,
    /// A test attribute waiting for its method.
    pending_test: bool,
}

pub(super) fn scan(ctx: &FileCtx, sink: &mut Sink) {
    let mut st = State::default();
    for (i, m) in ctx.lines() {
        let t = m.trim_start();
        if t.is_empty() {
            continue;
        }
        if t.starts_with('[') && !t.starts_with("[]") {
            attributes(ctx, &mut st, i, m, t, sink);
            continue;
        }
        declarations(&mut st, i, t, sink);
        statements(ctx, &st, i, m, t, sink);
        // `using (var x = …)`, `using var x = …;`, `await using …`; not a `using System;`.
        let using = t.strip_prefix("await ").unwrap_or(t);
        if using.starts_with("using (")
            || using.starts_with("using var ")
            || (using.starts_with("using ") && using.contains(" = "))
        {
            sink.emit("context_manager", "using", i);
        }
    }
}

/// `[HttpGet("{id}")]`, `[Fact]`, `[Authorize, ApiController]`.
fn attributes(ctx: &FileCtx, st: &mut State, i: usize, m: &str, t: &str, sink: &mut Sink) {
    let col = m.len() - t.len();
    let inner = t.trim_start_matches('[');
    let mut off = col + (t.len() - inner.len());
    for part in inner.split([',', ']']) {
        let lead = part.len() - part.trim_start().len();
        let name = ident_at(part.trim_start(), 0);
        let name_at = off + lead;
        off += part.len() + 1;
        if name.is_empty() || !name.as_bytes()[0].is_ascii_uppercase() {
            continue;
        }
        sink.emit("decorator", name, i);
        if TEST_ATTRS.contains(&name) {
            st.pending_test = true;
        }
        if let Some((_, verb)) = HTTP_ATTRS.iter().find(|(a, _)| *a == name) {
            let path = if m.as_bytes().get(name_at + name.len()) == Some(&b'(') {
                ctx.string_at(i, name_at + name.len() + 1).unwrap_or("")
            } else {
                ""
            };
            sink.emit("api_route", format!("{verb} {path}").trim_end(), i);
        }
    }
}

fn declarations(st: &mut State, i: usize, t: &str, sink: &mut Sink) {
    let d = strip_modifiers(t, &MODIFIERS);
    for (kw, ty) in [
        ("class", "class"),
        ("interface", "interface"),
        ("struct", "struct"),
        ("enum", "enum"),
        ("record", "dataclass"),
    ] {
        let rest = strip_word(d, kw)
            .map(|r| strip_word(r.trim_start(), "struct").or_else(|| strip_word(r.trim_start(), "class")).unwrap_or(r));
        if let Some(name) = rest.and_then(|r| ident_after(r, 0)) {
            sink.emit(ty, name, i);
            if layered_suffix(name) {
                sink.emit("layered_class", name, i);
            }
            if kw == "class" {
                st.class = Some(name.to_string());
            }
            if d[kw.len()..].contains("DbContext") {
                sink.emit("db_query", "DbContext", i);
            }
            return;
        }
    }
    if let Some(rest) = strip_word(d, "using") {
        if let Some(name) = ident_after(rest, 0)
            && rest.contains('=')
        {
            sink.emit("type_alias", name, i);
        }
        return;
    }
    // A method: `<type> Name(` where the line declares (no `=`, no `;` before the paren).
    let is_async = has_word(t.split('(').next().unwrap_or(""), "async");
    if let Some(open) = d.find('(') {
        let head = &d[..open];
        let name = head.rsplit(|c: char| c.is_whitespace()).next().unwrap_or("");
        let declares = head.contains(' ')
            && !head.contains('=')
            && !head.contains('.')
            && !matches!(
                head.split_whitespace().next(),
                Some(
                    "return"
                        | "await"
                        | "new"
                        | "if"
                        | "while"
                        | "for"
                        | "foreach"
                        | "switch"
                        | "using"
                        | "lock"
                        | "catch"
                )
            );
        if declares && !name.is_empty() && name.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'_') {
            if is_async {
                sink.emit("async_function", name, i);
            }
            if std::mem::take(&mut st.pending_test) {
                sink.emit("test", name, i);
            }
        }
    }
}

fn statements(ctx: &FileCtx, st: &State, i: usize, m: &str, t: &str, sink: &mut Sink) {
    for pos in find_word(m, "await") {
        let target = super::text::path_after(m, pos + 5);
        sink.emit("await", if target.is_empty() { "await" } else { target }, i);
    }
    if strip_word(t, "try").is_some_and(|r| r.trim().is_empty() || r.trim_start().starts_with('{')) {
        sink.emit("error_handling", "try/catch", i);
    }
    if let Some(rest) = strip_word(t, "catch").or_else(|| t.strip_prefix("} catch")) {
        let exc = rest.trim_start().strip_prefix('(').and_then(|r| ident_after(r, 0));
        sink.emit("error_handling", &exc.map_or("catch".to_string(), |e| format!("catch {e}")), i);
    }
    if strip_word(t, "lock").is_some_and(|r| r.trim_start().starts_with('(')) {
        sink.emit("mutex", "lock", i);
    }
    if has_word(t, "yield") && t.contains("yield return") {
        sink.emit("generator", "yield return", i);
    }
    if has_word(m, "static") && (has_word(m, "Instance") || has_word(m, "_instance") || m.contains("Lazy<")) {
        sink.emit("singleton", st.class.as_deref().unwrap_or("Instance"), i);
    }
    for (p, _) in m.match_indices("=>") {
        if let Some(callee) = arrow_arg_callee(m, p) {
            sink.emit("closure", &callee, i);
        }
    }
    for c in calls(m) {
        let path = c.path(m);
        match (c.recv, c.name) {
            ("Task", "WhenAll" | "WhenAny") | ("Parallel", "ForEach" | "ForEachAsync" | "For") => {
                sink.emit("promise_combinator", &path, i)
            }
            ("Task", "Run") | ("Task.Factory", "StartNew") | ("ThreadPool", "QueueUserWorkItem") => {
                sink.emit("spawned_task", &path, i)
            }
            ("Channel", n) if n.starts_with("Create") => sink.emit("channel", "Channel", i),
            (_, n) if n.starts_with("AddSingleton") => sink.emit("singleton", "AddSingleton", i),
            _ => {}
        }
        if c.method && EF_METHODS.contains(&c.name) {
            sink.emit("db_query", c.name, i);
        }
        if c.method && LINQ.contains(&c.name) && super::text::ahead(m, c.open + 1).contains("=>") {
            sink.emit("higher_order_function", c.name, i);
        }
        if let Some((_, verb)) = MAP_METHODS.iter().find(|(n, _)| *n == c.name)
            && let Some(route) = ctx.string_at(i, c.open + 1)
        {
            sink.emit("api_route", &format!("{verb} {route}"), i);
        }
    }
    for (needle, ty, name) in [
        ("new Thread(", "spawned_task", "Thread"),
        ("new Mutex(", "mutex", "Mutex"),
        ("SemaphoreSlim", "mutex", "SemaphoreSlim"),
        ("DbSet<", "db_query", "DbSet"),
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
            ("public class UserService\n{\n}", "class", "UserService"),
            ("public class UserService\n{\n}", "layered_class", "UserService"),
            ("public interface IUserRepository { }", "interface", "IUserRepository"),
            ("public readonly struct Point { }", "struct", "Point"),
            ("public enum Role { Admin, User }", "enum", "Role"),
            ("public record UserDto(string Name);", "dataclass", "UserDto"),
            ("using UserId = System.Guid;", "type_alias", "UserId"),
            ("[HttpGet(\"{id}\")]\npublic async Task<User> Get(int id) { }", "api_route", "GET {id}"),
            ("[HttpPost]\npublic IActionResult Create() { }", "api_route", "POST"),
            ("app.MapGet(\"/users\", () => db.Users.ToList());", "api_route", "GET /users"),
            ("[ApiController]\npublic class A { }", "decorator", "ApiController"),
            ("public async Task<User> LoadAsync(int id)\n{\n}", "async_function", "LoadAsync"),
            ("var u = await _repo.FindAsync(id);", "await", "_repo.FindAsync"),
            ("await Task.WhenAll(a, b);", "promise_combinator", "Task.WhenAll"),
            ("try\n{\n    x();\n}\ncatch (IOException e)\n{\n}", "error_handling", "try/catch"),
            ("try\n{\n    x();\n}\ncatch (IOException e)\n{\n}", "error_handling", "catch IOException"),
            ("var users = await _db.Users.Where(u => u.Active).ToListAsync();", "db_query", "ToListAsync"),
            ("public DbSet<User> Users { get; set; }", "db_query", "DbSet"),
            ("public class AppDbContext : DbContext { }", "db_query", "DbContext"),
            ("var t = Task.Run(() => Work());", "spawned_task", "Task.Run"),
            ("lock (_gate)\n{\n}", "mutex", "lock"),
            ("var names = users.Select(u => u.Name);", "closure", "Select"),
            ("var names = users.Select(u => u.Name);", "higher_order_function", "Select"),
            ("yield return item;", "generator", "yield return"),
            ("class Cfg {\n  public static Cfg Instance { get; } = new Cfg();\n}", "singleton", "Cfg"),
            ("var ch = Channel.CreateUnbounded<int>();", "channel", "Channel"),
            ("[Fact]\npublic void Adds_numbers() { }", "test", "Adds_numbers"),
        ];
        let negatives: &[(&str, &str)] = &[
            ("var classes = 1;", "class"),
            ("public class User { }", "layered_class"),
            ("var iface = 1;", "interface"),
            ("var s = new Point();", "struct"),
            ("var e = list.GetEnumerator();", "enum"),
            ("var recorder = 1;", "dataclass"),
            ("using System.Linq;", "type_alias"),
            ("[Authorize]\npublic class A { }", "api_route"),
            ("var xs = new int[] { 1 };", "decorator"),
            ("public Task<User> Load(int id) { }", "async_function"),
            ("var awaiter = 1;", "await"),
            ("Task.Delay(1);", "promise_combinator"),
            ("var retry = 1;", "error_handling"),
            ("var l = xs.ToList();", "db_query"),
            ("var t = Task.Delay(1);", "spawned_task"),
            ("var locked = true;", "mutex"),
            ("Func<int> f = () => 1;", "closure"),
            ("var n = xs.Count();", "higher_order_function"),
            ("return item;", "generator"),
            ("public int Count { get; }", "singleton"),
            ("var ch = new List<int>();", "channel"),
            ("public void Helper() { }", "test"),
        ];
        check("Api/UsersController.cs", "//", positives, negatives);
    }

    #[test]
    fn verbatim_and_interpolated_strings_are_not_code() {
        let f = found("a.cs", "var s = @\"Task.Run(() => x)\";\nvar t = $\"{a} await b\";\n");
        assert!(f.iter().all(|(t, _)| t != "spawned_task" && t != "await" && t != "closure"), "{f:?}");
    }
}
