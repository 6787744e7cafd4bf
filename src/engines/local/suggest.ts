/**
 * Did-you-mean for misspelt popular mail domains (`gmial.com` → `gmail.com`).
 *
 * Only a domain one edit away from a popular one whose name has five letters
 * or more gets a suggestion (two edits, or shorter names, already reach real
 * domains: hotmart.com is two from hotmail.com, lime.com one from live.com),
 * and never a domain known to be real: any domain of the free-mail list
 * (mail.com, gmx.com, ymail.com, hotmail.co.uk, ...) or of the popular list
 * itself. An edit is an insertion, deletion, substitution or a
 * swap of two neighbours (optimal string alignment distance): `gmial` is one.
 */
const POPULAR_DOMAINS = [
  'gmail.com',
  'googlemail.com',
  'yahoo.com',
  'hotmail.com',
  'outlook.com',
  'live.com',
  'icloud.com',
  'aol.com',
  'msn.com',
  'comcast.net',
  'protonmail.com',
  'proton.me',
  'yahoo.co.uk',
  'hotmail.co.uk',
  'btinternet.com',
  'yahoo.fr',
  'hotmail.fr',
  'orange.fr',
  'wanadoo.fr',
  'gmx.de',
  'gmx.net',
  'web.de',
  't-online.de',
  'yandex.ru',
  'mail.ru',
  'libero.it',
  'verizon.net',
  'sbcglobal.net',
  'att.net',
  'bellsouth.net',
  'qq.com',
];

const POPULAR = new Set(POPULAR_DOMAINS);
/** the popular domains whose name has five letters or more, in list order */
const CORRECTABLE = POPULAR_DOMAINS.filter((d) => d.indexOf('.') >= 5);

/**
 * `known` holds domains that are real mail domains (the free-mail list): they
 * are never corrected. Returns the suggested domain (the first in list order
 * when several are one edit away), or undefined.
 */
export function suggestDomain(domain: string, known: ReadonlySet<string>): string | undefined {
  if (POPULAR.has(domain) || known.has(domain)) return undefined;
  // not popular itself, so no target is 0 edits away: the first at 1 is the best
  return CORRECTABLE.find((target) => editDistance(domain, target, 1) <= 1);
}

/** Optimal string alignment distance, giving up (returning max + 1) beyond `max`. */
export function editDistance(a: string, b: string, max: number): number {
  const n = a.length;
  const m = b.length;
  if (Math.abs(n - m) > max) return max + 1;
  let prev2 = new Array<number>(m + 1).fill(0);
  let prev = new Array<number>(m + 1);
  let cur = new Array<number>(m + 1);
  for (let j = 0; j <= m; j++) prev[j] = j;
  for (let i = 1; i <= n; i++) {
    cur[0] = i;
    let rowMin = i;
    const ca = a.charCodeAt(i - 1);
    for (let j = 1; j <= m; j++) {
      const cb = b.charCodeAt(j - 1);
      let v = Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + (ca === cb ? 0 : 1));
      if (i > 1 && j > 1 && ca === b.charCodeAt(j - 2) && a.charCodeAt(i - 2) === cb) {
        v = Math.min(v, prev2[j - 2]! + 1);
      }
      cur[j] = v;
      if (v < rowMin) rowMin = v;
    }
    if (rowMin > max) return max + 1;
    [prev2, prev, cur] = [prev, cur, prev2];
  }
  return prev[m]!;
}
