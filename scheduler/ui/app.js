// The scheduler's web UI: a page per view (#/jobs, #/job/ID, #/executors,
// #/caches, #/sessions), each drawn from the REST API and redrawn on a
// timer. Everything shown is built with DOM calls and textContent, never
// by parsing strings as HTML: SQL text and error messages come from
// clients.
"use strict";

const SVGNS = "http://www.w3.org/2000/svg";

// el builds an element: attrs (class, data-*, on* handlers, others as
// attributes) and children (nodes or strings, which become text).
function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  setAttrs(e, attrs);
  for (const c of children.flat()) {
    if (c === null || c === undefined) continue;
    e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return e;
}

function svg(tag, attrs, ...children) {
  const e = document.createElementNS(SVGNS, tag);
  setAttrs(e, attrs);
  for (const c of children.flat()) {
    if (c === null || c === undefined) continue;
    e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return e;
}

function setAttrs(e, attrs) {
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v === true ? "" : String(v));
  }
}

// token is the cluster's shared secret when it has one (--auth-token-file):
// asked for once on a 401 and kept for this browser tab only.
let token = sessionStorage.getItem("quiver-token") || "";

async function api(path, method) {
  const headers = { Accept: "application/json" };
  if (token) headers.Authorization = "Bearer " + token;
  const resp = await fetch(path, { method: method || "GET", headers });
  if (!resp.ok) {
    const text = (await resp.text()).trim();
    const err = new Error(text || resp.status + " " + resp.statusText);
    err.status = resp.status;
    throw err;
  }
  return resp.json();
}

function state(s) {
  return el("span", { class: "state " + s, "data-state": s }, s);
}

function duration(ms) {
  if (ms < 1000) return ms + " ms";
  const s = ms / 1000;
  if (s < 60) return s.toFixed(s < 10 ? 2 : 1) + " s";
  const m = Math.floor(s / 60);
  if (m < 60) return m + " min " + Math.round(s - m * 60) + " s";
  return Math.floor(m / 60) + " h " + (m % 60) + " min";
}

function bytes(n) {
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  let i = 0;
  while (n >= 1024 && i < units.length - 1) { n /= 1024; i++; }
  return (i === 0 ? n : n.toFixed(1)) + " " + units[i];
}

function when(t) {
  if (!t) return "";
  const d = new Date(t);
  return d.toLocaleTimeString();
}

function ago(t) {
  if (!t) return "";
  return duration(Math.max(0, Date.now() - new Date(t).getTime())) + " ago";
}

function short(id) { return id ? id.slice(0, 8) : ""; }

function progress(done, total) {
  const pct = total > 0 ? Math.round(100 * done / total) : 0;
  return el("span", { class: "progress", title: done + " of " + total + " tasks" },
    el("span", { class: "bar" }, el("span", { style: "width:" + pct + "%" })), done + "/" + total);
}

function table(headers, rows, attrs) {
  if (rows.length === 0) return el("div", { class: "empty", "data-testid": (attrs || {})["data-testid"] }, "None.");
  return el("table", attrs,
    el("thead", {}, el("tr", {}, headers.map(h => el("th", { class: h.num ? "num" : null }, h.label || h)))),
    el("tbody", {}, rows));
}

function terminal(s) { return s === "successful" || s === "failed" || s === "cancelled"; }

function cancelButton(job) {
  return el("button", {
    "data-testid": "cancel",
    "data-job": job.id,
    onclick: async ev => {
      ev.preventDefault();
      ev.target.disabled = true;
      try {
        await api("/api/job/" + encodeURIComponent(job.id), "DELETE");
        refresh();
      } catch (err) {
        showError("cancel " + short(job.id) + ": " + err.message);
        ev.target.disabled = false;
      }
    },
  }, "Cancel");
}

// ---- pages ----

