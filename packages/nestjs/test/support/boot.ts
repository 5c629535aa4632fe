import type { INestApplicationContext } from "@nestjs/common";
import { NestFactory } from "@nestjs/core";

type EntryModule = Parameters<typeof NestFactory.createApplicationContext>[0];

/** A Nest application context of `root`, quiet, whose start errors are thrown rather than ending the process. */
export function boot(root: EntryModule): Promise<INestApplicationContext> {
  return NestFactory.createApplicationContext(root, { logger: false, abortOnError: false });
}
