//! Unit tests of the grounded builders over small files: where functions start and end, which
//! lines count as statements, and that each builder's question validates and cites real lines.

use super::flow::{enclosing_function, function_name, statements};
use super::*;
use crate::analysis::catalogue::{self, Entry};
use crate::analysis::questions::validate_question;

const ROUTE: &str = r#"import { prisma } from "@/lib/db";

export async function POST(request: Request) {
  const body = await request.json();
  if (!body.userId) {
    return Response.json({ error: "userId missing" }, { status: 400 });
  }
  try {
    const user = await prisma.user.findUnique({
      where: { id: body.userId },
    });
    return Response.json(user);
  } catch (err) {
    // await in a comment is not code
    return Response.json({ error: String(err) }, { status: 500 });
  }
}
"#;

const SERVICE: &str = "def load(repo, ids, tags=None):\n    if tags is None:\n        tags = []\n    rows = repo.fetch(ids)\n    for row in rows:\n        tags.append(row.tag)\n    total = len(rows)\n    print(total)\n    return rows\n\n\ndef other():\n    pass\n";

/// A question request about `entry` under its own name, for code it was seen in.
fn ask(entry: &'static Entry, qtype: QuestionType, level: Level) -> Ask<'static> {
    Ask { entry, concept: entry.name, qtype, level, about_error: false, used_bugs: &[], narrow: false }
}

fn files() -> Vec<SourceFile> {
    vec![SourceFile::new("app/api/users/route.ts", ROUTE), SourceFile::new("app/service.py", SERVICE)]
}

#[test]
fn functions_end_where_their_braces_or_indentation_do() {
    let files = files();
    let code = SessionCode::new(&files);
    let ts = &code.files[0];
    assert_eq!(enclosing_function(ts, 8), Some((2, 16)));
    assert_eq!(function_name(ts, 2).as_deref(), Some("POST"));
    assert_eq!(enclosing_function(ts, 0), None);
    let py = &code.files[1];
    assert_eq!(enclosing_function(py, 4), Some((0, 8)));
    assert_eq!(function_name(py, 0).as_deref(), Some("load"));
}

#[test]
fn statements_skip_branches_literals_and_error_paths() {
    let files = files();
    let code = SessionCode::new(&files);
    // 0-based: body, if header, try body (findUnique, return); not the `where` literal, the
    // if body or the catch branch.
    assert_eq!(statements(&code.files[0], 2, 16), vec![3, 4, 8, 11]);
    // The for loop's body runs many times: its header stays, its body goes.
    assert_eq!(statements(&code.files[1], 0, 8), vec![1, 3, 4, 6, 7, 8]);
}

/// Java and C# methods (C#'s brace on its own line included) and Ruby's `def … end` are
/// functions too, so ordering questions reach those languages (issue 25's sessions in every
/// supported language); an interface method without a body is not one.
#[test]
fn java_csharp_and_ruby_functions_have_statements() {
    let cs = "class S\n{\n    public async Task<int> CloseAsync(int id)\n    {\n        try\n        {\n            var o = await Get(id);\n            o.Closed = true;\n            await Save();\n            return o.Id;\n        }\n        catch (Exception)\n        {\n            throw;\n        }\n    }\n}\n";
    let java = "interface R {\n    Order findById(long id);\n}\nclass S {\n    public Order close(long id) {\n        lock.lock();\n        Order o = get(id);\n        return o;\n    }\n}\n";
    let rb = "class C\n  def show\n    order = find\n    total = order.total\n    render json: total\n  rescue NotFound => e\n    render status: 404\n  end\nend\n";
    let files = vec![SourceFile::new("S.cs", cs), SourceFile::new("S.java", java), SourceFile::new("c.rb", rb)];
    let code = SessionCode::new(&files);
    let cs_fn = enclosing_function(&code.files[0], 7).expect("the C# method");
    assert_eq!(cs_fn, (2, 15));
    assert_eq!(function_name(&code.files[0], 2).as_deref(), Some("CloseAsync"));
    assert_eq!(statements(&code.files[0], cs_fn.0, cs_fn.1), vec![6, 7, 8, 9]);
    assert_eq!(enclosing_function(&code.files[1], 1), None, "an interface method has no body");
    let java_fn = enclosing_function(&code.files[1], 6).expect("the Java method");
    assert_eq!((java_fn, function_name(&code.files[1], 4).as_deref()), ((4, 8), Some("close")));
    assert_eq!(statements(&code.files[1], java_fn.0, java_fn.1), vec![5, 6, 7]);
    let rb_fn = enclosing_function(&code.files[2], 3).expect("the Ruby method");
    assert_eq!(rb_fn, (1, 7));
    assert_eq!(statements(&code.files[2], rb_fn.0, rb_fn.1), vec![2, 3, 4], "not the rescue branch");
}

#[test]
fn every_builder_cites_real_lines_and_validates() {
    let files = files();
    let code = SessionCode::new(&files);
    let entry = catalogue::find("Async/await").expect("catalogue entry");
    let sites = [Site { file: 0, line: 3 }];
    let names = vec![entry.name.to_string()];
    for qtype in QuestionType::ALL {
        let q = question(&code, &sites, 0, &ask(entry, qtype, Level::Senior))
            .unwrap_or_else(|| panic!("no {qtype:?} question"));
        assert_eq!(validate_question(&q, &names), Ok(()), "{q:#?}");
        let g = q.grounding.as_ref().expect("grounded");
        assert_eq!(g.file, "app/api/users/route.ts");
        assert!(g.line_start >= 1 && g.line_end <= 17 && g.line_start <= g.line_end, "{g:?}");
    }
    let bug = question(&code, &sites, 0, &ask(entry, QuestionType::SpotTheBug, Level::Mid)).expect("a bug");
    let edit = bug.grounding.and_then(|g| g.mutation).expect("an edit");
    assert_eq!(edit.original.trim(), "const body = await request.json();");
    assert_eq!(edit.mutated.trim(), "const body = request.json();");
}

/// A bug is filed under a concept only where it tests it (round 6 of the hand grading): a
/// mutable default is no bug of higher-order functions, a status code none of try/catch (on a
/// line that holds no `catch`), but the status code is one of the route handler's own bugs.
#[test]
fn a_bug_is_filed_under_a_concept_only_where_it_tests_it() {
    let files = files();
    let code = SessionCode::new(&files);
    let bug_of = |concept: &str, site: Site| {
        let entry = catalogue::find(concept).expect("catalogue entry");
        question(&code, &[site], 0, &ask(entry, QuestionType::SpotTheBug, Level::Mid))
            .and_then(|q| q.grounding)
            .and_then(|g| g.mutation)
    };
    assert_eq!(bug_of("Higher-order functions", Site { file: 1, line: 3 }), None);
    assert_eq!(bug_of("Exception handling with try/catch", Site { file: 0, line: 11 }), None);
    let edit = bug_of("HTTP route handlers", Site { file: 0, line: 5 }).expect("the route's status bug");
    assert!(edit.mutated.contains("status: 200"), "{edit:?}");
}

#[test]
fn sites_prefer_matching_patterns_and_fall_back_to_the_cited_snippet() {
    let files = files();
    let code = SessionCode::new(&files);
    let entry = catalogue::find("Async/await");
    let concept = Concept {
        name: "Async/await".into(),
        category: "async_pattern".into(),
        difficulty: "junior".into(),
        source_file: "app/api/users/route.ts".into(),
        snippet: "const user = await prisma.user.findUnique({".into(),
        why_it_matters: String::new(),
        confidence: 0.9,
    };
    assert_eq!(sites(&code, entry, &concept, &[]), vec![Site { file: 0, line: 8 }]);
    let patterns = crate::analysis::analyze_files(&files);
    let found = sites(&code, entry, &concept, &patterns);
    assert!(found.len() > 1 && found.iter().all(|s| s.file == 0), "{found:?}");
    let elsewhere = Concept { source_file: "missing.ts".into(), ..concept };
    assert!(sites(&code, None, &elsewhere, &[]).is_empty());
}

#[test]
fn a_cited_snippet_is_located_modulo_indentation() {
    let files = files();
    let code = SessionCode::new(&files);
    let g = locate_snippet(&code, "route.ts", "try {\nconst user = await prisma.user.findUnique({").expect("found");
    assert_eq!((g.line_start, g.line_end, g.kind), (8, 9, GroundingKind::Quote));
    assert!(locate_snippet(&code, "route.ts", "not in the file").is_none());
}

/// Every entry, type and level at every line of odd files (CRLF line ends, multi-byte text in
/// strings and comments, an unterminated string, a one-line file) yields either no question or
/// a valid one whose grounding stays inside the file.
#[test]
fn odd_files_never_panic_and_stay_inside_the_file() {
    let odd = [
        SourceFile::new(
            "a.ts",
            "const é = \"ünïcödé await\"; // ✓ await\r\nexport async function f() {\r\n  const x = await g(\"…\");\r\n  if (x !== 1) { throw new Error(\"×\"); }\r\n  return x;\r\n}\r\n",
        ),
        SourceFile::new(
            "b.py",
            "def f(x=None):\n    s = 'unterminated\n    for i in range(len(x)):\n        raise ValueError('é')\n",
        ),
        SourceFile::new("c.go", "func main() { defer f() }"),
        SourceFile::new("d.rs", "fn f() -> Result<(), E> {\n    let v = g()?; // ü\n    Ok(v)\n}"),
    ];
    let code = SessionCode::new(&odd);
    for entry in catalogue::all() {
        let names = vec![entry.name.to_string()];
        for (f, file) in code.files.iter().enumerate() {
            for line in 0..file.lines.len() {
                for qtype in QuestionType::ALL {
                    let Some(q) = question(&code, &[Site { file: f, line }], 0, &ask(entry, qtype, Level::Senior))
                    else {
                        continue;
                    };
                    assert_eq!(validate_question(&q, &names), Ok(()), "{}: {q:#?}", file.path);
                    let g = q.grounding.expect("grounded");
                    assert!(g.line_start >= 1 && g.line_end as usize <= file.lines.len(), "{g:?}");
                }
            }
        }
    }
}

#[test]
fn errors_point_at_lines_of_captured_files() {
    let files = files();
    let code = SessionCode::new(&files);
    let concept = |snippet: &str| Concept {
        name: "Reading compiler type errors".into(),
        category: "type_system".into(),
        difficulty: "junior".into(),
        source_file: "failed Bash: npx tsc".into(),
        snippet: snippet.into(),
        why_it_matters: String::new(),
        confidence: 0.8,
    };
    let at = |snippet: &str| sites(&code, None, &concept(snippet), &[]);
    assert_eq!(at("app/api/users/route.ts(4,9): error TS2322"), vec![Site { file: 0, line: 3 }]);
    assert_eq!(at(" --> app/service.py:7:1"), vec![Site { file: 1, line: 6 }]);
    assert_eq!(at("  File \"app/service.py\", line 2, in load"), vec![Site { file: 1, line: 1 }]);
    assert!(at("app/service.py(999,1): past the end").is_empty());
    assert!(at("error TS2322 somewhere else").is_empty());
    // A concept seen in code (not an error) is not read for line numbers.
    let seen = Concept { source_file: "app/api/users/route.ts".into(), ..concept("route.ts(4,9)") };
    assert!(error_sites(&code, &seen).is_empty());
}

/// Issue 31, rule 2: the unit quoted around a line, in each language, holds the whole
/// definition with every decorator, annotation or attribute above it (multi-line ones too).
#[test]
fn units_hold_the_whole_definition_with_its_decorators_in_every_language() {
    use super::units::{check_whole, unit_within};
    let cases: [(&str, &str, &str, &str); 8] = [
        (
            "store.py",
            "import contextlib\n\n\n@contextlib.contextmanager\ndef atomic_csv(path):\n    tmp = path + \".tmp\"\n    with open(tmp, \"w\") as fh:\n        yield fh\n    os.replace(tmp, path)\n",
            "os.replace(tmp, path)",
            "@contextlib.contextmanager",
        ),
        (
            "test_money.py",
            "import pytest\n\n\n@pytest.mark.parametrize(\n    \"raw, cents\",\n    [\n        (\"1.50\", 150),\n        (\"2\", 200),\n    ],\n)\ndef test_parse(raw, cents):\n    assert parse(raw) == cents\n",
            "assert parse(raw) == cents",
            "@pytest.mark.parametrize(",
        ),
        (
            "src/lib.rs",
            "#[cfg(test)]\nmod tests {\n    #[test]\n    #[should_panic(\n        expected = \"empty\"\n    )]\n    fn rejects_empty() {\n        parse(\"\");\n    }\n}\n",
            "parse(\"\");",
            "#[test]",
        ),
        (
            "src/OrderTest.java",
            "class OrderTest {\n    @ParameterizedTest\n    @CsvSource({\n        \"1, 2\",\n    })\n    void adds(int a, int b) {\n        assertEquals(3, a + b);\n    }\n}\n",
            "assertEquals(3, a + b);",
            "@ParameterizedTest",
        ),
        (
            "Tests/OrderTests.cs",
            "public class OrderTests\n{\n    [Theory]\n    [InlineData(1, 2)]\n    public void Adds(int a, int b)\n    {\n        Assert.Equal(3, a + b);\n    }\n}\n",
            "Assert.Equal(3, a + b);",
            "[Theory]",
        ),
        (
            "src/app.controller.ts",
            "@Controller({\n  path: \"orders\",\n})\nexport class OrdersController {\n  @Get(\":id\")\n  find(id: string) {\n    return this.orders.find(id);\n  }\n}\n",
            "return this.orders.find(id);",
            "@Get(\":id\")",
        ),
        (
            "store_test.go",
            "package store\n\nfunc TestGet(t *testing.T) {\n\tcases := []struct{ sku string }{\n\t\t{\"a\"},\n\t}\n\tfor _, c := range cases {\n\t\tif _, err := s.Get(c.sku); err != nil {\n\t\t\tt.Fatal(err)\n\t\t}\n\t}\n}\n",
            "t.Fatal(err)",
            "func TestGet(t *testing.T) {",
        ),
        (
            "spec/order_spec.rb",
            "RSpec.describe Order do\n  it \"sums\" do\n    order = Order.new\n    expect(order.total).to eq(0)\n  end\nend\n",
            "expect(order.total).to eq(0)",
            "it \"sums\" do",
        ),
    ];
    for (path, text, site, first) in cases {
        let files = vec![SourceFile::new(path, text)];
        let code = SessionCode::new(&files);
        let file = &code.files[0];
        let line = file.lines.iter().position(|l| l.trim() == site).expect("site line");
        let (start, end) = unit_within(file, line, 18);
        assert_eq!(
            file.lines[start].trim(),
            first,
            "{path}: starts at its first decorator:\n{}",
            file.text(start, end)
        );
        assert_eq!(check_whole(file, start, end), Ok(()), "{path}");
        // Cut off the decorator, or cut through a statement: refused.
        if start + 1 < line {
            assert!(check_whole(file, start + 1, end).is_err(), "{path}: a cut from line {}", start + 2);
        }
        assert!(check_whole(file, start, end - 1).is_err(), "{path}: a cut before the last line");
    }
}

#[test]
fn a_long_function_is_quoted_by_whole_statements_never_a_cut_one() {
    use super::units::check_whole;
    let mut body = String::from("def long(rows):\n    \"\"\"Adds up.\"\"\"\n");
    for k in 0..20 {
        body.push_str(&format!("    total_{k} = sum(\n        r.x for r in rows\n    )\n"));
    }
    body.push_str("    return total_0\n");
    let files = vec![SourceFile::new("long.py", body.as_str())];
    let code = SessionCode::new(&files);
    let file = &code.files[0];
    let entry = catalogue::find("Generators and lazy iteration").expect("an entry");
    for line in [10, 11, 12, 30, 60] {
        let mut a = ask(entry, QuestionType::CodeReading, Level::Mid);
        a.narrow = false;
        let q = builders::quoted(&a, file, line).expect("a code_reading question");
        let g = q.grounding.expect("grounded");
        let (start, end) = (g.line_start as usize - 1, g.line_end as usize - 1);
        assert!(start <= line && line <= end, "holds the site");
        assert_eq!(check_whole(file, start, end), Ok(()), "lines {}-{}", start + 1, end + 1);
    }
}

/// Issue 31, rule 3: a docstring (or any bare string) is not a step; the body of a `with`
/// runs on the normal path, in order.
#[test]
fn docstrings_are_no_ordering_steps() {
    let text = "def write_rows(path, rows):\n    \"\"\"Write rows atomically.\n\n    The file is replaced in one step.\n    \"\"\"\n    tmp = path + \".tmp\"\n    with open(tmp, \"w\") as fh:\n        fh.write(rows)\n    'a bare string'\n    os.replace(tmp, path)\n    return path\n";
    let files = vec![SourceFile::new("store.py", text)];
    let code = SessionCode::new(&files);
    let file = &code.files[0];
    let steps: Vec<&str> = statements(file, 0, 10).iter().map(|&i| file.lines[i].trim()).collect();
    assert_eq!(
        steps,
        [
            "tmp = path + \".tmp\"",
            "with open(tmp, \"w\") as fh:",
            "fh.write(rows)",
            "os.replace(tmp, path)",
            "return path"
        ]
    );
}

#[test]
fn a_junior_follow_up_asks_about_code_the_question_shows() {
    let chain =
        "export function totals(orders) {\n  const amounts = orders.map((o) => o.amount);\n  return amounts;\n}\n";
    let both = "export function total(orders) {\n  return orders.map((o) => o.amount).reduce((s, a) => s + a, 0);\n}\n";
    let entry = catalogue::find("Higher-order functions").expect("catalogue entry");
    assert!(entry.follow_up.contains("reduce"), "the entry's own follow-up is about reduce: {}", entry.follow_up);
    let follow_up = |source: &str| {
        let files = [SourceFile::new("src/orders.js", source)];
        let code = SessionCode::new(&files);
        let q =
            question(&code, &[Site { file: 0, line: 1 }], 0, &ask(entry, QuestionType::MultipleChoice, Level::Junior))
                .expect("a question");
        assert_eq!(validate_question(&q, &[entry.name.to_string()]), Ok(()), "{q:#?}");
        assert!(crate::analysis::precision::precision_problems(&q, &files).is_empty(), "{q:#?}");
        q.follow_up.expect("a junior question has a follow-up")
    };
    // Only `.map` shown: a follow-up about `map`, not about the `reduce` the learner cannot see.
    assert_eq!(follow_up(chain), "Why does this code use `map` here, and what would change without it?");
    // `reduce` shown: the entry's own.
    assert_eq!(follow_up(both), entry.follow_up);
}

/// A Go struct whose only blankable tokens of a keyword-only entry are keywords.
const GO_STORE: &str = "package store\n\ntype Store struct {\n\tmu    sync.Mutex\n\titems map[string]int\n}\n";

#[test]
fn no_blank_is_a_declaration_keyword_or_a_lone_sigil() {
    let files = vec![SourceFile::new("store.go", GO_STORE)];
    let code = SessionCode::new(&files);
    let site = [Site { file: 0, line: 2 }];
    let base = catalogue::find("Mutexes and shared state").expect("in the catalogue");
    // Only keywords and sigils to blank: no question rather than `___ Store struct`.
    let keywords = Entry { tokens: &["type", "struct", "*", "&"], ..*base };
    let q = question(&code, &site, 0, &ask_owned(&keywords, QuestionType::FillInBlank));
    assert!(q.is_none(), "{q:#?}");
    // With a real token on the lines, that token is the answer.
    let mutex = Entry { tokens: &["struct", "Mutex"], ..*base };
    let q = question(&code, &site, 0, &ask_owned(&mutex, QuestionType::FillInBlank)).expect("a blank on Mutex");
    assert_eq!(q.correct.as_deref(), Some("Mutex"));
}

#[test]
fn a_snippet_longer_than_a_screen_is_not_asked() {
    // A struct of 60 fields: its header is the site, and the struct is its smallest unit.
    let fields: String = (0..60).map(|i| format!("\tf{i} int\n")).collect();
    let long = format!("package big\n\ntype Big struct {{\n\tmu sync.Mutex\n{fields}}}\n");
    let files = vec![SourceFile::new("big.go", long.as_str())];
    let code = SessionCode::new(&files);
    let entry = catalogue::find("Mutexes and shared state").expect("in the catalogue");
    for qtype in [QuestionType::CodeReading, QuestionType::FillInBlank] {
        let q = question(&code, &[Site { file: 0, line: 2 }], 0, &ask_owned(entry, qtype));
        assert!(q.is_none(), "{qtype:?}: {:?}", q.and_then(|q| q.snippet).map(|s| s.lines().count()));
    }
    // At a site inside it, a small whole unit (the field's own line and its neighbours) fits.
    let q = question(&code, &[Site { file: 0, line: 3 }], 0, &ask_owned(entry, QuestionType::CodeReading));
    assert!(q.as_ref().is_some_and(fits_screen), "{q:#?}");
}

/// `ask` for an entry that is not `'static` (a test's modified copy).
fn ask_owned(entry: &Entry, qtype: QuestionType) -> Ask<'_> {
    Ask { entry, concept: entry.name, qtype, level: Level::Mid, about_error: false, used_bugs: &[], narrow: false }
}

