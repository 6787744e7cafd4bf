/**
 * Why an engine gave no verdict, as data: the kind picks the advice (in the
 * terminal layer), the text names what happened in the user's terms — the
 * host and port, the HTTP status and URL, the system error code. Never the key.
 * Part of the Validator interface (validator.ts), so it sits beside it, not in
 * one engine; the API engine's network errors are described in api/failure.ts.
 */
export type FailureKind = 'connect' | 'dns' | 'tls' | 'timeout' | 'network' | 'http' | 'server' | 'rate-limit' | 'missing';

export interface Failure {
  kind: FailureKind;
  text: string;
  /** for `http`: the status, so the advice can tell a wrong URL (404) from the rest */
  status?: number;
}

/** One cause of the run's failed addresses, and how many it cost. */
export interface FailureCount extends Failure {
  addresses: number;
}

/** Distinct causes in order of first appearance. */
export class FailureTally {
  private readonly byText = new Map<string, FailureCount>();

  note(failure: Failure, addresses: number): void {
    const seen = this.byText.get(failure.text);
    if (seen) seen.addresses += addresses;
    else this.byText.set(failure.text, { ...failure, addresses });
  }

  list(): FailureCount[] {
    return [...this.byText.values()].map((f) => ({ ...f }));
  }
}
