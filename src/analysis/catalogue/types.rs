//! Catalogue data: the type system, where a type declaration written once prevents whole
//! classes of runtime bugs, and where generated code often reaches for `any` or `unwrap`.

use super::{BugEdit, Entry, Variant, sig};
use crate::analysis::Lang;
use crate::analysis::concepts::Level;

/// Statements about named data types that hold in Go, Rust, C#, Java and Ruby alike.
// Issue 40's hand-graded samples: money and cents were asked about on every record, whatever
// it held (a rate limiter's decision, stock counts); the statements are about any named type.
const DATA_TYPE_FACTS: [&str; 3] = [
    "A named type with named fields lets data travel as one value instead of loose arguments or maps.",
    "Giving each field a precise type (an id type rather than a bare string, an enum rather than a flag) lets the compiler or the constructor catch mixed-up values.",
    "A constructor or factory that checks its fields keeps invalid values from existing, so the code that receives one need not check it again.",
];
const DATA_TYPE_MYTHS: [&str; 3] = [
    "A type with named fields is only worth it in low-level code.",
    "Passing the same values as separate arguments is just as safe as passing one typed value.",
    "Naming the fields changes nothing for the reader of a call, so positional arguments are just as clear.",
];
const DATA_TYPE_OPEN: [&str; 2] = [
    "How would you model money, identifiers and other domain values so mistakes are caught early?",
    "Give each its own small type rather than bare numbers and strings: money as integer minor units plus a currency, with arithmetic that refuses mixed currencies; a distinct type per kind of id so they cannot be swapped; validation where the value is created so invalid values cannot exist. Trade-off: a little ceremony and conversion at boundaries, in exchange for bugs becoming type errors.",
];
const DATA_TYPE_READING: [&str; 2] = [
    "What does this type guarantee about its values, and what would a caller have to check without it?",
    "Every value carries its fields together under their names, so a function taking it cannot receive them mixed up or half missing; without it, each caller would pass loose values in the right order and check them itself.",
];
const DATA_TYPE_FOLLOW_UP: &str =
    "What would a caller have to check if this data were passed as loose arguments instead?";

