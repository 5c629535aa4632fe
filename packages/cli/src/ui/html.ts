import { TIMELINE_STYLE } from "./timeline-style.js";

const ESCAPES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };

/**
 * Escapes text for HTML content and quoted attribute values. Every piece of data read from a data
 * directory (IDs, types, attribute and payload values) goes through it.
 *
 * @example
 * escapeHtml("<script>") // "&lt;script&gt;"
 */
export function escapeHtml(text: string): string {
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

const STYLE = `
body{font:14px/1.4 system-ui,sans-serif;margin:1.5rem;color:#222}
nav a{margin-right:1rem}
table{border-collapse:collapse;margin-top:.75rem}
th,td{border-bottom:1px solid #ddd;padding:.25rem .6rem;text-align:left;vertical-align:top}
th{background:#f4f4f4}
code,pre,td.mono{font-family:ui-monospace,monospace;font-size:13px}
pre{margin:0;white-space:pre-wrap;word-break:break-all;max-width:60rem}
.status-ok{color:#17702a}.status-failed,.status-terminated,.status-cancelled{color:#b3261e}.status-running{color:#8a5a00}
.muted{color:#777}.error{color:#b3261e}.done{color:#17702a}
.live{float:right;font-size:12px;padding:1px 6px;border-radius:8px}.live.on{background:#d3f9d8;color:#17702a}.live.off{background:#eee;color:#777}
form.filters label{margin-right:.6rem}form.filters input{width:9rem}
aside.actions{border:1px solid #e4e4e4;padding:.4rem .6rem;margin:.5rem 0;background:#fcfcfc}
aside.actions form{display:inline-block;margin:.2rem 1rem .2rem 0}aside.actions output{margin-left:.4rem}
.pager a{margin-right:1rem}
`;

/** What a page is, for the script that keeps it live. */
export interface PageContext {
  readonly page: "runs" | "run" | "schedules" | "error";
  /** The run a run's page shows. */
  readonly run?: string;
  /** This process's action token, present only with `--allow-actions`. */
  readonly token?: string;
  /** Markup shown outside `<main>`, kept when the page refreshes itself (the action forms). */
  readonly aside?: Html;
}

/** A whole page: the title, the navigation, the body inside `<main>` and the script. */
export function layout(title: string, body: Html, context: PageContext = { page: "error" }): string {
  const token = context.token === undefined ? "" : html`<meta name="fusee-token" content="${context.token}">`;
  return `<!doctype html>${
    html`<html lang="en"><head><meta charset="utf-8"><title>${title} · fusee</title>${token}<style>${raw(STYLE)}${raw(TIMELINE_STYLE)}</style>
<script src="/ui.js" defer></script></head>
<body data-page="${context.page}" data-run="${context.run ?? ""}"><nav><a href="/">Runs</a><a href="/schedules">Schedules</a><span id="live" class="live off">not live</span></nav><h1>${title}</h1>
${context.aside ?? ""}<main>${body}</main></body></html>`.html
  }\n`;
}
