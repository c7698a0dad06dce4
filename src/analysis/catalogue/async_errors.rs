//! Catalogue data: async patterns and error handling, the two groups AI-written code most
//! often gets subtly wrong (a missing `await`, a swallowed error).

use super::{BUT_GO, BugEdit, Entry, Variant, sig};
use crate::analysis::Lang;
use crate::analysis::concepts::Level;

/// "Concurrent promises and joins" in Python and Rust terms; Go's goroutines are another
/// concept, so Go gets none.
const JOIN_VARIANTS: &[Variant] = &[
    Variant {
        langs: &[Lang::Python],
        name: Some("Concurrent tasks with asyncio.gather"),
        description: Some(
            "asyncio.gather runs independent awaitables at the same time on the event loop, turning a sum of latencies into a maximum; how it reports a failure decides what survives.",
        ),
        tokens: Some(&["gather", "create_task", "TaskGroup"]),
        facts: Some([
            "asyncio.gather runs the awaitables it is given concurrently and returns their results in argument order.",
            "By default gather raises the first exception while the other awaitables keep running.",
            "gather(..., return_exceptions=True) returns exceptions as results, so partial results survive a failure.",
        ]),
        myths: Some([
            "asyncio.gather runs its coroutines one after another, in argument order.",
            "When one awaitable in gather raises, the others are cancelled automatically.",
            "gather returns its results in the order the awaitables finished.",
        ]),
        open: Some([
            "A handler needs data from five services. How do you fetch it concurrently while staying resilient when one is slow or down?",
            "Start all calls together (gather or a TaskGroup) with a timeout on each; collect failures with return_exceptions=True so an optional service degrades one section instead of the response; fail fast only on data you cannot answer without; bound the fan-out with a semaphore; and log which call failed.",
        ]),
        follow_up: Some("When would you pass return_exceptions=True to asyncio.gather?"),
        ..Variant::NONE
    },
    Variant {
        langs: &[Lang::Rust],
        name: Some("Concurrent futures and joins"),
        description: Some(
            "tokio::join! and select! poll several futures at once on one task, turning a sum of latencies into a maximum; which one you pick decides what happens to the futures that have not finished.",
        ),
        tokens: Some(&["join!", "select!", "try_join!"]),
        facts: Some([
            "tokio::join! polls its futures concurrently on the current task and waits for all of them.",
            "tokio::try_join! returns the first error and drops the other futures, which cancels them.",
            "tokio::select! completes with the first branch to finish and drops the others.",
        ]),
        myths: Some([
            "tokio::join! runs its futures on separate threads in parallel.",
            "A future does its work even if nobody polls or awaits it.",
            "tokio::join! returns its results in the order the futures finished.",
        ]),
        bugs: Some(&[BugEdit {
            from: "join!(",
            to: "select!(",
            answer: "select! completes when the first branch finishes and drops the others, so one of the operations is silently cancelled instead of both results being awaited.",
        }]),
        open: Some([
            "A handler needs data from five services. How do you fetch them concurrently while staying resilient when one is slow or down?",
            "Poll them together with join! or try_join!, each wrapped in tokio::time::timeout; keep optional results as Result values so one failure degrades a section instead of the response; use try_join! only for the data you cannot answer without; bound a growing fan-out with a semaphore or buffer_unordered; and log which call failed.",
        ]),
        follow_up: Some("When would you use try_join! instead of join!?"),
        ..Variant::NONE
    },
];

