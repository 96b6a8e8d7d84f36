#!/usr/bin/env python3
"""A static HTTP server on 127.0.0.1 for the automation tests and benchmarks.

Serves ROOT: `GET /a/b` answers ROOT/a/b. It is also an HTTP proxy for made-up
hosts: an absolute-form request `GET http://news.test/a` (what a client sends
through `http_proxy`) answers ROOT/news.test/a, and `/` or a folder answers
its index.html. Missing files are 404. Writes the port it listens on to
PORT_FILE (atomically) and, with --log, one line per request:
`<unix time, seconds> <method> <target>`.
"""

import argparse
import http.server
import os
import sys
import time
import urllib.parse


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("root")
    ap.add_argument("port_file")
    ap.add_argument("--log")
    args = ap.parse_args()
    root = os.path.abspath(args.root)
    log = open(args.log, "a", buffering=1) if args.log else None

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *a):
            pass

        def do_GET(self):
            self.answer(body=True)

        def do_HEAD(self):
            self.answer(body=False)

        def answer(self, body):
            if log:
                log.write(f"{time.time():.6f} {self.command} {self.path}\n")
            u = urllib.parse.urlsplit(self.path)
            rel = urllib.parse.unquote(u.path).lstrip("/")
            if u.scheme in ("http", "https") and u.netloc:
                rel = os.path.join(u.netloc, rel)
            path = os.path.normpath(os.path.join(root, rel))
            if path != root and not path.startswith(root + os.sep):
                return self.send(404, b"outside the root\n")
            if os.path.isdir(path):
                path = os.path.join(path, "index.html")
            if not os.path.isfile(path):
                return self.send(404, b"not found\n")
            with open(path, "rb") as f:
                data = f.read()
            kind = "text/html; charset=utf-8" if path.endswith(".html") else "application/octet-stream"
            if path.endswith(".txt") or os.path.basename(path) == "SHA256SUMS":
                kind = "text/plain; charset=utf-8"
            self.send(200, data if body else b"", kind, len(data))

        def send(self, status, data, kind="text/plain; charset=utf-8", length=None):
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(data) if length is None else length))
            self.end_headers()
            self.wfile.write(data)

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    with open(args.port_file + ".tmp", "w") as f:
        f.write(str(server.server_address[1]))
    os.rename(args.port_file + ".tmp", args.port_file)
    server.serve_forever()


if __name__ == "__main__":
    sys.exit(main())
