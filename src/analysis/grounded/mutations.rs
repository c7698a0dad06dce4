//! Known bugs, each a one-line edit of real code, for spot_the_bug questions: a removed
//! `await`, an effect without its dependency array, a list item without its `key`, a dropped
//! `defer`, `?` turned into `unwrap()`, a swapped comparison, an off-by-one loop bound, a
//! swallowed error, an error status reported as success, a mutable default argument …
//!
//! A rule finds its spot in the *masked* line (so comments and strings never match) and edits
//! the original line at the same byte offsets, which masking preserves. Each rule names the
//! concepts it teaches (`topics`, matched against the entry's category and name); rules with
//! no topics are generic bugs, used only when no rule of the concept applies near the site.

use crate::analysis::Lang;
use crate::analysis::catalogue::Entry;
use crate::analysis::catalogue::tokens::find_token;

const JS: &[Lang] = &[Lang::TypeScript, Lang::JavaScript];
const PY: &[Lang] = &[Lang::Python];
const GO: &[Lang] = &[Lang::Go];
const RS: &[Lang] = &[Lang::Rust];
const CS: &[Lang] = &[Lang::CSharp];
const CS_JAVA: &[Lang] = &[Lang::CSharp, Lang::Java];
const ANY: &[Lang] = &[];

/// One known bug.
pub struct Rule {
    /// Names the bug in a question's tags (`bug:<id>`), so a session can vary its bugs.
    pub id: &'static str,
    pub langs: &'static [Lang],
    /// Lowercase substrings of the entry's category or name this bug teaches; empty: generic.
    pub topics: &'static [&'static str],
    /// The mutated line for (masked, original) when the bug applies to it.
    pub apply: fn(&str, &str) -> Option<String>,
    /// What goes wrong at runtime, for the answer key, where its context says nothing more.
    pub consequence: &'static str,
    /// Whether the edit stops the code from compiling (a dropped derive, a Rust future left
    /// unawaited): nothing goes wrong "at runtime", and the question does not ask so.
    pub breaks_build: bool,
    /// What goes wrong given where the edited line sits (issue 40 §4: an inverted check in a
    /// test's assertion, a dropped `go` before a send, a guard that returns early), from the
    /// file's masked lines and the edited line's index.
    pub in_context: fn(&[String], usize) -> Here,
}

/// What a bug's consequence is where the edited line sits.
pub enum Here {
    /// The rule's own `consequence`.
    AsRule,
    /// This context's consequence.
    Says(&'static str),
    /// Nothing true can be said of it here (the edit may change nothing a test would see):
    /// the bug is not asked.
    Unsure,
}

impl Here {
    fn or_rule(said: Option<&'static str>) -> Here {
        said.map_or(Here::AsRule, Here::Says)
    }
}

impl Rule {
    /// The consequence of this bug on line `at` of a file whose masked lines are `masked`;
    /// `None` where it cannot be told.
    pub fn consequence_at(&self, masked: &[String], at: usize) -> Option<&'static str> {
        match (self.in_context)(masked, at) {
            Here::AsRule => Some(self.consequence),
            Here::Says(said) => Some(said),
            Here::Unsure => None,
        }
    }
}

/// No context changes the consequence.
fn anywhere(_: &[String], _: usize) -> Here {
    Here::AsRule
}

/// How far `line` is indented, in bytes of leading whitespace.
fn indent(line: &str) -> usize {
    line.len() - line.trim_start().len()
}

/// The lines of the block opened on line `at` (those after it indented deeper, up to a few),
/// trimmed: what an `if` runs when it holds.
fn block_under(masked: &[String], at: usize) -> Vec<&str> {
    let own = indent(&masked[at]);
    masked[at + 1..]
        .iter()
        .filter(|l| !l.trim().is_empty())
        .take_while(|l| indent(l) > own)
        .take(6)
        .map(|l| l.trim())
        .collect()
}

/// Whether line `at` is in a Go test function (`func TestX(t *testing.T)`) or a test file's
/// assertion block (one calling `t.Fatal`, `t.Error`, …).
fn in_go_test(masked: &[String], at: usize) -> bool {
    let block = block_under(masked, at);
    let asserts = block
        .iter()
        .any(|l| ["t.Fatal", "t.Error", "b.Fatal", "b.Error", "require.", "assert."].iter().any(|a| l.starts_with(a)));
    let header = masked[..=at].iter().rev().find(|l| l.starts_with("func "));
    asserts || header.is_some_and(|h| h.starts_with("func Test") || h.contains("*testing.T"))
}

/// Whether the block opened on line `at` leaves the function (`return`, `raise`, `throw`).
fn returns_early(masked: &[String], at: usize) -> bool {
    let block = block_under(masked, at);
    let inline = masked[at].split_once('{').map(|(_, rest)| rest.trim_start()).unwrap_or("");
    let leaves = |l: &str| ["return", "raise", "throw"].iter().any(|kw| find_token(l, kw) == Some(0));
    leaves(inline) || block.first().is_some_and(|l| leaves(l))
}

/// An inverted `err != nil` where it sits: a test's assertion, or a check that returns early.
fn err_check_context(masked: &[String], at: usize) -> Option<&'static str> {
    if !masked[at].contains("err ") {
        return None;
    }
    if in_go_test(masked, at) {
        return Some(
            "The test's error check is inverted: the test now fails exactly when the call succeeds (a false failure), and when the call returns a real error the check lets it pass silently, so the test goes on, or passes, with a broken result.",
        );
    }
    // Go's `err != nil` guards what the call gave back: whatever the block under it does
    // (return, record the error, cancel), it now does on success, with a nil `err`.
    masked[at].contains("err != nil").then_some(
        "The error check is inverted: a call that fails is taken for a success (its error is dropped and the code goes on past the check), and the block meant for the failure runs only when the call returns a nil `err`.",
    )
}

/// Whether line `at` is an assertion statement (`assert x == y` in Python, Java's `assert`).
fn is_assertion(masked: &[String], at: usize) -> bool {
    find_token(masked[at].trim_start(), "assert") == Some(0)
}

/// An inverted condition where it sits: a guard that returns early, or an assertion in a test.
fn comparison_context(masked: &[String], at: usize) -> Option<&'static str> {
    if let Some(found) = err_check_context(masked, at) {
        return Some(found);
    }
    if is_assertion(masked, at) {
        return Some(
            "The assertion is inverted: the test now fails when the code gives the right value (a false failure) and would pass only when it gives a wrong one, so it no longer checks the behaviour it is named for.",
        );
    }
    returns_early(masked, at).then_some(
        "The guard is inverted: input that should go on now takes the early return (or raise) in the block under it, and input the guard was written to stop goes past it into code that assumes it was checked.",
    )
}

/// A dropped `await` whose result the line does not use (`await page.flush();`): nothing is
/// used "as if it were the value"; the lines after it run before the call has finished.
fn awaited_alone(masked: &[String], at: usize) -> bool {
    masked.get(at).is_some_and(|l| l.trim_start().starts_with("await "))
}

