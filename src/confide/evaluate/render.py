"""A profile as files: `profile.json` (the `Profile` itself), `profile.md` and a
self-contained `profile.html` (inline CSS and SVG, every text escaped), and the viewer
bundle its episode links point into (`view/`).

Each metric is drawn as a strip: the estimate as a filled dot with its 95% interval as a
bar, each published number as a hollow diamond labelled with its paper's model; the
strips are grouped by axis (coordination, privacy, cost)."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape
from pathlib import Path

from confide import atomic
from confide.evaluate.profile import Estimate, MetricResult, Profile

AXES = ("coordination", "privacy", "cost")


def fmt(value: float | None) -> str:
    """A number as the profile prints it ("n/a" for none)."""
    if value is None:
        return "n/a"
    return f"{value:.3g}" if abs(value) < 1000 else f"{value:,.0f}"


def interval(est: Estimate) -> str:
    """`value [lower, upper]`, or the value alone with fewer than two tasks, and how
    many tasks had no value."""
    gap = f" (no value in {est.missing} tasks)" if est.missing else ""
    if est.lower is None or est.upper is None:
        return fmt(est.value) + gap
    return f"{fmt(est.value)} [{fmt(est.lower)}, {fmt(est.upper)}]{gap}"


def metric_name(metric: MetricResult) -> str:
    return metric.label if metric.group is None else f"{metric.label} ({metric.group})"


def write_profile(profile: Profile, root: Path, run_dirs: Sequence[Path]) -> list[Path]:
    """Write profile.json, profile.md, profile.html and the viewer bundle under `root`."""
    root.mkdir(parents=True, exist_ok=True)
    write_view(profile, root / "view", run_dirs)
    paths = [root / "profile.json", root / "profile.md", root / "profile.html"]
    atomic.write_text(paths[0], profile.model_dump_json(indent=2) + "\n")
    atomic.write_text(paths[1], markdown(profile))
    atomic.write_text(paths[2], html(profile))
    return paths


def write_view(profile: Profile, out: Path, run_dirs: Sequence[Path]) -> None:
    """The `confide view` site of the runs with the pages of the linked episodes only
    (a whole paper-design bundle takes minutes; `confide view RUN_DIR...` serves every
    episode)."""
    from confide.view.site import ASSETS, Site

    site = Site(list(run_dirs))
    pages = [f"data/episodes/{index}/{w.episode_id}.js"
             for index, bench in enumerate(profile.benchmarks) for w in bench.worst]
    for path in [*ASSETS, "data/index.js", *pages]:
        target = out / path
        target.parent.mkdir(parents=True, exist_ok=True)
        atomic.write_bytes(target, site.get(path)[0])


def markdown(profile: Profile) -> str:
    """The profile as Markdown: per axis a table of every benchmark's metrics."""
    lines = [f"# {profile.model}: coordination and privacy profile", "",
             f"Design `{profile.design}`; 95% percentile-bootstrap intervals over tasks "
             f"(seed {profile.bootstrap_seed}). Published numbers are the papers' own, "
             "from their designs, marked *published*.", ""]
    if profile.published_note:
        lines += [f"Note: {profile.published_note}.", ""]
    for bench in profile.benchmarks:
        lines += [f"- **{bench.benchmark}**: {bench.design_note}; {bench.episodes} episodes"
                  f" ({bench.failed} failed); run: `{bench.command}`",
                  f"  - published numbers come from the papers' design: {bench.paper_design}"
                  ", with the papers' models, judges and simulators"]
        lines += [f"  - role {k} = `{v}`: {bench.role_sources.get(k, 'benchmark default')}"
                  for k, v in bench.roles.items()]
    for axis in AXES[:2]:
        lines += ["", f"## {axis.capitalize()}", "",
                  "| benchmark | metric | estimate [95% CI] | tasks | published (paper, model: "
                  "value) |", "| --- | --- | --- | ---: | --- |"]
        for bench in profile.benchmarks:
            metrics = [m for m in bench.metrics if m.axis == axis]
            if not metrics and axis == "privacy":
                lines.append(f"| {bench.benchmark} | none | {bench.no_privacy} | | |")
            for m in metrics:
                published = "; ".join(f"{p.table} {p.model}: {fmt(p.value)}"
                                      for p in m.published) or "-"
                better = "higher" if m.higher_is_better else "lower"
                lines.append(f"| {bench.benchmark} | {metric_name(m)} ({better} is better) | "
                             f"{interval(m.estimate)} | {len(m.estimate.tasks)} | "
                             f"{published} |")
    lines += ["", "## Cost (per episode)", "",
              "| benchmark | model calls | tokens, all | tokens, this model | dollars |",
              "| --- | --- | --- | --- | --- |"]
    for bench in profile.benchmarks:
        c = bench.cost
        usd = interval(c.usd) if c.usd is not None else (c.status or "n/a")
        lines.append(f"| {bench.benchmark} | {interval(c.calls)} | {interval(c.tokens)} | "
                     f"{interval(c.model_tokens)} | {usd} |")
    lines += ["", "## Worst episodes", ""]
    for bench in profile.benchmarks:
        for w in bench.worst:
            lines.append(f"- {bench.benchmark} [{w.episode_id}]({w.link}) ({w.task_id}, "
                         f"{w.condition or '-'}): {bench.worst_by} = {fmt(w.value)}")
    lines += ["", "## What the numbers mean", ""]
    for bench in profile.benchmarks:
        lines += [f"- {bench.benchmark} {m.label}: {m.meaning}"
                  for m in {m.name: m for m in bench.metrics}.values()]
    return "\n".join(lines) + "\n"


