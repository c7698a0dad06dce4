//! Rules for Java: type declarations (records count as data classes), annotations (Spring
//! `@GetMapping` routes, JUnit `@Test`, `@Async`, JPA `@Query`, the rest as decorators), Spring
//! Data repositories and JPA/JDBC calls, try/catch/throws, CompletableFuture and executors,
//! `synchronized`/locks, lambdas and streams, singletons and blocking queues.

use super::text::{
    arrow_arg_callee, calls, has_word, ident_after, ident_at, layered_suffix, strip_modifiers, strip_word,
};
use super::{FileCtx, Sink};

const MODIFIERS: [&str; 10] = [
    "public",
    "private",
    "protected",
    "static",
    "final",
    "abstract",
    "sealed",
    "non-sealed",
    "synchronized",
    "default",
];
const MAPPINGS: [(&str, &str); 6] = [
    ("GetMapping", "GET"),
    ("PostMapping", "POST"),
    ("PutMapping", "PUT"),
    ("PatchMapping", "PATCH"),
    ("DeleteMapping", "DELETE"),
    ("RequestMapping", "ROUTE"),
];
const JAXRS: [&str; 5] = ["GET", "POST", "PUT", "PATCH", "DELETE"];
const TEST_ANNOTATIONS: [&str; 4] = ["Test", "ParameterizedTest", "RepeatedTest", "TestFactory"];
const REPOSITORIES: [&str; 5] =
    ["JpaRepository", "CrudRepository", "PagingAndSortingRepository", "MongoRepository", "ReactiveCrudRepository"];
const STREAM_OPS: [&str; 12] = [
    "map",
    "filter",
    "reduce",
    "flatMap",
    "forEach",
    "anyMatch",
    "allMatch",
    "noneMatch",
    "sorted",
    "thenApply",
    "thenCompose",
    "computeIfAbsent",
];

#[derive(Default)]
struct State {
    class: Option<String>,
    pending_test: bool,
    pending_async: bool,
}

pub(super) fn scan(ctx: &FileCtx, sink: &mut Sink) {
    let mut st = State::default();
    for (i, m) in ctx.lines() {
        let t = m.trim_start();
        if t.is_empty() {
            continue;
        }
        // try-with-resources (issue 31): `try (var in = …) {`.
        if t.starts_with("try (") || t.starts_with("try(") || t.starts_with("} try (") {
            sink.emit("context_manager", "try-with-resources", i);
        }
        if let Some(rest) = t.strip_prefix('@')
            && !rest.starts_with("interface")
        {
            annotation(ctx, &mut st, i, m, rest, sink);
            // An annotation may share its line with the declaration: `@Test void f() {`.
            let after = rest[ident_at(rest, 0).len()..].trim_start();
            let after = if after.starts_with('(') {
                super::text::matching_paren(after, 0).map_or("", |c| &after[c + 1..])
            } else {
                after
            };
            if after.trim().is_empty() || after.trim_start().starts_with('@') {
                continue;
            }
        }
        declarations(&mut st, i, t, sink);
        statements(&st, i, m, t, sink);
    }
}

fn annotation(ctx: &FileCtx, st: &mut State, i: usize, m: &str, rest: &str, sink: &mut Sink) {
    let name = ident_at(rest, 0);
    if name.is_empty() {
        return;
    }
    sink.emit("decorator", name, i);
    let open = m.find(&format!("@{name}(")).map(|p| p + name.len() + 2);
    // The first string inside the annotation's parentheses: `("/x")`, `(value = "/x")`.
    let first_string = || {
        let o = open?;
        let q = super::text::ahead(m, o).find('"').map(|q| o + q)?;
        ctx.string_at(i, q)
    };
    if let Some((_, verb)) = MAPPINGS.iter().find(|(a, _)| *a == name) {
        let path = first_string().unwrap_or("");
        sink.emit("api_route", format!("{verb} {path}").trim_end(), i);
    }
    if JAXRS.contains(&name) {
        sink.emit("api_route", name, i);
    }
    if name == "Path"
        && let Some(path) = first_string()
    {
        sink.emit("api_route", &format!("ROUTE {path}"), i);
    }
    if name == "Query" {
        sink.emit("db_query", "@Query", i);
    }
    st.pending_test |= TEST_ANNOTATIONS.contains(&name);
    st.pending_async |= name == "Async";
}

