"""Figures a reader can put in a paper: sweep figures (axis words that match the points, the
experiment in the title, failures drawn as failures, intervals inside their range) and Gantt
charts (a window to choose, releases and deadlines, critical sections, the legend beside the
chart, an error instead of an empty chart)."""

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
import yaml

import rtsched
from conftest import EXAMPLES, real, run_cli, write_dedented
from rtsched import plots
from rtsched.gantt import parse_window
from rtsched.sweep.table import read_table


def table(per_cpu=True, fail_at=(), dsr=None):
    """A sweep table of 2 schedulers × 3 points × 4 seeds on m = 4, n = 8 (per-CPU points, or
    total ones), with pedf:ffd's partition failing in the replications ``fail_at``."""
    rows = []
    for p in (0.5, 0.75, 1.0):
        for rep in range(1, 5):
            for s in ("gedf", "pedf:ffd"):
                failed = s == "pedf:ffd" and p == 1.0 and rep in fail_at
                d = (dsr or {}).get((s, p, rep), 1.0)
                rows.append(dict(generator="randfixedsum", param="U", point=p * (1 if per_cpu else 4), replication=rep,
                                 scheduler=s, m=4, n=8, U=4 * p + 1e-4 * rep, duration_ns=500_000_000,
                                 status="partition-failed" if failed else "ok", dsr=np.nan if failed else d,
                                 schedulable=not failed and d == 1.0, max_tardiness_ns=np.nan if failed else (1 - d) * 1e6,
                                 migrations=np.nan if failed else rep))
    return pd.DataFrame(rows)


def texts(fig):
    out = [t.get_text() for t in fig.texts]
    for a in fig.axes:
        out += [a.get_title(), a.get_xlabel(), a.get_ylabel()] + [t.get_text() for t in a.texts]
        if a.get_legend():
            out += [t.get_text() for t in a.get_legend().get_texts()]
    return out


def test_axis_says_per_cpu_when_the_points_are():
    fig = plots.dsr(table(per_cpu=True))
    assert fig.axes[0].get_xlabel() == "utilisation per CPU U/m (point)"
    fig = plots.dsr(table(per_cpu=False))
    assert fig.axes[0].get_xlabel() == "total utilisation U (point)"
    # The spec's word overrides the judgement from the table.
    assert plots.dsr(table(per_cpu=False), per_cpu=True).axes[0].get_xlabel() == "utilisation per CPU U/m (point)"
    plt.close("all")


def test_title_carries_the_experiment():
    fig = plots.schedulability(table())
    assert fig.texts[0].get_text() == "schedulability ratio"  # the suptitle
    assert fig.axes[0].get_title() == "randfixedsum: m = 4, n = 8, 4 seeds per point, 500ms simulated"
    assert plots.caption(table().assign(m=[2, 8] * 12)).startswith("m = 2–8, n = 8")
    plt.close("all")


def test_failed_partitions_are_drawn_as_failures():
    fig = plots.dsr(table(fail_at=(1, 3)))
    ax = fig.axes[0]
    crosses = [ln for ln in ax.lines if ln.get_marker() == "x"]
    assert len(crosses) == 1 and ax.texts[0].get_text().strip() == "2/4", [t.get_text() for t in ax.texts]
    words = texts(fig)
    assert "sets not run (partition failed): count/total" in words
    assert "pedf:ffd (mean of the sets that ran)" in words and "gedf" in words
    # Every set at a point failed: no mean there, the line breaks, the × says 4/4.
    fig = plots.dsr(table(fail_at=(1, 2, 3, 4)))
    assert [t.get_text().strip() for t in fig.axes[0].texts] == ["4/4"]
    # No failure: no ×, no note.
    fig = plots.dsr(table())
    assert not [ln for ln in fig.axes[0].lines if ln.get_marker() == "x"]
    assert not any("not run" in w for w in texts(fig))
    plt.close("all")


def bar_ends(fig):
    """The y extents of every error bar of the figure."""
    ys = []
    for a in fig.axes:
        for c in a.collections:
            for seg in c.get_segments():
                ys += [y for _, y in seg]
    return ys


