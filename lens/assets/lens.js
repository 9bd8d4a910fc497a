// The lens's live updates: the server pushes an "change" event (Server-Sent
// Events) for each change of the store; the page fetches itself again and
// swaps its main part, keeping what the reviewer is typing. No framework,
// no build step; everything else works without this script. It also
// makes the copy buttons of ids work.
"use strict";
(function () {
  // Copy buttons (hidden without this script): a click copies the full id
  // the button carries in data-copy, and says so to screen readers.
  document.documentElement.classList.add("js");

  function copyFallback(text) {
    const ta = document.createElement("textarea");
    ta.value = text;
    ta.setAttribute("readonly", "");
    ta.className = "sr-only";
    document.body.appendChild(ta);
    ta.select();
    let ok = false;
    try { ok = document.execCommand("copy"); } catch (e) { ok = false; }
    ta.remove();
    return ok;
  }

  async function copy(text) {
    if (navigator.clipboard && window.isSecureContext) {
      try { await navigator.clipboard.writeText(text); return true; } catch (e) { /* fall back */ }
    }
    return copyFallback(text);
  }

  document.addEventListener("click", async function (ev) {
    const b = ev.target.closest && ev.target.closest("button.copy");
    if (!b) return;
    ev.preventDefault();
    const text = b.dataset.copy || "";
    const ok = await copy(text);
    b.classList.toggle("copied", ok);
    b.textContent = ok ? "copied" : "copy failed";
    b.dataset.copied = ok ? "yes" : "no";
    const say = document.getElementById("announce");
    if (say) say.textContent = ok ? "Copied " + text : "Could not copy " + text;
    setTimeout(function () { b.textContent = "copy"; b.classList.remove("copied"); }, 1500);
  });

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
