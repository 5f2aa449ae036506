#!/usr/bin/env python3
"""A real HTTP server on 127.0.0.1 for prof-harvest's golden cases: serves one rows file
under several behaviours, chosen by the request path. Writes its port to PORTFILE.

Usage: http_server.py ROWS_FILE PORTFILE
  /rows.jsonl          200, Content-Length
  /gzip.jsonl          200, Content-Encoding: gzip when the client accepts it
  /export.jsonl.gz     200, gzip bytes as application/gzip (no Content-Encoding)
  /flaky.jsonl         503 (Retry-After: 0) on the first request, then as /rows.jsonl
  /down.jsonl          503 always
  /cut.jsonl           Content-Length of the whole body, then half of it, then close
  /cut-early.jsonl     Content-Length of the whole body, then close before any of it
  /chunked-cut.jsonl   chunked, the body cut without its last chunk
  /gzip-cut.jsonl      Content-Encoding: gzip, the first half of the rows (whole lines) compressed
                       and ended by a sync flush instead of the gzip trailer, Content-Length matching
  /two-lengths.jsonl   two Content-Length headers: the whole body's and its first half's (whole lines)
  /secret.jsonl        401 unless "Authorization: Bearer $PROF_TEST_TOKEN"
  /missing.jsonl       404
"""
import gzip
import http.server
import os
import sys
import threading
import zlib

ROWS = open(sys.argv[1], "rb").read()
HALF = ROWS.rfind(b"\n", 0, len(ROWS) // 2) + 1  # the first half of the rows, whole lines
HITS = {}
LOCK = threading.Lock()


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def send_body(self, body, extra=()):
        self.send_response(200)
        self.send_header("Content-Type", "application/x-ndjson")
        for k, v in extra:
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def fail(self, code, extra=()):
        body = b"no\n"
        self.send_response(code)
        for k, v in extra:
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        path = self.path.split("?")[0]
        with LOCK:
            HITS[path] = HITS.get(path, 0) + 1
            hits = HITS[path]
        if path == "/rows.jsonl":
            self.send_body(ROWS)
        elif path == "/gzip.jsonl":
            if "gzip" in self.headers.get("Accept-Encoding", ""):
                self.send_body(gzip.compress(ROWS), [("Content-Encoding", "gzip")])
            else:
                self.send_body(ROWS)
        elif path == "/export.jsonl.gz":
            self.send_body(gzip.compress(ROWS), [("Content-Type", "application/gzip")])
        elif path == "/flaky.jsonl":
            if hits == 1:
                self.fail(503, [("Retry-After", "0")])
            else:
                self.send_body(ROWS)
        elif path == "/down.jsonl":
            self.fail(503)
        elif path == "/cut.jsonl":
            self.send_response(200)
            self.send_header("Content-Length", str(len(ROWS)))
            self.end_headers()
            self.wfile.write(ROWS[: len(ROWS) // 2])
            self.wfile.flush()
            self.close_connection = True
        elif path == "/cut-early.jsonl":
            self.send_response(200)
            self.send_header("Content-Length", str(len(ROWS)))
            self.end_headers()
            self.wfile.flush()
            self.close_connection = True
        elif path == "/chunked-cut.jsonl":
            self.send_response(200)
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            half = ROWS[: len(ROWS) // 2]
            self.wfile.write(b"%x\r\n%s\r\n" % (len(half), half))
            self.wfile.flush()
            self.close_connection = True
        elif path == "/gzip-cut.jsonl":
            z = zlib.compressobj(6, zlib.DEFLATED, 31)
            body = z.compress(ROWS[:HALF]) + z.flush(zlib.Z_SYNC_FLUSH)
            self.send_body(body, [("Content-Encoding", "gzip")])
        elif path == "/two-lengths.jsonl":
            self.send_response(200)
            self.send_header("Content-Length", str(len(ROWS)))
            self.send_header("Content-Length", str(HALF))
            self.end_headers()
            self.wfile.write(ROWS)
        elif path == "/secret.jsonl":
            if self.headers.get("Authorization") == "Bearer " + os.environ.get("PROF_TEST_TOKEN", "-"):
                self.send_body(ROWS)
            else:
                self.fail(401)
        else:
            self.fail(404)


class Server(http.server.ThreadingHTTPServer):
    def handle_error(self, request, client_address):
        pass  # a client hanging up mid-body is what the cases provoke


srv = Server(("127.0.0.1", 0), Handler)
with open(sys.argv[2] + ".tmp", "w") as f:
    f.write(str(srv.server_address[1]))
os.rename(sys.argv[2] + ".tmp", sys.argv[2])
srv.serve_forever()