async function jobsPage() {
  const jobs = await api("/api/jobs");
  jobs.reverse(); // newest first
  const rows = jobs.map(j => el("tr", { "data-job": j.id, "data-state": j.state },
    el("td", {}, el("a", { href: "#/job/" + j.id, "data-testid": "job-link" }, short(j.id))),
    el("td", { class: "sql", title: j.sql || j.name || "" }, j.sql || (j.name ? "(" + j.name + ")" : "(DataFrame)")),
    el("td", { title: j.session }, short(j.session)),
    el("td", {}, state(j.state)),
    el("td", {}, progress(j.tasks_done, j.tasks_total)),
    el("td", { class: "num" }, duration(j.elapsed_ms)),
    el("td", { class: "num", "data-testid": "rows" }, j.rows === undefined ? "" : j.rows),
    el("td", {}, when(j.submitted)),
    el("td", {}, terminal(j.state) ? "" : cancelButton(j))));
  return [el("h2", {}, "Jobs"),
    table(["Job", "SQL", "Session", "State", "Progress", { label: "Elapsed", num: true }, { label: "Rows", num: true }, "Submitted", ""],
      rows, { "data-testid": "jobs" })];
}

let selectedStage = null;

async function jobPage(id) {
  let job, dot;
  try {
    job = await api("/api/job/" + encodeURIComponent(id));
  } catch (err) {
    if (err.status === 404) return [el("h2", {}, "Job " + id), el("div", { class: "empty" }, "No such job (ended jobs are kept for an hour).")];
    throw err;
  }
  const stages = job.stages || [];
  if (selectedStage === null || !stages.some(s => s.id === selectedStage)) {
    const running = stages.find(s => s.state === "running");
    selectedStage = running ? running.id : (stages.length ? stages[stages.length - 1].id : null);
  }
  const facts = el("dl", { class: "facts", "data-testid": "job-facts" },
    el("dt", {}, "Job"), el("dd", {}, job.id),
    el("dt", {}, "State"), el("dd", { "data-testid": "job-state" }, state(job.state)),
    el("dt", {}, "Session"), el("dd", {}, job.session),
    el("dt", {}, "Submitted"), el("dd", {}, new Date(job.submitted).toLocaleString()),
    el("dt", {}, "Elapsed"), el("dd", {}, duration(job.elapsed_ms)),
    el("dt", {}, "Progress"), el("dd", {}, progress(job.tasks_done, job.tasks_total), " tasks, ", job.stages_done + "/" + job.stages_total, " stages"),
    job.rows !== undefined ? [el("dt", {}, "Rows"), el("dd", { "data-testid": "job-rows" }, job.rows)] : null,
    job.error ? [el("dt", {}, "Error"), el("dd", { class: "errtext" }, job.error)] : null,
    job.builds_cache ? [el("dt", {}, "Builds cache"), el("dd", {}, job.builds_cache)] : null,
    (job.caches || []).length ? [el("dt", {}, "Caches"), el("dd", {}, job.caches.map(c => (c.name || short(c.cache_id)) + ": " + c.outcome).join(", "))] : null);
  const out = [
    el("h2", {}, "Job " + short(job.id) + " ", terminal(job.state) ? null : cancelButton(job)),
    facts,
    job.sql ? [el("h3", {}, "SQL"), el("pre", { "data-testid": "job-sql" }, job.sql)] : null,
    el("h3", {}, "Stages"),
    stages.length ? stageGraph(job) : el("div", { class: "empty" }, "Not planned yet."),
  ];
  const sel = stages.find(s => s.id === selectedStage);
  if (sel) {
    out.push(el("h3", {}, "Stage " + sel.id + " ", state(sel.state),
      el("span", { class: "muted" }, " " + sel.rows + " rows, " + bytes(sel.bytes) + " written" + (sel.rollbacks ? ", rolled back " + sel.rollbacks + "×" : ""))));
    out.push(table(["Partition", "Attempt", "State", "Executor", "Failures", "Error"],
      sel.tasks.map(t => el("tr", {},
        el("td", { class: "num" }, t.partition), el("td", { class: "num" }, t.attempt), el("td", {}, state(t.state)),
        el("td", { title: t.executor || "" }, t.executor || ""), el("td", { class: "num" }, t.failures), el("td", {}, t.error || ""))),
      { "data-testid": "tasks" }));
    out.push(el("h3", {}, "Plan"), el("pre", { "data-testid": "plan" }, sel.plan));
    // Once the stage has succeeded: the plan with each operator's figures
    // summed over its tasks (EXPLAIN ANALYZE), and the figures as a table.
    if (sel.analyze) {
      out.push(el("h3", {}, "Plan with metrics"), el("pre", { "data-testid": "plan-analyze" }, sel.analyze));
      out.push(table(["#", "Operator", "Rows", "Batches", "Time", "Spilled"],
        (sel.operators || []).map(o => el("tr", {},
          el("td", { class: "num" }, o.node + 1), el("td", {}, o.operator.split(":")[0]), el("td", { class: "num" }, o.output_rows),
          el("td", { class: "num" }, o.output_batches), el("td", { class: "num" }, duration(o.elapsed_ns / 1e6)),
          el("td", { class: "num" }, o.spilled_bytes ? bytes(o.spilled_bytes) : ""))),
        { "data-testid": "operators" }));
    }
  }
  out.push(el("p", {}, el("a", { href: "/api/job/" + encodeURIComponent(job.id) + "/dot" }, "Stage graph as Graphviz")));
  return out;
}

