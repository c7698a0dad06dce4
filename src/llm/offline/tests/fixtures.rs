//! Small sessions in five stacks (Next.js, FastAPI, Go, Rust, Rails): captured files and the
//! patterns the static analyser would report for them.

use crate::analysis::concepts::path_matches;
use crate::analysis::model::{Pattern, SourceFile, StackProfile};

const NEXT_PAGE: &str = r#""use client";

import { useEffect, useState } from "react";

export default function UsersPage() {
  const [users, setUsers] = useState<User[]>([]);
  useEffect(() => {
    fetch("/api/users").then((r) => r.json()).then(setUsers);
  }, []);
  return <ul>{users.map((u) => <li key={u.id}>{u.name}</li>)}</ul>;
}
"#;

const NEXT_ROUTE: &str = r#"import { prisma } from "@/lib/db";

export async function GET() {
  try {
    const users = await prisma.user.findMany({ take: 50 });
    return Response.json(users);
  } catch (err) {
    return Response.json({ error: "failed" }, { status: 500 });
  }
}
"#;

const FASTAPI_MAIN: &str = r#"from fastapi import FastAPI, HTTPException
from pydantic import BaseModel

app = FastAPI()

class Item(BaseModel):
    name: str
    price: float

@app.post("/items")
async def create_item(item: Item):
    try:
        saved = await repo.save(item)
    except ValueError as exc:
        raise HTTPException(status_code=400, detail=str(exc))
    return saved
"#;

const FASTAPI_TEST: &str = "def test_create_item(client):\n    res = client.post(\"/items\", json={\"name\": \"a\", \"price\": 1})\n    assert res.status_code == 200\n";

const GO_MAIN: &str = "package main\n\nfunc fetchAll(urls []string) error {\n\tvar wg sync.WaitGroup\n\tresults := make(chan string, len(urls))\n\tfor _, u := range urls {\n\t\twg.Add(1)\n\t\tgo func(u string) {\n\t\t\tdefer wg.Done()\n\t\t\tresults <- u\n\t\t}(u)\n\t}\n\twg.Wait()\n\tclose(results)\n\tdata, err := os.ReadFile(\"config.json\")\n\tif err != nil {\n\t\treturn fmt.Errorf(\"read config: %w\", err)\n\t}\n\t_ = data\n\treturn nil\n}\n";

const RUST_LIB: &str = r#"#[derive(Debug, Clone, Serialize)]
pub struct Config {
    pub name: String,
}

pub fn load(path: &Path) -> Result<Config, Error> {
    let text = fs::read_to_string(path)?;
    let config: Config = toml::from_str(&text)?;
    Ok(config)
}

pub fn first_word<'a>(s: &'a str) -> &'a str {
    s.split(' ').next().unwrap_or(s)
}

#[test]
fn loads() {
    assert!(load(Path::new("x")).is_err());
}
"#;

const RUBY_SERVICE: &str = "class UserService\n  def initialize(repo)\n    @repo = repo\n  end\n\n  def activate(id)\n    user = User.find(id)\n    user.update!(active: true)\n  rescue ActiveRecord::RecordNotFound => e\n    Rails.logger.warn(e.message)\n    nil\n  end\nend\n";

const RUBY_SPEC: &str = "RSpec.describe UserService do\n  it \"activates a user\" do\n    expect(service.activate(user.id)).to be_truthy\n  end\nend\n";

/// A pattern the way the static analyser reports one: the line of `needle` with one line of
/// context either side. `file` is given relative, as the analyser may; files are absolute.
pub(super) fn pat(
    files: &[SourceFile],
    file: &str,
    pattern_type: &str,
    name: &str,
    needle: &str,
    language: &str,
) -> Pattern {
    let content = &files.iter().find(|f| path_matches(&f.path, file)).expect("fixture file").content;
    let lines: Vec<&str> = content.lines().collect();
    let at = lines.iter().position(|l| l.contains(needle)).expect("needle in fixture");
    let snippet = lines[at.saturating_sub(1)..(at + 2).min(lines.len())].join("\n");
    Pattern {
        pattern_type: pattern_type.into(),
        name: name.into(),
        file: file.into(),
        line: u32::try_from(at + 1).expect("small fixture"),
        snippet,
        language: language.into(),
    }
}

pub(super) fn file(path: &str, content: &str) -> SourceFile {
    SourceFile::new(format!("/home/dev/proj/{path}"), content)
}

pub(super) struct Session {
    pub(super) stack: StackProfile,
    pub(super) files: Vec<SourceFile>,
    pub(super) patterns: Vec<Pattern>,
}

