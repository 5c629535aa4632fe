import { html, layout, type PageEnv } from "./html.js";

/** A page for a request that could not be answered. */
export function errorPage(status: number, message: string, env: PageEnv): string {
  return layout(status === 404 ? "Not found" : status === 400 ? "Bad request" : "Error", html`<p class="error">${message}</p>`, env);
}
