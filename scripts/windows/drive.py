#!/usr/bin/env python3
"""Drives one `vl` binary through what a user's IDE does, as real processes, and prints what was
stored as JSON. scripts/windows-check.sh runs it twice, on the Linux `vl` and on `vl.exe` under
wine, and compares the two (SPEC §10):

1. With no worker running, the recorded Claude Code session (tests/fixtures) is replayed hook by
   hook, plus a failed tool call: every hook but SessionStart must return at once (its output
   pipe closed), the first one enqueueing directly and starting a worker in the background;
   SessionStart waits for that worker, as designed.
2. With the worker up, the recorded Cursor session plus the Cursor events it lacks
   (afterMCPExecution, postToolUseFailure, sessionEnd).
3. The worker's HTTP API (health, job stats with the admin token) until both pipelines finish;
   the rows each event left are counted.
4. Hook time: N observation hooks with the worker up (median and worst).
5. `vl quiz` in a pipe, answering two questions.
6. `vl worker stop`.

Usage: drive.py --data DIR --project DIR --port N [--wine] VL
With --wine, VL is a Windows binary run through `wine64`, and paths handed to it are Z: paths.

`drive.py --install-check --data HOME [--wine] VL` instead checks install and uninstall with the
home folder at HOME (HOME; under wine the prefix's own user profile, which wine sets as
USERPROFILE whatever the environment says) and the data dir left to its default: the
stable copy in <home>/.vibelearn/bin, the shell form without a `claude` on PATH and the exec form
with one new enough, the registered commands run as the IDE would run them, and uninstall
giving back the settings and removing the copy with the last install. Under wine also
`--add-to-path` (the registry's user PATH, read back with wine's `reg`), a worker running from
the copy stopped by the last uninstall, and a copy another process runs moved aside.
"""

import argparse
import json
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FIXTURES = os.path.join(ROOT, "tests", "fixtures", "sessions")
PORT_ENV = "VIBELEARN_WORKER_PORT"


def native(path, wine):
    """A path as the binary sees it. Under wine: C:\\… inside the prefix's drive_c, else Z:\\…
    (Z: is the Unix root there)."""
    if not wine:
        return path
    drive_c = os.path.join(os.environ.get("WINEPREFIX", os.path.expanduser("~/.wine")), "drive_c")
    if os.path.abspath(path).startswith(drive_c + os.sep):
        return "C:" + os.path.abspath(path)[len(drive_c):].replace("/", "\\")
    return "Z:" + path.replace("/", "\\")


class Vl:
    def __init__(self, binary, data, port, wine):
        self.binary, self.data, self.port, self.wine = binary, data, port, wine
        self.env = {
            "PATH": os.environ.get("PATH", ""),
            "VIBELEARN_DATA_DIR": native(data, wine),
            PORT_ENV: str(port),
            "VIBELEARN_PROVIDER": "offline",
            "VIBELEARN_SYNCHRONOUS": "NORMAL",
            "HOME": data,
            "USERPROFILE": native(data, wine),
        }
        for name in ("WINEPREFIX", "WINEDEBUG", "WINEDLLOVERRIDES"):
            if name in os.environ:
                self.env[name] = os.environ[name]

    def argv(self, args):
        return (["wine64", self.binary] if self.wine else [self.binary]) + list(args)

    def run(self, args, stdin=b"", timeout=120):
        """Runs to the end of its stdout (as an IDE reads a hook: until the pipe closes).

        stderr goes to a file, not a pipe: under wine every process a wine process starts holds
        that process's Unix stderr for wine's own messages, whatever its Windows handles are, so
        a detached worker would keep a stderr pipe open. On Windows that does not happen, and
        stdout, a pipe here, is what shows whether the worker holds the hook's handles."""
        started = time.monotonic()
        with tempfile.TemporaryFile() as stderr:
            done = subprocess.run(self.argv(args), input=stdin, stdout=subprocess.PIPE, stderr=stderr, env=self.env,
                                  timeout=timeout)
            stderr.seek(0)
            done.stderr = stderr.read()
        return done, time.monotonic() - started


