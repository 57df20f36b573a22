// The settings page without a build step: the tag search, the live preview, the weekday
// shown with the weekly mode, and a Telegram Mini App's sign-in. The page works without it.
(function () {
  "use strict";

  var app = document.getElementById("mini-app");
  if (app) {
    var webApp = window.Telegram && window.Telegram.WebApp;
    var refuse = function () {
      document.getElementById("reason").textContent = app.dataset.refused;
    };
    if (!webApp || !webApp.initData) {
      refuse();
      return;
    }
    // A form, not a fetch: the answer is the page itself, which carries its session where
    // a cross-site frame (Telegram Web) keeps no cookie.
    var door = document.createElement("form");
    door.method = "post";
    door.action = "app";
    var field = document.createElement("input");
    field.type = "hidden";
    field.name = "init_data";
    field.value = webApp.initData;
    door.appendChild(field);
    document.body.appendChild(door);
    door.submit();
    return;
  }

  var form = document.getElementById("settings");
  if (!form) {
    return;
  }
  var rows = Array.prototype.slice.call(document.querySelectorAll("#tags tr"));
  var choices = Array.prototype.slice.call(form.querySelectorAll("select[name^='tag:']"));
  var every = document.getElementById("every");
  var search = document.getElementById("tag-search");
  var previewText = document.getElementById("preview-text");
  var previewTitles = document.getElementById("preview-titles");
  var mode = document.getElementById("mode");
  var dayRow = document.getElementById("day-row");
  var carried = form.querySelector("input[name='session']");

  search.hidden = false;
  search.addEventListener("input", function () {
    var wanted = search.value.trim().toLowerCase();
    rows.forEach(function (row) {
      row.hidden = wanted !== "" && row.dataset.tag.indexOf(wanted) < 0;
    });
  });

  var signs = { any: "", required: "+", excluded: "-" };
  var filterText = function () {
    var words = every.checked ? ["*"] : [];
    choices.forEach(function (choice) {
      if (choice.value in signs) {
        words.push(signs[choice.value] + choice.name.slice("tag:".length));
      }
    });
    return words.join(" ");
  };

  var pending = null;
  var asked = 0;
  var preview = function () {
    var number = ++asked;
    var headers = carried ? { "X-Settings-Session": carried.value } : {};
    fetch("preview?filter=" + encodeURIComponent(filterText()), {
      credentials: "same-origin",
      headers: headers
    })
      .then(function (answer) { return answer.json(); })
      .then(function (found) {
        if (number !== asked || typeof found.text !== "string") {
          return;
        }
        previewText.textContent = found.text;
        previewTitles.textContent = "";
        found.titles.forEach(function (title) {
          var item = document.createElement("li");
          item.textContent = title;
          previewTitles.appendChild(item);
        });
      }, function () {});
  };
  form.addEventListener("change", function (event) {
    var name = event.target.name || "";
    if (name === "every" || name.indexOf("tag:") === 0) {
      window.clearTimeout(pending);
      pending = window.setTimeout(preview, 150);
    }
  });

  var showDay = function () {
    dayRow.hidden = mode.value !== "weekly";
  };
  mode.addEventListener("change", showDay);
  showDay();
})();
