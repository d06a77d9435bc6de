#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Combine ctxsw results from several boots into one report.

    report.py --out DIR BOOT...     reads DIR/BOOT.json, writes DIR/report.txt,
                                    DIR/results.json and DIR/ctxsw.svg

Boots: x86_64 (pmuctx and perf software counters side by side), arm64
(pmuctx owns the PMU) and arm64-perf (the kernel's PMU driver owns it:
perf_events with PMU counters); x86_64-pmu and x86_64-perf are their twins
on the x86_64 PMU lane (our QEMU's emulated Intel PMU, 8 general + 3 fixed):
pmuctx's PMU rows on x86 come from x86_64-pmu, perf's from x86_64-perf.
Overheads are medians minus the "no counters" median of the same boot and kind; ratios are overhead over
overhead.  The goals are those of issue 11.  Multiplexing (issue 13):
14pmu ping-pong rows beside 7pmu, and the cost of one rotation from a
user loop with 14 PMU counters against 7 (pmuctx counts its rotations,
perf's are the loop time over its interval).  Accuracy (issue 25): the
workload families of mux_families.h, pmuctx (arch boot) and perf
(arch-perf boot) side by side, every run, each family's median error and
pmuctx's coverage.
Fallback boots (arm64-fallback, x86_64-fallback): pmuctx counting through
the kernel's perf events, perf beside it in the same boot; their tables
carry no goals (the goals are the native backends'): they show what the
native backend, and so the reboot, buys.
Shared boots (arm64-shared, x86_64-shared): pmuctx on perf's per-CPU
events (backend=auto beside perf's driver; the NMI watchdog on in x86's),
perf beside it in the same boot; judged by issue 43's goals: a swap at most
1/3 of perf's, a load at most 1/2 of perf's load of the same events.
"""
import argparse
import json
import os
import sys

SETS = ["1sw", "3sw", "8sw", "2pmu", "7pmu", "4pmu+4sw", "14pmu"]
SHAPES = [("swap", "inherited (swap)"), ("load", "separate (load)"),
          ("modified", "child +1 (load)"), ("mapped", "inherited, mapped (swap?)"),
          ("stat", "inherited, per-task")]


class Boot:
    def __init__(self, tag, data):
        self.tag = tag
        self.data = data
        self.cases = {c["id"]: c for c in data["cases"] if "median" in c}
        self.mem = {m["id"]: m for m in data.get("memory", []) if "objects" in m}

    def get(self, cid):
        return self.cases.get(cid)


# The boot whose perf_events own the PMU, for each boot whose pmuctx rows a
# table shows.
PERF_TWIN = {"x86_64": "x86_64-perf", "x86_64-pmu": "x86_64-perf",
             "arm64": "arm64-perf"}


def perf_boot(arch, boots):
    return boots.get(PERF_TWIN.get(arch, arch + "-perf")) or boots.get(arch)


def over(boot, cid, base_id):
    """(overhead median, overhead min, overhead max, base median) or None."""
    if not boot:
        return None
    c, b = boot.get(cid), boot.get(base_id)
    if not c or not b:
        return None
    m = b["median"]
    return (c["median"] - m, c["min"] - m, c["max"] - m, m)


def fmt(v, sign=True):
    if v is None:
        return "--"
    return ("%+.0f" if sign else "%.0f") % v


def switch_rows(arch, boots):
    """Rows of (group, label, pmuctx overhead, perf overhead, base, perf base, extra)."""
    main = boots.get(arch)
    perf_hw = perf_boot(arch, boots)
    rows = []
    for s in SETS:
        pmu = "pmu" in s
        pb = perf_hw if pmu else main
        for shape, label in SHAPES:
            pm = over(main, "pingpong/%s/pmuctx/%s" % (s, shape), "pingpong/none")
            # Mapped (self-reading) pmuctx contexts are judged against perf's swap.
            pf = over(pb, "pingpong/%s/perf/%s" % (s, "swap" if shape == "mapped" else shape),
                      "pingpong/none")
            if pm is None and (pf is None or shape == "mapped"):
                continue
            rows.append(dict(kind="pingpong", set=s, shape=shape,
                             label="%s %s" % (s, label), pmuctx=pm, perf=pf,
                             perf_boot=pb.tag if pb else None))
    for n in (2, 8, 32):
        for fam, label in ((1, "1 family (swap)"), (2, "2 families (load)")):
            pm = over(main, "ring%d/3sw/pmuctx/%dfam" % (n, fam), "ring%d/none" % n)
            pf = over(main, "ring%d/3sw/perf/%dfam" % (n, fam), "ring%d/none" % n)
            if pm is None and pf is None:
                continue
            rows.append(dict(kind="ring", set="3sw", shape="swap" if fam == 1 else "load",
                             label="ring %d, 3sw, %s" % (n, label), pmuctx=pm, perf=pf,
                             perf_boot=main.tag if main else None))
    return rows


def judge_switch(r, arch=""):
    """Goal text for one switch row."""
    pm, pf = r["pmuctx"], r["perf"]
    if pm is None or pf is None or arch.endswith("-fallback"):
        return ""
    if arch.endswith("-shared"):
        # Issue 43: borrowed counters swap at <= 1/3 and load at <= 1/2 of perf.
        share = {"swap": 3.0, "mapped": 3.0, "load": 2.0, "modified": 2.0}.get(r["shape"])
        if share is None:
            return ""
        budget = pf[0] / share
        ok = pm[0] <= budget
        r["goal"] = dict(budget=round(budget, 1), met=ok, gap=round(pm[0] - budget, 1))
        return ("met (<= 1/%d)" % share) if ok else "gap %+.0f (budget %.0f)" % (pm[0] - budget, budget)
    if r["shape"] in ("swap", "mapped"):
        budget = min(pf[0] / 3.0, 0.02 * pm[3])
        ok = pm[0] <= budget
        r["goal"] = dict(budget=round(budget, 1), met=ok, gap=round(pm[0] - budget, 1))
        return "met" if ok else "gap %+.0f (budget %.0f)" % (pm[0] - budget, budget)
    if r["shape"] == "stat":
        # Issue 26: per-task counts (INHERIT_STAT: pmuctx loads, perf swaps with
        # inherit_stat) at <= 1/3 of perf's.
        budget = pf[0] / 3.0
        ok = pm[0] <= budget
        r["goal"] = dict(budget=round(budget, 1), met=ok, gap=round(pm[0] - budget, 1))
        return "met (<= 1/3)" if ok else "gap %+.0f (budget %.0f)" % (pm[0] - budget, budget)
    if r["set"] == "7pmu":
        ok = pm[0] <= 600
        r["goal"] = dict(budget=600, met=ok, gap=round(pm[0] - 600, 1))
        return "met (<= 600)" if ok else "gap %+.0f (budget 600)" % (pm[0] - 600)
    return ""


def table_switch(arch, boots, out):
    rows = switch_rows(arch, boots)
    if not rows:
        return rows
    out.append("")
    out.append("%s: overhead per context switch over no counters (%s), median [min..max] of the interleaved runs"
               % (arch, boots[arch].data["unit"] if arch in boots else "?"))
    hdr = "  %-34s %19s %6s %19s %6s %7s  %s" % (
        "case", "pmuctx", "%none", "perf_events", "%none", "ratio", "goal (issue 11)")
    out.append(hdr)
    for r in rows:
        pm, pf = r["pmuctx"], r["perf"]

        def cell(v):
            if v is None:
                return "%19s %6s" % ("--", "")
            return "%19s %5.1f%%" % ("%s [%s..%s]" % (fmt(v[0]), fmt(v[1]), fmt(v[2])),
                                     100.0 * v[0] / v[3])
        ratio = "--"
        if pm is not None and pf is not None and pf[0] > 0:
            ratio = "%.2f" % (pm[0] / pf[0])
            r["ratio"] = round(pm[0] / pf[0], 3)
        goal = judge_switch(r, arch)
        out.append("  %-34s %s %s %7s  %s" % (r["label"], cell(pm), cell(pf), ratio, goal))
    return rows


def other_rows(arch, boots, out):
    main = boots.get(arch)
    perf_hw = perf_boot(arch, boots)
    res = {}
    if not main:
        return res
    out.append("")
    out.append("%s: fork+exit, reads, memory" % arch)
    f = over(main, "fork/8sw/pmuctx", "fork/none/none")
    p = over(main, "fork/8sw/perf", "fork/none/none")
    if f and p:
        ok = f[0] <= p[0] / 2
        res["fork"] = dict(pmuctx=f[0], perf=p[0], base=f[3], ratio=round(f[0] / p[0], 3), met=ok)
        out.append("  %-34s pmuctx %s  perf %s  (none %.0f)  ratio %.2f  %s" % (
            "fork+exit, 8 SW inherited", fmt(f[0]), fmt(p[0]), f[3], f[0] / p[0],
            "met (<= 0.50)" if ok else "gap %+.0f (budget %.0f)" % (f[0] - p[0] / 2, p[0] / 2)))
    for cid, pboot, label, goal in (
            ("read/sw/%s/read", main, "read() task-clock", 0.75),
            ("read/pmu/%s/read", perf_hw, "read() instructions (PMU)", 0.75),
            ("read/pmu/%s/self", perf_hw, "self-read instructions (PMU)", None)):
        a = main.get(cid % "pmuctx")
        b = pboot.get(cid % "perf") if pboot else None
        if not a and not b:
            continue
        line = "  %-34s pmuctx %s  perf %s" % (label, fmt(a and a["median"], False),
                                               fmt(b and b["median"], False))
        if a and b:
            ratio = a["median"] / b["median"]
            line += "  ratio %.2f" % ratio
            ent = dict(pmuctx=a["median"], perf=b["median"], ratio=round(ratio, 3))
            if goal:
                ent["met"] = ratio <= goal
                line += "  " + ("met (<= %.2f)" % goal if ratio <= goal else
                                "gap %+.0f (budget %.0f)" % (a["median"] - goal * b["median"],
                                                              goal * b["median"]))
            res[cid.split("/%s/")[0] + "/" + cid.split("/%s/")[1]] = ent
        out.append(line)
    for what in ("clone", "context"):
        a = main.mem.get("mem/8sw/pmuctx/%s" % what)
        b = main.mem.get("mem/8sw/perf/%s" % what)
        if not a and not b:
            continue
        line = "  %-34s pmuctx %s B  perf %s B  (slab objects; slab pages: %s / %s)" % (
            "memory per %s, 8 SW" % what, fmt(a and a["objects"], False),
            fmt(b and b["objects"], False), fmt(a and a["slab"], False), fmt(b and b["slab"], False))
        if a and b:
            line += "  ratio %.2f" % (a["objects"] / b["objects"])
            res["mem/" + what] = dict(pmuctx=a["objects"], perf=b["objects"],
                                      ratio=round(a["objects"] / b["objects"], 3))
        out.append(line)
    return res


def mux_rows(arch, boots, out):
    """Cost of one rotation, pmuctx (arch boot) against perf (arch-perf boot)."""
    main = boots.get(arch)
    perf_hw = perf_boot(arch, boots)
    pm = main.data.get("mux", {}).get("pmuctx") if main else None
    pf = perf_hw.data.get("mux", {}).get("perf") if perf_hw else None
    pm = pm if pm and "median" in pm else None
    pf = pf if pf and "median" in pf else None
    if not pm and not pf:
        return None
    src = main.data if pm else perf_hw.data
    out.append("")
    out.append("%s: multiplexing, cost of one rotation (%s): a %d M-instruction user loop with 14 PMU counters"
               % (arch, src["unit"], src["mux"]["loop_insns"] // 1000000))
    out.append("  (rotating) minus the same loop with 7 (all on the PMU), same round, over the rotations;"
               " median [min..max]")
    out.append("  %-34s %19s %9s %19s %9s %7s" % ("case", "pmuctx", "%interval", "perf_events",
                                                 "%interval", "ratio"))
    res, cells, notes = {}, [], []
    for name, m in (("pmuctx", pm), ("perf_events", pf)):
        if not m:
            cells.append("%19s %9s" % ("--", ""))
            continue
        rot = m["rotations"]
        m["percent_of_interval"] = 100.0 * m["median"] / (m["interval_ms"] * 1e6)
        cells.append("%19s %8.3f%%" % ("%.0f [%.0f..%.0f]" % (m["median"], m["min"], m["max"]),
                                       m["percent_of_interval"]))
        notes.append("  interval, %s: %d ms; rotations a loop %s" % (
            name, m["interval_ms"],
            "%s counted (PMUCTX_IOC_STATS)" % "/".join("%.0f" % r for r in rot)
            if m["rotations_counted"] else
            "%s expected = loop time / interval (%s)" % ("/".join("%.1f" % r for r in rot),
                                                         m["interval_source"])))
        res[name] = dict(median=m["median"], min=m["min"], max=m["max"],
                         percent_of_interval=round(m["percent_of_interval"], 4),
                         interval_ms=m["interval_ms"], rotations=rot,
                         rotations_counted=m["rotations_counted"])
    ratio = "--"
    if pm and pf and pf["median"] > 0:
        res["ratio"] = round(pm["median"] / pf["median"], 3)
        ratio = "%.2f" % res["ratio"]
    out.append("  %-34s %s %s %7s" % ("rotation, 14pmu loop over 7pmu", cells[0], cells[1], ratio))
    out.extend(notes)
    # What rotating contexts cost a switch over the same contexts with 7.
    deltas = []
    for shape, label in (("swap", "swap"), ("load", "load")):
        cells = []
        for api, b in (("pmuctx", main), ("perf", perf_hw)):
            a14 = b and b.get("pingpong/14pmu/%s/%s" % (api, shape))
            a7 = b and b.get("pingpong/7pmu/%s/%s" % (api, shape))
            if a14 and a7:
                cells.append("%s %+.0f" % (api, a14["median"] - a7["median"]))
                res["switch_14_minus_7_%s_%s" % (shape, api)] = round(a14["median"] - a7["median"], 1)
        if cells:
            deltas.append("%s: %s" % (label, ", ".join(cells)))
    if deltas:
        out.append("  per switch, 14pmu minus 7pmu: " + "; ".join(deltas))
    return res


def baselines(boots, out):
    out.append("")
    out.append("baselines (no counters, ping-pong, per switch) and perf software counters in each boot:")
    for tag, b in boots.items():
        n = b.get("pingpong/none")
        p = over(b, "pingpong/3sw/perf/swap", "pingpong/none")
        if n:
            out.append("  %-12s none %.0f [%.0f..%.0f]   perf 3sw swap %s   kernel %s" % (
                tag, n["median"], n["min"], n["max"], fmt(p and p[0]), b.data.get("kernel", "?")))


# ---------- SVG ----------

def esc(s):
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def svg(panels, path):
    """panels: [(title, [(label, pmuctx ovr tuple|None, perf ovr tuple|None)])]."""
    W, lw, bh, gap, top = 900, 250, 9, 6, 34
    colors = {"pmuctx": "#1f77b4", "perf_events": "#ff7f0e"}
    parts, y = [], 10
    for title, rows in panels:
        if not rows:
            continue
        vmax = max([v[2] for _, a, b in rows for v in (a, b) if v] + [1])
        scale = (W - lw - 90) / vmax
        parts.append('<text x="10" y="%d" font-weight="bold">%s</text>' % (y + 14, esc(title)))
        y += top
        for label, a, b in rows:
            parts.append('<text x="%d" y="%d" text-anchor="end">%s</text>' % (lw - 6, y + bh + 3, esc(label)))
            for i, (name, v) in enumerate((("pmuctx", a), ("perf_events", b))):
                yy = y + i * (bh + 1)
                if not v:
                    continue
                w = max(v[0], 0) * scale
                parts.append('<rect x="%d" y="%d" width="%.1f" height="%d" fill="%s"/>' % (lw, yy, w, bh, colors[name]))
                x1, x2 = lw + max(v[1], 0) * scale, lw + max(v[2], 0) * scale
                parts.append('<line x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f" stroke="black"/>' % (x1, x2, yy + bh / 2, yy + bh / 2))
                parts.append('<text x="%.1f" y="%d" font-size="9">%.0f</text>' % (max(x2, lw + w) + 4, yy + bh - 1, v[0]))
            y += 2 * bh + gap
        # axis
        parts.append('<line x1="%d" x2="%d" y1="%d" y2="%d" stroke="#888"/>' % (lw, lw, y - (top - 20), y))
        y += 16
    legend = ('<rect x="%d" y="8" width="10" height="10" fill="%s"/><text x="%d" y="17">pmuctx</text>'
              '<rect x="%d" y="8" width="10" height="10" fill="%s"/><text x="%d" y="17">perf_events</text>'
              % (W - 220, colors["pmuctx"], W - 205, W - 130, colors["perf_events"], W - 115))
    doc = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="11">' % (W, y + 10),
           '<rect width="100%" height="100%" fill="white"/>', legend] + parts + [
           '<text x="10" y="%d" font-size="10" fill="#555">overhead per context switch over no counters, '
           'guest instructions (QEMU -icount shift=0), median of interleaved runs, line = min..max</text>' % (y + 4),
           '</svg>']
    with open(path, "w") as f:
        f.write("\n".join(doc) + "\n")


def median(xs):
    xs = sorted(xs)
    n = len(xs)
    if not n:
        return None
    return xs[n // 2] if n % 2 else (xs[n // 2 - 1] + xs[n // 2]) / 2


def accuracy_rows(arch, boots, out):
    """Issue 25: multiplexed counts against the truth, pmuctx and perf side by side."""
    pm = boots.get(arch)
    # A fallback boot ran perf's rows beside pmuctx's.
    pf = boots.get(arch + "-perf") or (pm if arch.endswith(("-fallback", "-shared")) else None)
    rows = {}
    for api, b in (("pmuctx", pm), ("perf", pf)):
        seen = {}
        for r in (b.data.get("mux_accuracy", []) if b else []):
            if r["api"] != api:
                continue
            # each event is opened twice: the second is the 8th..14th counter
            k = (r["family"], r["config"], r["rep"], r["event"])
            n = seen[k] = seen.get(k, 0) + 1
            rows.setdefault(k + (n,), {})[api] = r
    if not rows:
        return None
    out.append("")
    out.append("%s: multiplexing accuracy (issue 25): 14 inherited counters on 6 + 1 against the 7 events"
               " together; every run" % arch)
    out.append("  %-13s %3s %-9s %9s %10s %9s   %s" % ("config", "rep", "event", "pmuctx", "95% half",
                                                       "perf", "judged"))
    errs = {}
    for key in sorted(rows, key=lambda k: (k[0], k[1], k[2], k[4])):
        fam, config, rep, event, _ = key
        cell, judged = [], False
        for api in ("pmuctx", "perf"):
            r = rows[key].get(api)
            if not r or r["truth"] <= 0:
                cell.append(None)
                continue
            judged = r["judged"]
            e = 100.0 * (r["scaled"] - r["truth"]) / r["truth"]
            cell.append((e, r))
            if judged:
                d = errs.setdefault(fam, {}).setdefault(api, [])
                d.append(abs(e))
                if api == "pmuctx":
                    c = errs[fam].setdefault("cov", [0, 0, 0])
                    c[0] += 1
                    if r["half"] is None:
                        c[2] += 1
                    elif abs(r["scaled"] - r["truth"]) <= r["half"]:
                        c[1] += 1
        pmc, pfc = cell
        half = "--"
        if pmc:
            half = ("?" if pmc[1]["half"] is None else "--" if not pmc[1]["scaled"] else
                    "%.2f%%" % (100.0 * pmc[1]["half"] / pmc[1]["scaled"]))
        out.append("  %-13s %3d %-9s %9s %10s %9s   %s" % (
            config, rep, event, "%+.2f%%" % pmc[0] if pmc else "--", half,
            "%+.2f%%" % pfc[0] if pfc else "--", "yes" if judged else ""))
    res = {}
    out.append("  median |error| of the judged (user-only, kernel-only) counters:")
    for fam in sorted(errs):
        e = errs[fam]
        mp, mf = median(e.get("pmuctx", [])), median(e.get("perf", []))
        cov = e.get("cov", [0, 0, 0])
        res[fam] = dict(pmuctx=mp, perf=mf, judged=cov[0], covered=cov[1], unknown=cov[2])
        out.append("    %-7s pmuctx %s (%d)  perf %s (%d)%s   pmuctx's 95%% intervals covered %d of %d, %d unknown" % (
            fam, "%.2f%%" % mp if mp is not None else "--", len(e.get("pmuctx", [])),
            "%.2f%%" % mf if mf is not None else "--", len(e.get("perf", [])),
            "  (pmuctx <= perf)" if mp is not None and mf is not None and mp <= mf else
            "  (pmuctx > perf)" if mp is not None and mf is not None else "",
            cov[1], cov[0], cov[2]))
    return res


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default="build/bench")
    ap.add_argument("boots", nargs="+")
    a = ap.parse_args()
    boots = {}
    for tag in a.boots:
        p = os.path.join(a.out, tag + ".json")
        try:
            with open(p) as f:
                boots[tag] = Boot(tag, json.load(f))
        except (OSError, ValueError) as e:
            print("report: %s: %s" % (p, e), file=sys.stderr)
    out, results, panels = [], {}, []
    for arch in ("x86_64", "x86_64-pmu", "arm64", "x86_64-fallback", "arm64-fallback",
                 "x86_64-shared", "arm64-shared"):
        if arch not in boots:
            continue
        rows = table_switch(arch, boots, out)
        res = other_rows(arch, boots, out)
        mux = mux_rows(arch, boots, out)
        acc = accuracy_rows(arch, boots, out)
        results[arch] = dict(switch=rows, other=res)
        if mux:
            results[arch]["mux"] = mux
        if acc:
            results[arch]["mux_accuracy"] = acc
        swaps = [(r["label"], r["pmuctx"], r["perf"]) for r in rows
                 if r["shape"] in ("swap", "mapped")]
        loads = [(r["label"], r["pmuctx"], r["perf"]) for r in rows
                 if r["shape"] not in ("swap", "mapped")]
        panels.append(("%s: equivalent contexts (swap)" % arch, swaps))
        panels.append(("%s: separate or modified contexts (load)" % arch, loads))
    baselines(boots, out)
    out.append("")
    out.append("ratio = pmuctx overhead / perf_events overhead; goals: swap <= 1/3 of perf and <= 2% over")
    out.append("no counters; 7 PMU load <= 600; fork+exit overhead <= 1/2 of perf's; read() <= 3/4 of perf's;")
    out.append("per-task counts (pmuctx INHERIT_STAT loads, perf's inherit_stat swaps)")
    out.append("<= 1/3 of perf's (issue 26).")
    out.append("14pmu: 14 PMU counters on a PMU of 6 + the cycle counter, so they rotate (issue 13);")
    out.append("on the x86_64 PMU lane (8 general + 3 fixed counters) they rotate too.")
    if any(t.endswith("-fallback") for t in boots):
        out.append("*-fallback: pmuctx through perf's events (no swaps: every switch loads), perf")
        out.append("beside it in the same boot; goals are the native backends', not judged there.")
    if any(t.endswith("-shared") for t in boots):
        out.append("*-shared: pmuctx on perf's per-CPU events (backend=auto), perf beside it in the")
        out.append("same boot; goals (issue 43): swap <= 1/3 of perf's, load <= 1/2 of perf's.")
    text = "\n".join(out) + "\n"
    sys.stdout.write(text)
    with open(os.path.join(a.out, "report.txt"), "w") as f:
        f.write(text)
    results["boots"] = {t: b.data for t, b in boots.items()}
    with open(os.path.join(a.out, "results.json"), "w") as f:
        json.dump(results, f, indent=1)
    svg(panels, os.path.join(a.out, "ctxsw.svg"))


if __name__ == "__main__":
    main()