fn await_context_js(masked: &[String], at: usize) -> Here {
    // `return await x` made `return x`: an async function's caller still gets x's value (the
    // returned promise is adopted); what changes is that a `try` around it is left at once
    // (its `finally` runs before x settles, its `catch` misses x's rejection), and a type
    // assertion on the value may no longer compile. Not told here (round 6c).
    if masked[at].trim_start().starts_with("return ") && masked[at].contains("await ") {
        return Here::Unsure;
    }
    if !awaited_alone(masked, at) {
        return Here::AsRule;
    }
    // The next statement awaits something else (`await outcome;`): the function still waits
    // there, and whether the call has finished by then depends on what it does.
    let next = masked[at + 1..].iter().map(|l| l.trim()).find(|l| !l.is_empty() && !l.starts_with("//"));
    if next.is_some_and(|l| l.starts_with("await ")) {
        return Here::Unsure;
    }
    // `await outcome;`: a promise made earlier and held in a variable, not a call.
    let awaited = masked[at].trim().trim_start_matches("await ").trim_end_matches(';');
    if !awaited.is_empty() && awaited.chars().all(|c| c.is_alphanumeric() || c == '_' || c == '$') {
        // An assertion's promise (`const outcome = expect(p).rejects…`): vitest awaits one the
        // test left behind and fails the test on it, Jest does not; which runs is not known
        // here (round 6, B8).
        let made_by_expect = masked[..at].iter().rev().any(|l| {
            let l = l.trim();
            ["const ", "let ", "var "].iter().any(|decl| {
                l.strip_prefix(decl)
                    .and_then(|rest| rest.strip_prefix(awaited))
                    .and_then(|rest| rest.trim_start().strip_prefix('='))
                    .is_some_and(|value| value.trim_start().starts_with("expect("))
            })
        });
        if made_by_expect {
            return Here::Unsure;
        }
        return Here::Says(
            "The promise held in that variable is no longer waited for: the function goes on, and may return (a test may end) before it settles, and its rejection (a failed assertion it holds, say) no longer fails this code; it surfaces later as an unhandled rejection, if at all.",
        );
    }
    Here::Says(
        "The call is no longer awaited and its result was not used: the statements after it run before it has finished (they see its work not yet done, and a test may end first), and a rejection of it is never caught here but surfaces later as an unhandled rejection.",
    )
}

fn await_context_py(masked: &[String], at: usize) -> Option<&'static str> {
    let line = masked.get(at)?;
    if line.contains("gather(") {
        // `asyncio.gather` returns a Future, not a coroutine: its calls are scheduled and run.
        return Some(
            "`asyncio.gather` without `await` hands back a Future: the calls are scheduled and run, but the code goes on with the Future itself instead of the list of their results, so the first use of a result fails (an AttributeError or a TypeError), and their exceptions are not raised here.",
        );
    }
    awaited_alone(masked, at).then_some(
        "The call is no longer awaited and its result was not used: the coroutine never runs (Python warns \"coroutine was never awaited\"), so what it was meant to do does not happen, and its exceptions are never raised.",
    )
}

/// A C# call no longer awaited, by what it was: a semaphore's `WaitAsync` (the lock is not
/// waited for); an assertion's task (`await Assert.ThrowsAsync…`, whose fate is a setting of
/// xUnit's analyzers, not the language) and a `ConfigureAwait` awaitable (no `Task`, so the
/// compiler's CS4014 is not certain) are not asked; any other call keeps the rule's words.
fn await_context_cs(masked: &[String], at: usize) -> Here {
    let line = masked[at].trim_start();
    if line.contains(".WaitAsync(") {
        return Here::Says(
            "Without `await`, a call that finds the semaphore taken no longer waits for it: it goes on into the section the semaphore guards while another call holds it, so two callers run that section at once (the race the semaphore was there to stop), and its `Release()` then frees a slot it never held.",
        );
    }
    if line.starts_with("await Assert.") || line.contains(".ConfigureAwait(") {
        return Here::Unsure;
    }
    Here::AsRule
}

/// A dropped `.await` in Rust by what the statement does with the call's output. Used (bound,
/// assigned, returned, given to `?` or a method or another call), the future stands where the
/// output was and the compiler refuses the code: the rule's own words. Awaited as a statement
/// of its own, the code still compiles, with a warning, and the call never runs.
fn await_context_rs(masked: &[String], at: usize) -> Here {
    // The statement's first line: a chain continued on lines starting with `.` began above.
    let head = masked[..=at].iter().rev().map(|l| l.trim()).find(|l| !l.starts_with('.')).unwrap_or_default();
    let line = masked[at].trim();
    let alone = line.ends_with(".await;")
        && line.matches(".await").count() == 1
        && !head.starts_with("let ")
        && !head.starts_with("return")
        && !head.contains(" = ");
    if alone {
        return Here::Says(
            "It still compiles, with only a warning (`unused_must_use`: futures do nothing unless you `.await` or poll them): the future is made and dropped without ever being polled, so the call's work never happens, nothing reports it, and the lines after it run as if it had.",
        );
    }
    Here::AsRule
}

/// A dropped `defer` by what it deferred: a context's `cancel`, an `Unlock`, a `Close`, a
/// WaitGroup's `Done`; any other call keeps the rule's own words.
fn defer_context(masked: &[String], at: usize) -> Option<&'static str> {
    let call = masked[at].trim_start().strip_prefix("defer")?.trim();
    if call == "cancel()" || call.ends_with("Cancel()") {
        return Some(
            "Without `defer`, `cancel()` runs at once: the context is cancelled before the work below has started, so every call given `ctx` sees it already done (`ctx.Err()` is `context.Canceled`) and gives up, or a goroutine that waits on `<-ctx.Done()` stops at once.",
        );
    }
    if call.ends_with(".Unlock()") || call.ends_with(".RUnlock()") {
        return Some(
            "Without `defer`, the lock is released as soon as it is taken: the lines below that it was taken to protect run unlocked, so concurrent callers race on the shared data (`go test -race` reports it).",
        );
    }
    if call.ends_with(".Close()") {
        return Some(
            "Without `defer`, it is closed at once: the reads and writes below use a closed file or connection and fail (`file already closed`, `use of closed network connection`).",
        );
    }
    if call.ends_with(".Done()") {
        return Some(
            "Without `defer`, the WaitGroup is told this goroutine is done before its work has run: `Wait` can return while the work is still going, so what follows `Wait` runs too early (a channel closed after `Wait` panics on the goroutine's later send, and results read after it are not all there).",
        );
    }
    None
}

/// `?` turned into `unwrap()` in `main`: the program stops either way.
fn unwrap_context(masked: &[String], at: usize) -> Option<&'static str> {
    let header = masked[..=at].iter().rev().map(|l| l.trim_start()).find(|l| {
        l.starts_with("fn ") || l.starts_with("async fn ") || l.starts_with("pub fn ") || l.starts_with("pub async fn ")
    })?;
    (header.contains("fn main(")).then_some(
        "`unwrap()` panics on the error where `?` returned it from `main`: the program stops in both cases, but with a panic message (\"called `Result::unwrap()` on an `Err` value\") and exit code 101, where `main`'s `Result` printed the error and exited with 1.",
    )
}

