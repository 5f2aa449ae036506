# Shared by prof-harvest's golden cases that need a real HTTP server on 127.0.0.1.
# Every case runs in a private scratch directory (concurrent runs never collide), removed on exit.
CASE_TMP=$(mktemp -d)
cd "$CASE_TMP" || exit 99
trap 'rm -rf "$CASE_TMP"' EXIT
# start_server ROWS_FILE: starts http_server.py in the background, sets PORT; stopped on exit.
start_server() {
  rm -f port.tmp
  python3 "$TESTDATA/prof-harvest/http_server.py" "$1" port.tmp 2>/dev/null &
  SERVER_PID=$!
  trap 'kill $SERVER_PID 2>/dev/null; wait $SERVER_PID 2>/dev/null; rm -rf "$CASE_TMP"' EXIT
  for _ in $(seq 200); do [ -s port.tmp ] && break; sleep 0.05; done
  PORT=$(cat port.tmp)
}
# masked CMD...: runs CMD with the server's port in its stderr replaced by PORT (stable bytes).
masked() {
  "$@" 2>err.tmp
  local rc=$?
  sed "s/127\.0\.0\.1:$PORT/127.0.0.1:PORT/g" err.tmp >&2
  rm -f err.tmp
  return $rc
}
