//! Catalogue data: object-oriented and functional patterns, the two styles most session code
//! mixes. "Pure functions" is `generic`: any function is a chance to talk about it.

use super::{BugEdit, Entry, Variant, sig};
use crate::analysis::Lang;
use crate::analysis::concepts::Level;

/// "Interfaces and polymorphism" outside TypeScript, whose structural typing and `implements`
/// the entry's own text is about.
const INTERFACE_VARIANTS: &[Variant] = &[
    Variant {
        langs: &[Lang::Rust],
        name: Some("Traits and polymorphism"),
        description: Some(
            "A trait states what a type can do without saying how, so code generic over it (or taking `dyn Trait`) works with any implementation, including a fake in tests.",
        ),
        tokens: Some(&["impl", "dyn", "where"]),
        facts: Some([
            "Code written against a trait works with any type that implements it, which is what makes fakes in tests possible.",
            "A Rust type implements a trait only through an explicit `impl Trait for Type` block: traits are nominal, not structural.",
            "Small, focused traits are easier to implement and to fake than one large trait.",
        ]),
        myths: Some([
            "Any type that happens to have methods of the right names implements a trait automatically.",
            "A trait should list every method any implementation might ever need.",
            "Polymorphism requires class inheritance.",
        ]),
        follow_up: Some("How does taking a trait instead of a concrete type make this code easier to test?"),
        ..Variant::NONE
    },
    Variant {
        langs: &[Lang::Go],
        tokens: Some(&["interface"]),
        facts: Some([
            "Code written against an interface works with any implementation, which is what makes fakes in tests possible.",
            "A Go type satisfies an interface implicitly: having the methods is enough, with no declaration of intent.",
            "Small interfaces, often of one method, defined where they are used, are easier to implement and to fake.",
        ]),
        myths: Some([
            "A Go type must declare which interfaces it implements.",
            "An interface should list every method any implementation might ever need.",
            "Polymorphism requires class inheritance.",
        ]),
        follow_up: Some("How does depending on an interface make this code easier to test?"),
        ..Variant::NONE
    },
    Variant {
        langs: &[Lang::Java, Lang::CSharp, Lang::Python, Lang::Ruby, Lang::JavaScript],
        facts: Some([
            "Code written against an interface works with any implementation, which is what makes fakes in tests possible.",
            "A caller written against an interface needs no change when a new implementation is added.",
            "Small, focused interfaces are easier to implement and to fake than one large interface.",
        ]),
        myths: Some([
            "Code that depends on an interface has to change whenever a new implementation is added.",
            "An interface should list every method any implementation might ever need.",
            "Polymorphism requires class inheritance.",
        ]),
        follow_up: Some("How does depending on an interface make this code easier to test?"),
        ..Variant::NONE
    },
];

/// "Classes and encapsulation" outside Python (the entry's own example and its myth about a
/// leading underscore are Python's).
const CLASS_MYTHS: [&str; 3] = [
    "Making every field public is fine because getters and setters are only boilerplate.",
    "Encapsulation is only about hiding fields; it says nothing about keeping them valid.",
    "Every function should live inside a class.",
];
const CLASS_VARIANTS: &[Variant] = &[
    Variant {
        langs: &[Lang::Go, Lang::Rust],
        name: Some("Types with methods and encapsulation"),
        description: Some(
            "A type with methods bundles state with the code that keeps it valid; unexported or private fields mean the rest of the program cannot put a value into an impossible state.",
        ),
        tokens: Some(&["self", "pub"]),
        facts: Some([
            "Encapsulation keeps a value's state consistent by changing it only through methods that enforce the rules.",
            "Fields that are not exported outside their package or module can only be changed by the methods written next to them.",
            "A type with many unrelated methods is a sign that it has more than one responsibility.",
        ]),
        myths: Some([
            "Making every field public is fine because accessor methods are only boilerplate.",
            "Encapsulation is only about hiding fields; it says nothing about keeping them valid.",
            "Methods need a class: a plain struct type cannot have any.",
        ]),
        ..Variant::NONE
    },
    Variant {
        langs: &[Lang::Ruby],
        tokens: Some(&["initialize", "attr_reader", "private", "self"]),
        myths: Some(CLASS_MYTHS),
        ..Variant::NONE
    },
    Variant {
        langs: &[Lang::TypeScript, Lang::JavaScript, Lang::Java, Lang::CSharp],
        tokens: Some(&["this", "private", "readonly", "constructor"]),
        myths: Some(CLASS_MYTHS),
        ..Variant::NONE
    },
];

