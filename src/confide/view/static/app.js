/* confide view: a single-page run browser. Data arrives as scripts calling
   confideIndex(...) and confideEpisode(...), so the same files work over HTTP and from
   file://. Every text from a run is inserted with textContent, never as markup. */
"use strict";

const state = { index: null, episodes: {}, pending: {}, details: {}, lastPath: null };

/* -- small DOM helpers ------------------------------------------------------------- */
function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else if (key === "text") node.textContent = value;
    else node.setAttribute(key, value === true ? "" : value);
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}
const isNum = (v) => v !== "" && v !== null && v !== undefined && !isNaN(Number(v));
const fmt = (v) => {
  if (!isNum(v)) return v === null || v === undefined ? "" : String(v);
  const n = Number(v);
  return Number.isInteger(n) ? String(n) : n.toFixed(3);
};
const json = (v) => JSON.stringify(v, null, 2);
/* One precision per numeric column, as report.html: integers as they are, else the
   decimals that give the largest value three significant digits (at least two). */
function columnFormat(values) {
  const nums = values.filter(isNum).map(Number);
  if (!nums.length || values.every((v) => v === "" || /^-?\d+$/.test(String(v)))) return (v) => fmt(v);
  const largest = Math.max(...nums.map(Math.abs));
  const places = largest > 0 ? Math.max(2, 2 - Math.floor(Math.log10(largest))) : 2;
  return (v) => (isNum(v) ? Number(v).toFixed(places) : fmt(v));
}
function short(id, n) { return id.length > n ? id.slice(0, n - 1) + "…" : id; }
function glossaryTerm(benchmark, column) {
  return (state.index.glossary || []).find((t) => t.benchmark === benchmark && t.column === column);
}
/* Paper sections as written ("4.1", "3.2, F.3"), never as numbers ("4.100"); a table or
   figure ("Table 2") keeps its own name. */
function sectionText(section) {
  return section ? String(section).split(/,\s*/)
    .map((s) => (/^(Table|Figure) /.test(s) ? s : "§" + s)).join(", ") : "";
}
function columnTitle(benchmark, column) {
  const term = glossaryTerm(benchmark, column);
  if (!term) return null;
  return term.section ? `${term.name}: ${term.definition} (${sectionText(term.section)})`
    : `${term.name}: ${term.definition}`;
}

/* -- routing ----------------------------------------------------------------------- */
function parseHash() {
  const raw = location.hash.replace(/^#/, "") || "/";
  const [path, query] = raw.split("?");
  return { parts: path.split("/").filter(Boolean).map(decodeURIComponent),
           params: new URLSearchParams(query || "") };
}
function hashFor(path, params) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params || {})) if (v !== "" && v !== null && v !== undefined && v !== false) q.set(k, v);
  const s = q.toString();
  return "#" + path + (s ? "?" + s : "");
}
function episodeHash(run, id, params) {
  return hashFor(`/episode/${run}/${encodeURIComponent(id)}`, params);
}
function route() {
  if (!state.index) return;
  const main = document.getElementById("main");
  const { parts, params } = parseHash();
  const path = parts.join("/");
  /* a new page starts at its top; a filter or perspective change on the same page, and a
     link to a marked event (scrolled to below), keep their place */
  if (path !== state.lastPath && !params.get("mark")) window.scrollTo(0, 0);
  state.lastPath = path;
  main.replaceChildren();
  if (parts[0] === "episodes") renderEpisodes(main, params);
  else if (parts[0] === "episode") renderEpisode(main, Number(parts[1]), parts[2], params);
  else if (parts[0] === "glossary") renderGlossary(main);
  else renderRuns(main);
  document.title = "confide view" + (parts[0] ? " · " + parts[0] : "");
}
window.addEventListener("hashchange", route);

window.confideIndex = function (data) {
  for (const run of data.runs) {  /* columns + row lists back to one object per row */
    const { columns, rows } = run.episodes;
    run.episodes = rows.map((r) => Object.fromEntries(columns.map((c, i) => [c, r[i]])));
  }
  state.index = data;
  route();
};
window.confideEpisode = function (data) {
  state.episodes[`${data.run}/${data.id}`] = data;
  (state.pending[`${data.run}/${data.id}`] || []).forEach((f) => f(data));
  delete state.pending[`${data.run}/${data.id}`];
};
function loadEpisode(run, id, done) {
  const key = `${run}/${id}`;
  if (state.episodes[key]) return done(state.episodes[key]);
  (state.pending[key] = state.pending[key] || []).push(done);
  const script = el("script", { src: `data/episodes/${run}/${encodeURIComponent(id)}.js` });
  script.onerror = () => {
    document.getElementById("main").replaceChildren(el("p", { class: "note", text: `Episode ${id} could not be loaded.` }));
  };
  document.body.append(script);
}

