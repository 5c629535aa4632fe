import { Ctx, RetryPolicy, Signal, Step, Query, Workflow, registerType } from "@fusee/runtime";
import { Billing, CardDeclinedError, type Charge } from "./billing.js";

registerType(CardDeclinedError);

/** How a trial ended. */
export type TrialOutcome = { readonly status: "subscribed"; readonly charge: Charge } | { readonly status: "expired" | "declined" };

/** A customer's 30-day trial: it ends in a subscription when they upgrade in time, else it expires. */
@Workflow()
export class Trial {
  private plan: string | undefined;

  constructor(
    private readonly ctx: Ctx,
    private readonly billing: Billing,
  ) {}

  async run(customer: string): Promise<TrialOutcome> {
    const upgraded = await this.ctx.condition(() => this.plan !== undefined, { timeout: "30d" });
    if (!upgraded) return { status: "expired" };
    try {
      return { status: "subscribed", charge: await this.charge(customer) };
    } catch (e) {
      if (e instanceof CardDeclinedError) return { status: "declined" };
      throw e;
    }
  }

  /** Charges the first month; an outage is retried with the same key, a declined card is not. */
  @Step({ retry: RetryPolicy.exponential(4, "1s", "1m").nonRetryable(CardDeclinedError) })
  async charge(customer: string): Promise<Charge> {
    return this.billing.charge(this.ctx.key(), customer, this.plan === "yearly" ? 9900 : 990);
  }

  @Signal() upgrade(plan: string): void {
    this.plan = plan;
  }

  @Query() chosenPlan(): string | undefined {
    return this.plan;
  }
}
