/**
 * A cache shared between processes (Redis, for `serve --redis`), asked after
 * the engine's own in-memory cache and before DNS. Values are strings; entries
 * expire on their own. Implementations never reject: a store that cannot
 * answer reports a miss.
 */
export interface SharedCache {
  /** the value and the milliseconds it has left, or undefined */
  get(key: string): Promise<{ value: string; ttlMs: number } | undefined>;
  set(key: string, value: string, ttlMs: number): Promise<void>;
}