def test_intervals_stay_inside_their_range():
    # One seed in four misses much: the t interval of the mean crosses 1 above and 0 below.
    spread = {("gedf", 1.0, 1): 0.0, ("gedf", 1.0, 2): 1.0, ("gedf", 1.0, 3): 1.0, ("gedf", 1.0, 4): 1.0}
    df = table(dsr=spread)
    m, h, _ = plots.mean_ci(df[(df.scheduler == "gedf") & (df.point == 1.0)].dsr)
    assert m + h > 1 and m - h < 0  # the raw interval leaves [0, 1]
    fig = plots.dsr(df)
    ys = bar_ends(fig)
    assert ys and min(ys) >= 0 and max(ys) <= 1
    assert 1 < fig.axes[0].get_ylim()[1] < 1.04  # the axis stops just above DSR 1
    ys = bar_ends(plots.tardiness(df))
    assert ys and min(ys) >= 0  # tardiness is never negative
    assert plots.BOUNDS["aur"] == (0.0, 1.0)
    # An explicit range wins; a column with negative values is left unbounded.
    ys = bar_ends(plots.metric_vs_utilisation(df, "dsr", bounds=(0.5, None)))
    assert min(ys) == 0.5 and max(ys) > 1
    ys = bar_ends(plots.metric_vs_utilisation(df.assign(x=df.dsr - 0.5), "x"))
    assert min(ys) < -0.5
    plt.close("all")


def test_sweep_figures_per_cpu_spec(tmp_path):
    """A real sweep with per-CPU points: the CLI's figures say so, and carry the experiment."""
    spec = {"name": "pc", "seed": 1, "generator": {"name": "randfixedsum", "params": {"n": 4, "m": 2, "tmin": "10ms",
                                                                                       "tmax": "20ms"}},
            "utilisation": {"points": [0.5, 0.9], "per_cpu": True}, "schedulers": ["gedf", "pedf:ffd"], "seeds": 2,
            "duration": "100ms", "output": "pc.csv"}
    path = tmp_path / "pc.yaml"
    path.write_text(yaml.safe_dump(spec))
    r = run_cli("sweep", path, "-j", "1", "-q", check=0)
    assert "wrote 10 figures" in r.stdout and "weighted" in r.stdout, r.stdout
    df = read_table(tmp_path / "pc.csv")
    fig = plots.dsr(df, per_cpu=True)
    assert fig.axes[0].get_xlabel() == "utilisation per CPU U/m (point)"
    assert plots.dsr(df).axes[0].get_xlabel() == "utilisation per CPU U/m (point)"  # judged from the table too
    assert fig.axes[0].get_title() == "randfixedsum: m = 2, n = 4, 2 seeds per point, 100ms simulated"
    plt.close("all")


def drifting(cap_below=0.0):
    """``table(per_cpu=False)`` with the parameters each set was asked for, its actual U that far
    below the point (0: within rounding), and one row of each scheduler failed at point 4."""
    import json

    df = table(per_cpu=False, fail_at=(1,))
    df["gen_params"] = [json.dumps({"U": repr(float(p)), "m": "4", "n": "8"}, sort_keys=True, separators=(",", ":"))
                        for p in df["point"]]
    df["U"] = df["point"] - cap_below * df["replication"] / 4 + 1e-9
    return df


def test_the_actual_u_can_be_the_x_axis():
    # Sets asked for U = 2, 3, 4 that have U up to 1 below (a cap, as LWFG's): against the
    # point they sit at 2, 3, 4; against their actual U they fall in bins of the points' spacing.
    df = drifting(cap_below=1.0)
    fig = plots.dsr(df)
    assert fig.axes[0].get_xlabel() == "total utilisation U (point)"
    xs = {x for ln in fig.axes[0].lines for x in ln.get_xdata() if ln.get_marker() == "o"}
    assert {round(x) for x in xs} == {2, 3, 4}
    fig = plots.dsr(df, x="U")
    assert fig.axes[0].get_xlabel() == "total utilisation U (actual, bins of 1)"
    xs = {round(x) for ln in fig.axes[0].lines for x in ln.get_xdata() if ln.get_marker() == "o"}
    assert xs == {1, 2, 3, 4}, xs  # U = point − rep/4: 2 − 1 = 1 is in the bin of 1
    # The failed set (point 4, replication 1: U = 3.75) is drawn in its actual U's bin.
    assert [round(t.get_position()[0]) for t in fig.axes[0].texts] == [4]
    fig = plots.schedulability(df, x="U")
    assert fig.axes[0].get_xlabel() == "total utilisation U (actual, bins of 1)"
    # Per-CPU points: U/m, binned at the points' spacing (0.25 per CPU).
    fig = plots.dsr(table(per_cpu=True), x="U")
    assert fig.axes[0].get_xlabel() == "utilisation per CPU U/m (actual, bins of 0.25)"
    plt.close("all")


