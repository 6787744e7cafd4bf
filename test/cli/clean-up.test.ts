import { describe, expect, it } from 'vitest';
import { CleanUp } from '../../src/cli/clean-up.js';

describe('CleanUp', () => {
  it('undoes in reverse order of registration, each step once', async () => {
    const done: string[] = [];
    const c = new CleanUp();
    c.defer(() => done.push('stores'));
    c.defer(async () => done.push('output'));
    c.defer(() => done.push('reporter'));
    await c.run();
    await c.run();
    expect(done).toEqual(['reporter', 'output', 'stores']);
  });

  it('runs every step when one fails, then throws the first failure', async () => {
    const done: string[] = [];
    const c = new CleanUp();
    c.defer(() => done.push('stores'));
    c.defer(() => {
      throw new Error('output');
    });
    c.defer(() => Promise.reject(new Error('validator')));
    await expect(c.run()).rejects.toThrow('validator');
    expect(done).toEqual(['stores']);
  });

  it('around: an error of the body wins over one of the clean-up', async () => {
    const c = new CleanUp();
    c.defer(() => {
      throw new Error('disk full');
    });
    await expect(c.around(() => Promise.reject(new Error('key refused')))).rejects.toThrow('key refused');
  });

  it('around: a clean-up failure fails a body that succeeded', async () => {
    const c = new CleanUp();
    c.defer(() => {
      throw new Error('disk full');
    });
    await expect(c.around(async () => 'done')).rejects.toThrow('disk full');
  });
});
