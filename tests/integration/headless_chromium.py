"""Headless Chromium driven over the DevTools protocol on a pipe (--remote-debugging-pipe),
with Python's standard library only: open a page, collect its console errors, evaluate an
expression in it, and take a screenshot of the whole page.

Used by the HTML report test. The browser is Debian's `chromium`; it is started with its own
profile directory and stopped by its PID, always (use it as a context manager).
"""

import base64
import ctypes
import json
import os
import select
import shutil
import signal
import subprocess
import tempfile
import time

_PR_SET_PDEATHSIG = 1
_LIBC = ctypes.CDLL(None, use_errno=True)  # Loaded here: the child after fork only calls it.


def chromium_binary():
    return shutil.which("chromium") or shutil.which("chromium-browser")


class Browser:
    """One headless Chromium with one page."""

    def __init__(self, timeout=60):
        self.timeout = timeout
        self.errors = []  # console errors, exceptions and error log entries of the page
        self._next_id = 0
        self._buffer = b""
        self._profile = tempfile.mkdtemp(prefix="stormark-chromium-", dir="/var/tmp")
        to_browser_r, self._to_browser = os.pipe()
        self._from_browser, from_browser_w = os.pipe()

        def child_fds():
            # The protocol pipe is fd 3 (commands in) and fd 4 (replies out) in the browser;
            # through fds 100 and 101, in case the pipe's own fds are 3 or 4.
            os.dup2(to_browser_r, 100)
            os.dup2(from_browser_w, 101)
            os.dup2(100, 3)
            os.dup2(101, 4)
            _LIBC.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)  # Dies with the test.

        self._log = open(os.path.join(self._profile, "chromium.log"), "wb")
        self.proc = subprocess.Popen(
            [chromium_binary(), "--headless", "--no-sandbox", "--disable-gpu",
             "--remote-debugging-pipe", f"--user-data-dir={self._profile}",
             "--no-first-run", "--no-default-browser-check", "--disable-extensions",
             "--disable-background-networking", "--hide-scrollbars", "about:blank"],
            stdin=subprocess.DEVNULL, stdout=self._log, stderr=self._log,
            close_fds=False, preexec_fn=child_fds)
        os.close(to_browser_r)
        os.close(from_browser_w)
        self.session = None

    def __enter__(self):
        try:
            target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
            self.session = self.call("Target.attachToTarget",
                                     {"targetId": target, "flatten": True})["sessionId"]
            for domain in ("Runtime", "Log", "Page"):
                self.call(f"{domain}.enable", session=self.session)
        except Exception:
            self.close()
            raise
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        if self.proc.poll() is None:
            try:
                self.proc.send_signal(signal.SIGTERM)
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)
        for fd in (self._to_browser, self._from_browser):
            try:
                os.close(fd)
            except OSError:
                pass
        self._log.close()
        shutil.rmtree(self._profile, ignore_errors=True)

    def browser_log(self):
        with open(os.path.join(self._profile, "chromium.log"), errors="replace") as f:
            return f.read()

    def _send(self, message):
        data = json.dumps(message).encode() + b"\0"
        while data:
            data = data[os.write(self._to_browser, data):]

    def _receive(self, deadline):
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("chromium did not answer in time; its log:\n" +
                                   self.browser_log())
            ready, _, _ = select.select([self._from_browser], [], [], left)
            if ready:
                chunk = os.read(self._from_browser, 1 << 20)
                if not chunk:
                    raise RuntimeError("chromium closed its protocol pipe; its log:\n" +
                                       self.browser_log())
                self._buffer += chunk
        message, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(message)

    def _note(self, event):
        method, params = event.get("method"), event.get("params", {})
        if method == "Runtime.exceptionThrown":
            self.errors.append(params["exceptionDetails"].get("text", "exception"))
        elif method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
            self.errors.append(" ".join(str(a.get("value", a.get("description", "")))
                                        for a in params.get("args", [])))
        elif method == "Log.entryAdded" and params["entry"].get("level") == "error":
            self.errors.append(params["entry"].get("text", ""))

    def call(self, method, params=None, session=None, wait_for=None):
        """Sends a command and returns its result. With `wait_for`, also waits for that event
        (of this session) after the reply."""
        self._next_id += 1
        message = {"id": self._next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        self._send(message)
        deadline = time.monotonic() + self.timeout
        result, seen = None, wait_for is None
        while result is None or not seen:
            reply = self._receive(deadline)
            if reply.get("id") == self._next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                result = reply.get("result", {})
            elif "method" in reply:
                self._note(reply)
                if reply["method"] == wait_for:
                    seen = True
        return result

    def open(self, url):
        self.call("Page.navigate", {"url": url}, session=self.session,
                  wait_for="Page.loadEventFired")

    def evaluate(self, expression):
        reply = self.call("Runtime.evaluate", {"expression": expression, "returnByValue": True},
                          session=self.session)
        if "exceptionDetails" in reply:
            raise RuntimeError(f"evaluate failed: {reply['exceptionDetails']}")
        return reply["result"].get("value")

    def screenshot(self, path, width=1400, max_height=12000):
        """A PNG of the whole page (up to max_height pixels tall)."""
        metrics = {"width": width, "height": 800, "deviceScaleFactor": 1, "mobile": False}
        self.call("Emulation.setDeviceMetricsOverride", metrics, session=self.session)
        # Measured at the screenshot's width: a narrower window lays the page out taller.
        metrics["height"] = min(int(self.evaluate("document.documentElement.scrollHeight")),
                                max_height)
        self.call("Emulation.setDeviceMetricsOverride", metrics, session=self.session)
        height = metrics["height"]
        data = self.call("Page.captureScreenshot", {"format": "png"},
                         session=self.session)["data"]
        with open(path, "wb") as f:
            f.write(base64.b64decode(data))
        return height
