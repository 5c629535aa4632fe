import { workflowCall, type WorkflowCallDescriptor } from "@fusee/runtime/calls";

// What each `Ctx` member journals is the runtime's fact (its call table), read here rather than
// restated, so gen's prediction of a journal and the executor's journal cannot disagree.

/** A `Ctx` member as the runtime's table describes it, with its name. */
export interface CtxCall extends WorkflowCallDescriptor {
  readonly name: string;
}

/** The runtime's descriptor of a callee that `RuntimeSymbols.memberAt` names `Ctx.<member>`, if it is one. */
export function ctxCall(member: string | undefined): CtxCall | undefined {
  if (member === undefined || !member.startsWith("Ctx.")) return undefined;
  const name = member.slice("Ctx.".length);
  const call = workflowCall(name);
  return call === undefined ? undefined : { ...call, name };
}
