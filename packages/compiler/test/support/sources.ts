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

/** Declarations reached in less common ways: default exports, namespaces, packages and globals. */
export const SHAPES = `export default interface Thing {
  a: number;
}

export namespace Geo {
  export interface Point {
    x: number;
    y: number;
  }
}
`;

export const ODDITIES = `import { Workflow, Query, Update } from "@fusee/runtime";
import type { DependencyContainer } from "tsyringe";
import type Thing from "./shapes.js";
import { Geo } from "./shapes.js";

declare global {
  interface Clock {
    now: number;
  }
}

@Workflow()
export default class Oddities {
  async run(thing: Thing): Promise<Geo.Point> {
    return { x: thing.a, y: 0 };
  }

  @Query() container(): DependencyContainer | undefined {
    return undefined;
  }

  @Query() clock(): Clock | undefined {
    return undefined;
  }

  @Query() id(): \`id-\${number}\` {
    return "id-1";
  }

  @Query() record(): { readonly "a-b": number; c?: string[]; [key: string]: unknown } {
    return { "a-b": 1 };
  }

  @Update() async patch(): Promise<Partial<Thing>> {
    return {};
  }
}
`;
