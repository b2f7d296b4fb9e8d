"""A local model server medlens starts, waits for and stops: never left running.

The server runs in its own session (process group), its output in a log file. medlens waits for
``GET /health`` to answer 200 within a bounded time, checking meanwhile that the process is
alive; it stops the whole group (SIGTERM, then SIGKILL after a grace period) when the run ends,
fails or is interrupted. Three safety nets keep a server from outliving medlens: the backend's
``aclose`` (every run path), an ``atexit`` handler (an error between loading the model and
running it), and on Linux the kernel's parent-death signal (medlens killed outright).
"""

from __future__ import annotations

import atexit
import contextlib
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import httpx

from medlens.core.errors import SpecError

STOP_GRACE_S = 15.0
"""Seconds a server gets to exit after SIGTERM before its process group is killed."""
POLL_S = 0.25


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


PR_SET_PDEATHSIG = 1


def parent_death_signal() -> Callable[[], None] | None:
    """Linux: a function for the child (between fork and exec) asking the kernel to send it
    SIGTERM when medlens dies, however it dies. libc is looked up here, in the parent, so the
    child does nothing but one system call."""
    if not sys.platform.startswith("linux"):
        return None
    import ctypes

    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None

    def in_child() -> None:  # pragma: no cover - runs in the child
        prctl(PR_SET_PDEATHSIG, int(signal.SIGTERM))

    return in_child


class ServerProcess:
    """One started server: its process, log file and the URL it serves on."""

    def __init__(
        self, label: str, argv: Sequence[str], env: Mapping[str, str], base_url: str
    ) -> None:
        self.label = label
        self.argv = list(argv)
        self.base_url = base_url.rstrip("/")
        handle, name = tempfile.mkstemp(prefix=f"medlens-{label}-", suffix=".log")
        self.log = Path(name)
        try:
            self.process = subprocess.Popen(
                self.argv, stdin=subprocess.DEVNULL, stdout=handle, stderr=subprocess.STDOUT,
                env={**os.environ, **env}, start_new_session=True,
                preexec_fn=parent_death_signal(),
            )  # fmt: skip
        except OSError as exc:
            os.close(handle)
            self.log.unlink(missing_ok=True)
            raise SpecError(f"{label}: cannot start {self.argv[0]!r} ({exc})") from None
        os.close(handle)
        self.started = time.monotonic()
        self._stopped = False
        atexit.register(self.stop)

    def wait_healthy(self, timeout: float, health_path: str = "/health") -> float:
        """Seconds until ``GET health_path`` answered 200; stops the server and raises a
        SpecError when it exits first or stays unhealthy past `timeout`."""
        url = self.base_url + health_path
        deadline = self.started + timeout
        with httpx.Client(timeout=httpx.Timeout(2.0)) as client:
            while True:
                code = self.process.poll()
                if code is not None:
                    self._fail(f"the server exited with code {code} before it was healthy")
                with contextlib.suppress(httpx.HTTPError):
                    if client.get(url).status_code == 200:
                        return time.monotonic() - self.started
                if time.monotonic() >= deadline:
                    self._fail(f"the server did not become healthy within {timeout:g}s")
                time.sleep(POLL_S)

    def _fail(self, what: str) -> None:
        self.stop(keep_log=True)
        raise SpecError(
            f"{self.label}: {what}; stopped it (command: {' '.join(self.argv[:3])} …; "
            f"log {self.log}{self._last_log_line()})"
        )

    def _last_log_line(self) -> str:
        try:
            lines = [line for line in self.log.read_text(errors="replace").splitlines() if line]
        except OSError:
            return ""
        return f", last line: {lines[-1][:200]}" if lines else ""

    def stop(self, keep_log: bool = False) -> None:
        """Stop the server's whole process group (idempotent); its log is removed unless kept."""
        if self._stopped:
            return
        self._stopped = True
        atexit.unregister(self.stop)
        if self.process.poll() is None:
            self._signal(signal.SIGTERM)
            try:
                self.process.wait(STOP_GRACE_S)
            except subprocess.TimeoutExpired:
                self._signal(signal.SIGKILL)
                self.process.wait()
        else:  # the leader is gone; its children may not be
            self._signal(signal.SIGKILL)
        if not keep_log:
            self.log.unlink(missing_ok=True)

    def _signal(self, which: signal.Signals) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.process.pid, which)