/// "Structs, records and dataclasses" outside Python: each language's own name and example.
const STRUCT_VARIANTS: &[Variant] = &[
    Variant {
        langs: &[Lang::Go],
        name: Some("Structs"),
        description: Some(
            "A Go struct names each field of a value, so data travels as one typed unit instead of loose arguments or maps; the compiler rejects a misspelled field in a keyed literal.",
        ),
        tokens: Some(&["int64", "string", "int"]),
        example: Some("type Money struct {\n\tCents    int64\n\tCurrency string\n}"),
        facts: Some(DATA_TYPE_FACTS),
        myths: Some(DATA_TYPE_MYTHS),
        order_prompt: Some("Order what happens in `m := Money{Cents: 500, Currency: \"EUR\"}` followed by `pay(m)`."),
        steps: Some(&[
            "a Money value is built with Cents 500 and Currency EUR",
            "m holds that value",
            "pay is called and receives a copy of m",
            "a change to the copy inside pay leaves m unchanged",
        ]),
        reading: Some(DATA_TYPE_READING),
        bugs: Some(&[BugEdit {
            from: "Cents    int64",
            to: "Cents    float64",
            answer: "Cents stored as float64 picks up rounding errors (0.1 + 0.2 != 0.3), so totals drift by fractions of a cent.",
        }]),
        open: Some(DATA_TYPE_OPEN),
        follow_up: Some(DATA_TYPE_FOLLOW_UP),
    },
    Variant {
        langs: &[Lang::Rust],
        name: Some("Structs"),
        description: Some(
            "A Rust struct names each field of a value, so data travels as one typed unit instead of loose arguments or tuples; every field must be given when a value is built.",
        ),
        tokens: Some(&["i64", "u64", "String", "pub"]),
        example: Some("pub struct Money {\n    pub cents: i64,\n    pub currency: String,\n}"),
        facts: Some(DATA_TYPE_FACTS),
        myths: Some(DATA_TYPE_MYTHS),
        order_prompt: Some(
            "Order what happens in `let m = Money { cents: 500, currency: \"EUR\".into() };` followed by `pay(m)`.",
        ),
        steps: Some(&[
            "a Money value is built with every field given",
            "m owns that value",
            "pay is called and m is moved into it",
            "using m after the call no longer compiles",
        ]),
        reading: Some(DATA_TYPE_READING),
        bugs: Some(&[BugEdit {
            from: "pub cents: i64,",
            to: "pub cents: f64,",
            answer: "Cents stored as f64 picks up rounding errors (0.1 + 0.2 != 0.3), so totals drift by fractions of a cent.",
        }]),
        open: Some(DATA_TYPE_OPEN),
        follow_up: Some(DATA_TYPE_FOLLOW_UP),
    },
    Variant {
        langs: &[Lang::CSharp],
        name: Some("Records and structs"),
        description: Some(
            "A C# record or struct names each field of a value, so data travels as one typed unit; a record adds value equality and non-destructive copies with `with`.",
        ),
        tokens: Some(&["record", "decimal", "long", "init"]),
        example: Some("public record Money(long Cents, string Currency);"),
        facts: Some(DATA_TYPE_FACTS),
        myths: Some(DATA_TYPE_MYTHS),
        order_prompt: Some(
            "Order what happens in `var m = new Money(500, \"EUR\");` followed by `var n = m with { Cents = 600 };`.",
        ),
        steps: Some(&[
            "the primary constructor sets Cents to 500 and Currency to EUR",
            "m refers to the new record",
            "the with expression copies m",
            "the copy gets Cents 600 and m keeps 500",
        ]),
        reading: Some(DATA_TYPE_READING),
        bugs: Some(&[BugEdit {
            from: "long Cents",
            to: "double Cents",
            answer: "Cents stored as double picks up rounding errors (0.1 + 0.2 != 0.3), so totals drift by fractions of a cent.",
        }]),
        open: Some(DATA_TYPE_OPEN),
        follow_up: Some(DATA_TYPE_FOLLOW_UP),
    },
    Variant {
        langs: &[Lang::Java],
        name: Some("Records and value classes"),
        description: Some(
            "A Java record (or a small final class) names each field of a value, so data travels as one typed unit; a record's fields are final and it gets equals, hashCode and toString from them.",
        ),
        tokens: Some(&["record", "long", "final"]),
        example: Some("public record Money(long cents, String currency) {}"),
        facts: Some(DATA_TYPE_FACTS),
        myths: Some(DATA_TYPE_MYTHS),
        order_prompt: Some(
            "Order what happens in `var m = new Money(500, \"EUR\");` followed by `m.equals(new Money(500, \"EUR\"))`.",
        ),
        steps: Some(&[
            "the canonical constructor sets cents to 500 and currency to EUR",
            "m refers to the new record",
            "a second record with the same components is built",
            "equals compares the components and returns true",
        ]),
        reading: Some(DATA_TYPE_READING),
        bugs: Some(&[BugEdit {
            from: "long cents",
            to: "double cents",
            answer: "Cents stored as double picks up rounding errors (0.1 + 0.2 != 0.3), so totals drift by fractions of a cent.",
        }]),
        open: Some(DATA_TYPE_OPEN),
        follow_up: Some(DATA_TYPE_FOLLOW_UP),
    },
    Variant {
        langs: &[Lang::Ruby],
        name: Some("Structs and value objects"),
        description: Some(
            "A Ruby Struct (or a small value-object class) names each field of a value, so data travels as one unit with readers for its members instead of a loose hash.",
        ),
        tokens: Some(&["Struct", "keyword_init", "attr_reader"]),
        example: Some("Money = Struct.new(:cents, :currency, keyword_init: true)"),
        facts: Some(DATA_TYPE_FACTS),
        myths: Some(DATA_TYPE_MYTHS),
        order_prompt: Some(
            "Order what happens in `m = Money.new(cents: 500, currency: \"EUR\")` followed by `m.cents`.",
        ),
        steps: Some(&[
            "Struct.new defines the Money class with readers and writers for cents and currency",
            "Money.new sets cents to 500 and currency to EUR",
            "m refers to the new value",
            "m.cents returns 500",
        ]),
        reading: Some(DATA_TYPE_READING),
        bugs: Some(&[BugEdit {
            from: ", keyword_init: true",
            to: "",
            answer: "Without keyword_init the members are positional, so Money.new(cents: 500, currency: \"EUR\") puts the whole hash into cents and leaves currency nil.",
        }]),
        open: Some(DATA_TYPE_OPEN),
        follow_up: Some(DATA_TYPE_FOLLOW_UP),
    },
];