def test_sets_off_their_point_are_reported():
    assert plots.utilisation_drift(drifting(0.0)).empty and plots.drift_warnings(drifting(0.0)) == []
    # 0.2% below, beyond the 0.1% rounding never reaches: reported.
    d = plots.utilisation_drift(drifting(cap_below=0.01))
    assert list(d["point"]) == [2.0, 3.0, 4.0] and (d["rows"] == 8).all() and (d["drifting"] > 0).all()
    assert d["least"].min() == pytest.approx(-0.01) and d["largest"].max() < 0
    w = plots.drift_warnings(drifting(cap_below=1.0), "--plot-x U")
    assert len(w) == 1 and w[0].startswith("warning: randfixedsum: at 3 of 3 points the sets' actual U differs from the U asked")
    assert "(-1.000 to -0.250, mean -0.625;" in w[0] and "--plot-x U places it at its actual U" in w[0], w
    # lelli2011's point is R: the U asked is R × m.
    lelli = drifting(0.0).assign(generator="lelli2011", gen_params='{"R":"0.5","m":"4","x":"3"}', U=2.0)
    assert plots.utilisation_drift(lelli).empty
    assert len(plots.utilisation_drift(lelli.assign(U=1.9))) == 3
    # A table without gen_params (or a window generator's) cannot say: nothing reported.
    assert plots.utilisation_drift(table()).empty


def test_cli_sweep_warns_of_a_cap_and_plots_the_actual_u(tmp_path):
    """LWFG's U is a cap (cap − u_max < Σu ≤ cap): the sweep says the sets are below their
    points, and --plot-x U draws them at their actual U. Tests only: nothing is simulated."""
    spec = {"name": "cap", "seed": 1, "generators": [{"name": "mwl", "params": {"m": 4}},
                                                     {"name": "randfixedsum", "params": {"n": 6, "m": 4}}],
            "utilisation": {"points": [2.0, 3.0]}, "schedulers": ["test:necessary"], "seeds": 3, "duration": "10ms",
            "output": "cap.csv"}
    path = tmp_path / "cap.yaml"
    path.write_text(yaml.safe_dump(spec))
    r = run_cli("sweep", path, "-j", "1", "-q", "--plot-x", "U", "--no-plots", check=0)  # drawn: above
    assert "warning: mwl: at 2 of 2 points the sets' actual U differs from the U asked" in r.stderr, r.stderr
    assert "randfixedsum" not in r.stderr and "the figures place each set at its actual U, binned" in r.stderr
    df = read_table(tmp_path / "cap.csv")
    assert (df[df.generator == "mwl"]["U"] <= df[df.generator == "mwl"]["point"] + 1e-6).all()
    assert ((df[df.generator == "randfixedsum"]["U"] - df[df.generator == "randfixedsum"]["point"]).abs() < 1e-6).all()
    r = run_cli("sweep", path, "--plot-x", "actual")
    assert r.returncode == 2 and "--plot-x" in r.stderr
    plt.close("all")


# ---- Gantt charts ----

def test_parse_window():
    assert parse_window("0:40") == (0, 40_000_000)
    assert parse_window("1s:1.2s") == (1_000_000_000, 1_200_000_000)
    assert parse_window(":3") == (None, 3_000_000) and parse_window("100:") == (100_000_000, None)
    assert parse_window((10, "20ms")) == (10_000_000, 20_000_000)
    for bad, says in [("20:10", "the end must be after the start"), ("5", "expected START:END"),
                      ("1x:2", "unknown unit 'x'"), ("1:2:3", "expected START:END")]:
        with pytest.raises(rtsched.InputError, match=says):
            parse_window(bad, "--gantt-window")


def test_gantt_window_marks_and_legend(tmp_path):
    rs = [rtsched.simulate(EXAMPLES / "dhall.yaml", s, trace=True) for s in ("gedf", "pedf")]
    fig = plots.gantt(rs, tmp_path / "g.png", window="5:30")
    assert (tmp_path / "g.png").read_bytes()[:4] == b"\x89PNG"
    a0 = fig.axes[0]
    assert a0.get_xlim() == (5.0, 30.0)
    assert "window 5–30 ms of a 109 ms run" in fig.axes[-1].get_xlabel()
    # Releases (▲) and deadlines (▼) in one lane per task; gedf's missed one in red.
    assert [t.get_text() for t in a0.get_yticklabels()] == ["CPU 0", "CPU 1", "light1", "light2", "heavy"]
    markers = {ln.get_marker() for ln in a0.lines}
    assert {"^", "v"} <= markers
    red = [ln for ln in a0.lines if ln.get_marker() == "v" and ln.get_color() == "red"]
    assert len(red) == 1 and list(red[0].get_xdata()) == [11.0]  # heavy's deadline at 11 ms
    assert not [ln for ln in fig.axes[1].lines if ln.get_color() == "red"]  # pedf misses nothing
    # The legend sits beside the first panel, right of the plot, top-aligned with it.
    leg = fig.legends[0]
    labels = [t.get_text() for t in leg.get_texts()]
    assert labels == ["light1", "light2", "heavy", "release", "deadline", "missed deadline"]
    fig.canvas.draw()
    lb, ab = leg.get_window_extent(), a0.get_window_extent()
    assert lb.x0 >= ab.x1 and abs(lb.y1 - ab.y1) < 5
    plt.close("all")


