/* onelayer: make the visible sidebar buttons work (pydata-sphinx-theme 0.17.1 with sphinx-book-theme 1.3.0).

   Each page has two "Site navigation" buttons (class primary-toggle) and two "On this page" buttons
   (class secondary-toggle): one in the theme's top bar, hidden on this layout, and one in the article header,
   the one a reader sees. Both themes bind their click handlers with document.querySelector, i.e. to the first,
   hidden button only (pydata-sphinx-theme issue #2451): sphinx-book-theme's collapses the primary sidebar on
   wide screens, pydata-sphinx-theme's opens the sidebar as a dialog on narrow ones. The visible buttons therefore
   did nothing at any width. Here every further button of each class hands its click to the first one, so the
   themes' own behaviour runs. */
(function () {
  "use strict";

  function forward(selector) {
    var buttons = document.querySelectorAll(selector);
    if (buttons.length < 2) return;
    var first = buttons[0];
    for (var i = 1; i < buttons.length; i++) {
      buttons[i].addEventListener("click", function (event) {
        event.preventDefault();
        event.stopPropagation();
        first.click();
      });
    }
  }

  document.addEventListener("DOMContentLoaded", function () {
    forward(".primary-toggle");
    forward(".secondary-toggle");
  });
})();
