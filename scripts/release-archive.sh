#!/usr/bin/env bash
# Puts one built `vl` and the `vl-worker` beside it (the two ship together: src/executables.rs)
# in a release archive under dist/: vibelearn-<version>-<target>.tar.gz (Linux, macOS) or .zip
# (Windows), holding vl[.exe], vl-worker[.exe], README.md and docs/PLATFORMS.md, with a .sha256
# file beside it. Python's tarfile/zipfile make both, so it runs on every runner and here.
#
# Usage: scripts/release-archive.sh TARGET BINARY    (BINARY is vl; vl-worker is taken from its folder)
set -euo pipefail
cd "$(dirname "$0")/.."
target=${1:?usage: scripts/release-archive.sh TARGET BINARY}
binary=${2:?usage: scripts/release-archive.sh TARGET BINARY}
version=$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -1)
mkdir -p dist
python3 - "$target" "$binary" "$version" <<'PY'
import hashlib, io, os, sys, tarfile, zipfile
target, binary, version = sys.argv[1:]
name = f"vibelearn-{version}-{target}"
suffix = ".exe" if "windows" in target else ""
worker = os.path.join(os.path.dirname(binary), f"vl-worker{suffix}")
if not os.path.isfile(worker):
    sys.exit(f"no vl-worker beside {binary} (looked for {worker})")
files = [(binary, f"{name}/vl{suffix}", 0o755), (worker, f"{name}/vl-worker{suffix}", 0o755),
         ("README.md", f"{name}/README.md", 0o644), ("docs/PLATFORMS.md", f"{name}/PLATFORMS.md", 0o644)]
if "windows" in target:
    path = f"dist/{name}.zip"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for source, inside, mode in files:
            info = zipfile.ZipInfo(inside, date_time=(2020, 1, 1, 0, 0, 0))
            info.external_attr = (0o100000 | mode) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, open(source, "rb").read())
else:
    path = f"dist/{name}.tar.gz"
    with tarfile.open(path, "w:gz") as archive:
        for source, inside, mode in files:
            data = open(source, "rb").read()
            info = tarfile.TarInfo(inside)
            info.size, info.mode, info.mtime = len(data), mode, 0
            archive.addfile(info, io.BytesIO(data))
digest = hashlib.sha256(open(path, "rb").read()).hexdigest()
open(path + ".sha256", "w").write(f"{digest}  {os.path.basename(path)}\n")
print(f"{path} ({os.path.getsize(path)} bytes) sha256 {digest}")
PY
