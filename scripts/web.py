#!/usr/bin/env python3
"""Serves the browser build and runs its self-test page in headless Chromium.

    web.py serve DIR PORT           serve DIR with the headers cross-origin isolation needs
    web.py selftest DIR NAME...     each self-test page in headless Chromium; prints its line
    web.py compare WEB NATIVE       the page's losses against the desktop build's, per step
    web.py shot DIR LANG OUT.png [STEP...]  a 1280x720 screenshot of the app's page after
                                    the steps: X,Y (a click there), files=A[,B] (the next
                                    file picker the page opens is answered with these files),
                                    drop=A[,B] (the files dropped on the page's middle),
                                    downloads=DIR (what the page saves goes there)

Chromium runs WebGPU on SwiftShader (its own Vulkan on the CPU), as the issue that asked for
the browser build measured on this machine; the page's console goes to Chromium's stderr,
where the self-test's line is looked for.
"""

import fcntl
import functools
import http.server
import json
import os
import select
import signal
import socketserver
import subprocess
import sys
import tempfile
import threading
import time

PREFIX = "BATCHSCOPE_SELFTEST "
CHROMIUM_FLAGS = [
    "--headless=new",
    "--no-sandbox",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-quic",
    "--enable-unsafe-webgpu",
    "--enable-features=Vulkan",
    "--use-vulkan=swiftshader",
    "--use-webgpu-adapter=swiftshader",
    "--use-angle=swiftshader",
    "--enable-logging=stderr",
    "--v=0",
]


class Handler(http.server.SimpleHTTPRequestHandler):
    """Static files with the cross-origin isolation headers and WebAssembly's MIME type."""

    extensions_map = {
        **http.server.SimpleHTTPRequestHandler.extensions_map,
        ".wasm": "application/wasm",
        ".js": "text/javascript",
    }

    def end_headers(self):
        self.send_header("Cross-Origin-Opener-Policy", "same-origin")
        self.send_header("Cross-Origin-Embedder-Policy", "require-corp")
        self.send_header("Cross-Origin-Resource-Policy", "same-origin")
        self.send_header("Cache-Control", "no-cache")
        super().end_headers()

    def log_message(self, *args):
        pass


def server(directory, port):
    handler = functools.partial(Handler, directory=directory)
    socketserver.TCPServer.allow_reuse_address = True
    return socketserver.ThreadingTCPServer(("127.0.0.1", port), handler)


def serve(directory, port):
    httpd = server(directory, port)
    print(f"serving {directory} at http://127.0.0.1:{httpd.server_address[1]}/ (Ctrl+C stops)")
    httpd.serve_forever()


def in_background(directory):
    httpd = server(directory, 0)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return httpd, f"http://127.0.0.1:{httpd.server_address[1]}/"


def chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        for folder in os.environ.get("PATH", "").split(os.pathsep):
            path = os.path.join(folder, name)
            if os.access(path, os.X_OK):
                return path
    sys.exit("error: no Chromium found (sudo apt-get install chromium)")


def console_line(url, timeout_s):
    """Opens `url` in headless Chromium and returns the self-test's line from its console."""
    with tempfile.TemporaryDirectory(ignore_cleanup_errors=True) as profile:
        cmd = [chromium(), *CHROMIUM_FLAGS, f"--user-data-dir={profile}", url]
        # A session of its own, so its GPU and renderer processes go with it.
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                                errors="replace", start_new_session=True)
        found, seen = [], []
        reader = threading.Thread(target=read_console, args=(proc, found, seen), daemon=True)
        reader.start()
        deadline = time.monotonic() + timeout_s
        while not found and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.2)
        stop(proc)
        if not found:
            tail = "\n".join(seen[-25:])
            sys.exit(f"error: no {PREFIX.strip()} line from {url} in {timeout_s} s; "
                     f"Chromium's console said:\n{tail}")
        return found[0]


def stop(proc):
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait()


def read_console(proc, found, seen):
    for line in proc.stderr:
        seen.append(line.rstrip())
        at = line.find(PREFIX)
        if at >= 0:
            # Chromium quotes the message: `"BATCHSCOPE_SELFTEST {...}", source: ...`.
            text = line[at + len(PREFIX):]
            end = text.rfind("}")
            found.append(json.loads(text[: end + 1]))
            return


def selftest(directory, names):
    httpd, base = in_background(directory)
    try:
        for name in names:
            report = console_line(f"{base}index.html?selftest={name}", 300)
            print(PREFIX + json.dumps(report))
    finally:
        httpd.shutdown()


def losses(report):
    return {d["device"]: d for d in report["devices"]}


def compare(web_path, native_path):
    """Each device's losses in the page against the desktop build's, within 1e-4 relative."""
    web = [json.loads(l[len(PREFIX):]) for l in open(web_path) if l.startswith(PREFIX)]
    native = {r["name"]: r for r in
              (json.loads(l[len(PREFIX):]) for l in open(native_path) if l.startswith(PREFIX))}
    failed = False
    for report in web:
        name = report["name"]
        want = losses(native[name])
        for device, got in losses(report).items():
            if got.get("error"):
                print(f"{name} {device}: did not train in the browser: {got['error']}")
                failed = True
                continue
            # Both devices of the page against the desktop's CPU, the reference the parity
            # tests use; the desktop's GPU is compared too where it trained.
            for ref_device in ("cpu", "gpu"):
                ref = want.get(ref_device)
                if not ref or ref.get("error"):
                    continue
                worst = max(abs(a - b) / max(abs(b), 1e-6) for a, b in zip(got["losses"], ref["losses"]))
                ok = len(got["losses"]) == len(ref["losses"]) == report["steps"] and worst <= 1e-4
                failed |= not ok
                print(f"{name}: browser {device} ({got['name']}) vs desktop {ref_device}: "
                      f"{len(got['losses'])} steps, worst relative difference {worst:.2e} "
                      f"{'ok' if ok else 'FAILED (limit 1e-4)'}; {got['samples_per_s']:.0f} samples/s")
    if failed:
        sys.exit(1)


