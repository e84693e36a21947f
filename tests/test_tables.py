"""Tables that fit the terminal (COLUMNS, else the terminal's width; piped output keeps every
column), --columns, --format csv|json for the summaries, `analyze --json` (docs/outputs.md,
"Tables on the terminal, and the summaries for machines")."""

import csv
import io
import json
import re

import pytest

import rtsched
from conftest import ROOT, run_cli
from rtsched.tables import Column, cells_wide, output_width, render

DHALL = "examples/dhall.yaml"  # relative (run from the root): the first line holds it
PROFILE = ROOT / "tests" / "data" / "overheads-profile.yaml"
FOUR = ["-s", "gedf", "pedf", "paws", "ggua"]


def widest(text) -> int:
    return max(cells_wide(line) for line in text.splitlines())


def header_of(stdout):
    """The header line of the first table in `stdout` (the line above the dashes)."""
    lines = stdout.splitlines()
    return next(lines[i] for i in range(len(lines) - 1) if lines[i + 1].startswith("---"))


# -- rendering, by hand ------------------------------------------------------------------

COLS = [Column("name"), Column("a", ">", rank=1), Column("bb", ">", rank=3), Column("ccc", ">", rank=3), Column("d", ">", rank=2)]
ROWS = [["x", "1", "22", "333", "4444"], ["yy", "10", "2", "3", "4"]]


def test_without_a_width_every_column_is_shown_in_the_plain_layout():
    # Drawn by rich: two spaces between columns, under the header a dash over each column and
    # the space after it, trailing spaces stripped.
    assert render(COLS, ROWS).text == ("name   a  bb  ccc     d\n"
                                       "----- --- --- ---- ----\n"
                                       "x      1  22  333  4444\n"
                                       "yy    10   2    3     4")
    assert render(COLS, ROWS).left_out == ()
    assert render(COLS, ROWS, 23).left_out == ()  # exactly as wide: nothing left out


def test_the_highest_rank_goes_first_the_rightmost_among_equals():
    # 23 wide. Leaving out ccc (rank 3, rightmost of the two) gives 18, then bb 14, then d
    # (rank 2) 8; name (rank 0) is never left out.
    assert render(COLS, ROWS, 22).left_out == ("ccc",)
    assert render(COLS, ROWS, 18).left_out == ("ccc",)
    assert render(COLS, ROWS, 17).left_out == ("bb", "ccc")  # named in the table's order
    assert render(COLS, ROWS, 8).text.splitlines()[0] == "name   a"
    # At 13, d goes too (8 wide); then bb, narrower than d, fits again and is taken back.
    out = render(COLS, ROWS, 13)
    assert out.left_out == ("ccc", "d") and out.text.splitlines()[0] == "name   a  bb", out.text
    assert render(COLS, ROWS, 1).left_out == ("a", "bb", "ccc", "d")  # too narrow: rank 0 stays
    note = render(COLS, ROWS, 17).note(17, "see --x")  # folded to the width too
    assert " ".join(note.splitlines()) == "(left out to fit 17 columns: bb, ccc; see --x)" and widest(note) <= 17, note
    assert render(COLS, ROWS, 30).note(30) == ""


def test_text_columns_fold_before_any_column_is_left_out():
    text = "a policy that does many things in one long sentence of words"
    cols = [Column("name"), Column("what it does", fold=True), Column("n", ">", rank=1)]
    out = render(cols, [["gedf", text, "7"], ["pedf", "short", "8"]], 40)
    assert out.left_out == () and widest(out.text) <= 40, out.text
    lines = out.text.splitlines()
    # The folded cell's words, in order, over several lines; the others on its first line.
    assert lines[2].startswith("gedf ") and lines[2].endswith(" 7") and len(lines) > 4
    folded = " ".join(line[6:].rstrip(" 78").strip() for line in lines[2:-1])
    assert folded == text, out.text
    assert lines[-1].split() == ["pedf", "short", "8"]
    # Folding has a floor (16 cells): narrower than that, a column of rank > 0 goes.
    assert render(cols, [["gedf", text, "7"]], 24).left_out == ("n",)


def test_wide_characters_take_two_cells():
    assert cells_wide("日本") == 4 and cells_wide("e\u0301") == 1 and cells_wide("abc") == 3
    out = render([Column("task"), Column("n", ">")], [["日本", "1"], ["ab", "22"]]).text
    assert [cells_wide(line) for line in out.splitlines()] == [8, 8, 8, 8], out


