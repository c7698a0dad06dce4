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

#[test]
fn a_generic_bug_is_planted_when_the_concept_has_none_here() {
    let files = files();
    let code = SessionCode::new(&files);
    let entry = catalogue::find("Higher-order functions").expect("catalogue entry");
    let bug = ask(entry, QuestionType::SpotTheBug, Level::Mid);
    let q = question(&code, &[Site { file: 1, line: 3 }], 0, &bug).expect("a generic bug");
    let edit = q.grounding.and_then(|g| g.mutation).expect("an edit");
    assert_eq!(edit.mutated, "def load(repo, ids, tags=[]):");
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
