//! Catalogue data: concurrency (goroutines, channels, locks, spawned tasks), where bugs are
//! timing-dependent and so rarely show up in a quick manual test.

use super::{BUT_GO, BugEdit, Entry, Variant, sig};
use crate::analysis::Lang;
use crate::analysis::concepts::Level;

pub const ENTRIES: &[Entry] = &[
    Entry {
        name: "Goroutines",
        category: "concurrency",
        difficulty: Level::Mid,
        description: "A goroutine runs a function concurrently for the cost of a few kilobytes, so Go code starts them freely. The hard part is knowing when each one finishes and making sure none is left running.",
        signals: &[sig("goroutine", &[], &[], 4)],
        stack_hints: &["go"],
        tokens: &["go", "Wait", "Done"],
        example: "var wg sync.WaitGroup\nfor _, url := range urls {\n    wg.Add(1)\n    go func(u string) {\n        defer wg.Done()\n        fetch(u)\n    }(url)\n}\nwg.Wait()",
        facts: [
            "Starting a goroutine costs a few kilobytes of stack, so thousands of them are normal.",
            "When main returns, the program exits without waiting for goroutines that are still running.",
            "Every goroutine needs a clear way to stop (a cancelled context, a closed channel), or it leaks.",
        ],
        myths: [
            "Each goroutine is its own operating-system thread.",
            "A Go program waits for all goroutines to finish before it exits.",
            "Goroutines run in the order in which they were started.",
        ],
        order_prompt: "Order what happens in this fan-out over urls.",
        steps: &[
            "wg.Add(1) raises the counter for the next url",
            "`go func` starts a goroutine and the loop continues immediately",
            "each goroutine fetches its url concurrently",
            "each goroutine calls wg.Done() as it returns",
            "wg.Wait() returns once the counter is back to zero",
        ],
        reading: [
            "How many goroutines does this start, and how does the code know they have all finished?",
            "One goroutine per url. The WaitGroup counts them: Add(1) before each start, Done() when each returns (deferred so it runs even on panic), and Wait() blocks until the count is back to zero.",
        ],
        bugs: &[
            BugEdit {
                from: "        defer wg.Done()\n",
                to: "",
                answer: "Done is never called, so the WaitGroup counter never reaches zero and wg.Wait() blocks forever: a deadlock ('all goroutines are asleep').",
            },
            BugEdit {
                from: "defer wg.Done()",
                to: "// defer wg.Done()",
                answer: "With the Done call commented out the WaitGroup counter never reaches zero, so wg.Wait() blocks forever: a deadlock ('all goroutines are asleep').",
            },
        ],
        open: [
            "You must call an API for 10,000 ids from Go. How do you structure the goroutines, and what can go wrong?",
            "Not one goroutine per id without limits: use a bounded worker pool (a fixed number of workers reading ids from a channel, or a semaphore / errgroup.SetLimit) so the API and file descriptors are not overwhelmed. Pass a context so everything stops on cancellation or first fatal error, collect results and errors through channels or errgroup, respect rate limits with backoff, and make sure every goroutine exits so none leak.",
        ],
        follow_up: "What happens to running goroutines when main returns, and how do you wait for them?",
        holds_in: &[Lang::Go],
        variants: &[],
        generic: false,
    },
    Entry {
        name: "Channels",
        category: "concurrency",
        difficulty: Level::Mid,
        description: "Channels pass values between goroutines and synchronise them at the same time, so shared data has one owner at a time. select adds timeouts and cancellation to any wait.",
        signals: &[sig("channel", &[], &[], 4)],
        stack_hints: &["go", "rust"],
        tokens: &["<-", "chan", "select", "make"],
        example: "results := make(chan Result)\ngo func() {\n    results <- compute()\n}()\nselect {\ncase r := <-results:\n    handle(r)\ncase <-ctx.Done():\n    return ctx.Err()\n}",
        facts: [
            "A send on an unbuffered channel blocks until another goroutine receives, so it also synchronises the two.",
            "Only the sender should close a channel; sending on a closed channel panics.",
            "select waits on several channel operations at once and runs whichever is ready first, which is how timeouts and cancellation are added.",
        ],
        myths: [
            "Receiving from a closed channel panics.",
            "A buffered channel never blocks the sender.",
            "A channel must be closed after use or its memory leaks.",
        ],
        order_prompt: "Order what happens when compute() finishes before the context is cancelled.",
        steps: &[
            "make creates an unbuffered results channel",
            "a goroutine starts and calls compute()",
            "select waits on results and on ctx.Done()",
            "the goroutine sends the result and the receive case is chosen",
            "handle(r) processes the result",
        ],
        reading: [
            "What does this code wait for, and what happens if the caller gives up first?",
            "It waits for whichever comes first: the result from the goroutine or the context's cancellation. If the context is cancelled first the function returns ctx.Err(); note that the goroutine then blocks forever on its send to the unbuffered channel unless the channel has a buffer of one.",
        ],
        bugs: &[BugEdit {
            from: "results <- compute()",
            to: "compute()",
            answer: "The goroutine never sends its result, so the receive case can never fire: every call waits until the context is cancelled and looks like a timeout.",
        }],
        open: [
            "When would you use channels and when a mutex to coordinate goroutines? Give an example of each.",
            "Channels fit handing work or ownership from one goroutine to another (pipelines, worker pools, signalling completion or cancellation); a mutex fits protecting a small piece of shared state many goroutines read and update (a cache, a counter). Channels make flow explicit but add blocking and leak risks; a mutex is simpler and faster for state but must guard every access. Choose by whether you are communicating events or sharing memory.",
        ],
        follow_up: "What does a receive from a closed channel return, and how do you detect that the channel is closed?",
        holds_in: &[Lang::Go],
        variants: &[],
        generic: false,
    },
    Entry {
        name: "Mutexes and shared state",
        category: "concurrency",
        difficulty: Level::Mid,
        description: "A mutex lets only one thread at a time touch shared data, which prevents races that corrupt state. Held too long or taken in the wrong order, it becomes a bottleneck or a deadlock.",
        signals: &[sig("mutex", &[], &[], 4)],
        stack_hints: &["go", "rust", "java", "csharp", "python"],
        tokens: &["Lock", "Unlock", "Mutex", "lock"],
        example: "type Counter struct {\n    mu     sync.Mutex\n    counts map[string]int\n}\n\nfunc (c *Counter) Inc(key string) {\n    c.mu.Lock()\n    defer c.mu.Unlock()\n    c.counts[key]++\n}",
        facts: [
            "A mutex protects data, not code: every access to the shared field, reads included, must hold the lock.",
            "Holding a lock while doing slow I/O makes every other caller wait behind it.",
            "Taking two locks in different orders in different places can deadlock.",
        ],
        myths: [
            "Reads never need the lock; only writes do.",
            "Code inside a mutex runs faster because threads stop competing.",
            "Go maps are safe for concurrent writes as long as the keys differ.",
        ],
        order_prompt: "Order what happens when two goroutines call Inc at the same moment.",
        steps: &[
            "the first goroutine acquires c.mu",
            "the second goroutine blocks on c.mu.Lock()",
            "the first goroutine increments counts[key]",
            "the deferred Unlock releases c.mu",
            "the second goroutine acquires the lock and increments",
        ],
        reading: [
            "What would go wrong without the lock here, and why is Unlock deferred?",
            "Concurrent increments would race on the map: updates get lost and Go aborts with 'concurrent map writes'. The lock makes each read-modify-write exclusive, and deferring Unlock releases it on every return path, including a panic.",
        ],
        bugs: &[
            BugEdit {
                from: "defer c.mu.Unlock()",
                to: "c.mu.Unlock()",
                answer: "The lock is released before the update, so counts[key]++ runs unprotected: concurrent calls race on the map and Go aborts with 'concurrent map writes'.",
            },
            BugEdit {
                from: "defer mu.Unlock()",
                to: "mu.Unlock()",
                answer: "The lock is released immediately instead of at return, so the code after it runs unprotected and races with other callers.",
            },
        ],
        open: [
            "A cache behind a single mutex has become a bottleneck. What options do you have, and what does each cost?",
            "Measure first. Then: a read-write lock if reads dominate (costly if writes are frequent); sharding the map by key hash so unrelated keys use different locks (more memory and code); shrinking the critical section by doing slow work outside it; lock-free or concurrent maps (sync.Map, dashmap) for specific access patterns; or giving the cache a single owner (one thread or task) fed by a channel. Each trades simplicity for throughput, and all need race-detector tests.",
        ],
        follow_up: "Why should a read of shared data also hold the lock?",
        holds_in: &[Lang::Go],
        variants: &[Variant::statements_only(BUT_GO)],
        generic: false,
    },
    Entry {
        name: "Spawned tasks and threads",
        category: "concurrency",
        difficulty: Level::Mid,
        description: "Spawning a task or thread lets work continue in the background, but the spawner must still collect its result and its failure. Fire-and-forget work is where errors and panics disappear.",
        signals: &[sig("spawned_task", &[], &[], 4)],
        stack_hints: &["rust", "python", "java", "csharp", "typescript", "javascript"],
        tokens: &["spawn", "move", "create_task", "Thread"],
        example: "let handle = tokio::spawn(async move {\n    sync_user(user_id).await\n});\nlet outcome = handle.await?;",
        facts: [
            "A spawned task runs independently of the code that spawned it; awaiting its handle is how you get its result or learn that it panicked.",
            "tokio::spawn needs a 'static future, which is why data is moved into the task.",
            "Blocking calls inside an async task stall the executor thread; spawn_blocking is the place for them.",
        ],
        myths: [
            "Dropping a tokio JoinHandle cancels the task.",
            "A panic inside a spawned tokio task immediately crashes the whole program.",
            "Spawning a task for every small computation always makes code faster.",
        ],
        order_prompt: "Order what happens around this tokio::spawn.",
        steps: &[
            "user_id is moved into the async block",
            "tokio::spawn schedules the task and returns a JoinHandle at once",
            "the task runs sync_user on a runtime worker thread",
            "the spawner awaits the JoinHandle",
            "the task's result (or a JoinError if it panicked) is returned",
        ],
        reading: [
            "What runs in the background here, and how does the spawning code learn whether it worked?",
            "sync_user runs as an independent task on the runtime. Awaiting the JoinHandle yields the task's own result, or a JoinError if it panicked or was cancelled, and ? propagates that failure to the caller.",
        ],
        bugs: &[BugEdit {
            from: "let outcome = handle.await?;",
            to: "",
            answer: "The JoinHandle is never awaited: the task keeps running detached, its result and any error or panic are lost, and the caller carries on as if the sync had finished.",
        }],
        open: [
            "How do you make sure background tasks in a server shut down cleanly and never lose work?",
            "Track every task (a JoinSet, task group or thread handles) instead of fire-and-forget; give them a cancellation signal (CancellationToken, context, a channel) checked at await points; on shutdown stop accepting work, signal, then join with a deadline; persist work that must survive (a queue) rather than holding it only in memory; and surface each task's error or panic by awaiting its handle.",
        ],
        follow_up: "Why does tokio::spawn require the future to be 'static, and what does `move` change?",
        holds_in: &[Lang::Rust],
        variants: &[],
        generic: false,
    },
];
