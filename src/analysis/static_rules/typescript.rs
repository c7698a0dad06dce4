//! Rules for TypeScript and JavaScript (one set: the patterns are the same, TypeScript only
//! adds interfaces, type aliases, enums and decorators). React hooks, Next.js route exports and
//! directives, Express/Hono/Fastify routes, Prisma/Drizzle/Mongoose queries, async/await,
//! promise combinators, arrow callbacks and tests (Jest/Vitest/Mocha/Playwright).

use super::text::{
    arrow_arg_callee, calls, find_word, has_word, ident_after, ident_at, layered_suffix, path_after, strip_modifiers,
    strip_word,
};
use super::{FileCtx, Sink};

const MODIFIERS: [&str; 10] =
    ["export", "default", "declare", "abstract", "public", "private", "protected", "static", "readonly", "override"];
const HTTP_METHODS: [&str; 7] = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"];
const ROUTER_METHODS: [&str; 8] = ["get", "post", "put", "patch", "delete", "all", "options", "head"];
const NEST_ROUTES: [(&str, &str); 6] = [
    ("@Get(", "GET"),
    ("@Post(", "POST"),
    ("@Put(", "PUT"),
    ("@Patch(", "PATCH"),
    ("@Delete(", "DELETE"),
    ("@All(", "ALL"),
];
const HOF_METHODS: [&str; 11] =
    ["map", "filter", "reduce", "reduceRight", "flatMap", "forEach", "some", "every", "find", "findIndex", "sort"];
const COMBINATORS: [&str; 4] = ["all", "allSettled", "race", "any"];
/// Query methods that name a database operation when called on an ORM/driver receiver.
const DB_OPS: [&str; 33] = [
    "findMany",
    "findUnique",
    "findFirst",
    "findUniqueOrThrow",
    "findFirstOrThrow",
    "create",
    "createMany",
    "update",
    "updateMany",
    "upsert",
    "delete",
    "deleteMany",
    "count",
    "aggregate",
    "groupBy",
    "find",
    "findOne",
    "findById",
    "findAll",
    "findByPk",
    "findOneBy",
    "findBy",
    "save",
    "insertMany",
    "updateOne",
    "deleteOne",
    "select",
    "insert",
    "query",
    "execute",
    "$queryRaw",
    "$executeRaw",
    "countDocuments",
];
/// Receivers that are a database client in the usual naming (`prisma`, `db`, `pool` …).
const DB_RECEIVERS: [&str; 14] = [
    "prisma",
    "db",
    "tx",
    "knex",
    "pool",
    "client",
    "conn",
    "connection",
    "sql",
    "em",
    "entityManager",
    "manager",
    "dataSource",
    "supabase",
];
const TEST_FNS: [&str; 3] = ["describe", "it", "test"];

/// Per-file state: the class being read (for naming singletons).
#[derive(Default)]
struct State {
    class: Option<String>,
}

pub(super) fn scan(ctx: &FileCtx, sink: &mut Sink) {
    directives(ctx, sink);
    let mut st = State::default();
    for (i, m) in ctx.lines() {
        let t = m.trim_start();
        if t.is_empty() {
            continue;
        }
        declarations(ctx, &mut st, i, t, sink);
        hooks(i, m, sink);
        async_await(i, m, sink);
        calls_on_line(ctx, i, m, sink);
        closures(i, m, sink);
        misc(ctx, &st, i, m, t, sink);
    }
}