/// An emptied `where` by the query: `findUnique` must name a unique field.
fn filter_context(masked: &[String], at: usize) -> Option<&'static str> {
    masked[at].contains("findUnique(").then_some(
        "`findUnique` must be given a unique field: with `where: {}` the TypeScript types reject the call, and at runtime Prisma refuses the query with a validation error, so the lookup fails instead of finding its record.",
    )
}

/// Whether Python line `at` sits in a function registered as a web route (`@app.get(…)`,
/// `@router.post(…)`, `@bp.route(…)`): its caller is the framework, and what a `None` returned
/// there becomes depends on it (FastAPI checks it against the declared return type and answers
/// 500, Flask refuses it, an undeclared FastAPI handler sends `null` with a 200), so "the caller
/// carries on as if it had succeeded" is not true there (round 6: cursor-fastapi).
fn in_route_handler(masked: &[String], at: usize) -> bool {
    let own = indent(&masked[at]);
    let Some(def) = (0..at).rev().find(|&i| {
        let l = masked[i].trim_start();
        indent(&masked[i]) < own && (l.starts_with("def ") || l.starts_with("async def "))
    }) else {
        return false;
    };
    masked[..def].iter().rev().map(|l| l.trim()).take_while(|l| l.starts_with('@')).any(|l| {
        let call = l.split('(').next().unwrap_or(l);
        ["get", "post", "put", "patch", "delete", "route", "api_route"]
            .iter()
            .any(|verb| call.strip_suffix(verb).is_some_and(|head| head.ends_with('.')))
    })
}

/// A dropped trait of a `#[derive(…)]` by what that trait gives the type.
fn derive_context(masked: &[String], at: usize) -> Option<&'static str> {
    let line = masked[at].trim();
    let inner = line.strip_prefix("#[derive(")?.strip_suffix(")]")?;
    let dropped = inner.rsplit(',').next()?.trim();
    Some(match dropped {
        "PartialEq" => {
            "The type no longer implements `PartialEq`: `==` and `!=` on its values, and `assert_eq!` over them, no longer compile (\"binary operation `==` cannot be applied\"), and neither does a derived `Eq` or `PartialEq` of a type that holds it."
        }
        "Eq" => {
            "The type no longer implements `Eq`: it can no longer be a `HashMap` or `HashSet` key with a derived `Hash`, nor sit in a type that derives `Eq`; those uses no longer compile."
        }
        "Clone" => {
            "The type no longer implements `Clone`: `.clone()` on it no longer compiles, and neither does a derived `Copy`, which requires `Clone`."
        }
        "Copy" => {
            "The type is no longer `Copy`: its values move on assignment and when passed by value, so a use of a value after it was passed on no longer compiles (\"use of moved value\")."
        }
        "Debug" => {
            "The type no longer implements `Debug`: `{:?}`, `dbg!`, and `assert_eq!` or `unwrap()` over its values, which print it on failure, no longer compile."
        }
        "Hash" => {
            "The type no longer implements `Hash`: it can no longer be a `HashMap` key or a `HashSet` item; those uses no longer compile."
        }
        "Default" => {
            "The type no longer implements `Default`: `Type::default()` and `..Default::default()` no longer compile."
        }
        "Serialize" | "serde::Serialize" => {
            "The type no longer implements serde's `Serialize`: `serde_json::to_string` and every serialiser given it no longer compile."
        }
        "Deserialize" | "serde::Deserialize" => {
            "The type no longer implements serde's `Deserialize`: parsing it with `serde_json::from_str` (or any deserialiser) no longer compiles."
        }
        "Error" | "thiserror::Error" => {
            "The type no longer derives `thiserror::Error`: its `#[error(…)]` attributes are no longer known (\"cannot find attribute `error`\"), and it implements neither `Display` nor `std::error::Error`, so `{}` on it and `?` into a `Box<dyn Error>` no longer compile."
        }
        "PartialOrd" | "Ord" => {
            "The type no longer implements that ordering trait: `<`, `>`, `.sort()` or `.max()` on its values (whichever need it) no longer compile."
        }
        _ => return None,
    })
}

/// An off-by-one loop bound by what the bound is: a length (the last pass indexes past the
/// end) or anything else (the body runs once more than written).
fn bound_context(masked: &[String], at: usize) -> Option<&'static str> {
    let line = &masked[at];
    let lengths = ["len(", ".length", ".len()", ".size()", ".Count", ".Length"];
    if lengths.iter().any(|l| line.contains(l)) {
        return None;
    }
    // A test's loop whose body checks: the extra pass is a check the test never meant.
    let checks = ["assert", "expect(", "t.Error", "t.Fatal", "require."];
    if block_under(masked, at).iter().any(|l| checks.iter().any(|c| l.starts_with(c))) {
        return Some(
            "The loop bound is off by one: with `<=` the body runs once more than the bound says, so its check also runs one step past what the test meant, on a state the code may rightly be in: the test can then fail a correct implementation.",
        );
    }
    Some(
        "The loop bound is off by one: with `<=` the body runs once more than the bound says (from 0 up to and including it), so whatever the body does happens one extra time.",
    )
}

/// A dropped `go` where it sits: the function literal's own body sends on a channel (the send
/// now waits on the caller's goroutine for a receiver that comes only later), or the lines after
/// the call send to it (its receive waits for a send that comes only once it has returned).
fn go_context(masked: &[String], at: usize) -> Here {
    let own = indent(&masked[at]);
    let sent_to = |l: &str| {
        let (left, _) = l.split_once("<-")?;
        let name = left.trim();
        (!name.is_empty() && !name.contains('=')).then(|| name.to_string())
    };
    let rest = &masked[at + 1..];
    // The literal's body: the lines indented deeper, up to its closing `}(…)`.
    let body = rest.iter().take_while(|l| l.trim().is_empty() || indent(l) > own).count();
    if let Some(channel) = rest[..body].iter().find_map(|l| sent_to(l.trim())) {
        // A channel made with room for the sends (`make(chan T, n)`) takes them without a
        // receiver: the work only runs one call at a time, which is no failure to name.
        if buffered(masked, &channel) {
            return Here::Unsure;
        }
        return Here::Says(
            "Without `go` the function runs on the current goroutine: its send on the unbuffered channel blocks until something receives, and the code that receives runs only after this call has returned, so it blocks there for good (\"all goroutines are asleep\" when nothing else runs).",
        );
    }
    let after: Vec<&str> = rest[body..]
        .iter()
        .take_while(|l| l.trim().is_empty() || indent(l) >= own)
        .take(12)
        .map(|l| l.trim())
        .collect();
    if after.iter().any(|l| sent_to(l).is_some()) {
        return Here::Says(
            "Without `go` the call runs on the current goroutine and must return before the next line runs: the values it waits to receive are sent only after that line, so its receive blocks forever and the program deadlocks (\"all goroutines are asleep\").",
        );
    }
    Here::AsRule
}

