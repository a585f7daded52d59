// Formulas rendered by the KaTeX copy the site ships (docs/assets/katex, refreshed by
// tools/vendor_katex.py): no network access. pymdownx.arithmatex (generic) wraps every formula
// in an element of class "arithmatex" as \( ... \) or \[ ... \]; only those are rendered.
(function () {
  function render(root) {
    if (typeof renderMathInElement !== "function") return;
    (root || document).querySelectorAll(".arithmatex").forEach(function (el) {
      renderMathInElement(el, {
        delimiters: [
          { left: "\\(", right: "\\)", display: false },
          { left: "\\[", right: "\\]", display: true }
        ],
        throwOnError: false
      });
    });
  }
  if (typeof document$ !== "undefined") {
    document$.subscribe(function () { render(document); });  // Material's instant navigation
  } else {
    document.addEventListener("DOMContentLoaded", function () { render(document); });
  }
})();