/// `interface`, `type X =`, `enum`, `class`, `function*`, custom hooks, Next.js route exports.
fn declarations(ctx: &FileCtx, st: &mut State, i: usize, t: &str, sink: &mut Sink) {
    let exported = t.starts_with("export");
    let d = strip_modifiers(t, &MODIFIERS);
    if let Some(rest) = strip_word(d, "interface") {
        if let Some(name) = ident_after(rest, 0) {
            sink.emit("interface", name, i);
        }
    } else if let Some(rest) = strip_word(d, "type") {
        if let Some(name) = ident_after(rest, 0)
            && rest.contains('=')
        {
            sink.emit("type_alias", name, i);
        }
    } else if let Some(rest) = strip_word(strip_modifiers(d, &["const"]), "enum") {
        if let Some(name) = ident_after(rest, 0) {
            sink.emit("enum", name, i);
        }
    } else if let Some(rest) = strip_word(d, "class")
        && let Some(name) = ident_after(rest, 0)
    {
        sink.emit("class", name, i);
        if layered_suffix(name) {
            sink.emit("layered_class", name, i);
        }
        st.class = Some(name.to_string());
    }
    let d = strip_modifiers(d, &["async"]);
    if let Some(rest) = strip_word(d, "function") {
        let generator = rest.trim_start().starts_with('*');
        let name = ident_after(rest.trim_start().trim_start_matches('*'), 0).unwrap_or("");
        if generator {
            sink.emit("generator", if name.is_empty() { "function*" } else { name }, i);
        }
        if is_hook_name(name) {
            sink.emit("react_hook", name, i);
        }
        if exported && HTTP_METHODS.contains(&name) {
            next_route(ctx, name, i, sink);
        }
    } else if let Some(rest) = ["const", "let", "var"].iter().find_map(|k| strip_word(d, k)) {
        let name = ident_after(rest, 0).unwrap_or("");
        if is_hook_name(name) {
            sink.emit("react_hook", name, i);
        }
        if exported && HTTP_METHODS.contains(&name) {
            next_route(ctx, name, i, sink);
        }
    } else if d.starts_with('*') && ident_after(d, 1).is_some() {
        // A generator method: `*items() {`.
        sink.emit("generator", ident_after(d, 1).unwrap_or("generator"), i);
    }
    if t.starts_with("export default")
        && ctx.path.contains("pages/api/")
        && let Some(route) = pages_api_route(ctx.path)
    {
        sink.emit("api_route", &format!("ANY {route}"), i);
    }
}

fn is_hook_name(name: &str) -> bool {
    name.len() > 3 && name.starts_with("use") && name.as_bytes()[3].is_ascii_uppercase()
}

/// `export async function GET` in `app/**/route.ts` → "GET /api/users".
fn next_route(ctx: &FileCtx, method: &str, i: usize, sink: &mut Sink) {
    let route = app_router_path(ctx.path).unwrap_or_default();
    sink.emit("api_route", format!("{method} {route}").trim_end(), i);
}

/// The URL path of a Next.js App Router `route.ts` (route groups `(x)` and slots dropped).
fn app_router_path(path: &str) -> Option<String> {
    let p = path.replace('\\', "/");
    let segs: Vec<&str> = p.split('/').collect();
    let file = segs.last()?;
    if !file.starts_with("route.") {
        return None;
    }
    let app = segs.iter().rposition(|s| *s == "app")?;
    let parts: Vec<&str> =
        segs[app + 1..segs.len() - 1].iter().copied().filter(|s| !is_route_group_or_slot(s)).collect();
    Some(format!("/{}", parts.join("/")))
}

/// `(marketing)` route groups and `@modal` parallel-route slots do not appear in the URL.
fn is_route_group_or_slot(segment: &str) -> bool {
    segment.starts_with('@') || (segment.starts_with('(') && segment.ends_with(')'))
}

/// `pages/api/users/[id].ts` → "/api/users/[id]".
fn pages_api_route(path: &str) -> Option<String> {
    let p = path.replace('\\', "/");
    let at = p.find("pages/api/")?;
    let rest = &p[at + "pages/".len()..];
    let rest = rest.rsplit_once('.').map_or(rest, |(a, _)| a);
    Some(format!("/{}", rest.strip_suffix("/index").unwrap_or(rest)))
}

/// `useX(` calls (built-in and custom hooks alike: the `use` + capital convention is React's).
fn hooks(i: usize, m: &str, sink: &mut Sink) {
    if !m.contains("use") {
        return;
    }
    for c in calls(m) {
        if is_hook_name(c.name) && (c.recv.is_empty() || c.recv == "React") {
            sink.emit("react_hook", c.name, i);
        }
    }
}

