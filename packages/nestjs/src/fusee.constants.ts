/**
 * How long, by default, the engine waits at application shutdown for running step attempts and
 * workflow code to settle before it shuts down (which aborts the attempts still running).
 */
export const DEFAULT_DRAIN_TIMEOUT = "10s";

/** The injection token of the module's options (`FuseeModuleOptions`). */
export const FUSEE_MODULE_OPTIONS = Symbol("FUSEE_MODULE_OPTIONS");

/** The injection token of the client classes the module provides. */
export const FUSEE_CLIENTS = Symbol("FUSEE_CLIENTS");
