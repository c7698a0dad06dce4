//! The whole file after an edit, whoever the client is: the hook reads the file right after the
//! edit (the worker never opens a path a request names, SPEC §4); else ingest rebuilds it from
//! the session's last captured version; else it is stored as a marked fragment that never
//! replaces the file in what the analysis sees. And the init reply the
//! original client reads (`sessionDbId`, `promptNumber`).

use std::time::Duration;

use serde_json::{Value, json};
use vibelearn::event::EventKind;
use vibelearn::intake::{self, IntakeSettings, Reply};

use crate::hooks::db_rows;
use crate::util::{Http, TempDir, WorkerProcess, start_queue, wait_for};

const CART: &str = "export function cartTotal(items) {\n  return items.reduce((sum, i) => sum + i.price, 0);\n}\n";

fn stored(dir: &std::path::Path, http: &Http, reply: &Value) -> Vec<Value> {
    let id = reply["jobId"].as_i64().unwrap_or_else(|| panic!("{reply}"));
    wait_for("the event to be stored", Duration::from_secs(10), || {
        http.get(&format!("/api/jobs/{id}")).unwrap().1["state"] == "succeeded"
    });
    let key = http.get(&format!("/api/jobs/{id}")).unwrap().1["payload"].clone();
    let event_key =
        key["tool_use_id"].as_str().or(key["event_id"].as_str()).map(str::to_owned).unwrap_or(format!("job:{id}"));
    db_rows(
        dir,
        &format!("SELECT content, fragment, truncated, file_path FROM observations WHERE event_key = '{event_key}'"),
    )
    .remove(0)
}

#[test]
fn the_worker_never_reads_an_edited_file_a_request_names_but_the_hook_captures_it() {
    let dir = TempDir::new();
    let project = TempDir::new();
    let worker = WorkerProcess::start(dir.path());
    let http = worker.http();
    let cwd = project.path().to_str().unwrap();
    std::fs::create_dir_all(project.path().join("src")).unwrap();
    std::fs::write(project.path().join("src/cart.ts"), CART.replace("i.price", "i.price * i.qty")).unwrap();
    // The original VibeLearn client: `content` is only new_string, marked tool_type file_edit.
    // The file is on this machine, but the worker does not open a path a request names: with
    // no earlier version in the session, the fragment is stored marked as one.
    let original = json!({"contentSessionId": "e1", "cwd": cwd, "tool_type": "file_edit", "event_id": "o1",
        "file_path": format!("{cwd}/src/cart.ts"), "content": "i.price * i.qty"});
    let (status, reply) = http.post("/api/sessions/file-edit", &original).unwrap();
    assert_eq!(status, 202, "{reply}");
    let row = stored(dir.path(), &http, &reply);
    assert_eq!((row[0].clone(), row[1].clone()), (json!("i.price * i.qty"), json!(1)), "a marked fragment: {row:?}");
    // A Claude Code Edit sent by a client that read nothing, with a path relative to its cwd.
    let edit = json!({"contentSessionId": "e1", "cwd": cwd, "tool_name": "Edit", "tool_use_id": "o2",
        "tool_input": {"file_path": "src/cart.ts", "old_string": "i.price", "new_string": "i.price * i.qty"}});
    let row = stored(dir.path(), &http, &http.post("/api/sessions/observations", &edit).unwrap().1);
    assert!(!row[0].as_str().unwrap().contains("export function cartTotal") && row[1] == json!(1), "{row:?}");
    // The hook, running as the user in the IDE's process tree, reads the file right after the
    // edit: the whole file is stored.
    let input = json!({"session_id": "e1", "cwd": cwd, "hook_event_name": "PostToolUse", "tool_name": "Edit",
        "tool_use_id": "o3", "tool_input": {"file_path": format!("{cwd}/src/cart.ts"), "old_string": "i.price",
        "new_string": "i.price * i.qty"}, "tool_response": {}});
    crate::hooks::hook(dir.path(), worker.port, "claude-code", "observation", input.to_string().as_bytes(), &[]);
    wait_for("the hook's edit to be stored", Duration::from_secs(10), || {
        !db_rows(dir.path(), "SELECT 1 FROM observations WHERE event_key = 'o3'").is_empty()
    });
    let row = db_rows(dir.path(), "SELECT content, fragment FROM observations WHERE event_key = 'o3'").remove(0);
    assert!(row[0].as_str().unwrap().starts_with("export function cartTotal") && row[1] == json!(0), "{row:?}");
    // A file over the capture limit is cut and marked.
    std::fs::write(project.path().join("big.ts"), "// x\n".repeat(5000)).unwrap();
    let big = json!({"session_id": "e1", "cwd": cwd, "hook_event_name": "PostToolUse", "tool_name": "Edit",
        "tool_use_id": "o4", "tool_input": {"file_path": format!("{cwd}/big.ts"), "old_string": "a", "new_string": "b"},
        "tool_response": {}});
    crate::hooks::hook(dir.path(), worker.port, "claude-code", "observation", big.to_string().as_bytes(), &[]);
    wait_for("the big edit to be stored", Duration::from_secs(10), || {
        !db_rows(dir.path(), "SELECT 1 FROM observations WHERE event_key = 'o4'").is_empty()
    });
    let row = db_rows(dir.path(), "SELECT content, truncated FROM observations WHERE event_key = 'o4'").remove(0);
    assert_eq!((row[0].as_str().unwrap().len(), row[1].clone()), (10 * 1024, json!(1)));
}

