import { randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { actionPath, performAction, readBody } from "./actions.js";
import type { UiActions } from "./ui-actions.js";
import { CLIENT_SCRIPT } from "./client-script.js";
import type { ActionsState } from "./html.js";
import { LiveFeed } from "./live-feed.js";
import { route, type ReaderSource } from "./routes.js";
import type { CodeReplay } from "./run-view.js";
import { DATA_HEADERS, newNonce, pageHeaders } from "./security-headers.js";

/** Where {@link startUiServer} listens and what it may do. */
export interface UiServerOptions {
  /** The TCP port; 0 picks a free one. */
  readonly port: number;
  readonly open: ReaderSource;
  /**
   * What the pages' action buttons do (signal, cancel, terminate, reset, and cancel or terminate in
   * batches). Without it every action endpoint answers 403; with it each POST must carry the token
   * the pages hold.
   */
  readonly actions?: UiActions;
  /**
   * Why actions were asked for but cannot be performed (another process writes the directory):
   * the pages say so, and every action endpoint answers 409.
   */
  readonly actionsUnavailable?: string;
  /** Replays a run through the workflow code, so its page says what the code waits for. */
  readonly replay?: CodeReplay;
  /** How often `/api/events` reads the directory while someone listens; 500 ms by default. */
  readonly pollMs?: number;
}

/** A running UI server. */
export interface UiServer {
  /** The address to browse, `http://127.0.0.1:<port>/`. */
  readonly url: string;
  readonly port: number;
  /** The token action requests must carry, present when actions are allowed. */
  readonly token: string | undefined;
  /** Stops listening and drops open connections; resolves once the server is closed. */
  close(): Promise<void>;
}

// Loopback only: the pages show workflow data (decrypted with --keys), so nothing off the machine may reach them.
const HOST = "127.0.0.1";

const CONTENT_TYPES = {
  html: "text/html; charset=utf-8",
  json: "application/json; charset=utf-8",
  js: "text/javascript; charset=utf-8",
} as const;

/**
 * Serves the pages, the JSON and the live events of a data directory on 127.0.0.1, and with
 * `actions` the action endpoints, each POST checked against a token made for this process. Every
 * page carries a fresh nonce that its policy requires of scripts and styles, and no page may be
 * framed.
 *
 * @example
 * const server = await startUiServer({ port: 0, open: () => DataDirReader.open("./data") });
 * console.log(server.url);
 * await server.close();
 */
export async function startUiServer(options: UiServerOptions): Promise<UiServer> {
  const token = options.actions === undefined ? undefined : randomBytes(24).toString("base64url");
  const state: ActionsState =
    options.actionsUnavailable !== undefined
      ? { kind: "unavailable", reason: options.actionsUnavailable }
      : token !== undefined
        ? { kind: "on", token }
        : { kind: "off" };
  const feed = new LiveFeed(options.open, options.pollMs ?? 500);
  const server = createServer((request, response) => {
    answer(request, response, options, state, feed).catch(() => response.destroy());
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
    token,
    close: () =>
      new Promise<void>((resolve, reject) => {
        feed.close();
        server.close((e) => (e === undefined ? resolve() : reject(e)));
        server.closeAllConnections();
      }),
  };
}

async function answer(
  request: IncomingMessage,
  response: ServerResponse,
  options: UiServerOptions,
  state: ActionsState,
  feed: LiveFeed,
): Promise<void> {
  const method = request.method ?? "GET";
  if (!isLocalHost(request.headers.host)) {
    // A page elsewhere may point a DNS name at 127.0.0.1; only requests addressed to this machine are answered.
    return send(response, 421, "text/plain; charset=utf-8", "this server answers requests to 127.0.0.1 or localhost only\n", method);
  }
  const target = request.url ?? "/";
  const path = target.split("?")[0] as string;
  if (method === "POST") {
    const action = actionPath(path);
    if (action !== undefined) {
      const body = await readBody(request).catch(() => "");
      const given = request.headers["x-fusee-token"];
      const result = await performAction(options.actions, state, typeof given === "string" ? given : undefined, action, body, options.open);
      return send(response, result.status, CONTENT_TYPES.json, `${JSON.stringify(result.body)}\n`, method);
    }
  }
  if (method !== "GET" && method !== "HEAD") {
    response.setHeader("allow", "GET, HEAD");
    const why =
      state.kind === "off"
        ? "the UI is read-only: GET and HEAD only"
        : "GET and HEAD only, and POST to /api/runs/<id>/<action> and /api/batch/<action>";
    return send(response, 405, "text/plain; charset=utf-8", `${why}\n`, method);
  }
  if (path === "/ui.js") return send(response, 200, CONTENT_TYPES.js, CLIENT_SCRIPT, method);
  if (path === "/api/events" && method === "GET") return feed.subscribe(response, DATA_HEADERS);
  const nonce = newNonce();
  const result = await route(
    target,
    { open: options.open, ...(options.replay !== undefined ? { replay: options.replay } : {}) },
    { nonce, actions: state },
  );
  const policy = result.type === "html" ? pageHeaders(nonce) : DATA_HEADERS;
  send(response, result.status, CONTENT_TYPES[result.type], result.body, method, { ...policy, ...result.headers });
}

function send(
  response: ServerResponse,
  status: number,
  contentType: string,
  body: string,
  method: string,
  headers: Readonly<Record<string, string>> = {},
): void {
  response.writeHead(status, { ...DATA_HEADERS, ...headers, "content-type": contentType, "content-length": Buffer.byteLength(body) });
  response.end(method === "HEAD" ? undefined : body);
}

function isLocalHost(host: string | undefined): boolean {
  if (host === undefined) return false;
  const name = host.replace(/:\d+$/, "");
  return name === HOST || name === "localhost" || name === "[::1]";
}