def test_no_colour_or_markup_whatever_the_environment(monkeypatch):
    # A cell is shown as written (no rich markup, no emoji codes), and no terminal setting
    # (colour forced, a colour terminal) changes a byte.
    rows = [["[bold]x[/bold]", ":smile:"], ["[red]", "1"]]
    cols = [Column("name"), Column("v", ">")]
    plain_text = render(cols, rows, 40).text
    assert plain_text.splitlines()[2:] == ["[bold]x[/bold]  :smile:", "[red]                 1"], plain_text
    for k, v in {"FORCE_COLOR": "1", "TERM": "xterm-256color", "COLORTERM": "truecolor", "TTY_COMPATIBLE": "1"}.items():
        monkeypatch.setenv(k, v)
    again = render(cols, rows, 40).text
    assert again == plain_text and "\x1b" not in again


def test_control_characters_in_a_cell_are_escaped():
    assert render([Column("task")], [["a\x1b[2Jb"]]).text.splitlines()[-1] == "a\\x1b[2Jb"


def test_output_width(monkeypatch):
    class Tty(io.StringIO):
        def isatty(self):
            return True

    monkeypatch.setenv("COLUMNS", "77")
    assert output_width(io.StringIO()) == 77
    monkeypatch.delenv("COLUMNS")
    assert output_width(io.StringIO()) is None  # piped: no limit
    assert isinstance(output_width(Tty()), int)
    for bad in ("", "0", "-5", "wide"):
        monkeypatch.setenv("COLUMNS", bad)
        assert output_width(io.StringIO()) is None, bad


# -- the CLI -------------------------------------------------------------------------------

def test_simulate_fits_100_columns_and_says_what_it_left_out():
    full = run_cli("simulate", DHALL, *FOUR, check=0)
    assert widest(full.stdout) > 100 and "left out" not in full.stdout, full.stdout  # piped: as before
    head = header_of(full.stdout)
    r = run_cli("simulate", DHALL, *FOUR, env={"COLUMNS": "100"}, check=0)
    assert widest(r.stdout) <= 100, r.stdout
    shown = header_of(r.stdout)
    note = " ".join(r.stdout[r.stdout.index("(left out to fit 100 columns: "):].split("shows all)")[0].splitlines())
    left = note[len("(left out to fit 100 columns: "):].split(";")[0].split(", ")
    # What is shown and what is left out make up the full table, in its order.
    names = re.split(r"\s{2,}", head.strip())
    assert [n for n in names if n not in left] == re.split(r"\s{2,}", shown.strip()), (head, shown, note)
    for kept in ("scheduler", "missed", "DSR", "max tard ms"):
        assert kept in shown
    assert "ctx sw" in left and "sched calls" in left and "--columns" in note
    # The rows' cells are the full table's, less the columns left out.
    full_rows = {line.split()[0]: line.split() for line in full.stdout.splitlines() if line.split()[:1] in (["gedf"], ["pedf"])}
    rows = {line.split()[0]: line.split() for line in r.stdout.splitlines() if line.split()[:1] in (["gedf"], ["pedf"])}
    assert rows["gedf"][:4] == full_rows["gedf"][:4] and rows["pedf"][:4] == full_rows["pedf"][:4]


@pytest.mark.parametrize("width", [60, 80, 120])
def test_simulate_all_fits(width):
    r = run_cli("simulate", DHALL, "-s", "all", "--duration", "22", env={"COLUMNS": str(width)}, check=0)
    lines = r.stdout.splitlines()
    table = lines[1:next(i for i, line in enumerate(lines) if line.startswith("(left out"))]
    assert widest("\n".join(table)) <= width, r.stdout


def test_schedulers_fold_to_the_width():
    full = run_cli("schedulers", check=0)
    names = [line.split()[0] for line in full.stdout.split("\noptions:")[0].splitlines()[2:]]
    assert len(names) > 10 and widest(full.stdout) > 200
    r = run_cli("schedulers", env={"COLUMNS": "100"}, check=0)
    assert widest(r.stdout) <= 100, r.stdout
    table = r.stdout.split("\noptions:")[0].splitlines()[2:]
    # Every policy still starts a line (its name), its description continues on indented lines.
    assert [line.split()[0] for line in table if not line.startswith(" ")] == names
    assert sum(line.startswith(" ") for line in table) > 0
    words = lambda text: sorted(w for w in text.split() if set(w) != {"-"})  # noqa: E731 - nothing lost in the folding
    assert words(r.stdout) == words(full.stdout)