// stageGraph draws the stages as an SVG: columns by depth (a stage sits
// right of every stage it reads), an arrow from each input to its reader.
function stageGraph(job) {
  const stages = job.stages;
  const byID = new Map(stages.map(s => [s.id, s]));
  const depth = new Map();
  const depthOf = s => {
    if (depth.has(s.id)) return depth.get(s.id);
    depth.set(s.id, 0); // guards a malformed cycle
    let d = 0;
    for (const i of s.inputs || []) if (byID.has(i)) d = Math.max(d, depthOf(byID.get(i)) + 1);
    depth.set(s.id, d);
    return d;
  };
  const columns = [];
  for (const s of stages) {
    const d = depthOf(s);
    (columns[d] = columns[d] || []).push(s);
  }
  const W = 170, H = 62, GX = 60, GY = 24, PAD = 16;
  const pos = new Map();
  let rows = 0;
  columns.forEach((col, x) => {
    col.forEach((s, y) => pos.set(s.id, { x: PAD + x * (W + GX), y: PAD + y * (H + GY) }));
    rows = Math.max(rows, col.length);
  });
  const width = PAD * 2 + columns.length * W + (columns.length - 1) * GX;
  const height = PAD * 2 + rows * H + (rows - 1) * GY;
  const g = svg("svg", { class: "graph", width, height, viewBox: "0 0 " + width + " " + height, "data-testid": "stage-graph", role: "img", "aria-label": "stage graph" },
    svg("defs", {}, svg("marker", { id: "arrow", viewBox: "0 0 10 10", refX: 10, refY: 5, markerWidth: 7, markerHeight: 7, orient: "auto-start-reverse" },
      svg("path", { d: "M 0 0 L 10 5 L 0 10 z", fill: "#9aa3b2" }))));
  for (const s of stages) {
    for (const i of s.inputs || []) {
      const a = pos.get(i), b = pos.get(s.id);
      if (!a || !b) continue;
      const x1 = a.x + W, y1 = a.y + H / 2, x2 = b.x, y2 = b.y + H / 2, mx = (x1 + x2) / 2;
      g.append(svg("path", { class: "edge", "data-from": i, "data-to": s.id, d: `M ${x1} ${y1} C ${mx} ${y1}, ${mx} ${y2}, ${x2} ${y2}` }));
    }
  }
  for (const s of stages) {
    const p = pos.get(s.id);
    const done = s.tasks.filter(t => t.state === "successful").length;
    const node = svg("g", {
      class: "node " + s.state + (s.id === selectedStage ? " selected" : ""), "data-stage": s.id, "data-state": s.state,
      transform: `translate(${p.x},${p.y})`,
      onclick: () => { selectedStage = s.id; refresh(); },
    },
      svg("rect", { width: W, height: H, rx: 6 }),
      svg("text", { x: 10, y: 18, "font-weight": 600 }, "Stage " + s.id + (s.final ? " (final)" : "") + (s.whole ? " whole" : "")),
      svg("text", { x: 10, y: 35 }, s.state + " · " + done + "/" + s.tasks.length + " tasks"),
      svg("text", { x: 10, y: 52, class: "muted" }, s.rows + " rows · " + bytes(s.bytes)));
    g.append(node);
  }
  return g;
}

