//! Catalogue data: state management and React patterns. Hooks have rules that the type
//! checker does not enforce (dependency arrays, call order), which makes them a rich source
//! of questions.

use super::{BugEdit, Entry, named, sig};
use crate::analysis::Lang;
use crate::analysis::concepts::Level;

const REACT_STACK: &[&str] = &["react", "next.js", "nextjs", "remix", "gatsby"];

/// React's own hooks; any other `useX` name is a custom hook.
const BUILT_IN_HOOKS: &[&str] = &[
    "useState",
    "useEffect",
    "useContext",
    "useReducer",
    "useCallback",
    "useMemo",
    "useRef",
    "useLayoutEffect",
    "useInsertionEffect",
    "useImperativeHandle",
    "useDebugValue",
    "useId",
    "useTransition",
    "useDeferredValue",
    "useSyncExternalStore",
    "useActionState",
    "useFormStatus",
    "useOptimistic",
];

/// `useSomething` (a capital after "use") that React does not ship itself.
fn is_custom_hook(name: &str) -> bool {
    let name = name.trim();
    name.strip_prefix("use").and_then(|rest| rest.chars().next()).is_some_and(char::is_uppercase)
        && !BUILT_IN_HOOKS.contains(&name)
}

pub const ENTRIES: &[Entry] = &[
    Entry {
        name: "Local component state",
        category: "state_management",
        difficulty: Level::Junior,
        description: "useState gives a component memory between renders, and calling its setter is how the UI is told to update. Misunderstanding when the new value becomes visible causes many beginner bugs.",
        signals: &[sig("react_hook", &["usestate", "usereducer"], &[], 4)],
        stack_hints: REACT_STACK,
        tokens: &["useState", "setCount"],
        example: "const [count, setCount] = useState(0);\n\nreturn (\n  <button onClick={() => setCount((c) => c + 1)}>Clicked {count} times</button>\n);",
        facts: [
            "Calling the setter schedules a re-render; the variable keeps its old value until that render.",
            "The functional form setCount(c => c + 1) stays correct when several updates happen before a render.",
            "State should hold the minimum; values computable from props or other state are derived during render.",
        ],
        myths: [
            "After setCount(count + 1), count holds the new value on the very next line.",
            "Mutating a state object in place and passing the same object to the setter re-renders the component.",
            "useState values are shared by every instance of the component.",
        ],
        order_prompt: "Order what happens when the button is clicked.",
        steps: &[
            "the click handler calls setCount with an updater",
            "React queues the update",
            "React re-renders the component",
            "the updater runs and useState returns the new count",
            "the button shows the new number",
        ],
        reading: [
            "Where does count live between renders, and how does a click change what is shown?",
            "React keeps it for this component instance; the variable itself is a fresh constant in every render. A click calls setCount, which schedules a re-render in which useState returns the updated value and the button text changes.",
        ],
        bugs: &[BugEdit {
            from: "setCount((c) => c + 1)",
            to: "count++",
            answer: "count is changed directly instead of through setCount: reassigning the const throws (or, with let, changes a local copy React never sees), so the display never updates.",
        }],
        open: [
            "How do you decide where a piece of state should live in a React application?",
            "As close as possible to where it is used: local useState first; lift to the nearest common parent when siblings need it; context for rarely changing values many components read (theme, user); a store with selectors for frequently changing shared client state; a server-state library (React Query, SWR, server components) for data that lives on the server; the URL for state that should survive reloads and be shareable. Derive instead of duplicating.",
        ],
        follow_up: "Why should you pass the state setter a function of the old value, rather than the new value, when the new value depends on the old one?",
        holds_in: &[Lang::TypeScript, Lang::JavaScript],
        variants: &[],
        generic: false,
    },
    Entry {
        name: "Memoization with useMemo and useCallback",
        category: "state_management",
        difficulty: Level::Mid,
        description: "useMemo and useCallback keep a computed value or function between renders until their dependencies change. Used where it matters they save work and re-renders; everywhere else they only add complexity.",
        signals: &[sig("react_hook", &["usememo", "usecallback", "memo("], &[], 4)],
        stack_hints: REACT_STACK,
        tokens: &["useMemo", "useCallback", "showDone"],
        example: "const visible = useMemo(\n  () => todos.filter((t) => (showDone ? true : !t.done)),\n  [todos, showDone],\n);",
        facts: [
            "useMemo caches a computed value until one of its dependencies changes.",
            "A missing dependency makes the cached value stale; the exhaustive-deps lint rule catches this.",
            "Memoising cheap computations costs more than it saves; measure before adding it.",
        ],
        myths: [
            "useMemo guarantees its function runs only once in the component's lifetime.",
            "Wrapping every function in useCallback always makes a component faster.",
            "useMemo is a good place for side effects such as fetching data.",
        ],
        order_prompt: "Order what happens when showDone is toggled.",
        steps: &[
            "the component re-renders with the new showDone",
            "useMemo compares the dependencies with the previous render",
            "it sees that showDone changed",
            "it runs the filter again",
            "visible holds the new filtered list",
        ],
        reading: [
            "When does the filter run again, and when is the previous result reused?",
            "It runs again only when todos or showDone differ from the previous render (compared by reference); in every other render the cached array is returned as is, which also keeps its identity stable for memoised children.",
        ],
        bugs: &[BugEdit {
            from: "[todos, showDone]",
            to: "[todos]",
            answer: "showDone is missing from the dependencies, so toggling it keeps returning the stale filtered list until todos change.",
        }],
        open: [
            "A React screen feels slow. How do you decide whether memoisation is the fix?",
            "Profile first (React DevTools profiler) to see which components re-render and how long they take. If an expensive computation repeats, useMemo it; if a memoised child re-renders because of new function or object props, stabilise them with useCallback/useMemo; but often the better fix is moving state down, splitting components, virtualising long lists or removing unnecessary effects. Memoisation adds dependency bookkeeping and stale-value risks, so apply it where measurements show a gain.",
        ],
        follow_up: "What goes wrong when a value used inside useMemo is missing from its dependency array?",
        holds_in: &[],
        variants: &[],
        generic: false,
    },
    Entry {
        name: "Shared state with context and stores",
        category: "state_management",
        difficulty: Level::Mid,
        description: "Context and stores (Zustand, Redux, Pinia) share state across components without passing props through every level. They trade explicit data flow for convenience, and careless use re-renders large parts of the tree.",
        signals: &[
            sig("react_hook", &["usecontext", "usestore", "useselector", "useatom"], &[], 4),
            sig("*", &["createcontext", "zustand", "redux", "pinia", "createslice"], &[], 3),
        ],
        stack_hints: &["zustand", "redux", "jotai", "recoil", "mobx", "pinia", "valtio"],
        tokens: &["useContext", "createContext"],
        example: "const ThemeContext = createContext<Theme>(\"light\");\n\nexport function Toolbar() {\n  const theme = useContext(ThemeContext);\n  return <div className={theme}>…</div>;\n}",
        facts: [
            "Context passes a value down the tree without threading props through every level.",
            "Every consumer re-renders when the context value changes, so fast-changing data fits a store with selectors better.",
            "State should stay as local as possible and be lifted only as far as the components that need it.",
        ],
        myths: [
            "Context replaces a state library in every application.",
            "useContext without a matching Provider throws an error.",
            "Keeping all application state in one global store has no performance cost.",
        ],
        order_prompt: "Order what happens when a provider above Toolbar switches the theme to dark.",
        steps: &[
            "the provider's state changes to dark",
            "the provider re-renders with a new context value",
            "React finds the components that read ThemeContext",
            "Toolbar re-renders and useContext returns dark",
            "the div gets the dark class",
        ],
        reading: [
            "Where does theme come from, and what does Toolbar get if no provider is above it?",
            "From the nearest ThemeContext provider above Toolbar in the tree; when the provider's value changes, Toolbar re-renders. Without a provider it gets the default passed to createContext, here \"light\", which can hide a missing provider.",
        ],
        bugs: &[BugEdit {
            from: "const theme = useContext(ThemeContext);",
            to: "const theme = \"light\";",
            answer: "The toolbar no longer reads the context and always renders the light theme, so switching themes elsewhere never reaches it.",
        }],
        open: [
            "Compare context, a client store and a server-state library for an app's shared data. When would you use each?",
            "Context for low-frequency values many components read (theme, locale, the current user), since every consumer re-renders on change. A client store with selectors (Zustand, Redux) for shared, frequently updated UI state, where components subscribe to slices. A server-state library or server components for data owned by the backend, which handle caching, refetching and invalidation. Mixing them by role avoids both prop drilling and a global store full of stale server data.",
        ],
        follow_up: "Why can putting a frequently changing value in context make an app slow?",
        holds_in: &[],
        variants: &[],
        generic: false,
    },
    Entry {
        name: "Effects and the dependency array",
        category: "react_pattern",
        difficulty: Level::Mid,
        description: "useEffect synchronises a component with something outside React (a request, a subscription, a timer) after rendering. Its dependency array and cleanup decide whether that stays correct or loops, leaks and races.",
        signals: &[sig("react_hook", &["useeffect", "uselayouteffect"], &[], 4)],
        stack_hints: REACT_STACK,
        tokens: &["useEffect", "abort", "return"],
        example: "useEffect(() => {\n  const controller = new AbortController();\n  fetch(`/api/users/${id}`, { signal: controller.signal })\n    .then((r) => r.json())\n    .then(setUser);\n  return () => controller.abort();\n}, [id]);",
        facts: [
            "An effect runs after render, and again whenever a value in its dependency array changes.",
            "The cleanup function runs before the next run of the effect and on unmount, which is where requests are aborted and subscriptions removed.",
            "Data that can be computed during render does not need an effect at all.",
        ],
        myths: [
            "An empty dependency array makes the effect run on every render.",
            "Effects run before the browser paints, so they can safely block rendering.",
            "Leaving out the dependency array is the same as passing [].",
        ],
        order_prompt: "Order what happens when id changes from 1 to 2.",
        steps: &[
            "the component renders with id 2",
            "React runs the previous effect's cleanup, aborting the request for user 1",
            "the effect runs again with id 2",
            "the request for user 2 completes",
            "setUser stores user 2 and the component re-renders",
        ],
        reading: [
            "When does this effect run, and what stops a slow old response from overwriting a newer one?",
            "After the first render and whenever id changes. Before each re-run (and on unmount) the cleanup aborts the previous request, so a slow response for an old id never reaches setUser.",
        ],
        bugs: &[BugEdit {
            from: "}, [id]);",
            to: "});",
            answer: "Without the dependency array the effect runs after every render; setUser triggers another render, so it fetches in an endless loop.",
        }],
        open: [
            "Many React codebases overuse useEffect. Which uses are legitimate, and what would you use instead for the rest?",
            "Legitimate: synchronising with external systems, such as subscriptions, timers, non-React widgets, and fetching when no data library or server component is available (with cleanup). Not needed: deriving values from props or state (compute during render or useMemo), reacting to user events (do it in the handler), resetting state on prop change (use a key), chaining state updates. Fewer effects means fewer loops and races.",
        ],
        follow_up: "What does the cleanup function returned from useEffect do, and when does it run?",
        holds_in: &[Lang::TypeScript, Lang::JavaScript],
        variants: &[],
        generic: false,
    },
    Entry {
        name: "Custom hooks",
        category: "react_pattern",
        difficulty: Level::Mid,
        description: "A custom hook packages stateful logic (debouncing, data fetching, subscriptions) in a function that components share. It reuses behaviour, not state: each caller gets its own.",
        signals: &[named("react_hook", is_custom_hook, 4)],
        stack_hints: REACT_STACK,
        tokens: &["useEffect", "useState", "clearTimeout"],
        example: "export function useDebounce<T>(value: T, delay = 300): T {\n  const [debounced, setDebounced] = useState(value);\n  useEffect(() => {\n    const t = setTimeout(() => setDebounced(value), delay);\n    return () => clearTimeout(t);\n  }, [value, delay]);\n  return debounced;\n}",
        facts: [
            "A custom hook is a function whose name starts with use and that calls other hooks, sharing stateful logic between components.",
            "Each component that calls a custom hook gets its own independent state.",
            "Hooks must be called unconditionally at the top level, in the same order on every render.",
        ],
        myths: [
            "Two components that use the same custom hook share its state.",
            "Naming a function useSomething makes React treat it specially even if it calls no hooks.",
            "Hooks may be called inside if statements as long as the condition rarely changes.",
        ],
        order_prompt: "Order what happens when the user types while useDebounce is active.",
        steps: &[
            "value changes and the component re-renders",
            "the previous effect's cleanup clears the pending timer",
            "a new timer starts with the latest value",
            "the user stops typing and the timer fires after delay",
            "setDebounced stores the value and the hook returns it",
        ],
        reading: [
            "What does this hook return while the user is typing, and when does the returned value change?",
            "It keeps returning the last settled value. Every change of value clears the pending timer and starts a new one; only when value stays unchanged for delay milliseconds does the timer fire and the returned value update.",
        ],
        bugs: &[BugEdit {
            from: "return () => clearTimeout(t);",
            to: "",
            answer: "Without the cleanup every keystroke leaves its timer running, so stale values arrive late in sequence and setState can run after the component unmounted.",
        }],
        open: [
            "How do you design a custom hook's API so it is easy to use correctly and easy to test?",
            "Give it a focused job and a clear name; take plain inputs and return a small, stable result (memoise returned functions and objects); handle cleanup and unmount internally; document or enforce the dependencies it needs; keep side-effect details injectable (fetcher, clock) for tests; and test it with renderHook plus fake timers. Avoid hooks that hide too much global state or return many loosely related values.",
        ],
        follow_up: "Why must hooks be called in the same order on every render?",
        holds_in: &[],
        variants: &[],
        generic: false,
    },
    Entry {
        name: "Server actions",
        category: "react_pattern",
        difficulty: Level::Mid,
        description: "A server action is a server function the client calls directly, usually from a form, without writing an API route. It is still a public HTTP endpoint and needs the same authentication and validation as one.",
        signals: &[sig("server_action", &[], &[], 4)],
        stack_hints: &["next.js", "nextjs", "remix"],
        tokens: &["use server", "revalidatePath", "formData"],
        example: "\"use server\";\n\nexport async function createTodo(formData: FormData) {\n  const session = await auth();\n  if (!session) throw new Error(\"Not signed in\");\n  const title = String(formData.get(\"title\") ?? \"\").trim();\n  await db.todo.create({ data: { title, userId: session.user.id } });\n  revalidatePath(\"/todos\");\n}",
        facts: [
            "A server action is a server function the client can call directly, typically from a form, without an API route.",
            "Server actions are public HTTP endpoints, so they need the same authentication and input validation as an API route.",
            "revalidatePath or revalidateTag tells Next.js to refresh cached data after the mutation.",
        ],
        myths: [
            "Server actions can only be called from your own forms, so their input can be trusted.",
            "Code in a \"use server\" file is bundled into the browser.",
            "A server action may return any JavaScript value, functions included.",
        ],
        order_prompt: "Order what happens when the user submits the form bound to createTodo.",
        steps: &[
            "the browser posts the form data to the server",
            "createTodo checks the session",
            "the title is read from the form data and trimmed",
            "the todo is inserted for the signed-in user",
            "revalidatePath refreshes the /todos page data",
        ],
        reading: [
            "What protects this action from abuse, and what is still missing?",
            "It requires a session and ties the new todo to the signed-in user, so anonymous callers are rejected and nobody can create todos for someone else. Still missing: validation of the title (empty or very long strings pass), and rate limiting, since anyone with a session can call the endpoint directly.",
        ],
        bugs: &[BugEdit {
            from: "  if (!session) throw new Error(\"Not signed in\");\n",
            to: "",
            answer: "The auth check is gone: anonymous callers reach the insert, where session.user.id throws on null, and any later refactor could make the action write data for nobody.",
        }],
        open: [
            "When would you use a server action, and when an API route handler?",
            "Server actions fit mutations triggered from your own React UI: forms with progressive enhancement, less boilerplate, typed arguments and built-in cache revalidation. Route handlers fit APIs consumed by other clients (mobile apps, webhooks, third parties), non-POST semantics, custom status codes, streaming or versioned contracts. Either way, authenticate, authorise and validate inside, and keep business logic in shared functions both can call.",
        ],
        follow_up: "Why does a server action need its own authentication check even if only your form calls it?",
        holds_in: &[Lang::TypeScript, Lang::JavaScript],
        variants: &[],
        generic: false,
    },
];

#[cfg(test)]
mod tests {
    use super::is_custom_hook;

    #[test]
    fn custom_hooks_are_use_names_react_does_not_ship() {
        assert!(is_custom_hook("useDebounce"));
        assert!(is_custom_hook(" useAuth "));
        assert!(!is_custom_hook("useState"));
        assert!(!is_custom_hook("user"));
        assert!(!is_custom_hook("use"));
    }
}
