import { mkdirSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { writeFileAtomic } from '../../src/report/report-file.js';

const dir = mkdtempSync(join(tmpdir(), 'mailsift-atomic-'));

describe('writeFileAtomic', () => {
  it('replaces the file whole and leaves no temp file beside it', async () => {
    const path = join(dir, 'r.html');
    writeFileSync(path, 'old');
    await writeFileAtomic(path, 'new page');
    expect(readFileSync(path, 'utf8')).toBe('new page');
    expect(readdirSync(dir)).toEqual(['r.html']);
  });

  it('a write that fails leaves what was there untouched, and no temp file', async () => {
    // the rename cannot replace a directory that holds a file
    const path = join(dir, 'taken');
    mkdirSync(path);
    writeFileSync(join(path, 'keep'), 'kept');
    await expect(writeFileAtomic(path, 'page', 'the report to taken')).rejects.toThrow(/^cannot write the report to taken: E/);
    expect(readFileSync(join(path, 'keep'), 'utf8')).toBe('kept');
    expect(readdirSync(dir).sort()).toEqual(['r.html', 'taken']);
  });
});
