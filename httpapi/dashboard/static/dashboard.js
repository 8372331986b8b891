// Ledger partner dashboard: small progressive enhancements. Every page
// works without this script; it localises times, copies secrets to the
// clipboard and keeps payment statuses live over Server-Sent Events.
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

  function timeElement(iso) {
    var el = document.createElement("time");
    var d = new Date(iso);
    el.setAttribute("datetime", iso);
    el.title = d.toISOString().replace("T", " ").replace(/\.\d+Z$/, " UTC");
    el.textContent = timeFormat.format(d);
    return el;
  }

  function badge(status) {
    var el = document.createElement("span");
    el.className = "badge status-" + status;
    el.textContent = status;
    return el;
  }

  // Copy buttons name the element whose text they copy.
  function setUpCopy() {
    document.querySelectorAll("[data-copy]").forEach(function (button) {
      button.addEventListener("click", function () {
        var text = document.getElementById(button.getAttribute("data-copy")).textContent;
        navigator.clipboard.writeText(text).then(function () {
          button.textContent = "Copied";
          setTimeout(function () { button.textContent = "Copy"; }, 2000);
        }, function () { button.textContent = "Select and copy"; });
      });
    });
  }

  // applyUpdate shows a payment's new state wherever the page shows it.
  function applyUpdate(p) {
    var changed = false;
    document.querySelectorAll('[data-payment-status="' + p.id + '"]').forEach(function (el) {
      if (el.textContent === p.status) { return; }
      changed = true;
      el.textContent = p.status;
      el.className = el.className.replace(/\bstatus-\S+/g, "").replace(/\bchanged\b/g, "").trim() + " status-" + p.status + " changed";
    });
    var timeline = document.querySelector('#timeline[data-payment-id="' + p.id + '"]');
    if (timeline && p.timeline.length !== timeline.children.length) {
      timeline.replaceChildren.apply(timeline, p.timeline.map(function (entry) {
        var li = document.createElement("li");
        li.append(badge(entry.status), " ");
        var at = document.createElement("span");
        at.className = "muted";
        at.append(timeElement(entry.at));
        li.append(at);
        if (entry.message) { li.append(" ", entry.message); }
        return li;
      }));
    }
    var updated = document.getElementById("payment-updated");
    if (updated && changed) { updated.replaceChildren(timeElement(p.updatedAt)); }
    var announcer = document.getElementById("live-announcer");
    if (announcer && changed) { announcer.textContent = "Payment " + p.id.slice(0, 8) + " is now " + p.status + "."; }
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
    setUpCopy();
    setUpLive();
  });
})();