/// Issue 40 §4: a code-reading rubric holds a point taken from the lines shown.
#[test]
fn a_code_reading_rubric_names_a_line_it_shows() {
    let files = files();
    let code = SessionCode::new(&files);
    let entry = catalogue::find("Async/await").expect("catalogue entry");
    let q = question(&code, &[Site { file: 0, line: 3 }], 0, &ask(entry, QuestionType::CodeReading, Level::Mid))
        .expect("a code-reading question");
    let correct = q.correct.as_deref().unwrap_or_default();
    assert!(
        correct
            .contains("It also points at line 4 (`const body = await request.json();`), where this code uses `await`"),
        "{correct}"
    );
    let snippet = q.snippet.as_deref().unwrap_or_default();
    assert!(snippet.contains("const body = await request.json();"), "{snippet}");
}

/// Issue 40 §4: a spot-the-bug's consequence follows from where the edit sits.
#[test]
fn a_bugs_consequence_follows_from_where_it_sits() {
    let bug_of = |path: &str, code: &str, concept: &str, line: usize| {
        let files = vec![SourceFile::new(path, code)];
        let code = SessionCode::new(&files);
        let entry = catalogue::find_in(concept, crate::analysis::lang_for_path(path)).expect("entry");
        let q =
            question(&code, &[Site { file: 0, line }], 0, &ask_owned(&entry, QuestionType::SpotTheBug)).expect("a bug");
        (q.correct.unwrap_or_default(), q.grounding.and_then(|g| g.mutation).expect("an edit"))
    };
    // A flipped `err != nil` in a test's assertion: a false failure and a real error passing.
    let test = "package store\n\nimport \"testing\"\n\nfunc TestLoad(t *testing.T) {\n\tv, err := Load(\"a\")\n\tif err != nil {\n\t\tt.Fatalf(\"load: %v\", err)\n\t}\n\tif v != 1 {\n\t\tt.Errorf(\"got %d\", v)\n\t}\n}\n";
    let (key, edit) = bug_of("store_test.go", test, "Explicit error returns in Go", 6);
    assert_eq!(edit.mutated.trim(), "if err == nil {");
    assert!(key.contains("false failure") && key.contains("real error"), "{key}");
    assert!(!key.contains("returns early"), "{key}");
    // The same flip in a function that returns on error: an early return.
    let load = "package store\n\nfunc Load(k string) (int, error) {\n\tv, err := read(k)\n\tif err != nil {\n\t\treturn 0, err\n\t}\n\treturn v, nil\n}\n";
    let (key, _) = bug_of("store.go", load, "Explicit error returns in Go", 4);
    assert!(key.contains("nil `err`") && key.contains("taken for a success"), "{key}");
    // A dropped `go` before the function sends to the worker: the worker's receive blocks.
    let pool = "package pool\n\nfunc Run(items []int) {\n\tjobs := make(chan int)\n\tgo worker(jobs)\n\tfor _, it := range items {\n\t\tjobs <- it\n\t}\n\tclose(jobs)\n}\n";
    let (key, edit) = bug_of("pool.go", pool, "Goroutines", 4);
    assert_eq!(edit.mutated.trim(), "worker(jobs)");
    assert!(key.contains("receive blocks forever"), "{key}");
    assert!(!key.contains("send on an unbuffered channel inside it blocks"), "{key}");
}

