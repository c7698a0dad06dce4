//! Catalogue data: errors the developer met. These entries have no static-analysis signals;
//! they are reached through `analysis::failures` (a failed tool call's error classified into a
//! kind), and their snippet is the error itself. A missing dependency has one entry per
//! ecosystem, in `dependencies`. Each example is code that is one small change
//! away from producing that error, so spot_the_bug shows the cause.

use super::{BUT_TS_JS, BugEdit, Entry, Variant};
use crate::analysis::Lang;
use crate::analysis::concepts::Level;

pub const ENTRIES: &[Entry] = &[
    Entry {
        name: "Reading compiler type errors",
        category: "type_system",
        difficulty: Level::Junior,
        description: "A type error names the place where a value's type does not match what the code declared, before the program runs. Reading it as expected type versus actual type, and tracing where the actual type came from, finds the real mistake, which is often not on the reported line.",
        signals: &[],
        stack_hints: &[],
        tokens: &["string", "number", "String"],
        example: "function cartTotal(prices: number[]): number {\n  return prices.reduce((sum, p) => sum + p, 0);\n}\n\nconst label: string = String(cartTotal([300, 450]));",
        facts: [
            "A type error compares the type the code declared with the type of the value actually given, and reports the line where they meet.",
            "The fix is not always on the reported line: the wrong type often comes from a declaration or return type further up.",
            "Silencing a type error with a cast or `any` moves the failure to runtime instead of fixing it.",
        ],
        myths: [
            "A type error means the program will certainly crash at runtime on that line.",
            "The line the compiler reports is always the line that must change.",
            "Adding `as any` or a cast is a fix: the compiler was just being strict.",
        ],
        order_prompt: "Order the steps of fixing a type error reported by the compiler.",
        steps: &[
            "read the first error the compiler reports",
            "go to the file and line it names",
            "compare the expected type with the type it found",
            "trace where the found value's type comes from",
            "fix the value or the declaration, whichever is wrong",
            "run the type checker again",
        ],
        reading: [
            "What would the compiler say if `String(...)` were removed, and why?",
            "cartTotal returns a number and label is declared as a string, so TypeScript reports that type 'number' is not assignable to type 'string' (TS2322) on that line. Either convert the number explicitly, as String(...) does, or declare label as a number.",
        ],
        bugs: &[BugEdit {
            from: "String(cartTotal([300, 450]))",
            to: "cartTotal([300, 450])",
            answer: "cartTotal returns a number but label is declared as string: the compiler rejects the assignment (Type 'number' is not assignable to type 'string'), and the code does not build.",
        }],
        open: [
            "Your build fails with forty type errors after a dependency upgrade. How do you work through them, and when is a cast the right answer?",
            "Start from the first error and from declarations rather than uses: one changed exported type upstream usually explains most of the list. Read each as expected versus found, check the library's changelog for the changed types, and fix at the source (adapt your own types or wrappers) so errors downstream disappear together. A cast is right only at a boundary where you know more than the compiler and can check it (after runtime validation), never to silence a mismatch you do not understand; `any` spreads and hides the next break.",
        ],
        follow_up: "Why is the first error in a long list of type errors usually the one to read first?",
        holds_in: &[Lang::TypeScript],
        variants: &[Variant::statements_only(BUT_TS_JS)],
        generic: false,
    },
    Entry {
        name: "Reading a failing test",
        category: "testing",
        difficulty: Level::Junior,
        description: "A failing test reports which expectation broke, what it expected and what it received. Either the code or the test is wrong; reading expected versus received, then the code path that produced the value, tells which, before anything is changed.",
        signals: &[],
        stack_hints: &[],
        tokens: &["expect", "toBe", "test", "assert"],
        example: "test(\"cartTotal multiplies quantity by price\", () => {\n  const items = [{ quantity: 2, unitPrice: 300 }];\n  expect(cartTotal(items)).toBe(600);\n});",
        facts: [
            "A failing assertion reports the expected value and the value the code actually produced.",
            "A test can fail because the test itself is wrong, so read what it claims before changing the code.",
            "Running only the failing test again gives a fast loop while you fix it, then the whole suite checks nothing else broke.",
        ],
        myths: [
            "When a test fails, the code under test is always the thing to fix.",
            "Deleting or skipping a failing test is a safe way to make the build green.",
            "If a test passes once after a retry, the failure was not real.",
        ],
        order_prompt: "Order the steps of dealing with a failing test.",
        steps: &[
            "read which test failed and its assertion",
            "compare the expected value with the received one",
            "decide whether the test or the code is wrong",
            "fix that one and run the failing test again",
            "run the whole suite",
        ],
        reading: [
            "If this test failed with `expected 500, received 600`, which side would you change, and why?",
            "The test: 2 × 300 is 600, so the code computed the right total and the expectation is wrong. A failing test is a claim that disagrees with the code; check which one matches the requirement before changing either.",
        ],
        bugs: &[BugEdit {
            from: "toBe(600)",
            to: "toBe(500)",
            answer: "The expectation is wrong: 2 × 300 is 600, so the test fails with expected 500, received 600 although cartTotal is correct.",
        }],
        open: [
            "A test fails only in CI, about one run in ten. How do you investigate it, and what do you do with the test meanwhile?",
            "Treat it as a real bug in the test or the code until shown otherwise: collect the failures' output and seeds, look for shared state between tests, ordering, time and time zones, randomness, real network or unawaited async work. Reproduce by running it in a loop, in CI's order and with its parallelism. Meanwhile quarantine it visibly with an owner and an issue rather than retrying silently, since retries hide real race conditions that users will meet.",
        ],
        follow_up: "How can a test that fails be the thing that is wrong, not the code?",
        holds_in: &[],
        variants: &[],
        generic: false,
    },
    Entry {
        name: "Reading error messages and stack traces",
        category: "error_handling",
        difficulty: Level::Junior,
        description: "An error message says what went wrong and a stack trace says where: the innermost frame of your own code is usually the place to look. Reading them before changing anything, and making your own errors say what and why, turns a failure into a short fix.",
        signals: &[],
        stack_hints: &[],
        tokens: &["throw", "Error", "if"],
        example: "function readPort(config) {\n  if (!config) throw new Error(\"config is missing: was the file loaded?\");\n  return config.port;\n}",
        facts: [
            "The message says what went wrong; the stack trace lists the calls that led there, innermost first.",
            "The first frame in your own code, not in a library, is usually where to start looking.",
            "Failing early with a message that names the cause beats a confusing error far from it.",
        ],
        myths: [
            "The last line of a stack trace is always where the bug is.",
            "An error printed by a library means the bug is in that library.",
            "Catching every error and logging nothing keeps a program robust.",
        ],
        order_prompt: "Order the steps of working from an error to its cause.",
        steps: &[
            "read the error's type and message",
            "find the first stack frame in your own code",
            "look at the values that reached that line",
            "find where the unexpected value came from",
            "fix the cause and run it again",
        ],
        reading: [
            "What does the caller see when config is undefined, and why is that better than the error it would get without the check?",
            "It gets Error: config is missing: was the file loaded?, thrown right where the problem is detected. Without the check, config.port would throw TypeError: Cannot read properties of undefined (reading 'port'), which says what failed but not why.",
        ],
        bugs: &[BugEdit {
            from: "  if (!config) throw new Error(\"config is missing: was the file loaded?\");\n",
            to: "",
            answer: "Without the check, a missing config fails with TypeError: Cannot read properties of undefined (reading 'port'): the error is raised, but it no longer says what is missing or why.",
        }],
        open: [
            "How do you design the errors of a service so that someone on call at 3 a.m. can act on them?",
            "Make each error say what failed, with which input or identifier, and what to check, without leaking secrets; keep the cause chain (wrap, do not replace) so the original error and stack survive; separate the user's mistakes (4xx, validation) from internal failures; log once at the boundary with a correlation id instead of at every layer; and give alerts a link to a runbook. Test the unhappy paths so the messages stay true as code changes.",
        ],
        follow_up: "Why is the first stack frame in your own code usually more useful than the last line of the trace?",
        holds_in: &[],
        variants: &[],
        generic: false,
    },
];