window.confideDetails = function (data) {
  const key = `${data.run}/${data.id}`;
  state.details[key] = data.events;
  (state.pending["details:" + key] || []).forEach((f) => f(data.events));
  delete state.pending["details:" + key];
};
/* The bulky parts of an episode (prompts, completions, long env data) arrive on first use. */
function loadDetails(run, id, done) {
  const key = `${run}/${id}`;
  if (state.details[key]) return done(state.details[key]);
  const waiting = state.pending["details:" + key];
  (state.pending["details:" + key] = waiting || []).push(done);
  if (!waiting) document.body.append(el("script", { src: `data/details/${run}/${encodeURIComponent(id)}.js` }));
}
/* A <details> whose body is drawn when first opened, from the episode's details file. */
function lazyDetails(summary, ep, i, draw, attrs) {
  const node = el("details", attrs || {}, el("summary", { text: summary }));
  node.addEventListener("toggle", () => {
    if (!node.open || node.dataset.drawn) return;
    node.dataset.drawn = "1";
    const slot = el("div", { class: "note", text: "Loading…" });
    node.append(slot);
    loadDetails(ep.run, ep.id, (events) => slot.replaceWith(draw(events[String(i)] || {})));
  });
  return node;
}

/* -- tables ------------------------------------------------------------------------ */
function table(columns, rows, opts) {
  const o = opts || {};
  const head = el("tr", {}, columns.map((c) => {
    const th = el("th", { class: (c.num ? "num " : "") + (o.onSort ? "sortable " : "") + (o.sort === c.key ? "sorted" + (o.asc ? " asc" : "") : ""),
                          title: c.title || null, "data-key": c.key, text: c.label });
    if (o.onSort) th.addEventListener("click", () => o.onSort(c.key));
    return th;
  }));
  const body = rows.map((row) => el("tr", {}, columns.map((c) => {
    const value = row[c.key];
    const cell = c.render ? c.render(row) : fmt(value);
    return el("td", { class: (c.num ? "num" : "") + (c.id ? " id" : ""), title: c.id ? String(value) : null }, cell);
  })));
  return el("table", { class: o.class || null }, el("thead", {}, head), el("tbody", {}, body));
}

/* -- Runs -------------------------------------------------------------------------- */
function renderRuns(main) {
  main.append(el("h1", { text: "Runs" }));
  const grid = el("div", { class: "runs" });
  for (const run of state.index.runs) {
    const episodes = new Set(run.episodes.map((r) => r.episode_id));
    const failed = new Set(run.episodes.filter((r) => r.status !== "ok").map((r) => r.episode_id));
    const head = run.headline;
    const columns = head.columns.map((c, i) => {
      const num = head.rows.length > 0 && head.rows.every((r) => isNum(r[i]) || r[i] === "");
      const show = num ? columnFormat(head.rows.map((r) => r[i])) : null;
      return { key: i, label: c, title: columnTitle(run.benchmark, c), num,
               render: show ? (r) => show(r[i]) : null };
    });
    grid.append(el("section", { class: "card run", "data-run": run.index },
      el("h2", {}, run.name, " ", el("span", { class: "badge", text: run.benchmark }),
        run.demo ? el("span", { class: "badge demo", title: run.demo, text: "DEMO" }) : null),
      run.demo ? el("p", { class: "demo", text: run.demo }) : null,
      el("p", {}, `${episodes.size} episodes (${failed.size} failed) · suite ${run.suite || "-"}`),
      el("p", {}, "lineups: ", run.lineups.join(", ") || "-", el("br"),
         "conditions: ", run.conditions.filter(Boolean).join(", ") || "-"),
      head.columns.length ? table(columns, head.rows) : el("p", { class: "note", text: "No summary.csv." }),
      el("p", {}, el("a", { href: hashFor("/episodes", { run: run.index }), text: "Episodes →" }),
         failed.size ? [" · ", el("a", { href: hashFor("/episodes", { run: run.index, failed: 1 }), text: "failed only" })] : null),
      usagePanel(run),
      el("details", {}, el("summary", { text: "Experiment (resolved)" }), el("pre", { text: run.experiment }))));
  }
  if (state.index.runs.length > 1) main.append(compareRuns());
  main.append(grid);
}

