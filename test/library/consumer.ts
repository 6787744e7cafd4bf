// Compiled (not run) by `npm run typecheck` (test/tsconfig.json, in CI after the
// build that writes dist/*.d.ts): a TypeScript user of the package, importing it
// by name, must get the types through `exports`.
import { createApiValidator, createLocalValidator, startServer, validate, validateFile, type RowVerdict, type Verdict } from 'mailsift';

export async function consumer(): Promise<number> {
  const local = createLocalValidator({ dns: false });
  const statuses: Verdict['status'][] = [];
  for await (const v of validate(['a@example.com'], { validator: local, batchSize: 10 })) statuses.push(v.status);
  const rows: RowVerdict[] = [];
  for await (const r of validateFile('fixtures/contacts.csv', { column: 'email' })) rows.push(r);
  const server = await startServer({ keys: ['k'], port: 0 });
  const api = createApiValidator({ baseUrl: server.url, apiKey: 'k', retries: 1 });
  await api.close();
  await server.close();
  // @ts-expect-error: a status is one of four strings, and the types say so
  const wrong: Verdict['status'] = 'maybe';
  return statuses.length + rows.length + (wrong ? 0 : 1);
}
