"""The sweep's progress bar on stderr: rows done / total, rate, ETA and a note (tqdm).

On a terminal tqdm redraws the bar in place at most 10 times a second. Anywhere else (CI logs,
``nohup``, a pipe) each redraw becomes one plain line, at most one every ``interval`` seconds,
so a long sweep leaves a readable log instead of a flood of carriage returns.
"""

from __future__ import annotations

import os
import sys

from tqdm import tqdm


class _Bar(tqdm):
    # No monitor thread: the sweep refreshes the bar itself about once a second, and a thread
    # alive when the local process pool forks its workers is best avoided.
    monitor_interval = 0


class _Lines:
    """A stream for tqdm that writes each redraw (``'\\r' + status``) as one line."""

    def __init__(self, stream):
        self.stream = stream

    def write(self, s):
        s = s.replace("\r", "").rstrip()
        if s:  # tqdm's bare '\r' and closing '\n' carry no status
            self.stream.write(s + "\n")

    def flush(self):
        self.stream.flush()


def _sized(stream) -> bool:
    """Whether the terminal reports its size (a pseudo-terminal may say 0 x 0, and tqdm then
    draws nothing)."""
    try:
        size = os.get_terminal_size(stream.fileno())
    except (AttributeError, OSError, ValueError):
        return False
    return size.columns > 0 and size.lines > 0


class Progress:
    """A progress bar with rate and ETA on ``stream`` (default stderr).

    ``enabled=False`` draws nothing. On a terminal the bar redraws in place at most 10 times a
    second; otherwise it prints a line at most every ``interval`` seconds (and one at the end).
    ``update(n, note=...)`` counts ``n`` more rows and sets the note shown after the rate
    (e.g. a retried chunk); ``force=True`` redraws now.
    """

    FORMAT = "{desc}: {percentage:3.0f}%|{bar}| {n_fmt}/{total_fmt} rows [{elapsed}, ETA {remaining}, {rate_fmt}{postfix}]"

    def __init__(self, total, label="sweep", stream=None, enabled=True, interval=10.0):
        stream = stream if stream is not None else sys.stderr
        self.tty = bool(getattr(stream, "isatty", lambda: False)())
        self.enabled = bool(enabled)
        self.note = ""
        sized = self.tty and _sized(stream)
        # miniters=0: redraw on time alone, so update(0) once a second keeps the clock moving.
        # smoothing=0: the rate (and ETA) is the average since the start, steady as chunks land.
        self._bar = _Bar(total=total, desc=label, file=stream if self.tty else _Lines(stream), disable=not self.enabled,
                         mininterval=0.1 if self.tty else interval, miniters=0, smoothing=0, unit=" rows",
                         bar_format=self.FORMAT, dynamic_ncols=sized, ncols=None if sized else 80, nrows=None if sized else 20,
                         ascii=None if self.tty else True, leave=True)

    @property
    def total(self):
        return self._bar.total

    @total.setter
    def total(self, n):
        """A new total restarts the count and the clock (``sweep()`` sets it on a bar it is given)."""
        self._bar.reset(total=n)

    @property
    def done(self):
        return self._bar.n

    def update(self, n=0, note=None, force=False):
        if note is not None:
            self.note = note
            self._bar.set_postfix_str(note, refresh=False)
        self._bar.update(n)  # redraws when the interval has passed
        if force:
            self._bar.refresh()

    def close(self):
        self._bar.close()
