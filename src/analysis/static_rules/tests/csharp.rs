//! C#: the old rules' table (ported), plus [Theory] with its rows.

use super::{check, found};

fn method(body: &str) -> String {
    format!("class A\n{{\n    void F()\n    {{\n        {body}\n    }}\n}}\n")
}

#[test]
fn every_pattern_positive_and_negative() {
    let stmts = [
        ("app.MapGet(\"/users\", () => db.Users.ToList());", "api_route", "GET /users"),
        ("var u = await _repo.FindAsync(id);", "await", "_repo.FindAsync"),
        ("await Task.WhenAll(a, b);", "promise_combinator", "Task.WhenAll"),
        ("try\n{\n    x();\n}\ncatch (IOException e)\n{\n}", "error_handling", "try/catch"),
        ("try\n{\n    x();\n}\ncatch (IOException e)\n{\n}", "error_handling", "catch IOException"),
        ("var users = await _db.Users.Where(u => u.Active).ToListAsync();", "db_query", "ToListAsync"),
        ("var t = Task.Run(() => Work());", "spawned_task", "Task.Run"),
        ("lock (_gate)\n{\n}", "mutex", "lock"),
        ("var names = users.Select(u => u.Name);", "closure", "Select"),
        ("var names = users.Select(u => u.Name);", "higher_order_function", "Select"),
        ("yield return item;", "generator", "yield return"),
        ("var ch = Channel.CreateUnbounded<int>();", "channel", "Channel"),
        ("using var conn = Open();", "context_manager", "using"),
        ("var q = \"SELECT * FROM stock WHERE sku = @sku\";", "db_query", "SELECT stock"),
    ];
    let stmts: Vec<(String, &str, &str)> = stmts.iter().map(|(s, t, n)| (method(s), *t, *n)).collect();
    let mut positives: Vec<(&str, &str, &str)> = stmts.iter().map(|(s, t, n)| (s.as_str(), *t, *n)).collect();
    positives.extend_from_slice(&[
        ("public class UserService\n{\n}", "class", "UserService"),
        ("public class UserService\n{\n}", "layered_class", "UserService"),
        ("public interface IUserRepository { }", "interface", "IUserRepository"),
        ("public readonly struct Point { }", "struct", "Point"),
        ("public enum Role { Admin, User }", "enum", "Role"),
        ("public record UserDto(string Name);", "dataclass", "UserDto"),
        ("using UserId = System.Guid;", "type_alias", "UserId"),
        ("class A {\n    [HttpGet(\"{id}\")]\n    public async Task<User> Get(int id) { }\n}", "api_route", "GET {id}"),
        ("class A {\n    [HttpPost]\n    public IActionResult Create() { }\n}", "api_route", "POST"),
        ("[ApiController]\npublic class A { }", "decorator", "ApiController"),
        ("class A {\n    public async Task<User> LoadAsync(int id)\n    {\n    }\n}", "async_function", "LoadAsync"),
        ("class A {\n    public DbSet<User> Users { get; set; }\n}", "db_query", "DbSet"),
        ("public class AppDbContext : DbContext { }", "db_query", "DbContext"),
        ("class Cfg {\n  public static Cfg Instance { get; } = new Cfg();\n}", "singleton", "Cfg"),
        ("class A {\n    [Fact]\n    public void Adds_numbers() { }\n}", "test", "Adds_numbers"),
        (
            "class A {\n    [Theory]\n    [InlineData(1, 2)]\n    public void Adds(int a, int b) { }\n}",
            "table_test",
            "Adds",
        ),
        ("class Box<T> where T : IComparable<T> { }", "generic", "bounded T"),
    ]);
    let negatives: &[(&str, &str)] = &[
        ("class A { int classes = 1; }", "interface"),
        ("public class User { }", "layered_class"),
        ("class A { void F() { var s = new Point(); } }", "struct"),
        ("class A { void F() { var e = list.GetEnumerator(); } }", "enum"),
        ("class A { int recorder = 1; }", "dataclass"),
        ("using System.Linq;", "type_alias"),
        ("[Authorize]\npublic class A { }", "api_route"),
        ("class A { int[] xs = new int[] { 1 }; }", "decorator"),
        ("class A { public Task<User> Load(int id) { } }", "async_function"),
        ("class A { int awaiter = 1; }", "await"),
        ("class A { void F() { Task.Delay(1); } }", "promise_combinator"),
        ("class A { int retry = 1; }", "error_handling"),
        ("class A { void F() { var l = xs.ToList(); } }", "db_query"),
        ("class A { void F() { var t = Task.Delay(1); } }", "spawned_task"),
        ("class A { bool locked = true; }", "mutex"),
        ("class A { Func<int> f = () => 1; }", "closure"),
        ("class A { void F() { var n = xs.Count(); } }", "higher_order_function"),
        ("class A { int F() { return item; } }", "generator"),
        ("class A { public int Count { get; } }", "singleton"),
        ("class A { void F() { var ch = new List<int>(); } }", "channel"),
        ("class A { public void Helper() { } }", "test"),
        (
            "class A {\n    [Fact]\n    public void One() { Assert.Equal(1, F()); Assert.Equal(2, G()); }\n}",
            "table_test",
        ),
    ];
    check("Api/UsersController.cs", "//", &positives, negatives);
}

#[test]
fn verbatim_and_interpolated_strings_are_not_code() {
    let f = found("a.cs", "class A {\n  string s = @\"Task.Run(() => x)\";\n  string t = $\"{a} await b\";\n}\n");
    assert!(f.iter().all(|(t, _)| t != "spawned_task" && t != "await" && t != "closure"), "{f:?}");
}