pub const ENTRIES: &[Entry] = &[
    Entry {
        name: "Async/await",
        category: "async_pattern",
        difficulty: Level::Junior,
        description: "async/await lets code wait for slow I/O without blocking the thread while still reading top to bottom. A forgotten await is one of the most common bugs in generated code.",
        signals: &[sig("await", &[], &[], 3), sig("async_function", &[], &[], 2)],
        stack_hints: &["typescript", "javascript", "python", "rust", "csharp"],
        tokens: &["await", "async"],
        example: "async function loadUser(id) {\n  const res = await fetch(`/api/users/${id}`);\n  return res.json();\n}",
        facts: [
            "`await` pauses only the current async function until the awaited operation completes; other work keeps running.",
            "Calling an async function hands back an awaitable at once, even when its body returns a plain value; the value arrives only when that awaitable is awaited.",
            "Awaiting independent calls one after another serialises them; starting them together and awaiting once overlaps their latency.",
        ],
        myths: [
            "`await` blocks the whole program, including other requests, until the call finishes.",
            "Calling an async function without `await` runs it to completion before the next line.",
            "Marking a function `async` makes its CPU-heavy work run on a background thread.",
        ],
        order_prompt: "Put these steps of `const user = await loadUser(id)` in the order they happen.",
        steps: &[
            "loadUser is called and starts its request",
            "loadUser reaches its own await and hands back a pending awaitable",
            "the caller suspends at await and the event loop runs other work",
            "the response arrives and the awaitable completes",
            "the caller resumes and assigns the resolved value to user",
        ],
        reading: [
            "Which lines wait for I/O here, and what does the function hand back to its caller?",
            "Each `await` marks a point where the function suspends until that I/O completes, letting the runtime do other work meanwhile. The function itself hands back an awaitable of its final value, so its callers must await it too.",
        ],
        bugs: &[BugEdit {
            from: "await ",
            to: "",
            answer: "The `await` is gone, so the variable holds the pending awaitable instead of the result: using it as the value fails or gives nonsense, and a failure of the call goes unhandled.",
        }],
        open: [
            "When would you run several awaits concurrently instead of in sequence, and what do you give up?",
            "Run them concurrently (the language's combinator that awaits several operations at once) when the calls are independent: the total wait becomes the slowest call instead of the sum. The costs: one failure rejects the group unless you collect every result, failures included, ordering and early exit are harder to express, and an unbounded fan-out can overload a downstream service, so large batches need a concurrency limit.",
        ],
        follow_up: "Why does `await` inside a `for` loop make independent requests slower, and how would you fix it?",
        holds_in: &[],
        variants: &[],
        generic: false,
    },
    Entry {
        name: "Concurrent promises and joins",
        category: "async_pattern",
        difficulty: Level::Mid,
        description: "Combinators such as Promise.all run independent promises at the same time, turning a sum of latencies into a maximum. Which combinator you pick decides what happens when one of them fails.",
        signals: &[sig("promise_combinator", &[], &[], 4)],
        stack_hints: &["typescript", "javascript", "python", "rust"],
        tokens: &["Promise.all", "gather", "join!", "select!", "all"],
        example: "const [user, orders] = await Promise.all([\n  fetchUser(id),\n  fetchOrders(id),\n]);",
        facts: [
            "The calls inside Promise.all's array have already started; Promise.all only waits for all of them.",
            "Promise.all rejects as soon as any input rejects, while the other operations keep running in the background.",
            "Promise.allSettled keeps partial results when some calls fail.",
        ],
        myths: [
            "Promise.all runs its promises one after another, in array order.",
            "When one promise in Promise.all rejects, the other requests are cancelled automatically.",
            "Promise.all returns its results in the order the promises finished.",
        ],
        order_prompt: "Order what happens in `await Promise.all([fetchUser(id), fetchOrders(id)])`.",
        steps: &[
            "fetchUser(id) is called and its request starts",
            "fetchOrders(id) is called and its request starts",
            "Promise.all wraps both promises into one combined promise",
            "the caller suspends until both have settled",
            "the results array comes back in input order",
        ],
        reading: [
            "Which operations here run at the same time, and what happens if one of them fails?",
            "Both calls start before anything is awaited, so they run concurrently and the wait is about as long as the slower one. If either rejects, the combined promise rejects with that first error and the other result is discarded, although its work still runs to completion.",
        ],
        bugs: &[
            BugEdit {
                from: "Promise.all(",
                to: "Promise.race(",
                answer: "Promise.race settles with whichever call finishes first, so the destructuring receives a single value instead of an array of both results: one variable is wrong and the other undefined.",
            },
            BugEdit {
                from: "join!(",
                to: "select!(",
                answer: "select! completes when the first branch finishes and drops the others, so one of the operations is silently cancelled instead of both results being awaited.",
            },
        ],
        open: [
            "A page needs data from five services. How do you fetch it concurrently while staying resilient when one service is slow or down?",
            "Start all calls together and await them as a group, but give each its own timeout; collect results with allSettled so a failing optional service degrades one section instead of the page; fail fast only on the data the page cannot render without; cap concurrency if the fan-out grows; and log which call failed so partial pages are visible in monitoring.",
        ],
        follow_up: "When would you choose Promise.allSettled over Promise.all?",
        holds_in: &[Lang::TypeScript, Lang::JavaScript],
        variants: JOIN_VARIANTS,
        generic: false,
    },
    Entry {
        name: "Handling async failures",
        category: "async_pattern",
        difficulty: Level::Mid,
        description: "A failed async operation surfaces only where it is awaited, so error handling has to sit around the await, not around the call that started it. Unhandled rejections can crash a Node process or vanish silently.",
        signals: &[
            sig("error_handling", &["await", "async", "promise", ".catch("], &["typescript", "javascript"], 3),
            sig("await", &["catch", "try"], &["typescript", "javascript"], 2),
        ],
        stack_hints: &["typescript", "javascript"],
        tokens: &["catch", "await", "try", "except"],
        example: "try {\n  const res = await fetch(url);\n  if (!res.ok) throw new Error(`HTTP ${res.status}`);\n  return await res.json();\n} catch (err) {\n  logger.error(err);\n  throw err;\n}",
        facts: [
            "A rejected promise that is awaited inside try throws at the await, so the catch block can handle it.",
            "fetch resolves even for 404 and 500 responses; the code must check res.ok to treat them as errors.",
            "A promise that rejects while nobody awaits or catches it becomes an unhandled rejection, which terminates recent Node versions.",
        ],
        myths: [
            "try/catch catches a rejection even when the promise is not awaited inside the try block.",
            "fetch rejects automatically when the server answers with status 500.",
            "Wrapping the caller in try/catch is enough; errors from fire-and-forget promises will reach it.",
        ],
        order_prompt: "Order what happens when the request in this code fails with a network error.",
        steps: &[
            "fetch(url) starts the request",
            "the network error rejects the fetch promise",
            "the await throws that rejection inside the try block",
            "control jumps to the catch block",
            "the error is logged and rethrown to the caller",
        ],
        reading: [
            "Which failures does this code catch, and which would slip past it?",
            "Network failures reject fetch and are caught; HTTP error statuses become thrown errors through the res.ok check; a JSON parse failure is caught because res.json() is awaited inside the try. Work started without await, or errors in callbacks scheduled elsewhere, would escape.",
        ],
        bugs: &[
            BugEdit {
                from: "return await ",
                to: "return ",
                answer: "Returning the promise without await lets the try block finish first, so a rejection from that promise bypasses this catch: it reaches the caller unlogged.",
            },
            BugEdit {
                from: "throw err;",
                to: "return null;",
                answer: "The catch now swallows the error and returns null, so callers cannot tell a failure from an empty result and the cause is lost.",
            },
        ],
        open: [
            "How would you design error handling across a chain of async calls so failures are neither swallowed nor reported twice?",
            "Catch where something can be done about it (retry, fallback, user message) rather than at every call; add context when rethrowing instead of logging at each level; separate expected failures (404, validation) from unexpected ones; make sure every promise is awaited or explicitly handled so nothing rejects unobserved; and write tests for the failure paths, timeouts included.",
        ],
        follow_up: "Why does fetch not throw on a 500 response, and how do you handle that case?",
        // Promises, rejections and Node are JavaScript's: Java's and C#'s async failures are
        // another story, not told here.
        holds_in: &[Lang::TypeScript, Lang::JavaScript],
        variants: &[],
        generic: false,
    },
    Entry {
        name: "Exception handling with try/catch",
        category: "error_handling",
        difficulty: Level::Junior,
        description: "try/catch separates the normal path from the failure path. Catching too broadly hides real bugs; catching too little crashes on expected failures.",
        signals: &[sig("error_handling", &["try", "catch"], &["typescript", "javascript", "java", "csharp"], 3)],
        stack_hints: &["typescript", "javascript", "java", "csharp"],
        tokens: &["try", "catch", "finally", "throw"],
        example: "try {\n  user = await repo.get(userId);\n} catch (err) {\n  if (!(err instanceof NotFoundError)) throw err;\n  return Response.json({ error: \"not found\" }, { status: 404 });\n} finally {\n  await repo.close();\n}",
        facts: [
            "Only code inside the try block is protected; an exception raised elsewhere skips that handler.",
            "A finally block runs whether the try block succeeded or raised, which makes it the place for cleanup.",
            "Catching a broad base exception hides bugs such as typos and null dereferences along with the failure you expected.",
        ],
        myths: [
            "A catch block also catches errors thrown later by callbacks that were scheduled inside the try.",
            "Code in finally runs only when an exception was raised.",
            "Catching every exception everywhere is the safest default because the program never crashes.",
        ],
        order_prompt: "Order what happens when `repo.get(userId)` throws NotFoundError in this code.",
        steps: &[
            "repo.get(userId) is awaited inside the try block",
            "it throws NotFoundError",
            "the catch block receives it as err",
            "the catch block returns a 404 response",
            "the finally block closes the repository before the response is returned",
        ],
        reading: [
            "Which error does this code expect, what does it turn it into, and what always runs?",
            "It expects the lookup to fail for a missing record and translates that low-level error into one the caller understands (here an HTTP 404). The cleanup in finally runs on both the success and the failure path.",
        ],
        bugs: &[
            BugEdit {
                from: "if (!(err instanceof NotFoundError)) throw err;\n",
                to: "",
                answer: "Every error is now answered with 404: a lost database connection or a bug in repo.get hides behind a misleading 'not found'.",
            },
            BugEdit {
                from: "throw err;",
                to: "console.log(err);",
                answer: "The catch block now only logs: the error is swallowed and execution continues as if the operation had succeeded, usually with undefined data.",
            },
        ],
        open: [
            "Where in a layered application should exceptions be caught, and where should they propagate?",
            "Catch where you can act: translate low-level errors into domain errors at layer boundaries, map them to responses in one place at the edge, retry transient failures near the call. Let unexpected errors propagate to a top-level handler that logs once with context. Avoid catch-and-ignore, avoid logging the same error at every layer, and keep each catch as narrow as the failure it expects.",
        ],
        follow_up: "Why is a catch that handles every error usually worse than one that rethrows what it did not expect?",
        holds_in: &[Lang::TypeScript, Lang::JavaScript, Lang::Java, Lang::CSharp],
        variants: &[],
        generic: false,
    },
    Entry {
        name: "Result and the ? operator",
        category: "error_handling",
        difficulty: Level::Mid,
        description: "Rust returns failures as Result values and the ? operator propagates them with one character, converting error types on the way. Errors cannot be ignored by accident, which is why Rust code rarely fails silently.",
        signals: &[sig("error_handling", &["? on result", "result<", "ok(", "err("], &["rust"], 4)],
        stack_hints: &["rust"],
        tokens: &["?", "Result", "Err", "Ok"],
        example: "fn read_config(path: &Path) -> Result<Config, ConfigError> {\n    let text = fs::read_to_string(path)?;\n    let config = toml::from_str(&text)?;\n    Ok(config)\n}",
        facts: [
            "The ? operator returns early with the error, converting it into the function's error type through From.",
            "Result is marked must_use: ignoring one triggers a warning, which is how Rust stops errors from being dropped silently.",
            "Libraries usually expose a typed error enum, while applications often wrap errors with context (e.g. anyhow) at their edges.",
        ],
        myths: [
            "The ? operator panics when the value is an Err.",
            "? can be used in any function, whatever its return type.",
            "Calling unwrap() is equivalent to ? but shorter.",
        ],
        order_prompt: "Order what happens when `fs::read_to_string(path)?` fails.",
        steps: &[
            "read_to_string returns Err(io::Error)",
            "the ? operator matches the Err variant",
            "From converts the io::Error into a ConfigError",
            "read_config returns early with Err(ConfigError)",
            "the caller decides whether to handle or propagate it",
        ],
        reading: [
            "Where can this function fail, and what does its caller receive in each case?",
            "Every `?` is a possible early return: an I/O or parse failure is converted into the function's error type and returned as Err, and only when every step succeeds does the function reach Ok. The caller gets one Result and must handle both cases.",
        ],
        bugs: &[BugEdit {
            from: ")?;",
            to: ").unwrap();",
            answer: "unwrap() panics on Err instead of returning it, so a missing file or bad input crashes the thread instead of being reported to the caller.",
        }],
        open: [
            "How do you design error types for a Rust library versus an application, and why?",
            "A library exposes a typed error enum (often with thiserror) whose variants callers can match on, keeps sources, and never panics on bad input. An application can use a boxed or anyhow error and attach context at each boundary, since callers only report it. Implement From so ? converts, keep messages short and lowercase, and reserve panics for broken invariants.",
        ],
        follow_up: "What must be true of two error types for ? to convert one into the other?",
        holds_in: &[Lang::Rust],
        variants: &[],
        generic: false,
    },
    Entry {
        name: "Explicit error returns in Go",
        category: "error_handling",
        difficulty: Level::Junior,
        description: "Go returns errors as ordinary values that the caller checks right after each call. It is verbose, but every failure path is visible in the code.",
        signals: &[sig("error_handling", &["err != nil", "error"], &["go"], 4)],
        stack_hints: &["go"],
        tokens: &["nil", "err", "error"],
        example: "user, err := repo.FindUser(ctx, id)\nif err != nil {\n    return nil, fmt.Errorf(\"find user %d: %w\", id, err)\n}\nreturn user, nil",
        facts: [
            "Go functions return errors as ordinary values, and the caller checks them right after the call.",
            "Wrapping with fmt.Errorf and %w keeps the original error reachable by errors.Is and errors.As.",
            "By convention a function returns a zero value alongside a non-nil error, so callers should not use the value.",
        ],
        myths: [
            "panic and recover are the normal way to report a failed database lookup in Go.",
            "Discarding an error with `_` is a compile error in Go.",
            "Wrapping an error with %v keeps it matchable by errors.Is, just like %w.",
        ],
        order_prompt: "Order what happens when repo.FindUser fails in this code.",
        steps: &[
            "FindUser returns a nil user and a non-nil err",
            "the `if err != nil` check is true",
            "fmt.Errorf wraps err with the id as context",
            "the function returns nil and the wrapped error",
            "the caller checks its own err and can match the cause with errors.Is",
        ],
        reading: [
            "What does this code do when the lookup fails, and what information reaches the caller?",
            "It stops at once and returns a nil value with an error that wraps the original using %w and adds which id failed, so the caller gets context and can still test the underlying cause with errors.Is or errors.As.",
        ],
        bugs: &[BugEdit {
            from: "err != nil",
            to: "err == nil",
            answer: "The check is inverted: successful calls return early with a (nil-wrapping) error, while real failures fall through and use a nil value, which panics with a nil pointer dereference later.",
        }],
        open: [
            "Go makes error handling explicit at every call. What are the benefits and costs, and how do you keep such code readable?",
            "Benefits: every failure path is visible, errors are values you can wrap, inspect and test, and there is no hidden control flow. Costs: repetition and the temptation to return errors without context. Keep it readable by wrapping with %w and a short description of the operation, handling an error once (log or return, not both), using sentinel or typed errors for conditions callers branch on, and keeping the happy path unindented.",
        ],
        follow_up: "Why use %w instead of %v when wrapping an error with fmt.Errorf?",
        holds_in: &[Lang::Go],
        variants: &[],
        generic: false,
    },
    Entry {
        name: "Adding context to errors",
        category: "error_handling",
        difficulty: Level::Mid,
        description: "An error that says what the code was trying to do, and with which input, turns a vague failure into a quick fix. Wrapping keeps the original cause so both the story and the root error survive.",
        signals: &[
            sig("error_handling", &["%w", ".context(", "with_context", "cause", "wrap"], &[], 3),
            sig("error_handling", &[" from "], &["python"], 3),
        ],
        stack_hints: &["python", "go", "rust", "typescript", "javascript"],
        tokens: &["from", "raise", "%w", "context", "cause"],
        example: "try:\n    rows = db.fetch_orders(customer_id)\nexcept DatabaseError as exc:\n    raise OrderLookupError(f\"orders for {customer_id}\") from exc",
        facts: [
            "Wrapping keeps the original error as the cause of the new one, so the report shows both.",
            "Useful context says what the code was trying to do and with which input, not only that it failed.",
            "Each error should be logged once, where it is handled; code that wraps and rethrows should not log as well.",
        ],
        myths: [
            "Replacing the original exception with a new message is enough, since the root cause is rarely needed.",
            "Logging the error at every layer before rethrowing gives the best diagnostics.",
            "Adding context requires catching every exception type so nothing is missed.",
        ],
        order_prompt: "Order how the error travels when the database call here fails.",
        steps: &[
            "db.fetch_orders raises DatabaseError",
            "the except clause binds it as exc",
            "OrderLookupError is raised with the customer id in its message",
            "`from exc` records the database error as its cause",
            "the top-level handler logs one traceback showing both errors",
        ],
        reading: [
            "What does a developer reading the logs learn when this code fails?",
            "They see an OrderLookupError naming the customer whose orders could not be loaded, chained to the original DatabaseError with its own message and stack, so both what was being attempted and why it failed are in one report.",
        ],
        bugs: &[
            BugEdit {
                from: " from exc",
                to: " from None",
                answer: "`from None` suppresses the original exception, so the traceback no longer shows the database error that caused the failure and the root cause is lost.",
            },
            BugEdit {
                from: "%w",
                to: "%v",
                answer: "%v flattens the cause into text, so errors.Is and errors.As can no longer find the original error and callers that branch on it break.",
            },
        ],
        open: [
            "Design the error reporting of a service so an on-call engineer can diagnose a failure from one log line. What goes into errors, and where?",
            "Each layer adds what it was doing and the key inputs (ids, not secrets) while keeping the cause chained; the edge maps the error to a response and logs it once with a request id, the full chain and its category (client error, dependency failure, bug). Messages are stable enough to search and alert on, sensitive data is redacted, and expected failures are logged at a lower level than unexpected ones.",
        ],
        follow_up: "What is the difference between logging an error and wrapping it, and why should each error be logged only once?",
        holds_in: &[Lang::Go],
        variants: &[Variant::statements_only(BUT_GO)],
        generic: false,
    },
];
