//! Rules for Go: type declarations (also inside `type ( … )` groups), goroutines, channels and
//! `select`, sync primitives (Mutex, Once, WaitGroup, errgroup), `if err != nil` and error
//! wrapping, Gin/Echo/Fiber/chi/net/http routes, GORM and database/sql calls, function
//! literals and function-typed parameters, `iota` enums and `TestX` tests.

use super::text::{calls, find_word, has_word, ident_after, layered_suffix, path_after, prev_non_space, strip_word};
use super::{FileCtx, Sink};

const ROUTE_METHODS: [&str; 14] = [
    "GET",
    "POST",
    "PUT",
    "PATCH",
    "DELETE",
    "Get",
    "Post",
    "Put",
    "Patch",
    "Delete",
    "Any",
    "HandleFunc",
    "Handle",
    "Options",
];
const DB_METHODS: [&str; 19] = [
    "Find",
    "First",
    "Last",
    "Take",
    "Where",
    "Create",
    "Save",
    "Delete",
    "Updates",
    "Model",
    "Raw",
    "Exec",
    "Query",
    "QueryRow",
    "QueryContext",
    "QueryRowContext",
    "ExecContext",
    "Preload",
    "Select",
];

#[derive(Default)]
struct State {
    /// Inside `type ( … )`.
    in_type_group: bool,
}

pub(super) fn scan(ctx: &FileCtx, sink: &mut Sink) {
    let mut st = State::default();
    for (i, m) in ctx.lines() {
        let t = m.trim_start();
        if t.is_empty() {
            continue;
        }
        groups_and_types(&mut st, i, t, sink);
        functions(ctx, i, m, t, sink);
        concurrency(i, m, t, sink);
        errors(ctx, i, m, sink);
        call_rules(ctx, i, m, sink);
    }
}

fn groups_and_types(st: &mut State, i: usize, t: &str, sink: &mut Sink) {
    if t.starts_with(')') {
        st.in_type_group = false;
        return;
    }
    if let Some(rest) = strip_word(t, "type") {
        if rest.trim_start().starts_with('(') {
            st.in_type_group = true;
        } else {
            type_spec(i, rest, sink);
        }
    } else if st.in_type_group {
        type_spec(i, t, sink);
    }
    if has_word(t, "iota") {
        // `Red Color = iota` names the enum type; a bare `Red = iota` does not.
        let mut words = t.split_whitespace();
        let ty = match (words.next(), words.next()) {
            (Some(_), Some(ty)) if ty != "=" => ty,
            _ => "iota",
        };
        sink.emit("enum", ty, i);
    }
}

/// `Name struct {`, `Name interface {`, `Name = Other`, `Name Other`, with optional generics.
fn type_spec(i: usize, spec: &str, sink: &mut Sink) {
    let Some(name) = ident_after(spec, 0) else {
        return;
    };
    let mut rest = spec.trim_start()[name.len()..].trim_start();
    if rest.starts_with('[') {
        rest = rest.split_once(']').map_or("", |(_, r)| r).trim_start();
    }
    if strip_word(rest, "struct").is_some() {
        sink.emit("struct", name, i);
        if layered_suffix(name) {
            sink.emit("layered_class", name, i);
        }
    } else if strip_word(rest, "interface").is_some() {
        sink.emit("interface", name, i);
    } else if !rest.is_empty() {
        sink.emit("type_alias", name, i);
    }
}

fn functions(ctx: &FileCtx, i: usize, m: &str, t: &str, sink: &mut Sink) {
    if let Some(rest) = strip_word(t, "func") {
        let mut rest = rest.trim_start();
        if rest.starts_with('(') {
            // A method: skip the receiver.
            rest = super::text::matching_paren(rest, 0).map_or("", |c| &rest[c + 1..]).trim_start();
        }
        if let Some(name) = ident_after(rest, 0) {
            let sig = &rest[name.len()..];
            let testing = ctx.path.ends_with("_test.go") || sig.contains("testing.");
            if testing && ["Test", "Benchmark", "Fuzz", "Example"].iter().any(|p| name.starts_with(p)) {
                sink.emit("test", name, i);
            }
            if find_word(sig, "func").next().is_some() {
                sink.emit("higher_order_function", name, i);
            }
        }
    }
    // Function literals: `func(` where an expression may start (argument, assignment, go,
    // defer, return) — not the declaration at the start of the line.
    for pos in find_word(m, "func") {
        if !m[pos + 4..].trim_start().starts_with('(') {
            continue;
        }
        let Some((at, c)) = prev_non_space(m, pos) else {
            continue;
        };
        let callee = match c {
            b'(' | b',' => arrow_callee_of(m, at),
            b'=' | b'{' | b':' => Some("func literal".to_string()),
            _ if m[..=at].ends_with("go") || m[..=at].ends_with("defer") || m[..=at].ends_with("return") => {
                Some("func literal".to_string())
            }
            _ => None,
        };
        if let Some(name) = callee {
            sink.emit("closure", &name, i);
        }
    }
}

