import { html, type Html } from "./html.js";
import type { ShownError } from "./value-view.js";

/** An error as the page shows it: `Name: message`, its stack, its own fields, then each cause the same way. */
export function errorView(error: ShownError): Html {
  const cause = error.cause;
  return html`<p class="error-head"><strong>${error.name}</strong>: ${error.message}</p>${
    error.stack !== undefined ? html`<pre class="stack">${error.stack}</pre>` : ""
  }${error.fields !== undefined ? html`<pre>${error.fields}</pre>` : ""}${
    cause === undefined
      ? ""
      : "value" in cause
        ? html`<p>Caused by <code>${cause.value}</code></p>`
        : html`<p>Caused by</p>${errorView(cause)}`
  }`;
}

/** An error in a `<details>` that shows its first line and opens onto the rest. */
export function foldedError(error: ShownError): Html {
  return html`<details class="failure"><summary>${error.name}: ${error.message}</summary>${errorView(error)}</details>`;
}