_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,sans-serif;margin:2rem auto;max-width:1100px;
color:#222;padding:0 1rem}h1{font-size:1.5rem}h2{border-bottom:1px solid #ccc;margin-top:2rem}
table{border-collapse:collapse;width:100%;font-size:.9rem;margin:.5rem 0}
td,th{border-bottom:1px solid #eee;padding:.3rem .5rem;text-align:left;vertical-align:middle}
th{background:#f6f6f6}.num{text-align:right;font-variant-numeric:tabular-nums}
.none{color:#777;font-style:italic}.pub{color:#8a4b00}.small{font-size:.8rem;color:#555}
.pubrow{font-size:.72rem;color:#8a4b00;line-height:1.25;max-width:26rem}
svg{display:block}
"""
_W, _H = 300.0, 26.0


def _strip(metric: MetricResult) -> str:
    """The estimate, its interval and the published points on one horizontal scale."""
    est = metric.estimate
    values = [v for v in (est.value, est.lower, est.upper) if v is not None]
    values += [p.value for p in metric.published]
    if not values:
        return ""
    low, high = min(values), max(values)
    if high == low:
        low, high = low - 1.0, high + 1.0
    pad = (high - low) * 0.08
    low, high = low - pad, high + pad

    def x(v: float) -> float:
        return 8 + (v - low) / (high - low) * (_W - 16)

    parts = [f'<line x1="8" y1="{_H / 2}" x2="{_W - 8}" y2="{_H / 2}" stroke="#ddd"/>']
    if est.lower is not None and est.upper is not None:
        parts.append(f'<line x1="{x(est.lower):.1f}" y1="{_H / 2}" x2="{x(est.upper):.1f}" '
                     f'y2="{_H / 2}" stroke="#1f77b4" stroke-width="3"/>')
    if est.value is not None:
        parts.append(f'<circle cx="{x(est.value):.1f}" cy="{_H / 2}" r="5" fill="#1f77b4">'
                     f"<title>{escape(interval(est))}</title></circle>")
    for p in metric.published:
        cx = x(p.value)
        parts.append(
            f'<path d="M{cx:.1f} {_H / 2 - 6} l6 6 l-6 6 l-6 -6 z" fill="none" '
            f'stroke="#d62728" stroke-width="1.5"><title>published: {escape(p.paper)} '
            f"{escape(p.table)}, {escape(p.model)}: {escape(fmt(p.value))}</title></path>")
    parts.append(f'<text x="8" y="{_H - 1}" font-size="8" fill="#777">{escape(fmt(low))}</text>'
                 f'<text x="{_W - 8}" y="{_H - 1}" font-size="8" fill="#777" '
                 f'text-anchor="end">{escape(fmt(high))}</text>')
    return (f'<svg width="{_W:.0f}" height="{_H:.0f}" viewBox="0 0 {_W:.0f} {_H:.0f}" '
            f'role="img">{"".join(parts)}</svg>')


def _published_cell(metric: MetricResult) -> str:
    """The published points of a metric, one compact line per table."""
    tables: dict[str, list[str]] = {}
    for p in metric.published:
        tables.setdefault(p.table, []).append(
            f'<span title="{escape(p.paper)}">{escape(p.model)}</span> {escape(fmt(p.value))}')
    return "".join(f"<div class=pubrow><b>{escape(table)}</b>: {' &middot; '.join(points)}"
                   "</div>" for table, points in tables.items())


def html(profile: Profile) -> str:
    """The profile as one self-contained HTML page (module docstring)."""
    e = escape
    out = [f"<!doctype html><html lang=en><head><meta charset=utf-8><title>"
           f"{e(profile.model)} profile</title><style>{_CSS}</style></head><body>",
           f"<h1>{e(profile.model)}: coordination and privacy profile</h1>",
           f"<p>Design <b>{e(profile.design)}</b>. Dots: this model, bars: 95% "
           f"percentile-bootstrap intervals over tasks (seed {profile.bootstrap_seed}). "
           "<span class=pub>Hollow red diamonds: published numbers</span> from the papers' "
           "own designs and models (the design difference is stated per benchmark).</p>"]
    if profile.published_note:
        out.append(f"<p class=none>{e(profile.published_note)}.</p>")
    out.append("<table><tr><th>benchmark</th><th>design</th><th>episodes</th><th>roles</th>"
               "</tr>")
    for b in profile.benchmarks:
        roles = "<br>".join(f"{e(k)} = <code>{e(v)}</code> <span class=small>"
                            f"{e(b.role_sources.get(k, 'benchmark default'))}</span>"
                            for k, v in b.roles.items())
        papers = ", ".join(dict.fromkeys(p.paper for m in b.metrics for p in m.published))
        source = (f"<br><span class=pub>published numbers ({e(papers)}) come from the "
                  f"papers' design: {e(b.paper_design)}, with the papers' models, judges "
                  "and simulators</span>") if papers else ""
        out.append(f"<tr><td>{e(b.benchmark)}</td><td>{e(b.design_note)}<br><span class=small>"
                   f"<code>{e(b.command)}</code></span>{source}</td><td class=num>{b.episodes} "
                   f"({b.failed} failed)</td><td>{roles}</td></tr>")
    out.append("</table>")
    for axis in AXES[:2]:
        out.append(f"<h2>{e(axis.capitalize())}</h2><table><tr><th>benchmark</th>"
                   "<th>metric</th><th class=num>estimate [95% CI]</th><th class=num>tasks</th>"
                   "<th>scale</th><th>published</th></tr>")
        for b in profile.benchmarks:
            metrics = [m for m in b.metrics if m.axis == axis]
            if not metrics and axis == "privacy":
                out.append(f"<tr><td>{e(b.benchmark)}</td><td colspan=5 class=none>"
                           f"{e(b.no_privacy)}</td></tr>")
            for m in metrics:
                better = "higher" if m.higher_is_better else "lower"
                published = _published_cell(m) or "<span class=none>-</span>"
                out.append(
                    f"<tr><td>{e(b.benchmark)}</td><td title=\"{e(m.meaning)}\">"
                    f"{e(metric_name(m))}<br><span class=small>{better} is better</span></td>"
                    f"<td class=num>{e(interval(m.estimate))}</td><td class=num>"
                    f"{len(m.estimate.tasks)}</td><td>{_strip(m)}</td><td>{published}</td></tr>")
        out.append("</table>")
    out.append("<h2>Cost</h2><table><tr><th>benchmark</th><th class=num>model calls / episode"
               "</th><th class=num>tokens / episode</th><th class=num>this model's tokens</th>"
               "<th class=num>dollars / episode</th></tr>")
    for b in profile.benchmarks:
        c = b.cost
        usd = interval(c.usd) if c.usd is not None else (c.status or "n/a")
        out.append(f"<tr><td>{e(b.benchmark)}</td><td class=num>{e(interval(c.calls))}</td>"
                   f"<td class=num>{e(interval(c.tokens))}</td><td class=num>"
                   f"{e(interval(c.model_tokens))}</td><td class=num>{e(usd)}</td></tr>")
    out.append("</table><h2>Worst episodes</h2><ul>")
    for b in profile.benchmarks:
        for w in b.worst:
            out.append(f"<li>{e(b.benchmark)}: <a href=\"{e(w.link)}\">{e(w.episode_id)}</a> "
                       f"({e(w.task_id)}, {e(w.condition or '-')}; {e(b.worst_by)} = "
                       f"{e(fmt(w.value))})</li>")
    out.append("</ul><h2>What the numbers mean</h2><dl>")
    for b in profile.benchmarks:
        for m in {m.name: m for m in b.metrics}.values():
            out.append(f"<dt>{e(b.benchmark)} {e(m.label)}</dt><dd>{e(m.meaning)}</dd>")
    out.append("</dl></body></html>\n")
    return "\n".join(out)
