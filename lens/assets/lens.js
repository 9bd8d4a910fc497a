// The lens's live updates: the server pushes an "change" event (Server-Sent
// Events) for each change of the store; the page fetches itself again and
// swaps its main part, keeping what the reviewer is typing. No framework,
// no build step; everything else works without this script.
"use strict";
(function () {
  const live = document.getElementById("live");
  let pending = null;
  let busy = false;

  function typing() {
    const a = document.activeElement;
    return a && a.tagName === "INPUT" && a.value !== "" && a.type !== "hidden";
  }

  async function refresh() {
    if (busy) { pending = pending || setTimeout(tick, 200); return; }
    if (typing()) { pending = pending || setTimeout(tick, 1000); return; }
    busy = true;
    try {
      const res = await fetch(location.href, { credentials: "same-origin", headers: { "Accept": "text/html" } });
      if (!res.ok) return;
      const doc = new DOMParser().parseFromString(await res.text(), "text/html");
      const next = doc.getElementById("main");
      const cur = document.getElementById("main");
      if (next && cur) {
        cur.replaceWith(next);
        document.body.dataset.updates = String(Number(document.body.dataset.updates || 0) + 1);
      }
    } finally {
      busy = false;
    }
  }

  function tick() { pending = null; refresh(); }

  if (!window.EventSource) return;
  const es = new EventSource("/events");
  es.onopen = function () { live.textContent = "● live"; live.classList.add("on"); document.body.dataset.live = "on"; };
  es.onerror = function () { live.textContent = "○ reconnecting"; live.classList.remove("on"); };
  es.addEventListener("change", function () {
    if (!pending) pending = setTimeout(tick, 50);
  });
})();
