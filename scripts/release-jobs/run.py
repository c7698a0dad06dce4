"""Runs one build job of .github/workflows/release.yml here, as a GitHub runner would.

Reads the workflow (so what runs is what the file says), picks the matrix entry, and runs the
job's steps in order in a fresh clone of HEAD: `run:` steps with the job's shell, the matrix
substituted, the step's `env`, and the runner's own variables (CI=true, GITHUB_ACTIONS=true,
RUNNER_OS); `actions/checkout` is the clone; `actions/upload-artifact` checks that each of its
paths exists and holds files (the step's `if-no-files-found: error`). Any other action fails:
this job would then need a stand-in written here first.

Usage: python3 scripts/release-jobs/run.py JOB_KEY WORK_DIR
JOB_KEY: linux (the x86_64-unknown-linux-gnu entry), linux-arm64 (the aarch64-unknown-linux-gnu
entry, cross-built with the environment scripts/release-jobs-here.sh gives) or windows (the
windows-* entry, built for x86_64-pc-windows-gnu with that environment, since MSVC does not
exist here). Prints each step's time; exits non-zero at the first step that fails.
"""

import os
import re
import subprocess
import sys
import time

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def pick(matrix, key):
    for entry in matrix["include"]:
        if key == "linux" and entry["target"] == "x86_64-unknown-linux-gnu":
            return dict(entry)
        if key == "linux-arm64" and entry["target"] == "aarch64-unknown-linux-gnu":
            return dict(entry)
        if key == "windows" and entry["os"].startswith("windows-"):
            entry = dict(entry)
            entry["target"] = "x86_64-pc-windows-gnu"
            return entry
    sys.exit(f"no matrix entry for {key}")


def substitute(text, matrix):
    def one(match):
        expr = match.group(1).strip()
        if expr.startswith("matrix."):
            return str(matrix[expr[len("matrix."):]])
        sys.exit(f"cannot evaluate ${{{{ {expr} }}}} here")
    return re.sub(r"\$\{\{(.*?)\}\}", one, text)


def main():
    key, work = sys.argv[1], sys.argv[2]
    workflow = yaml.safe_load(open(os.path.join(ROOT, ".github/workflows/release.yml"), encoding="utf-8"))
    job = workflow["jobs"]["build"]
    matrix = pick(job["strategy"]["matrix"], key)
    shell = job.get("defaults", {}).get("run", {}).get("shell", "bash")
    runner_os = "Windows" if key == "windows" else "Linux"
    env = dict(os.environ, CI="true", GITHUB_ACTIONS="true", RUNNER_OS=runner_os, GITHUB_WORKSPACE=work)
    print(f"== job build {matrix['target']} (from {matrix['os']}), in {work}", flush=True)
    for number, step in enumerate(job["steps"], 1):
        started = time.monotonic()
        name = step.get("name") or step.get("uses") or step["run"].splitlines()[0]
        print(f"== step {number}: {name}", flush=True)
        uses = step.get("uses", "")
        if uses.startswith("actions/checkout@"):
            subprocess.run(["rm", "-rf", work], check=True)
            subprocess.run(["git", "clone", "--quiet", "--no-hardlinks", ROOT, work], check=True)
        elif uses.startswith("actions/upload-artifact@"):
            paths = [p.strip() for p in step["with"]["path"].splitlines() if p.strip()]
            for path in paths:
                full = os.path.join(work, path)
                files = [f for _, _, names in os.walk(full) for f in names] if os.path.isdir(full) else []
                if not files:
                    sys.exit(f"upload-artifact: {path} holds no files (if-no-files-found: error)")
                print(f"   {path}: {', '.join(sorted(files))}")
        elif "run" in step:
            step_env = {k: substitute(str(v), matrix) for k, v in step.get("env", {}).items()}
            command = substitute(step["run"], matrix)
            result = subprocess.run([shell, "-eo", "pipefail", "-c", command], cwd=work, env={**env, **step_env})
            if result.returncode != 0:
                sys.exit(f"step {number} ({name}) failed with exit code {result.returncode}")
        else:
            sys.exit(f"no stand-in here for the action {uses}")
        print(f"== step {number} took {time.monotonic() - started:.0f} s", flush=True)


if __name__ == "__main__":
    main()
