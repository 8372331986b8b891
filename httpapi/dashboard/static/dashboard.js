// Ledger partner dashboard: small progressive enhancements. Every page
// works without this script; it localises times, copies secrets to the
// clipboard and keeps payments live over Server-Sent Events.
"use strict";

(function () {
  var timeFormat = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "medium" });

  // localiseTimes shows <time> elements in the viewer's time zone; the
  // title keeps UTC for hover.
  function localiseTimes(root) {
    root.querySelectorAll("time[datetime]").forEach(function (el) {
      var d = new Date(el.getAttribute("datetime"));
      if (!isNaN(d)) { el.textContent = timeFormat.format(d); }
    });
  }

  // Copy buttons name the element whose text they copy.
  function setUpCopy(root) {
    root.querySelectorAll("[data-copy]").forEach(function (button) {
      button.addEventListener("click", function () {
        var text = document.getElementById(button.getAttribute("data-copy")).textContent;
        navigator.clipboard.writeText(text).then(function () {
          button.textContent = "Copied";
          setTimeout(function () { button.textContent = "Copy"; }, 2000);
        }, function () { button.textContent = "Select and copy"; });
      });
    });
  }

  // refreshSections re-reads the page and swaps in its [data-refresh]
  // sections (amounts, timeline, webhooks, events...), keeping open
  // <details> open. One fetch at a time; a change meanwhile fetches again.
  var refreshing = false, refreshAgain = false;
  function refreshSections() {
    if (refreshing) { refreshAgain = true; return; }
    refreshing = true;
    fetch(location.href, { headers: { "Accept": "text/html" } }).then(function (r) {
      return r.ok ? r.text() : Promise.reject(new Error("HTTP " + r.status));
    }).then(function (html) {
      var fresh = new DOMParser().parseFromString(html, "text/html");
      document.querySelectorAll("[data-refresh]").forEach(function (el) {
        var next = fresh.getElementById(el.id);
        if (!next) { return; }
        var open = Array.prototype.map.call(el.querySelectorAll("details[open][id]"), function (d) { return d.id; });
        open.forEach(function (id) { var d = next.querySelector("#" + CSS.escape(id)); if (d) { d.open = true; } });
        localiseTimes(next);
        setUpCopy(next);
        el.replaceWith(next);
      });
      document.body.dataset.refreshed = String(Number(document.body.dataset.refreshed || 0) + 1);
    }).catch(function () { /* the next update tries again */ }).finally(function () {
      refreshing = false;
      if (refreshAgain) { refreshAgain = false; refreshSections(); }
    });
  }

  // applyUpdate shows a payment's new status wherever the page shows it,
  // and on a payment's own page refreshes the rest of it. A new payment
  // (one not shown, still "created") refreshes a list that takes new ones;
  // other payments not shown are older ones, on later pages.
  function applyUpdate(p) {
    var changed = false;
    var shown = document.querySelectorAll('[data-payment-status="' + p.id + '"]');
    if (shown.length === 0 && p.status === "created" && document.querySelector("[data-refresh][data-refresh-new]")) {
      refreshSections();
    }
    shown.forEach(function (el) {
      if (el.textContent === p.status) { return; }
      changed = true;
      el.textContent = p.status;
      el.className = el.className.replace(/\bstatus-\S+/g, "").replace(/\bchanged\b/g, "").trim() + " status-" + p.status + " changed";
    });
    var announcer = document.getElementById("live-announcer");
    if (announcer && changed) { announcer.textContent = "Payment " + p.id.slice(-8) + " is now " + p.status + "."; }
    if (document.querySelector('[data-refresh][data-payment-id="' + p.id + '"]')) { refreshSections(); }
  }

  function setUpLive() {
    var host = document.querySelector("[data-live]");
    if (!host || !window.EventSource) { return; }
    var indicator = host.querySelector(".live");
    var source = new EventSource(host.getAttribute("data-live"));
    source.addEventListener("open", function () { if (indicator) { indicator.classList.add("on"); } document.body.dataset.live = "open"; });
    source.addEventListener("error", function () { if (indicator) { indicator.classList.remove("on"); } });
    source.addEventListener("payment", function (e) { applyUpdate(JSON.parse(e.data)); });
  }

  document.addEventListener("DOMContentLoaded", function () {
    localiseTimes(document);
    setUpCopy(document);
    setUpLive();
  });
})();
