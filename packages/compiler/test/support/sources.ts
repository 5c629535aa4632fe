/**
 * Workflow sources the specifications share: the payment workflow of the API guide, with the types
 * it exchanges in another module, as a user project would have them.
 */
export const MODELS = `export class Money {
  constructor(
    public cents: number,
    public currency: string,
  ) {}
}

export interface Receipt {
  id: string;
  amount: Money;
  note?: string;
}

export type Priority = "low" | "high";

export enum Channel {
  Email = "email",
  Sms = "sms",
}
`;

export const PAYMENTS = `export class Payments {
  async charge(key: string, cents: number): Promise<string> {
    return \`\${key}:\${cents}\`;
  }
}
`;

export const PAY = `import { Workflow, Step, Signal, Query, Update, Ctx } from "@fusee/runtime";
import { Channel, Money, type Priority, type Receipt } from "./models.js";
import { Payments } from "./payments.js";

@Workflow({ patches: ["early-notice"] })
export class Pay {
  private items: string[] = [];
  private approved?: boolean;

  constructor(
    private readonly ctx: Ctx,
    private readonly payments: Payments,
  ) {}

  async run(cents: number): Promise<Receipt> {
    const quote = await this.quote(cents);
    if (this.ctx.patched("early-notice")) {
      await this.notify(Channel.Email);
    }
    const amount = await this.charge(quote);
    const go = await this.ctx.waitFor<number>("go", { timeout: "1h" });
    await this.ctx.condition(() => this.approved !== undefined);
    return { id: \`\${go ?? 0}\`, amount };
  }

  @Step() async quote(cents: number): Promise<number> {
    return cents;
  }

  @Step({ name: "charge-card" })
  async charge(quote: number): Promise<Money> {
    await this.payments.charge(this.ctx.key(), quote);
    return new Money(quote, "EUR");
  }

  @Step() async notify(channel: Channel): Promise<void> {
    void channel;
  }

  @Signal() approve(ok: boolean): void {
    this.approved = ok;
  }

  @Query() list(): string[] {
    return this.items;
  }

  @Query({ name: "count-by" }) countBy(priority?: Priority): number {
    return priority === "high" ? 0 : this.items.length;
  }

  @Update() async add(item: string): Promise<number> {
    const price = await this.ctx.step("price", async () => item.length * 10);
    this.items.push(item);
    return price;
  }
}
`;