/// A bug the compiler refuses (a dropped derive) is not asked about "at runtime"; one that
/// compiles still is.
#[test]
fn a_bug_that_stops_the_build_is_not_asked_about_at_runtime() {
    let bug_of = |path: &str, code: &str, concept: &str, line: usize| {
        let files = vec![SourceFile::new(path, code)];
        let code = SessionCode::new(&files);
        let entry = catalogue::find_in(concept, crate::analysis::lang_for_path(path)).expect("entry");
        question(&code, &[Site { file: 0, line }], 0, &ask_owned(&entry, QuestionType::SpotTheBug)).expect("a bug")
    };
    let token = "#[derive(Debug, Clone, PartialEq)]\npub enum Token {\n    Plus,\n    Minus,\n}\n";
    let q = bug_of("src/token.rs", token, "Derive macros", 0);
    let edit = q.grounding.as_ref().and_then(|g| g.mutation.as_ref()).expect("an edit");
    assert_eq!(edit.mutated.trim(), "#[derive(Debug, Clone)]");
    assert!(q.correct.as_deref().is_some_and(|k| k.contains("no longer compile")), "{:?}", q.correct);
    assert!(!q.question.contains("runtime"), "{}", q.question);
    assert!(q.question.ends_with("Which line is it, and what goes wrong?"), "{}", q.question);
    let load = "package store\n\nfunc Load(k string) (int, error) {\n\tv, err := read(k)\n\tif err != nil {\n\t\treturn 0, err\n\t}\n\treturn v, nil\n}\n";
    let q = bug_of("store.go", load, "Explicit error returns in Go", 4);
    assert!(q.question.contains("what goes wrong at runtime?"), "{}", q.question);
}

