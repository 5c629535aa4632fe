/**
 * The one script of the pages, served at `/ui.js` and run only because its tag carries the page's
 * nonce. It follows `/api/events` and, when something the page shows changed (any run on the runs
 * page, the run or one of its family on a run's page, a new run on the schedules page), fetches the
 * page again and swaps its `<main>`; it sends the action forms as JSON with the process's token.
 * It builds no markup itself: it sets text, and swaps in the `<main>` the server rendered, escaped.
 * Without it the pages still work, only not live.
 */
export const CLIENT_SCRIPT = `"use strict";
(() => {
  const body = document.body;
  const page = body.dataset.page;
  const runId = body.dataset.run;
  const token = document.querySelector('meta[name="fusee-token"]')?.getAttribute("content") ?? "";
  const live = document.getElementById("live");
  let timer;
  let refreshes = 0;

  const refresh = async () => {
    const response = await fetch(location.href, { headers: { accept: "text/html" } });
    if (!response.ok) return;
    // The head goes unparsed: its style element carries the fresh page's nonce, which this page's policy would refuse.
    const text = (await response.text()).replace(/<head>[\\s\\S]*?<\\/head>/, "");
    const fresh = new DOMParser().parseFromString(text, "text/html").querySelector("main");
    const main = document.querySelector("main");
    if (fresh === null || main === null) return;
    main.replaceWith(fresh);
    bind();
    body.dataset.refreshes = String(++refreshes);
  };
  const soon = () => {
    clearTimeout(timer);
    timer = setTimeout(() => void refresh(), 100);
  };

  const events = new EventSource("/api/events");
  events.onopen = () => { if (live) { live.textContent = "live"; live.className = "live on"; } };
  events.onerror = () => { if (live) { live.textContent = "reconnecting"; live.className = "live off"; } };
  // The IDs a run's page shows (the run, its parent and children), refreshed with <main>.
  const watched = () => {
    const list = document.querySelector("main [data-watch]")?.getAttribute("data-watch");
    try {
      return new Set(list ? JSON.parse(list) : [runId]);
    } catch {
      return new Set([runId]);
    }
  };
  events.addEventListener("run", (e) => {
    const event = JSON.parse(e.data);
    if (page === "runs") soon();
    else if (page === "run" && watched().has(event.id)) soon();
    else if (page === "schedules" && event.kind === "run-started") soon();
  });

  function bind() {
    // The action forms sit outside <main> and outlive its refreshes: each is bound once.
    for (const form of document.querySelectorAll("form[data-action]:not([data-bound])")) {
      form.dataset.bound = "1";
      form.addEventListener("submit", async (e) => {
        e.preventDefault();
        const out = form.querySelector("output");
        const fields = Object.fromEntries(new FormData(form));
        const unfinished = document.querySelector("main [data-unfinished]")?.getAttribute("data-unfinished") ?? "?";
        if (form.dataset.confirm && !confirm(form.dataset.confirm.replace("{unfinished}", unfinished))) return;
        const response = await fetch(form.action, {
          method: "POST",
          headers: { "content-type": "application/json", "x-fusee-token": token },
          body: JSON.stringify(fields),
        });
        const answer = await response.json().catch(() => ({ ok: false, error: { message: response.statusText } }));
        if (out) {
          out.textContent = answer.ok ? answer.summary ?? "done" : answer.error.message;
          out.className = answer.ok && !(answer.failed && answer.failed.length > 0) ? "done" : "error";
        }
        soon();
      });
    }
  }
  bind();
})();
`;
