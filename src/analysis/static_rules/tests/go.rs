//! Go: the old rules' table (ported), plus what only a tree can tell: send vs receive, defer,
//! generics with and without a constraint, table tests that have a table.

use super::{check, found};

#[test]
fn every_pattern_positive_and_negative() {
    let positives: &[(&str, &str, &str)] = &[
        ("type User struct {\n\tID int\n}", "struct", "User"),
        ("type UserService struct{}", "layered_class", "UserService"),
        ("type Store interface {\n\tGet() error\n}", "interface", "Store"),
        ("type ID = string", "type_alias", "ID"),
        ("type (\n\tName string\n\tBox[T any] struct{ v T }\n)", "type_alias", "Name"),
        ("type (\n\tName string\n\tBox[T any] struct{ v T }\n)", "struct", "Box"),
        ("type (\n\tName string\n\tBox[T any] struct{ v T }\n)", "generic", "unbounded T"),
        ("func Max[T cmp.Ordered](a, b T) T { return a }", "generic", "bounded T cmp.Ordered"),
        ("const (\n\tRed Color = iota\n\tBlue\n)", "enum", "Color"),
        ("func TestCreateUser(t *testing.T) {}", "test", "TestCreateUser"),
        ("func f(t *testing.T) {\n\tt.Run(\"empty name\", func(t *testing.T) {})\n}", "test", "empty name"),
        ("func Apply(xs []int, f func(int) int) []int { return xs }", "higher_order_function", "Apply"),
        ("func f() {\n\tsort.Slice(xs, func(i, j int) bool { return xs[i] < xs[j] })\n}", "closure", "Slice"),
        ("func f() {\n\tgo worker(jobs)\n}", "goroutine", "worker"),
        ("func f() {\n\tgo func() {\n\t\tdone <- true\n\t}()\n}", "goroutine", "go func"),
        ("func f() {\n\tdefer mu.Unlock()\n}", "defer", "defer mu.Unlock"),
        ("func f() {\n\tdefer func() { recover() }()\n}", "defer", "defer func"),
        ("func f() {\n\tjobs := make(chan int, 10)\n}", "channel", "make(chan)"),
        ("func f() {\n\tresults <- v\n}", "channel", "send"),
        ("func f() {\n\tv := <-results\n}", "channel", "receive"),
        ("func f() {\n\tselect {\n\tcase <-ctx.Done():\n\t}\n}", "channel", "select"),
        ("var mu sync.Mutex", "mutex", "sync.Mutex"),
        ("type C struct {\n\tmu sync.RWMutex\n}", "mutex", "sync.RWMutex"),
        ("var once sync.Once", "singleton", "sync.Once"),
        ("var wg sync.WaitGroup", "promise_combinator", "sync.WaitGroup"),
        ("func f() {\n\tg, ctx := errgroup.WithContext(ctx)\n}", "promise_combinator", "errgroup"),
        ("func f() error {\n\tif err != nil {\n\t\treturn err\n\t}\n}", "error_handling", "if err != nil"),
        ("func f() error {\n\treturn fmt.Errorf(\"load: %w\", err)\n}", "error_handling", "fmt.Errorf %w"),
        ("func f() {\n\tif errors.Is(err, sql.ErrNoRows) {}\n}", "error_handling", "errors.Is"),
        ("func f() {\n\tr.GET(\"/users/:id\", getUser)\n}", "api_route", "GET /users/:id"),
        ("func f() {\n\tmux.HandleFunc(\"/health\", health)\n}", "api_route", "ANY /health"),
        ("func f() {\n\thttp.HandleFunc(\"POST /items\", create)\n}", "api_route", "POST /items"),
        ("func f() {\n\tdb.Where(\"name = ?\", n).First(&u)\n}", "db_query", "db.Where"),
        ("func f() {\n\trows, err := s.db.Query(q)\n}", "db_query", "s.db.Query"),
        ("var q = `SELECT id FROM users WHERE id = $1`", "db_query", "SELECT users"),
    ];
    let negatives: &[(&str, &str)] = &[
        ("var s struct{}", "struct"),
        ("type User struct{}", "layered_class"),
        ("var i interface{}", "interface"),
        ("func f() { typ := 1 }", "type_alias"),
        ("const Red = 1", "enum"),
        ("func helper(t *testing.T) {}", "test"),
        ("func Apply(xs []int) []int { return xs }", "higher_order_function"),
        ("func main() {}", "closure"),
        ("func f() { gopher := 1 }", "goroutine"),
        ("var c chan int", "channel"),
        ("func f() { mu.Lock() }", "mutex"),
        ("func f() { once := 1 }", "singleton"),
        ("func f() { wg := 1 }", "promise_combinator"),
        ("func f() { if err == nil {} }", "error_handling"),
        ("func f() { m.Get(\"key\") }", "api_route"),
        ("func f() { list.Find(x) }", "db_query"),
        ("func f() { defer_ := 1 }", "defer"),
        ("func f() { s := \"Select an option\" }", "db_query"),
    ];
    check("main.go", "//", positives, negatives);
}

#[test]
fn raw_strings_and_comments_are_not_code() {
    let src = "package a\nvar q = `go run(x) if err != nil {}`\n/* go work() */\n";
    let f = found("a.go", src);
    assert!(f.iter().all(|(t, _)| t != "goroutine" && t != "error_handling"), "{f:?}");
}

#[test]
fn a_receive_is_not_a_send() {
    let f = found("a.go", "package a\nfunc f() {\n\t<-done\n}\n");
    assert!(f.contains(&("channel".into(), "receive".into())), "{f:?}");
    assert!(!f.contains(&("channel".into(), "send".into())), "{f:?}");
}

#[test]
fn a_table_test_needs_a_table() {
    let table = "package a\nfunc TestCount(t *testing.T) {\n\ttests := []struct {\n\t\tin   string\n\t\twant int\n\t}{\n\t\t{\"\", 0},\n\t\t{\"a,b\", 2},\n\t}\n\tfor _, tc := range tests {\n\t\tt.Run(tc.in, func(t *testing.T) {\n\t\t\tif got := count(tc.in); got != tc.want {\n\t\t\t\tt.Errorf(\"got %d\", got)\n\t\t\t}\n\t\t})\n\t}\n}\n";
    let f = found("a_test.go", table);
    assert!(f.contains(&("table_test".into(), "t.Run over tests".into())), "{f:?}");
    // Ranging over something that is not a literal table, or a table without t.Run, is not one.
    let no_table = "package a\nfunc TestIDs(t *testing.T) {\n\tfor _, id := range loadIDs() {\n\t\tt.Run(id, func(t *testing.T) {})\n\t}\n}\n";
    assert!(!found("a_test.go", no_table).iter().any(|(t, _)| t == "table_test"));
    let no_run = "package a\nfunc TestSum(t *testing.T) {\n\tcases := []struct{ a, b int }{{1, 2}}\n\tfor _, c := range cases {\n\t\tif c.a > c.b {\n\t\t\tt.Fatal(c)\n\t\t}\n\t}\n}\n";
    assert!(!found("a_test.go", no_run).iter().any(|(t, _)| t == "table_test"));
}