#[test]
fn an_edit_of_a_file_not_on_this_machine_is_rebuilt_from_the_sessions_last_version() {
    let dir = TempDir::new();
    let worker = WorkerProcess::start(dir.path());
    let http = worker.http();
    // A container or remote IDE: the paths do not exist here.
    let path = "/workspace/remote-only/src/cart.ts";
    let write = json!({"contentSessionId": "e2", "cwd": "/workspace/remote-only", "tool_name": "Write", "tool_use_id": "w1",
        "tool_input": {"file_path": path, "content": CART}});
    assert_eq!(http.post("/api/sessions/observations", &write).unwrap().0, 202);
    let edit = json!({"contentSessionId": "e2", "tool_name": "Edit", "tool_use_id": "w2",
        "tool_input": {"file_path": path, "old_string": "i.price", "new_string": "i.price * i.quantity"}});
    let row = stored(dir.path(), &http, &http.post("/api/sessions/observations", &edit).unwrap().1);
    assert_eq!(row[0].as_str().unwrap(), CART.replace("i.price", "i.price * i.quantity"));
    assert_eq!(row[1], json!(0));
    // Then a Cursor-style edit on top of the rebuilt version, and a MultiEdit.
    let cursor = json!({"contentSessionId": "e2", "file_path": path, "event_id": "w3",
        "edits": [{"old_string": "export function", "new_string": "export default function"}]});
    let row = stored(dir.path(), &http, &http.post("/api/sessions/file-edit", &cursor).unwrap().1);
    assert!(row[0].as_str().unwrap().starts_with("export default function cartTotal") && row[1] == json!(0), "{row:?}");
    let multi = json!({"contentSessionId": "e2", "tool_name": "MultiEdit", "tool_use_id": "w4",
        "tool_input": {"file_path": path, "edits": [{"old_string": "sum +", "new_string": "sum  +"}, {"old_string": ", 0)", "new_string": ", 0.0)"}]}});
    let row = stored(dir.path(), &http, &http.post("/api/sessions/observations", &multi).unwrap().1);
    assert!(row[0].as_str().unwrap().contains("sum  + i.price * i.quantity, 0.0)"), "{row:?}");
}