/// "Closures" outside JavaScript: what capture means in each language.
const CLOSURE_FIRST: &str =
    "A closure keeps access to variables from the scope where it was created, even after that scope has returned.";
const CLOSURE_OPEN: [&str; 2] = [
    "When does a closure keep state alive longer than you expect, and how do you avoid the bugs that causes?",
    "A closure keeps everything it captures alive as long as the closure itself lives: a handler registered on a long-lived object or a callback stored in a cache holds its captures until it is dropped, which can pin large objects or stale values. Capture only what the closure needs (copy the one field rather than the whole object), unregister handlers when their owner goes away, and pass changing values as arguments instead of capturing them.",
];
const CLOSURE_VARIANTS: &[Variant] = &[
    Variant {
        langs: &[Lang::Python, Lang::Go, Lang::Ruby, Lang::CSharp],
        facts: Some([
            CLOSURE_FIRST,
            "Closures capture variables, not values: a closure sees later changes to a captured binding.",
            "A closure created in a loop captures the loop variable, so which value it sees depends on how the language scopes that variable per iteration.",
        ]),
        open: Some(CLOSURE_OPEN),
        ..Variant::NONE
    },
    Variant {
        langs: &[Lang::Rust],
        facts: Some([
            CLOSURE_FIRST,
            "A closure borrows what it captures unless it is marked `move`, and the borrow checker keeps those variables from changing while it holds them.",
            "In Rust, `move` makes a closure take ownership of what it captures, which spawned threads and tasks require.",
        ]),
        myths: Some([
            "A closure can always outlive the local variables it borrows.",
            "Closures only exist in functional programming languages.",
            "A closure that captures nothing still allocates on the heap.",
        ]),
        open: Some(CLOSURE_OPEN),
        ..Variant::NONE
    },
    Variant {
        langs: &[Lang::Java],
        name: Some("Lambdas and closures"),
        facts: Some([
            CLOSURE_FIRST,
            "A lambda can capture only local variables that are effectively final, so it never sees a later change to them.",
            "A lambda that captures state keeps that state reachable as long as the lambda lives.",
        ]),
        myths: Some([
            "A lambda may reassign the local variables it captures.",
            "Closures only exist in functional programming languages.",
            "Captured variables are freed as soon as the outer method returns.",
        ]),
        open: Some(CLOSURE_OPEN),
        ..Variant::NONE
    },
];