/// The callee of the argument list that contains offset `at` (`(` or `,`).
fn arrow_callee_of(m: &str, at: usize) -> Option<String> {
    let open = if m.as_bytes()[at] == b'(' { at } else { super::text::enclosing_open_paren(m, at)? };
    let callee = super::text::path_before(m, open);
    let last = callee.rsplit('.').next().unwrap_or("");
    Some(if last.is_empty() { "func literal".to_string() } else { last.to_string() })
}

fn concurrency(i: usize, m: &str, t: &str, sink: &mut Sink) {
    if let Some(rest) = strip_word(t, "go") {
        let target = path_after(rest, 0);
        if !target.is_empty() {
            sink.emit("goroutine", if target == "func" { "go func" } else { target }, i);
        }
    }
    if m.contains("make(chan") || m.contains("make(<-chan") {
        sink.emit("channel", "make(chan)", i);
    }
    if let Some(p) = m.find("<-") {
        let before = m[..p].trim_end();
        let send = !before.is_empty()
            && before.bytes().last().is_some_and(|c| super::text::is_ident(c) || c == b']' || c == b')');
        if !m[p + 2..].trim_start().starts_with("chan") && !before.ends_with("chan") {
            sink.emit("channel", if send { "send" } else { "receive" }, i);
        }
    }
    if t.starts_with("select {") || t == "select{" {
        sink.emit("channel", "select", i);
    }
    for (needle, ty, name) in [
        ("sync.Mutex", "mutex", "sync.Mutex"),
        ("sync.RWMutex", "mutex", "sync.RWMutex"),
        ("sync.Once", "singleton", "sync.Once"),
        ("sync.WaitGroup", "promise_combinator", "sync.WaitGroup"),
        ("errgroup.", "promise_combinator", "errgroup"),
    ] {
        if m.contains(needle) {
            sink.emit(ty, name, i);
        }
    }
}

fn errors(ctx: &FileCtx, i: usize, m: &str, sink: &mut Sink) {
    if m.contains("err != nil") {
        sink.emit("error_handling", "if err != nil", i);
    }
    for (needle, name) in [("errors.Is(", "errors.Is"), ("errors.As(", "errors.As"), ("recover()", "recover")] {
        if m.contains(needle) {
            sink.emit("error_handling", name, i);
        }
    }
    if m.contains("fmt.Errorf(") && ctx.original_line(i).contains("%w") {
        sink.emit("error_handling", "fmt.Errorf %w", i);
    }
}

fn call_rules(ctx: &FileCtx, i: usize, m: &str, sink: &mut Sink) {
    for c in calls(m) {
        if c.method
            && ROUTE_METHODS.contains(&c.name)
            && let Some(route) = ctx.string_at(i, c.open + 1)
        {
            let name = if route.starts_with('/') {
                let verb = if c.name.starts_with("Handle") || c.name == "Any" {
                    "ANY".into()
                } else {
                    c.name.to_ascii_uppercase()
                };
                format!("{verb} {route}")
            } else if route.contains(" /") {
                route.to_string() // Go 1.22 patterns: "GET /users/{id}".
            } else {
                continue;
            };
            sink.emit("api_route", &name, i);
        }
        if c.method && DB_METHODS.contains(&c.name) && is_db_receiver(c.recv) {
            sink.emit("db_query", &c.path(m), i);
        }
        if c.name == "Run"
            && c.recv == "t"
            && let Some(name) = ctx.string_at(i, c.open + 1)
        {
            sink.emit("test", name, i);
        }
    }
}

