"""rtsched gen NAME — generate a task set (seeded, reproducible)."""

from __future__ import annotations

import sys
import textwrap

from .._io import write_text_atomic
from ..analysis import generate_from, generators, to_yaml
from ..checks import load_warnings, missing_m_warning
from ..cli import seed
from ..report import table
from ..tables import output_width


def register(sub):
    p = sub.add_parser("gen", help="generate a task set (UUniFast, RandFixedSum, or a paper's setup)",
                       description="Generate a task set and write it as YAML. Run 'rtsched gen --list' for generators and their "
                                   "parameters. Warns on stderr (exit 0) when m is not given (the generator's default "
                                   "platform is used) and when the set is a load no scheduler can meet (U > m). The sequential generators "
                                   "(uunifast, uunifast-discard, randfixedsum) add critical sections when given resources=N "
                                   "(p_acc, nreq, csl, protocol, prio: docs/generators.md \"Critical sections\").")
    p.add_argument("name", nargs="?", metavar="NAME", help="generator, e.g. randfixedsum, lelli2011, paws2013, mwh, chronos2011")
    p.add_argument("params", nargs="*", metavar="KEY=VALUE", help="generator parameters, e.g. n=8 m=4 U=2.5")
    p.add_argument("--seed", type=seed, default=1, metavar="N")
    p.add_argument("-o", "--output", metavar="FILE", help="write here (default: standard output)")
    p.add_argument("--duration", metavar="D", help="set the file's run.duration")
    p.add_argument("--list", action="store_true", help="list generators and their parameters")
    p.set_defaults(func=run)


def run(args):
    if args.list or not args.name:
        width = output_width()
        rows = [[g["name"], g["summary"]] for g in generators()]
        print(table(["generator", "what"], rows, ["<", "<"], width, fold=("what",)))
        print("\nparameters:")
        for g in generators():
            line = f"  {g['name']}: {g['params']}"
            print(textwrap.fill(line, width, subsequent_indent="    ", break_long_words=False, break_on_hyphens=False)
                  if width else line)
        return 0 if args.list else 2
    params = {}
    for kv in args.params:
        if "=" not in kv:
            from ..cli import UsageError

            raise UsageError(f"generator parameter '{kv}' is not of the form KEY=VALUE")
        k, v = kv.split("=", 1)
        params[k] = v
    g = generate_from(args.name, args.seed, params)
    ts = g.taskset
    for w in [missing_m_warning(args.name, params, ts.cpus), *load_warnings(ts)]:
        if w:
            print(w, file=sys.stderr)
    if args.duration is not None:
        from ..result import duration_ns

        ts = ts.with_run(duration_ns=duration_ns(args.duration))
    text = f"# rtsched gen {args.name} {' '.join(args.params)} --seed {args.seed}\n" + to_yaml(ts)
    if args.name.startswith("dag-") and "dag:" not in text:
        # A writer without `dag:` would write each DAG task as one sequential job of its work.
        from .._core import InputError

        raise InputError(f"generator {args.name}: this build cannot write DAG tasks (dag:) to a task file yet "
                         "(rtsched.generate gives the task set in Python)")
    if g.threads is not None:
        text += "# threads per task (PAWS parallel regions): " + " ".join(map(str, g.threads)) + "\n"
    if g.utilities is not None:
        text += "# utilities (ChronOS step TUFs): " + " ".join(f"{u:g}" for u in g.utilities) + "\n"
    if args.output:
        write_text_atomic(args.output, text)
        print(f"wrote {args.output}: {len(ts.task_names)} tasks on {ts.cpus} CPUs, U = {ts.utilization:.3f}", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0