def fill(value, project):
    text = json.dumps(value).replace("{{PROJECT}}", json.dumps(project)[1:-1])
    return json.loads(text)


def replay(vl, path, platform, project_unix, project_native):
    session = json.load(open(path, encoding="utf-8"))
    for relative, content in session["project_files"].items():
        path = os.path.join(project_unix, relative)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        open(path, "w", encoding="utf-8").write(content)
    timings = []
    for step in session["steps"]:
        if step.get("write_file"):
            path = os.path.join(project_unix, step["write_file"]["path"])
            os.makedirs(os.path.dirname(path), exist_ok=True)
            open(path, "w", encoding="utf-8").write(step["write_file"]["content"])
        stdin = json.dumps(fill(step["input"], project_native)).encode()
        done, took = vl.run(["hook", platform, step["event"]], stdin)
        lines = done.stdout.decode().splitlines()
        if done.returncode != 0 or len(lines) != 1 or done.stderr.strip():
            sys.exit(f"{platform} {step['event']}: exit {done.returncode}, stdout {done.stdout!r}, stderr {done.stderr!r}")
        json.loads(lines[0])
        timings.append({"platform": platform, "event": step["event"], "seconds": round(took, 3)})
    return timings


def http(port, path, token=None, method="GET", body=None):
    request = urllib.request.Request(f"http://127.0.0.1:{port}{path}", method=method)
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    if body is not None:
        request.add_header("Content-Type", "application/json")
        request.data = json.dumps(body).encode()
    with urllib.request.urlopen(request, timeout=10) as response:
        return response.status, json.loads(response.read() or b"null")


def wait(what, seconds, check):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            if check():
                return
        except OSError:
            pass
        time.sleep(0.2)
    sys.exit(f"timed out waiting for {what}")


def token(data):
    for name in ("worker.key", "admin.token"):
        path = os.path.join(data, name)
        if os.path.exists(path):
            return open(path).read().strip()
    return None


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", required=True)
    parser.add_argument("--project")
    parser.add_argument("--port", type=int)
    parser.add_argument("--install-check", action="store_true")
    parser.add_argument("--wine", action="store_true")
    parser.add_argument("--hook-runs", type=int, default=20)
    parser.add_argument("vl")
    args = parser.parse_args()
    if args.install_check:
        return install_check(args.vl, args.data, args.wine)
    vl = Vl(args.vl, args.data, args.port, args.wine)
    try:
        session(vl, args)
    finally:
        # A failed step must not leave the worker it started running.
        if port_open(args.port):
            vl.run(["worker", "stop"])