#[test]
fn an_edit_with_neither_is_a_marked_fragment_that_never_replaces_the_file() {
    let dir = TempDir::new();
    let worker = WorkerProcess::start(dir.path());
    let http = worker.http();
    let path = "/workspace/remote-only/src/cart.ts";
    let write = json!({"contentSessionId": "e3", "cwd": "/workspace/remote-only", "tool_name": "Write", "tool_use_id": "n1",
        "tool_input": {"file_path": path, "content": CART}});
    assert_eq!(http.post("/api/sessions/observations", &write).unwrap().0, 202);
    // The old text is not in the last captured version (the file changed outside the session).
    let stale = json!({"contentSessionId": "e3", "tool_name": "Edit", "tool_use_id": "n2",
        "tool_input": {"file_path": path, "old_string": "no such text", "new_string": "const x = 1;"}});
    let row = stored(dir.path(), &http, &http.post("/api/sessions/observations", &stale).unwrap().1);
    assert_eq!((row[0].as_str(), row[1].clone()), (Some("const x = 1;"), json!(1)));
    // The original client's fragment of a file never captured.
    let unknown = json!({"contentSessionId": "e3", "tool_type": "file_edit", "event_id": "n3",
        "file_path": "/workspace/remote-only/src/other.ts", "content": "export const y = 2;"});
    let row = stored(dir.path(), &http, &http.post("/api/sessions/file-edit", &unknown).unwrap().1);
    assert_eq!((row[0].as_str(), row[1].clone()), (Some("export const y = 2;"), json!(1)));
    // What the analysis sees: the Write for cart.ts (not the 12-character fragment), and
    // other.ts as a marked fragment.
    let conn = rusqlite::Connection::open(dir.path().join("vibelearn.db")).unwrap();
    let files = vibelearn::jobs::session_data::captured_files(&conn, "e3").unwrap();
    let by_path = |p: &str| files.iter().find(|f| f.path == p).unwrap_or_else(|| panic!("{p}: {files:?}"));
    assert_eq!((by_path("src/cart.ts").content.as_str(), by_path("src/cart.ts").fragment), (CART, false));
    assert_eq!(
        (by_path("src/other.ts").content.as_str(), by_path("src/other.ts").fragment),
        ("export const y = 2;", true)
    );
}

#[test]
fn init_replies_carry_the_session_row_and_prompt_number() {
    let dir = TempDir::new();
    let worker = WorkerProcess::start(dir.path());
    let http = worker.http();
    let init = |prompt: &str| {
        let (status, reply) = http
            .post("/api/sessions/init", &json!({"contentSessionId": "i1", "prompt": prompt, "cwd": "/tmp/i1"}))
            .unwrap();
        assert_eq!(status, 202, "{reply}");
        reply
    };
    let first = init("build a cart");
    let second = init("now add tests");
    assert!(first["sessionDbId"].as_i64().is_some_and(|id| id > 0), "{first}");
    assert_eq!(first["sessionDbId"], second["sessionDbId"]);
    assert_eq!((first["promptNumber"].clone(), second["promptNumber"].clone()), (json!(1), json!(2)));
    let other = http.post("/api/sessions/init", &json!({"contentSessionId": "i2", "prompt": "hello"})).unwrap().1;
    assert_ne!(other["sessionDbId"], first["sessionDbId"]);
    assert_eq!(other["promptNumber"], 1);
    let observation =
        http.post("/api/sessions/observations", &json!({"contentSessionId": "i1", "tool_name": "Read"})).unwrap().1;
    assert!(observation.get("promptNumber").is_none(), "only init replies carry them: {observation}");
}

