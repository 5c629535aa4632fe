import { Ctx, Query, Signal, Step, Workflow } from "../../../src/index.js";

/** Steps that ran in this process, in order. */
export const calls: string[] = [];

@Workflow()
export class PgOrder {
  private approvedBy: string | undefined;
  constructor(private readonly ctx: Ctx) {}

  async run(amount: number): Promise<string> {
    const quote = await this.quote(amount);
    await this.ctx.condition(() => this.approvedBy !== undefined);
    await this.ctx.sleep("300ms");
    const receipt = await this.charge(quote);
    return `${receipt}, approved by ${this.approvedBy}`;
  }

  @Step() async quote(amount: number): Promise<number> {
    calls.push(`quote ${amount}`);
    return amount * 2;
  }

  @Step() async charge(quote: number): Promise<string> {
    calls.push(`charge ${quote}`);
    return `charged ${quote}`;
  }

  @Signal() approve(by: string): void {
    this.approvedBy = by;
  }

  @Query() approver(): string | undefined {
    return this.approvedBy;
  }
}