/// "Generics" in each language's own syntax for constraints (issue 40: `T: Trait` in a
/// TypeScript question).
const GENERIC_FIRST: &str =
    "A generic function works for many types while keeping the link between its input and output types.";
const GENERIC_VARIANTS: &[Variant] = &[
    Variant {
        langs: &[Lang::Rust],
        tokens: Some(&["T", "where"]),
        facts: Some([
            GENERIC_FIRST,
            "Trait bounds (`T: Display`, or a where clause) state what a type parameter must support.",
            "Rust monomorphises generics: each concrete type gets its own compiled copy, fast but larger.",
        ]),
        follow_up: Some("What does a bound like `T: Display` allow inside the function?"),
        ..Variant::NONE
    },
    Variant {
        langs: &[Lang::Go],
        tokens: Some(&["T", "comparable"]),
        facts: Some([
            GENERIC_FIRST,
            "A constraint such as `[T comparable]` or `[T any]` states what a type parameter must support.",
            "A call with a type that does not satisfy the constraint fails to compile.",
        ]),
        follow_up: Some("What does a constraint like `[T comparable]` allow inside the function?"),
        ..Variant::NONE
    },
    Variant {
        langs: &[Lang::Java],
        tokens: Some(&["T"]),
        facts: Some([
            GENERIC_FIRST,
            "A bound such as `<T extends Comparable<T>>` states what a type parameter must support.",
            "Type parameters are erased at compile time, so a List<String> and a List<Integer> share one class at runtime.",
        ]),
        follow_up: Some("What does a bound like `<T extends Comparable<T>>` allow inside the method?"),
        ..Variant::NONE
    },
    Variant {
        langs: &[Lang::CSharp],
        tokens: Some(&["T"]),
        facts: Some([
            GENERIC_FIRST,
            "A constraint such as `where T : IComparable<T>` states what a type parameter must support.",
            "Type parameters are kept at runtime, so typeof(T) works inside a generic method.",
        ]),
        follow_up: Some("What does a constraint like `where T : IComparable<T>` allow inside the method?"),
        ..Variant::NONE
    },
    Variant {
        langs: &[Lang::Python],
        tokens: Some(&["TypeVar", "T"]),
        facts: Some([
            GENERIC_FIRST,
            "A bound such as `TypeVar(\"T\", bound=Base)` states what a type parameter must support.",
            "Type parameters are not checked at runtime; a static type checker checks them.",
        ]),
        follow_up: Some("What does a bound on a TypeVar allow inside the function?"),
        ..Variant::NONE
    },
];

