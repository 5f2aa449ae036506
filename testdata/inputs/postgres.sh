# Sourced by golden cases that need a real PostgreSQL: initdb a private cluster in a scratch
# directory, start it on a free port (Unix socket only), export PG* for psql, and stop and
# remove it on exit. Sets PG_DIR. Needs the Debian postgresql package (scripts/install-deps).
# The cluster is thrown away on exit, so nothing is flushed to disk (initdb --no-sync, fsync and
# synchronous_commit off, no full-page writes): what a query returns does not depend on it.
pgbin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
[ -x "$pgbin/initdb" ] || { echo "no PostgreSQL server binaries under /usr/lib/postgresql" >&2; exit 1; }
PG_DIR=$(mktemp -d /tmp/prof-pg.XXXXXX)
as_pg() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
[ "$(id -u)" = 0 ] && chown postgres "$PG_DIR"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
trap 'as_pg "$pgbin/pg_ctl" -D "$PG_DIR/data" -m immediate stop >/dev/null 2>&1; rm -rf "$PG_DIR"' EXIT
as_pg "$pgbin/initdb" --no-sync -D "$PG_DIR/data" -A trust -U postgres >/dev/null 2>&1 || { echo "initdb failed" >&2; exit 1; }
as_pg "$pgbin/pg_ctl" -D "$PG_DIR/data" -o "-p $port -k $PG_DIR -c listen_addresses='' -c fsync=off -c synchronous_commit=off -c full_page_writes=off" -l "$PG_DIR/log" -w start >/dev/null 2>&1 \
  || { echo "postgres did not start" >&2; cat "$PG_DIR/log" >&2; exit 1; }
export PGHOST=$PG_DIR PGPORT=$port PGUSER=postgres PGDATABASE=postgres PGTZ=UTC