pub(super) fn stack(languages: &[&str], framework: Option<&str>) -> StackProfile {
    StackProfile {
        languages: languages.iter().map(|s| s.to_string()).collect(),
        framework: framework.map(str::to_string),
        frameworks: framework.iter().map(|s| s.to_string()).collect(),
        ..StackProfile::default()
    }
}

pub(super) fn nextjs() -> Session {
    let files = vec![file("app/users/page.tsx", NEXT_PAGE), file("app/api/users/route.ts", NEXT_ROUTE)];
    let (page, route) = ("app/users/page.tsx", "app/api/users/route.ts");
    let patterns = vec![
        pat(&files, page, "client_component", "UsersPage", "use client", "typescript"),
        pat(&files, page, "react_hook", "useState", "useState<", "typescript"),
        pat(&files, page, "react_hook", "useEffect", "useEffect(", "typescript"),
        pat(&files, page, "higher_order_function", "map", "users.map", "typescript"),
        pat(&files, route, "api_route", "GET", "export async function GET", "typescript"),
        pat(&files, route, "async_function", "GET", "export async function GET", "typescript"),
        pat(&files, route, "await", "prisma.user.findMany", "await prisma", "typescript"),
        pat(&files, route, "db_query", "prisma.user.findMany", "findMany", "typescript"),
        pat(&files, route, "error_handling", "try", "try {", "typescript"),
    ];
    let mut stack = stack(&["typescript"], Some("Next.js"));
    stack.orm = Some("Prisma".into());
    Session { stack, files, patterns }
}

pub(super) fn fastapi() -> Session {
    let files = vec![file("app/main.py", FASTAPI_MAIN), file("tests/test_items.py", FASTAPI_TEST)];
    let main = "app/main.py";
    let patterns = vec![
        pat(&files, main, "dataclass", "Item", "class Item(BaseModel)", "python"),
        pat(&files, main, "decorator", "app.post", "@app.post", "python"),
        pat(&files, main, "api_route", "create_item", "@app.post", "python"),
        pat(&files, main, "async_function", "create_item", "async def", "python"),
        pat(&files, main, "await", "repo.save", "await repo.save", "python"),
        pat(&files, main, "error_handling", "try", "except ValueError", "python"),
        pat(&files, "tests/test_items.py", "test", "test_create_item", "def test_", "python"),
    ];
    let mut stack = stack(&["python"], Some("FastAPI"));
    stack.testing = vec!["pytest".into()];
    Session { stack, files, patterns }
}

pub(super) fn go() -> Session {
    let files = vec![file("main.go", GO_MAIN)];
    let patterns = vec![
        pat(&files, "main.go", "goroutine", "func", "go func", "go"),
        pat(&files, "main.go", "channel", "results", "make(chan", "go"),
        pat(&files, "main.go", "error_handling", "err", "err != nil", "go"),
    ];
    Session { stack: stack(&["go"], None), files, patterns }
}

pub(super) fn rust() -> Session {
    let files = vec![file("src/lib.rs", RUST_LIB)];
    let f = "src/lib.rs";
    let patterns = vec![
        pat(&files, f, "derive_macro", "Debug, Clone, Serialize", "#[derive", "rust"),
        pat(&files, f, "struct", "Config", "pub struct Config", "rust"),
        pat(&files, f, "error_handling", "?", "read_to_string(path)?", "rust"),
        pat(&files, f, "lifetime", "'a", "first_word<'a>", "rust"),
        pat(&files, f, "test", "loads", "#[test]", "rust"),
    ];
    Session { stack: stack(&["rust"], None), files, patterns }
}

pub(super) fn ruby() -> Session {
    let files = vec![file("app/services/user_service.rb", RUBY_SERVICE), file("spec/user_service_spec.rb", RUBY_SPEC)];
    let f = "app/services/user_service.rb";
    let patterns = vec![
        pat(&files, f, "class", "UserService", "class UserService", "ruby"),
        pat(&files, f, "layered_class", "UserService", "class UserService", "ruby"),
        pat(&files, f, "db_query", "User.find", "User.find", "ruby"),
        pat(&files, f, "error_handling", "rescue", "rescue", "ruby"),
        pat(&files, "spec/user_service_spec.rb", "test", "activates a user", "it \"", "ruby"),
    ];
    let mut stack = stack(&["ruby"], Some("Rails"));
    stack.orm = Some("ActiveRecord".into());
    Session { stack, files, patterns }
}

pub(super) fn prompts() -> Vec<String> {
    vec!["  Add a users page\nthat lists everyone  ".to_string()]
}
