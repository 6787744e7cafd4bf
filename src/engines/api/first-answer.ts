/**
 * Until the API has answered once, one call at a time, its retries included: an
 * unknown rate limit is not met with a burst, a refused key costs one request,
 * and a wrong URL costs one call's retries, not a first try from every batch
 * waiting while that call backs off. The one place this rule lives.
 */
export class FirstAnswer {
  /** some request of this run got an HTTP answer */
  reached = false;
  /** the call under way while none has been answered yet: the others wait for it */
  private current: Promise<void> | undefined;

  /** Runs `call` alone while no answer has been seen, at once after that. */
  async run<T>(call: () => Promise<T>): Promise<T> {
    while (!this.reached && this.current !== undefined) await this.current;
    if (this.reached) return call();
    const running = call();
    const settled = running.then(
      () => undefined,
      () => undefined,
    );
    this.current = settled;
    try {
      return await running;
    } finally {
      if (this.current === settled) this.current = undefined;
    }
  }
}
