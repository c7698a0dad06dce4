//! Java: the old rules' table (ported), plus parameterized tests with their rows and generics.

use super::{check, found};

fn class(body: &str) -> String {
    format!("class A {{\n  void f() {{\n    {body}\n  }}\n}}\n")
}

#[test]
fn every_pattern_positive_and_negative() {
    let stmts = [
        ("try {\n  x();\n} catch (IOException e) {\n}", "error_handling", "try/catch"),
        ("try {\n  x();\n} catch (IOException e) {\n}", "error_handling", "catch IOException"),
        ("try (var in = open()) {\n  use(in);\n}", "context_manager", "try-with-resources"),
        ("CompletableFuture.allOf(a, b).join();", "promise_combinator", "CompletableFuture.allOf"),
        ("var f = CompletableFuture.supplyAsync(() -> work());", "spawned_task", "CompletableFuture.supplyAsync"),
        ("executor.submit(task);", "spawned_task", "executor.submit"),
        ("new Thread(r).start();", "spawned_task", "Thread"),
        ("synchronized (this) { n++; }", "mutex", "synchronized"),
        ("names = users.stream().map(u -> u.getName()).toList();", "closure", "map"),
        ("names = users.stream().map(User::getName).toList();", "higher_order_function", "map"),
        ("User u = userRepository.findById(id).orElseThrow();", "db_query", "userRepository.findById"),
        ("String q = \"SELECT * FROM orders WHERE id = ?\";", "db_query", "SELECT orders"),
    ];
    let stmts: Vec<(String, &str, &str)> = stmts.iter().map(|(s, t, n)| (class(s), *t, *n)).collect();
    let mut positives: Vec<(&str, &str, &str)> = stmts.iter().map(|(s, t, n)| (s.as_str(), *t, *n)).collect();
    positives.extend_from_slice(&[
        ("public class UserController {\n}", "class", "UserController"),
        ("public class UserController {\n}", "layered_class", "UserController"),
        ("public interface Store {\n}", "interface", "Store"),
        ("public enum Role { ADMIN, USER }", "enum", "Role"),
        ("public record UserDto(String name) {}", "dataclass", "UserDto"),
        (
            "class A {\n  @GetMapping(\"/users/{id}\")\n  public User get(@PathVariable Long id) { return null; }\n}",
            "api_route",
            "GET /users/{id}",
        ),
        (
            "class A {\n  @PostMapping(value = \"/users\")\n  public User create() { return null; }\n}",
            "api_route",
            "POST /users",
        ),
        ("@RestController\npublic class A {}", "decorator", "RestController"),
        ("class A {\n  @Test\n  void createsUser() {\n  }\n}", "test", "createsUser"),
        (
            "class A {\n  @ParameterizedTest\n  @ValueSource(ints = {1, 2})\n  void positive(int n) {}\n}",
            "table_test",
            "positive",
        ),
        ("class A {\n  @Async\n  public CompletableFuture<User> load() { return null; }\n}", "async_function", "load"),
        ("public interface UserRepository extends JpaRepository<User, Long> {}", "db_query", "JpaRepository"),
        ("interface R {\n  @Query(\"select u from User u\")\n  List<User> all();\n}", "db_query", "@Query"),
        ("class A {\n  public void load() throws IOException {\n  }\n}", "error_handling", "throws"),
        ("class A {\n  public synchronized void inc() {}\n}", "mutex", "synchronized"),
        ("class A {\n  private final Lock lock = new ReentrantLock();\n}", "mutex", "ReentrantLock"),
        ("class Cfg {\n  private static final Cfg INSTANCE = new Cfg();\n}", "singleton", "Cfg"),
        ("class A {\n  BlockingQueue<Job> q = new LinkedBlockingQueue<>();\n}", "channel", "BlockingQueue"),
        ("class Box<T extends Comparable<T>> {}", "generic", "bounded T extends Comparable<T>"),
        ("class Box<T> {}", "generic", "unbounded T"),
    ]);
    let negatives: &[(&str, &str)] = &[
        ("class A { int classes = 1; }", "interface"),
        ("public class User {}", "layered_class"),
        ("class A { int enumCount = 1; }", "enum"),
        ("class A { int recorder = 1; }", "dataclass"),
        ("class A {\n  @Autowired\n  private Svc svc;\n}", "api_route"),
        ("class A { String email = \"a@b.c\"; }", "decorator"),
        ("class A { void helper() {} }", "test"),
        ("class A { public User load() { return null; } }", "async_function"),
        ("class A { void f() { list.find(x); } }", "db_query"),
        ("class A { int retry = 1; }", "error_handling"),
        ("class A { void f() { CompletableFuture.completedFuture(1); } }", "promise_combinator"),
        ("class A { void f() { Thread.sleep(1); } }", "spawned_task"),
        ("class A { int locked = 1; }", "mutex"),
        ("class A { Function<Integer, Integer> f = x -> x; }", "closure"),
        ("class A { void f() { names.stream().map(names).toList(); } }", "higher_order_function"),
        ("class A { private static int count = 0; }", "singleton"),
        ("class A { List<Job> q = new ArrayList<>(); }", "channel"),
        ("class A {\n  @ParameterizedTest\n  void noRows(int n) {}\n}", "table_test"),
    ];
    check("src/main/java/App.java", "//", &positives, negatives);
}

#[test]
fn text_blocks_are_not_code() {
    let f = found("A.java", "class A {\n  String s = \"\"\"\n  @GetMapping(\"/x\") synchronized\n  \"\"\";\n}\n");
    assert!(f.iter().all(|(t, _)| t != "api_route" && t != "mutex" && t != "decorator"), "{f:?}");
}