/* The run's model usage (view/usage.py), read from its traces when first opened. */
window.confideUsage = function (data) {
  state.usage = state.usage || {};
  state.usage[data.run] = data;
  (state.pending["usage:" + data.run] || []).forEach((f) => f(data));
  delete state.pending["usage:" + data.run];
};
const count = (n) => Number(n || 0).toLocaleString("en-US");
const share = (part, whole) => (whole ? (100 * part / whole).toFixed(1) + "%" : "-");
function usageTable(data) {
  const t = data.total;
  if (!t.calls) return el("p", { class: "note", text: `No model calls in its ${data.traces} traces (scripted seats only).` });
  const money = (u) => "$" + Number(u.cost_usd).toFixed(4) + (u.unpriced_calls ? ` + ${u.unpriced_calls} unpriced` : "");
  const rows = [...data.models, ...(data.models.length > 1 ? [{ model: "all models", ...t }] : [])];
  return el("div", {},
    table([
      { key: "model", label: "model" },
      { key: "calls", label: "calls", num: true, render: (u) => count(u.calls) },
      { key: "failed_calls", label: "failed", num: true, render: (u) => count(u.failed_calls) },
      { key: "retries", label: "retries", num: true, render: (u) => count(u.retries) },
      { key: "cached_calls", label: "response-cache hits", num: true, render: (u) => `${count(u.cached_calls)} (${share(u.cached_calls, u.calls)})` },
      { key: "prompt_tokens", label: "input tokens", num: true, render: (u) => count(u.prompt_tokens) },
      { key: "cached_prompt_tokens", label: "of which cached", num: true, render: (u) => `${count(u.cached_prompt_tokens)} (${share(u.cached_prompt_tokens, u.prompt_tokens)})` },
      { key: "cache_write_tokens", label: "cache writes", num: true, render: (u) => count(u.cache_write_tokens) },
      { key: "completion_tokens", label: "output tokens", num: true, render: (u) => count(u.completion_tokens) },
      { key: "reasoning_tokens", label: "of which reasoning", num: true, render: (u) => count(u.reasoning_tokens) },
      { key: "cost_usd", label: "cost (USD)", num: true, render: money },
    ], rows, { class: "usage-table" }),
    el("p", { class: "note", text: "Tokens and cost count the calls that reached a provider; a response-cache hit spent nothing. " +
      "Retries are the provider attempts a call made again (rate limits, server errors)." }));
}
function usagePanel(run) {
  const node = el("details", { class: "usage" }, el("summary", { text: "Model usage (calls, retries, tokens, cost, cache)" }));
  node.addEventListener("toggle", () => {
    if (!node.open || node.dataset.drawn) return;
    node.dataset.drawn = "1";
    const slot = el("div", { class: "note", text: "Reading the traces…" });
    node.append(slot);
    const draw = (data) => slot.replaceWith(usageTable(data));
    if (state.usage && state.usage[run.index]) return draw(state.usage[run.index]);
    const waiting = state.pending["usage:" + run.index];
    (state.pending["usage:" + run.index] = waiting || []).push(draw);
    if (!waiting) document.body.append(el("script", { src: `data/usage/${run.index}.js` }));
  });
  return node;
}

/* Several runs side by side: per benchmark, the headline rows of its runs in one table,
   columns merged by name (a blank cell: that run has no such column). */
function compareRuns() {
  const section = el("section", { class: "card compare", id: "compare" },
    el("h2", { text: `Compare ${state.index.runs.length} runs` }),
    el("p", { class: "note", text: "Per benchmark, the headline rows of its runs in one table; columns are matched by name." }));
  const benchmarks = [...new Set(state.index.runs.map((r) => r.benchmark))];
  for (const bench of benchmarks) {
    const runs = state.index.runs.filter((r) => r.benchmark === bench);
    const names = [];
    for (const run of runs) for (const c of run.headline.columns) if (!names.includes(c)) names.push(c);
    const rows = runs.flatMap((run) => run.headline.rows.map((r) => ({
      run: run.name, ...Object.fromEntries(run.headline.columns.map((c, i) => [c, r[i]])) })));
    const columns = [{ key: "run", label: "run", id: true },
      ...names.map((c) => ({ key: c, label: c, title: columnTitle(bench, c),
                             num: rows.some((r) => isNum(r[c])) && rows.every((r) => isNum(r[c]) || !r[c]) }))];
    section.append(el("h3", { text: `${bench} (${runs.length} run${runs.length > 1 ? "s" : ""})` }),
      table(columns, rows, { class: "compare-table" }));
  }
  return section;
}