/// Issue 40 §2: a question says what the concept is called elsewhere only in its labelled
/// aside, at the end of the explanation, and never its own language's name there.
#[test]
fn a_question_names_other_languages_only_in_its_labelled_aside() {
    let code = "import asyncio\n\n\nasync def load(client):\n    user, orders = await asyncio.gather(client.user(), client.orders())\n    return user, orders\n";
    let files = vec![SourceFile::new("load.py", code)];
    let session = SessionCode::new(&files);
    let entry = catalogue::find_in("Concurrent promises and joins", Some(crate::analysis::Lang::Python))
        .expect("the Python variant");
    let q = question(&session, &[Site { file: 0, line: 4 }], 0, &ask_owned(&entry, QuestionType::CodeReading))
        .expect("a question");
    assert!(
        q.explanation.ends_with("Elsewhere: in JavaScript, Promise.all; in Rust, tokio::join!."),
        "{}",
        q.explanation
    );
    assert!(!q.explanation.contains("in Python,"), "{}", q.explanation);
}

/// Issue 40's cut snippets, one per example: the unit around a line is the whole node (with
/// its where-clause and body, its attributes and doc comment, the whole multi-line statement
/// or block), and a stretch that stops inside one is refused with the reason.
mod whole_units_from_the_grammar {
    use super::super::units::{check_whole, unit_within, units_around};
    use super::*;