async function executorsPage() {
  const [execs, caches] = await Promise.all([api("/api/executors"), api("/api/caches")]);
  const cacheBytes = new Map();
  for (const e of caches.entries) {
    const per = e.executors.length ? e.bytes / e.executors.length : 0;
    for (const x of e.executors) cacheBytes.set(x, (cacheBytes.get(x) || 0) + per);
  }
  const rows = execs.map(e => el("tr", { "data-executor": e.id },
    el("td", {}, e.id), el("td", {}, e.host + ":" + e.port),
    el("td", { class: "num" }, e.vcores), el("td", { class: "num" }, e.running_tasks),
    el("td", {}, progress(e.running_tasks, e.vcores)),
    el("td", { class: "num", "data-testid": "memory" }, bytes(e.memory_reserved) + (e.memory_limit ? " of " + bytes(e.memory_limit) : "")),
    el("td", { class: "num" }, bytes(Math.round(cacheBytes.get(e.id) || 0))),
    el("td", {}, ago(e.last_heartbeat)), el("td", {}, e.draining ? state("draining") : state("running"))));
  return [el("h2", {}, "Executors"),
    table(["Executor", "Address", { label: "Slots", num: true }, { label: "Running", num: true }, "Busy", { label: "Memory", num: true }, { label: "Cache", num: true }, "Last heartbeat", "State"],
      rows, { "data-testid": "executors" })];
}

async function cachesPage() {
  const c = await api("/api/caches");
  const st = c.stats;
  const rows = c.entries.map(e => el("tr", { "data-cache": e.cache_id },
    el("td", {}, e.name || short(e.cache_id)),
    e.session_id ? el("td", { title: e.session_id }, short(e.session_id)) : el("td", { class: "muted" }, "none (global)"),
    el("td", { "data-testid": "scope" }, e.scope + (e.tenant ? " (" + e.tenant + ")" : "")),
    el("td", {}, state(e.state)), el("td", { class: "num" }, e.partitions), el("td", { class: "num" }, e.rows),
    el("td", { class: "num" }, bytes(e.bytes)), el("td", { class: "num" }, e.hits), el("td", { class: "num" }, e.readers),
    el("td", {}, e.executors.join(", ")), el("td", {}, ago(e.created)), el("td", {}, e.last_hit ? ago(e.last_hit) : "never"),
    el("td", {}, el("a", { href: "#/job/" + e.job_id }, short(e.job_id)))));
  const inval = Object.entries(st.invalidations).filter(([, n]) => n > 0).map(([k, n]) => k + " " + n).join(", ") || "none";
  return [el("h2", {}, "Caches"),
    el("dl", { class: "facts", "data-testid": "cache-stats" },
      el("dt", {}, "Entries"), el("dd", {}, st.entries + " (" + bytes(st.bytes) + (st.max_bytes ? " of " + bytes(st.max_bytes) : "") + ")"),
      el("dt", {}, "Hits / misses"), el("dd", {}, st.hits + " / " + st.misses),
      el("dt", {}, "Builds / aborts"), el("dd", {}, st.materializations + " / " + st.aborts),
      el("dt", {}, "Invalidations"), el("dd", {}, inval),
      el("dt", {}, "Read back"), el("dd", {}, bytes(st.bytes_read))),
    el("h3", {}, "Entries"),
    table(["Cache", "Session", "Scope", "State", { label: "Partitions", num: true }, { label: "Rows", num: true }, { label: "Bytes", num: true },
      { label: "Hits", num: true }, { label: "Readers", num: true }, "Executors", "Created", "Last hit", "Source job"], rows, { "data-testid": "caches" })];
}

