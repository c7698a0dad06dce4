//! The pattern census over the recorded sessions and the corpus (issue 40's before/after
//! measurement): every pattern the engine reports for each session's latest files, written as
//! tab-separated lines to the file `VL_PATTERN_CENSUS` names. Run by hand:
//! `VL_PATTERN_CENSUS=/tmp/after.tsv cargo test --lib static_rules::census -- --ignored`.

use crate::analysis::model::SourceFile;
use crate::sample::SampleSession;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

#[test]
#[ignore = "a measurement, run by hand"]
fn write_the_pattern_census() {
    let Ok(out) = std::env::var("VL_PATTERN_CENSUS") else { return };
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut text = String::new();
    for dir in ["tests/fixtures/sessions", "tests/fixtures/corpus"] {
        let mut names: Vec<_> = std::fs::read_dir(root.join(dir))
            .expect("fixture dir")
            .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".json") && !n.contains("baseline"))
            .collect();
        names.sort();
        for name in names {
            let raw = std::fs::read_to_string(root.join(dir).join(&name)).expect("session file");
            let session = SampleSession::parse(&raw).expect("session parses");
            let mut latest: BTreeMap<String, String> = BTreeMap::new();
            for step in &session.steps {
                if let Some(w) = &step.write_file {
                    latest.insert(w.path.clone(), w.content.clone());
                }
            }
            let files: Vec<SourceFile> = latest.into_iter().map(|(p, c)| SourceFile::new(p, c)).collect();
            for p in super::analyze_files(&files) {
                let first = p.snippet.lines().next().unwrap_or("").trim();
                writeln!(text, "{name}\t{}\t{}\t{}:{}\t{first}", p.pattern_type, p.name, p.file, p.line)
                    .expect("write");
            }
        }
    }
    std::fs::write(out, text).expect("census written");
}

/// What the offline provider makes of one session (`VL_DEBUG_SESSION` = its path): the
/// concepts and the questions, to see what a change of the patterns changed downstream.
#[test]
#[ignore = "a measurement, run by hand"]
fn print_one_sessions_concepts_and_questions() {
    use crate::analysis::concepts::{Concept, Level, validate_concepts};
    use crate::analysis::detect_stack;
    let Ok(path) = std::env::var("VL_DEBUG_SESSION") else { return };
    let raw = std::fs::read_to_string(&path).expect("session file");
    let session = SampleSession::parse(&raw).expect("session parses");
    let mut latest: BTreeMap<String, String> = BTreeMap::new();
    for step in &session.steps {
        if let Some(w) = &step.write_file {
            latest.insert(w.path.clone(), w.content.clone());
        }
    }
    let files: Vec<SourceFile> = latest.into_iter().map(|(p, c)| SourceFile::new(p, c)).collect();
    let paths: Vec<String> = files.iter().map(|f| f.path.clone()).collect();
    let stack = detect_stack(&[], &paths);
    let patterns = super::analyze_files(&files);
    let failures: Vec<crate::analysis::model::FailedCall> = std::env::var("VL_DEBUG_ERROR")
        .map(|error| {
            vec![crate::analysis::model::FailedCall {
                tool_name: "Bash".into(),
                subject: "run the tests".into(),
                error,
            }]
        })
        .unwrap_or_default();
    let answer = crate::llm::offline::offline_concepts(
        &stack,
        &patterns,
        &files,
        &failures,
        std::slice::from_ref(&session.description),
    );
    println!("PATTERNS {}", patterns.len());
    for e in crate::analysis::catalogue::all() {
        let hits: Vec<String> = patterns
            .iter()
            .filter(|p| {
                let lowered = (p.name.to_lowercase(), p.snippet.to_lowercase());
                crate::analysis::catalogue::best_weight(e.signals, p, &lowered).is_some()
            })
            .map(|p| format!("{}:{}", p.pattern_type, p.name))
            .collect();
        if !hits.is_empty() {
            let lang = crate::analysis::lang_for_path(&patterns[0].file);
            println!("ENTRY {} holds={} {:?}", e.name, e.in_lang(lang).is_some(), hits);
        }
    }
    for c in &answer.concepts {
        println!("PICK {} | {} | {:?}", c.name, c.source_file, c.snippet.lines().next());
    }
    let citable: Vec<SourceFile> =
        files.iter().cloned().chain(failures.iter().map(crate::analysis::model::FailedCall::as_source)).collect();
    let validated = validate_concepts(answer, &citable).expect("valid");
    println!("DROPPED {:?}", validated.dropped);
    let concepts = validated.concepts;
    for c in &concepts {
        println!("CONCEPT {} | {} | {:?}", c.name, c.source_file, c.snippet);
    }
    let level = |c: &Concept| if c.difficulty == "junior" { Level::Junior } else { Level::Mid };
    let pairs: Vec<(Concept, Level)> = concepts.iter().map(|c| (c.clone(), level(c))).collect();
    for q in crate::llm::offline::offline_questions(&pairs, &files, &patterns).questions {
        println!(
            "Q {} | {} | {:?} | {:?}",
            q.question_type,
            q.concept,
            q.snippet.as_deref().unwrap_or("").lines().next(),
            q.grounding.as_ref().map(|g| (g.line_start, g.line_end))
        );
    }
}

