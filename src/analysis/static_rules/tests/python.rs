//! Python: the old rules' table (ported), plus `with` targets, table tests that have a table,
//! generics.

use super::{check, found};

#[test]
fn every_pattern_positive_and_negative() {
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
        ("try:\n    x()\nexcept (KeyError, ValueError):\n    pass", "error_handling", "except KeyError"),
        ("try:\n    x()\nexcept:\n    pass", "error_handling", "except"),
        ("users = db.session.query(User).all()", "db_query", "db.session.query"),
        ("rows = session.execute(select(User))", "db_query", "session.execute"),
        ("stmt = select(User).where(User.id == 1)", "db_query", "select"),
        ("qs = Article.objects.filter(published=True)", "db_query", "Article.objects.filter"),
        ("cur.execute(\"SELECT id FROM accounts WHERE owner = %s\", (o,))", "db_query", "SELECT accounts"),
        ("key = sorted(xs, key=lambda x: x.age)", "closure", "lambda"),
        ("key = sorted(xs, key=lambda x: x.age)", "higher_order_function", "sorted"),
        ("names = list(map(str.upper, xs))", "higher_order_function", "map"),
        ("f = functools.partial(g, 1)", "higher_order_function", "functools.partial"),
        ("@functools.wraps(fn)\ndef inner(): ...", "higher_order_function", "functools.wraps"),
        ("def gen():\n    yield 1", "generator", "gen"),
        ("def test_create_user(client):\n    assert 1", "test", "test_create_user"),
        ("class TestUsers:\n    pass", "test", "TestUsers"),
        ("class Config:\n    _instance = None", "singleton", "Config"),
        ("task = asyncio.create_task(work())", "spawned_task", "asyncio.create_task"),
        ("t = threading.Thread(target=run)", "spawned_task", "threading.Thread"),
        ("lock = asyncio.Lock()", "mutex", "asyncio.Lock"),
        ("q = asyncio.Queue()", "channel", "asyncio.Queue"),
        ("with open(p) as fh:\n    pass", "context_manager", "open"),
        ("async def f():\n    async with session.begin():\n        pass", "context_manager", "session.begin"),
        ("@contextmanager\ndef tx():\n    yield", "context_manager", "contextmanager"),
        ("class Tx:\n    def __enter__(self):\n        return self", "context_manager", "Tx"),
        (
            "@pytest.mark.parametrize(\"a,b\", [(1, 2), (3, 4)])\ndef test_add(a, b):\n    assert a < b",
            "table_test",
            "test_add",
        ),
        ("T = TypeVar(\"T\", bound=Hashable)", "generic", "bounded TypeVar T"),
        ("def first[T](xs: list[T]) -> T:\n    return xs[0]", "generic", "unbounded T"),
        ("def first[T: Hashable, U](xs: list[T]) -> T:\n    return xs[0]", "generic", "bounded T: Hashable"),
        ("def first[T: Hashable, U](xs: list[T]) -> T:\n    return xs[0]", "generic", "unbounded U"),
        ("T = TypeVar(\"T\")", "generic", "unbounded TypeVar T"),
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
        ("within = 1", "context_manager"),
        ("def test_add():\n    assert add(1, 2) == 3\n    assert add(2, 2) == 4", "table_test"),
        ("def f():\n    \"\"\"SELECT * FROM docs WHERE the docstring explains\"\"\"\n    return 1", "db_query"),
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
    assert!(!found("blog/views.py", "x = path('a/')\n").iter().any(|(t, _)| t == "api_route"));
}
