#!/usr/bin/env python3
"""A loopback model provider for the Mode B end-to-end tests.

usage: fake_llm.py SCRIPT PORT_FILE LOG_FILE

Serves OpenAI-compatible POST /v1/chat/completions and Anthropic POST
/v1/messages on 127.0.0.1 (a free port, written to PORT_FILE once it
listens). Each request takes the next entry of SCRIPT, a JSON array of
{"status": 200, "headers": {...}, "text": "..."} (the text is wrapped the way
the provider wraps a model's answer) or {"status": N, "body": {...}} (sent as
is). When the script is used up every request answers 500. Every request is
appended to LOG_FILE as one JSON line {path, headers, body}, so tests can
count requests and check exactly what was sent. Anything else answers 404.
"""
import json
import os
import sys
from http.server import BaseHTTPRequestHandler, HTTPServer

script_path, port_file, log_path = sys.argv[1:4]
with open(script_path) as f:
    script = json.load(f)
state = {"next": 0}


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def do_POST(self):
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length)
        try:
            body = json.loads(raw)
        except ValueError:
            body = None
        with open(log_path, "a") as log:
            log.write(json.dumps({"path": self.path, "headers": {k.lower(): v for k, v in self.headers.items()},
                                  "body": body}) + "\n")
        if self.path not in ("/v1/chat/completions", "/v1/messages"):
            return self.answer(404, {}, {"error": {"message": "not found"}})
        if state["next"] >= len(script):
            return self.answer(500, {}, {"error": {"message": "the fake provider's script is used up"}})
        entry = script[state["next"]]
        state["next"] += 1
        status = entry.get("status", 200)
        if "text" in entry:
            if self.path == "/v1/messages":
                payload = {"id": "msg_fake", "type": "message", "role": "assistant",
                           "content": [{"type": "text", "text": entry["text"]}],
                           "stop_reason": "end_turn", "model": (body or {}).get("model")}
            else:
                payload = {"id": "chatcmpl-fake", "object": "chat.completion", "model": (body or {}).get("model"),
                           "choices": [{"index": 0, "finish_reason": "stop",
                                        "message": {"role": "assistant", "content": entry["text"]}}]}
        else:
            payload = entry.get("body", {})
        self.answer(status, entry.get("headers", {}), payload)

    def answer(self, status, headers, payload):
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        for k, v in headers.items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)


server = HTTPServer(("127.0.0.1", 0), Handler)
tmp = port_file + ".tmp"
with open(tmp, "w") as f:
    f.write(str(server.server_address[1]))
os.rename(tmp, port_file)
server.serve_forever()