class DevTools:
    """Chromium's DevTools protocol over a pipe (--remote-debugging-pipe: JSON messages ending
    in a NUL byte, commands on the child's fd 3, answers on its fd 4): no WebSocket needed."""

    def __init__(self, url_dir):
        self.profile = tempfile.TemporaryDirectory(ignore_cleanup_errors=True)
        to_child_r, self.to_child = os.pipe()
        self.from_child, from_child_w = os.pipe()
        # Above 4, so that putting them at 3 and 4 in the child overwrites neither.
        to_child_r = fcntl.fcntl(to_child_r, fcntl.F_DUPFD, 10)
        from_child_w = fcntl.fcntl(from_child_w, fcntl.F_DUPFD, 10)

        def fds():
            # dup2 clears close-on-exec on the copies; the originals close at exec.
            os.dup2(to_child_r, 3)
            os.dup2(from_child_w, 4)

        cmd = [chromium(), *CHROMIUM_FLAGS, f"--user-data-dir={self.profile.name}",
               "--remote-debugging-pipe", "--window-size=1280,720", "--hide-scrollbars",
               "about:blank"]
        self.proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                     preexec_fn=fds, close_fds=False,
                                     start_new_session=True)
        os.close(to_child_r)
        os.close(from_child_w)
        self.buffer = b""
        self.next_id = 0
        self.events = []

    def call(self, method, session=None, **params):
        self.next_id += 1
        message = {"id": self.next_id, "method": method, "params": params}
        if session:
            message["sessionId"] = session
        os.write(self.to_child, json.dumps(message).encode() + b"\0")
        while True:
            answer = self.receive()
            if "method" in answer:
                self.events.append(answer)
            elif answer.get("id") == self.next_id:
                if "error" in answer:
                    sys.exit(f"error: DevTools {method}: {answer['error']}")
                return answer.get("result", {})

    def event(self, method, timeout_s):
        """The next event `method` (those that came while waiting for answers first)."""
        deadline = time.monotonic() + timeout_s
        while True:
            for i, event in enumerate(self.events):
                if event["method"] == method:
                    return self.events.pop(i)["params"]
            if time.monotonic() > deadline:
                sys.exit(f"error: no {method} within {timeout_s} s")
            ready, _, _ = select.select([self.from_child], [], [], 0.5)
            if ready or b"\0" in self.buffer:
                self.events.append(self.receive())

    def receive(self):
        while b"\0" not in self.buffer:
            chunk = os.read(self.from_child, 1 << 20)
            if not chunk:
                sys.exit("error: Chromium closed its DevTools pipe")
            self.buffer += chunk
        message, self.buffer = self.buffer.split(b"\0", 1)
        return json.loads(message)

    def close(self):
        stop(self.proc)
        self.profile.cleanup()


def shot(directory, lang, out, steps=(), settle_s=8):
    """A 1280x720 screenshot of the app's page in `lang`, `settle_s` seconds after it started
    and after each step (see the module's help)."""
    import base64
    httpd, base = in_background(directory)
    tools = DevTools(directory)
    try:
        target = tools.call("Target.createTarget", url="about:blank")["targetId"]
        session = tools.call("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        tools.call("Emulation.setDeviceMetricsOverride", session, width=1280, height=720,
                   deviceScaleFactor=1, mobile=False)
        tools.call("Page.enable", session)
        tools.call("Page.navigate", session, url=f"{base}index.html?lang={lang}")
        time.sleep(settle_s)
        pending_files = None
        for step in steps:
            if step.startswith("files="):
                files = [os.path.abspath(f) for f in step[len("files="):].split(",")]
                tools.call("Page.setInterceptFileChooserDialog", session, enabled=True)
                pending_files = files
                continue
            if step.startswith("downloads="):
                folder = os.path.abspath(step[len("downloads="):])
                tools.call("Browser.setDownloadBehavior", behavior="allow", downloadPath=folder)
                continue
            if step.startswith("drop="):
                files = [os.path.abspath(f) for f in step[len("drop="):].split(",")]
                data = {"items": [], "files": files, "dragOperationsMask": 1}
                for kind in ("dragEnter", "dragOver", "drop"):
                    tools.call("Input.dispatchDragEvent", session, type=kind, x=640, y=360,
                               data=data)
            else:
                x, y = (float(v) for v in step.split(","))
                for kind in ("mousePressed", "mouseReleased"):
                    tools.call("Input.dispatchMouseEvent", session, type=kind, x=x, y=y,
                               button="left", clickCount=1)
                if pending_files:
                    chooser = tools.event("Page.fileChooserOpened", 20)
                    tools.call("DOM.setFileInputFiles", session, files=pending_files,
                               backendNodeId=chooser["backendNodeId"])
                    pending_files = None
            time.sleep(settle_s)
        png = tools.call("Page.captureScreenshot", session, format="png")["data"]
        with open(out, "wb") as f:
            f.write(base64.b64decode(png))
    finally:
        tools.close()
        httpd.shutdown()


if __name__ == "__main__":
    args = sys.argv[1:]
    if len(args) == 3 and args[0] == "serve":
        serve(args[1], int(args[2]))
    elif len(args) >= 3 and args[0] == "selftest":
        selftest(args[1], args[2:])
    elif len(args) == 3 and args[0] == "compare":
        compare(args[1], args[2])
    elif len(args) >= 4 and args[0] == "shot":
        shot(args[1], args[2], args[3], args[4:])
    else:
        sys.exit(__doc__)