fn async_await(i: usize, m: &str, sink: &mut Sink) {
    for pos in find_word(m, "async") {
        let rest = m[pos + 5..].trim_start();
        if let Some(after) = strip_word(rest, "function") {
            let name = ident_after(after.trim_start().trim_start_matches('*'), 0);
            if let Some(name) = name {
                sink.emit("async_function", name, i);
            }
        } else {
            let id = ident_at(rest, 0);
            let after_id = rest[id.len()..].trim_start();
            if rest.starts_with('(') || (!id.is_empty() && after_id.starts_with("=>")) {
                // `const load = async (…) =>`: named by the binding; an argument is a closure.
                if let Some(b) = m[..pos].trim_end().strip_suffix('=') {
                    let name = super::text::path_before(b, b.len());
                    if let Some(last) = name.rsplit('.').next().filter(|n| !n.is_empty()) {
                        sink.emit("async_function", last, i);
                    }
                }
            } else if !id.is_empty() && after_id.starts_with('(') {
                // A method: `async load(id) {`.
                sink.emit("async_function", id, i);
            }
        }
    }
    for pos in find_word(m, "await") {
        let mut target = path_after(m, pos + 5);
        if target == "new" {
            target = path_after(m, m[pos + 5..].find("new").map_or(m.len(), |p| pos + 5 + p + 3));
        }
        sink.emit("await", if target.is_empty() { "await" } else { target }, i);
    }
}

/// Rules keyed on call sites: routes, combinators, queries, higher-order functions, tests.
fn calls_on_line(ctx: &FileCtx, i: usize, m: &str, sink: &mut Sink) {
    for c in calls(m) {
        let path = c.path(m);
        if c.recv == "Promise" && COMBINATORS.contains(&c.name) {
            sink.emit("promise_combinator", &path, i);
        }
        if c.method
            && ROUTER_METHODS.contains(&c.name)
            && !c.recv.is_empty()
            && let Some(route) = ctx.string_at(i, c.open + 1).filter(|s| s.starts_with('/') || *s == "*")
        {
            sink.emit("api_route", &format!("{} {route}", c.name.to_ascii_uppercase()), i);
        }
        if c.method && DB_OPS.contains(&c.name) && is_db_receiver(c.recv, c.name) {
            sink.emit("db_query", &path, i);
        }
        if c.method && HOF_METHODS.contains(&c.name) && has_callback(m, c.open) {
            sink.emit("higher_order_function", c.name, i);
        }
        test_call(ctx, i, m, &c, sink);
    }
}

/// `describe('x', …)`, `it.only('x', …)`, `test.describe('x', …)`, `test.each(rows)('x', …)`.
fn test_call(ctx: &FileCtx, i: usize, m: &str, c: &super::text::Call, sink: &mut Sink) {
    let head = c.recv.split('.').next().unwrap_or("");
    let title = if c.recv.is_empty() && TEST_FNS.contains(&c.name) {
        ctx.string_at(i, c.open + 1)
    } else if TEST_FNS.contains(&head) && c.name == "each" {
        super::text::matching_paren(m, c.open)
            .filter(|&e| m[e + 1..].starts_with('('))
            .and_then(|e| ctx.string_at(i, e + 2))
    } else if TEST_FNS.contains(&head) && !c.recv.is_empty() {
        ctx.string_at(i, c.open + 1)
    } else {
        None
    };
    if let Some(title) = title {
        sink.emit("test", title, i);
    }
}