def session(vl, args):
    report = {}

    # 1. Claude Code, the worker down at first.
    claude_project = os.path.join(args.project, "claude")
    claude_native = native(claude_project, args.wine)
    failure = {
        "event": "observation",
        "input": {"session_id": "claude-cart-1", "cwd": "{{PROJECT}}", "hook_event_name": "PostToolUseFailure",
                  "tool_name": "Bash", "tool_input": {"command": "npx tsc --noEmit"}, "tool_use_id": "toolu_fail",
                  "error": "src/cart.ts(2,10): error TS2322: Type 'string' is not assignable to type 'number'.",
                  "is_interrupt": False},
    }
    session = json.load(open(os.path.join(FIXTURES, "nextjs-cart.json"), encoding="utf-8"))
    claude_id = session["steps"][0]["input"].get("session_id")
    failure["input"]["session_id"] = claude_id
    # The failed call goes in before the Stop hook, as in a real session.
    first = {"event": "observation", "input": dict(session["steps"][1]["input"])}
    first["input"].update({"hook_event_name": "PostToolUse", "tool_name": "Read", "tool_use_id": "toolu_down",
                           "tool_input": {"file_path": "{{PROJECT}}/package.json"}, "tool_response": {"ok": True}})
    first["input"].pop("prompt", None)
    # Worker down: this hook enqueues into the database itself and starts a worker.
    done, took = vl.run(["hook", "claude-code", "observation"], json.dumps(fill(first["input"], claude_native)).encode())
    if done.returncode != 0 or done.stdout.strip() != b'{"continue":true}':
        sys.exit(f"the first hook with the worker down failed: {done}")
    report["hook_with_worker_down_seconds"] = round(took, 3)
    wait("the worker the hook started", 60, lambda: http(args.port, "/api/readiness")[0] == 200)
    # The fixture's steps with the failed call before Stop.
    steps = session["steps"]
    stop_at = next(i for i, s in enumerate(steps) if s["event"] == "summarize")
    timings = []
    session_steps = steps[:stop_at] + [failure] + steps[stop_at:]
    json_path = os.path.join(args.project, "claude-steps.json")
    json.dump(dict(session, steps=session_steps), open(json_path, "w", encoding="utf-8"))
    timings += replay(vl, json_path, "claude-code", claude_project, claude_native)

    # 2. Cursor, the worker up, with the events the fixture lacks.
    cursor_project = os.path.join(args.project, "cursor")
    cursor_native = native(cursor_project, args.wine)
    cursor = json.load(open(os.path.join(FIXTURES, "cursor-fastapi.json"), encoding="utf-8"))
    base = {k: v for k, v in cursor["steps"][0]["input"].items() if k in ("conversation_id", "generation_id", "workspace_roots")}
    more = [
        {"event": "observation", "input": dict(base, hook_event_name="afterMCPExecution", tool_name="github.search",
                                                  tool_input={"q": "fastapi"}, result_json="{\"items\":[]}")},
        {"event": "observation", "input": dict(base, hook_event_name="postToolUseFailure", tool_name="Shell",
                                                  tool_input={"command": "pytest"}, error="1 failed")},
    ]
    cstop = next(i for i, s in enumerate(cursor["steps"]) if s["event"] == "summarize")
    cursor_steps = cursor["steps"][:cstop] + more + cursor["steps"][cstop:] + [
        {"event": "session-complete", "input": dict(base, hook_event_name="sessionEnd", reason="user_close")}
    ]
    json_path = os.path.join(args.project, "cursor-steps.json")
    json.dump(dict(cursor, steps=cursor_steps), open(json_path, "w", encoding="utf-8"))
    timings += replay(vl, json_path, "cursor", cursor_project, cursor_native)
    report["hooks"] = timings

    # 3. The HTTP API until both pipelines finish.
    key = token(args.data)
    status, health = http(args.port, "/api/health", key)
    report["health_status"] = status

    def settled():
        _, stats = http(args.port, "/api/jobs/stats", key)
        by_state = stats["by_state"]
        return all(by_state.get(s, 0) == 0 for s in ("available", "running", "retryable")) and by_state.get("succeeded", 0) > 0

    wait("both sessions' jobs to finish", 180, settled)
    _, stats = http(args.port, "/api/jobs/stats", key)
    report["jobs_by_kind"] = {kind: counts for kind, counts in sorted(stats["by_kind"].items())}
    db = sqlite3.connect(os.path.join(args.data, "vibelearn.db"))
    count = lambda sql: db.execute(sql).fetchall()
    report["sessions"] = count("SELECT id, platform, ended_at IS NOT NULL FROM sessions ORDER BY id")
    report["prompts"] = count("SELECT session_id, COUNT(*) FROM prompts GROUP BY session_id ORDER BY session_id")
    report["observations"] = count(
        "SELECT session_id, tool_name, outcome, COUNT(*) FROM observations GROUP BY 1, 2, 3 ORDER BY 1, 2, 3")
    report["concepts"] = count("SELECT COUNT(*) FROM concepts")[0][0]
    report["questions"] = count("SELECT COUNT(*) FROM questions")[0][0]

    # 4. Hook time with the worker up.
    probe = {"session_id": "timing", "cwd": claude_native, "hook_event_name": "PostToolUse", "tool_name": "Bash",
             "tool_input": {"command": "ls"}, "tool_response": {"stdout": "a"}}
    times = []
    for n in range(args.hook_runs):
        probe["tool_use_id"] = f"t{n}"
        done, took = vl.run(["hook", "claude-code", "observation"], json.dumps(probe).encode())
        assert done.returncode == 0, done
        times.append(took)
    report["hook_seconds"] = {"median": round(statistics.median(times), 4), "max": round(max(times), 4)}

    # 5. The quiz in a pipe, then the end of input. Each line is tried in turn until one reads
    # as an answer to the question asked (a letter, true/false, free text) or as a rating.
    done, _ = vl.run(["quiz", "--limit", "2"], b"a\nt\n3\n" * 6)
    out = done.stdout.decode(errors="replace")
    report["quiz_answers_saved"] = count("SELECT COUNT(*) FROM quiz_attempts")[0][0]
    if done.returncode != 0 or report["quiz_answers_saved"] == 0:
        sys.exit(f"vl quiz in a pipe: exit {done.returncode}\n{out}\n{done.stderr.decode(errors='replace')}")

    # 6. Stop.
    done, _ = vl.run(["worker", "stop"])
    if done.returncode != 0:
        sys.exit(f"vl worker stop: {done}")
    wait("the worker to exit", 30, lambda: not port_open(args.port))
    json.dump(report, sys.stdout, indent=1)
    print()


