// Sift's pages work without this script; with it, answers stream in as the
// model writes them, and links to a message on another page of a long
// channel find their page.
"use strict";

(function askBox() {
  const form = document.getElementById("ask-form");
  if (!form) return;
  const out = document.getElementById("ask-out");
  let running = null; // the answer being streamed, to stop on a new question
  form.addEventListener("submit", async (e) => {
    const question = form.elements.ask.value.trim();
    if (!question) return;
    e.preventDefault();
    if (running) running.abort();
    const ctl = new AbortController();
    running = ctl;
    out.replaceChildren();
    out.setAttribute("aria-busy", "true"); // read the answer once it is whole
    const answer = el("div", "answer");
    answer.id = "answer";
    const list = el("ol", "sources-list");
    list.id = "answer-sources";
    out.append(answer, list);
    let sources = [], text = "";
    const show = () => renderAnswer(answer, text, sources);
    try {
      const res = await fetch("/api/ask?links=pages", {
        method: "POST",
        headers: { "Content-Type": "application/json", "Accept": "text/event-stream" },
        body: JSON.stringify({ question }),
        signal: ctl.signal,
      });
      if (!res.ok) {
        const body = await res.json().catch(() => ({}));
        throw new Error(body.error || "the server answered " + res.status);
      }
      await readEvents(res.body, (ev) => {
        if (ev.type === "sources") {
          sources = ev.sources || [];
          list.replaceChildren(...sources.map(sourceItem));
          if (ev.stale) {
            const note = el("p", "meta stale");
            note.textContent = "The index was still taking in the latest changes: the newest content may be missing from this answer. Ask again in a moment.";
            out.append(note);
          }
        } else if (ev.type === "token") {
          text += ev.token;
          show();
        } else if (ev.type === "error") {
          throw new Error(ev.error);
        } else if (ev.type === "done") {
          answer.dataset.done = "true";
        }
      });
    } catch (err) {
      if (ctl.signal.aborted) return; // a newer question took over
      const p = el("p", "error");
      p.setAttribute("role", "alert");
      p.textContent = "No answer: " + err.message;
      out.append(p);
    } finally {
      if (running === ctl) {
        out.removeAttribute("aria-busy");
        running = null;
      }
    }
  });

  // readEvents reads a server-sent event stream: "data: {json}" lines,
  // events separated by a blank line, ":" lines are comments.
  async function readEvents(body, onEvent) {
    const reader = body.getReader();
    const decoder = new TextDecoder();
    let buf = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buf += decoder.decode(value, { stream: true }).replace(/\r\n/g, "\n");
      let i;
      while ((i = buf.indexOf("\n\n")) >= 0) {
        const block = buf.slice(0, i);
        buf = buf.slice(i + 2);
        const data = block.split("\n").filter((l) => l.startsWith("data:")).map((l) => l.slice(5).trimStart()).join("\n");
        if (data) onEvent(JSON.parse(data));
      }
    }
  }

  // renderAnswer shows the text with each [n] as a link to source n.
  function renderAnswer(node, text, sources) {
    const parts = [];
    let last = 0;
    for (const m of text.matchAll(/\[(\d+)\]/g)) {
      const src = sources[Number(m[1]) - 1];
      if (!src) continue;
      parts.push(document.createTextNode(text.slice(last, m.index)));
      const a = el("a");
      a.href = src.sourceUrl;
      a.textContent = m[0];
      a.setAttribute("aria-label", "source " + m[1] + ": " + (src.metadata || ""));
      parts.push(a);
      last = m.index + m[0].length;
    }
    parts.push(document.createTextNode(text.slice(last)));
    node.replaceChildren(...parts);
  }

  function sourceItem(src) {
    const li = el("li");
    const a = el("a");
    a.href = src.sourceUrl;
    a.textContent = src.metadata || src.preview.slice(0, 80);
    const preview = el("span", "meta");
    preview.textContent = " — " + src.preview.slice(0, 140);
    li.append(a, preview);
    return li;
  }

  function el(tag, cls) {
    const n = document.createElement(tag);
    if (cls) n.className = cls;
    return n;
  }
})();

(function messageLinks() {
  // /c/slug#m-123 names a message that may be on another page of the
  // channel: the server finds it from ?m=.
  const h = location.hash;
  if (!h.startsWith("#m-") || document.getElementById(h.slice(1)) || !document.querySelector("[data-channel]")) return;
  const params = new URLSearchParams(location.search);
  if (params.get("m")) return;
  params.set("m", decodeURIComponent(h.slice(3)));
  params.delete("page");
  location.replace(location.pathname + "?" + params.toString() + h);
})();
