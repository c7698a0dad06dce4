//! The two executables (src/executables.rs): `vl` links none of the grammars, the analysis, the
//! job runner or the demo, and `vl-worker` links them all; `vl worker run` through `vl` runs in
//! `vl-worker` (on Unix in the same process, so the pid a supervisor holds is the worker's);
//! `vl worker start` (and the hook, through the same spawn) starts `vl-worker` itself; a `vl`
//! without its `vl-worker` says where it looked. `vl demo` through `vl` is tests/demo.rs.

use std::collections::HashSet;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use crate::util::{Http, TempDir, VL, WorkerProcess, free_port, wait_for};

/// The worker executable cargo built beside [`VL`] for these tests.
const VL_WORKER: &str = env!("CARGO_BIN_EXE_vl-worker");

/// The C entry point of each of the nine grammars (one per `tree-sitter-*` crate).
const GRAMMARS: [&str; 9] = [
    "tree_sitter_c_sharp",
    "tree_sitter_go",
    "tree_sitter_java",
    "tree_sitter_javascript",
    "tree_sitter_python",
    "tree_sitter_ruby",
    "tree_sitter_rust",
    "tree_sitter_tsx",
    "tree_sitter_typescript",
];

/// Pieces of the (legacy-mangled) Rust symbols of what only `vl-worker` may hold: the parse
/// layer of the analysis, the worker's run loop, the job runner's threads, the demo, the offline
/// question writer.
const WORKER_ONLY: [&str; 5] = [
    "9vibelearn8analysis6syntax",
    "9vibelearn6worker3run",
    "9vibelearn5queue6runner10job_thread",
    "9vibelearn3cli4demo",
    "9vibelearn3llm7offline",
];

/// The names of the symbols the ELF executable at `path` defines (its `.symtab`), read
/// without a tool. Not a search of the file's bytes: the debug info of a grammar's object that
/// the linker pulled from its archive and then dropped whole (`--gc-sections`) still names
/// `tree_sitter_rust`, in `vl` too.
fn defined_symbols(path: &str) -> HashSet<String> {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    assert!(bytes.starts_with(b"\x7fELF") && bytes[4] == 2 && bytes[5] == 1, "{path} is not a 64-bit LE ELF file");
    let at = |offset: usize, width: usize| -> usize {
        let mut le = [0u8; 8];
        le[..width].copy_from_slice(&bytes[offset..offset + width]);
        usize::try_from(u64::from_le_bytes(le)).expect("an offset that fits")
    };
    // ELF64: e_shoff at 0x28, e_shentsize at 0x3a, e_shnum at 0x3c; in a section header
    // sh_type at 4, sh_offset at 0x18, sh_size at 0x20, sh_link at 0x28, sh_entsize at 0x38;
    // in a symbol st_name at 0, st_shndx at 6 (0: undefined, an import).
    let (table, entry, count) = (at(0x28, 8), at(0x3a, 2), at(0x3c, 2));
    let header = |index: usize| table + index * entry;
    let mut names = HashSet::new();
    for section in (0..count).map(header).filter(|&h| at(h + 4, 4) == 2) {
        let (start, size, strings, width) =
            (at(section + 0x18, 8), at(section + 0x20, 8), at(section + 0x28, 4), at(section + 0x38, 8));
        let strings = at(header(strings) + 0x18, 8);
        for symbol in (start..start + size).step_by(width).filter(|&s| at(s + 6, 2) != 0) {
            let name = &bytes[strings + at(symbol, 4)..];
            let end = name.iter().position(|&b| b == 0).expect("a NUL-terminated name");
            names.insert(String::from_utf8_lossy(&name[..end]).into_owned());
        }
    }
    names
}