/// Whether the file makes `channel` with a buffer (`channel := make(chan T, n)`); a channel
/// made elsewhere (a parameter) is not known to be.
fn buffered(masked: &[String], channel: &str) -> bool {
    masked.iter().map(|l| l.trim()).any(|l| {
        let Some(rest) = l.strip_prefix(channel) else { return false };
        let rest = rest.trim_start();
        let made = rest.strip_prefix(":=").or_else(|| rest.strip_prefix('=')).map(str::trim_start);
        made.and_then(|m| m.strip_prefix("make(chan"))
            .is_some_and(|args| args.split(')').next().is_some_and(|a| a.contains(',')))
    })
}

impl Rule {
    fn fits(&self, lang: Lang, entry: &Entry) -> bool {
        let name = entry.name.to_lowercase();
        (self.langs.is_empty() || self.langs.contains(&lang))
            && self.topics.iter().any(|t| entry.category.contains(t) || name.contains(t))
    }

    /// Whether the concept's own name says this is one of its bugs ("Goroutines" for a dropped
    /// `go`), not only its category (a dropped `defer cancel()` is a concurrency bug, but no
    /// bug of Channels).
    pub fn named_by(&self, entry: &Entry) -> bool {
        let name = entry.name.to_lowercase();
        self.topics.iter().any(|t| name.contains(t))
    }

    fn is_generic(&self, lang: Lang) -> bool {
        self.topics.is_empty() && (self.langs.is_empty() || self.langs.contains(&lang))
    }
}

/// Every rule, most specific first.
pub const RULES: &[Rule] = &[
    Rule {
        id: "drop-effect-deps",
        langs: JS,
        topics: &["effect", "hook"],
        apply: drop_effect_deps,
        consequence: "Without its dependency array the effect runs after every render; when it sets state, that state change renders again and the effect runs again, in an endless loop of requests.",
        breaks_build: false,
        in_context: anywhere,
    },
    Rule {
        id: "drop-jsx-key",
        langs: JS,
        topics: &["react", "state", "hook", "component"],
        apply: drop_jsx_key,
        consequence: "The list items lose their `key`: React can no longer tell which item is which between renders, warns in the console, and may keep the wrong item's state or DOM when the list changes order.",
        breaks_build: false,
        in_context: anywhere,
    },
    // One bug in each language's own words: what an un-awaited call hands back differs.
    Rule {
        id: "drop-await",
        langs: JS,
        topics: &["async", "await", "database", "orm", "api_design", "quer", "test"],
        apply: drop_await,
        consequence: "The call is no longer awaited: the code gets a pending Promise instead of its result, uses that as if it were the value, and a rejection of the call is no longer caught or propagated here.",
        breaks_build: false,
        in_context: await_context_js,
    },
    Rule {
        id: "drop-await",
        langs: PY,
        topics: &["async", "await", "database", "orm", "api_design", "quer", "test"],
        apply: drop_await,
        consequence: "The call is no longer awaited: the code gets a coroutine object that never runs instead of its result, uses that as if it were the value (Python warns \"coroutine was never awaited\"), and an exception of the call is no longer raised here.",
        breaks_build: false,
        in_context: |masked, at| Here::or_rule(await_context_py(masked, at)),
    },
    Rule {
        id: "drop-await",
        langs: RS,
        topics: &["async", "await", "database", "orm", "api_design", "quer", "test"],
        apply: drop_await,
        consequence: "The call is no longer awaited: the code holds a future that does nothing until polled instead of its output, so the types no longer match where the value is used and the compiler refuses the code.",
        breaks_build: true,
        in_context: await_context_rs,
    },
    // C#: an un-awaited `Task` is a compile error where its result is returned, and a call
    // left running where it stood alone.
    Rule {
        id: "drop-returned-await",
        langs: CS,
        topics: &["async", "await", "database", "orm", "quer"],
        apply: drop_returned_await,
        consequence: "The compiler refuses it: in an `async` method `return` must give the result itself, and without `await` it gives the task (CS4016: the return expression must be of the result type rather than `Task<T>`).",
        breaks_build: true,
        in_context: anywhere,
    },
    Rule {
        id: "drop-await",
        langs: CS,
        topics: &["async", "await", "database", "orm", "quer"],
        apply: drop_statement_await,
        consequence: "The call is started but no longer awaited (the compiler only warns, CS4014): the method goes on at once, so the lines after it run before the call has finished, and an exception the call throws is no longer raised here, so a `catch` around it never sees it.",
        breaks_build: false,
        in_context: await_context_cs,
    },
    Rule {
        id: "all-to-race",
        langs: JS,
        topics: &["concurren", "promise", "join"],
        apply: all_to_race,
        consequence: "Promise.race settles with the first promise to finish and drops the others' results, so the destructured values are wrong (undefined) and a later failure goes unnoticed.",
        breaks_build: false,
        in_context: anywhere,
    },
    Rule {
        id: "drop-where-filter",
        langs: JS,
        topics: &["database", "orm", "quer", "security", "auth"],
        apply: drop_where_filter,
        consequence: "The query lost its filter: it now reads or changes every row of the table instead of the caller's own, a data leak (or a mass update) with no error to warn anyone.",
        breaks_build: false,
        in_context: |masked, at| Here::or_rule(filter_context(masked, at)),
    },
    Rule {
        id: "question-mark-to-unwrap",
        langs: RS,
        topics: &["result", "error", "?"],
        apply: question_mark_to_unwrap,
        consequence: "`unwrap()` on a fallible call panics on the first error instead of returning it to the caller with `?`: one bad input or a failed I/O call crashes the thread (in a server, the request) instead of becoming an error response.",
        breaks_build: false,
        in_context: |masked, at| Here::or_rule(unwrap_context(masked, at)),
    },
    Rule {
        id: "drop-defer",
        langs: GO,
        topics: &["concurren", "mutex", "goroutine", "resource"],
        apply: drop_defer,
        consequence: "Without `defer` the call runs here, at once, instead of when the function returns: what it releases or undoes is released before the work below it has happened.",
        breaks_build: false,
        in_context: |masked, at| Here::or_rule(defer_context(masked, at)),
    },
    // One bug, told in each language's own terms (issue 40: `__cause__` in a Go answer).
    Rule {
        id: "drop-error-wrap",
        langs: GO,
        topics: &["context", "wrap"],
        apply: drop_error_wrap,
        consequence: "The original error is no longer wrapped: its message may survive, but errors.Is / errors.As can no longer find it, so callers that check for the specific error (to answer 404, say) stop recognising it.",
        breaks_build: false,
        in_context: anywhere,
    },
    Rule {
        id: "drop-error-wrap",
        langs: PY,
        topics: &["context", "wrap"],
        apply: drop_error_wrap,
        consequence: "The original exception is no longer chained: the new one's __cause__ is empty, so the traceback loses the error that started it and code that inspects the cause stops finding it.",
        breaks_build: false,
        in_context: anywhere,
    },
    Rule {
        id: "drop-go-keyword",
        langs: GO,
        topics: &["goroutine", "concurren"],
        apply: drop_go_keyword,
        consequence: "Without `go` the call runs synchronously on the current goroutine: the work is no longer concurrent, and the next line runs only after it returns, so anything it waits for that this function provides later never comes.",
        breaks_build: false,
        in_context: go_context,
    },
    Rule {
        id: "swap-err-check",
        langs: GO,
        topics: &["error", "go"],
        apply: swap_err_check,
        consequence: "The error check is inverted: on success the function returns early (as if it failed), and on failure it carries on with a zero value and ignores the error.",
        breaks_build: false,
        in_context: |masked, at| Here::or_rule(err_check_context(masked, at)),
    },
    Rule {
        id: "swallow-raise",
        langs: JS,
        topics: &["error", "exception", "failure"],
        apply: swallow_raise,
        consequence: "The error is swallowed: instead of throwing, the function returns `undefined`, so the caller carries on as if it had succeeded and the real cause is lost.",
        breaks_build: false,
        in_context: anywhere,
    },
    Rule {
        id: "swallow-raise",
        langs: PY,
        topics: &["error", "exception", "failure"],
        apply: swallow_raise,
        consequence: "The error is swallowed: instead of raising, the function returns `None`, so the caller carries on as if it had succeeded and the real cause is lost.",
        breaks_build: false,
        in_context: |masked, at| if in_route_handler(masked, at) { Here::Unsure } else { Here::AsRule },
    },
    Rule {
        id: "broaden-except",
        langs: PY,
        topics: &["error", "exception", "failure"],
        apply: broaden_except,
        consequence: "`except Exception` catches every error, including bugs such as a typo's NameError or a failed database call, and turns them all into the same handled case, hiding the real failure.",
        breaks_build: false,
        in_context: anywhere,
    },
    Rule {
        id: "broaden-catch",
        langs: CS_JAVA,
        topics: &["error", "exception", "failure"],
        apply: broaden_catch,
        consequence: "`catch (Exception)` catches every exception the `try` throws, not only the one this handler was written for: any other failure inside it (another call's own exception, a bug's null dereference) now takes this handler's path and is reported as that case, hiding the real cause.",
        breaks_build: false,
        in_context: |masked, at| if catch_follows(masked, at) { Here::Unsure } else { Here::AsRule },
    },
    Rule {
        id: "drop-last-derive",
        langs: RS,
        topics: &["derive", "struct", "type"],
        apply: drop_last_derive,
        consequence: "The type no longer derives that trait, so every use of its values that needs the trait no longer compiles.",
        breaks_build: true,
        in_context: |masked, at| Here::or_rule(derive_context(masked, at)),
    },
    Rule {
        id: "error-status-to-ok",
        langs: ANY,
        topics: &["status", "route", "handler"],
        apply: error_status_to_ok,
        consequence: "The error response now carries a success status: clients, retries and monitoring all see success, so the failure goes unnoticed while the body says something went wrong.",
        breaks_build: false,
        in_context: anywhere,
    },
    Rule {
        id: "mutable-default",
        langs: PY,
        topics: &[],
        apply: mutable_default,
        consequence: "A mutable default argument is created once, when the function is defined, and shared by every call: items added in one call show up in the next.",
        breaks_build: false,
        in_context: anywhere,
    },
    Rule {
        id: "off-by-one",
        langs: ANY,
        // A test's loop bound (its consequence names the check run once too often); elsewhere
        // only on a line that holds the concept's syntax.
        topics: &["test"],
        apply: off_by_one,
        consequence: "The loop bound is off by one: the loop runs one step too far and reads past the last element.",
        breaks_build: false,
        in_context: |masked, at| Here::or_rule(bound_context(masked, at)),
    },
    Rule {
        id: "swap-comparison",
        langs: ANY,
        // An inverted assertion is a test's own bug (its consequence names the false failure);
        // elsewhere a comparison is planted only on a line that holds the concept's syntax.
        topics: &["test"],
        apply: swap_comparison,
        consequence: "The comparison is inverted, so the code decides the opposite way: what should pass is rejected (or the error path runs on valid input) and what should be rejected goes through.",
        breaks_build: false,
        in_context: |masked, at| Here::or_rule(comparison_context(masked, at)),
    },
];