fn is_db_receiver(recv: &str, op: &str) -> bool {
    let first = recv.split('.').next().unwrap_or("");
    let last = recv.rsplit('.').next().unwrap_or("");
    DB_RECEIVERS.contains(&first)
        || last.ends_with("Repository")
        || last.ends_with("Repo")
        || last.ends_with("Model")
        // Mongoose/Sequelize statics: `User.findOne(…)`.
        || (!recv.contains('.')
            && recv.as_bytes().first().is_some_and(u8::is_ascii_uppercase)
            && matches!(op, "find" | "findOne" | "findById" | "findAll" | "findByPk" | "create" | "aggregate" | "countDocuments" | "insertMany" | "updateOne" | "deleteOne"))
}

/// The argument list opened at `open` starts with a function: an arrow, `function`, or a
/// bare function reference (`xs.map(String)`).
fn has_callback(m: &str, open: usize) -> bool {
    let args = m[open + 1..].trim_start();
    if args.starts_with("function") || args.starts_with("async") {
        return true;
    }
    let id = ident_at(args, 0);
    let after = args[id.len()..].trim_start();
    if !id.is_empty() && (after.starts_with("=>") || after.starts_with(')')) {
        return true;
    }
    args.starts_with('(')
        && super::text::matching_paren(args, 0).is_some_and(|c| args[c + 1..].trim_start().starts_with("=>"))
}

/// Arrow functions and anonymous `function` expressions passed as arguments.
fn closures(i: usize, m: &str, sink: &mut Sink) {
    for (pos, _) in m.match_indices("=>") {
        if let Some(callee) = arrow_arg_callee(m, pos) {
            sink.emit("closure", &callee, i);
        }
    }
    for pos in find_word(m, "function") {
        let after = m[pos + 8..].trim_start();
        if after.starts_with('(')
            && let Some((_, b'(' | b',')) = super::text::prev_non_space(m, pos)
        {
            sink.emit("closure", "function", i);
        }
    }
}

/// try/catch, decorators and NestJS routes, singletons, mutexes, workers.
fn misc(ctx: &FileCtx, st: &State, i: usize, m: &str, t: &str, sink: &mut Sink) {
    for pos in find_word(m, "try") {
        if m[pos + 3..].trim_start().starts_with('{') || super::text::ahead(m, pos + 3).trim().is_empty() {
            sink.emit("error_handling", "try/catch", i);
        }
    }
    if m.contains(".catch(") {
        sink.emit("error_handling", ".catch()", i);
    }
    if let Some(rest) = t.strip_prefix('@') {
        let name = ident_at(rest, 0);
        if !name.is_empty() {
            sink.emit("decorator", name, i);
        }
        for (prefix, method) in NEST_ROUTES {
            if t.starts_with(prefix) {
                let col = m.len() - t.len() + prefix.len();
                let path = ctx.string_at(i, col).unwrap_or("");
                sink.emit("api_route", format!("{method} {path}").trim_end(), i);
            }
        }
    }
    let is_static = has_word(m, "static");
    if is_static && (m.contains("getInstance(") || has_word(m, "instance") || has_word(m, "_instance")) {
        sink.emit("singleton", st.class.as_deref().unwrap_or("getInstance"), i);
    }
    if m.contains("new Mutex(") {
        sink.emit("mutex", "Mutex", i);
    }
    for w in ["new Worker(", "new SharedWorker("] {
        if m.contains(w) {
            sink.emit("spawned_task", w.trim_start_matches("new ").trim_end_matches('('), i);
        }
    }
}

