"""Drive headless chromium with the Chrome DevTools protocol over a pipe (no extra Python package).

``chromium --remote-debugging-pipe`` reads protocol messages from file descriptor 3 and writes
its replies and events to descriptor 4, each a JSON object followed by a NUL byte. One page
target is created and attached in flat mode; its events (console calls, exceptions, log
entries, network requests) are collected while waiting for replies.
"""

from __future__ import annotations

import base64
import json
import os
import select
import shutil
import subprocess
import tempfile
import time

CANDIDATES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome")


def find_chromium() -> str | None:
    env = os.environ.get("HARMONIUM_CHROMIUM")
    if env:
        return env if shutil.which(env) or os.path.exists(env) else None
    for name in CANDIDATES:
        path = shutil.which(name)
        if path:
            return path
    return None


class CDPError(RuntimeError):
    pass


class Browser:
    """A headless chromium with one page; ``call(method, **params)`` sends a command to the page."""

    def __init__(self, executable: str, timeout: float = 60.0):
        self.timeout = timeout
        self.events: list[dict] = []
        self._id = 0
        self._buf = b""
        self._profile = tempfile.mkdtemp(prefix="harmonium-chromium-")
        to_child_r, self._to_child_w = os.pipe()
        self._from_child_r, from_child_w = os.pipe()

        def wire():  # in the child: the protocol expects fd 3 (commands in) and fd 4 (replies out)
            a, b = os.dup(to_child_r), os.dup(from_child_w)
            os.dup2(a, 3)
            os.dup2(b, 4)

        args = [executable, "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--no-first-run", "--no-default-browser-check", "--disable-extensions",
                "--disable-background-networking",
                "--disable-component-update", "--disable-sync", "--mute-audio", "--hide-scrollbars",
                f"--user-data-dir={self._profile}", "--remote-debugging-pipe", "about:blank"]
        self._stderr = open(os.path.join(self._profile, "stderr.log"), "wb")  # noqa: SIM115 (closed in close())
        self.proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=self._stderr, pass_fds=(3, 4), preexec_fn=wire)
        os.close(to_child_r)
        os.close(from_child_w)
        self.session = None
        target = self._send("Target.createTarget", {"url": "about:blank"})["targetId"]
        self.session = self._send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]

    # -- protocol -------------------------------------------------------------------------
    def _read_message(self, deadline: float) -> dict:
        while b"\0" not in self._buf:
            left = deadline - time.monotonic()
            if left <= 0:
                raise CDPError("timed out waiting for chromium")
            ready, _, _ = select.select([self._from_child_r], [], [], left)
            if not ready:
                continue
            chunk = os.read(self._from_child_r, 1 << 20)
            if not chunk:
                with open(self._stderr.name, "rb") as fh:
                    err = fh.read().decode(errors="replace")[-2000:]
                raise CDPError(f"chromium closed the pipe (exit {self.proc.poll()}): {err}")
            self._buf += chunk
        raw, self._buf = self._buf.split(b"\0", 1)
        return json.loads(raw)

    def _send(self, method: str, params: dict | None = None, *, session: bool = False, timeout=None) -> dict:
        self._id += 1
        msg = {"id": self._id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = self.session
        os.write(self._to_child_w, json.dumps(msg).encode() + b"\0")
        deadline = time.monotonic() + (timeout or self.timeout)
        while True:
            m = self._read_message(deadline)
            if m.get("id") == self._id:
                if "error" in m:
                    raise CDPError(f"{method}: {m['error']}")
                return m.get("result", {})
            if "method" in m:
                self.events.append(m)

    def call(self, method: str, **params) -> dict:
        return self._send(method, params, session=True)

    def wait_for_event(self, method: str, timeout: float | None = None) -> dict:
        deadline = time.monotonic() + (timeout or self.timeout)
        for e in self.events:
            if e["method"] == method:
                return e
        while True:
            m = self._read_message(deadline)
            if "method" in m:
                self.events.append(m)
                if m["method"] == method:
                    return m

    def evaluate(self, expression: str):
        res = self.call("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in res:
            raise CDPError(f"evaluate({expression!r}): {res['exceptionDetails']}")
        return res["result"].get("value")

    def screenshot(self, path) -> None:
        data = self.call("Page.captureScreenshot", format="png", captureBeyondViewport=True)["data"]
        with open(path, "wb") as fh:
            fh.write(base64.b64decode(data))

    # -- what went wrong on the page ---------------------------------------------------------
    def errors(self) -> list[str]:
        out = []
        for e in self.events:
            p = e.get("params", {})
            if e["method"] == "Runtime.exceptionThrown":
                d = p.get("exceptionDetails", {})
                out.append(f"exception: {d.get('exception', {}).get('description') or d.get('text')}")
            elif e["method"] == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
                out.append("console." + p["type"] + ": " + " ".join(str(a.get("value", a.get("description")))
                                                                     for a in p.get("args", [])))
            elif e["method"] == "Log.entryAdded" and p.get("entry", {}).get("level") == "error":
                out.append(f"log: {p['entry'].get('text')} {p['entry'].get('url', '')}")
        return out

    def requested_urls(self) -> list[str]:
        return [e["params"]["request"]["url"] for e in self.events if e["method"] == "Network.requestWillBeSent"]

    def close(self) -> None:
        try:
            self._send("Browser.close", timeout=5)
        except (CDPError, OSError):
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        for fd in (self._to_child_w, self._from_child_r):
            try:
                os.close(fd)
            except OSError:
                pass
        self._stderr.close()
        shutil.rmtree(self._profile, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
