import { Catch, HttpStatus, Logger, type ArgumentsHost, type ExceptionFilter } from "@nestjs/common";
import { HttpAdapterHost } from "@nestjs/core";
import { FuseeError } from "@fusee/runtime";
import { httpStatusOf } from "./http-status-of.js";

/** The body of an HTTP response to a fusee error. */
export interface FuseeErrorBody {
  readonly statusCode: number;
  /** The error's stable code, such as `"FUSEE_NOT_FOUND"`. */
  readonly code: string;
  readonly message: string;
}

/**
 * Answers HTTP requests that failed with a fusee error with the status {@link httpStatusOf} gives
 * and a body holding the error's `code` and message. Opt in per controller, per route or for the
 * whole application. It replies through Nest's HTTP adapter, and rethrows errors of other contexts.
 *
 * @example
 * app.useGlobalFilters(new FuseeExceptionFilter(app.get(HttpAdapterHost)));
 * // or, in a module: providers: [{ provide: APP_FILTER, useClass: FuseeExceptionFilter }]
 * // or, on a controller: @UseFilters(FuseeExceptionFilter)
 */
@Catch(FuseeError)
export class FuseeExceptionFilter implements ExceptionFilter<FuseeError> {
  private readonly logger = new Logger(FuseeExceptionFilter.name);

  constructor(private readonly adapterHost: HttpAdapterHost) {}

  catch(error: FuseeError, host: ArgumentsHost): void {
    if (host.getType() !== "http") throw error;
    const status = httpStatusOf(error);
    if (status >= HttpStatus.INTERNAL_SERVER_ERROR) this.logger.error(error.message, error.stack);
    const body: FuseeErrorBody = { statusCode: status, code: error.code, message: error.message };
    this.adapterHost.httpAdapter.reply(host.switchToHttp().getResponse(), body, status);
  }
}
