// The import form. Django refuses a form field larger than DATA_UPLOAD_MAX_MEMORY_SIZE (2.5 MB
// by default) before any view runs, but not a file part: pasted text beyond that limit is sent
// as a file part of the same name ("text"), so up to 5 MB of it can be pasted as well as uploaded.

import { startSite } from "../site.js";

startSite();
const form = document.getElementById("import-form");
const limit = form ? Number(form.dataset.pasteLimit) || Infinity : Infinity;
if (form)
  form.addEventListener("htmx:configRequest", (e) => {
    const text = form.elements.text.value;
    const blob = new Blob([text], { type: "text/plain" });
    if (blob.size > limit * 0.9) e.detail.formData.set("text", blob, "pasted.txt");
  });
