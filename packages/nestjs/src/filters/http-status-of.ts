import { HttpException, HttpStatus } from "@nestjs/common";
import { AlreadyExistsError, NotFoundError, RejectedError, type FuseeError } from "@fusee/runtime";

/**
 * The HTTP status a fusee error answers with: `NotFoundError` 404, `AlreadyExistsError` 409,
 * `RejectedError` 422, or 400 when the rejection says the request was malformed (it carries, as
 * itself or as a cause, an `HttpException` of status 400, such as the `BadRequestException` an
 * update's validator threw); anything else 500.
 *
 * @example
 * httpStatusOf(new NotFoundError("no workflow run has the ID 'order-9'")); // 404
 */
export function httpStatusOf(error: FuseeError): number {
  if (error instanceof NotFoundError) return HttpStatus.NOT_FOUND;
  if (error instanceof AlreadyExistsError) return HttpStatus.CONFLICT;
  if (error instanceof RejectedError) return saysMalformed(error) ? HttpStatus.BAD_REQUEST : HttpStatus.UNPROCESSABLE_ENTITY;
  return HttpStatus.INTERNAL_SERVER_ERROR;
}

function saysMalformed(error: Error): boolean {
  const seen = new Set<unknown>();
  for (let e: unknown = error; e instanceof Error && !seen.has(e); e = e.cause) {
    seen.add(e);
    if (e instanceof HttpException && e.getStatus() === HttpStatus.BAD_REQUEST) return true;
  }
  return false;
}
