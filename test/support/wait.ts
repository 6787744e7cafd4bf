export interface WaitOptions {
  /** what is awaited, as the failure names it: `waited … for ${what}` */
  what: string;
  /** how long at most; generous by default, since CI's two cores may be busy */
  timeoutMs?: number;
  /** pause between two looks */
  intervalMs?: number;
}

type Truthy<T> = Exclude<T, false | 0 | '' | null | undefined>;

/**
 * The one way a test waits for something to happen: looks at `condition`
 * until it gives a truthy value (which it returns), within `timeoutMs`; then
 * fails naming what never happened. Bounded twice, by the clock and by the
 * number of looks, so that even a faked clock cannot make it spin forever.
 * Never sleep a fixed time instead: wait for what the sleep was hoping for.
 */
export async function waitFor<T>(condition: () => T | Promise<T>, options: WaitOptions): Promise<Truthy<T>> {
  const { what, timeoutMs = 10_000, intervalMs = 10 } = options;
  const start = Date.now();
  const most = Math.ceil(timeoutMs / Math.max(1, intervalMs)) + 1;
  for (let looks = 1; ; looks++) {
    const value = await condition();
    if (value) return value as Truthy<T>;
    if (looks >= most || Date.now() - start >= timeoutMs) {
      throw new Error(`waited ${Date.now() - start} ms (${looks} looks) for ${what}; it did not happen`);
    }
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