pub const ENTRIES: &[Entry] = &[
    Entry {
        name: "Classes and encapsulation",
        category: "oop_pattern",
        difficulty: Level::Junior,
        description: "A class bundles state with the methods that keep it valid, so the rest of the code cannot put it into an impossible state. Encapsulation is what makes a class more than a bag of fields.",
        signals: &[sig("class", &[], &[], 3), sig("struct", &["impl", "func ("], &[], 1)],
        stack_hints: &["python", "typescript", "java", "csharp", "ruby"],
        tokens: &["self", "class", "this", "private"],
        example: "class BankAccount:\n    def __init__(self, owner: str):\n        self.owner = owner\n        self._balance = 0\n\n    def deposit(self, amount: int) -> None:\n        if amount <= 0:\n            raise ValueError(\"amount must be positive\")\n        self._balance += amount",
        facts: [
            "Encapsulation keeps an object's state consistent by changing it only through methods that enforce the rules.",
            "Marking state as private (by the language's keyword or naming convention) tells callers not to touch it directly.",
            "A class with many unrelated methods is a sign that it has more than one responsibility.",
        ],
        myths: [
            "Making every field public is fine because getters and setters are only boilerplate.",
            "In Python a leading underscore makes an attribute impossible to reach from outside.",
            "Every function should live inside a class.",
        ],
        order_prompt: "Order what happens when code calls account.deposit(100) on a new account.",
        steps: &[
            "the constructor has set the owner and a zero balance",
            "deposit is called with amount 100",
            "the guard checks that the amount is positive",
            "the private balance is increased by 100",
        ],
        reading: [
            "Which rule does this class protect, and how does it stop callers from breaking it?",
            "It keeps the balance valid: the balance is private by convention and only changes through deposit, which rejects non-positive amounts. Callers never assign the balance directly, so every change passes the check.",
        ],
        bugs: &[BugEdit {
            from: "self._balance += amount",
            to: "self._balance = amount",
            answer: "Each deposit now overwrites the balance instead of adding to it, so the account only remembers the last deposit.",
        }],
        open: [
            "How do you decide what a class should expose and what it should keep private?",
            "Expose operations that express what callers need (deposit, withdraw) rather than raw fields; keep invariants inside so they are checked in one place; return copies or read-only views of internal collections; keep the public surface small because every public member is a promise. Trade-off: too little exposure forces awkward workarounds, so design the surface from real callers and tests.",
        ],
        follow_up: "Why is a method that validates input better than letting callers set a field directly?",
        holds_in: &[Lang::Python],
        variants: CLASS_VARIANTS,
        generic: false,
    },
    Entry {
        name: "Interfaces and polymorphism",
        category: "oop_pattern",
        difficulty: Level::Mid,
        description: "An interface (or trait) states what a component can do without saying how, so code written against it works with any implementation. It is what lets a payment provider, a store or a clock be swapped, including for fakes in tests.",
        signals: &[
            sig("interface", &[], &[], 3),
            sig("trait", &[], &[], 3),
            sig("trait_impl", &[], &["rust"], 3),
            sig("class", &["implements", "abc", "protocol"], &[], 2),
        ],
        stack_hints: &["typescript", "java", "csharp", "go", "rust"],
        tokens: &["implements", "interface", "trait", "impl"],
        example: "interface PaymentGateway {\n  charge(cents: number, token: string): Promise<Receipt>;\n}\n\nclass StripeGateway implements PaymentGateway {\n  async charge(cents: number, token: string) {\n    return stripe.charges.create({ amount: cents, source: token });\n  }\n}",
        facts: [
            "Code written against an interface works with any implementation, which is what makes fakes in tests possible.",
            "TypeScript interfaces are structural: any object with the right shape satisfies one, with or without `implements`.",
            "Small, focused interfaces are easier to implement and to fake than one large interface.",
        ],
        myths: [
            "TypeScript interfaces exist at runtime, so `x instanceof PaymentGateway` works.",
            "An interface should list every method any implementation might ever need.",
            "Polymorphism requires class inheritance.",
        ],
        order_prompt: "Order how checkout code charges a card through the interface.",
        steps: &[
            "checkout receives some PaymentGateway",
            "it calls gateway.charge(cents, token)",
            "the call dispatches to StripeGateway.charge",
            "Stripe's API is called with the amount and token",
            "checkout receives a Receipt without knowing which gateway ran",
        ],
        reading: [
            "What does code that uses PaymentGateway know about Stripe, and why is that useful?",
            "Nothing: it only knows there is a charge method returning a Receipt. Another provider, or a fake in tests, can be passed in without changing that code.",
        ],
        bugs: &[BugEdit {
            from: "implements PaymentGateway",
            to: "",
            answer: "Without `implements`, TypeScript no longer checks StripeGateway against the interface where it is defined, so a renamed or mistyped method is caught late, at some distant usage, or not at all.",
        }],
        open: [
            "When is introducing an interface worth it, and when is it premature abstraction?",
            "Worth it at real seams: external services, storage, time, anything with two implementations (including a test fake), or a boundary between teams. Premature when there is one implementation and no test need: it adds indirection and makes navigation harder. Prefer small interfaces defined by the consumer (as Go does), and extract one when the second implementation or the test appears.",
        ],
        follow_up: "How does an interface make it possible to test code that charges a credit card?",
        holds_in: &[Lang::TypeScript],
        variants: INTERFACE_VARIANTS,
        generic: false,
    },
    Entry {
        name: "Composition over inheritance",
        category: "oop_pattern",
        difficulty: Level::Senior,
        description: "Inheritance ties a subclass to its parent's internals, so changes to the parent can break it unseen. Composing objects, holding one and delegating to it, combines behaviour with looser coupling.",
        signals: &[sig("class", &["extends", "super(", "super.", " < "], &[], 3)],
        stack_hints: &["typescript", "java", "csharp", "python", "ruby"],
        tokens: &["extends", "super", "class"],
        example: "class AuditedRepository extends UserRepository {\n  async save(user: User) {\n    await super.save(user);\n    await audit.log(\"user.saved\", user.id);\n  }\n}",
        facts: [
            "Inheritance couples a subclass to its parent's internals, so a change in the base class can silently break it.",
            "Composition holds another object and delegates to it, so behaviours can be combined without a deep hierarchy.",
            "Inheritance fits a true is-a relationship where the subclass can stand in anywhere the parent is used.",
        ],
        myths: [
            "Deep inheritance hierarchies are the best way to reuse code.",
            "Composition cannot express polymorphism; only inheritance can.",
            "Overriding a method without calling super is always safe.",
        ],
        order_prompt: "Order what happens when AuditedRepository.save(user) is called.",
        steps: &[
            "the overriding save in AuditedRepository runs",
            "it calls the parent's save through super",
            "UserRepository writes the user",
            "control returns to the override",
            "the audit log entry is written",
        ],
        reading: [
            "How does this class reuse UserRepository, and what does it now depend on?",
            "It inherits everything and overrides save, calling the parent's version and then auditing. It depends on the parent's internals: if UserRepository's other methods call save, or its behaviour changes, the subclass is affected too. Wrapping a repository (composition) would give the same audit without that coupling.",
        ],
        bugs: &[BugEdit {
            from: "await super.save(user);",
            to: "",
            answer: "The override no longer calls super.save, so the user is audited as saved but never actually stored.",
        }],
        open: [
            "Refactor an inheritance hierarchy of three levels (Repository, CachedRepository, AuditedCachedRepository) toward composition. What do you gain and lose?",
            "Define a Repository interface and write CachingRepository and AuditingRepository as decorators that hold an inner Repository and delegate; assemble them at the composition root in any order. Gains: each behaviour is testable alone, combinations need no new classes, and changes to one layer cannot break another through inherited internals. Losses: more wiring, delegation boilerplate for large interfaces, and the order of wrappers must be chosen consciously.",
        ],
        follow_up: "What is the fragile base class problem?",
        // The facts hold everywhere; the example, its steps and its bug are TypeScript.
        holds_in: &[Lang::TypeScript, Lang::JavaScript],
        variants: &[Variant {
            langs: &[Lang::Python, Lang::Ruby, Lang::Java, Lang::CSharp, Lang::Go, Lang::Rust],
            tokens: Some(&["super"]),
            ..Variant::NONE
        }],
        generic: false,
    },
    Entry {
        name: "Closures",
        category: "functional_pattern",
        difficulty: Level::Mid,
        description: "A closure is a function that remembers variables from the scope where it was created. Callbacks, handlers and factories all rely on it, and so do some of the subtlest stale-value bugs.",
        signals: &[sig("closure", &[], &[], 4)],
        stack_hints: &["javascript", "typescript", "python", "rust", "go", "ruby"],
        tokens: &["=>", "move", "lambda", "nonlocal", "func", "let"],
        example: "function makeCounter() {\n  let count = 0;\n  return () => {\n    count += 1;\n    return count;\n  };\n}",
        facts: [
            "A closure keeps access to variables from the scope where it was created, even after that scope has returned.",
            "Closures capture variables, not values: a closure sees later changes to a captured binding.",
            "A closure created in a loop over a `let` binding gets that iteration's own binding, while one over a `var` binding shares a single variable across iterations.",
        ],
        myths: [
            "A closure copies the captured variables when it is created, so later changes are invisible to it.",
            "Closures only exist in functional programming languages.",
            "Captured variables are freed as soon as the outer function returns.",
        ],
        order_prompt: "Order what happens in `const next = makeCounter(); next(); next();`.",
        steps: &[
            "makeCounter runs and creates count = 0",
            "it returns the arrow function, which captures count",
            "the first next() increments count to 1 and returns it",
            "the second next() sees the same count and returns 2",
        ],
        reading: [
            "What state does the returned function carry, and who else can reach it?",
            "It carries the count variable from makeCounter's scope, which lives on as long as the function does. Nothing else can reach count, so the closure acts as private state: each makeCounter call creates an independent counter.",
        ],
        bugs: &[BugEdit {
            from: "let count = 0;\n  return () => {",
            to: "return () => {\n    let count = 0;",
            answer: "count is now created inside the closure on every call, so the counter always returns 1 instead of counting up.",
        }],
        open: [
            "Closures in React components and event handlers often cause 'stale value' bugs. Explain why and how you avoid them.",
            "A closure captures the variables of the render in which it was created; if it runs later (a timer, a subscription, an effect without the right dependencies) it sees that render's old props and state. Fixes: list dependencies so the effect or callback is recreated, use functional state updates (setX(x => x + 1)), keep mutable latest values in a ref, and clean up subscriptions. Lint rules (exhaustive-deps) catch most cases.",
        ],
        follow_up: "Why can a closure created in a loop see a different value than you expect?",
        // The example, its steps and the open question are JavaScript and React; capture by
        // reference is not what Rust's borrows or Java's effectively-final captures do.
        holds_in: &[Lang::TypeScript, Lang::JavaScript],
        variants: CLOSURE_VARIANTS,
        generic: false,
    },
    Entry {
        name: "Higher-order functions",
        category: "functional_pattern",
        difficulty: Level::Junior,
        description: "Functions that take or return functions, such as map, filter and reduce, express what to do with a collection instead of how to loop over it. The code gets shorter and intermediate state disappears.",
        signals: &[sig("higher_order_function", &[], &[], 4)],
        stack_hints: &["javascript", "typescript", "python", "rust", "ruby"],
        tokens: &["reduce", "filter", "map"],
        example: "const total = orders\n  .filter((o) => o.status === \"paid\")\n  .map((o) => o.amount)\n  .reduce((sum, a) => sum + a, 0);",
        facts: [
            "map, filter and reduce take a function as an argument and return a new value without changing the original array.",
            "reduce needs an initial value to handle empty arrays; without one it throws on [].",
            "Each chained map or filter builds an intermediate array, which only matters for very large collections or hot loops.",
        ],
        myths: [
            "map changes the original array in place.",
            "forEach returns a new array, just like map.",
            "filter stops at the first element that matches.",
        ],
        order_prompt: "Order how this chain computes the total of paid orders.",
        steps: &[
            "filter keeps only the paid orders",
            "map turns each paid order into its amount",
            "reduce starts from the initial value 0",
            "reduce adds each amount to the running sum",
            "the final sum is assigned to total",
        ],
        reading: [
            "What does each step of this chain produce, and is the original array changed?",
            "filter produces a new array of paid orders, map a new array of their amounts, and reduce folds those amounts into one number starting from 0. The original orders array is not modified.",
        ],
        bugs: &[BugEdit {
            from: ", 0);",
            to: ");",
            answer: "Without the initial value, reduce throws 'Reduce of empty array with no initial value' when there are no paid orders.",
        }],
        open: [
            "When does a chain of map/filter/reduce make code clearer than a loop, and when does it not?",
            "Clearer when each step is a simple, named transformation and there are no side effects: the pipeline reads as intent. Worse when the reducer carries complex state, when early exit matters (a loop or find/some stops sooner), when performance in a hot path suffers from intermediate arrays, or when callbacks mutate outside state. Readability for the team decides; a well-named loop beats a clever reduce.",
        ],
        follow_up: "Why does `reduce` need an initial value, and what happens on an empty array without one?",
        // Arrays, `forEach` and reduce's TypeError are JavaScript's; elsewhere what holds of
        // passing and returning functions in any language.
        holds_in: &[Lang::TypeScript, Lang::JavaScript],
        variants: &[Variant {
            langs: &[Lang::Python, Lang::Go, Lang::Rust, Lang::Ruby, Lang::Java, Lang::CSharp],
            description: Some(
                "Functions that take or return functions let the caller decide what to do and the callee decide when: a callback, a retry wrapper, a transformation applied to each item. The code gets shorter and the branching per caller disappears.",
            ),
            facts: Some([
                "A higher-order function takes or returns a function, so the caller supplies the behaviour and the callee decides when it runs.",
                "Passing a function instead of a flag keeps the callee free of a branch for every caller.",
                "A function returned from another keeps the variables it captured alive as long as it lives.",
            ]),
            myths: Some([
                "A function passed as an argument runs at the moment it is passed.",
                "A higher-order function is always slower than the same loop written out by hand.",
                "Only functions of the standard library can take other functions as arguments.",
            ]),
            open: Some([
                "When does passing a function make code clearer than writing the loop or the branch out, and when does it not?",
                "Clearer when the function is a small, named behaviour the callee applies at the right moment (a transformation per item, a retry policy, a comparison): the callee's code stays the same for every caller. Worse when the passed function carries hidden state, when control flow such as early exit or error handling has to cross it, or when a chain of anonymous functions hides what happens; then a named function or a plain loop reads better.",
            ]),
            follow_up: Some("What decides when the function passed here actually runs?"),
            ..Variant::NONE
        }],
        generic: false,
    },
    Entry {
        name: "Generators and lazy iteration",
        category: "functional_pattern",
        difficulty: Level::Mid,
        description: "A generator produces values one at a time, pausing at each yield, so large or endless sequences never have to fit in memory. It turns streaming code into a simple loop.",
        signals: &[sig("generator", &[], &[], 4)],
        stack_hints: &["python", "javascript", "typescript"],
        tokens: &["yield", "function*", "next"],
        example: "def read_batches(cursor, size=500):\n    while True:\n        rows = cursor.fetchmany(size)\n        if not rows:\n            return\n        yield rows",
        facts: [
            "A generator produces values one at a time, pausing at each yield, so the whole result never has to be in memory.",
            "A generator's body does not start running until the first value is requested.",
            "A generator can be consumed only once; iterating it again yields nothing.",
        ],
        myths: [
            "Calling a generator function runs its body immediately.",
            "A generator stores all its values so they can be read many times.",
            "yield and return are interchangeable inside a generator.",
        ],
        order_prompt: "Order what happens when a for loop consumes read_batches(cursor).",
        steps: &[
            "calling read_batches returns a generator without running its body",
            "the loop asks for the first value and the body starts",
            "fetchmany reads one batch and yield hands it to the loop",
            "the loop processes the batch and asks for the next one",
            "fetchmany returns nothing and the generator finishes",
        ],
        reading: [
            "How much data is in memory at once here, and when does each database read happen?",
            "At most one batch: each fetchmany happens only when the consumer asks for the next value, and the previous batch can be freed. The reads are driven by the consumer's loop, not done up front.",
        ],
        bugs: &[BugEdit {
            from: "yield rows",
            to: "return rows",
            answer: "With return instead of yield the function is no longer a generator: it returns only the first batch and stops, so the remaining rows are never processed.",
        }],
        open: [
            "You need to export ten million rows to CSV. How would generators help, and what pitfalls remain?",
            "Stream: a generator reads rows in batches with a server-side cursor and yields them to a CSV writer that writes incrementally, so memory stays flat. Pitfalls: the cursor and transaction stay open for the whole export (long locks, timeouts), a generator can be consumed only once, exceptions surface in the consumer, cleanup needs try/finally or a context manager, and slow consumers hold resources longer.",
        ],
        follow_up: "What happens if you iterate over the same generator object twice?",
        holds_in: &[],
        variants: &[],
        generic: false,
    },
    Entry {
        name: "Pure functions",
        category: "functional_pattern",
        difficulty: Level::Junior,
        description: "A pure function's result depends only on its arguments and it changes nothing outside itself. Such functions are trivial to test and safe to reuse, which is why good code keeps I/O at the edges.",
        signals: &[],
        stack_hints: &[],
        tokens: &["return", "function", "def", "fn", "func"],
        example: "function applyDiscount(price: number, percent: number): number {\n  return Math.round(price * (1 - percent / 100));\n}",
        facts: [
            "A pure function's result depends only on its arguments, and it changes nothing outside itself.",
            "Pure functions can be tested with plain input and output assertions, without mocks or setup.",
            "Keeping I/O at the edges and logic in pure functions makes most of a program easy to test.",
        ],
        myths: [
            "A function that writes to a database is still pure if it always returns the same value.",
            "Pure functions can only be written in functional languages.",
            "Reading the current time inside a function keeps it pure.",
        ],
        order_prompt: "Order how applyDiscount(200, 10) computes its result.",
        steps: &[
            "percent / 100 gives 0.1",
            "1 - 0.1 gives the remaining share 0.9",
            "price * 0.9 gives 180",
            "Math.round returns 180 without touching anything else",
        ],
        reading: [
            "What does this function depend on, and what would you need to test it?",
            "Only its arguments: it reads no globals, time or I/O and changes nothing outside. A test just calls it with inputs and compares the output; no setup or mocks are needed.",
        ],
        bugs: &[BugEdit {
            from: "percent / 100",
            to: "percent",
            answer: "Dividing by 100 was dropped, so a 10 % discount multiplies the price by -9 and returns a negative price.",
        }],
        open: [
            "How would you restructure a function that fetches data, applies business rules and saves the result, to make it easier to test?",
            "Split it into a thin shell that does the I/O (fetch, save) and a pure core that takes plain data and returns the decision or new state. Test the core exhaustively with inputs and outputs; test the shell with a few integration tests. Pass time and randomness in as arguments. The cost is a little more plumbing; the gain is fast, deterministic tests and logic that can be reused elsewhere.",
        ],
        follow_up: "Why is a function that reads the current time not pure, and how would you make it testable?",
        holds_in: &[],
        variants: &[],
        generic: true,
    },
];