def test_gantt_default_window_is_said():
    r = rtsched.simulate(EXAMPLES / "dhall.yaml", "gedf", trace=True)
    fig = r.gantt()
    assert fig.axes[0].get_xlim() == (0.0, 44.0)  # four periods of the longest-period task (11 ms)
    assert "the window 0–44 ms of a 109 ms run" in fig.axes[0].get_xlabel()
    plt.close("all")


def test_gantt_critical_sections(tmp_path):
    r = rtsched.simulate(EXAMPLES / "fork-join.yaml", "gedf", trace=True)
    fig = r.gantt(tmp_path / "fj.png", window="0:30")
    hatched = [c for c in fig.axes[0].collections if c.get_hatch()]
    assert hatched
    labels = [t.get_text() for t in fig.legends[0].get_texts()]
    assert "holds can_bus" in labels and "holds log" in labels
    # control (C = 1.2 ms, scaled by its demand) holds can_bus from 0.8 to 1.1 ms of its work:
    # its first job runs alone from 0, so the section is at [0.8, 1.1] × demand / WCET.
    j = r.jobs[(r.jobs.task == "control") & (r.jobs.job == 0)].iloc[0]
    d = int(j.demand_ns)
    lo, hi = 800_000 * d // 1_200_000, 1_100_000 * d // 1_200_000
    iv = r.intervals[(r.intervals.task == "control") & (r.intervals.job == 0)]
    assert len(iv) == 1 and iv.overhead_ns.iloc[0] == 0  # ran without a break (no overhead model)
    s0 = int(iv.start_ns.iloc[0])
    spans = [(v[:, 0].min(), v[:, 0].max()) for c in hatched for v in [c.get_paths()[0].vertices]]
    assert any(abs(a - (s0 + lo) / 1e6) < 1e-9 and abs(b - (s0 + hi) / 1e6) < 1e-9 for a, b in spans), spans
    plt.close("all")


# One fork-join job p on 2 CPUs under PAWS (crates/sim/tests/paws.rs, hand-worked): region 0
# [0,2] on CPU 0; region 1's thread 2 [2,6] on CPU 0, thread 0 [2,6] on CPU 1, thread 1 [6,10]
# on CPU 0; region 2 [10,12] on CPU 0. Thread 2 holds bus from 1 ms of its work for 2 ms, the
# last region from 0.5 ms for 1 ms, thread 1 takes log for its last 1 ms.
FORK_JOIN_SECTIONS = """\
    platform: {cpus: 2}
    run: {duration: 20EXEC}
    resources: [bus, log]
    tasks:
      - name: p
        period: 20
        regions: [2, [4, 4, 4], 2]
        sections:
          - {resource: bus, region: 1, thread: 2, start: 1ms, length: 2ms}
          - {resource: log, region: 1, thread: 1, start: 3ms, length: 1ms}
          - {resource: bus, region: 2, start: 0.5ms, length: 1ms}
    """


