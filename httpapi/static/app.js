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
    a.textContent = src.metadata || cut(src.preview, 80);
    const preview = el("span", "meta");
    preview.textContent = " — " + cut(src.preview, 140);
    li.append(a, preview);
    return li;
  }

  // cut shortens text to about n characters at a word, marking the cut
  // with an ellipsis, as the server cuts its previews.
  function cut(text, n) {
    const chars = Array.from(text || "");
    if (chars.length <= n) return chars.join("");
    let s = chars.slice(0, n - 1).join("");
    const space = s.lastIndexOf(" ");
    if (space > s.length / 2) s = s.slice(0, space);
    return s.replace(/[\s,;:.]+$/, "") + "…";
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

(function searchSuggest() {
  // Suggestions under the search box (GET /api/suggest), as an ARIA
  // combobox with a listbox: arrows move, Enter picks, Escape closes. A
  // word completes the query and searches; a channel or document opens its
  // page. When typing pauses, the results below are fetched and replaced
  // in place (the page's own HTML), so the box keeps focus. Without this
  // script the form submits as usual.
  const input = document.getElementById("q");
  const form = input && input.form;
  const results = document.getElementById("search-results");
  if (!form || !results) return;
  const list = document.createElement("ul");
  list.id = "q-suggestions";
  list.className = "suggest";
  list.setAttribute("role", "listbox");
  list.setAttribute("aria-label", "Suggestions");
  list.hidden = true;
  const status = document.createElement("p");
  status.className = "visually-hidden";
  status.setAttribute("role", "status");
  input.after(list, status);
  input.setAttribute("role", "combobox");
  input.setAttribute("aria-autocomplete", "list");
  input.setAttribute("aria-controls", list.id);
  input.setAttribute("aria-expanded", "false");
  input.autocomplete = "off";

  let items = [], itemsFor = null, active = -1, asked = null, typing = 0, pause = 0, searched = input.value.trim();

  input.addEventListener("input", () => {
    clearTimeout(typing);
    clearTimeout(pause);
    typing = setTimeout(suggest, 120);
    pause = setTimeout(searchInPlace, 300);
  });
  input.addEventListener("keydown", (e) => {
    if (e.key === "ArrowDown" || e.key === "ArrowUp") {
      if (list.hidden) {
        if (items.length) open();
        else suggest();
        e.preventDefault();
        return;
      }
      const n = items.length;
      move(e.key === "ArrowDown" ? (active + 1) % n : (active <= 0 ? n - 1 : active - 1));
      e.preventDefault();
    } else if (e.key === "Enter" && !list.hidden && active >= 0) {
      e.preventDefault();
      pick(items[active]);
    } else if (e.key === "Escape" && !list.hidden) {
      e.preventDefault(); // close the list, keep the text
      close();
    }
  });
  input.addEventListener("blur", () => setTimeout(close, 100));
  form.addEventListener("submit", () => { clearTimeout(pause); close(); });
  list.addEventListener("mousedown", (e) => e.preventDefault()); // keep the focus in the box
  list.addEventListener("click", (e) => {
    const li = e.target.closest("[role=option]");
    if (li) pick(items[Number(li.dataset.i)]);
  });

  async function suggest() {
    const q = input.value;
    if (asked) asked.abort();
    if (!q.trim()) { show([], q); return; }
    const ctl = new AbortController();
    asked = ctl;
    try {
      // Without credentials: the page shows what anyone may see.
      const res = await fetch("/api/suggest?q=" + encodeURIComponent(q), { credentials: "omit", signal: ctl.signal });
      if (!res.ok) throw new Error(String(res.status));
      const body = await res.json();
      if (input.value === q) show(body.suggestions || [], q);
    } catch (err) {
      if (!ctl.signal.aborted) show([], q);
    }
  }

  function show(suggestions, q) {
    items = suggestions;
    itemsFor = q;
    active = -1;
    input.removeAttribute("aria-activedescendant");
    list.replaceChildren(...items.map((s, i) => option(s, i, q)));
    if (items.length && document.activeElement === input) open();
    else close();
    status.textContent = items.length ? items.length + (items.length === 1 ? " suggestion" : " suggestions") + ", use the arrow keys" : "";
  }

  function option(s, i, q) {
    const li = document.createElement("li");
    li.id = "q-opt-" + i;
    li.dataset.i = i;
    li.setAttribute("role", "option");
    li.setAttribute("aria-selected", "false");
    const text = document.createElement("span");
    text.className = "s-text";
    if (s.kind === "word" && s.text.toLowerCase().startsWith(q.toLowerCase())) {
      const rest = document.createElement("b");
      rest.textContent = s.text.slice(q.length);
      text.append(q, rest);
    } else {
      text.textContent = s.text;
    }
    li.append(text);
    if (s.kind !== "word") {
      const kind = document.createElement("span");
      kind.className = "s-kind";
      kind.textContent = (s.kind === "channel" ? "Channel" : "Document") + (s.source ? " · " + s.source : "");
      li.append(" ", kind);
    }
    return li;
  }

  function move(i) {
    if (active >= 0) list.children[active].setAttribute("aria-selected", "false");
    active = i;
    const li = list.children[i];
    li.setAttribute("aria-selected", "true");
    input.setAttribute("aria-activedescendant", li.id);
    li.scrollIntoView({ block: "nearest" });
  }

  function open() {
    list.hidden = false;
    input.setAttribute("aria-expanded", "true");
  }

  function close() {
    list.hidden = true;
    input.setAttribute("aria-expanded", "false");
    input.removeAttribute("aria-activedescendant");
    if (active >= 0 && list.children[active]) list.children[active].setAttribute("aria-selected", "false");
    active = -1;
  }

  function pick(s) {
    close();
    if (s.kind === "word") {
      input.value = s.text;
      clearTimeout(pause);
      form.requestSubmit();
    } else {
      location.assign(new URL(s.url, location.href).pathname);
    }
  }

  // midWord reports whether the last word is being typed: the index has
  // words that complete it, and it is not one of them ("webh"). Results
  // for a fragment would say "nothing matches"; they wait for a word.
  function midWord() {
    if (itemsFor !== input.value) return false;
    const typed = input.value.trim().toLowerCase();
    const words = items.filter((s) => s.kind === "word").map((s) => s.text.toLowerCase());
    return words.length > 0 && !words.includes(typed);
  }

  // searchInPlace fetches the results page of the form as it stands and
  // puts its results in place of these, keeping the box and its focus.
  async function searchInPlace() {
    const q = input.value.trim();
    if (!q || q === searched || midWord()) return;
    searched = q;
    const url = form.action.split("?")[0] + "?" + new URLSearchParams(new FormData(form));
    try {
      const res = await fetch(url);
      if (!res.ok && res.status !== 400) return;
      const page = new DOMParser().parseFromString(await res.text(), "text/html");
      const fresh = page.getElementById("search-results");
      if (!fresh || input.value.trim() !== q) return;
      results.replaceChildren(...Array.from(fresh.childNodes)); // a copy: moving them empties the live list
      document.title = page.title;
      history.replaceState(null, "", url);
    } catch (err) {
      // The next pause tries again; submitting the form still works.
    }
  }
})();