/// `"use client"` / `"use server"` in the directive prologue (the first statements, before
/// any code), plus `"use server"` as the first statement of a function body (inline server
/// actions). These are string literals, so this rule reads the original text on purpose.
fn directives(ctx: &FileCtx, sink: &mut Sink) {
    let m = ctx.masked.as_bytes();
    let mut p = 0;
    loop {
        while p < m.len() && m[p].is_ascii_whitespace() {
            p += 1;
        }
        let Some(&q) = m.get(p) else { break };
        if q != b'"' && q != b'\'' {
            break;
        }
        let Some(close) = m[p + 1..].iter().position(|&c| c == q).map(|c| p + 1 + c) else {
            break;
        };
        let line = ctx.line_of(p);
        match ctx.original.get(p + 1..close) {
            Some("use client") => {
                sink.emit("client_component", &component_name(ctx).unwrap_or("use client".into()), line)
            }
            Some("use server") => file_server_actions(ctx, line, sink),
            _ => {}
        }
        p = close + 1;
        while p < m.len() && (m[p] == b' ' || m[p] == b';') {
            p += 1;
        }
    }
    // Inline: a line that is only the string "use server" right after a line opening a body.
    for (i, t) in ctx.lines().map(|(i, l)| (i, l.trim())) {
        if i == 0
            || !(t.starts_with('"') || t.starts_with('\''))
            || t.trim_end_matches(';').len() != "\"use server\"".len()
        {
            continue;
        }
        if ctx.original_line(i).trim().trim_end_matches(';').trim_matches(['"', '\'']) != "use server" {
            continue;
        }
        let prev = ctx.masked_line(i - 1);
        if prev.trim_end().ends_with('{') {
            let name = prev.find("function").and_then(|p| ident_after(prev, p + 8)).unwrap_or("use server");
            sink.emit("server_action", name, i);
        }
    }
}

/// Every exported async function of a `"use server"` file is a server action.
fn file_server_actions(ctx: &FileCtx, directive_line: usize, sink: &mut Sink) {
    let mut any = false;
    for (i, m) in ctx.lines() {
        let d = strip_modifiers(m, &["export", "default"]);
        if !m.trim_start().starts_with("export") {
            continue;
        }
        let d = strip_modifiers(d, &["async"]);
        if let Some(name) = strip_word(d, "function").and_then(|r| ident_after(r, 0)) {
            sink.emit("server_action", name, i);
            any = true;
        }
    }
    if !any {
        sink.emit("server_action", "use server", directive_line);
    }
}

/// The first capitalised exported function or const of a client component file.
fn component_name(ctx: &FileCtx) -> Option<String> {
    ctx.lines().find_map(|(_, m)| {
        if !m.starts_with("export") {
            return None;
        }
        let d = strip_modifiers(m, &["export", "default", "async"]);
        let rest = strip_word(d, "function").or_else(|| strip_word(d, "const"))?;
        let name = ident_after(rest, 0)?;
        name.as_bytes()[0].is_ascii_uppercase().then(|| name.to_string())
    })
}

#[cfg(test)]
mod tests {
    use super::super::testutil::{check, found};