/* -- Episodes ---------------------------------------------------------------------- */
const PAGE = 200; /* episode rows per page: a 1,080-episode run stays quick to draw */
const KEY_COLUMNS = ["episode_id", "task_id", "lineup", "condition", "repetition", "seed", "status", "seat", "participant", "error"];
function whereHolds(expr, row) {
  const m = /^\s*([^<>=!\s]+)\s*(<=|>=|!=|==|=|<|>)\s*(\S+)\s*$/.exec(expr);
  if (!m) return true;
  const v = row[m[1]];
  if (!isNum(v) || !isNum(m[3])) return false;
  const a = Number(v), b = Number(m[3]);
  return { "<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b, "=": a === b, "==": a === b, "!=": a !== b }[m[2]];
}
function renderEpisodes(main, params) {
  const runIndex = Number(params.get("run") || 0);
  const run = state.index.runs[runIndex] || state.index.runs[0];
  const f = Object.fromEntries(["status", "lineup", "seat", "condition", "task", "where", "sort", "desc", "failed", "leaked"].map((k) => [k, params.get(k) || ""]));
  const metricCols = [...new Set(run.episodes.flatMap((r) => Object.keys(r)))]
    .filter((k) => !KEY_COLUMNS.includes(k) && k !== "leak_events" && run.episodes.some((r) => isNum(r[k])));
  const update = (changes) => { location.hash = hashFor("/episodes", { ...f, run: run.index, ...changes }); };
  const distinct = (key) => [...new Set(run.episodes.map((r) => r[key] || ""))].sort();
  const select = (key, label, field) => el("label", {}, label,
    el("select", { name: key, onchange: (e) => update({ [key]: e.target.value }) },
      el("option", { value: "", text: "all" }),
      distinct(field).map((v) => el("option", { value: v, selected: v === f[key], text: v || "(none)" }))));
  const check = (key, label) => el("label", { class: "check" },
    el("input", { type: "checkbox", name: key, checked: f[key] === "1", onchange: (e) => update({ [key]: e.target.checked ? "1" : "" }) }), label);
  main.append(el("h1", {}, "Episodes"),
    el("div", { class: "filters" },
      state.index.runs.length > 1 ? el("label", {}, "run", el("select", { name: "run", onchange: (e) => { location.hash = hashFor("/episodes", { run: e.target.value }); } },
        state.index.runs.map((r) => el("option", { value: r.index, selected: r.index === run.index, text: r.name })))) : null,
      select("status", "status", "status"), select("lineup", "lineup", "lineup"), select("seat", "seat", "seat"),
      select("condition", "condition", "condition"), select("task", "task", "task_id"),
      el("label", {}, "metric (e.g. excess_vps>0)",
        el("input", { type: "text", name: "where", value: f.where, placeholder: "METRIC<X",
                      onchange: (e) => update({ where: e.target.value }) })),
      check("failed", "failed only"), check("leaked", "leaked only")));
  let rows = run.episodes.filter((r) =>
    (!f.status || r.status === f.status) && (!f.lineup || r.lineup === f.lineup) &&
    (!f.seat || (r.seat || "") === f.seat) && (!f.condition || (r.condition || "") === f.condition) &&
    (!f.task || r.task_id === f.task) && (!f.failed || r.status !== "ok") &&
    (!f.leaked || Number(r.leak_events) > 0) && (!f.where || whereHolds(f.where, r)));
  if (f.sort) {
    const k = f.sort, sign = f.desc ? -1 : 1;
    rows = [...rows].sort((a, b) => {
      const x = a[k], y = b[k];
      if (isNum(x) && isNum(y)) return sign * (Number(x) - Number(y));
      return sign * String(x ?? "").localeCompare(String(y ?? ""));
    });
  }
  const pages = Math.max(1, Math.ceil(rows.length / PAGE));
  const page = Math.min(Math.max(1, Number(params.get("page") || 1)), pages);
  const shown = rows.slice((page - 1) * PAGE, page * PAGE);
  const columns = [
    { key: "episode_id", label: "episode", id: true, render: (r) => el("a", { href: episodeHash(run.index, r.episode_id, r.seat ? { as: r.seat } : {}), class: "episode-link", text: short(r.episode_id, 48) }) },
    { key: "task_id", label: "task", id: true }, { key: "lineup", label: "lineup" },
    { key: "condition", label: "condition" }, { key: "seat", label: "seat" },
    { key: "status", label: "status", render: (r) => el("span", { class: "status-" + r.status, title: r.error || null, text: r.status }) },
    { key: "leak_events", label: "leaks", num: true, title: "Leak events in the episode (belief updates, CPV violations or gate releases)" },
    ...metricCols.map((k) => ({ key: k, label: k, num: true, title: columnTitle(run.benchmark, k) })),
  ];
  const pager = pages > 1 ? el("p", { class: "pager" },
    page > 1 ? el("a", { href: hashFor("/episodes", { ...f, run: run.index, page: page - 1 }), class: "prev", text: "← previous" }) : null,
    ` page ${page} of ${pages} `,
    page < pages ? el("a", { href: hashFor("/episodes", { ...f, run: run.index, page: page + 1 }), class: "next", text: "next →" }) : null) : null;
  main.append(el("p", { class: "note", id: "episode-count", text: `${rows.length} of ${run.episodes.length} rows (one per episode and seat)` + (pages > 1 ? `; rows ${(page - 1) * PAGE + 1}-${(page - 1) * PAGE + shown.length} shown` : "") }),
    pager,
    el("div", { class: "card" }, table(columns, shown, {
      class: "episodes", sort: f.sort, asc: !f.desc,
      onSort: (k) => update({ sort: k, desc: f.sort === k && !f.desc ? "1" : "" }) })));
}

/* -- Episode ----------------------------------------------------------------------- */
function renderEpisode(main, run, id, params) {
  main.append(el("p", { class: "note", text: "Loading episode…" }));
  loadEpisode(run, id, (ep) => {
    if (parseHash().parts[2] !== id) return;
    main.replaceChildren();
    drawEpisode(main, ep, params);
  });
}

function channelBadge(ev) {
  if (ev.channel === "dm") return el("span", { class: "badge dm", text: "DM" });
  if (ev.channel === "group") return el("span", { class: "badge group", text: "group " + (ev.group || "") });
  return el("span", { class: "badge public", text: "public" });
}

function usageFacts(usage) {
  const u = usage || {};
  const facts = [`tokens ${u.prompt_tokens ?? "?"} in / ${u.completion_tokens ?? "?"} out`];
  if (u.cached_prompt_tokens) facts.push(`${u.cached_prompt_tokens} cached in`);
  if (u.cache_write_tokens) facts.push(`${u.cache_write_tokens} cache writes`);
  if (u.reasoning_tokens) facts.push(`${u.reasoning_tokens} reasoning`);
  facts.push(`cost ${u.cost_usd !== undefined && u.cost_usd !== null ? "$" + Number(u.cost_usd).toFixed(5) : "unknown"}`);
  return facts;
}

function callDetails(ev, ep) {
  const facts = [`model ${ev.model}`, `purpose ${ev.purpose}`, `latency ${Number(ev.latency_s || 0).toFixed(2)} s`,
    ...usageFacts(ev.usage), `cache ${ev.cached ? "hit" : "miss"}`];
  const node = lazyDetails("open model call", ep, ev.i, (d) => {
    const c = d.completion || {};
    return el("div", {},
      el("h4", { text: "Prompt" }),
      (d.messages || []).map((m) => el("pre", {}, el("strong", { text: m.role + ": " }), typeof m.content === "string" ? m.content : json(m.content))),
      el("h4", { text: ev.error ? "Error" : "Completion" }), el("pre", { text: ev.error || c.text || "" }),
      Object.keys(d.config || {}).length ? el("pre", { text: "config " + json(d.config) }) : null);
  }, { class: "call-details" });
  node.append(el("p", { class: "note", text: facts.join(" · ") }));
  return node;
}

const ENV_BADGES = { batch_applied: "batch ok", batch_rejected: "batch rejected", batch_failed: "batch failed",
  batch_rolled_back: "batch rolled back", consistency_violation: "conflict", invalid_tool_call: "invalid",
  invalid_action: "invalid", invalid_response: "invalid", gate_release: "gate release", gate_request: "gate",
  judge_verdict: "judge", judge_case: "judge", reflection: "reflection", tool_proposed: "tool call",
  tool_accepted: "tool call", tool_executed: "tool result", tool_rejected: "tool rejected" };

/* An utterance reference as the judge writes it (R<round>.<turn>) and as the transcript
   labels its messages, so a verdict's citations link to the turns they cite. */
const UTTERANCE = /\bR(\d+)\.(\d+)\b/g;
function utteranceLabel(ev) { return `R${ev.round}.${ev.turn}`; }
function linkedText(text, ep, view) {
  const out = el("span", {});
  let last = 0;
  for (const m of text.matchAll(UTTERANCE)) {
    const target = ep.utterances[m[0]];
    if (target === undefined) continue;
    out.append(text.slice(last, m.index),
      el("a", { class: "cite", href: episodeHash(ep.run, ep.id, { as: view, mark: target }), "data-event": target, text: m[0] }));
    last = m.index + m[0].length;
  }
  out.append(text.slice(last));
  return out;
}
function dataBlock(data, ep, view) { return el("pre", {}, linkedText(json(data), ep, view)); }

function eventKind(ev) { return ev.kind === "env" ? ev.name : ev.kind; }

function eventNode(ev, ep, marks, view) {
  const attrs = { id: `ev-${ev.i}`, "data-i": ev.i, "data-kind": ev.kind };
  const byMetric = {};
  for (const m of marks[ev.i] || []) (byMetric[m.metric] = byMetric[m.metric] || []).push(m.label);
  const markerBadges = Object.entries(byMetric).map(([metric, labels]) =>
    el("span", { class: "badge leak", title: labels.join("\n"), text: `⚑ ${metric}` + (labels.length > 1 ? ` ×${labels.length}` : "") }));
  const seen = view ? null : el("div", { class: "seen", text: "seen by: " + (ev.seen.join(", ") || "nobody (bookkeeping)") });
  if (ev.kind === "message") {
    const sentence = ep.story.sentences[String(ev.i)];
    return el("div", { ...attrs, class: "event message" + (marks[ev.i] ? " marked" : ""), "data-message": ev.id, "data-utterance": utteranceLabel(ev) },
      el("div", {}, el("span", { class: "note utterance", text: utteranceLabel(ev) + " " }), el("span", { class: "who", text: ev.sender }),
        " → ", ev.recipients.join(", ") || "-", " ", channelBadge(ev), markerBadges),
      ev.text !== null ? el("div", { class: "text", text: ev.text }) : null,
      sentence ? el("div", { class: "text sentence", text: sentence }) : null,
      ev.text === null && !sentence ? el("code", { class: "text payload", text: JSON.stringify(ev.payload) }) : null,
      ev.payload && (ev.text !== null || sentence) ? el("details", {}, el("summary", { text: "payload" }), el("pre", { text: json(ev.payload) })) : null,
      seen);
  }
  if (ev.kind === "env") {
    const label = ENV_BADGES[ev.name];
    const body = ev.data && Object.keys(ev.data).length
      ? el("details", {}, el("summary", { text: "data" }), dataBlock(ev.data, ep, view))
      : ev.lazy ? lazyDetails("data", ep, ev.i, (d) => dataBlock(d.data, ep, view)) : null;
    return el("div", { ...attrs, class: "event env" + (marks[ev.i] ? " marked" : ""), "data-name": ev.name },
      el("div", {}, label ? el("span", { class: "badge", text: label }) : null, el("span", { class: "who", text: `[${ev.name}]` }), " ", ev.seat || "", markerBadges),
      body, seen);
  }
  if (ev.kind === "model_call") {
    return el("div", { ...attrs, class: "event call" },
      el("div", {}, el("span", { class: "badge", text: "model call" }), `${ev.model} for ${ev.seat || "(no seat)"} (${ev.purpose})`,
        ev.error ? el("span", { class: "status-error", text: " error" }) : null),
      callDetails(ev, ep), seen);
  }
  return el("div", attrs, `[${ev.kind}]`);
}

/* Incognita desk data of one participant: role, tools, the calls it ran, gate releases. */
function deskCard(ep, view, desk) {
  if (!desk) return null;
  const link = (i, text) => el("a", { href: episodeHash(ep.run, ep.id, { as: view, mark: i }), "data-event": i, text });
  return el("div", { class: "desk" },
    el("h3", { text: "Desk data" + (desk.role ? ` (role ${desk.role})` : "") }),
    el("p", { class: "note", text: "tools: " + (desk.tools.join(", ") || "none") }),
    desk.calls.length ? el("ol", { class: "desk-calls" }, desk.calls.map((c) => el("li", {},
      link(c.event, c.tool), ` ${JSON.stringify(c.arguments)} → ${c.outcome}`,
      c.result !== null ? el("details", {}, el("summary", { text: "result it saw" }), el("pre", { text: json(c.result) })) : null)))
      : el("p", { class: "note", text: "It ran no tool calls." }),
    desk.releases.length ? el("ul", { class: "desk-releases" }, desk.releases.map((r) => el("li", {},
      "released ", link(r.event, r.field), ` (asked in message ${r.message_id})`))) : null);
}

/* Who saw what: every private item, and which participants it reached (first event).
   Folded when the benchmark tells its own story (CalBench infers leakage by VPS, so
   delivery is not the measure there). */
function whoSawWhat(ep, view) {
  const rows = [];
  for (const [owner, priv] of Object.entries(ep.private)) for (const item of priv.items) rows.push({ owner, item });
  if (!rows.length) return null;
  const reached = {};
  for (const [name, priv] of Object.entries(ep.private)) for (const r of priv.received || []) reached[`${r.owner}\u0000${r.item}\u0000${name}`] = r.event;
  const columns = [{ key: "owner", label: "owner" }, { key: "item", label: "private item", id: true },
    ...ep.participants.map((p) => ({ key: p, label: p, render: (row) => {
      if (p === row.owner) return el("span", { class: "note", text: "own" });
      const i = reached[`${row.owner}\u0000${row.item}\u0000${p}`];
      return i === undefined ? "" : el("a", { class: "saw", href: episodeHash(ep.run, ep.id, { as: view, mark: i }), "data-event": i, text: "saw" });
    } }))];
  const told = ep.story.sections.length > 0;
  return el("details", { class: "card who-saw-what", open: !told },
    el("summary", {}, el("h2", { text: `Who saw what (${rows.length} private items)` })),
    el("p", { class: "note", text: "Each seat's private items and the participants whose delivered messages or records carried them (link: the first such event)." +
      (told ? " The benchmark measures leakage by its own sections above; this table only tracks delivery." : "") }),
    table(columns, rows));
}

/* A benchmark's story section (core/viewing.Story): grids and tables of cells. */
function storyCell(cell, ep, view) {
  if (typeof cell === "string") return el("td", { text: cell });
  const text = cell.event !== undefined && cell.event !== null
    ? el("a", { href: episodeHash(ep.run, ep.id, { as: view, mark: cell.event }), "data-event": cell.event, text: cell.text })
    : cell.text;
  return el("td", { class: (cell.tone || "").split(" ").filter(Boolean).map((t) => "tone-" + t).join(" ") || null, title: cell.title || null }, text);
}
function storyBlock(block, ep, view) {
  const caption = block.caption ? el("caption", { text: block.caption }) : null;
  if (block.kind === "grid") {
    return el("table", { class: "grid" }, caption,
      el("thead", {}, el("tr", {}, el("th", {}), block.columns.map((c) => el("th", { text: c })))),
      el("tbody", {}, block.rows.map((r) => el("tr", { class: view && r.label === view ? "mine" : null },
        el("th", { text: r.label }), r.cells.map((c) => storyCell(c, ep, view))))));
  }
  return el("table", { class: "story-table" }, caption,
    el("thead", {}, el("tr", {}, block.columns.map((c) => el("th", { text: c })))),
    el("tbody", {}, block.rows.map((r) => el("tr", {}, r.map((c) => storyCell(c, ep, view))))));
}
function storySection(section, i, ep, view) {
  return el("section", { class: "card story", id: `story-${i}` },
    el("h2", { text: section.title }),
    section.note ? el("p", { class: "note", text: section.note }) : null,
    el("div", { class: "blocks" }, section.blocks.map((b) => storyBlock(b, ep, view))));
}

/* The event-kind filter: every kind of the episode, the benchmark's bookkeeping kinds
   (story.quiet) hidden until asked. */
function kindFilter(ep, hidden, go) {
  const counts = {};
  for (const ev of ep.events) counts[eventKind(ev)] = (counts[eventKind(ev)] || 0) + 1;
  const set = (kind, on) => {
    const next = new Set(hidden);
    if (on) next.delete(kind); else next.add(kind);
    go({ hidden: [...next].sort().join(",") || "none" });
  };
  return el("div", { class: "filters kinds" }, el("span", { class: "note", text: "event kinds:" }),
    Object.keys(counts).sort().map((k) => el("label", { class: "check" },
      el("input", { type: "checkbox", name: "kind", value: k, checked: !hidden.has(k), onchange: (e) => set(k, e.target.checked) }),
      `${k.replace(/_/g, " ")} (${counts[k]})`)));
}

function drawEpisode(main, ep, params) {
  const runInfo = state.index.runs[ep.run];
  const asName = params.get("as") || "";
  const view = ep.participants.includes(asName) ? asName : "";
  const mark = params.get("mark");
  const hiddenParam = params.get("hidden");
  const hidden = new Set(hiddenParam === null ? ep.story.quiet : hiddenParam.split(",").filter((k) => k && k !== "none"));
  const h = ep.header;
  const marks = {};
  for (const m of ep.markers) (marks[m.event] = marks[m.event] || []).push(m);
  ep.utterances = ep.utterances || Object.fromEntries(ep.events.filter((e) => e.kind === "message").map((e) => [utteranceLabel(e), e.i]));
  const go = (changes) => { location.hash = episodeHash(ep.run, ep.id, { as: view, hidden: hiddenParam, ...changes }); };

  main.append(el("p", {}, el("a", { href: hashFor("/episodes", { run: ep.run }), text: "← episodes" }), ` · ${runInfo ? runInfo.name : ""}`),
    el("h1", { title: ep.id, text: short(ep.id, 80) }),
    el("div", { class: "episode-head" },
      el("span", {}, `${h.benchmark} · task ${h.scenario_id} · lineup ${h.lineup.join(", ")}` + (h.condition ? ` · condition ${h.condition}` : "") + ` · seed ${h.seed}`),
      el("label", {}, "perspective ",
        el("select", { id: "perspective", onchange: (e) => go({ as: e.target.value, mark: "" }) },
          el("option", { value: "", text: "everyone (full trace)" }),
          ep.participants.map((p) => el("option", { value: p, selected: p === view, text: p })))),
      ep.footer ? el("span", { class: "status-" + ep.footer.status, text: "status " + ep.footer.status }) : el("span", { class: "status-incomplete", text: "incomplete" })));

  const sections = ep.story.sections;
  if (sections.length) {
    const jump = (id, text) => el("a", { href: "#", onclick: (e) => { e.preventDefault(); document.getElementById(id).scrollIntoView(); }, text });
    main.append(el("p", { class: "toc" }, "On this page: ",
      sections.flatMap((s, i) => [jump(`story-${i}`, s.title), " · "]), jump("transcript", "Transcript")));
  }

  const perspective = ep.events.filter((e) => !view || e.seen.includes(view));
  const visibleEvents = perspective.filter((e) => !hidden.has(eventKind(e)));
  const transcript = el("section", { class: "transcript", id: "transcript" }, el("h2", { text: "Transcript" }), kindFilter(ep, hidden, go));
  const folded = perspective.length - visibleEvents.length;
  transcript.append(el("p", { class: "note", id: "event-count", text:
    (view ? `Showing the ${visibleEvents.length} of ${ep.events.length} events delivered to or observed by ${view}` : `Showing ${visibleEvents.length} of ${ep.events.length} events`) +
    (folded ? `; ${folded} of the unticked kinds are folded away.` : ".") }));
  let round = null;
  for (const ev of visibleEvents) {
    if (ev.round !== null && ev.round !== undefined && ev.round !== round) {
      round = ev.round;
      transcript.append(el("div", { class: "round", text: `Round ${round}` }));
    }
    transcript.append(eventNode(ev, ep, marks, view));
  }

  const aside = el("aside", {});
  if (view) {
    const priv = ep.private[view] || { items: [], state: {} };
    aside.append(el("div", { class: "card private" }, el("h2", { text: `${view}'s private state` }),
      priv.items.length ? el("ul", {}, priv.items.map((t) => el("li", { text: t }))) : el("p", { class: "note", text: "No private items recorded for this seat." }),
      Object.entries(priv.state).map(([k, v]) => el("details", { open: true }, el("summary", { text: k + " (last shown to it)" }), el("pre", { text: typeof v === "string" ? v : json(v) }))),
      deskCard(ep, view, priv.desk),
      el("h3", { text: `Others' private items it received (${(priv.received || []).length})` }),
      (priv.received || []).length ? el("ul", { class: "received" }, priv.received.map((r) => el("li", {},
        el("a", { href: episodeHash(ep.run, ep.id, { as: view, mark: r.event }), "data-event": r.event, text: r.owner }), ": ", r.item)))
        : el("p", { class: "note", text: "None." })));
  }
  const markerItem = (m) => el("li", {},
    el("a", { class: "leak-link", href: episodeHash(ep.run, ep.id, { as: view, mark: m.event }), "data-event": m.event, text: m.metric }), " ", m.label);
  const FIRST_MARKERS = 20; /* the rest folded: a CalBench game can have hundreds of belief updates */
  aside.append(el("div", { class: "card markers" }, el("h2", { text: `Leak events (${ep.markers.length})` }),
    ep.markers.length ? el("ul", {}, ep.markers.slice(0, FIRST_MARKERS).map(markerItem)) : el("p", { class: "note", text: "None recorded." }),
    ep.markers.length > FIRST_MARKERS ? el("details", {}, el("summary", { text: `${ep.markers.length - FIRST_MARKERS} more` }),
      el("ul", {}, ep.markers.slice(FIRST_MARKERS).map(markerItem))) : null));
  if (ep.footer) {
    const f = ep.footer;
    const metricRows = Object.entries(f.metrics || {}).map(([k, v]) => ({ k, v }));
    aside.append(el("div", { class: "card metrics" }, el("h2", { text: "Metrics" }),
      f.error ? el("pre", { class: "status-error", text: f.error }) : null,
      table([{ key: "k", label: "metric", render: (r) => el("span", { title: columnTitle(h.benchmark, r.k), text: r.k }) }, { key: "v", label: "value", num: true }], metricRows),
      (f.rows || []).length ? el("details", {}, el("summary", { text: `result rows (${f.rows.length})` }),
        table(Object.keys(f.rows[0]).map((k) => ({ key: k, label: k, num: isNum(f.rows[0][k]) })), f.rows)) : null));
  }
  main.append(...sections.map((s, i) => storySection(s, i, ep, view)), el("div", { class: "layout" }, transcript, aside), whoSawWhat(ep, view) || "");
  if (mark !== null && mark !== "") {
    const target = document.getElementById(`ev-${mark}`);
    if (target) { target.classList.add("highlight"); target.scrollIntoView({ block: "center" }); }
    else {
      const shown = ep.events.find((e) => String(e.i) === String(mark));
      const why = shown && hidden.has(eventKind(shown)) ? `Its kind (${eventKind(shown)}) is unticked above.` : `The causing event is not visible to ${view}; switch to everyone to see it.`;
      transcript.prepend(el("p", { class: "note", id: "mark-hidden", text: why }));
    }
  }
}

/* -- Glossary ---------------------------------------------------------------------- */
function renderGlossary(main) {
  main.append(el("h1", { text: "Glossary" }),
    el("p", { class: "note", text: "Every reported metric, with its definition and the section of its paper." }),
    table([{ key: "benchmark", label: "benchmark" }, { key: "column", label: "column" }, { key: "name", label: "name" },
           { key: "definition", label: "definition" },
           { key: "section", label: "paper section", render: (r) => el("span", { class: "section", text: sectionText(r.section) }) }], state.index.glossary));
}