/// The rules worth trying on `lang` code for `entry`: the concept's own bugs, then the
/// generic ones.
pub fn rules_for(lang: Lang, entry: &Entry) -> impl Iterator<Item = &'static Rule> + '_ {
    let own = RULES.iter().filter(move |r| r.fits(lang, entry));
    let generic = RULES.iter().filter(move |r| r.is_generic(lang));
    own.chain(generic)
}

/// `original` with `len` bytes at `at` replaced by `with`.
fn splice(original: &str, at: usize, len: usize, with: &str) -> Option<String> {
    let before = original.get(..at)?;
    let after = original.get(at + len..)?;
    Some(format!("{before}{with}{after}"))
}

fn drop_effect_deps(m: &str, o: &str) -> Option<String> {
    let t = m.trim_end();
    if !(t.trim_start().starts_with("}, [") && t.ends_with("]);")) {
        return None;
    }
    let at = m.find("}, [")?;
    splice(o, at, t.len() - at, "});")
}

fn drop_jsx_key(m: &str, o: &str) -> Option<String> {
    let at = m.find(" key={")?;
    let close = m[at..].find('}')? + at;
    splice(o, at, close + 1 - at, "")
}

fn drop_await(m: &str, o: &str) -> Option<String> {
    if let Some(at) = m.find(".await") {
        return splice(o, at, ".await".len(), "");
    }
    let at = find_token(m, "await")?;
    (m.as_bytes().get(at + 5) == Some(&b' ')).then_some(())?;
    splice(o, at, "await ".len(), "")
}

fn all_to_race(m: &str, o: &str) -> Option<String> {
    let at = m.find("Promise.all(")?;
    splice(o, at, "Promise.all".len(), "Promise.race")
}

fn drop_where_filter(m: &str, o: &str) -> Option<String> {
    let at = m.find("where: {")? + "where: ".len();
    let close = m[at..].find('}')? + at;
    (close > at + 2).then_some(())?;
    splice(o, at, close + 1 - at, "{}")
}