def test_gantt_hatches_the_sections_of_fork_join_threads(tmp_path):
    from rtsched.gantt import _held_spans

    p = write_dedented(tmp_path, FORK_JOIN_SECTIONS.replace("EXEC", ""))
    r = rtsched.simulate(p, "paws", trace=True)
    assert sorted(_held_spans(r.intervals, r.taskset)) == [
        (0, 3_000_000, 5_000_000, 0), (0, 9_000_000, 10_000_000, 1), (0, 10_500_000, 11_500_000, 0)]
    fig = r.gantt(tmp_path / "fj.png")
    hatched = sorted((round(v[:, 0].min(), 6), round(v[:, 0].max(), 6), c.get_hatch())
                     for c in fig.axes[0].collections if c.get_hatch() for v in [c.get_paths()[0].vertices])
    assert hatched == [(3.0, 5.0, "////"), (9.0, 10.0, "\\\\\\\\"), (10.5, 11.5, "////")], hatched
    labels = [t.get_text() for t in fig.legends[0].get_texts()]
    assert "holds bus" in labels and "holds log" in labels
    plt.close("all")
    # With drawn demands, each thread's section is scaled by its own demand (the interval's):
    # thread 2 of each job holds bus from 1 × d / 4 ms of its work for 2 × d / 4 ms.
    p = write_dedented(tmp_path, FORK_JOIN_SECTIONS.replace("EXEC", ", seed: 5, execution: {model: uniform, min: 0.5, max: 1.0}"))
    r = rtsched.simulate(p, "paws", trace=True)
    spans = _held_spans(r.intervals, r.taskset)
    t2 = r.intervals[(r.intervals.job == 0) & (r.intervals.region == 1) & (r.intervals.thread == 2)]
    assert len(t2) == 1 and t2.demand_ns.iloc[0] < 4_000_000 and t2.overhead_ns.iloc[0] == 0
    d, s0, cpu = int(t2.demand_ns.iloc[0]), int(t2.start_ns.iloc[0]), int(t2.cpu.iloc[0])
    assert (cpu, s0 + 1_000_000 * d // 4_000_000, s0 + 3_000_000 * d // 4_000_000, 0) in spans, (spans, d, s0)
    plt.close("all")


def test_gantt_without_a_trace_is_an_error():
    r = rtsched.simulate(EXAMPLES / "dhall.yaml", "gedf")  # trace=False: no intervals
    with pytest.raises(rtsched.InputError, match=r"recorded no execution intervals \(simulate\(\.\.\., trace=True\)"):
        r.gantt()
    r = rtsched.simulate(EXAMPLES / "dhall.yaml", "gedf", trace=True)
    with pytest.raises(rtsched.InputError, match="starts at 5000 ms, but the run.s. end at 109 ms"):
        r.gantt(window="5s:6s")


def test_cli_gantt_window(tmp_path):
    out = tmp_path / "g.png"
    run_cli("simulate", EXAMPLES / "dhall.yaml", "-s", "gedf", "pedf", "--gantt", out, "--gantt-window", "10ms:30ms",
            check=0)
    assert out.read_bytes()[:4] == b"\x89PNG"
    cases = [
        (["--gantt-window", "0:20"], "--gantt-window 0:20: needs --gantt OUT.png"),
        (["--gantt", out, "--gantt-window", "20:10"], "--gantt-window 20:10: the end must be after the start"),
        (["--gantt", out, "--gantt-window", "1x:2"], "--gantt-window 1x:2: unknown unit 'x'"),
        (["--gantt", out, "--gantt-window", "5s:"], f"--gantt {out}: the Gantt chart's window starts at 5000 ms"),
    ]
    for args, says in cases:
        r = run_cli("simulate", EXAMPLES / "dhall.yaml", "-s", "gedf", *args)
        assert r.returncode == 2 and says in r.stderr and "Traceback" not in r.stderr, (args, r.stderr)


def test_run_gantt_window_is_checked_before_any_real_run(tmp_path):
    # As simulate's: a window without a chart, or one that does not parse, exits 2 before a
    # real-time thread starts (no privilege needed to see it).
    out = tmp_path / "g.png"
    cases = [
        (["--gantt-window", "0:20"], "--gantt-window 0:20: needs --gantt OUT.png"),
        (["--gantt", out, "--gantt-window", "20:10"], "--gantt-window 20:10: the end must be after the start"),
        (["--gantt", out, "--gantt-window", "1x:2"], "--gantt-window 1x:2: unknown unit 'x'"),
    ]
    for args, says in cases:
        r = run_cli("run", EXAMPLES / "dhall.yaml", "-b", "testbed:gedf", "--duration", "20ms", *args)
        assert r.returncode == 2 and says in r.stderr and "Traceback" not in r.stderr, (args, r.stderr)
        assert r.stdout == "" and not out.exists(), (args, r.stdout)
    assert "--gantt-window START:END" in run_cli("run", "--help", check=0).stdout


@real
def test_run_gantt_window_draws_that_window(tmp_path):
    out = tmp_path / "g.png"
    r = run_cli("run", EXAMPLES / "dhall.yaml", "-b", "testbed:gedf", "--duration", "60ms", "--gantt", out,
                "--gantt-window", "10ms:30ms", check=0)
    assert f"wrote {out}" in r.stdout + r.stderr and out.read_bytes()[:4] == b"\x89PNG"
    r = run_cli("run", EXAMPLES / "dhall.yaml", "-b", "testbed:gedf", "--duration", "60ms", "--gantt", out,
                "--gantt-window", "5s:")
    assert r.returncode == 2 and f"--gantt {out}: the Gantt chart's window starts at 5000 ms" in r.stderr, r.stderr
