# Sourced by scripts/bench.sh, scripts/scale-bench.sh and scripts/windows-check.sh, which start
# workers of their own: `free_port` prints a loopback port nobody listens on now.
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
