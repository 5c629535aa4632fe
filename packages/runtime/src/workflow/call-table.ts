/**
 * One entry per member of `Ctx`: what calling it writes to a run's journal. The executor's feature
 * modules do what an entry says, and `fusee gen` reads the same entries to predict a workflow's
 * journal without running it, so the two cannot drift apart. This file imports nothing: it is
 * published alone for tools that must not load the runtime itself.
 *
 * @module @fusee/runtime/calls
 */

/** What a call of a `Ctx` member writes to the run's journal. */
export type CallJournal =
  /** Nothing: it reads the run's state, works inside a running step, or logs. */
  | "nothing"
  /** A step record named by its first argument; its function argument runs as the step. */
  | "step"
  /** A step record named `ctx.<member>` that sends a message to another workflow, applied there once. */
  | "message"
  /** A durable timer. */
  | "timer"
  /** Nothing while what it waits for is there; the timer of its timeout when it does wait with one. */
  | "wait"
  /** A child workflow's start; `waits` tells whether the call also waits for the child's result. */
  | "child"
  /** A change of the run's search attributes. */
  | "attributes"
  /** A step record named by its first argument that sends a token, then a wait for the token's answer. */
  | "completion"
  /** A patch marker on new code paths; nothing when replaying a run from before the patch. */
  | "patch"
  /** Nothing new: it marks a patch whose old path no run needs. */
  | "deprecated-patch"
  /** The end of this run and the start of the next one of the same workflow ID. */
  | "continue-as-new";

/** What a message to another workflow asks of it (the `op` of the message). */
export type MessageOp = "start" | "signal" | "cancel" | "update" | "signal-with-start";

/** One workflow API call: a member of `Ctx`. */
export interface WorkflowCallDescriptor {
  readonly journals: CallJournal;
  /** The kind of the numbered call record the journal holds for it, which replay checks the code's call against. */
  readonly record?: "step" | "timer" | "child" | "attributes" | "patch";
  /** For `message` calls: the message's operation. */
  readonly message?: MessageOp;
  /** What the run waits for after the call journals what it journals, if it waits. */
  readonly waits?: "signal" | "condition" | "child" | "completion";
  /** The position of the options argument whose `timeout` may make the call journal a timer. */
  readonly timeoutArgument?: number;
  /** Its function argument runs as a step, so it may do what workflow code must not (I/O, the clock). */
  readonly runsStep?: boolean;
  /** It may only be used inside a running step. */
  readonly insideStep?: boolean;
}

const nothing = { journals: "nothing" } as const;
const insideStep = { journals: "nothing", insideStep: true } as const;

/** Every member of `Ctx`, by name, with what calling it journals. */
export const WORKFLOW_CALLS = {
  log: nothing,
  workflowId: nothing,
  workflowType: nothing,
  runId: nothing,
  now: nothing,
  random: nothing,
  uuid: nothing,
  step: { journals: "step", record: "step", runsStep: true },
  key: insideStep,
  attempt: insideStep,
  heartbeat: insideStep,
  abortSignal: insideStep,
  progress: insideStep,
  sleep: { journals: "timer", record: "timer" },
  sleepUntil: { journals: "timer", record: "timer" },
  waitFor: { journals: "wait", record: "timer", waits: "signal", timeoutArgument: 1 },
  condition: { journals: "wait", record: "timer", waits: "condition", timeoutArgument: 1 },
  patched: { journals: "patch", record: "patch" },
  deprecatePatch: { journals: "deprecated-patch" },
  setAttributes: { journals: "attributes", record: "attributes" },
  removeAttributes: { journals: "attributes", record: "attributes" },
  attributes: nothing,
  startChild: { journals: "child", record: "child", timeoutArgument: 3 },
  executeChild: { journals: "child", record: "child", waits: "child", timeoutArgument: 3 },
  continueAsNew: { journals: "continue-as-new" },
  awaitCompletion: { journals: "completion", record: "step", waits: "completion", runsStep: true },
  startWorkflow: { journals: "message", record: "step", message: "start" },
  signalWorkflow: { journals: "message", record: "step", message: "signal" },
  cancelWorkflow: { journals: "message", record: "step", message: "cancel" },
  updateWorkflow: { journals: "message", record: "step", message: "update" },
  signalWithStart: { journals: "message", record: "step", message: "signal-with-start" },
  journalSize: nothing,
} as const satisfies Readonly<Record<string, WorkflowCallDescriptor>>;

/** The name of a member of `Ctx`. */
export type WorkflowCallName = keyof typeof WORKFLOW_CALLS;

/** The kinds of numbered call record workflow code journals: the union of the table's `record` fields. */
export type CallRecordKind = {
  [K in WorkflowCallName]: (typeof WORKFLOW_CALLS)[K] extends { readonly record: infer R } ? R : never;
}[WorkflowCallName];

/** The numbered calls that are neither a step nor a patch marker: each has a record kind of its own. */
export type JournaledCallKind = Exclude<CallRecordKind, "step" | "patch">;

/** The descriptor of a `Ctx` member, or undefined for a name that is not one. */
export function workflowCall(name: string): WorkflowCallDescriptor | undefined {
  return Object.hasOwn(WORKFLOW_CALLS, name) ? WORKFLOW_CALLS[name as WorkflowCallName] : undefined;
}

const MESSAGE_STEPS = Object.fromEntries(
  Object.entries(WORKFLOW_CALLS).flatMap(([name, call]) => ("message" in call ? [[call.message, `ctx.${name}`]] : [])),
) as Readonly<Record<MessageOp, string>>;

/** The name of the step that sends a message of `op`, as the sender's journal shows it: `ctx.<member>`. */
export function messageStepName(op: MessageOp): string {
  return MESSAGE_STEPS[op];
}