#[test]
fn an_init_waiting_in_its_lane_still_gets_its_session_row_and_prompt_number() {
    // No runner: the analysis job stays waiting, so the inits behind it are not stored inline.
    let dir = TempDir::new();
    let (queue, _thread) = start_queue(&dir);
    let settings = IntakeSettings {
        skip_tools: vec![],
        excluded_projects: String::new(),
        home: None,
        private_dir: dir.path().join("private"),
        auto_sync: true,
        secrets: vec![],
    };
    intake::submit_analysis(&queue, &settings, "analyze_stack", json!({"contentSessionId": "w1"})).unwrap();
    let init = |prompt: &str| {
        intake::submit_event(
            &queue,
            &settings,
            EventKind::Init,
            json!({"contentSessionId": "w1", "prompt": prompt, "cwd": "/tmp/w1"}),
        )
        .unwrap()
    };
    let (Reply::Queued { session: Some(first), .. }, Reply::Queued { session: Some(second), .. }) =
        (init("one"), init("two"))
    else {
        panic!("init replies without a session reference");
    };
    assert_eq!(first.session_db_id, second.session_db_id);
    assert_eq!((first.prompt_number, second.prompt_number), (1, 2));
    assert_eq!(db_rows(dir.path(), "SELECT COUNT(*) FROM prompts")[0][0], json!(0), "nothing was stored yet");
    assert_eq!(db_rows(dir.path(), "SELECT project, cwd FROM sessions")[0], [json!("w1"), json!("/tmp/w1")]);
}

#[test]
fn payloads_an_earlier_version_queued_still_ingest() {
    // Jobs as the previous version enqueued them (the route's body plus `event`, extra fields
    // and all), waiting in the queue when the worker is upgraded.
    let dir = TempDir::new();
    let payloads = [
        json!({"event": "init", "contentSessionId": "old", "cwd": "/work/shop", "prompt": "add a cart",
               "platform": "claude-code", "event_id": "e1"}),
        json!({"event": "observation", "contentSessionId": "old", "tool_name": "Write", "tool_use_id": "w1",
               "tool_input": {"file_path": "/work/shop/src/cart.ts", "content": CART}, "tool_response": null,
               "truncated": false, "platform": "claude-code", "event_id": "e2", "cwd": "/work/shop"}),
        json!({"event": "observation", "contentSessionId": "old", "tool_name": "MultiEdit", "tool_use_id": "m1",
               "tool_input": {"file_path": "/work/shop/src/cart.ts",
                              "edits": [{"old_string": "i.price", "new_string": "i.price * i.qty"}]},
               "truncated": false}),
        json!({"event": "file_edit", "contentSessionId": "old", "file_path": "/work/shop/src/cart.ts", "event_id": "c1",
               "edits": [{"old_string": "export function", "new_string": "export default function"}]}),
        json!({"event": "observation", "contentSessionId": "old", "tool_name": "Bash", "tool_use_id": "b1",
               "tool_input": {"command": "npm install zod"}, "outcome": "failed", "error": "npm ERR! 404",
               "is_interrupt": false}),
        json!({"event": "complete", "contentSessionId": "old", "reason": "exit", "event_id": "e3"}),
    ];
    {
        let (queue, thread) = start_queue(&dir);
        for payload in payloads {
            let job = vibelearn::queue::NewJob::new("ingest", payload, 5).lane("session:old");
            queue.enqueue(job).unwrap();
        }
        thread.stop();
    }
    let worker = WorkerProcess::start(dir.path());
    let http = worker.http();
    wait_for("the old jobs to be ingested", Duration::from_secs(10), || {
        let (_, stats) = http.get("/api/jobs/stats").unwrap();
        stats["by_kind"]["ingest"]["succeeded"] == 6
    });
    let rows =
        db_rows(dir.path(), "SELECT event_key, obs_type, fragment, outcome, content FROM observations ORDER BY id");
    let keys: Vec<&str> = rows.iter().map(|r| r[0].as_str().unwrap()).collect();
    assert_eq!(keys, ["w1", "m1", "c1", "b1"]);
    let rebuilt = rows[2][4].as_str().unwrap();
    assert!(rebuilt.contains("export default function cartTotal") && rebuilt.contains("i.price * i.qty"), "{rows:?}");
    assert_eq!((rows[3][1].clone(), rows[3][3].clone()), (json!("bash_command"), json!("failed")));
    assert_eq!(db_rows(dir.path(), "SELECT text FROM prompts")[0][0], "add a cart");
}