async function sessionsPage() {
  const ss = await api("/api/sessions");
  const rows = ss.map(s => el("tr", { "data-session": s.id },
    el("td", {}, s.id), el("td", {}, ago(s.created)), el("td", {}, ago(s.last_used)),
    el("td", { class: "num" }, s.jobs), el("td", { class: "num" }, s.running_jobs), el("td", { class: "num" }, s.caches),
    el("td", {}, s.settings.join(", "))));
  return [el("h2", {}, "Sessions"),
    table(["Session", "Created", "Last used", { label: "Jobs", num: true }, { label: "Running", num: true }, { label: "Caches", num: true }, "Settings"],
      rows, { "data-testid": "sessions" })];
}

// ---- routing and refresh ----

function route() {
  const h = location.hash.replace(/^#\/?/, "");
  const [page, ...rest] = h.split("/");
  switch (page) {
    case "job": return { name: "jobs", draw: () => jobPage(decodeURIComponent(rest.join("/"))) };
    case "executors": return { name: "executors", draw: executorsPage };
    case "caches": return { name: "caches", draw: cachesPage };
    case "sessions": return { name: "sessions", draw: sessionsPage };
  }
  return { name: "jobs", draw: jobsPage };
}

let timer = null;
let drawing = false;
let waitingForToken = false;

function showError(msg) {
  const e = document.getElementById("error");
  e.textContent = msg;
  e.hidden = !msg;
}

async function refresh() {
  if (drawing) return;
  drawing = true;
  clearTimeout(timer);
  const r = route();
  for (const a of document.querySelectorAll("nav a")) a.classList.toggle("active", a.dataset.page === r.name);
  try {
    const nodes = await r.draw();
    const main = document.getElementById("main");
    main.replaceChildren(...[nodes].flat(Infinity).filter(n => n));
    main.dataset.page = r.name;
    document.getElementById("updated").textContent = "updated " + new Date().toLocaleTimeString();
    showError("");
  } catch (err) {
    if (err.status === 401) {
      // No refresh until a token is given: it would clear the form.
      waitingForToken = true;
      document.getElementById("main").replaceChildren(...tokenForm(err.message));
      showError("");
      return;
    }
    showError("Cannot reach the scheduler: " + err.message);
  } finally {
    drawing = false;
    if (!waitingForToken) schedule();
  }
}

function tokenForm(why) {
  const input = el("input", { type: "password", id: "token", "data-testid": "token", autocomplete: "off", size: 40 });
  const form = el("form", {
    "data-testid": "token-form",
    onsubmit: ev => {
      ev.preventDefault();
      token = input.value.trim();
      sessionStorage.setItem("quiver-token", token);
      waitingForToken = false;
      refresh();
    },
  }, el("label", { for: "token" }, "Token "), input, " ", el("button", { type: "submit" }, "Use token"));
  return [el("h2", {}, "This cluster needs its token"), el("p", { class: "muted" }, why), form];
}

function schedule() {
  clearTimeout(timer);
  if (document.getElementById("autorefresh").checked) {
    timer = setTimeout(refresh, Number(document.getElementById("interval").value));
  }
}

window.addEventListener("hashchange", () => { selectedStage = null; refresh(); });
document.getElementById("autorefresh").addEventListener("change", schedule);
document.getElementById("interval").addEventListener("change", schedule);
refresh();
