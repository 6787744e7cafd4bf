import dns2 from 'dns2';
import type { AddressInfo } from 'node:net';

const { Packet, createUDPServer } = dns2;
type DnsPacket = InstanceType<typeof Packet>;
/** dns2 encodes answers given as plain records; its typings ask for Resource objects */
type Reply = Omit<DnsPacket, 'answers'> & { answers: Omit<DnsPacket['answers'][number], 'toBuffer'>[] };
/** RFC 1035 §4.1.1 (dns2 has them as Packet.RCODE, its typings do not) */
const RCODE = { SERVFAIL: 2, NXDOMAIN: 3 } as const;

/**
 * What a test DNS server says for one name. A name with no zone gets NXDOMAIN.
 * `mx: [{ exchange: '', priority: 0 }]` is the null MX of RFC 7505.
 */
export interface Zone {
  mx?: { exchange: string; priority: number }[];
  a?: string[];
  aaaa?: string[];
  /** an alias: A and AAAA questions get a CNAME to this name, then its addresses */
  cname?: string;
  /** answer SERVFAIL to every query for the name */
  servfail?: boolean;
  /** never answer: the client times out */
  silent?: boolean;
  /** answer only when the test calls releaseHeld(): shows how many queries are in flight */
  hold?: boolean;
  /** answer after this long (a resolver slowed down by a burst, a far server) */
  delayMs?: number;
}

/** Zones every test server serves unless told otherwise (all under `.test`, RFC 6761). */
export const DEFAULT_ZONES: Record<string, Zone> = {
  // the root answers, as any working recursive resolver's does: the engine's probe
  '': { a: [] },
  'mx.test': { mx: [{ exchange: 'mail.mx.test', priority: 10 }] },
  'gmail.com': { mx: [{ exchange: 'gmail-smtp-in.l.google.com', priority: 5 }] },
  'nullmx.test': { mx: [{ exchange: '', priority: 0 }] },
  'aonly.test': { a: ['192.0.2.1'] },
  'aaaaonly.test': { aaaa: ['2001:db8::1'] },
  'nodata.test': {},
  'servfail.test': { servfail: true },
  'silent.test': { silent: true },
};

export interface TestDnsServer {
  /** `127.0.0.1:port`, for `--dns-server` */
  readonly address: string;
  /** every question received, as `TYPE name` (e.g. `MX mx.test`) */
  readonly queries: string[];
  /** true: NXDOMAIN to every question (a broken resolver, as on a machine with no internet) */
  broken: boolean;
  /** true: no answer to any question (DNS down: every query times out) */
  down: boolean;
  zones: Record<string, Zone>;
  /** queries of `hold` zones waiting for releaseHeld(), now and at most so far */
  readonly held: number;
  readonly maxHeld: number;
  /** answers every held query */
  releaseHeld(): void;
  close(): Promise<void>;
}

export interface DnsServerOptions {
  zones?: Record<string, Zone>;
  broken?: boolean;
  /** zones computed per name, consulted when `zones` has none (e.g. 10,000 bench domains) */
  fallback?: (name: string) => Zone | undefined;
}

const TYPE_NAMES = new Map<number, string>(Object.entries(Packet.TYPE).map(([k, v]) => [v as number, k]));

/** A real DNS server on 127.0.0.1, a free UDP port; stop it with close(). */
export async function startDnsServer(options: DnsServerOptions = {}): Promise<TestDnsServer> {
  const queries: string[] = [];
  const state = {
    broken: options.broken ?? false,
    down: false,
    zones: { ...DEFAULT_ZONES, ...options.zones },
  };
  const held: (() => void)[] = [];
  /** answers of `delayMs` zones not sent yet: dropped at close */
  const delayed = new Set<NodeJS.Timeout>();
  let maxHeld = 0;
  const server = createUDPServer((request, send) => {
    const response: Reply = Packet.createResponseFromRequest(request);
    const question = request.questions[0];
    if (!question) return;
    const name = question.name.toLowerCase().replace(/\.$/, '');
    queries.push(`${TYPE_NAMES.get(question.type) ?? question.type} ${name}`);
    if (state.down) return;
    const zone = state.broken ? undefined : (state.zones[name] ?? options.fallback?.(name));
    if (zone?.silent) return;
    if (!zone) {
      response.header.rcode = RCODE.NXDOMAIN;
    } else if (zone.servfail) {
      response.header.rcode = RCODE.SERVFAIL;
    } else {
      const base = { name: question.name, class: Packet.CLASS.IN, ttl: 60 };
      if (question.type === Packet.TYPE.MX) {
        for (const mx of zone.mx ?? []) response.answers.push({ ...base, type: Packet.TYPE.MX, ...mx });
      } else if (question.type === Packet.TYPE.A || question.type === Packet.TYPE.AAAA) {
        // an alias answers with its CNAME and the addresses of the name it points at, as a resolver does
        let named = zone;
        let owner = question.name;
        if (zone.cname !== undefined) {
          response.answers.push({ ...base, type: Packet.TYPE.CNAME, domain: zone.cname });
          named = state.zones[zone.cname] ?? options.fallback?.(zone.cname) ?? {};
          owner = zone.cname;
        }
        const v4 = question.type === Packet.TYPE.A;
        for (const address of (v4 ? named.a : named.aaaa) ?? []) response.answers.push({ ...base, name: owner, type: question.type, address });
      } else if (question.type === Packet.TYPE.NS && name === '') {
        response.answers.push({ ...base, type: Packet.TYPE.NS, ns: 'a.root-servers.test' });
      }
    }
    if (zone?.hold) {
      held.push(() => void send(response as DnsPacket));
      maxHeld = Math.max(maxHeld, held.length);
      return;
    }
    if (zone?.delayMs) {
      const timer = setTimeout(() => {
        delayed.delete(timer);
        void send(response as DnsPacket);
      }, zone.delayMs);
      delayed.add(timer);
      return;
    }
    void send(response as DnsPacket);
  });
  await server.listen(0, '127.0.0.1');
  const { port } = server.address() as AddressInfo;
  return {
    address: `127.0.0.1:${port}`,
    queries,
    get broken() {
      return state.broken;
    },
    set broken(value: boolean) {
      state.broken = value;
    },
    get down() {
      return state.down;
    },
    set down(value: boolean) {
      state.down = value;
    },
    get zones() {
      return state.zones;
    },
    set zones(value: Record<string, Zone>) {
      state.zones = value;
    },
    get held() {
      return held.length;
    },
    get maxHeld() {
      return maxHeld;
    },
    releaseHeld() {
      for (const answer of held.splice(0)) answer();
    },
    close: () => {
      for (const timer of delayed) clearTimeout(timer);
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
