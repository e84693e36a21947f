"""The sweep's progress bar on stderr: rows done / total, rate, ETA and a note."""

from __future__ import annotations

import math
import sys
import time


class Progress:
    """A progress bar with rate and ETA on stderr. On a terminal it redraws in place at most
    10 times a second; otherwise it prints a line at most every ``interval`` seconds."""

    def __init__(self, total, label="sweep", stream=None, enabled=True, interval=10.0):
        self.total, self.label, self.enabled = total, label, enabled
        self.stream = stream if stream is not None else sys.stderr
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.interval = 0.1 if self.tty else interval
        self.done, self.start, self.last = 0, time.monotonic(), -1e9
        self.note = ""

    def update(self, n=0, note=None, force=False):
        self.done += n
        if note is not None:
            self.note = note
        now = time.monotonic()
        if not self.enabled or (not force and now - self.last < self.interval):
            return
        self.last = now
        self.stream.write(("\r\x1b[K" if self.tty else "") + self.line(now) + ("" if self.tty else "\n"))
        self.stream.flush()

    def line(self, now=None):
        el = (now or time.monotonic()) - self.start
        rate = self.done / el if el > 0 else 0.0
        frac = self.done / self.total if self.total else 1.0
        eta = (self.total - self.done) / rate if rate > 0 else float("nan")
        width = 24
        bar = "#" * int(frac * width) + "." * (width - int(frac * width))
        eta_s = "?" if math.isnan(eta) else _hms(eta)
        return (f"{self.label} [{bar}] {self.done}/{self.total} rows ({100 * frac:.0f}%) "
                f"{rate:.1f}/s elapsed {_hms(el)} ETA {eta_s}" + (f" {self.note}" if self.note else ""))

    def close(self):
        if self.enabled:
            self.update(force=True)
            if self.tty:
                self.stream.write("\n")
                self.stream.flush()


def _hms(s):
    s = int(round(s))
    return f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}" if s >= 3600 else f"{s // 60}:{s % 60:02d}"
