//! Unit tests for the grounding verifier: each kind accepted as written and with whitespace
//! changed, then each rule broken on its own.

use super::*;

const CART: &str = "import { db } from './db';\n\
\n\
export async function addItem(userId: string, productId: string) {\n\
  const product = await db.product.findUnique({ where: { id: productId } });\n\
  if (!product) throw new Error('no such product');\n\
  return db.cartItem.create({ data: { userId, productId, quantity: 1 } });\n\
}\n";

fn files() -> Vec<SourceFile> {
    vec![
        SourceFile::new("lib/cart.ts", CART),
        SourceFile::new(
            "app/api/cart/route.ts",
            "export async function POST(req: Request) {\n  const body = await req.json();\n  return Response.json(body);\n}\n",
        ),
    ]
}

fn question(qtype: &str, snippet: Option<&str>, correct: &str) -> GeneratedQuestion {
    GeneratedQuestion {
        concept: "Async/await".into(),
        question_type: qtype.into(),
        difficulty: "mid".into(),
        snippet: snippet.map(str::to_string),
        question: "What happens here?".into(),
        options: None,
        correct: Some(correct.into()),
        explanation: "Because.".into(),
        follow_up: None,
        tags: vec![],
        grounding: None,
    }
}

fn declared(file: &str, lines: (u32, u32), kind: GroundingKind, mutation: Option<LineEdit>) -> Option<Grounding> {
    Some(Grounding { file: file.into(), line_start: lines.0, line_end: lines.1, kind, mutation })
}

fn edit(line: u32, original: &str, mutated: &str) -> Option<LineEdit> {
    Some(LineEdit { line, original: original.into(), mutated: mutated.into() })
}

fn verify(q: &GeneratedQuestion) -> Result<Option<Grounding>, GroundingError> {
    verify_grounding(q, &files(), CannedCode::Refused)
}

fn lines_of(result: Result<Option<Grounding>, GroundingError>) -> (String, u32, u32, GroundingKind) {
    let g = result.expect("verifies").expect("grounded");
    (g.file, g.line_start, g.line_end, g.kind)
}

const FIND: &str = "const product = await db.product.findUnique({ where: { id: productId } });";

#[test]
fn a_declared_quote_is_checked_and_narrowed_to_the_lines_it_covers() {
    let mut q = question("code_reading", Some(FIND), "It waits for the row.");
    q.grounding = declared("lib/cart.ts", (3, 7), GroundingKind::Quote, None);
    assert_eq!(lines_of(verify(&q)), ("lib/cart.ts".into(), 4, 4, GroundingKind::Quote));
}

#[test]
fn whitespace_tabs_and_crlf_do_not_matter() {
    let crlf = CART.replace('\n', "\r\n").replace("  ", "\t");
    let files = [SourceFile::new("lib/cart.ts", crlf)];
    let mut q = question(
        "code_reading",
        Some("const product =\n      await db.product.findUnique({where:{id:productId}});\r\nif (!product)"),
        "x",
    );
    q.grounding = declared("lib/cart.ts", (4, 5), GroundingKind::Quote, None);
    let g = verify_grounding(&q, &files, CannedCode::Refused).unwrap().unwrap();
    assert_eq!((g.line_start, g.line_end), (4, 5));
    q.grounding = None;
    let g = verify_grounding(&q, &files, CannedCode::Refused).unwrap().unwrap();
    assert_eq!((g.file.as_str(), g.line_start, g.line_end), ("lib/cart.ts", 4, 5));
}

#[test]
fn a_suffix_path_names_the_captured_file_and_the_grounding_keeps_the_captured_path() {
    let mut q = question("code_reading", Some(FIND), "x");
    q.grounding = declared("src/cart.ts", (4, 4), GroundingKind::Quote, None);
    assert!(matches!(verify(&q), Err(GroundingError::UnknownFile(_))));
    q.grounding = declared("cart.ts", (4, 4), GroundingKind::Quote, None);
    assert_eq!(lines_of(verify(&q)).0, "lib/cart.ts");
}

