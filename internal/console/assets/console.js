// drip console: the copy button beside a key shown once. Every page works
// without this script (the key's field is read-only and selectable); the
// button is hidden until the script shows it.
"use strict";
document.querySelectorAll("button[data-copy]").forEach(function (button) {
  var field = document.getElementById(button.getAttribute("data-copy"));
  if (!field) {
    return;
  }
  var copied = function () {
    button.textContent = "Copied";
  };
  field.addEventListener("focus", function () {
    field.select();
  });
  button.hidden = false;
  button.addEventListener("click", function () {
    field.focus();
    field.select();
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(field.value).then(copied, function () {
        if (document.execCommand("copy")) {
          copied();
        }
      });
    } else if (document.execCommand("copy")) {
      copied();
    }
  });
});
