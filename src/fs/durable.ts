import { open } from 'node:fs/promises';
import { dirname } from 'node:path';

/** Makes a newly created file's directory entry durable too (POSIX needs this). */
export async function syncDirectory(path: string): Promise<void> {
  try {
    const dir = await open(dirname(path), 'r');
    try {
      await dir.sync();
    } finally {
      await dir.close();
    }
  } catch {
    // Some platforms (Windows) cannot open a directory: best effort.
  }
}
