// Control-plane errors: a stable code, an HTTP status and a message meant for the operator.
export class ControlError extends Error {
  override name = "ControlError";
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export const notFound = (what: string, id: string) => new ControlError(404, "not_found", `No ${what} with id "${id}".`);
