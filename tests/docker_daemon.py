"""A real HTTP server on a Unix socket standing in for a Docker daemon that has no images: it
answers the version and ping calls and a 404 for every image, and keeps the paths it was asked."""

from __future__ import annotations

import json
import socketserver
import threading
from http.server import BaseHTTPRequestHandler
from pathlib import Path


class EmptyDaemon:
    def __init__(self, socket_path: Path) -> None:
        self.socket_path = socket_path
        self.asked: list[str] = []
        daemon = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                daemon.asked.append(self.path)
                path = self.path.split("?")[0]
                if path.endswith("/version"):
                    self._reply(200, {"ApiVersion": "1.41", "Version": "24.0.0", "MinAPIVersion": "1.12"})
                elif path.endswith("/_ping"):
                    self._reply(200, "OK")
                else:
                    self._reply(404, {"message": f"No such image: {path}"})

            do_HEAD = do_GET

            def _reply(self, status: int, body: object) -> None:
                data = body.encode() if isinstance(body, str) else json.dumps(body).encode()
                self.send_response(status)
                self.send_header(
                    "Content-Type", "text/plain" if isinstance(body, str) else "application/json"
                )
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def address_string(self) -> str:
                return "docker"

            def log_message(self, *args: object) -> None:
                pass

        class Server(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
            daemon_threads = True

        self.server = Server(str(socket_path), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"unix://{self.socket_path}"

    def __enter__(self) -> EmptyDaemon:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
