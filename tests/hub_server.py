"""A loopback stand-in for the Hugging Face Hub's dataset endpoints, for ``medlens fetch`` and
``hfds:…?download=1`` tests: repo info, the recursive tree, and ``resolve`` (HEAD and GET) with the
headers huggingface_hub reads (``X-Repo-Commit``, ``ETag`` = the file's sha256, as for LFS files).
``bad_etag`` names a file whose ETag lies, so the client's check can be seen to fail."""

from __future__ import annotations

import contextlib
import hashlib
import json
import threading
from collections.abc import Iterator, Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

COMMIT = "c" * 40


@contextlib.contextmanager
def serve_hub(files: Mapping[str, bytes], *, bad_etag: str = "") -> Iterator[str]:
    """Serve `files` as the dataset repo at COMMIT; yields the endpoint URL."""

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def _json(self, value: object) -> None:
            body = json.dumps(value).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def _file(self, with_body: bool) -> None:
            name = self.path.split("/resolve/", 1)[-1].split("/", 1)[-1].split("?")[0]
            data = files.get(name)
            if data is None:
                self.send_response(404)
                self.end_headers()
                return
            etag = hashlib.sha256(data + (b"x" if name == bad_etag else b"")).hexdigest()
            self.send_response(200)
            self.send_header("X-Repo-Commit", COMMIT)
            self.send_header("ETag", f'"{etag}"')
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            if with_body:
                self.wfile.write(data)

        def do_HEAD(self) -> None:
            self._file(False)

        def do_GET(self) -> None:
            if "/tree/" in self.path:
                self._json([{"type": "file", "path": k, "size": len(v),
                             "oid": hashlib.sha1(v).hexdigest()} for k, v in files.items()])  # fmt: skip
            elif self.path.startswith("/api/datasets/"):
                self._json(
                    {"id": "o/n", "sha": COMMIT, "siblings": [{"rfilename": k} for k in files]}
                )
            else:
                self._file(True)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