fn is_db_receiver(recv: &str) -> bool {
    let last = recv.rsplit('.').next().unwrap_or("").to_ascii_lowercase();
    last.contains("db") || matches!(last.as_str(), "tx" | "conn" | "gorm" | "pool")
}

#[cfg(test)]
mod tests {
    use super::super::testutil::{check, found};

    #[test]
    fn every_rule_positive_and_negative() {
        let positives: &[(&str, &str, &str)] = &[
            ("type User struct {\n\tID int\n}", "struct", "User"),
            ("type UserService struct{}", "layered_class", "UserService"),
            ("type Store interface {\n\tGet() error\n}", "interface", "Store"),
            ("type ID = string", "type_alias", "ID"),
            ("type (\n\tName string\n\tBox[T any] struct{ v T }\n)", "type_alias", "Name"),
            ("type (\n\tName string\n\tBox[T any] struct{ v T }\n)", "struct", "Box"),
            ("const (\n\tRed Color = iota\n\tBlue\n)", "enum", "Color"),
            ("func TestCreateUser(t *testing.T) {}", "test", "TestCreateUser"),
            ("t.Run(\"empty name\", func(t *testing.T) {})", "test", "empty name"),
            ("func Apply(xs []int, f func(int) int) []int {}", "higher_order_function", "Apply"),
            ("sort.Slice(xs, func(i, j int) bool { return xs[i] < xs[j] })", "closure", "Slice"),
            ("go worker(jobs)", "goroutine", "worker"),
            ("go func() {\n\tdone <- true\n}()", "goroutine", "go func"),
            ("jobs := make(chan int, 10)", "channel", "make(chan)"),
            ("results <- v", "channel", "send"),
            ("v := <-results", "channel", "receive"),
            ("select {\ncase <-ctx.Done():\n}", "channel", "select"),
            ("var mu sync.Mutex", "mutex", "sync.Mutex"),
            ("var once sync.Once", "singleton", "sync.Once"),
            ("var wg sync.WaitGroup", "promise_combinator", "sync.WaitGroup"),
            ("g, ctx := errgroup.WithContext(ctx)", "promise_combinator", "errgroup"),
            ("if err != nil {\n\treturn err\n}", "error_handling", "if err != nil"),
            ("return fmt.Errorf(\"load: %w\", err)", "error_handling", "fmt.Errorf %w"),
            ("if errors.Is(err, sql.ErrNoRows) {}", "error_handling", "errors.Is"),
            ("r.GET(\"/users/:id\", getUser)", "api_route", "GET /users/:id"),
            ("mux.HandleFunc(\"/health\", health)", "api_route", "ANY /health"),
            ("http.HandleFunc(\"POST /items\", create)", "api_route", "POST /items"),
            ("db.Where(\"name = ?\", n).First(&u)", "db_query", "db.Where"),
            ("rows, err := s.db.Query(q)", "db_query", "s.db.Query"),
        ];
        let negatives: &[(&str, &str)] = &[
            ("var s struct{}", "struct"),
            ("type User struct{}", "layered_class"),
            ("var i interface{}", "interface"),
            ("typ := 1", "type_alias"),
            ("const Red = 1", "enum"),
            ("func helper(t *testing.T) {}", "test"),
            ("func Apply(xs []int) []int {}", "higher_order_function"),
            ("func main() {}", "closure"),
            ("gopher := 1", "goroutine"),
            ("var c chan int", "channel"),
            ("mu.Lock()", "mutex"),
            ("once := 1", "singleton"),
            ("wg := 1", "promise_combinator"),
            ("if err == nil {}", "error_handling"),
            ("m.Get(\"key\")", "api_route"),
            ("list.Find(x)", "db_query"),
        ];
        check("main.go", "//", positives, negatives);
    }

    #[test]
    fn raw_strings_and_comments_are_not_code() {
        let src = "var q = `go run(x) if err != nil {}`\n/* go work() */\n";
        let f = found("a.go", src);
        assert!(f.iter().all(|(t, _)| t != "goroutine" && t != "error_handling"), "{f:?}");
    }
}
