/** Where a command writes, and whether it may colour its output. */
export interface Io {
  readonly stdout: { write(text: string): unknown };
  readonly stderr: { write(text: string): unknown };
  /** Colours are used only when the output is a terminal and `NO_COLOR` is not set. */
  readonly color: boolean;
  /** The folder relative paths are taken from and shown against. */
  readonly cwd: string;
  /** Resolves when the user interrupts (SIGINT, SIGTERM); long-running commands wait on it to stop. */
  interrupted(): Promise<void>;
}

/** The process's own streams and signals. */
export function processIo(): Io {
  const color = process.stdout.isTTY === true && process.env.NO_COLOR === undefined && process.env.TERM !== "dumb";
  // Handlers are installed only when a command waits for an interrupt, so Ctrl-C ends any other command at once.
  const interrupted = () =>
    new Promise<void>((resolve) => {
      const stop = () => {
        process.off("SIGINT", stop);
        process.off("SIGTERM", stop);
        resolve();
      };
      process.on("SIGINT", stop);
      process.on("SIGTERM", stop);
    });
  return { stdout: process.stdout, stderr: process.stderr, color, cwd: process.cwd(), interrupted };
}

/** ANSI styles that are the identity when colours are off. */
export interface Paint {
  red(s: string): string;
  green(s: string): string;
  yellow(s: string): string;
  dim(s: string): string;
  bold(s: string): string;
}

export function paint(color: boolean): Paint {
  const style = (open: number, close: number) => (s: string) => (color ? `\u001b[${open}m${s}\u001b[${close}m` : s);
  return { red: style(31, 39), green: style(32, 39), yellow: style(33, 39), dim: style(2, 22), bold: style(1, 22) };
}