def test_schedulers_table_says_what_each_takes_and_needs():
    from rtsched.policies import needs

    r = run_cli("schedulers", env={"COLUMNS": "400"}, check=0)
    section = r.stdout.split("\ntakes and needs")[1].split("\n\n")[0].splitlines()[1:]
    by = {p["name"]: p for p in rtsched.schedulers()}
    assert needs(by["gedf"]) == "-"
    assert needs(by["pfp"]) == "a partition (partition=NAME, or cpu fields; admission fp-rta); priorities (file, rm or dm)"
    assert needs(by["lbesa"]) == "a partition (lbesa:NAME, or cpu fields; admission edf-exact); non-increasing TUFs"
    assert needs(by["cfs"]) == "best-effort tasks too"
    assert needs(dict(by["gedf"], takes=dict(by["gedf"]["takes"], dag=False))) == "no DAG tasks"
    assert section == [f"  {name}: {needs(p)}" for name, p in by.items()], section


def test_schedulers_as_json_and_csv():
    doc = json.loads(run_cli("schedulers", "--format", "json", check=0).stdout)
    assert {"name", "summary", "paper", "options", "partition", "fixed_priorities", "takes", "tufs", "resolves_deadlocks",
            "grants_resources"} == set(doc[0]) and any(d["name"] == "gedf" for d in doc)
    assert next(d for d in doc if d["name"] == "pfp")["partition"] == {"bare": False, "admission": "fp-rta", "own": []}
    rows = list(csv.DictReader(io.StringIO(run_cli("schedulers", "--format", "csv", check=0).stdout)))
    assert [r["name"] for r in rows] == [d["name"] for d in doc]
    pdasa = next(r for r in rows if r["name"] == "pdasa")
    assert (pdasa["partition.bare"], pdasa["partition.own"], pdasa["takes.fair"], pdasa["tufs"]) == \
        ("True", "load", "False", "non-increasing"), pdasa
    assert next(r for r in rows if r["name"] == "gedf")["partition.bare"] == ""  # no partition


def test_pulls_on_request_per_run_per_task_and_per_job():
    """`pulls` (docs/semantics.md "Pull"): a column on request, not by default; in the summary,
    the per-task frame and the per-job records of the API. P-EDF on dhall's `cpu` fields pulls
    nothing; global EDF does."""
    r = run_cli("simulate", DHALL, "-s", "gedf", "pedf", "--columns", "scheduler,migr,pulls", check=0)
    assert re.split(r"\s{2,}", header_of(r.stdout)) == ["scheduler", "migr", "pulls"], r.stdout
    pedf = next(line for line in r.stdout.splitlines() if line.startswith("pedf "))
    assert pedf.split()[2] == "0", r.stdout
    assert "pulls" not in header_of(run_cli("simulate", DHALL, "-s", "gedf", check=0).stdout)
    res = rtsched.simulate(rtsched.load_taskset(ROOT / DHALL), "gedf")
    assert res.summary["pulls"] == res.tasks["pulls"].sum() == res.jobs["pulls"].sum() > 0
    assert res.summary["pulls"] >= res.summary["migrations"]


def test_columns_chooses_by_header_or_key():
    r = run_cli("simulate", DHALL, "-s", "gedf", "pedf", "--columns", "scheduler, Missed,max_tardiness_ns,steals", check=0)
    lines = r.stdout.splitlines()
    assert re.split(r"\s{2,}", header_of(r.stdout)) == ["scheduler", "missed", "max tard ms", "steals"], r.stdout
    gedf = next(line for line in lines if line.startswith("gedf "))
    assert len(gedf.split()) == 4 and int(gedf.split()[1]) > 0 and gedf.split()[3] == "0"
    # Chosen columns are never left out, however narrow.
    r = run_cli("simulate", DHALL, "-s", "gedf", "--columns", "scheduler,sched calls,ctx sw", env={"COLUMNS": "20"}, check=0)
    assert re.split(r"\s{2,}", header_of(r.stdout)) == ["scheduler", "sched calls", "ctx sw"] and "left out" not in r.stdout