fn declarations(st: &mut State, i: usize, t: &str, sink: &mut Sink) {
    let t = if t.starts_with('@') { t.split_once(' ').map_or(t, |(_, r)| r) } else { t };
    let d = strip_modifiers(t, &MODIFIERS);
    for (kw, ty) in [("class", "class"), ("interface", "interface"), ("enum", "enum"), ("record", "dataclass")] {
        if let Some(name) = strip_word(d, kw).and_then(|r| ident_after(r, 0)) {
            sink.emit(ty, name, i);
            if layered_suffix(name) {
                sink.emit("layered_class", name, i);
            }
            if let Some(repo) = REPOSITORIES.iter().find(|r| d.contains(&format!("{r}<"))) {
                sink.emit("db_query", repo, i);
            }
            st.class = Some(name.to_string());
            return;
        }
    }
    let Some(open) = d.find('(') else { return };
    let head = &d[..open];
    let name = head.rsplit(char::is_whitespace).next().unwrap_or("");
    let first = head.split_whitespace().next().unwrap_or("");
    let declares = head.contains(' ')
        && !head.contains('=')
        && !head.contains('.')
        && !matches!(first, "return" | "new" | "if" | "while" | "for" | "switch" | "catch" | "throw" | "else" | "try");
    if declares && !name.is_empty() && name.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'_') {
        if std::mem::take(&mut st.pending_test) {
            sink.emit("test", name, i);
        }
        if std::mem::take(&mut st.pending_async) || head.contains("CompletableFuture<") {
            sink.emit("async_function", name, i);
        }
        if has_word(&d[open..], "throws") {
            sink.emit("error_handling", "throws", i);
        }
    }
}

fn statements(st: &State, i: usize, m: &str, t: &str, sink: &mut Sink) {
    if strip_word(t, "try").is_some_and(|r| r.trim().is_empty() || r.trim_start().starts_with(['{', '('])) {
        sink.emit("error_handling", "try/catch", i);
    }
    if let Some(rest) = strip_word(t, "catch").or_else(|| t.strip_prefix("} catch")) {
        let exc = rest.trim_start().strip_prefix('(').and_then(|r| ident_after(r, 0));
        sink.emit("error_handling", &exc.map_or("catch".to_string(), |e| format!("catch {e}")), i);
    }
    if has_word(m, "synchronized") {
        sink.emit("mutex", "synchronized", i);
    }
    for (needle, ty, name) in [
        ("ReentrantLock", "mutex", "ReentrantLock"),
        ("ReadWriteLock", "mutex", "ReadWriteLock"),
        ("BlockingQueue", "channel", "BlockingQueue"),
        ("new Thread(", "spawned_task", "Thread"),
        ("Thread.ofVirtual()", "spawned_task", "Thread.ofVirtual"),
        ("Executors.new", "spawned_task", "ExecutorService"),
    ] {
        if m.contains(needle) {
            sink.emit(ty, name, i);
        }
    }
    let singleton_field = has_word(m, "static") && (has_word(m, "INSTANCE") || has_word(m, "instance"));
    if singleton_field || (has_word(m, "static") && m.contains("getInstance(")) {
        sink.emit("singleton", st.class.as_deref().unwrap_or("getInstance"), i);
    }
    for (p, _) in m.match_indices("->") {
        if let Some(callee) = arrow_arg_callee(m, p) {
            sink.emit("closure", &callee, i);
        }
    }
    for c in calls(m) {
        let path = c.path(m);
        match (c.recv, c.name) {
            ("CompletableFuture", "allOf" | "anyOf") => sink.emit("promise_combinator", &path, i),
            ("CompletableFuture", "supplyAsync" | "runAsync") => sink.emit("spawned_task", &path, i),
            (_, "submit" | "execute") if c.recv.to_ascii_lowercase().contains("executor") => {
                sink.emit("spawned_task", &path, i)
            }
            _ => {}
        }
        if c.method && STREAM_OPS.contains(&c.name) {
            let args = super::text::ahead(m, c.open + 1);
            if args.contains("->") || args.contains("::") {
                sink.emit("higher_order_function", c.name, i);
            }
        }
        if c.method && is_db_call(c.recv, c.name) {
            sink.emit("db_query", &path, i);
        }
    }
}

