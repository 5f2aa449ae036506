# Sourced by the HTTP golden cases: serve DIR on 127.0.0.1 and set $URL; the server is killed
# when the case's shell exits.
serve_registry() {
  local portfile
  portfile=$(mktemp -u)
  python3 "$TESTDATA/prof-resolve/inputs/serve.py" "$1" "$portfile" &
  server_pid=$!
  trap 'kill "$server_pid" 2>/dev/null; wait "$server_pid" 2>/dev/null; rm -f "$portfile"' EXIT
  for _ in $(seq 100); do [ -s "$portfile" ] && break; sleep 0.05; done
  URL="http://127.0.0.1:$(cat "$portfile")"
}