#[test]
fn a_file_not_in_the_session_is_refused() {
    let mut q = question("code_reading", Some(FIND), "x");
    q.grounding = declared("lib/other.ts", (4, 4), GroundingKind::Quote, None);
    assert_eq!(verify(&q), Err(GroundingError::UnknownFile("lib/other.ts".into())));
}

#[test]
fn lines_outside_the_file_are_refused() {
    let mut q = question("code_reading", Some(FIND), "x");
    for lines in [(0, 4), (5, 4), (4, 8)] {
        q.grounding = declared("lib/cart.ts", lines, GroundingKind::Quote, None);
        assert!(matches!(verify(&q), Err(GroundingError::LinesOutOfRange { lines: 7, .. })), "{lines:?}");
    }
}

#[test]
fn a_quote_at_the_wrong_lines_is_refused_with_where_it_really_is() {
    let mut q = question("code_reading", Some(FIND), "x");
    q.grounding = declared("lib/cart.ts", (5, 6), GroundingKind::Quote, None);
    let err = verify(&q).unwrap_err();
    assert!(err.to_string().contains("(it occurs at lines 4-4)"), "{err}");
}

#[test]
fn a_fabricated_snippet_is_refused_or_with_canned_code_allowed_left_ungrounded() {
    let q = question("code_reading", Some("const product = await db.product.findFirst();"), "x");
    assert_eq!(verify(&q), Err(GroundingError::NotInSession));
    assert_eq!(verify_grounding(&q, &files(), CannedCode::Allowed), Ok(None));
    let mut declared_q = q.clone();
    declared_q.grounding = declared("lib/cart.ts", (4, 4), GroundingKind::Quote, None);
    assert!(matches!(
        verify_grounding(&declared_q, &files(), CannedCode::Allowed),
        Err(GroundingError::QuoteMismatch { .. })
    ));
}

#[test]
fn of_several_occurrences_the_declared_one_is_checked_and_an_undeclared_snippet_takes_the_first() {
    let twice = "let a = 1;\nreturn a;\nlet b = 2;\nreturn a;\n";
    let files = [SourceFile::new("x.ts", twice)];
    let mut q = question("code_reading", Some("return a;"), "x");
    let g = verify_grounding(&q, &files, CannedCode::Refused).unwrap().unwrap();
    assert_eq!((g.line_start, g.line_end), (2, 2));
    q.grounding = declared("x.ts", (3, 4), GroundingKind::Quote, None);
    let g = verify_grounding(&q, &files, CannedCode::Refused).unwrap().unwrap();
    assert_eq!((g.line_start, g.line_end), (4, 4));
}

#[test]
fn a_blank_whose_answer_restores_the_line_is_grounded() {
    let snippet = "const product = ___ db.product.findUnique({ where: { id: productId } });";
    let mut q = question("fill_in_blank", Some(snippet), "await");
    assert_eq!(lines_of(verify(&q)), ("lib/cart.ts".into(), 4, 4, GroundingKind::Blank));
    q.grounding = declared("lib/cart.ts", (4, 4), GroundingKind::Blank, None);
    assert_eq!(lines_of(verify(&q)), ("lib/cart.ts".into(), 4, 4, GroundingKind::Blank));
}

#[test]
fn a_wrong_blank_answer_is_refused() {
    let snippet = "const product = ___ db.product.findUnique({ where: { id: productId } });";
    let mut q = question("fill_in_blank", Some(snippet), "async");
    assert_eq!(verify(&q), Err(GroundingError::BlankNotInSession { answer: "async".into() }));
    q.grounding = declared("lib/cart.ts", (4, 4), GroundingKind::Blank, None);
    assert!(matches!(verify(&q), Err(GroundingError::BlankDoesNotRestore { .. })));
}

#[test]
fn a_blank_at_the_start_or_end_of_a_line_needs_the_whole_token() {
    // The blank ends the snippet: "findUniq" would match a prefix of "findUnique(…" without
    // the line-boundary rule; the full rest of the line is right.
    let ends = "const product = await db.product.___";
    let partial = question("fill_in_blank", Some(ends), "findUniq");
    assert!(matches!(verify(&partial), Err(GroundingError::BlankNotInSession { .. })));
    let whole = question("fill_in_blank", Some(ends), "findUnique({ where: { id: productId } });");
    assert_eq!(lines_of(verify(&whole)).1, 4);
    // The blank starts the snippet: "uct" would match the end of "product".
    let starts = "___ = await db.product.findUnique({ where: { id: productId } });";
    let partial = question("fill_in_blank", Some(starts), "uct");
    assert!(matches!(verify(&partial), Err(GroundingError::BlankNotInSession { .. })));
    let whole = question("fill_in_blank", Some(starts), "const product");
    assert_eq!(lines_of(verify(&whole)).1, 4);
}

