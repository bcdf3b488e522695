// The presenter page: draws the server's state and sends the presenter's commands.
// All state lives on the server, so a reload shows the same step.
"use strict";

const $ = (id) => document.getElementById(id);
let version = -1;
let server = null;       // which server process the version belongs to
let shown = {};          // what is on screen, to skip redrawing unchanged pictures
let broker = null;       // the broker the fault buttons act on
let queue = Promise.resolve();

function esc(text) {
  return String(text).replace(/[&<>"]/g, (c) => ({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;"}[c]));
}

async function api(path, body) {
  const init = body === undefined ? {} : {
    method: "POST", body: JSON.stringify(body),
    headers: {"Content-Type": "application/json", "X-Demo": "1"},
  };
  const response = await fetch(path, init);
  const data = await response.json();
  if (!response.ok) throw new Error(data.error || response.statusText);
  return data;
}

function showError(message) {
  const box = $("error");
  box.textContent = message;
  box.hidden = !message;
}

// Commands run one after another, in the order pressed.
function command(name, body = {}) {
  queue = queue.then(() => api("/api/" + name, body)).then(render, (e) => showError(e.message));
  return queue;
}

function setPicture(id, svg) {
  if (shown[id] === svg) return;
  shown[id] = svg;
  $(id).innerHTML = svg || "";
}

function renderGroups(groups) {
  $("groups").innerHTML = (groups || []).map((g) => {
    const rebalancing = /Rebalance/.test(g.state || "");
    const head = `group ${esc(g.group_id)} · <span class="${rebalancing ? "rebalancing" : ""}">` +
      `${rebalancing ? "⟳ " : ""}${esc(g.state || "?")}</span>` +
      (g.generation != null ? ` · gen ${g.generation}` : "");
    const rows = g.rows.map((r) => {
      const lag = r.kind === "no-commit" ? "none" : `${r.kind === "lagging" ? "▲" : "✓"} ${r.lag}`;
      return `<tr><td>${esc(r.partition)}</td><td>${esc(r.member ?? "unassigned")}</td>` +
        `<td>${r.committed ?? "–"}</td><td>${r.end ?? "?"}</td>` +
        `<td class="${r.kind}">${lag}</td></tr>`;
    }).join("");
    return `<table class="group"><caption>${head}</caption>` +
      `<tr><th>partition</th><th>consumer</th><th>committed</th><th>end</th><th>lag</th></tr>` +
      `${rows}</table>`;
  }).join("");
}

function renderNotes(notes) {
  $("notes").innerHTML = (notes || []).map(([label, text]) => {
    const tone = text.startsWith("✗") ? " bad" : text.startsWith("✓") ? " good" : "";
    return `<div class="note${tone}"><b>${esc(label)}</b>${esc(text)}</div>`;
  }).join("");
}

function renderBrokers(ids, down) {
  const box = $("brokers");
  if (broker === null || !ids.includes(broker)) broker = ids[0];
  const key = ids.join(",") + "|" + down.join(",") + "|" + broker;
  if (box.dataset.key === key) return;
  box.dataset.key = key;
  box.innerHTML = ids.map((b) =>
    `<button data-broker="${b}" aria-pressed="${b === broker}" title="broker ${b}` +
    `${down.includes(b) ? " (down)" : ""}">${b}${down.includes(b) ? "✕" : ""}</button>`).join("");
}

function render(s) {
  if (s.unchanged) return;
  // Answers can arrive out of order (a long poll answered just before a command):
  // never go back to an older state of the same server.
  if (s.server === server && s.version <= version) return;
  server = s.server;
  version = s.version;
  showError("");
  document.body.classList.toggle("live", s.mode === "live");
  $("title").textContent = s.title;
  document.title = "minikafka demo · " + s.title;
  $("step").textContent = s.mode === "live" ? (s.playing ? "● LIVE" : "❚❚ PAUSED")
    : `step ${s.step} / ${s.steps}`;
  $("time").textContent = s.time || "";
  const narration = $("narration");
  narration.textContent = s.narration;
  narration.classList.toggle("fault", /^[⚡⚠]/.test(s.narration));
  setPicture("cluster", s.cluster_svg);
  setPicture("log", s.log_svg);
  renderGroups(s.groups);
  renderNotes(s.notes);
  // The side column stays in scenario mode even when empty, so the log keeps its size.
  const empty = !(s.groups || []).length && !(s.notes || []).length;
  $("hint").hidden = !(empty && s.mode === "scenario");
  $("back").disabled = !s.can_back;
  $("next").disabled = !s.can_next;
  $("play").textContent = s.playing ? "❚❚ Pause" : "▶ Play";
  $("play").setAttribute("aria-pressed", String(s.playing));
  if (s.brokers) renderBrokers(s.brokers, s.down || []);
  const select = $("scenario");
  if (s.scenario && select.value !== s.scenario) select.value = s.scenario;
}

// A long poll: the server answers as soon as the state changes (or after 20 s).
async function poll() {
  let delay = 0;
  try {
    render(await api("/api/state?wait=20&since=" + version));
  } catch (e) {
    showError("lost the demo server: " + e.message);
    delay = 1000;
  }
  setTimeout(poll, delay);
}

async function loadScenarios() {
  const list = await api("/api/scenarios");
  $("scenario").innerHTML = list.map((s) =>
    `<option value="${esc(s.name)}">${esc(s.title)}</option>`).join("");
  $("scenario").hidden = list.length === 0;
}

// A button clicked with the mouse gives the focus back to the page, so Space and the
// arrows keep meaning Next and Back instead of pressing that button again.
function clicked(handler) {
  return (event) => {
    if (event.detail > 0) event.currentTarget.blur();
    handler(event);
  };
}

$("next").addEventListener("click", clicked(() => command("next")));
$("back").addEventListener("click", clicked(() => command("back")));
$("reset").addEventListener("click", clicked(() => command("reset")));
$("play").addEventListener("click", clicked(() => command("play", {})));
$("brokers").addEventListener("click", (event) => {
  const b = event.target.closest("button");
  if (!b) return;
  broker = Number(b.dataset.broker);
  $("brokers").dataset.key = "";
  for (const other of $("brokers").querySelectorAll("button")) {
    other.setAttribute("aria-pressed", String(Number(other.dataset.broker) === broker));
  }
  if (event.detail > 0) b.blur();
});
for (const button of document.querySelectorAll("[data-fault]")) {
  button.addEventListener("click", clicked(() =>
    command("fault", {kind: button.dataset.fault, broker})));
}
$("scenario").addEventListener("change", (event) => {
  command("scenario", {name: event.target.value});
  event.target.blur();
});

document.addEventListener("keydown", (event) => {
  if (event.ctrlKey || event.metaKey || event.altKey) return;
  const target = event.target;
  if (target.tagName === "SELECT") return;
  // Space or Enter on a focused button presses that button, as usual.
  if (target.tagName === "BUTTON" && (event.key === " " || event.key === "Enter")) return;
  const key = event.key.length === 1 ? event.key.toLowerCase() : event.key;
  const actions = {
    "ArrowRight": () => command("next"), " ": () => command("next"),
    "PageDown": () => command("next"), "ArrowLeft": () => command("back"),
    "PageUp": () => command("back"), "r": () => command("reset"),
    "p": () => command("play", {}),
  };
  if (actions[key]) {
    event.preventDefault();
    actions[key]();
  }
});

loadScenarios().catch(() => {});
poll();