#[test]
#[cfg_attr(not(target_os = "linux"), ignore = "reads the ELF symbol table of the Linux build")]
fn vl_links_no_grammar_and_no_analysis_and_vl_worker_links_them_all() {
    let vl = defined_symbols(VL);
    let worker = defined_symbols(VL_WORKER);
    // The reading is real: it finds the hook's own code in both and the grammars in vl-worker.
    for both in [&vl, &worker] {
        assert!(both.iter().any(|s| s.contains("9vibelearn4hook3run")), "the hook's entry point is read");
    }
    for grammar in GRAMMARS {
        assert!(worker.contains(grammar), "vl-worker defines {grammar}");
        assert!(!vl.contains(grammar), "vl links the grammar {grammar}: something it calls reaches the analysis");
    }
    for piece in WORKER_ONLY {
        assert!(worker.iter().any(|s| s.contains(piece)), "vl-worker holds {piece}");
        let found: Vec<&String> = vl.iter().filter(|s| s.contains(piece)).take(3).collect();
        assert!(found.is_empty(), "vl holds {piece}, which only vl-worker may: {found:?}");
    }
}

#[test]
fn vl_worker_run_runs_in_vl_worker_and_on_unix_keeps_the_pid() {
    let home = TempDir::new();
    let mut worker = WorkerProcess::start(home.path());
    let (status, health) = worker.http().get("/api/health").expect("health");
    assert_eq!(status, 200, "{health}");
    let pid = health["pid"].as_u64().expect("the worker's pid");
    if cfg!(unix) {
        // exec: the child `vl` this test started is the worker, so its signals reach it.
        assert_eq!(pid, u64::from(worker.child.id()), "{health}");
    } else {
        assert_ne!(pid, u64::from(worker.child.id()), "Windows: vl waits for the vl-worker it started");
    }
    if cfg!(target_os = "linux") {
        let exe = std::fs::read_link(format!("/proc/{pid}/exe")).expect("the worker's executable");
        assert_eq!(exe.file_name().and_then(|n| n.to_str()), Some("vl-worker"), "{}", exe.display());
    }
    // A graceful stop through `vl`'s pid ends the worker with success.
    assert!(worker.terminate().success());
}

#[test]
fn vl_worker_start_runs_vl_worker_itself_detached() {
    let home = TempDir::new();
    let port = free_port();
    let started = crate::util::vl(home.path(), port).args(["worker", "start"]).output().expect("vl worker start");
    let said = String::from_utf8_lossy(&started.stdout);
    assert!(started.status.success(), "{said}{}", String::from_utf8_lossy(&started.stderr));
    let (_, health) = Http::new(port).get("/api/health").expect("health");
    let pid = health["pid"].as_u64().expect("the worker's pid");
    assert!(said.contains(&format!("(pid {pid})")), "{said}");
    if cfg!(target_os = "linux") {
        let exe = std::fs::read_link(format!("/proc/{pid}/exe")).expect("the worker's executable");
        assert_eq!(exe.file_name().and_then(|n| n.to_str()), Some("vl-worker"), "one process: {}", exe.display());
    }
    let stopped = crate::util::vl(home.path(), port).args(["worker", "stop"]).output().expect("vl worker stop");
    assert!(stopped.status.success(), "{}", String::from_utf8_lossy(&stopped.stdout));
    wait_for("the worker to stop", Duration::from_secs(15), || Http::new(port).get("/api/health").is_err());
}

#[test]
fn a_vl_without_its_vl_worker_says_where_it_looked_and_runs_the_rest() {
    let alone = TempDir::new();
    let vl = alone.path().join(Path::new(VL).file_name().expect("vl's file name"));
    std::fs::copy(VL, &vl).expect("copy vl alone");
    let looked = alone.path().join(format!("vl-worker{}", std::env::consts::EXE_SUFFIX));
    let home = TempDir::new();
    let port = free_port();
    for args in [&["demo"][..], &["worker", "run"]] {
        let command = crate::util::vl(home.path(), port);
        let output = Command::new(&vl)
            .args(args)
            .env_clear()
            .envs(command.get_envs().filter_map(|(k, v)| v.map(|v| (k.to_owned(), v.to_owned()))))
            .output()
            .expect("run the lone vl");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(1), "{args:?}: {stderr}");
        assert!(stderr.contains(&looked.display().to_string()) && stderr.contains("reinstall"), "{args:?}: {stderr}");
        assert!(Http::new(port).get("/api/health").is_err(), "{args:?}: no worker started");
    }
    // What does not need the worker still runs.
    let version = Command::new(&vl).arg("--version").output().expect("vl --version");
    assert!(version.status.success() && String::from_utf8_lossy(&version.stdout).starts_with("vl "));
}
