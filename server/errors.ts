// The service's one error catalogue (D10–D13): every failure is a ServiceError with an HTTP status and a stable
// subcode. Domain code throws these; the HTTP layer renders them in the envelope of the route's area.

export type ErrorCode = 1000 | 1002 | 1003 | 1007 | 2000 | 2001 | 2004 | 2005 | 3000 | 3002 | 4000 | 5000;

export interface CatalogueEntry {
  readonly status: number;
  /** D13: the taxonomy/imports error name for this code. */
  readonly taxonomyName: string;
  readonly summary: string;
}

/** Every subcode the service emits (D11), with its usual status. 1002 is also sent with 413 (D2). */
export const CATALOGUE: Readonly<Record<ErrorCode, CatalogueEntry>> = {
  1000: { status: 400, taxonomyName: 'MissingParameters', summary: 'A query-parameter value is invalid or missing.' },
  1002: { status: 400, taxonomyName: 'InvalidRequestBody', summary: 'The request body is not structured as expected.' },
  1003: { status: 400, taxonomyName: 'InvalidRequestBody', summary: 'A request body was expected but is missing.' },
  1007: { status: 400, taxonomyName: 'ValidationError', summary: 'The event does not conform to the schema of its name.' },
  2000: { status: 401, taxonomyName: 'InvalidAPIKey', summary: 'The API key is invalid.' },
  2001: { status: 403, taxonomyName: 'InsufficientAPIKey', summary: 'The API key gives no access to this operation or resource.' },
  2004: { status: 401, taxonomyName: 'AuthorizationMissing', summary: 'No API key was supplied.' },
  2005: { status: 401, taxonomyName: 'InvalidAPIKey', summary: 'The supplied authentication is invalid.' },
  3000: { status: 404, taxonomyName: 'DoesNotExist', summary: 'The requested resource does not exist.' },
  3002: { status: 400, taxonomyName: 'DoesNotExist', summary: 'The requested user does not exist.' },
  4000: { status: 409, taxonomyName: 'AlreadyExists', summary: 'A resource with this identifier already exists, or it is still referenced.' },
  5000: { status: 500, taxonomyName: 'UnspecifiedInternalError', summary: 'An unexpected error occurred; contact support with the request id.' },
};

export class ServiceError extends Error {
  readonly status: number;
  readonly code: ErrorCode;
  /** Optional detail for the client (`error.cause`): a JSON path and problem, the missing key, ... */
  readonly detail: string | undefined;

  constructor(code: ErrorCode, message: string, detail?: string, status?: number) {
    super(message);
    this.name = 'ServiceError';
    this.code = code;
    this.status = status ?? CATALOGUE[code].status;
    this.detail = detail;
  }
}

// Named constructors for the common cases, so call sites read as what went wrong.
export const badParameter = (message: string, detail?: string) => new ServiceError(1000, message, detail);
export const badBody = (detail: string) => new ServiceError(1002, 'The request body is not structured as expected.', detail);
export const missingBody = () => new ServiceError(1003, 'A request body was expected but is missing.');
export const bodyTooLarge = (limit: number) =>
  new ServiceError(1002, 'The request body is too large.', `the body exceeds ${limit} bytes`, 413);
export const schemaMismatch = (detail: string) => new ServiceError(1007, 'The event does not conform to its schema.', detail);
export const noKey = () => new ServiceError(2004, 'No API key was supplied.', 'Send the key in the X-API-Key header or the k query parameter.');
export const malformedKey = () => new ServiceError(2005, 'The supplied authentication is invalid.', 'An API key is a UUID.');
export const unknownKey = () => new ServiceError(2000, 'The API key is invalid.', 'This key does not exist.');
export const forbidden = (detail?: string) => new ServiceError(2001, 'The API key gives no access to this operation or resource.', detail);
export const notFound = (what: string) => new ServiceError(3000, `The requested ${what} does not exist.`);
export const unknownUser = () => new ServiceError(3002, 'The requested user does not exist.');
export const alreadyExists = (detail: string) => new ServiceError(4000, 'A resource with this identifier already exists.', detail);
export const stillReferenced = (detail: string) => new ServiceError(4000, 'The resource is still referenced.', detail);