def install_check(binary, home, wine):
    vl = Vl(binary, home, 0, wine)
    del vl.env["VIBELEARN_DATA_DIR"], vl.env[PORT_ENV]
    settings_path = os.path.join(home, ".claude", "settings.json")
    os.makedirs(os.path.dirname(settings_path), exist_ok=True)
    original = {"model": "opus", "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "echo mine"}]}]}}
    json.dump(original, open(settings_path, "w"))
    suffix = ".exe" if wine else ""
    copy = os.path.join(home, ".vibelearn", "bin", "vl" + suffix)
    worker_copy = os.path.join(home, ".vibelearn", "bin", "vl-worker" + suffix)

    def run(args, stdin=b""):
        done, _ = vl.run(args, stdin)
        if done.returncode != 0:
            sys.exit(f"vl {' '.join(args)}: exit {done.returncode}\n{done.stdout.decode()}\n{done.stderr.decode()}")
        return done.stdout.decode()

    def ours(settings, event):
        return [h for g in settings["hooks"][event] for h in g["hooks"] if h["command"] != "echo mine"]

    # No `claude` on PATH: the shell form, through the stable copy under the home folder.
    said = run(["install", "claude-code"])
    if not os.path.isfile(copy) or not os.path.isfile(worker_copy):
        sys.exit(f"no stable copy at {copy}, or no {worker_copy} beside it: {said}")
    stop = ours(json.load(open(settings_path)), "Stop")
    command = stop[0]["command"]
    if "args" in stop[0] or not command.endswith(" hook claude-code summarize") or "\\" in command:
        sys.exit(f"expected a shell-form command with forward slashes: {stop}")
    # Run it as the IDE's shell would (cmd under wine, sh here).
    shell = ["wine64", "cmd", "/d", "/c", command] if wine else ["sh", "-c", command]
    hook_input = json.dumps({"session_id": "install-check", "cwd": native(home, wine), "hook_event_name": "Stop",
                             "stop_hook_active": True}).encode()
    done = subprocess.run(shell, input=hook_input, capture_output=True, env=vl.env, timeout=60)
    if done.stdout.strip() != b'{"continue":true}':
        sys.exit(f"the registered command did not run as a hook: {done}")
    # Cursor too, for the user.
    run(["install", "cursor"])
    cursor = json.load(open(os.path.join(home, ".cursor", "hooks.json")))
    if not cursor["hooks"]["stop"][0]["command"].endswith(" hook cursor summarize"):
        sys.exit(f"cursor: {cursor}")

    # A `claude` new enough on PATH: the exec form replaces the shell form in place.
    fake = os.path.join(home, "fakebin")
    os.makedirs(fake, exist_ok=True)
    if wine:
        open(os.path.join(fake, "claude.cmd"), "w").write("@echo 2.1.200 (Claude Code)\r\n")
        vl.env["WINEPATH"] = native(fake, wine)
    else:
        open(os.path.join(fake, "claude"), "w").write("#!/bin/sh\necho '2.1.200 (Claude Code)'\n")
        os.chmod(os.path.join(fake, "claude"), 0o755)
        vl.env["PATH"] = fake + os.pathsep + vl.env["PATH"]
    said = run(["install", "claude-code"])
    if "2.1.200" not in said:
        sys.exit(f"the Claude Code version was not read: {said}")
    stop = ours(json.load(open(settings_path)), "Stop")
    if len(stop) != 1 or stop[0].get("args") != ["hook", "claude-code", "summarize"]:
        sys.exit(f"expected one exec-form hook: {stop}")
    program = stop[0]["command"]
    exec_argv = (["wine64", program] if wine else [program]) + stop[0]["args"]
    done = subprocess.run(exec_argv, input=hook_input, capture_output=True, env=vl.env, timeout=60)
    if done.stdout.strip() != b'{"continue":true}':
        sys.exit(f"the exec-form hook did not run: {done}")

    # Uninstall: the copy stays while Cursor uses it and goes with the last install.
    run(["uninstall", "claude-code"])
    if json.load(open(settings_path)) != original or not os.path.isfile(copy):
        sys.exit("uninstalling Claude Code's hooks did not give the settings back, or took the copy Cursor uses")
    report = {"install_check": "ok", "copy": native(copy, wine), "shell_form": command,
              "exec_form": [program] + stop[0]["args"]}
    if not wine:
        said = run(["uninstall", "cursor"])
        if os.path.exists(copy) or os.path.exists(worker_copy):
            sys.exit(f"the copy or its vl-worker outlived the last uninstall: {said}")
    else:
        report.update(windows_uninstall_check(vl, run, copy, home))
    print(json.dumps(report))


def user_path(vl):
    """The user's PATH in the registry (`HKCU\\Environment`, value Path) as wine's `reg` reads
    it, split into entries; None when there is no such value."""
    done = subprocess.run(["wine64", "reg", "query", "HKCU\\Environment", "/v", "Path"], capture_output=True,
                          env=vl.env, timeout=60)
    for line in done.stdout.decode(errors="replace").splitlines():
        words = line.split(None, 2)
        if len(words) >= 2 and words[0].lower() == "path" and words[1].startswith("REG_"):
            return [e for e in (words[2] if len(words) == 3 else "").split(";") if e]
    return None


def free_port():
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def windows_uninstall_check(vl, run, copy, home):
    """With Cursor's install the last user of the copy (Claude Code's is already uninstalled):
    `--add-to-path` puts the copy's folder in the registry's user PATH and the last uninstall
    takes it out; a worker running from the copy is stopped before the copy is removed; a copy
    that another process still runs is moved aside (Windows will not delete a running
    program), and the next install removes what was moved aside."""
    bin_dir = os.path.dirname(copy)
    bin_native = native(bin_dir, True).lower()
    before = user_path(vl) or []
    if any(e.rstrip("\\").lower() == bin_native for e in before):
        sys.exit(f"the user PATH holds {bin_native} before --add-to-path: {before}")
    said = run(["install", "cursor", "--add-to-path"])
    after = user_path(vl) or []
    if "your user PATH" not in said or not after or after[0].rstrip("\\").lower() != bin_native:
        sys.exit(f"--add-to-path did not put {bin_native} first in the user PATH: {after}\n{said}")
    if after[1:] != before:
        sys.exit(f"--add-to-path changed the rest of the user PATH: {before} -> {after}")
    said = run(["install", "cursor", "--add-to-path"])
    if "already added" not in said or user_path(vl) != after:
        sys.exit(f"a second --add-to-path added it again: {user_path(vl)}\n{said}")

    # A worker of this data dir, started from the copy (as the hooks start it): uninstall stops
    # it before removing the copy, and takes the folder out of the user PATH again.
    port = free_port()
    vl.env[PORT_ENV] = str(port)
    worker = Vl(native(copy, True), home, port, True)
    worker.env = dict(vl.env)
    done, _ = worker.run(["worker", "start"])
    if done.returncode != 0:
        sys.exit(f"vl worker start from the copy: {done}")
    wait("the worker started from the copy", 60, lambda: port_open(port))
    pid = http(port, "/api/health", token(os.path.join(home, ".vibelearn")))[1].get("pid")
    said = run(["uninstall", "cursor"])
    if f"stopped the worker (pid {pid})" not in said or port_open(port):
        sys.exit(f"uninstall did not stop the worker (pid {pid}) running from the copy: {said}")
    if os.path.exists(bin_dir):
        sys.exit(f"{bin_dir} outlived the last uninstall: {os.listdir(bin_dir)}\n{said}")
    if user_path(vl) != before or "out of your PATH again" not in said:
        sys.exit(f"uninstall did not take {bin_native} out of the user PATH: {user_path(vl)}\n{said}")
    stopped = {"user_path_added": after[0], "worker_stopped_pid": pid}

    # Another process runs the copy (a worker of another data dir, which uninstall does not
    # stop): the copy is moved aside, not left in place, and the next install removes it.
    run(["install", "cursor"])
    other_port, other_data = free_port(), tempfile.mkdtemp(prefix="vl-other-")
    other = Vl(native(copy, True), other_data, other_port, True)
    with open(os.path.join(other_data, "worker.out"), "wb") as out:
        running = subprocess.Popen(other.argv(["worker", "run"]), stdin=subprocess.DEVNULL, stdout=out,
                                   stderr=subprocess.STDOUT, env=other.env)
    try:
        wait("a worker of another data dir, from the copy", 60, lambda: port_open(other_port))
        said = run(["uninstall", "cursor"])
        # `vl.exe worker run` waits for the vl-worker.exe it runs the worker in: both are running.
        names = os.listdir(bin_dir) if os.path.isdir(bin_dir) else []
        aside = sorted(n for n in names if n.startswith("vl.old-"))
        worker_aside = [n for n in names if n.startswith("vl-worker.old-")]
        if os.path.exists(copy) or len(aside) != 1 or len(worker_aside) != 1 or not port_open(other_port):
            sys.exit(f"a running copy was not moved aside: {os.listdir(bin_dir) if os.path.isdir(bin_dir) else None}"
                     f"\n{said}")
    finally:
        stop = Vl(vl.binary, other_data, other_port, True)
        stop.run(["worker", "stop"])
        running.wait(timeout=60)
        shutil.rmtree(other_data, ignore_errors=True)
    run(["install", "cursor"])
    left = sorted(os.listdir(bin_dir))
    if any(n.startswith(("vl.old-", "vl-worker.old-")) for n in left):
        sys.exit(f"the next install did not remove the copy moved aside: {left}")
    said = run(["uninstall", "cursor"])
    if os.path.exists(bin_dir):
        sys.exit(f"{bin_dir} outlived the last uninstall: {os.listdir(bin_dir)}\n{said}")
    return {"windows_uninstall": "ok", **stopped, "moved_aside": aside[0]}


def port_open(port):
    try:
        http(port, "/api/readiness")
        return True
    except OSError:
        return False


if __name__ == "__main__":
    main()