@pytest.mark.parametrize("spec, named", [("scheduler,bogus", "'bogus'"), ("scheduler,,dsr", "empty column name")])
def test_unknown_column_exits_2_naming_it_and_the_known(spec, named):
    r = run_cli("simulate", DHALL, "--columns", spec)
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
    assert "--columns" in r.stderr and named in r.stderr and "max tard ms" in r.stderr and "max_tardiness_ns" in r.stderr, r.stderr
    assert r.stdout == ""


def test_format_csv_and_json_hold_every_summary_key():
    r = run_cli("simulate", DHALL, "-s", "gedf", "pedf", "--format", "csv", check=0)
    rows = list(csv.DictReader(io.StringIO(r.stdout)))
    assert [x["scheduler"] for x in rows] == ["gedf", "pedf"], r.stdout
    assert int(rows[0]["missed"]) > 0 and rows[1]["missed"] == "0" and float(rows[1]["dsr"]) == 1.0
    for key in ("jobs", "max_tardiness_ns", "mean_response_ns", "context_switches", "scheduler_invocations",
                "priority_inversions", "steals", "overhead_ns", "llc_misses", "pulls"):
        assert key in rows[0], key
    assert "dhall" in r.stderr and "dhall" not in r.stdout  # the task set's line goes to stderr
    j = run_cli("simulate", DHALL, "-s", "gedf", "pedf", "--format", "json", check=0)
    doc = json.loads(j.stdout)
    assert [d["scheduler"] for d in doc] == ["gedf", "pedf"]
    assert list(doc[0]) == list(rows[0])  # the same keys, in the same order
    scalar = [k for k, v in doc[0].items() if not isinstance(v, list)]
    assert {k: "" if doc[0][k] is None else str(doc[0][k]) for k in scalar} == {k: rows[0][k] for k in scalar}
    assert doc[0]["misses"] == [0, 0, 0] and rows[0]["misses"] == "0;0;0"  # a list: joined by ';' in the CSV
    # Deterministic, and never cut to the terminal.
    again = run_cli("simulate", DHALL, "-s", "gedf", "pedf", "--format", "json", env={"COLUMNS": "40"}, check=0)
    assert again.stdout == j.stdout


def test_format_with_columns_gives_those_keys(tmp_path):
    r = run_cli("simulate", DHALL, "-s", "gedf", "pedf", "--format", "json", "--columns", "scheduler,DSR,max tard ms",
                "--json", tmp_path / "r.json", check=0)
    doc = json.loads(r.stdout)
    assert [list(d) for d in doc] == [["scheduler", "dsr", "max_tardiness_ns"]] * 2
    assert doc[1]["dsr"] == 1.0 and doc[0]["max_tardiness_ns"] > 0
    assert f"wrote {tmp_path / 'r.json'}" in r.stderr


def test_format_and_an_output_to_stdout_conflict():
    r = run_cli("simulate", DHALL, "--format", "csv", "--json", "-")
    assert r.returncode == 2 and "--format csv" in r.stderr and "--json -" in r.stderr, r.stderr


def test_analyze_json_matches_the_table():
    r = run_cli("analyze", DHALL, "--json", check=0)
    doc = json.loads(r.stdout)
    assert (doc["tasks"], doc["cpus"]) == (3, 2) and abs(doc["utilization"] - (0.4 + 10 / 11)) < 1e-9
    table = run_cli("analyze", DHALL, check=0).stdout
    word = {True: "schedulable", False: "NOT schedulable", None: "inconclusive"}
    for t in doc["tests"]:
        line = next(line for line in table.splitlines() if line.startswith(t["test"] + " "))
        assert re.split(r"\s{2,}", line)[1] == t["verdict"], (t, line)
        # A necessary condition that holds proves nothing and refutes nothing: "not refuted".
        assert t["verdict"] == ("not refuted" if (t["test"], t["schedulable"]) == ("necessary", None)
                                else word[t["schedulable"]]), t
    assert "overheads" not in doc
    oh = json.loads(run_cli("analyze", DHALL, "--overheads", PROFILE, "--json", check=0).stdout)
    pe = next(t for t in oh["tests"] if t["test"] == "p-edf-exact")
    assert (pe["schedulable"], pe["with_overheads"]) == (True, None)
    heavy = next(t for t in oh["inflated"] if t["name"] == "heavy")
    assert (heavy["wcet_partitioned_ns"], heavy["deadline_inflated_ns"]) == (11_288_889, 10_950_000)
    assert oh["overheads"]["statistic"] == "p99" and oh["overheads"]["costs_ns"]["tick"] == 100_000