    /// `text`'s file, and the 0-based line whose trimmed text is `line`.
    fn at<'a>(files: &'a [SourceFile], line: &str) -> (SessionCode<'a>, usize) {
        let code = SessionCode::new(files);
        let i = code.files[0].lines.iter().position(|l| l.trim() == line).unwrap_or_else(|| panic!("no `{line}`"));
        (code, i)
    }

    fn lines_of(file: &CodeFile<'_>, span: (usize, usize)) -> Vec<String> {
        file.lines[span.0..=span.1].iter().map(|l| l.trim().to_string()).collect()
    }

    const QUOTED: &str = "use std::fmt;\n\npub struct Quoted<C>(C);\n\nimpl<C> fmt::Display for Quoted<C>\nwhere\n    C: fmt::Display,\n{\n    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {\n        write!(f, \"\\\"{}\\\"\", self.0)\n    }\n}\n";

    #[test]
    fn an_impl_is_quoted_with_its_where_clause_and_body_and_a_cut_at_where_is_refused() {
        let files = [SourceFile::new("src/quoted.rs", QUOTED)];
        let (code, header) = at(&files, "impl<C> fmt::Display for Quoted<C>");
        let file = &code.files[0];
        let unit = unit_within(file, header, 18);
        assert_eq!(unit, (4, 11), "{:?}", lines_of(file, unit));
        assert_eq!(check_whole(file, 4, 11), Ok(()));
        // Ending at `where`, or at the impl's header with no body: cut.
        for end in [4, 5, 6] {
            let why = check_whole(file, 4, end).expect_err("a cut impl");
            assert!(why.contains("runs past the snippet's end (to line 12)"), "{end}: {why}");
        }
        // The site in the body: the innermost definition that fits is the method.
        let (_, inner) = at(&files, "write!(f, \"\\\"{}\\\"\", self.0)");
        assert_eq!(unit_within(file, inner, 18), (8, 10), "the method, the innermost definition");
        assert_eq!(units_around(file, inner).last(), Some(&(4, 11)), "inside the impl");
    }

    #[test]
    fn a_conditional_type_is_one_unit_and_a_cut_at_its_true_branch_is_refused() {
        let text = "export type Awaited2<T> = T extends Promise<infer S>\n  ? S\n  : T;\n\nexport const x = 1;\n";
        let files = [SourceFile::new("src/types.ts", text)];
        let (code, _) = at(&files, "? S");
        let file = &code.files[0];
        assert_eq!(units_around(file, 1)[0], (0, 2));
        assert!(check_whole(file, 0, 1).is_err(), "ends at `? S`");
        assert!(check_whole(file, 1, 2).is_err(), "starts inside the type");
        assert_eq!(check_whole(file, 0, 2), Ok(()));
        assert_eq!(check_whole(file, 0, 4), Ok(()), "two whole statements");
    }

    #[test]
    fn two_statements_on_one_line_are_whole_together_but_not_with_the_brace_after_them() {
        let text = "function f(a) {\n  const b = a + 1; log(b);\n  return g(b,\n    a); }\n";
        let files = [SourceFile::new("f.js", text)];
        let code = SessionCode::new(&files);
        let file = &code.files[0];
        assert_eq!(check_whole(file, 1, 1), Ok(()));
        assert!(check_whole(file, 1, 2).is_err(), "stops inside `g(b,`");
        let why = check_whole(file, 1, 3).expect_err("the `}` closing the function");
        assert!(why.contains("closes a block"), "{why}");
        assert_eq!(check_whole(file, 0, 3), Ok(()));
    }

    #[test]
    fn a_python_statement_over_several_lines_is_cut_only_at_its_boundaries() {
        let text = "def total(rows):\n    amount = sum(\n        r.price * r.qty\n        for r in rows\n    )\n    tax = (amount *\n           RATE)\n    return amount + tax\n";
        let files = [SourceFile::new("shop/total.py", text)];
        let (code, inner) = at(&files, "for r in rows");
        let file = &code.files[0];
        assert_eq!(units_around(file, inner)[0], (1, 4));
        assert_eq!(units_around(file, 6)[0], (5, 6));
        assert_eq!(check_whole(file, 1, 6), Ok(()));
        assert!(check_whole(file, 1, 3).is_err(), "stops inside `sum(`");
        assert!(check_whole(file, 2, 4).is_err(), "starts inside it");
        assert!(check_whole(file, 5, 5).is_err(), "stops inside `(amount *`");
    }

    #[test]
    fn a_ruby_block_is_one_unit_with_its_end() {
        let text = "class Report\n  def rows(items)\n    items.each do |item|\n      line = format_line(item)\n      puts line\n    end\n    items.size\n  end\nend\n";
        let files = [SourceFile::new("lib/report.rb", text)];
        let (code, inner) = at(&files, "puts line");
        let file = &code.files[0];
        let around = units_around(file, inner);
        assert_eq!(&around[..3], &[(4, 4), (2, 5), (1, 7)], "the statement, the block, the method");
        assert_eq!(check_whole(file, 2, 5), Ok(()));
        assert_eq!(check_whole(file, 2, 6), Ok(()));
        assert!(check_whole(file, 2, 4).is_err(), "the block without its `end`");
        assert!(check_whole(file, 3, 5).is_err(), "`end` closes a block that opens above");
        assert_eq!(units_around(file, 5)[0], (2, 5), "an `end` line belongs to the block it closes");
    }

    #[test]
    fn a_decorated_function_holds_its_multi_line_decorator() {
        let text = "import functools\n\n\n@retry(\n    attempts=3,\n    backoff=lambda n: 2 ** n,\n)\n@functools.lru_cache\ndef fetch(url):\n    return get(url)\n";
        let files = [SourceFile::new("client.py", text)];
        let (code, inner) = at(&files, "return get(url)");
        let file = &code.files[0];
        assert_eq!(unit_within(file, inner, 18), (3, 9));
        assert_eq!(units_around(file, 4).last(), Some(&(3, 9)), "a decorator's line: the decorated definition");
        assert!(check_whole(file, 7, 9).is_err(), "the first decorator left out");
        assert!(check_whole(file, 4, 9).is_err(), "cut inside the decorator");
        assert_eq!(check_whole(file, 3, 9), Ok(()));
    }

    #[test]
    fn a_rust_item_holds_its_attribute_and_doc_comment() {
        let text = "use std::fmt;\n\n/// A price in cents.\n/// Never negative.\n#[derive(Debug, Clone,\n         PartialEq)]\npub struct Cents(u64);\n\nfn other() {}\n";
        let files = [SourceFile::new("src/money.rs", text)];
        let (code, item) = at(&files, "pub struct Cents(u64);");
        let file = &code.files[0];
        assert_eq!(unit_within(file, item, 18), (2, 6), "from the doc comment");
        assert_eq!(check_whole(file, 2, 6), Ok(()));
        assert_eq!(check_whole(file, 4, 6), Ok(()), "a doc comment may be left out");
        let why = check_whole(file, 6, 6).expect_err("the attribute left out");
        assert!(why.contains("attribute on line 5"), "{why}");
        assert!(check_whole(file, 5, 6).is_err(), "cut inside the attribute");
    }

    #[test]
    fn a_go_table_test_is_its_table_with_its_loop() {
        let text = "package cart\n\nfunc TestTotal(t *testing.T) {\n\tt.Parallel()\n\ttests := []struct {\n\t\tname string\n\t\twant int\n\t}{\n\t\t{\"empty\", 0},\n\t\t{\"one\", 3},\n\t}\n\tfor _, tc := range tests {\n\t\tif got := Total(tc.name); got != tc.want {\n\t\t\tt.Errorf(\"got %d\", got)\n\t\t}\n\t}\n\tt.Log(\"done\")\n}\n";
        let files = [SourceFile::new("cart_test.go", text)];
        let (code, inner) = at(&files, "t.Errorf(\"got %d\", got)");
        let file = &code.files[0];
        assert!(units_around(file, inner).contains(&(4, 15)), "{:?}", units_around(file, inner));
        assert!(units_around(file, 8).contains(&(4, 15)), "from a row of the table too");
        // Inside a test too long to show whole, the table with its loop.
        assert_eq!(unit_within(file, inner, 14), (4, 15));
        assert_eq!(check_whole(file, 4, 15), Ok(()));
    }

    #[test]
    fn parameterised_tests_hold_their_tables() {
        let cases = [
            (
                "cart.test.ts",
                "describe(\"total\", () => {\n  it.each([\n    [1, 1],\n    [2, 4],\n  ])(\"squares %i\", (n, want) => {\n    expect(square(n)).toBe(want);\n  });\n});\n",
                "expect(square(n)).toBe(want);",
                (1, 6),
            ),
            (
                "Tests/SquareTests.cs",
                "public class SquareTests\n{\n    /// <summary>Squares.</summary>\n    [Theory]\n    [InlineData(1, 1)]\n    [InlineData(2, 4)]\n    public void Squares(int n, int want)\n    {\n        Assert.Equal(want, Square(n));\n    }\n}\n",
                "Assert.Equal(want, Square(n));",
                (2, 9),
            ),
        ];
        for (path, text, site, want) in cases {
            let files = [SourceFile::new(path, text)];
            let (code, line) = at(&files, site);
            let file = &code.files[0];
            let unit = unit_within(file, line, 18);
            assert_eq!(unit, want, "{path}: {:?}", lines_of(file, unit));
            assert_eq!(check_whole(file, unit.0, unit.1), Ok(()), "{path}");
        }
    }

    #[test]
    fn a_long_test_shows_the_statements_around_the_site_whole() {
        let mut text = String::from("package big\n\nfunc TestEverything(t *testing.T) {\n");
        for k in 0..40 {
            text.push_str(&format!("\tv{k} := compute({k},\n\t\t{k} + 1)\n"));
        }
        text.push_str("\tif v20 != 41 {\n\t\tt.Fatalf(\"v20 = %d\", v20)\n\t}\n");
        for k in 40..60 {
            text.push_str(&format!("\tcheck(t, v{})\n", k - 40));
        }
        text.push_str("}\n");
        let files = [SourceFile::new("big_test.go", text.as_str())];
        let (code, site) = at(&files, "t.Fatalf(\"v20 = %d\", v20)");
        let file = &code.files[0];
        assert!(file.lines.len() > 100, "a test of {} lines", file.lines.len());
        let entry =
            catalogue::find("Table-driven tests").or_else(|| catalogue::find("Error handling")).expect("an entry");
        let q = builders::quoted(&ask(entry, QuestionType::CodeReading, Level::Mid), file, site).expect("a question");
        let g = q.grounding.expect("grounded");
        let (start, end) = (g.line_start as usize - 1, g.line_end as usize - 1);
        assert!(start <= site && site <= end, "holds the site");
        assert!(end - start < crate::analysis::lint::MAX_SNIPPET_LINES, "{} lines", end - start + 1);
        assert!(end - start >= 4, "the statements around the site, not one line: {}-{}", start + 1, end + 1);
        assert_eq!(check_whole(file, start, end), Ok(()));
    }

    /// A statement whose only neighbour is long is not quoted alone (a one-line spot-the-bug
    /// says where its bug is): with that neighbour, whole, when it fits.
    #[test]
    fn a_statement_beside_a_long_one_is_quoted_with_it() {
        let arms: String = (0..14).map(|k| format!("            '{k}' => Token::Digit({k}),\n")).collect();
        let text = format!(
            "impl Lexer {{\n    fn next(&mut self) -> Option<Token> {{\n        let c = self.chars.find(|c| !c.is_whitespace())?;\n        let token = match c {{\n{arms}            _ => Token::Other,\n        }};\n        Some(token)\n    }}\n}}\n"
        );
        let files = [SourceFile::new("src/lexer.rs", text.as_str())];
        let (code, site) = at(&files, "let c = self.chars.find(|c| !c.is_whitespace())?;");
        let file = &code.files[0];
        let entry = catalogue::find("Closures").expect("an entry");
        let q = builders::quoted(&ask(entry, QuestionType::CodeReading, Level::Mid), file, site).expect("a question");
        let g = q.grounding.expect("grounded");
        assert_eq!((g.line_start as usize - 1, g.line_end as usize - 1), (site, site + 17), "the let and the match");
        assert_eq!(check_whole(file, site, site + 17), Ok(()));
    }

    /// The same rule holds for a question an LLM returns: precision refuses a cut snippet.
    #[test]
    fn precision_refuses_an_llm_snippet_cut_at_where() {
        use crate::analysis::grounding_check::{CannedCode, verify_grounding};
        let files = vec![SourceFile::new("src/quoted.rs", QUOTED)];
        let question = |snippet: &str| {
            let mut q: GeneratedQuestion = serde_json::from_value(serde_json::json!({
                "concept": "Traits", "question_type": "code_reading", "difficulty": "mid", "snippet": snippet,
                "question": "What does this impl give `Quoted`?", "correct": "Display for any displayable C.",
                "explanation": "The where-clause bounds C."
            }))
            .expect("a question");
            q.grounding = verify_grounding(&q, &files, CannedCode::Allowed).expect("grounded");
            q
        };
        let cut = question("impl<C> fmt::Display for Quoted<C>\nwhere");
        let problems = crate::analysis::precision::precision_problems(&cut, &files);
        assert!(problems.iter().any(|p| p.contains("not a whole unit")), "{problems:?}");
        let whole = question(&QUOTED.lines().skip(4).collect::<Vec<_>>().join("\n"));
        let problems = crate::analysis::precision::precision_problems(&whole, &files);
        assert!(problems.iter().all(|p| !p.contains("not a whole unit")), "{problems:?}");
    }
}

