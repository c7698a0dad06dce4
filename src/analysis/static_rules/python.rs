//! Rules for Python: FastAPI/Flask route decorators, Django URL patterns, dataclasses and
//! pydantic models, async/await and asyncio combinators, SQLAlchemy/Django ORM queries,
//! generators, lambdas and pytest tests. Python blocks are read by indentation: a small stack
//! of open `class`/`def` lines names the enclosing function of a `yield` or a singleton field.

use super::text::{calls, find_word, has_word, ident_after, layered_suffix, path_after, strip_modifiers, strip_word};
use super::{FileCtx, Sink};

const ROUTE_DECORATORS: [&str; 9] =
    ["get", "post", "put", "patch", "delete", "route", "api_route", "websocket", "head"];
const COMBINATORS: [&str; 4] = ["asyncio.gather", "asyncio.wait", "asyncio.as_completed", "asyncio.TaskGroup"];
const SPAWNS: [&str; 7] = [
    "asyncio.create_task",
    "threading.Thread",
    "multiprocessing.Process",
    "asyncio.to_thread",
    "loop.create_task",
    "tg.create_task",
    "loop.run_in_executor",
];
const LOCKS: [&str; 6] =
    ["threading.Lock", "threading.RLock", "asyncio.Lock", "asyncio.Semaphore", "threading.Semaphore", "Lock"];
const QUEUES: [&str; 4] = ["asyncio.Queue", "queue.Queue", "multiprocessing.Queue", "Queue"];
const DJANGO_QS: [&str; 10] =
    ["filter", "get", "all", "create", "exclude", "update", "delete", "get_or_create", "values", "annotate"];

/// An open `class` or `def` block: its indentation and name.
struct Block {
    indent: usize,
    name: String,
    is_class: bool,
}

#[derive(Default)]
struct State {
    blocks: Vec<Block>,
    /// A `@dataclass` decorator waiting for its `class` line.
    pending_dataclass: bool,
}

impl State {
    fn enclosing(&self, class: bool) -> Option<&str> {
        self.blocks.iter().rev().find(|b| b.is_class == class).map(|b| b.name.as_str())
    }
}

pub(super) fn scan(ctx: &FileCtx, sink: &mut Sink) {
    let mut st = State::default();
    for (i, m) in ctx.lines() {
        let t = m.trim_start();
        if t.is_empty() {
            continue;
        }
        let indent = m.len() - t.len();
        while st.blocks.last().is_some_and(|b| b.indent >= indent) {
            st.blocks.pop();
        }
        if let Some(rest) = t.strip_prefix('@') {
            decorator(ctx, &mut st, i, m, rest, sink);
            continue;
        }
        definitions(&mut st, i, indent, t, sink);
        statements(ctx, &st, i, m, t, sink);
    }
}

fn decorator(ctx: &FileCtx, st: &mut State, i: usize, m: &str, rest: &str, sink: &mut Sink) {
    let path = path_after(rest, 0);
    if path.is_empty() {
        return;
    }
    sink.emit("decorator", path, i);
    if path.ends_with("contextmanager") {
        sink.emit("context_manager", path, i);
    }
    if path == "dataclass" || path.ends_with(".dataclass") {
        st.pending_dataclass = true;
    }
    if path.starts_with("functools.") || matches!(path, "lru_cache" | "cache" | "wraps") {
        sink.emit("higher_order_function", path, i);
    }
    let Some((recv, method)) = path.rsplit_once('.') else {
        return;
    };
    if recv.is_empty() || !ROUTE_DECORATORS.contains(&method) {
        return;
    }
    let open = m.find(path).map_or(m.len(), |p| p + path.len());
    if m.as_bytes().get(open) != Some(&b'(') {
        return;
    }
    let Some(route) = ctx.string_at(i, open + 1) else {
        return;
    };
    let verb = match method {
        "route" | "api_route" => flask_methods(ctx.original_line(i)).unwrap_or_else(|| "GET".into()),
        "websocket" => "WS".into(),
        other => other.to_ascii_uppercase(),
    };
    sink.emit("api_route", &format!("{verb} {route}"), i);
}