def test_analyze_tables_fit():
    r = run_cli("analyze", DHALL, "--overheads", PROFILE, env={"COLUMNS": "100"}, check=0)
    assert widest(r.stdout) <= 100, r.stdout
    assert "p-edf-exact" in r.stdout and "inconclusive" in r.stdout


# -- every command's summary table fits (COLUMNS=80); piped without COLUMNS, as before -------

W = 80


@pytest.mark.parametrize("args", [["gen", "--list"], ["reproduce", "--list"], ["analyze", "examples/fork-join.yaml"],
                                  ["schedulers"]])
def test_listing_commands_fit_80_columns_and_lose_no_word(args):
    full = run_cli(*args, check=0).stdout
    r = run_cli(*args, env={"COLUMNS": str(W)}, check=0)
    assert widest(r.stdout) <= W < widest(full), (args, r.stdout)
    words = lambda text: sorted(w for w in text.split() if set(w) != {"-"})  # noqa: E731 - folded, not cut
    assert words(r.stdout) == words(full), args


def test_the_mixed_tables_fit(tmp_path):
    # Best-effort tasks beside real-time ones (cfs): latency, balancing and one share column per
    # fair task, ten of them with long names: the rightmost shares are left out, saying so.
    fair = "".join(f"  - {{name: background-worker-{i}, class: fair, behaviour: hog}}\n" for i in range(10))
    p = tmp_path / "mixed.yaml"
    p.write_text("platform: {cpus: 2}\nrun: {duration: 50}\ntasks:\n  - {name: rt, period: 10, wcet: 2}\n" + fair)
    full = run_cli("simulate", p, "-s", "cfs", check=0).stdout
    assert "best-effort CPU share" in full and widest(full) > W
    r = run_cli("simulate", p, "-s", "cfs", env={"COLUMNS": str(W)}, check=0)
    shares = r.stdout.split("best-effort CPU share (% of the run):\n")[1]
    assert widest(shares) <= W and "background-worker-0" in shares and "background-worker-9" not in shares.split("(left")[0]
    assert "(left out to fit 80 columns: " in shares and "background-worker-9" in shares, shares
    assert widest(r.stdout.split("examples")[-1].split("\n", 1)[1]) <= W, r.stdout


def test_compare_run_calibrate_latency_tables_fit():
    from types import SimpleNamespace

    from rtsched.commands.calibrate import describe
    from rtsched.commands.compare import side_by_side
    from rtsched.commands.latency import latency_table
    from rtsched.commands.run import measurement_table

    long_name = "gfp-dist:rm,push=cpupri"
    # compare: two runs side by side (the simulator twice: the layout is the point).
    a, b = rtsched.simulate(ROOT / DHALL, long_name), rtsched.simulate(ROOT / DHALL, long_name, seed=3)
    text = side_by_side(a, b, W)
    assert widest(text) <= W and "response time, real minus simulated" in text, text
    # run: the real runs' measurements, one row per run and measurement.
    m = {f"{k}.{s}": 12345.0 for k in ("decision_overhead", "preemption_latency", "release_jitter", "start_delay")
         for s in ("median_ns", "p99_ns", "max_ns", "count")}
    runs = [SimpleNamespace(scheduler=f"kernel:scx:{long_name}{i}", measurements=m) for i in range(2)]
    full = measurement_table(runs)
    fitted = measurement_table(runs, W)
    assert widest(full) > W >= widest(fitted) and "p99 us" in fitted and "(left out to fit 80 columns: " in fitted, fitted
    # latency: probe and cyclictest, per CPU.
    rows = [["cyclictest", str(c), "100000", "1.5", "2.5", "2.0", "10.1", "123456.7"] for c in range(4)]
    assert widest(latency_table(rows, 40)) <= 40 and "max us" in latency_table(rows, 40)
    # calibrate: the profile's header lines fold too.
    doc = {"machine": "a machine with a very long description " * 4, "backend": "testbed", "migration_wss": 1 << 20,
           "tick_period": "4ms", "costs": {"tick": {"median": "1us", "p99": "2us", "samples": 9}}}
    assert widest(describe(doc)) > W >= widest(describe(doc, W))


# -- Tables that tell the truth (issue 49) ------------------------------------------------------

