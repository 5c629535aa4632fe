import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { route, type ReaderSource } from "./routes.js";

/** Where {@link startUiServer} listens. */
export interface UiServerOptions {
  /** The TCP port; 0 picks a free one. */
  readonly port: number;
  readonly open: ReaderSource;
}

/** A running UI server. */
export interface UiServer {
  /** The address to browse, `http://127.0.0.1:<port>/`. */
  readonly url: string;
  readonly port: number;
  /** Stops listening and drops open connections; resolves once the server is closed. */
  close(): Promise<void>;
}

// Loopback only: the pages show workflow data (decrypted with --keys), so nothing off the machine may reach them.
const HOST = "127.0.0.1";

const CONTENT_TYPES = { html: "text/html; charset=utf-8", json: "application/json; charset=utf-8" } as const;

// Pages hold no script; the policy makes sure injected markup could not run any either.
const SECURITY_HEADERS = {
  "content-security-policy": "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "cache-control": "no-store",
} as const;

/**
 * Serves the read-only pages and JSON of a data directory on 127.0.0.1.
 *
 * @example
 * const server = await startUiServer({ port: 0, open: () => DataDirReader.open("./data") });
 * console.log(server.url);
 * await server.close();
 */
export async function startUiServer(options: UiServerOptions): Promise<UiServer> {
  const server = createServer((request, response) => {
    answer(request, response, options.open).catch(() => response.destroy());
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, HOST, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://${HOST}:${port}/`,
    port,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((e) => (e === undefined ? resolve() : reject(e)));
        server.closeAllConnections();
      }),
  };
}

async function answer(request: IncomingMessage, response: ServerResponse, open: ReaderSource): Promise<void> {
  const method = request.method ?? "GET";
  if (!isLocalHost(request.headers.host)) {
    // A page elsewhere may point a DNS name at 127.0.0.1; only requests addressed to this machine are answered.
    return send(response, 421, "text/plain; charset=utf-8", "this server answers requests to 127.0.0.1 or localhost only\n", method);
  }
  if (method !== "GET" && method !== "HEAD") {
    response.setHeader("allow", "GET, HEAD");
    return send(response, 405, "text/plain; charset=utf-8", "the UI is read-only: GET and HEAD only\n", method);
  }
  const result = await route(request.url ?? "/", open);
  send(response, result.status, CONTENT_TYPES[result.type], result.body, method);
}

function send(response: ServerResponse, status: number, contentType: string, body: string, method: string): void {
  response.writeHead(status, { ...SECURITY_HEADERS, "content-type": contentType, "content-length": Buffer.byteLength(body) });
  response.end(method === "HEAD" ? undefined : body);
}

function isLocalHost(host: string | undefined): boolean {
  if (host === undefined) return false;
  const name = host.replace(/:\d+$/, "");
  return name === HOST || name === "localhost" || name === "[::1]";
}
