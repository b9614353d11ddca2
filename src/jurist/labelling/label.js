// The labelling page: one row at a time, a button (and keys) per label, skip and undo.
// Every piece of data is put on the page with textContent: a row's text is shown, never interpreted.
"use strict";

const $ = (id) => document.getElementById(id);
const NAME_KEY = "jurist-labeller";
const SESSION_KEY = "jurist-session";
const HISTORY_KEY = "jurist-history";

const state = { setup: null, labeller: "", session: "", offer: null, busy: false, toastTimer: 0 };

function newSession() {
  const bytes = new Uint8Array(16);
  crypto.getRandomValues(bytes);  // crypto.randomUUID needs a secure context; --host may serve plain http
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

function history() {
  try { return JSON.parse(sessionStorage.getItem(HISTORY_KEY) || "[]"); } catch { return []; }
}

function setHistory(rows) { sessionStorage.setItem(HISTORY_KEY, JSON.stringify(rows.slice(-200))); }

async function call(path, body) {
  const init = body === undefined ? {} : {
    method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body),
  };
  const response = await fetch(path, init);
  const data = await response.json();
  if (!response.ok) throw new Error(data.error || response.statusText);
  return data;
}

function toast(text, error) {
  const box = $("toast");
  box.textContent = text;
  box.classList.toggle("error", Boolean(error));
  box.classList.add("shown");
  clearTimeout(state.toastTimer);
  state.toastTimer = setTimeout(() => box.classList.remove("shown"), error ? 5000 : 2500);
}

function element(tag, text, className) {
  const node = document.createElement(tag);
  if (text !== undefined) node.textContent = text;
  if (className) node.className = className;
  return node;
}

function field(item) {
  const box = element("div", undefined, "field");
  box.append(element("h3", item.name), element("pre", item.text));
  return box;
}

function number(x) { return x === null || x === undefined ? "?" : x.toFixed(3); }

function verdictText(verdict) {
  const sure = verdict.confidence === null ? "" : ` (confidence ${number(verdict.confidence)})`;
  return `the judge said ${verdict.text}${sure}`;
}

function showProgress(progress) {
  $("progress").textContent = `${progress.given} of ${progress.budget} labelled`;
  const e = progress.estimate;
  let text;
  if (e.needs !== undefined) text = `estimate: needs ${e.needs} more label${e.needs === 1 ? "" : "s"}`;
  else if (e.error !== undefined) text = `estimate: ${e.error}`;
  else text = `corrected estimate ${number(e.estimate)} [${number(e.low)}, ${number(e.high)}] ` +
    `(${Math.round(100 * e.confidence)} %, ${e.labelled} labels)`;
  $("estimate").textContent = text;
}

function show(offer) {
  state.offer = offer;
  showProgress(offer.progress);
  const done = Boolean(offer.done);
  $("done").hidden = !done;
  $("row").hidden = done;
  $("choices").querySelectorAll("button").forEach((b) => { b.disabled = done; });
  $("skip").disabled = done;
  if (done) { $("row").dataset.rowId = ""; return; }
  const row = offer.row;
  $("row").dataset.rowId = row.row_id;
  $("row").dataset.position = String(offer.position);
  $("position").textContent = `Row ${offer.position + 1} of ${offer.progress.budget} (row id ${row.row_id})`;
  $("reason").hidden = !offer.reason;
  $("reason").textContent = offer.reason ? `Shown because ${offer.reason}.` : "";
  $("fields").replaceChildren(...row.fields.map(field));
  $("pair").hidden = !row.pair;
  if (row.pair) {
    row.pair.forEach((item, i) => {
      const side = $(i === 0 ? "side-a" : "side-b");
      side.replaceChildren(element("h3", `${"AB"[i]}: ${item.name}`), element("pre", item.text));
    });
  }
  const parts = [];
  if (offer.current) parts.push(`labelled ${offer.current.label} by ${offer.current.labeller || "someone"}`);
  if (offer.verdict) parts.push(verdictText(offer.verdict));
  $("verdict").hidden = parts.length === 0;
  $("verdict").textContent = parts.join("; ");
}

async function act(work) {
  if (state.busy || !state.labeller) return;
  state.busy = true;
  document.body.dataset.busy = "1";
  try {
    show(await work());
  } catch (error) {
    toast(String(error.message || error), true);
    try { show(await next()); } catch { /* the toast says why */ }
  } finally {
    state.busy = false;
    delete document.body.dataset.busy;
  }
}

function next() { return call("/api/next", { session: state.session, labeller: state.labeller }); }

function give(choice) {
  const offer = state.offer;
  if (!offer || offer.done) return;
  act(async () => {
    const rowId = offer.row.row_id;
    const saved = await call("/api/label", {
      session: state.session, labeller: state.labeller, row_id: rowId, label: choice.value,
    });
    setHistory([...history(), rowId]);
    toast(`Saved ${choice.text}: ${verdictText(saved.verdict)}.`);
    return next();
  });
}

function skip() {
  const offer = state.offer;
  if (!offer || offer.done) return;
  act(() => call("/api/skip", { session: state.session, labeller: state.labeller, row_id: offer.row.row_id }));
}

function undo() {
  const rows = history();
  if (!rows.length) { toast("nothing to undo", true); return; }
  act(async () => {
    const rowId = rows[rows.length - 1];
    const offer = await call("/api/undo", { session: state.session, labeller: state.labeller, row_id: rowId });
    setHistory(rows.slice(0, -1));
    toast(`Label of row ${rowId} withdrawn.`);
    return offer;
  });
}

function buttons(choices) {
  $("choices").replaceChildren(...choices.map((choice) => {
    const button = element("button");
    button.type = "button";
    button.append(element("span", choice.text, "text"));
    choice.keys.forEach((key) => button.append(element("kbd", key)));
    button.addEventListener("click", () => give(choice));
    return button;
  }));
}

function onKey(event) {
  if (event.ctrlKey || event.metaKey || event.altKey || event.target.closest("input, textarea")) return;
  const key = event.key.toLowerCase();
  const choice = state.setup.choices.find((c) => c.keys.includes(key));
  if (choice) give(choice);
  else if (key === "s") skip();
  else if (key === "u") undo();
  else return;
  event.preventDefault();
}

function askName() {
  $("name-form").hidden = false;
  $("name-input").value = state.labeller;
  $("name-input").focus();
}

function start(name) {
  state.labeller = name;
  localStorage.setItem(NAME_KEY, name);
  $("labeller").textContent = name;
  $("name-form").hidden = true;
  $("buttons").hidden = false;
  act(next);
}

async function main() {
  state.session = sessionStorage.getItem(SESSION_KEY) || newSession();
  sessionStorage.setItem(SESSION_KEY, state.session);
  const setup = await call("/api/setup");
  state.setup = setup;
  document.title = `jurist label: ${setup.judge}`;
  $("judge").textContent = `judge ${setup.judge}` + (setup.review ? " (review)" : setup.blind ? " (blind)" : "");
  $("labels-file").textContent = setup.labels_file;
  buttons(setup.choices);
  $("skip").addEventListener("click", skip);
  $("undo").addEventListener("click", undo);
  $("rename").addEventListener("click", askName);
  $("name-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const name = $("name-input").value.trim();
    if (name) start(name);
  });
  document.addEventListener("keydown", onKey);
  const name = localStorage.getItem(NAME_KEY) || setup.labeller || "";
  if (name) start(name);
  else askName();
}

main().catch((error) => toast(`the page could not start: ${error.message || error}`, true));