fn is_db_call(recv: &str, name: &str) -> bool {
    let last = recv.rsplit('.').next().unwrap_or("");
    let lower = last.to_ascii_lowercase();
    let repo = lower.ends_with("repository") || lower.ends_with("repo");
    let repo_op = ["find", "save", "delete", "count", "exists"].iter().any(|p| name.starts_with(p));
    (repo && repo_op)
        || (matches!(lower.as_str(), "entitymanager" | "em")
            && matches!(name, "createQuery" | "createNativeQuery" | "persist" | "merge" | "find" | "remove"))
        || (lower == "jdbctemplate" && matches!(name, "query" | "update" | "queryForObject" | "queryForList"))
}

#[cfg(test)]
mod tests {
    use super::super::testutil::{check, found};

    #[test]
    fn every_rule_positive_and_negative() {
        let positives: &[(&str, &str, &str)] = &[
            ("public class UserController {\n}", "class", "UserController"),
            ("public class UserController {\n}", "layered_class", "UserController"),
            ("public interface Store {\n}", "interface", "Store"),
            ("public enum Role { ADMIN, USER }", "enum", "Role"),
            ("public record UserDto(String name) {}", "dataclass", "UserDto"),
            ("@GetMapping(\"/users/{id}\")\npublic User get(@PathVariable Long id) {}", "api_route", "GET /users/{id}"),
            ("@PostMapping(value = \"/users\")\npublic User create() {}", "api_route", "POST /users"),
            ("@RestController\npublic class A {}", "decorator", "RestController"),
            ("@Test\nvoid createsUser() {\n}", "test", "createsUser"),
            ("@Async\npublic CompletableFuture<User> load() {}", "async_function", "load"),
            ("public interface UserRepository extends JpaRepository<User, Long> {}", "db_query", "JpaRepository"),
            ("User u = userRepository.findById(id).orElseThrow();", "db_query", "userRepository.findById"),
            ("@Query(\"select u from User u\")\nList<User> all();", "db_query", "@Query"),
            ("try {\n  x();\n} catch (IOException e) {\n}", "error_handling", "try/catch"),
            ("try {\n  x();\n} catch (IOException e) {\n}", "error_handling", "catch IOException"),
            ("public void load() throws IOException {\n}", "error_handling", "throws"),
            ("CompletableFuture.allOf(a, b).join();", "promise_combinator", "CompletableFuture.allOf"),
            ("var f = CompletableFuture.supplyAsync(() -> work());", "spawned_task", "CompletableFuture.supplyAsync"),
            ("executor.submit(task);", "spawned_task", "executor.submit"),
            ("public synchronized void inc() {}", "mutex", "synchronized"),
            ("private final Lock lock = new ReentrantLock();", "mutex", "ReentrantLock"),
            ("names = users.stream().map(u -> u.getName()).toList();", "closure", "map"),
            ("names = users.stream().map(User::getName).toList();", "higher_order_function", "map"),
            ("class Cfg {\n  private static final Cfg INSTANCE = new Cfg();\n}", "singleton", "Cfg"),
            ("BlockingQueue<Job> q = new LinkedBlockingQueue<>();", "channel", "BlockingQueue"),
        ];
        let negatives: &[(&str, &str)] = &[
            ("int classes = 1;", "class"),
            ("public class User {}", "layered_class"),
            ("int iface = 1;", "interface"),
            ("int enumCount = 1;", "enum"),
            ("int recorder = 1;", "dataclass"),
            ("@Autowired\nprivate Svc svc;", "api_route"),
            ("String email = \"a@b.c\";", "decorator"),
            ("void helper() {}", "test"),
            ("public User load() {}", "async_function"),
            ("list.find(x);", "db_query"),
            ("int retry = 1;", "error_handling"),
            ("CompletableFuture.completedFuture(1);", "promise_combinator"),
            ("Thread.sleep(1);", "spawned_task"),
            ("int locked = 1;", "mutex"),
            ("Function<Integer, Integer> f = x -> x;", "closure"),
            ("names.stream().map(names).toList();", "higher_order_function"),
            ("private static int count = 0;", "singleton"),
            ("List<Job> q = new ArrayList<>();", "channel"),
        ];
        check("src/main/java/App.java", "//", positives, negatives);
    }

    #[test]
    fn text_blocks_are_not_code() {
        let f = found("A.java", "String s = \"\"\"\n  @GetMapping(\"/x\") synchronized\n  \"\"\";\n");
        assert!(f.iter().all(|(t, _)| t != "api_route" && t != "mutex" && t != "decorator"), "{f:?}");
    }
}