/// The first method of `methods=["POST", …]` on a Flask `@app.route` line.
fn flask_methods(original: &str) -> Option<String> {
    let at = original.find("methods")?;
    let rest = &original[at..];
    let q = rest.find(['"', '\''])?;
    let word: String = rest[q + 1..].chars().take_while(|c| c.is_ascii_alphabetic()).collect();
    (!word.is_empty()).then(|| word.to_ascii_uppercase())
}

fn definitions(st: &mut State, i: usize, indent: usize, t: &str, sink: &mut Sink) {
    if let Some(rest) = strip_word(t, "class") {
        let Some(name) = ident_after(rest, 0) else {
            return;
        };
        let bases = rest.split_once('(').map_or("", |(_, b)| b);
        sink.emit("class", name, i);
        if layered_suffix(name) {
            sink.emit("layered_class", name, i);
        }
        if std::mem::take(&mut st.pending_dataclass)
            || ["BaseModel", "NamedTuple", "TypedDict"].iter().any(|b| has_word(bases, b))
        {
            sink.emit("dataclass", name, i);
        }
        if ["Enum", "IntEnum", "StrEnum", "Flag"].iter().any(|b| has_word(bases, b) || bases.contains(&format!(".{b}")))
        {
            sink.emit("enum", name, i);
        }
        if has_word(bases, "Protocol") || has_word(bases, "ABC") {
            sink.emit("interface", name, i);
        }
        if name.starts_with("Test") {
            sink.emit("test", name, i);
        }
        st.blocks.push(Block { indent, name: name.to_string(), is_class: true });
        return;
    }
    let is_async = strip_word(t, "async").is_some();
    if let Some(rest) = strip_word(strip_modifiers(t, &["async"]), "def") {
        let Some(name) = ident_after(rest, 0) else {
            return;
        };
        if is_async {
            sink.emit("async_function", name, i);
        }
        if name.starts_with("test_") || (name == "test") {
            sink.emit("test", name, i);
        }
        st.blocks.push(Block { indent, name: name.to_string(), is_class: false });
        return;
    }
    st.pending_dataclass = false;
    // `type Id = int` (3.12) and `Id: TypeAlias = int`.
    if let Some(name) = strip_word(t, "type").and_then(|r| ident_after(r, 0)) {
        if t.contains('=') {
            sink.emit("type_alias", name, i);
        }
    } else if t.contains(": TypeAlias") {
        sink.emit("type_alias", super::text::ident_at(t, 0), i);
    }
}