/// The cost of detection per language (docs/DECISIONS.md): a file just under
/// `syntax::MAX_PARSE_BYTES` of repeated idiomatic code, parse and queries timed apart, best of
/// three; and one minified line. Run by hand in a release build:
/// `cargo test --release --lib static_rules::census::measure -- --ignored --nocapture`.
#[test]
#[ignore = "a measurement, run by hand"]
fn measure_the_cost_per_language() {
    use crate::analysis::syntax::{MAX_PARSE_BYTES, parse_file};
    use std::time::{Duration, Instant};
    let units: [(&str, &str); 8] = [
        (
            "a.go",
            "func (s *Store) Get(ctx context.Context, id string) (*Item, error) {\n\ts.mu.Lock()\n\tdefer s.mu.Unlock()\n\tgo s.refresh(id)\n\tv := <-s.ch\n\tif err := s.db.QueryRow(\"SELECT v FROM items WHERE id = $1\", id).Scan(&v); err != nil {\n\t\treturn nil, fmt.Errorf(\"get %s: %w\", id, err)\n\t}\n\treturn &Item{V: v}, nil\n}\n",
        ),
        (
            "a.rs",
            "impl<'a> Iterator for Lexer<'a> {\n    type Item = Token<'a>;\n    fn next(&mut self) -> Option<Token<'a>> {\n        let c = self.chars.next()?;\n        let v: Vec<_> = self.buf.iter().map(|b| b.len()).collect();\n        Some(Token::new(c, v.len()))\n    }\n}\nfn load<T: DeserializeOwned>(p: &Path) -> Result<T, Error> {\n    let s = fs::read_to_string(p)?;\n    Ok(serde_json::from_str(&s)?)\n}\n",
        ),
        (
            "a.ts",
            "export async function load<T extends object>(id: string): Promise<T> {\n  try {\n    const rows = await db.query(`SELECT * FROM items WHERE id = ${id}`);\n    return rows.map((r) => r.value as T)[0];\n  } catch (e) {\n    throw new Error(String(e));\n  }\n}\ntype Unwrap<T> = T extends Promise<infer U> ? U : T;\n",
        ),
        (
            "a.js",
            "export async function load(id) {\n  try {\n    const rows = await db.query(`SELECT * FROM items WHERE id = ${id}`);\n    return rows.map((r) => r.value)[0];\n  } catch (e) {\n    throw new Error(String(e));\n  }\n}\nit.each([[1, 2], [3, 4]])('adds %i', (a, b) => { expect(a).toBeLessThan(b); });\n",
        ),
        (
            "a.py",
            "@app.get(\"/items/{item_id}\")\nasync def get_item(item_id: int):\n    async with pool.acquire() as conn:\n        try:\n            row = await conn.fetchrow(\"SELECT * FROM items WHERE id = $1\", item_id)\n        except KeyError as e:\n            raise HTTPException(404) from e\n    return [x for x in row if x]\n",
        ),
        (
            "A.java",
            "class S {\n  @GetMapping(\"/items/{id}\")\n  public Item get(@PathVariable long id) throws IOException {\n    try (var in = open()) {\n      return repo.findById(id).map(i -> i.copy()).orElseThrow();\n    } catch (IOException e) {\n      throw e;\n    }\n  }\n}\n",
        ),
        (
            "a.rb",
            "class ItemsController < ApplicationController\n  def show\n    @item = Item.where(id: params[:id]).first\n    @tags = @item.tags.map { |t| t.name }\n  rescue ActiveRecord::RecordNotFound => e\n    head :not_found\n  end\nend\n",
        ),
        (
            "a.cs",
            "class S {\n  [HttpGet(\"{id}\")]\n  public async Task<Item> Get(int id) {\n    try {\n      var i = await _db.Items.Where(x => x.Id == id).FirstOrDefaultAsync();\n      return i;\n    } catch (DbException e) {\n      throw;\n    }\n  }\n}\n",
        ),
    ];
    let best = |f: &dyn Fn() -> Duration| (0..3).map(|_| f()).min().unwrap_or_default();
    for (path, unit) in units {
        let src = unit.repeat((MAX_PARSE_BYTES - 4096) / unit.len());
        let mb = src.len() as f64 / 1_000_000.0;
        let parse = best(&|| {
            let t = Instant::now();
            let _ = parse_file(path, &src);
            t.elapsed()
        });
        let total = best(&|| {
            let t = Instant::now();
            let _ = super::analyze_file(&SourceFile::new(path, src.clone()));
            t.elapsed()
        });
        let per10 = total.as_secs_f64() * 10.0 / mb;
        println!(
            "COST {path}: {mb:.2} MB parse {:.3} s, parse+queries {:.3} s -> {per10:.2} s per 10 MB",
            parse.as_secs_f64(),
            total.as_secs_f64()
        );
    }
    let line = "var a=function(){return x.map(y=>y+1)};".repeat(50_000);
    let t = Instant::now();
    let n = super::analyze_file(&SourceFile::new("min.js", line.clone())).len();
    let s = t.elapsed().as_secs_f64();
    println!(
        "COST min.js: {:.2} MB one line, {s:.3} s ({n} patterns) -> {:.2} s per 10 MB",
        line.len() as f64 / 1e6,
        s * 10e6 / line.len() as f64
    );
}
