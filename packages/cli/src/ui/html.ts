import { PAGE_STYLE } from "./page-style.js";

const ESCAPES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };

/**
 * Escapes text for HTML content and quoted attribute values. Every piece of data read from a data
 * directory (IDs, types, attribute and payload values) goes through it.
 *
 * @example
 * escapeHtml("<script>") // "&lt;script&gt;"
 */
function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c] ?? c);
}

/** A marked piece of HTML, so escaped and raw text cannot be mixed up by accident. */
export interface Html {
  readonly html: string;
}

/** Wraps markup this module's callers built from escaped parts. */
export function raw(html: string): Html {
  return { html };
}

/**
 * A template tag that escapes every interpolated value unless it is already {@link Html}; arrays
 * are joined.
 *
 * @example
 * html`<td>${run.id}</td>` // the ID escaped
 */
export function html(strings: TemplateStringsArray, ...values: unknown[]): Html {
  let out = strings[0] ?? "";
  values.forEach((value, i) => {
    out += piece(value) + (strings[i + 1] ?? "");
  });
  return raw(out);
}

function piece(value: unknown): string {
  if (value === undefined || value === null || value === false) return "";
  if (Array.isArray(value)) return value.map(piece).join("");
  if (typeof value === "object" && "html" in value && typeof (value as Html).html === "string") return (value as Html).html;
  return escapeHtml(String(value));
}

/** The path of a run's page; the ID is percent-encoded, so `/` and `?` in IDs survive. */
export function runPath(id: string): string {
  return `/runs/${encodeURIComponent(id)}`;
}

/** Whether the pages may act on runs, and if not why. */
export type ActionsState =
  /** Started without `--allow-actions`: the UI only reads. */
  | { readonly kind: "off" }
  /** Actions allowed; every POST must carry `token`. */
  | { readonly kind: "on"; readonly token: string }
  /** `--allow-actions` was given, but this process cannot write the directory, for `reason`. */
  | { readonly kind: "unavailable"; readonly reason: string };

/** What every page of one response knows beside its data. */
export interface PageEnv {
  /** This response's nonce: the page's policy runs no script and applies no style without it. */
  readonly nonce: string;
  readonly actions: ActionsState;
}

/** What a page is, for the script that keeps it live. */
export interface PageContext {
  readonly page: "runs" | "run" | "schedules" | "error";
  /** The run a run's page shows. */
  readonly run?: string;
  /** Markup shown outside `<main>`, kept when the page refreshes itself (the action forms). */
  readonly aside?: Html;
}

/** A whole page: the title, the navigation, the body inside `<main>` and the script. */
export function layout(title: string, body: Html, env: PageEnv, context: PageContext = { page: "error" }): string {
  const token = env.actions.kind === "on" ? html`<meta name="fusee-token" content="${env.actions.token}">` : "";
  return `<!doctype html>${
    html`<html lang="en"><head><meta charset="utf-8"><title>${title} · fusee</title>${token}<style nonce="${env.nonce}">${raw(PAGE_STYLE)}</style>
<script nonce="${env.nonce}" src="/ui.js" defer></script></head>
<body data-page="${context.page}" data-run="${context.run ?? ""}"><nav><a href="/">Runs</a><a href="/schedules">Schedules</a><span id="live" class="live off">not live</span></nav><h1>${title}</h1>
${context.aside ?? ""}<main>${body}</main></body></html>`.html
  }\n`;
}