fn statements(ctx: &FileCtx, st: &State, i: usize, m: &str, t: &str, sink: &mut Sink) {
    // A `with` block or a class's own `__enter__`/`__exit__`: a context manager (issue 31).
    let with =
        strip_word(t, "with").or_else(|| strip_word(t, "async").and_then(|r| strip_word(r.trim_start(), "with")));
    if let Some(rest) = with {
        let target = path_after(rest.trim_start(), 0);
        sink.emit("context_manager", if target.is_empty() { "with" } else { target }, i);
    }
    if t.starts_with("def __enter__") || t.starts_with("def __exit__") || t.starts_with("async def __aenter__") {
        sink.emit("context_manager", st.enclosing(true).unwrap_or("__enter__"), i);
    }
    if t.starts_with("try:") {
        sink.emit("error_handling", "try/except", i);
    }
    if let Some(rest) = strip_word(t, "except") {
        let exc = path_after(rest.trim_start_matches(['(', '*']), 0);
        sink.emit("error_handling", &if exc.is_empty() { "except".to_string() } else { format!("except {exc}") }, i);
    }
    for pos in find_word(m, "await") {
        let target = path_after(m, pos + 5);
        sink.emit("await", if target.is_empty() { "await" } else { target }, i);
    }
    if has_word(m, "yield") {
        sink.emit("generator", st.enclosing(false).unwrap_or("yield"), i);
    }
    if has_word(m, "lambda") {
        sink.emit("closure", "lambda", i);
    }
    if has_word(m, "_instance")
        && let Some(class) = st.enclosing(true)
    {
        sink.emit("singleton", class, i);
    }
    let urls_file = ctx.path.ends_with("urls.py");
    for c in calls(m) {
        let path = c.path(m);
        let p = path.as_str();
        if COMBINATORS.contains(&p) {
            sink.emit("promise_combinator", p, i);
        }
        if SPAWNS.contains(&p)
            || (c.recv.is_empty() && c.name == "Thread")
            || (c.name == "submit" && c.recv.contains("executor"))
        {
            sink.emit("spawned_task", p, i);
        }
        if LOCKS.contains(&p) || (c.recv.is_empty() && c.name == "RLock") {
            sink.emit("mutex", p, i);
        }
        if QUEUES.contains(&p) {
            sink.emit("channel", p, i);
        }
        if (c.recv.is_empty() && matches!(c.name, "map" | "filter" | "reduce"))
            || p == "functools.reduce"
            || p == "functools.partial"
            || (matches!(p, "sorted" | "min" | "max") && super::text::ahead(m, c.open).contains("key="))
        {
            sink.emit("higher_order_function", p, i);
        }
        if is_db_call(&c, m) {
            sink.emit("db_query", p, i);
        }
        if urls_file
            && c.recv.is_empty()
            && matches!(c.name, "path" | "re_path")
            && let Some(route) = ctx.string_at(i, c.open + 1)
        {
            sink.emit("api_route", &format!("ROUTE {route}"), i);
        }
    }
}

/// SQLAlchemy sessions, Django managers, DB-API cursors, SQLAlchemy 2.0 `select(Model)`.
fn is_db_call(c: &super::text::Call, m: &str) -> bool {
    let last = c.recv.rsplit('.').next().unwrap_or("");
    let sessionish =
        last.contains("session") || last == "db" || last == "conn" || last == "cursor" || last == "connection";
    (c.method
        && sessionish
        && matches!(
            c.name,
            "query"
                | "execute"
                | "scalars"
                | "scalar"
                | "get"
                | "add"
                | "commit"
                | "fetch"
                | "fetchrow"
                | "fetchall"
                | "executemany"
        ))
        || (c.method && c.name == "filter_by")
        || (last == "objects" && DJANGO_QS.contains(&c.name))
        || (c.recv.is_empty()
            && c.name == "select"
            && m[c.open + 1..].trim_start().as_bytes().first().is_some_and(u8::is_ascii_uppercase))
}

#[cfg(test)]
mod tests {
    use super::super::testutil::{check, found};

