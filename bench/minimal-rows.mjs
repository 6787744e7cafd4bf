// The minimal client's CSV rows for one answered batch: a Map by address, plain
// string building. Shared by the client (bench/minimal-client.mjs) and by the
// in-process measure of its parts (bench/pipeline-parts.bench.mjs), so both
// time the same code.
const cell = (v) => (v === undefined ? '' : String(v));
const csv = (s) => (/[",\r\n]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s);

export function minimalRows(emails, results) {
  const byEmail = new Map();
  for (const r of results) byEmail.set(r.email, r);
  let text = '';
  for (const e of emails) {
    const r = byEmail.get(e);
    const d = r.details;
    // reason: empty, as for every valid answer (all the benchmark server gives)
    text +=
      csv(e) +
      ',' +
      r.status +
      ',,' +
      cell(r.isValid) +
      ',' +
      cell(r.confidence) +
      ',' +
      csv(r.provider) +
      ',' +
      cell(d.syntax) +
      ',' +
      csv(cell(d.domain)) +
      ',' +
      cell(d.mx) +
      ',' +
      cell(d.disposable) +
      ',' +
      cell(d.role) +
      ',,,,,\n';
  }
  return text;
}
