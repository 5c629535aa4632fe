import "reflect-metadata";
import { Ctx, Step, Workflow } from "@fusee/runtime";

/** The workflow the journal check benchmark leaves in flight: three steps, then a wait for a signal. */
@Workflow("Checkout")
export class Checkout {
  constructor(private readonly ctx: Ctx) {}

  async run(cents: number): Promise<string> {
    const quote = await this.quote(cents);
    const hold = await this.reserve(quote);
    const receipt = await this.charge(quote, hold);
    await this.ctx.waitFor("shipped");
    return receipt;
  }

  @Step() async quote(cents: number): Promise<{ cents: number; currency: string }> {
    return { cents: cents + 100, currency: "EUR" };
  }

  @Step() async reserve(quote: { cents: number }): Promise<string> {
    return `hold-${quote.cents}`;
  }

  @Step() async charge(quote: { cents: number }, hold: string): Promise<string> {
    return `receipt-${hold}-${quote.cents}`;
  }
}