#[test]
fn a_blank_grounding_needs_exactly_one_blank_in_the_snippet() {
    let mut q = question("fill_in_blank", Some("const ___ = ___ db"), "x");
    q.grounding = declared("lib/cart.ts", (4, 4), GroundingKind::Blank, None);
    assert_eq!(verify(&q), Err(GroundingError::BlankCount(2)));
}

#[test]
fn a_mutation_whose_reversal_restores_the_file_is_grounded() {
    let snippet = "export async function addItem(userId: string, productId: string) {\n\
        const product = db.product.findUnique({ where: { id: productId } });\n\
        if (!product) throw new Error('no such product');";
    let mut q = question("spot_the_bug", Some(snippet), "line 4 lost its await");
    let mutation = edit(4, FIND, "const product = db.product.findUnique({ where: { id: productId } });");
    q.grounding = declared("lib/cart.ts", (3, 5), GroundingKind::Mutation, mutation.clone());
    let g = verify(&q).unwrap().unwrap();
    assert_eq!((g.line_start, g.line_end, g.kind, g.mutation), (3, 5, GroundingKind::Mutation, mutation));
}

#[test]
fn a_mutation_may_remove_a_line() {
    let snippet = "const product = await db.product.findUnique({ where: { id: productId } });\n\
        return db.cartItem.create({ data: { userId, productId, quantity: 1 } });";
    let mut q = question("spot_the_bug", Some(snippet), "the missing-product check is gone");
    q.grounding = declared(
        "lib/cart.ts",
        (4, 6),
        GroundingKind::Mutation,
        edit(5, "if (!product) throw new Error('no such product');", ""),
    );
    assert_eq!(lines_of(verify(&q)).3, GroundingKind::Mutation);
}

#[test]
fn a_mutation_whose_reversal_does_not_restore_the_file_is_refused() {
    let mut q = question(
        "spot_the_bug",
        Some(
            "const product = db.product.findUnique({ where: { id: productId } });\nif (!product) throw new Error('oops');",
        ),
        "x",
    );
    q.grounding = declared(
        "lib/cart.ts",
        (4, 5),
        GroundingKind::Mutation,
        edit(4, FIND, "const product = db.product.findUnique({ where: { id: productId } });"),
    );
    assert!(matches!(verify(&q), Err(GroundingError::MutationNotReversible { line: 4, .. })));
}

#[test]
fn a_mutation_must_cite_the_files_original_line_inside_the_range_and_change_it() {
    let snippet = "const product = db.product.findUnique({ where: { id: productId } });";
    let mut q = question("spot_the_bug", Some(snippet), "x");
    q.grounding = declared("lib/cart.ts", (4, 4), GroundingKind::Mutation, None);
    assert_eq!(verify(&q), Err(GroundingError::MissingMutation));
    q.grounding = declared("lib/cart.ts", (4, 4), GroundingKind::Mutation, edit(5, FIND, snippet));
    assert!(matches!(verify(&q), Err(GroundingError::MutationOutsideRange { line: 5, .. })));
    q.grounding = declared("lib/cart.ts", (4, 4), GroundingKind::Mutation, edit(4, "const product = 1;", snippet));
    assert!(matches!(verify(&q), Err(GroundingError::MutationOriginalMismatch { line: 4, .. })));
    q.grounding = declared("lib/cart.ts", (4, 4), GroundingKind::Mutation, edit(4, FIND, &format!("  {FIND}")));
    assert_eq!(verify(&q), Err(GroundingError::MutationChangesNothing { line: 4 }));
}

