//! TypeScript, TSX and JavaScript: the old rules' table (ported), plus generics with and
//! without a constraint, conditional types with `infer`, mapped types, table tests with a table.

use super::{check, found};

#[test]
fn every_pattern_positive_and_negative() {
    let positives: &[(&str, &str, &str)] = &[
        ("export function useUsers() {\n  return [];\n}", "react_hook", "useUsers"),
        ("const useAuth = () => useContext(Ctx);", "react_hook", "useAuth"),
        ("const [n, setN] = useState<number>(0);", "react_hook", "useState"),
        ("useEffect(() => { load(); }, []);", "react_hook", "useEffect"),
        ("app.get('/users', handler);", "api_route", "GET /users"),
        ("router.post(\"/users/:id\", async (req, res) => {});", "api_route", "POST /users/:id"),
        ("class A {\n  @Get(':id')\n  findOne() {}\n}", "api_route", "GET :id"),
        ("export interface User {\n  id: string;\n}", "interface", "User"),
        ("export type Id = string | number;", "type_alias", "Id"),
        ("export enum Role { Admin, User }", "enum", "Role"),
        ("export class UserService {}", "class", "UserService"),
        ("export class UserService {}", "layered_class", "UserService"),
        ("class Db {\n  private static instance: Db;\n}", "singleton", "Db"),
        ("export async function loadUsers() {}", "async_function", "loadUsers"),
        ("const save = async (u) => { };", "async_function", "save"),
        ("async function f() { const u = await prisma.user.findMany(); }", "await", "prisma.user.findMany"),
        ("async function f() { await Promise.all([a(), b()]); }", "promise_combinator", "Promise.all"),
        ("try {\n  x();\n} catch (e) {}", "error_handling", "try/catch"),
        ("fetch(u).then(r => r.json()).catch(console.error);", "error_handling", ".catch()"),
        ("const users = prisma.user.findMany({ where: {} });", "db_query", "prisma.user.findMany"),
        ("async function f() { const r = await pool.query('SELECT 1'); }", "db_query", "pool.query"),
        ("async function f() { const u = await User.findOne({ email }); }", "db_query", "User.findOne"),
        ("const q = `SELECT * FROM orders WHERE id = ${id}`;", "db_query", "SELECT orders"),
        ("ids.forEach((id) => remove(id));", "closure", "forEach"),
        ("const names = users.map(u => u.name);", "higher_order_function", "map"),
        ("@Injectable()\nexport class A {}", "decorator", "Injectable"),
        ("function* ids() { yield 1; }", "generator", "ids"),
        ("describe('users', () => {\n  it('lists them', () => {});\n});", "test", "users"),
        ("it('lists them', () => {});", "test", "lists them"),
        ("test.each([[1, 2]])('works %i', (a, b) => {});", "test", "works %i"),
        ("test.each([[1, 2]])('works %i', (a, b) => {});", "table_test", "test.each"),
        ("it.each`\n  a | b\n  ${1} | ${2}\n`('adds $a', ({ a, b }) => {});", "table_test", "it.each"),
        ("const lock = new Mutex();", "mutex", "Mutex"),
        ("const w = new Worker('./w.js');", "spawned_task", "Worker"),
        ("function first<T extends object>(xs: T[]): T { return xs[0]; }", "generic", "bounded T extends object"),
        ("function id<T>(x: T): T { return x; }", "generic", "unbounded T"),
        ("type Unwrap<T> = T extends Promise<infer U> ? U : T;", "type_level", "conditional type with infer"),
        ("type IsStr<T> = T extends string ? true : false;", "type_level", "conditional type"),
        ("type RO<T> = { readonly [K in keyof T]: T[K] };", "type_level", "mapped type"),
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
        // Issue 40: a list of expect() calls is no table test.
        ("it('adds', () => {\n  expect(add(1, 2)).toBe(3);\n  expect(add(2, 2)).toBe(4);\n});", "table_test"),
        ("function f(x: number) { return x; }", "generic"),
        ("type A = string | number;", "type_level"),
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

    let f =
        found("app/p.tsx", "export default function P() {\n  async function save() {\n    \"use server\";\n  }\n}\n");
    assert!(f.contains(&("server_action".into(), "save".into())), "{f:?}");

    let f = found("pages/api/users/index.ts", "export default function handler(req, res) {}\n");
    assert!(f.contains(&("api_route".into(), "ANY /api/users".into())), "{f:?}");
}

#[test]
fn javascript_and_tsx_files_use_their_grammars() {
    let p = super::super::analyze_file(&crate::analysis::model::SourceFile::new("x.mjs", "async function a() {}"));
    assert_eq!(p[0].language, "javascript");
    let f = found("a.jsx", "class Cache {\n  static instance = null;\n}\nconst A = () => <div>{useTheme()}</div>;\n");
    assert!(f.contains(&("singleton".into(), "Cache".into())), "{f:?}");
    assert!(f.contains(&("react_hook".into(), "useTheme".into())), "{f:?}");
    let f = found("a.tsx", "const A = <T,>(p: { x: T }) => <div>{useTheme()}</div>;\n");
    assert!(f.contains(&("react_hook".into(), "useTheme".into())), "{f:?}");
}