def test_response_times_say_they_average_completed_jobs_and_the_unfinished_are_counted(tmp_path):
    # on_miss: abort, with a task of 9 ms every 10 ms beside one of 2 ms every 2 ms on one CPU:
    # most jobs are aborted at their deadlines; the response times are of the few that finish.
    p = tmp_path / "abort.yaml"
    p.write_text("platform: {cpus: 1}\nrun: {duration: 20, on_miss: abort}\ntasks:\n"
                 "  - {name: a, period: 2, wcet: 1.5}\n  - {name: b, period: 10, wcet: 9}\n")
    r = run_cli("simulate", p, "-s", "gedf", check=0)
    head = re.split(r"\s{2,}", header_of(r.stdout).strip())
    assert "mean resp ms (done)" in head and "p99 resp ms (done)" in head, head
    assert head.index("unfinished") == head.index("mean resp ms (done)") - 1  # beside them
    row = dict(zip(head, re.split(r"\s{2,}", r.stdout.splitlines()[3].strip())))
    s = rtsched.simulate(str(p), "gedf").summary
    assert int(row["unfinished"]) == s["jobs"] - s["completed"] > 0, row
    # The old headers still choose the columns.
    old = run_cli("simulate", p, "--columns", "scheduler,mean resp ms", check=0)
    assert "mean resp ms (done)" in old.stdout
    # Negative control: a set whose jobs all complete shows no unfinished column.
    assert "unfinished" not in header_of(run_cli("simulate", DHALL, "-s", "gedf", check=0).stdout)


def test_a_narrow_table_keeps_aur_for_a_utility_accrual_scheduler():
    ua = run_cli("simulate", "examples/tuf-overload.yaml", "-s", "ggua", env={"COLUMNS": "60"}, check=0)
    assert "AUR" in header_of(ua.stdout), ua.stdout
    # Under a deadline scheduler AUR is still the first to go.
    ed = run_cli("simulate", "examples/tuf-overload.yaml", "-s", "gedf", env={"COLUMNS": "60"}, check=0)
    assert "AUR" not in header_of(ed.stdout) and "AUR" in ed.stdout.split("left out")[1]
    from rtsched.checks import utility_accrual_schedulers

    assert "ggua" in utility_accrual_schedulers() and "gedf" not in utility_accrual_schedulers()


def test_partition_shows_each_cpus_load_and_warns_of_ignored_critical_sections(tmp_path):
    p = tmp_path / "cs.yaml"
    p.write_text("platform: {cpus: 2}\ntasks:\n"
                 "  - {name: a, period: 10, wcet: 6, sections: [{resource: r, start: 1, length: 4}]}\n"
                 "  - {name: b, period: 10, wcet: 5, sections: [{resource: r, start: 0, length: 4}]}\n"
                 "  - {name: c, period: 10, wcet: 3}\n")
    r = run_cli("partition", p, check=0)
    assert "CPU 0: U = 0.900  a, c" in r.stderr and "CPU 1: U = 0.500  b" in r.stderr, r.stderr
    assert "ignores critical sections" in r.stderr
    q = tmp_path / "plain.yaml"
    q.write_text("platform: {cpus: 2}\ntasks:\n  - {name: a, period: 10, wcet: 6}\n  - {name: b, period: 10, wcet: 5}\n")
    plain = run_cli("partition", q, check=0)
    assert "CPU 1: U = 0.500  b" in plain.stderr and "warning" not in plain.stderr


def test_the_default_gantt_window_follows_the_shortest_periods(tmp_path):
    from rtsched.gantt import default_window_ns

    ms = 1_000_000
    waters = rtsched.load_taskset([{"name": "fast", "period": 1, "wcet": 0.1}, {"name": "slow", "period": 1000, "wcet": 10}])
    close = rtsched.load_taskset([{"name": "a", "period": 10, "wcet": 1}, {"name": "b", "period": 11, "wcet": 1}])
    assert default_window_ns([waters]) == 40 * ms  # forty periods of the 1 ms task, not 4 s
    assert default_window_ns([close]) == 44 * ms  # four of the longest, as before
    r = rtsched.simulate(waters, duration=100, trace=True)
    fig = r.gantt()
    title = fig.axes[0].get_title(loc="left")
    assert f"shown 0–40 ms of {r.raw.end_ns / 1e6:g} ms" in title, title
    import matplotlib.pyplot as plt

    plt.close(fig)