#[test]
fn kinds_fit_their_question_types() {
    let mut q = question("code_reading", Some(FIND), "x");
    q.grounding = declared("lib/cart.ts", (4, 4), GroundingKind::Mutation, edit(4, FIND, "x"));
    assert!(matches!(verify(&q), Err(GroundingError::KindNotForType { kind: "mutation", .. })));
    q.grounding = declared("lib/cart.ts", (4, 4), GroundingKind::Blank, None);
    assert!(matches!(verify(&q), Err(GroundingError::KindNotForType { kind: "blank", .. })));
    let mut blank = question("fill_in_blank", Some("const product = ___ db"), "await");
    blank.grounding = declared("lib/cart.ts", (4, 4), GroundingKind::Quote, None);
    assert!(matches!(verify(&blank), Err(GroundingError::KindNotForType { kind: "quote", .. })));
    // The developer's own bug, quoted as is, is a legitimate spot_the_bug.
    let mut own_bug = question("spot_the_bug", Some(FIND), "x");
    own_bug.grounding = declared("lib/cart.ts", (4, 4), GroundingKind::Quote, None);
    assert_eq!(lines_of(verify(&own_bug)).3, GroundingKind::Quote);
}

#[test]
fn a_question_without_a_snippet_is_ungrounded_unless_its_text_quotes_whole_lines() {
    let mut q = question("true_false", None, "true");
    q.question = "In `lib/cart.ts`, `addItem` awaits the `findUnique` call.".into();
    assert_eq!(verify(&q), Ok(None));
    q.question = format!("True or false: after `{FIND}` the product may be null.");
    assert_eq!(lines_of(verify(&q)), ("lib/cart.ts".into(), 4, 4, GroundingKind::Quote));
    q.question = "In this route:\n```ts\nexport async function POST(req: Request) {\n  const body = await req.json();\n```\nis the body parsed?".into();
    assert_eq!(lines_of(verify(&q)), ("app/api/cart/route.ts".into(), 1, 2, GroundingKind::Quote));
    let mut declared_q = question("true_false", None, "true");
    declared_q.grounding = declared("lib/cart.ts", (4, 4), GroundingKind::Quote, None);
    assert_eq!(verify(&declared_q), Err(GroundingError::NoCode));
    // A declared line range does not make an identifier in backticks a quote.
    declared_q.question = "Does `findUnique` return null for a missing product?".into();
    assert!(matches!(verify(&declared_q), Err(GroundingError::QuoteMismatch { .. })));
    declared_q.question = format!("Does `{FIND}` return null for a missing product?");
    assert_eq!(lines_of(verify(&declared_q)), ("lib/cart.ts".into(), 4, 4, GroundingKind::Quote));
}

#[test]
fn the_errors_read_as_instructions_a_model_can_follow() {
    let message = GroundingError::MutationOriginalMismatch {
        file: "lib/cart.ts".into(),
        line: 4,
        actual: "a".into(),
        original: "b".into(),
    }
    .to_string();
    assert_eq!(message, "line 4 of lib/cart.ts is \"a\", not the mutation's original \"b\"");
}

#[test]
fn an_ordering_quotes_its_steps_and_its_answer_puts_them_back_top_to_bottom() {
    let steps = [
        "return db.cartItem.create({ data: { userId, productId, quantity: 1 } });",
        FIND,
        "if (!product) throw new Error('no such product');",
        "export async function addItem(userId: string, productId: string) {",
    ];
    let mut q = question("ordering", None, "4,2,3,1");
    q.options = Some(steps.iter().map(|s| s.to_string()).collect());
    q.grounding = declared("lib/cart.ts", (1, 7), GroundingKind::Quote, None);
    assert_eq!(lines_of(verify(&q)), ("lib/cart.ts".into(), 3, 6, GroundingKind::Quote));

    // A wrong key: the second and third steps swapped.
    q.correct = Some("4,3,2,1".into());
    assert!(matches!(verify(&q), Err(GroundingError::StepsOutOfOrder { position: 3, .. })), "{:?}", verify(&q));
    // A step that is no line of the cited range.
    q.correct = Some("4,2,3,1".into());
    q.grounding = declared("lib/cart.ts", (4, 7), GroundingKind::Quote, None);
    assert!(matches!(verify(&q), Err(GroundingError::StepsOutOfOrder { position: 1, .. })));
}
