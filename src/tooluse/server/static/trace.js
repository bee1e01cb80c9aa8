// The trace page: the list of requests and one request side by side (prompt, raw output
// with its call spans marked, calls with origin and validation, response). Every text from
// a trace goes in through textContent, never as HTML: a model's output is not markup.
"use strict";

const API = "/trace/api/traces";
const state = { search: "", oldest: null };

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (key === "class") node.className = value;
    else node.setAttribute(key, value);
  }
  for (const child of children) {
    if (child === null || child === undefined) continue;
    node.append(child instanceof Node ? child : String(child));
  }
  return node;
}

function pre(text, cls) {
  return el("pre", cls ? { class: cls } : {}, text === null || text === undefined ? "" : text);
}

function json(value) {
  return JSON.stringify(value, null, 2);
}

function when(seconds) {
  const d = new Date(seconds * 1000);
  return d.toLocaleDateString() + " " + d.toLocaleTimeString();
}

function ms(value) {
  return value === null || value === undefined ? "" : value.toFixed(1) + " ms";
}

async function getJson(url) {
  const response = await fetch(url, { headers: { accept: "application/json" } });
  if (!response.ok) throw new Error(url + ": HTTP " + response.status);
  return response.json();
}

function say(text) {
  document.getElementById("status").textContent = text;
}

async function loadList(append) {
  const params = new URLSearchParams({ limit: "100" });
  if (state.search) params.set("q", state.search);
  if (append && state.oldest !== null) params.set("before", String(state.oldest));
  say("loading…");
  let data;
  try {
    data = await getJson(API + "?" + params);
  } catch (error) {
    say(String(error));
    return;
  }
  const body = document.querySelector("#trace-list tbody");
  if (!append) body.replaceChildren();
  for (const item of data.traces) {
    const status = item.http_status ? item.status + " (" + item.http_status + ")" : item.status;
    const row = el("tr", { class: "trace-row", "data-id": item.id },
      el("td", {}, when(item.time)), el("td", {}, item.api), el("td", {}, item.model || ""),
      el("td", {}, item.tools.join(", ")), el("td", {}, item.calls),
      el("td", { class: item.status }, status), el("td", {}, ms(item.latency_ms)));
    row.addEventListener("click", () => { location.hash = item.id; });
    body.append(row);
    state.oldest = item.seq;
  }
  document.getElementById("more").hidden = data.traces.length < 100;
  say(body.children.length + " request(s)" + (state.search ? " matching “" + state.search + "”" : ""));
}

function promptView(turn) {
  const box = el("div", { class: "prompt" });
  if (turn.prompt) {
    for (const message of turn.prompt) {
      box.append(el("div", { class: "message-role" }, message.role), pre(message.content));
    }
  } else {
    box.append(el("div", { class: "legend" }, "the request's messages (no text prompt: the backend takes them as they are)"),
      pre(json({ system: turn.request.system, messages: turn.request.messages })));
  }
  if (turn.rendered_prompt) {
    box.append(el("details", {}, el("summary", {}, "as the chat template rendered it"),
      pre(turn.rendered_prompt, "rendered")));
  }
  return box;
}

function rawView(turn) {
  if (turn.raw === null) return el("div", { class: "legend" }, "no raw text (not a text model)");
  const raw = turn.raw;
  // raw[a:b] as text, the prefills in it shaded.
  const plain = (a, b) => {
    const nodes = [];
    let at = a;
    for (const [start, end] of turn.prefill_spans) {
      const [s, e] = [Math.max(start, a), Math.min(end, b)];
      if (s >= e) continue;
      if (s > at) nodes.push(document.createTextNode(raw.slice(at, s)));
      nodes.push(el("span", { class: "prefill", title: "prefill: written by tooluse, not the model" },
        raw.slice(s, e)));
      at = e;
    }
    if (at < b) nodes.push(document.createTextNode(raw.slice(at, b)));
    return nodes;
  };
  const out = pre("", "raw");
  let at = 0;
  for (const span of [...turn.spans].sort((x, y) => x.start - y.start)) {
    const end = Math.min(span.end, raw.length);
    if (span.start < at || span.start >= end) continue;
    out.append(...plain(at, span.start));
    out.append(el("mark", {
      class: "call-span" + (span.call ? "" : " dropped"),
      title: span.call ? "became call " + span.call : "no call of the response came from this block",
      "data-call": span.call || "",
    }, ...plain(span.start, end)));
    at = end;
  }
  out.append(...plain(at, raw.length));
  const legend = el("div", { class: "legend" }, "marked: the model's call blocks; shaded blue: prefill");
  const passes = turn.passes.map(p => p.purpose + ": " + p.reason + ", " + p.output_tokens
    + " tokens out, " + p.cached_tokens + " cached" + (p.counts.forced_tokens !== undefined
      ? ", " + p.counts.forced_tokens + " forced" : "")).join("; ");
  return el("div", {}, out, legend, el("div", { class: "legend passes" }, passes));
}

