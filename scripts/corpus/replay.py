"""Replays one corpus session (tests/fixtures/corpus/*.json) into two project folders: `before`
(the files as they were when the first command failed) and `after` (the files at the end), and
writes that command and its recorded error beside them. Used by scripts/corpus-check.sh.

Usage: replay.py SESSION.json OUT_DIR
"""
import json, sys, os, pathlib
src, out = sys.argv[1], sys.argv[2]
d = json.load(open(src))
def write(root, files):
    for p, c in files.items():
        f = pathlib.Path(root, p); f.parent.mkdir(parents=True, exist_ok=True); f.write_text(c)
files = dict(d['project_files'])
failed = False
for s in d['steps']:
    i = s.get('input'); i = json.loads(i) if isinstance(i, str) else i
    if 'write_file' in s:
        w = s['write_file']; w = json.loads(w) if isinstance(w, str) else w
        files[w['path']] = w['content']
    if i.get('hook_event_name') == 'PostToolUseFailure' and not failed:
        failed = True
        write(out + '/before', files)
        open(out + '/error.txt', 'w').write(i.get('error', ''))
        open(out + '/command.txt', 'w').write(i['tool_input']['command'])
write(out + '/after', files)