    #[test]
    fn every_rule_positive_and_negative() {
        let positives: &[(&str, &str, &str)] = &[
            (
                "@app.get(\"/users/{user_id}\")\nasync def get_user(user_id: int):\n    ...",
                "api_route",
                "GET /users/{user_id}",
            ),
            ("@router.post('/items')\ndef create(): ...", "api_route", "POST /items"),
            ("@app.route('/login', methods=['POST'])\ndef login(): ...", "api_route", "POST /login"),
            ("@app.route('/')\ndef index(): ...", "api_route", "GET /"),
            ("@app.get('/x')\ndef x(): ...", "decorator", "app.get"),
            ("@dataclass\nclass User:\n    id: int", "dataclass", "User"),
            ("@dataclass(frozen=True)\nclass Point:\n    x: int", "dataclass", "Point"),
            ("class UserIn(BaseModel):\n    name: str", "dataclass", "UserIn"),
            ("class UserRepository:\n    pass", "class", "UserRepository"),
            ("class UserRepository:\n    pass", "layered_class", "UserRepository"),
            ("class Color(Enum):\n    RED = 1", "enum", "Color"),
            ("class Store(Protocol):\n    def get(self): ...", "interface", "Store"),
            ("UserId: TypeAlias = int", "type_alias", "UserId"),
            ("type Pair = tuple[int, int]", "type_alias", "Pair"),
            ("async def fetch_user(id):\n    return 1", "async_function", "fetch_user"),
            ("async def f():\n    u = await db.get(User, 1)", "await", "db.get"),
            ("async def f():\n    await asyncio.gather(a(), b())", "promise_combinator", "asyncio.gather"),
            ("try:\n    x()\nexcept ValueError as e:\n    pass", "error_handling", "try/except"),
            ("try:\n    x()\nexcept ValueError as e:\n    pass", "error_handling", "except ValueError"),
            ("users = db.session.query(User).all()", "db_query", "db.session.query"),
            ("rows = session.execute(select(User))", "db_query", "session.execute"),
            ("stmt = select(User).where(User.id == 1)", "db_query", "select"),
            ("qs = Article.objects.filter(published=True)", "db_query", "Article.objects.filter"),
            ("key = sorted(xs, key=lambda x: x.age)", "closure", "lambda"),
            ("names = list(map(str.upper, xs))", "higher_order_function", "map"),
            ("f = functools.partial(g, 1)", "higher_order_function", "functools.partial"),
            ("def gen():\n    yield 1", "generator", "gen"),
            ("def test_create_user(client):\n    assert 1", "test", "test_create_user"),
            ("class TestUsers:\n    pass", "test", "TestUsers"),
            ("class Config:\n    _instance = None", "singleton", "Config"),
            ("task = asyncio.create_task(work())", "spawned_task", "asyncio.create_task"),
            ("t = threading.Thread(target=run)", "spawned_task", "threading.Thread"),
            ("lock = asyncio.Lock()", "mutex", "asyncio.Lock"),
            ("q = asyncio.Queue()", "channel", "asyncio.Queue"),
        ];
        let negatives: &[(&str, &str)] = &[
            ("d.get('/users')\nrequests.post('/x')", "api_route"),
            ("email = 'a@b.c'", "decorator"),
            ("class User:\n    id: int", "dataclass"),
            ("classes = 1", "class"),
            ("class User: pass", "layered_class"),
            ("class Color: RED = 1", "enum"),
            ("class Store(Base): pass", "interface"),
            ("kind = 1", "type_alias"),
            ("def fetch_user(id): return 1", "async_function"),
            ("awaited = 1", "await"),
            ("gather(a, b)", "promise_combinator"),
            ("retry = 1", "error_handling"),
            ("query = build(); cache.get(1)", "db_query"),
            ("lambda_ = 1", "closure"),
            ("mapping = {}; m.map(x)", "higher_order_function"),
            ("def gen(): return 1", "generator"),
            ("def helper(): pass", "test"),
            ("instance = None", "singleton"),
            ("run()", "spawned_task"),
            ("lock = acquire()", "mutex"),
            ("q = []", "channel"),
        ];
        check("app/main.py", "#", positives, negatives);
    }

    #[test]
    fn docstrings_and_strings_are_not_code() {
        let src = "def f():\n    \"\"\"Example:\n    async def x(): await y\n    \"\"\"\n    s = 'try: lambda'\n";
        let f = found("a.py", src);
        assert!(
            f.iter().all(|(t, _)| t != "async_function" && t != "await" && t != "closure" && t != "error_handling"),
            "{f:?}"
        );
    }

    #[test]
    fn django_urls() {
        let f = found("blog/urls.py", "urlpatterns = [\n    path('posts/<int:pk>/', views.detail),\n]\n");
        assert!(f.contains(&("api_route".into(), "ROUTE posts/<int:pk>/".into())), "{f:?}");
    }
}
