/**
 * What a command must undo on every way out, undone in reverse order of
 * registration (like `await using`'s AsyncDisposableStack, which Node 20 lacks).
 * Every step runs even when one fails; the first failure is thrown after all.
 */
export class CleanUp {
  private readonly steps: (() => unknown)[] = [];

  defer(step: () => unknown): void {
    this.steps.push(step);
  }

  async run(): Promise<void> {
    let failure: { err: unknown } | undefined;
    for (const step of this.steps.splice(0).reverse()) {
      try {
        await step();
      } catch (err) {
        failure ??= { err };
      }
    }
    if (failure) throw failure.err;
  }

  /** Runs `body` and then the steps left; an error of the body wins over one of the clean-up. */
  async around<T>(body: () => Promise<T>): Promise<T> {
    let value: T;
    try {
      value = await body();
    } catch (err) {
      await this.run().catch(() => {});
      throw err;
    }
    await this.run();
    return value;
  }
}