/// Ordering steps from the tree: a `finally` runs after the `try` body on the normal path, a
/// Go function's statements are its statement list's, a closure's statements are not the
/// outer function's.
#[test]
fn ordering_steps_come_from_the_body_in_the_order_they_run() {
    let ts = "export async function save(db, row) {\n  const tx = await db.begin();\n  try {\n    await tx.insert(row);\n    await tx.commit();\n  } catch (err) {\n    await tx.rollback();\n  } finally {\n    db.release(tx);\n  }\n  rows.forEach((r) => {\n    log(r);\n  });\n  return row.id;\n}\n";
    let go = "package store\n\nfunc (s *Store) Put(k string) error {\n\ts.mu.Lock()\n\tdefer s.mu.Unlock()\n\t// a comment is no step\n\tif k == \"\" {\n\t\treturn ErrEmpty\n\t}\n\ts.items[k]++\n\treturn nil\n}\n";
    let files = vec![SourceFile::new("db.ts", ts), SourceFile::new("store.go", go)];
    let code = SessionCode::new(&files);
    let f = enclosing_function(&code.files[0], 8).expect("save");
    assert_eq!(f, (0, 14));
    assert_eq!(function_name(&code.files[0], 0).as_deref(), Some("save"));
    assert_eq!(statements(&code.files[0], f.0, f.1), vec![1, 3, 4, 8, 10, 13]);
    let g = enclosing_function(&code.files[1], 9).expect("Put");
    assert_eq!((g, function_name(&code.files[1], g.0).as_deref()), ((2, 11), Some("Put")));
    assert_eq!(statements(&code.files[1], g.0, g.1), vec![3, 4, 6, 9, 10]);
}