pub const ENTRIES: &[Entry] = &[
    Entry {
        name: "Type aliases and union types",
        category: "type_system",
        difficulty: Level::Junior,
        description: "Type aliases and unions name the exact shapes and values data may take, so the compiler rejects typos and forgotten cases. They check code, not incoming data, which still needs runtime validation.",
        signals: &[sig("type_alias", &[], &[], 3), sig("interface", &[], &[], 2)],
        stack_hints: &["typescript", "python", "rust"],
        tokens: &["Status", "type", "interface"],
        example: "type Status = \"draft\" | \"published\" | \"archived\";\n\ninterface Post {\n  id: string;\n  title: string;\n  status: Status;\n}",
        facts: [
            "A union of string literals limits a value to a known set, and the compiler rejects typos.",
            "TypeScript types are erased at compile time: they check code but do not validate data arriving at runtime.",
            "Narrowing (if, switch, in, discriminant fields) tells the compiler which member of a union is being handled.",
        ],
        myths: [
            "A TypeScript type alias creates a new class at runtime.",
            "Declaring `status: Status` guarantees that JSON from an API has a valid status.",
            "`type` and `interface` can never describe the same shape.",
        ],
        order_prompt: "Order what happens when code assigns `post.status = \"publised\"` (a typo).",
        steps: &[
            "the compiler reads the declared type of post.status",
            "it resolves Status to its three string literals",
            "it checks the literal \"publised\" against the union",
            "it reports a type error at that line",
            "the build fails before the code can run",
        ],
        reading: [
            "Which values can status hold, and what does the compiler do for you because of that?",
            "Only the three listed strings. Typos fail to compile, editors autocomplete the valid values, and a switch over status can be checked for exhaustiveness, so adding a fourth status points at every place that must handle it.",
        ],
        bugs: &[BugEdit {
            from: "status: Status;",
            to: "status: string;",
            answer: "status is now any string, so typos like \"publised\" compile and exhaustive checks over Status no longer catch missing cases.",
        }],
        open: [
            "How do you keep static types and real runtime data in agreement at the boundaries of a TypeScript service?",
            "Types are erased, so validate at every boundary (HTTP bodies, environment, database rows, third-party APIs) with a schema that also produces the type (zod's infer, generated types from OpenAPI or the database schema). Avoid `as` casts and `any` on external data; parse into narrow types once, then trust them inside. Generate types from one source of truth where possible so they cannot drift.",
        ],
        follow_up: "Why does a TypeScript type not protect you from bad JSON sent by a client?",
        holds_in: &[Lang::TypeScript],
        variants: &[],
        generic: false,
    },
    Entry {
        name: "Generics",
        category: "type_system",
        difficulty: Level::Mid,
        description: "Generics let one function or type work for many types while keeping the link between input and output types. They replace copy-pasted code and unchecked `any` with checked reuse.",
        signals: &[sig("generic", &[], &[], 3)],
        stack_hints: &["typescript", "rust", "go", "java", "csharp"],
        tokens: &["T"],
        example: "function first<T>(items: T[]): T | undefined {\n  return items[0];\n}",
        facts: [
            "A generic function works for many types while keeping the link between its input and output types.",
            "Constraints (`T extends { id: string }`) state what a type parameter must support.",
            "Type parameters are erased when TypeScript compiles to JavaScript: at runtime there is no T to inspect.",
        ],
        myths: [
            "Generics are the same as `any`: both turn off type checking.",
            "An unconstrained type parameter lets you call any method on its values.",
            "Generics have a runtime cost in every language.",
        ],
        order_prompt: "Order how the compiler handles `const n = first([1, 2, 3])`.",
        steps: &[
            "it sees the argument type number[]",
            "it infers T = number from the parameter T[]",
            "it checks the body against T",
            "it computes the return type number | undefined",
            "n gets the type number | undefined",
        ],
        reading: [
            "What type does a caller get back from this function, and why is that better than `any`?",
            "The element type of whatever array was passed, or undefined: first([1, 2]) gives number | undefined and first([\"a\"]) gives string | undefined. With any, the caller would lose that type and typos on the result would compile.",
        ],
        bugs: &[BugEdit {
            from: "function first<T>(items: T[]): T | undefined",
            to: "function first(items: any[]): any",
            answer: "Replacing T with any breaks the link between input and output: callers get any back, so wrong property accesses compile and fail at runtime.",
        }],
        open: [
            "When do generics make code better, and when do they make it harder to read?",
            "Better when the same logic truly applies to many types and the caller needs the precise type back: collections, repositories, result wrappers, utilities. Worse when there is only one concrete use, when constraints pile up into puzzles, or when type-level cleverness replaces plain code. Start concrete, extract a generic at the second or third real use, name parameters meaningfully when there are several, and keep constraints minimal.",
        ],
        follow_up: "What does a constraint like `T extends { id: string }` allow inside the function?",
        holds_in: &[Lang::TypeScript],
        variants: GENERIC_VARIANTS,
        generic: false,
    },
    Entry {
        name: "Enums and exhaustive matching",
        category: "type_system",
        difficulty: Level::Mid,
        description: "An enum lists every case a value can be, and an exhaustive match makes the compiler point at every place to update when a case is added. Enums that carry data make invalid combinations impossible to represent.",
        signals: &[
            sig("enum", &[], &[], 3),
            sig("*", &["match ", "switch (", "when "], &["rust", "typescript", "kotlin"], 1),
        ],
        stack_hints: &["rust", "typescript", "java", "csharp", "kotlin", "swift"],
        tokens: &["match", "enum", "switch", "case"],
        example: "enum Payment {\n    Card { last4: String },\n    Invoice(u32),\n}\n\nfn describe(p: &Payment) -> String {\n    match p {\n        Payment::Card { last4 } => format!(\"card ending {last4}\"),\n        Payment::Invoice(days) => format!(\"invoice, {days} days\"),\n    }\n}",
        facts: [
            "An exhaustive match makes the compiler list every place to update when a new variant is added.",
            "A wildcard arm (`_`) silences that check, so new variants fall into it unnoticed.",
            "Enum variants can carry data, which makes invalid combinations of fields impossible to represent.",
        ],
        myths: [
            "A match with a `_` arm still warns when a new variant is added.",
            "Enums can only hold plain constants, never data.",
            "Exhaustiveness is checked at runtime.",
        ],
        order_prompt: "Order what happens when a developer adds a `Cash` variant to Payment.",
        steps: &[
            "the Cash variant is added to the enum",
            "the compiler re-checks every match on Payment",
            "it reports describe's match as non-exhaustive",
            "the developer adds a Cash arm",
            "the code compiles with every case handled",
        ],
        reading: [
            "What does each variant carry, and what happens here when a new payment kind is added?",
            "Card carries the last four digits and Invoice the payment term in days; each arm can only use its own variant's data. Adding a variant makes this match fail to compile until it gets an arm, so no caller silently ignores the new kind.",
        ],
        bugs: &[BugEdit {
            from: "Payment::Invoice(days) => format!(\"invoice, {days} days\"),",
            to: "_ => String::new(),",
            answer: "The wildcard arm hides the Invoice case: invoices are described as an empty string, and future variants will silently fall into it too.",
        }],
        open: [
            "How would you model an order's lifecycle (draft, paid, shipped, cancelled) with types so invalid states cannot be represented?",
            "Use an enum (or discriminated union) with one variant per state carrying only the data valid in that state: Paid has a payment id, Shipped a tracking number, Cancelled a reason. Transitions are functions from one state to the next that return an error for illegal moves, and exhaustive matches force every consumer to handle new states. Trade-off: persistence and serialisation need mapping, and adding a state touches many matches, by design.",
        ],
        follow_up: "Why can a `_` wildcard arm hide bugs when the enum grows?",
        holds_in: &[],
        variants: &[],
        generic: false,
    },
    Entry {
        name: "Lifetimes and borrowing",
        category: "type_system",
        difficulty: Level::Senior,
        description: "Rust's lifetimes let the compiler prove that no reference outlives the data it points to, removing use-after-free bugs with no runtime cost. Annotations describe relationships between references; they never extend how long data lives.",
        signals: &[sig("lifetime", &[], &[], 4)],
        stack_hints: &["rust"],
        tokens: &["'a", "&"],
        example: "fn longest<'a>(a: &'a str, b: &'a str) -> &'a str {\n    if a.len() >= b.len() { a } else { b }\n}",
        facts: [
            "A lifetime annotation does not change how long data lives; it tells the compiler how references relate so it can check them.",
            "A returned reference tied to two inputs by one lifetime is valid only as long as the shorter-lived of them.",
            "When lifetimes get in the way, returning owned data (String instead of &str) is often the simpler design.",
        ],
        myths: [
            "Adding 'a to a reference makes the data live longer.",
            "The borrow checker checks lifetimes at runtime.",
            "Every reference in Rust needs an explicit lifetime annotation.",
        ],
        order_prompt: "Order how the compiler checks a call to longest(&s1, &s2).",
        steps: &[
            "it takes the borrows of s1 and s2",
            "it picks 'a as the region where both borrows are valid",
            "it gives the returned reference the lifetime 'a",
            "it checks every use of the result lies within 'a",
            "it rejects the program if the result outlives s1 or s2",
        ],
        reading: [
            "What does 'a promise the caller here, and when would a call fail to compile?",
            "That the returned reference borrows from a or b and is valid only while both are. A call fails to compile if the caller keeps the result after either argument's data is dropped, for example by returning it from a scope where one string was local.",
        ],
        bugs: &[BugEdit {
            from: "-> &'a str",
            to: "-> &str",
            answer: "Without the lifetime on the return type, elision cannot tell which input the result borrows from (there are two), so the compiler rejects the function with 'missing lifetime specifier'.",
        }],
        open: [
            "A struct holding references is spreading lifetime parameters through your codebase. How do you decide between fixing the lifetimes and changing the design?",
            "References in structs suit short-lived views (parsers, iterators) over data owned elsewhere. If the struct lives long, is stored in collections or crosses threads and async tasks, own the data instead (String, Vec, Arc for sharing, Cow for either), paying some copies or reference counting for far simpler code. Measure before optimising away clones; keep borrowing inside functions and ownership at boundaries.",
        ],
        follow_up: "Why can a function that takes two &str and returns &str not compile without a lifetime annotation?",
        holds_in: &[Lang::Rust],
        variants: &[],
        generic: false,
    },
    Entry {
        name: "Structs, records and dataclasses",
        category: "type_system",
        difficulty: Level::Junior,
        description: "A struct or dataclass names each field of a value, so data travels as one typed unit instead of loose arguments or dictionaries. Typos become errors and the shape documents itself.",
        signals: &[sig("dataclass", &[], &[], 4), sig("struct", &[], &[], 3)],
        stack_hints: &["python", "go", "rust", "csharp", "java", "kotlin"],
        tokens: &["frozen", "int", "@dataclass", "struct"],
        example: "@dataclass(frozen=True)\nclass Money:\n    amount: int\n    currency: str = \"EUR\"",
        facts: [
            "A dataclass or struct names each field, so data travels as one typed value instead of loose arguments.",
            "frozen=True (or immutable fields) prevents accidental changes after creation and makes instances hashable.",
            "A dataclass's __post_init__ runs after the generated __init__, the place to check the fields it was given.",
        ],
        myths: [
            "Python dataclasses validate field types at runtime.",
            "A frozen dataclass can still be changed by ordinary attribute assignment.",
            "Structs are only useful in low-level languages.",
        ],
        order_prompt: "Order what happens in `Money(500)` followed by `m.amount = 600`.",
        steps: &[
            "the generated __init__ sets amount to 500",
            "currency falls back to its default \"EUR\"",
            "the instance is returned frozen",
            "the assignment to amount raises FrozenInstanceError",
        ],
        reading: [
            "What does the decorator generate for this class, and what does frozen=True change?",
            "@dataclass generates __init__, __repr__ and __eq__ from the annotated fields, with currency defaulting to EUR. frozen=True makes assignment after creation raise an error and adds __hash__, so values can be dictionary keys and are never changed behind your back.",
        ],
        bugs: &[BugEdit {
            from: "amount: int",
            to: "amount: float",
            answer: "Money stored as float picks up rounding errors (0.1 + 0.2 != 0.3), so totals drift by fractions of a cent.",
        }],
        open: [
            "How would you model money, identifiers and other domain values so mistakes are caught early?",
            "Give each its own small immutable type rather than bare numbers and strings: Money as integer minor units plus currency, with arithmetic that refuses mixed currencies; newtypes for ids (UserId vs OrderId) so they cannot be swapped; validation in the constructor so invalid values cannot exist. Trade-off: a little ceremony and conversion at boundaries, in exchange for bugs becoming type errors.",
        ],
        follow_up: "What does @dataclass write for you that a plain class would spell out by hand?",
        // The text above is Python's (dataclasses, frozen=True, __init__); the other
        // languages with a struct or record pattern get their own names and statements.
        holds_in: &[Lang::Python],
        variants: STRUCT_VARIANTS,
        generic: false,
    },
    Entry {
        name: "Derive macros",
        category: "type_system",
        difficulty: Level::Mid,
        description: "#[derive] generates trait implementations (Debug, Clone, Serialize, …) from a type's fields at compile time. It removes boilerplate, but a derived Serialize makes every field part of your external format.",
        signals: &[sig("derive_macro", &[], &[], 4)],
        stack_hints: &["rust", "serde"],
        tokens: &["derive", "Clone", "Debug", "Serialize"],
        example: "#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]\npub struct Order {\n    pub id: u64,\n    pub total_cents: i64,\n}",
        facts: [
            "#[derive] generates trait implementations at compile time from the type's fields.",
            "Deriving a trait requires every field to implement that trait too.",
            "Deriving Serialize makes every field part of the external format, so renaming a field changes the JSON.",
        ],
        myths: [
            "#[derive(Clone)] makes copies cheaper at runtime.",
            "Derive macros inspect values while the program runs.",
            "Any trait can be derived, including your own, without writing a macro.",
        ],
        order_prompt: "Order how `#[derive(Serialize)]` turns into working code.",
        steps: &[
            "the compiler parses the struct definition",
            "it passes the struct's tokens to serde's derive macro",
            "the macro generates an impl Serialize for Order",
            "the generated impl is compiled with the rest of the crate",
            "serde_json::to_string(&order) calls the generated code",
        ],
        reading: [
            "What does each derived trait give this struct, and what does Serialize commit you to?",
            "Debug allows {:?} printing, Clone explicit copies, PartialEq comparison with ==, and Serialize/Deserialize conversion to and from formats like JSON. Serialize commits the field names to the wire format: renaming total_cents changes the JSON unless #[serde(rename)] keeps the old name.",
        ],
        bugs: &[BugEdit {
            from: "Clone, ",
            to: "",
            answer: "Clone is no longer derived, so any code calling order.clone(), or needing Order: Clone, fails to compile.",
        }],
        open: [
            "What should you think about before deriving Serialize and Deserialize on types that are stored or sent over the network?",
            "The derived format becomes a compatibility contract: field names, enum tagging and optionality. Plan for evolution with #[serde(default)] for new fields, rename attributes instead of breaking renames, and explicit enum representations. Keep sensitive fields out (skip_serializing) and consider separate DTO types so internal refactors do not change the wire format; test round-trips and old payloads.",
        ],
        follow_up: "Why does deriving a trait require every field to implement it?",
        holds_in: &[Lang::Rust],
        variants: &[],
        generic: false,
    },
];