    #[test]
    fn every_rule_positive_and_negative() {
        let positives: &[(&str, &str, &str)] = &[
            ("export function useUsers() {\n  return [];\n}", "react_hook", "useUsers"),
            ("const useAuth = () => useContext(Ctx);", "react_hook", "useAuth"),
            ("const [n, setN] = useState<number>(0);", "react_hook", "useState"),
            ("useEffect(() => { load(); }, []);", "react_hook", "useEffect"),
            ("app.get('/users', handler);", "api_route", "GET /users"),
            ("router.post(\"/users/:id\", async (req, res) => {});", "api_route", "POST /users/:id"),
            ("@Get(':id')\nfindOne() {}", "api_route", "GET :id"),
            ("export interface User {\n  id: string;\n}", "interface", "User"),
            ("export type Id = string | number;", "type_alias", "Id"),
            ("export enum Role { Admin, User }", "enum", "Role"),
            ("export class UserService {}", "class", "UserService"),
            ("export class UserService {}", "layered_class", "UserService"),
            ("class Db {\n  private static instance: Db;\n}", "singleton", "Db"),
            ("export async function loadUsers() {}", "async_function", "loadUsers"),
            ("const save = async (u) => { };", "async_function", "save"),
            ("const u = await prisma.user.findMany();", "await", "prisma.user.findMany"),
            ("await Promise.all([a(), b()]);", "promise_combinator", "Promise.all"),
            ("try {\n  x();\n} catch (e) {}", "error_handling", "try/catch"),
            ("fetch(u).then(r => r.json()).catch(console.error);", "error_handling", ".catch()"),
            ("const users = prisma.user.findMany({ where: {} });", "db_query", "prisma.user.findMany"),
            ("const r = await pool.query('SELECT 1');", "db_query", "pool.query"),
            ("const u = await User.findOne({ email });", "db_query", "User.findOne"),
            ("ids.forEach((id) => remove(id));", "closure", "forEach"),
            ("const names = users.map(u => u.name);", "higher_order_function", "map"),
            ("@Injectable()\nexport class A {}", "decorator", "Injectable"),
            ("function* ids() { yield 1; }", "generator", "ids"),
            ("describe('users', () => {\n  it('lists them', () => {});\n});", "test", "users"),
            ("it('lists them', () => {});", "test", "lists them"),
            ("test.each([1])('works %i', (n) => {});", "test", "works %i"),
            ("const lock = new Mutex();", "mutex", "Mutex"),
            ("const w = new Worker('./w.js');", "spawned_task", "Worker"),
        ];
        let negatives: &[(&str, &str)] = &[
            ("function user() {}\nconst used = 1; reuseState(1);", "react_hook"),
            ("map.get('key'); cache.post(x);", "api_route"),
            ("const interfaceName = 1;", "interface"),
            ("const type = 'a';", "type_alias"),
            ("const enumerate = 1;", "enum"),
            ("const klass = classNames('a');", "class"),
            ("export class User {}", "layered_class"),
            ("class A { static create() {} }", "singleton"),
            ("function load() {}", "async_function"),
            ("const awaited = 1;", "await"),
            ("Promise.resolve(1); promises.all(x);", "promise_combinator"),
            ("const retry = 1; // try { }", "error_handling"),
            ("list.find(x); user.create();", "db_query"),
            ("const f = (x) => x;", "closure"),
            ("const m = new Map(); xs.map;", "higher_order_function"),
            ("const email = 'a@b.c';", "decorator"),
            ("function ids() { return 1 * 2; }", "generator"),
            ("const it = iter(); describe;", "test"),
            ("const m = new Map();", "mutex"),
            ("const w = new Work();", "spawned_task"),
            ("const s = \"use server\";", "server_action"),
            ("import x from 'y';\n'use client';", "client_component"),
        ];
        check("src/a.ts", "//", positives, negatives);
    }

    #[test]
    fn inside_strings_is_not_reported() {
        let src = "const s = \"useEffect(() => {}) try { await x }\";\nconst t = `app.get('/x', h)`;\n";
        let f = found("a.ts", src);
        assert!(f.is_empty(), "{f:?}");
    }

    #[test]
    fn next_js_route_exports_and_directives() {
        let src = "// route\nexport async function GET(req: Request) {}\nexport const POST = async () => {};\n";
        let f = found("src/app/(admin)/api/users/route.ts", src);
        assert!(f.contains(&("api_route".into(), "GET /api/users".into())), "{f:?}");
        assert!(f.contains(&("api_route".into(), "POST /api/users".into())), "{f:?}");

        let f = found("app/page.tsx", "/* hi */\n'use client';\nexport default function Page() {}\n");
        assert!(f.contains(&("client_component".into(), "Page".into())), "{f:?}");

        let f = found("app/actions.ts", "\"use server\"\nexport async function createUser(d: FormData) {}\n");
        assert!(f.contains(&("server_action".into(), "createUser".into())), "{f:?}");

        let f = found(
            "app/p.tsx",
            "export default function P() {\n  async function save() {\n    \"use server\";\n  }\n}\n",
        );
        assert!(f.contains(&("server_action".into(), "save".into())), "{f:?}");

        let f = found("pages/api/users/index.ts", "export default function handler(req, res) {}\n");
        assert!(f.contains(&("api_route".into(), "ANY /api/users".into())), "{f:?}");
    }

    #[test]
    fn javascript_files_report_javascript() {
        let p = super::super::analyze_file(&crate::analysis::model::SourceFile::new("x.mjs", "async function a() {}"));
        assert_eq!(p[0].language, "javascript");
    }
}
