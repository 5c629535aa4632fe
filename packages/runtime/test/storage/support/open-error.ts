import { type LocalLogOptions, openLocalLog } from "../../../src/storage/index.js";

/** The error a refused open throws; fails the test when the log opens. */
export async function openError(options: LocalLogOptions): Promise<Error> {
  return openLocalLog(options).then(
    async (log) => {
      await log.close();
      throw new Error("the log opened");
    },
    (err: unknown) => err as Error,
  );
}