#[test]
fn patterns_prepared_once_give_the_sites_they_give_unprepared() {
    // Many copies of the two files, the cited paths spelled as an absolute path, as a tail and
    // as written: the index and the prepared patterns find what a scan over the files found.
    let mut files = Vec::new();
    for i in 0..40 {
        files.push(SourceFile::new(format!("pkg{i}/app/api/users/route.ts"), ROUTE));
        files.push(SourceFile::new(format!("pkg{i}/app/service.py"), SERVICE));
    }
    let mut patterns = crate::analysis::analyze_files(&files);
    for (n, p) in patterns.iter_mut().enumerate() {
        if n % 3 == 1 {
            p.file = format!("/home/ann/shop/{}", p.file);
        }
    }
    let plain = SessionCode::new(&files);
    let prepared = SessionCode::with_patterns(&files, &patterns);
    let entry = catalogue::find("Async/await");
    for source_file in ["pkg7/app/api/users/route.ts", "/home/ann/shop/pkg31/app/api/users/route.ts", "x.ts"] {
        let concept = Concept {
            name: "Async/await".into(),
            category: "async_pattern".into(),
            difficulty: "junior".into(),
            source_file: source_file.into(),
            snippet: "const user = await prisma.user.findUnique({".into(),
            why_it_matters: String::new(),
            confidence: 0.9,
        };
        let found = sites(&prepared, entry, &concept, &patterns);
        assert_eq!(found, sites(&plain, entry, &concept, &patterns), "{source_file}");
        assert!(!found.is_empty(), "{source_file}");
        let scan = files.iter().position(|f| crate::analysis::concepts::path_matches(&f.path, source_file));
        if let Some(own) = scan {
            assert_eq!(found[0].file, own, "the concept's own file first: {source_file}");
        }
        // Other patterns than the prepared ones are prepared afresh, not read from the cache.
        let fewer = &patterns[..patterns.len() / 2];
        assert_eq!(sites(&prepared, entry, &concept, fewer), sites(&plain, entry, &concept, fewer));
    }
}
