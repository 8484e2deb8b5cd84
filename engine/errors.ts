// Errors the engine raises, with a stable code each. The engine knows nothing of HTTP; the server maps codes.

export type EngineErrorCode =
  | 'ENGINE_INVALID_QUERY' // a query failed validation (the problems carry JSON paths)
  | 'ENGINE_UNKNOWN_COHORT' // a transition clause names a cohort code the plan does not have
  | 'ENGINE_COHORT_CYCLE' // transition clauses form a cycle
  | 'ENGINE_BAD_STATE' // encoded state that cannot be decoded
  | 'ENGINE_UNKNOWN_SLOT_SET'; // a format 3 state names a slot set this process was not given (detail: its fingerprint)

export class EngineError extends Error {
  readonly code: EngineErrorCode;
  /** Machine-readable detail, e.g. the JSON path of the first problem or the codes of a cycle. */
  readonly detail: string | undefined;

  constructor(code: EngineErrorCode, message: string, detail?: string) {
    super(message);
    this.name = 'EngineError';
    this.code = code;
    this.detail = detail;
  }
}
