#!/usr/bin/env python3
"""A real HTTP server on 127.0.0.1 for prof-resolve's golden cases.

serve.py DIR PORTFILE   serves DIR (a registry) on an ephemeral port, writes the port to PORTFILE
                        once listening, and runs until killed. Requests are not logged.
serve.py --closed-port  prints a port on 127.0.0.1 that nothing listens on (bound, then closed).
"""
import functools
import http.server
import os
import socket
import sys


class quiet_handler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def main():
    if sys.argv[1:] == ["--closed-port"]:
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        print(s.getsockname()[1])
        s.close()
        return
    root, portfile = sys.argv[1], sys.argv[2]
    handler = functools.partial(quiet_handler, directory=root)
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    tmp = portfile + ".tmp"
    with open(tmp, "w") as f:
        f.write(str(srv.server_address[1]))
    os.rename(tmp, portfile)
    srv.serve_forever()


if __name__ == "__main__":
    main()
