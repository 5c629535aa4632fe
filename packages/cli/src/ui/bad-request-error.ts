import { FuseeError } from "@fusee/runtime";

/** A request to `fusee ui` the server cannot answer as asked: an unknown query parameter or value, a malformed URL. */
export class BadRequestError extends FuseeError {
  override readonly code = "FUSEE_BAD_REQUEST";
}