fn question_mark_to_unwrap(m: &str, o: &str) -> Option<String> {
    let b = m.as_bytes();
    let at = (1..b.len()).find(|&i| {
        b[i] == b'?'
            && (b[i - 1] == b')' || b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_')
            && matches!(b.get(i + 1), None | Some(b';' | b'.' | b')' | b',' | b' '))
    })?;
    splice(o, at, 1, ".unwrap()")
}

fn drop_defer(m: &str, o: &str) -> Option<String> {
    let at = find_token(m, "defer").filter(|&at| m[..at].trim().is_empty())?;
    splice(o, at, "defer ".len(), "")
}

fn drop_error_wrap(m: &str, o: &str) -> Option<String> {
    if let Some(at) = m.find("Errorf(").and_then(|_| o.find("%w")) {
        return splice(o, at, 2, "%v");
    }
    let t = m.trim_start();
    let at = t.starts_with("raise ").then(|| m.rfind(" from "))??;
    splice(o, at, o.len() - at, "")
}

fn drop_go_keyword(m: &str, o: &str) -> Option<String> {
    let at = find_token(m, "go").filter(|&at| m[..at].trim().is_empty() && m[at..].starts_with("go "))?;
    splice(o, at, "go ".len(), "")
}

fn swap_err_check(m: &str, o: &str) -> Option<String> {
    let at = m.find("err != nil")? + "err ".len();
    splice(o, at, 2, "==")
}

fn swallow_raise(m: &str, o: &str) -> Option<String> {
    let t = m.trim_start();
    let at = m.len() - t.len();
    if t.starts_with("throw ") {
        return splice(o, at, o.len() - at, "return;");
    }
    if t.starts_with("raise ") || t == "raise" {
        return splice(o, at, o.len() - at, "return None");
    }
    None
}

fn broaden_except(m: &str, o: &str) -> Option<String> {
    let t = m.trim_start();
    let rest = t.strip_prefix("except ")?;
    let name_len = rest.find([':', ' ', '('])?;
    let name = &rest[..name_len];
    (!name.is_empty() && name != "Exception" && name.chars().all(|c| c.is_alphanumeric() || c == '_' || c == '.'))
        .then_some(())?;
    splice(o, m.len() - rest.len(), name_len, "Exception")
}

/// `return await call(…);` → `return call(…);` (C#).
fn drop_returned_await(m: &str, o: &str) -> Option<String> {
    let t = m.trim_start();
    t.starts_with("return await ").then_some(())?;
    let at = m.len() - t.len() + "return ".len();
    splice(o, at, "await ".len(), "")
}

/// A call awaited as a statement of its own, `await call(…);` → `call(…);` (C#): a call, so the
/// line stays a statement (`task;` alone is not one); not `await using` or `await foreach`.
fn drop_statement_await(m: &str, o: &str) -> Option<String> {
    let t = m.trim();
    let call = t.strip_prefix("await ")?;
    (call.ends_with(");") && !call.starts_with("using ") && !call.starts_with("foreach ")).then_some(())?;
    splice(o, m.len() - m.trim_start().len(), "await ".len(), "")
}

/// `catch (SomeException)` or `catch (SomeException e)` → `catch (Exception …)` (C#, Java).
fn broaden_catch(m: &str, o: &str) -> Option<String> {
    let at = m.find("catch (")? + "catch (".len();
    // One type (Java's multi-catch `A | B` is not broadened).
    m[at..].split(')').next().filter(|inside| !inside.contains('|'))?;
    let len = m[at..].find([' ', ')'])?;
    let name = &m[at..at + len];
    let simple = name.rsplit('.').next().unwrap_or(name);
    (!simple.is_empty()
        && !["Exception", "Throwable"].contains(&simple)
        && name.chars().all(|c| c.is_alphanumeric() || c == '_' || c == '.'))
    .then_some(())?;
    splice(o, at, len, "Exception")
}

/// Whether another `catch` of the same `try` follows the one on line `at`: broadened, the first
/// would already catch what the later one names, which C# (CS0160) and Java refuse to compile.
fn catch_follows(masked: &[String], at: usize) -> bool {
    let own = indent(&masked[at]);
    for line in &masked[at + 1..] {
        let t = line.trim();
        if t.is_empty() || indent(line) > own {
            continue;
        }
        if indent(line) < own {
            return false;
        }
        let t = t.trim_start_matches('}').trim_start();
        if t.starts_with("catch") {
            return true;
        }
        if !t.is_empty() && t != "{" {
            return false;
        }
    }
    false
}

fn drop_last_derive(m: &str, o: &str) -> Option<String> {
    let t = m.trim();
    if !t.starts_with("#[derive(") {
        return None;
    }
    let close = m.rfind(")]")?;
    let comma = m[..close].rfind(',')?;
    splice(o, comma, close - comma, "")
}

fn error_status_to_ok(m: &str, o: &str) -> Option<String> {
    for marker in ["status: ", "status_code=", "status=", "StatusCode::", "http.Status"] {
        let Some(at) = m.find(marker).map(|p| p + marker.len()) else { continue };
        let rest = &m[at..];
        let len = rest.find(|c: char| !(c.is_alphanumeric() || c == '_')).unwrap_or(rest.len());
        let code = &rest[..len];
        let is_error = code.starts_with('4') || code.starts_with('5');
        let named_error = !code.is_empty() && !code.starts_with(char::is_numeric) && !code.starts_with("OK");
        if len == 3 && is_error && code.chars().all(|c| c.is_ascii_digit()) {
            return splice(o, at, len, "200");
        }
        if named_error && (marker == "StatusCode::" || marker == "http.Status") {
            return splice(o, at, len, "OK");
        }
    }
    None
}

fn mutable_default(m: &str, o: &str) -> Option<String> {
    let t = m.trim_start();
    if !(t.starts_with("def ") || t.starts_with("async def ")) {
        return None;
    }
    let at = find_token(m, "None").filter(|&at| m[..at].trim_end().ends_with('='))?;
    splice(o, at, "None".len(), "[]")
}

fn off_by_one(m: &str, o: &str) -> Option<String> {
    find_token(m, "for")?;
    if let Some(at) = m.find(" < ") {
        return splice(o, at, 3, " <= ");
    }
    let at = m.find("range(len(")? + "range(".len();
    let mut depth = 0;
    let close = m[at..].char_indices().find_map(|(i, c)| {
        match c {
            '(' => depth += 1,
            ')' if depth == 0 => return Some(i + at),
            ')' => depth -= 1,
            _ => {}
        }
        None
    })?;
    splice(o, close, 0, " + 1")
}

fn swap_comparison(m: &str, o: &str) -> Option<String> {
    let t = m.trim_start().trim_start_matches('}').trim_start();
    let is_condition =
        ["if", "elif", "while", "assert"].iter().any(|kw| find_token(t, kw) == Some(0)) || t.starts_with("else if");
    if !is_condition {
        return None;
    }
    const SWAPS: [(&str, &str); 6] =
        [("===", "!=="), ("!==", "==="), ("!=", "=="), ("==", "!="), (" >= ", " < "), (" <= ", " > ")];
    for (from, to) in SWAPS {
        if let Some(at) = m.find(from) {
            return splice(o, at, from.len(), to);
        }
    }
    if let Some(at) = m.find("(!") {
        return splice(o, at + 1, 1, "");
    }
    let at = find_token(m, "not")?;
    splice(o, at, "not ".len(), "")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A rule's edit function.
    type Edit = fn(&str, &str) -> Option<String>;

    fn applied(rule: Edit, line: &str) -> Option<String> {
        rule(line, line)
    }

    #[test]
    fn a_dropped_await_says_what_its_line_does_with_the_result() {
        let lines = |l: &str| vec![l.to_owned()];
        let used = "    const r = await fetch(url);";
        assert!(matches!(await_context_js(&lines(used), 0), Here::AsRule), "the value is used: the rule's own text");
        let said = |here: Here| match here {
            Here::Says(said) => said,
            Here::AsRule => "the rule's own text",
            Here::Unsure => "unsure",
        };
        let alone = said(await_context_js(&lines("    await page.flush();"), 0));
        assert!(alone.contains("result was not used") && !alone.contains("as if it were the value"), "{alone}");
        // The next statement awaits anyway: whether the call is done by then is not known.
        let then_awaits = ["    await vi.advanceTimersByTimeAsync(2_000);", "    await outcome;"].map(String::from);
        assert_eq!(said(await_context_js(&then_awaits, 0)), "unsure");
        let held = said(await_context_js(&lines("    await outcome;"), 0));
        assert!(held.contains("held in that variable") && !held.contains("The call"), "{held}");
        // A returned await: the caller still gets the value.
        assert_eq!(said(await_context_js(&lines("    return (await Promise.race([a, b])) as T;"), 0)), "unsure");
        // An assertion's promise: vitest waits for it whatever the line does, Jest does not.
        let expected =
            ["    const outcome = expect(pending).rejects.toThrow(/x/);", "    await outcome;"].map(String::from);
        assert_eq!(said(await_context_js(&expected, 1)), "unsure");
        let gather = "    responses = await asyncio.gather(*(client.get(u) for u in urls))";
        let said = await_context_py(&lines(gather), 0).unwrap_or_default();
        assert!(said.contains("Future") && !said.contains("never runs"), "{said}");
    }

    /// The consequence of rule `id` (the first of that id for `lang`) at line `at` of `lines`.
    fn said(id: &str, lang: Lang, lines: &[&str], at: usize) -> &'static str {
        let masked: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
        let rule = RULES.iter().find(|r| r.id == id && (r.langs.is_empty() || r.langs.contains(&lang)));
        rule.and_then(|r| r.consequence_at(&masked, at)).unwrap_or_default()
    }

    /// A raise swallowed in a web route's handler is not planted: what the framework makes of a
    /// `None` differs (a 500 where FastAPI checks the declared type, `null` with a 200 where it
    /// does not), and "the caller carries on" is not it. In a plain function, or a decorator's
    /// wrapper, it is.
    #[test]
    fn a_swallowed_raise_is_not_asked_in_a_route_handler() {
        let route = [
            "@app.get(\"/todos/{todo_id}\")",
            "async def read_todo(todo_id: int) -> Todo:",
            "    try:",
            "        return TODOS[todo_id]",
            "    except KeyError:",
            "        raise HTTPException(status_code=404, detail=\"todo not found\")",
        ];
        assert_eq!(said("swallow-raise", Lang::Python, &route, 5), "");
        let wrapper = [
            "def retry(fn):",
            "    @functools.wraps(fn)",
            "    def wrapper(*args):",
            "        try:",
            "            return fn(*args)",
            "        except ValueError:",
            "            raise",
        ];
        assert!(said("swallow-raise", Lang::Python, &wrapper, 6).contains("carries on"));
    }

    #[test]
    fn a_bugs_consequence_follows_what_the_edited_line_holds() {
        // An inverted Go error check that does not return first thing still runs its block on success.
        let goroutine = [
            "\tout, err := fn(ctx, in)",
            "\tif err != nil {",
            "\t\tonce.Do(func() {",
            "\t\t\tcancel()",
            "\t\t})",
            "\t\treturn",
            "\t}",
        ];
        let go = said("swap-comparison", Lang::Go, &goroutine, 1);
        assert!(go.contains("nil `err`") && !go.contains("decides the opposite way"), "{go}");
        // An inverted assertion is a false failure, not an error path.
        let assertion = said("swap-comparison", Lang::Python, &["    assert repo.get(1) == \"order\""], 0);
        assert!(assertion.contains("false failure"), "{assertion}");
        // A dropped defer says what the deferred call was.
        let cancel = said("drop-defer", Lang::Go, &["\tdefer cancel()"], 0);
        assert!(cancel.contains("context is cancelled") && !cancel.contains("lock"), "{cancel}");
        let unlock = said("drop-defer", Lang::Go, &["\tdefer c.mu.Unlock()"], 0);
        assert!(unlock.contains("lock is released"), "{unlock}");
        let other = said("drop-defer", Lang::Go, &["\tdefer func() { <-sem }()"], 0);
        assert!(!other.contains("WaitGroup") && !other.contains("lock"), "{other}");
        // The dropped derive is named by what it gave.
        let eq = said("drop-last-derive", Lang::Rust, &["#[derive(Debug, Clone, Copy, PartialEq)]"], 0);
        assert!(eq.contains("`==`") && !eq.contains("serialis") && !eq.contains("clon"), "{eq}");
        let error = said("drop-last-derive", Lang::Rust, &["#[derive(Debug, thiserror::Error)]"], 0);
        assert!(error.contains("#[error(…)]"), "{error}");
        // A dropped `go` before a literal whose own body sends: the send blocks, not a receive.
        let sender =
            ["\t\tgo func(sku string) {", "\t\t\tdefer wg.Done()", "\t\t\tresults <- adjust(sku)", "\t\t}(sku)"];
        let go = said("drop-go-keyword", Lang::Go, &sender, 0);
        assert!(go.contains("its send") && !go.contains("its receive"), "{go}");
        // The same with a channel that has room for every send: no bug to name.
        let mut roomy = vec!["\tresults := make(chan Result, len(skus))"];
        roomy.extend(sender);
        assert_eq!(said("drop-go-keyword", Lang::Go, &roomy, 1), "");
        // `unwrap()` in `main`: a panic and exit code 101, not a lost request.
        let main = ["async fn main() -> Result<(), Box<dyn Error>> {", "    let l = bind(addr).await?;"];
        assert!(said("question-mark-to-unwrap", Lang::Rust, &main, 1).contains("101"));
        let prisma = ["  prisma.product.findUnique({ where: { id } }),"];
        assert!(said("drop-where-filter", Lang::TypeScript, &prisma, 0).contains("validation error"));
        // A bound that is a count runs the body once more; one that is a length reads past the end.
        let count = said("off-by-one", Lang::Java, &["        for (int i = 0; i < 3; i++) {"], 0);
        assert!(count.contains("once more") && !count.contains("last element"), "{count}");
        let checked = [
            "        for (int i = 0; i < 3; i++) {",
            "            assertFalse(bucket.tryAcquire().allowed());",
            "        }",
        ];
        let checked = said("off-by-one", Lang::Java, &checked, 0);
        assert!(checked.contains("fail a correct implementation"), "{checked}");
        let length = said("off-by-one", Lang::Go, &["\tfor i := 0; i < len(xs); i++ {"], 0);
        assert!(length.contains("last element"), "{length}");
        // A swallowed error returns each language's nothing.
        assert!(said("swallow-raise", Lang::Python, &["        raise"], 0).contains("`None`"));
        assert!(!said("swallow-raise", Lang::Python, &["        raise"], 0).contains("undefined"));
        assert!(said("swallow-raise", Lang::TypeScript, &["    throw e;"], 0).contains("`undefined`"));
    }

    #[test]
    fn each_rule_edits_the_line_it_is_for_and_leaves_others_alone() {
        let cases: &[(Edit, &str, &str)] = &[
            (drop_effect_deps, "  }, [userId]);", "  });"),
            (drop_jsx_key, "<li key={u.id}>{u.name}</li>", "<li>{u.name}</li>"),
            (drop_await, "const r = await fetch(url);", "const r = fetch(url);"),
            (drop_await, "let body = res.text().await?;", "let body = res.text()?;"),
            (all_to_race, "await Promise.all([a, b])", "await Promise.race([a, b])"),
            (drop_where_filter, "findMany({ where: { userId } })", "findMany({ where: {} })"),
            (question_mark_to_unwrap, "let n = s.parse::<u32>()?;", "let n = s.parse::<u32>().unwrap();"),
            (drop_defer, "\tdefer mu.Unlock()", "\tmu.Unlock()"),
            (drop_go_keyword, "\tgo worker(jobs)", "\tworker(jobs)"),
            (
                drop_error_wrap,
                r#"return fmt.Errorf("adjust %s: %w", sku, err)"#,
                r#"return fmt.Errorf("adjust %s: %v", sku, err)"#,
            ),
            (drop_error_wrap, "    raise NotFound(id) from err", "    raise NotFound(id)"),
            (swap_err_check, "\tif err != nil {", "\tif err == nil {"),
            (swallow_raise, "    throw error;", "    return;"),
            (swallow_raise, "        raise HTTPException(404)", "        return None"),
            (broaden_except, "    except KeyError:", "    except Exception:"),
            (drop_last_derive, "#[derive(Debug, Serialize)]", "#[derive(Debug)]"),
            (error_status_to_ok, "return json({ e }, { status: 500 });", "return json({ e }, { status: 200 });"),
            (error_status_to_ok, "c.JSON(http.StatusNotFound, e)", "c.JSON(http.StatusOK, e)"),
            (error_status_to_ok, "(StatusCode::NOT_FOUND, msg)", "(StatusCode::OK, msg)"),
            (mutable_default, "def add(x, tags=None):", "def add(x, tags=[]):"),
            (off_by_one, "for (let i = 0; i < n; i++) {", "for (let i = 0; i <= n; i++) {"),
            (off_by_one, "for i in range(len(xs)):", "for i in range(len(xs) + 1):"),
            (swap_comparison, "if (total >= limit) {", "if (total < limit) {"),
            (swap_comparison, "if (!product) {", "if (product) {"),
            (swap_comparison, "if not user:", "if user:"),
            (drop_returned_await, "        return await _db.Orders", "        return _db.Orders"),
            (drop_statement_await, "        await _db.SaveChangesAsync();", "        _db.SaveChangesAsync();"),
            (broaden_catch, "        catch (DbUpdateConcurrencyException)", "        catch (Exception)"),
            (broaden_catch, "    } catch (IOException e) {", "    } catch (Exception e) {"),
        ];
        for (rule, line, want) in cases {
            assert_eq!(applied(*rule, line).as_deref(), Some(*want), "{line}");
        }
        let untouched: &[(Edit, &str)] = &[
            (drop_await, "const awaited = 1;"),
            (swap_comparison, "const ok = a === b;"),
            (off_by_one, "if (a < b) {"),
            (error_status_to_ok, "return json(x, { status: 201 });"),
            (drop_defer, "deferred()"),
            // A task held in a variable: `task;` alone is no statement in C#.
            (drop_statement_await, "        await task;"),
            (drop_statement_await, "        await using var db = Open();"),
            (drop_statement_await, "        var n = await CountAsync();"),
            (drop_returned_await, "        return await;"),
            (broaden_catch, "        catch (Exception e)"),
            (broaden_catch, "    } catch (IOException | SQLException e) {"),
        ];
        for (rule, line) in untouched {
            assert_eq!(applied(*rule, line), None, "{line}");
        }
    }

    /// C#'s bugs by where they sit: a semaphore not waited for, an assertion's task and a
    /// `ConfigureAwait` awaitable not asked; a broadened `catch` not asked where a later `catch`
    /// of the same `try` would become unreachable (a compile error in C# and Java).
    #[test]
    fn csharp_and_java_bugs_follow_where_they_sit() {
        // Rust: an output used is a type error; a call awaited alone compiles and never runs.
        let bound = said("drop-await", Lang::Rust, &["        let order = store.load(id).await;"], 0);
        assert!(bound.contains("compiler refuses"), "{bound}");
        let tried = said("drop-await", Lang::Rust, &["    store.save(&order).await?;"], 0);
        assert!(tried.contains("compiler refuses"), "{tried}");
        let chained =
            ["        let body = client", "            .get(url)", "            .send()", "            .await;"];
        assert!(said("drop-await", Lang::Rust, &chained, 3).contains("compiler refuses"));
        let alone = said("drop-await", Lang::Rust, &["        tx.send(order).await;"], 0);
        assert!(alone.contains("still compiles") && alone.contains("never happens"), "{alone}");
        let chained_alone = ["        store", "            .flush()", "            .await;"];
        assert!(said("drop-await", Lang::Rust, &chained_alone, 2).contains("still compiles"));
        let lock = said("drop-await", Lang::CSharp, &["        await _gate.WaitAsync(ct);"], 0);
        assert!(lock.contains("semaphore") && lock.contains("Release()"), "{lock}");
        assert_eq!(said("drop-await", Lang::CSharp, &["        await Assert.ThrowsAsync<E>(() => f());"], 0), "");
        assert_eq!(said("drop-await", Lang::CSharp, &["        await x.SaveAsync().ConfigureAwait(false);"], 0), "");
        assert!(said("drop-await", Lang::CSharp, &["        await _db.SaveChangesAsync();"], 0).contains("CS4014"));
        let allman = [
            "        catch (DbUpdateConcurrencyException)",
            "        {",
            "            throw new InvalidOperationException(\"changed\");",
            "        }",
            "        catch (TimeoutException)",
            "        {",
            "        }",
        ];
        assert_eq!(said("broaden-catch", Lang::CSharp, &allman, 0), "");
        assert!(said("broaden-catch", Lang::CSharp, &allman, 4).contains("every exception"));
        let java = ["    } catch (IOException e) {", "        log(e);", "    } catch (SQLException e) {", "    }"];
        assert_eq!(said("broaden-catch", Lang::Java, &java, 0), "");
        let alone =
            ["    } catch (IOException e) {", "        log(e);", "    } finally {", "        close();", "    }"];
        assert!(said("broaden-catch", Lang::Java, &alone, 0).contains("every exception"));
    }

    #[test]
    fn masked_text_decides_where_original_text_is_edited() {
        let original = r#"log("await me"); const x = await f();"#;
        let masked = r#"log("        "); const x = await f();"#;
        assert_eq!(drop_await(masked, original).as_deref(), Some(r#"log("await me"); const x = f();"#));
    }
}
