"""The `rtsched` command. Each subcommand lives in `rtsched/commands/NAME.py` and provides
`register(subparsers)`; the set is listed in COMMANDS below.

Errors in what the user gave (files, tasks, fields, options) end with exit code 2 and one
message naming them — never a traceback. Set RTSCHED_DEBUG=1 to see tracebacks of internal
errors.
"""

from __future__ import annotations

import argparse
import difflib
import importlib
import os
import sys

from ._core import InputError, PrivilegeError, RunFailed

COMMANDS = ["simulate", "schedulers", "validate", "demo", "run", "compare", "latency", "gen", "analyze", "partition", "calibrate", "balance", "stress", "convert", "record"]
OPTIONAL_COMMANDS = ["sweep", "reproduce"]


class UsageError(Exception):
    """Bad command-line usage detected after parsing (exit 2)."""


def seed(text: str) -> int:
    """argparse type of every --seed: an integer from 0 to 2^64 - 1 (the RNG's seed is 64 bits)."""
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
    if not 0 <= n < 2**64:
        raise argparse.ArgumentTypeError(f"must be an integer from 0 to 2^64 - 1, got {text}")
    return n


#: The options that name a file a command writes (`-` writes it to standard output).
OUTPUT_OPTIONS = ("json", "jobs_csv", "jobs_parquet", "trace", "gantt", "output", "util_plot", "report")


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="rtsched",
        description="Multicore real-time scheduling: simulate, analyse and compare schedulers.",
        epilog="Run 'rtsched COMMAND --help' for a command's options. Durations: a number in ms, or '250us', '10ms', '2s'.",
    )
    p.add_argument("--version", action="version", version="rtsched " + __import__("rtsched").__version__)
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMANDS + OPTIONAL_COMMANDS:
        try:
            mod = importlib.import_module(f"rtsched.commands.{name}")
        except ModuleNotFoundError as e:
            if name in OPTIONAL_COMMANDS and e.name == f"rtsched.commands.{name}":
                continue
            raise
        mod.register(sub)
    p.commands = sub.choices  # each command's own parser, to report what it does not know
    return p


def unrecognized(parser: argparse.ArgumentParser, command: str | None, extra: list[str]) -> None:
    """Exit 2 on arguments no parser took, with the usage of the command they were given to
    (argparse would print the top-level one) and the closest option to each misspelt one."""
    target = parser.commands.get(command, parser) if command else parser
    options = [o for a in target._actions for o in a.option_strings]
    hints = []
    for x in extra:
        if x.startswith("-"):
            close = difflib.get_close_matches(x.split("=", 1)[0], options, n=1, cutoff=0.6)
            if close:
                hints.append(f"{x}: did you mean {close[0]}?")
    target.error(f"unrecognized arguments: {' '.join(extra)}" + (f" ({'; '.join(hints)})" if hints else ""))


#: The longest error message printed: a message quotes what the user gave, which may be a
#: megabyte of one value; the rest is cut, saying how much.
MAX_MESSAGE_CHARS = 2000


def printable(message) -> str:
    """An error message safe for a terminal: control characters (a task name holding an escape
    sequence, say) shown escaped rather than acted on, and at most MAX_MESSAGE_CHARS long.
    Newlines and tabs stay (messages use them)."""
    text = str(message)
    out = "".join(c if c in "\n\t" or (c.isprintable() and c != "\x7f") else repr(c)[1:-1] for c in text[:MAX_MESSAGE_CHARS])
    if len(text) > MAX_MESSAGE_CHARS:
        out += f"… ({len(text) - MAX_MESSAGE_CHARS:,} more characters)"
    return out


def main(argv=None) -> int:
    parser = build_parser()
    args, extra = parser.parse_known_args(argv)
    if extra:
        unrecognized(parser, args.command, extra)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        to_stdout = [k for k in OUTPUT_OPTIONS if getattr(args, k, None) == "-"]
        if getattr(args, "format", "table") not in (None, "table"):
            # Rows for machines (--format csv|json) go to standard output, alone: the command's
            # own messages go to stderr, and no output file may be written there too.
            if to_stdout:
                raise UsageError(f"--format {args.format} and --{to_stdout[0].replace('_', '-')} - both write to standard output: "
                                 "give the file a name")
            args.rows_out = sys.stdout
            to_stdout = ["format"]
        if to_stdout:
            # An output written to standard output: the command's own messages go to stderr.
            import contextlib

            with contextlib.redirect_stdout(sys.stderr):
                return int(args.func(args) or 0)
        return int(args.func(args) or 0)
    except (InputError, UsageError, PrivilegeError) as e:
        print(f"rtsched: error: {printable(e)}", file=sys.stderr)
        return 2
    except RunFailed as e:
        print(f"rtsched: run failed: {printable(e)}", file=sys.stderr)
        return 1
    except FileNotFoundError as e:
        print(f"rtsched: error: {printable(e.filename)}: no such file", file=sys.stderr)
        return 2
    except PermissionError as e:
        print(f"rtsched: error: {printable(e.filename)}: permission denied", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("rtsched: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
    except Exception as e:  # an internal error, not the user's: say so plainly
        if os.environ.get("RTSCHED_DEBUG"):
            raise
        print(f"rtsched: internal error: {type(e).__name__}: {e} (set RTSCHED_DEBUG=1 for a traceback; please report it)", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
