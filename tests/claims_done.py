"""The Done-when of the verdicts issue, checked on a reproduction's claims.json (the quick runs
that tests/test_reproduce.py and tests/test_chronos2011.py already make): every verdict one of
the five words; no part that holds whose control's part holds too or has a zero-width interval;
no control that is its comparator by construction (:func:`identical_control`); and the paper's
main claims present."""

from rtsched.reproduce import claims as C

#: The main claims of each paper (the issue's list included), by id.
MAIN = {
    "lelli2011": ["L1-time", "L2-time", "L3-time", "L4-time", "L5-time", "L6-time", "L7-time", "L8-time", "L9-time"],
    "paws2013": ["T1-paws", "T1-sched-deadline", "T1-margin", "S6-inversion", "S4-steal", "S4-aware", "F2-kernel", "F3",
                 "F3-cause", "F2-growth", "F3-growth"],
    "lwfg2012": ["O1-all", "O1-double", "O1-rarely", "O2", "O3", "O4", "M-misses", "M-15", "O5-comparable", "O5-dip",
                 "O5-fallback", "O6-bf", "O6-wfd", "O6-ffd", "O6-infeasible", "F4-tardiness", "F4-60", "F4-dsr", "F4-hist"],
    "chronos2011": ["C1", "C2", "C3", "C4", "C5", "C6", "C7", "C8", "C9", "C10", "C12", "C13"],
    "opzone2012": ["O1", "O2", "O3", "O4", "O6", "O7"],
}


def cells(m) -> list:
    """(label, estimate) of a measurement of claims.json: its parts, or its one estimate."""
    if not m:
        return []
    if m.get("estimate"):
        return [("", m["estimate"])]
    return [(p["label"], p["estimate"]) for p in m.get("parts", []) if p.get("estimate")]


def numbers(e) -> tuple:
    return (e["value"], e["lo"], e["hi"], e["n"])


def identical_control(c) -> str | None:
    """Why claim ``c``'s control is its comparator by construction, not by chance: it compares a
    variant with itself (gedf / gedf: identical samples that vary, over at least the least n of
    samples, which chance does not give — a few sets' worst responses may coincide), or
    shares some of its parts with the claim, unchanged (the same label and numbers). A control whose outcome merely
    coincides with the comparator's (both meet every deadline at a light load; LWFG with and
    without its groups both at DSR 1 against FFD) is left to the engine, which cannot tell there."""
    ours, ctrl = cells(c["ours"]), [x for x in cells(c["control"]) if x[1]["n"]]
    if not ctrl:
        return None
    # A control comparing a variant with itself where the claim's comparison does not (when the
    # claim's own two sides coincide too, the metric does not tell the variants apart: the
    # engine's verdict says so).
    ours_same = any(e.get("same") for _, e in ours)
    if not ours_same and any(e.get("same") and e["n"] >= C.MIN_N for _, e in ctrl):
        return "it compares a variant with itself (identical varying samples)"
    informative = [(label, e) for label, e in ctrl if _informative(e)]
    # A part whose two comparisons say what they compare, and differ in it, coincides because the
    # variants ran alike there (paws2013 S4-steal: PAWS and priority-unaware stealing give the
    # same worst responses in the busy windows at m = 2), not because one comparison was reused.
    reused = {(lab, numbers(x)): _sides(x) for lab, x in ours}
    shared = [label for label, e in informative
              if (label, numbers(e)) in reused and not _told_apart(reused[(label, numbers(e))], _sides(e))]
    # Some parts the claim's own, unchanged, beside others that are not: the comparison reused
    # in the control (lelli2011 L4's SCHED_FIFO parts). A control whose variant ran alike in
    # every part (PAWS's worst responses under priority-unaware stealing at m = 2) is the
    # engine's to call: it cannot tell there.
    if shared and len(shared) < len(ctrl):
        return f"it shares parts with the claim: {shared}"
    return None


def _sides(e):
    return tuple(e["sides"]) if e.get("sides") else None


def _told_apart(a, b) -> bool:
    """Two comparisons that name their sides, and name different ones."""
    return a is not None and b is not None and a != b


def _informative(e) -> bool:
    """Numbers that two variants give alike only by being one: an interval of some width, and
    not a proportion at a bound (0 of 20 sets with a miss is anyone's count)."""
    if e["lo"] is None or e["lo"] == e["hi"]:
        return False
    return not (e["method"].startswith("proportion") and e["value"] in (0.0, 1.0))


def check_done(doc, name):
    """Assert the Done-when on claims.json ``doc`` of reproduction ``name``."""
    ids = [c["id"] for c in doc]
    missing = [i for i in MAIN[name] if i not in ids]
    assert not missing, f"{name}: main claims missing: {missing}"
    for c in doc:
        where = f"{name} {c['id']}"
        assert c["verdict"] in C.VERDICTS, (where, c["verdict"])
        assert c["control"] and c["control"]["variant"], f"{where}: no control"
        same = identical_control(c)
        assert same is None, f"{where}: its control is its comparator: {same}"
        for j in c["judged"]:
            if j["verdict"] != C.HOLDS:
                continue
            assert j["control_verdict"] != C.HOLDS, f"{where} {j['label']}: holds, and so does its control's part"
            e = j["control_estimate"]
            assert e and e["lo"] is not None and not (e["n"] >= 2 and e["lo"] == e["hi"]), \
                f"{where} {j['label']}: holds against a zero-width (or missing) control interval {e}"
        if c["verdict"] in (C.HOLDS, C.PARTLY):
            assert any(j["verdict"] == C.HOLDS for j in c["judged"]), where
        if c["verdict"] == C.HOLDS:
            assert all(j["control_verdict"] != C.HOLDS for j in c["judged"]), f"{where}: holds with a control part that holds"
