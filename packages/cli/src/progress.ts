import cliProgress from "cli-progress";
import { isTerminal } from "./data-dir.js";
import type { Io } from "./io.js";

/**
 * A progress bar on standard error while long work goes on, drawn only on a terminal (never in
 * pipes, logs or `--json` output) and cleared when the work ends.
 */
export class Progress {
  private readonly bar: cliProgress.SingleBar | undefined;

  constructor(io: Io, label: string, total: number, quiet: boolean) {
    const stream = io.stderr;
    if (quiet || total < 2 || !isTerminal(stream)) return;
    this.bar = new cliProgress.SingleBar(
      {
        stream,
        format: `${label} [{bar}] {value}/{total} {item}`,
        clearOnComplete: true,
        hideCursor: true,
        etaBuffer: 20,
      },
      cliProgress.Presets.shades_classic,
    );
    this.bar.start(total, 0, { item: "" });
  }

  /** One more item done. */
  tick(item: string): void {
    this.bar?.increment(1, { item: item.length > 40 ? `${item.slice(0, 39)}…` : item });
  }

  stop(): void {
    this.bar?.stop();
  }
}
