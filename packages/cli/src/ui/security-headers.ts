import { randomBytes } from "node:crypto";

/**
 * Headers every response carries. No other origin may frame the UI (`frame-ancestors 'none'`, and
 * `X-Frame-Options` for browsers that predate it): with actions allowed, a framing page could
 * otherwise trick a click on Cancel.
 */
const COMMON = {
  "x-frame-options": "DENY",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "cache-control": "no-store",
  "cross-origin-opener-policy": "same-origin",
  "cross-origin-resource-policy": "same-origin",
} as const;

/** The policy of responses that are not pages (JSON, the script, the event stream): they load nothing. */
export const DATA_HEADERS: Readonly<Record<string, string>> = {
  ...COMMON,
  "content-security-policy": "default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
};

/**
 * The headers of a page whose one script and one style sheet carry `nonce`. Anything else a page
 * might hold, such as markup slipped into a workflow value, runs no script and applies no style:
 * no inline handler, no `javascript:` URL, no element without the nonce.
 */
export function pageHeaders(nonce: string): Readonly<Record<string, string>> {
  return {
    ...COMMON,
    "content-security-policy": [
      "default-src 'none'",
      `script-src 'nonce-${nonce}'`,
      `style-src 'nonce-${nonce}'`,
      "connect-src 'self'",
      "form-action 'self'",
      "base-uri 'none'",
      "frame-ancestors 'none'",
    ].join("; "),
  };
}

/** A fresh nonce for one page: 128 random bits. */
export function newNonce(): string {
  return randomBytes(16).toString("base64");
}