function callsView(turn) {
  const box = el("div", { class: "calls" });
  if (!turn.calls.length) box.append(el("div", { class: "legend" }, "no call"));
  for (const call of turn.calls) {
    const problems = call.problems.length
      ? el("ul", { class: "problems" }, ...call.problems.map(p => el("li", {}, p))) : null;
    box.append(el("div", { class: "call", "data-id": call.id },
      el("div", {}, el("strong", { class: "call-name" }, call.name), " ",
        el("span", { class: "badge " + call.source }, call.source), " ",
        el("span", { class: "badge " + (call.valid ? "model" : "invalid") },
          call.valid ? "valid" : "invalid")),
      el("div", { class: "legend" }, call.id + " · " + call.origin_text),
      pre(json(call.input), "call-input"), problems));
  }
  return box;
}

function responseView(trace, turn) {
  const box = el("div", { class: "response" });
  if (turn.error) box.append(el("div", { class: "error" }, turn.error));
  if (turn.response) box.append(pre(json(turn.response)));
  return box;
}

function column(title, content) {
  return el("div", { class: "column" }, el("h3", {}, title), content);
}

function showTrace(trace) {
  const detail = document.getElementById("detail");
  const s = trace.summary;
  const phases = Object.entries(trace.phases).map(([k, v]) => k + " " + v.toFixed(1) + " ms").join(", ");
  detail.replaceChildren(
    el("h2", {}, trace.api + " · " + (s.model || "?") + " · ",
      el("span", { class: s.status }, s.status + (trace.status ? " " + trace.status : ""))),
    el("div", { class: "meta" }, when(trace.time) + " · " + ms(trace.duration_ms)
      + (phases ? " (" + phases + ")" : "") + " · " + s.input_tokens + " tokens in, "
      + s.output_tokens + " out · " + (trace.backend || trace.source) + " · " + trace.id));
  if (trace.error) detail.append(el("div", { class: "error" }, trace.error));
  trace.turns.forEach((turn, i) => {
    detail.append(el("div", { class: "turn" },
      trace.turns.length > 1 ? el("h3", {}, "Model call " + (i + 1) + " · " + ms(turn.duration_ms)) : null,
      el("div", { class: "columns" },
        column("Prompt", promptView(turn)), column("Raw output", rawView(turn)),
        column("Calls", callsView(turn)), column("Response", responseView(trace, turn)))));
  });
  if (trace.request.body !== null || trace.response !== null) {
    detail.append(
      el("details", {}, el("summary", {}, "request as received (" + (trace.request.method || "")
        + " " + (trace.request.path || "") + ")"),
        pre(json({ headers: trace.request.headers, body: trace.request.body }), "received")),
      el("details", {}, el("summary", {}, "response as sent"),
        pre(typeof trace.response === "string" ? trace.response : json(trace.response), "sent")));
  }
  detail.hidden = false;
  for (const row of document.querySelectorAll(".trace-row")) {
    row.classList.toggle("selected", row.dataset.id === trace.id);
  }
}

async function openFromHash() {
  const id = decodeURIComponent(location.hash.slice(1));
  if (!id) return;
  try {
    showTrace(await getJson(API + "/" + encodeURIComponent(id)));
  } catch (error) {
    say(String(error));
  }
}

document.getElementById("search-form").addEventListener("submit", event => {
  event.preventDefault();
  state.search = document.getElementById("search").value.trim();
  loadList(false);
});
document.getElementById("refresh").addEventListener("click", () => loadList(false));
document.getElementById("more").addEventListener("click", () => loadList(true));
window.addEventListener("hashchange", openFromHash);
loadList(false).then(openFromHash);
