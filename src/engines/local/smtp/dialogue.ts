import { classifyRcpt, classifyStep, isBusy, type RcptOutcome, type StepOutcome } from './classify.js';
import { showReply, type Reply } from './reply.js';
import { SessionError, type FailureKind, type SmtpSession } from './session.js';
import type { Habits } from './hosts.js';
import type { SmtpFailure } from '../../../verdict.js';

/** How a session ended, for serve's metrics (see SmtpCheckOptions.onSession). */
export type SessionOutcome = 'completed' | 'deferred' | 'blocked' | 'refused' | 'failed';

/** How one try at a list of recipients ended. */
export interface Attempt {
  outcomes: Map<string, RcptOutcome>;
  /** answered 4xx (greylisting, 421, too many connections): ask again once, later */
  later: string[];
  /** why the rest (neither answered nor deferred) could not be told */
  why: SmtpFailure;
  /** how the session ended (metrics); absent when none opened */
  ended?: SessionOutcome;
  /** what went wrong, in words */
  note?: string;
}

/** A dialogue's end, with what it showed of the host (the caller keeps the host's health). */
export interface DialogueEnd extends Attempt {
  /** busy: it said too many connections (or 421); fine: every recipient asked; protocol: its replies slipped */
  host?: 'busy' | 'fine' | 'protocol';
  /** a reply worth telling `check`'s user (a refusal of the checker, a deferral, a broken session) */
  problem?: string;
  /**
   * Recipients for a new session: this one stopped at `failedPerSession`, or
   * the server dropped it after answering some (an anti-harvest limit); the
   * ones the drop may have been about come last.
   */
  rest?: string[];
  /** the server dropped the session: its failed RCPT replies (4xx/5xx) until then, the drop's own included */
  droppedAfter?: number;
  /** the server began to hold its replies after this many failed RCPT replies: this session ended there (its rest in `rest`) */
  slowedAfter?: number;
}

/**
 * STARTTLS (RFC 3207): `opportunistic` uses it whenever the server offers it
 * (or asks for it with a 530), as MTAs do, without verifying the certificate;
 * `require` asks nothing of a server that does not offer it.
 */
export type TlsMode = 'opportunistic' | 'require';

/**
 * What the dialogue is told, and what earlier sessions taught of this server
 * (Habits, kept by hosts.ts): `failedPerSession`, the failed RCPT replies
 * (4xx/5xx, what anti-harvest limits count) a session may have before it ends
 * and leaves the rest to a new one; `nullSender`, ask with `<>` from the
 * start; `plainText`, no STARTTLS (opportunistic TLS only).
 */
export interface DialogueOptions extends Habits {
  helo: string;
  /** the MAIL FROM reverse path; '' is the null path `<>` */
  from: string;
  /** RCPT per transaction at most */
  maxRecipients: number;
  /** STARTTLS; opportunistic when absent */
  tls?: TlsMode;
  /** told what this session finds out of the server's ways (it refused our reverse path; its TLS is broken), for its later sessions */
  learn?: (habits: Omit<Habits, 'failedPerSession'>) => void;
}

export const nothing = (why: SmtpFailure, note?: string): Attempt => ({ outcomes: new Map(), later: [], why, ...(note ? { note } : {}) });

/** The row's reason for a session that failed this way. */
export function failureOf(kind: FailureKind): SmtpFailure {
  return kind === 'connect-timeout' || kind === 'timeout' || kind === 'budget' ? 'timeout' : 'unreachable';
}

/** where the dialogue is: the command it sends next */
type Step = 'hello' | 'starttls' | 'mail' | 'rcpt' | 'rset';

/** RCPT outcomes that say something of the mailbox: never the reply a drop came with */
const ABOUT_MAILBOX: ReadonlySet<RcptOutcome> = new Set(['accepted', 'refused', 'disabled', 'full']);

/**
 * A RCPT reply this much slower than the session's fastest, once some have
 * failed, is a server that has begun to hold its replies (Postfix's
 * smtpd_error_sleep_time, 1 s per reply from the 10th error on): measured
 * replies of loopback and internet servers differ by far less.
 */
const HELD_REPLY_MS = 700;

/** a local part that needs SMTPUTF8 (RFC 6531): the domain is already in its ASCII form */
const NON_ASCII = /[^\x00-\x7f]/;

/** The keywords of an EHLO reply (its lines after the first), in upper case. */
function keywords(hello: Reply): Set<string> {
  return new Set(hello.lines.slice(1).map((l) => l.split(/\s+/)[0]!.toUpperCase()));
}

/**
 * The dialogue after the banner, as a small state machine: EHLO (HELO for an
 * old server); STARTTLS when the server offers it, then EHLO again; then
 * transactions of MAIL FROM and up to `maxRecipients` RCPT TO, RSET between
 * them — never DATA. Replies that end the session early leave the recipients
 * not yet answered in `later` (a 4xx, 421) or unanswered (a block of the
 * checker, a timeout, a dropped connection, a protocol error: never
 * evidence). A protocol error also throws away what this session answered:
 * once replies may have slipped, none of them is believed.
 *
 * A refusal of the reverse path, or a policy refusal, at MAIL FROM or at a
 * RCPT, says nothing about the mailbox: the transaction is tried again with
 * the null reverse path `<>` (RFC 5321 §4.5.5, which servers must accept;
 * Postfix's reject_unverified_sender does not verify it), from that recipient
 * on; recipients already answered keep their answers. Refused again, the
 * rest are undetermined (`sender-refused`, or `blocked` for a policy). The
 * server's refusal is learnt: its later sessions start with `<>`.
 *
 * Opportunistic STARTTLS whose handshake fails (or the server hangs up during
 * it) ends the session with every recipient left for a new one in plain text,
 * as MTAs do (Postfix's smtp_tls_security_level = may); the server's broken
 * TLS is learnt. Not so with `--smtp-tls require`, nor for a server that asked
 * for TLS itself (a 530): plain text would get nothing from it.
 *
 * A non-ASCII local part is asked with `MAIL FROM:<...> SMTPUTF8` when the
 * server announces SMTPUTF8, and not asked at all when it does not (`no-utf8`):
 * such a server may accept it and bounce later, or refuse it as if it were
 * unknown.
 *
 * A server that ends the session after answering some recipients (Exim's
 * "Too many failed recipients" ACL, Postfix's smtpd_hard_error_limit: they
 * count per connection) leaves the rest in `rest`, for a new session; so does
 * a session that reached `failedPerSession`. One that ends before any answer
 * leaves its rest for later, as any 421. So does a server that begins to hold
 * its replies once enough recipients failed (Postfix's smtpd_soft_error_limit
 * and smtpd_error_sleep_time: 1 s a reply from the 10th error on, by default):
 * the session ends after the first held reply, the rest go to a new session
 * (the server's counters start again), and later sessions stop short of it.
 */
export async function converse(session: SmtpSession, greeting: Reply, rcpts: readonly string[], host: string, o: DialogueOptions): Promise<DialogueEnd> {
  const outcomes = new Map<string, RcptOutcome>();
  const queue = [...rcpts];
  /** answered 4xx in this session: asked again later */
  const deferred: string[] = [];
  let problem: string | undefined;
  /** the reverse path: the one given, then `<>` once the server refused it (or refused it in an earlier session) */
  let from = o.nullSender ? '' : o.from;
  /** no STARTTLS: the server's TLS failed before, and TLS is opportunistic */
  const plainText = o.plainText === true && o.tls !== 'require';
  /** the server's EHLO keywords; none after HELO */
  let ext = new Set<string>();
  /** STARTTLS: asked for by the server (a 530), or refused by it when offered */
  let tlsAsked = false;
  let tlsRefused = false;
  /** where RSET leads */
  let afterRset: Step = 'mail';
  /** RCPT replies read in this session, the failed ones (4xx/5xx), and the last one */
  let answered = 0;
  let failed = 0;
  /** the fastest RCPT reply of this session, in ms */
  let fastest = Infinity;
  let last: { rcpt: string; outcome: RcptOutcome } | undefined;
  /**
   * The server ended the session while `inFlight` (if any) waited for its
   * reply: the rest for a new session, when this one got answers. When the
   * connection closed, the last reply may have been the drop's own ("550
   * Administrative prohibition", then the close): unless it spoke of the
   * mailbox, its recipient is asked again, last.
   */
  const dropped = (inFlight: string | undefined, note: string, ended: SessionOutcome, closed: boolean): DialogueEnd | undefined => {
    const suspect = closed && last && !ABOUT_MAILBOX.has(last.outcome) ? last.rcpt : undefined;
    if (answered - (suspect ? 1 : 0) <= 0) return undefined;
    if (suspect) {
      outcomes.delete(suspect);
      const at = deferred.indexOf(suspect);
      if (at >= 0) deferred.splice(at, 1);
    }
    const rest = [...queue.filter((r) => r !== inFlight), ...(inFlight ? [inFlight] : []), ...(suspect ? [suspect] : [])];
    return { outcomes, later: deferred, why: 'unreachable', ended, rest, droppedAfter: failed, note, problem: note };
  };
  const stop = (step: StepOutcome, reply?: Reply, why?: SmtpFailure, note?: string): DialogueEnd => {
    const ended: SessionOutcome = step === 'temporary' ? 'deferred' : step === 'blocked' ? 'blocked' : reply ? 'refused' : 'failed';
    why ??=
      step === 'temporary'
        ? 'greylisted'
        : step === 'sender'
          ? 'sender-refused'
          : step === 'blocked' || (step === 'failed' && reply)
            ? 'blocked'
            : 'unreachable';
    const end: DialogueEnd = { outcomes, later: step === 'temporary' ? [...deferred, ...queue] : deferred, why, ended };
    if (reply || note) {
      end.note = end.problem = `${host}: ${note ?? showReply(reply!)}`;
      if (reply && (isBusy(reply) || reply.code === 421)) end.host = 'busy';
    } else if (problem) end.problem = problem;
    return end;
  };
  const done = (): DialogueEnd => ({ outcomes, later: deferred, why: 'unreachable', ended: 'completed', host: 'fine', ...(problem ? { problem } : {}) });
  /** after EHLO (and STARTTLS): the addresses this server cannot be asked about are set aside */
  const ready = (): Step => {
    if (!ext.has('SMTPUTF8')) {
      for (let i = queue.length - 1; i >= 0; i--) {
        if (NON_ASCII.test(queue[i]!)) outcomes.set(queue.splice(i, 1)[0]!, 'no-utf8');
      }
    }
    return 'mail';
  };
  /** the reverse path refused (or a policy refusal): `<>` from now on */
  const toNullPath = (reply: Reply) => {
    problem = `${host}: ${showReply(reply)} (MAIL FROM:<${from}>; asked again with the null reverse path <>)`;
    from = '';
    o.learn?.({ nullSender: true });
  };

  const banner = classifyStep(greeting);
  if (banner !== 'ok') return stop(banner, greeting);
  let limit = o.maxRecipients;
  let inTransaction = 0;
  let step: Step = 'hello';
  try {
    for (;;) {
      switch (step) {
        case 'hello': {
          let hello = await session.command(`EHLO ${o.helo}`);
          ext = hello.code === 250 ? keywords(hello) : new Set();
          // RFC 5321 §3.2: an old server that does not know EHLO gets HELO
          if (hello.code >= 500 && hello.code <= 504) hello = await session.command(`HELO ${o.helo}`);
          if (classifyStep(hello) !== 'ok') return stop(classifyStep(hello), hello);
          if (!session.secure && !tlsRefused && !plainText && (ext.has('STARTTLS') || tlsAsked)) step = 'starttls';
          else if (!session.secure && o.tls === 'require')
            return stop('failed', undefined, 'unreachable', 'offers no STARTTLS, and --smtp-tls require: not asked');
          else step = ready();
          break;
        }
        case 'starttls': {
          const reply = await session.command('STARTTLS');
          if (reply.code !== 220) {
            if (o.tls === 'require' || tlsAsked) return stop('failed', reply, 'unreachable');
            // offered, then refused: opportunistic TLS goes on in plain text
            tlsRefused = true;
            step = ready();
            break;
          }
          try {
            await session.startTls(host);
          } catch (err) {
            // the handshake failed, or the server hung up during it: a new session in plain text
            if (!(err instanceof SessionError) || (err.kind !== 'tls' && err.kind !== 'dropped') || o.tls === 'require' || tlsAsked) throw err;
            o.learn?.({ plainText: true });
            problem = `${host}: ${err.message}; asked again without TLS`;
            return { outcomes, later: deferred, why: 'unreachable', ended: 'failed', rest: [...queue], note: problem, problem };
          }
          step = 'hello';
          break;
        }
        case 'rset': {
          const rset = await session.command('RSET');
          if (classifyStep(rset) !== 'ok') return stop(classifyStep(rset), rset);
          step = afterRset;
          afterRset = 'mail';
          break;
        }
        case 'mail': {
          if (queue.length === 0) return done();
          const utf8 = ext.has('SMTPUTF8') && [from, ...queue].some((a) => NON_ASCII.test(a));
          const mail = await session.command(`MAIL FROM:<${from}>${utf8 ? ' SMTPUTF8' : ''}`);
          const outcome = classifyStep(mail, 'MAIL');
          if (outcome === 'ok') {
            inTransaction = 0;
            step = 'rcpt';
          } else if (outcome === 'starttls' && !session.secure && !tlsAsked && !plainText) {
            // 530 5.7.0 Must issue a STARTTLS command first: the server's condition, not a block of the checker
            tlsAsked = true;
            step = 'starttls';
          } else if ((outcome === 'sender' || outcome === 'blocked') && from !== '') {
            toNullPath(mail);
          } else if (outcome === 'sender' && mail.code < 500) {
            // <> deferred for a while: asked again later, like any 4xx
            return stop('temporary', mail);
          } else return stop(outcome === 'starttls' ? 'failed' : outcome, mail, outcome === 'starttls' ? 'unreachable' : undefined);
          break;
        }
        case 'rcpt': {
          if (queue.length === 0) return done();
          if (o.failedPerSession !== undefined && failed >= o.failedPerSession) return { ...done(), rest: [...queue] };
          if (inTransaction >= limit) {
            step = 'rset';
            break;
          }
          const rcpt = queue[0]!;
          const reply = await session.command(`RCPT TO:<${rcpt}>`);
          let outcome = classifyRcpt(reply);
          if (outcome === 'too-many') {
            // a new transaction for the rest, no larger than what this one took
            if (inTransaction === 0) return stop('temporary', reply);
            limit = inTransaction;
            step = 'rset';
            break;
          }
          if (outcome === 'closing' && !isBusy(reply)) {
            // the session ends here (421, "Too many failed recipients"): the server counted this one as the drop point
            failed++;
            const end = dropped(rcpt, `${host}: ${showReply(reply)}`, 'deferred', false);
            if (end) return end;
          }
          if (outcome === 'closing' || isBusy(reply)) return stop('temporary', reply);
          if ((outcome === 'sender' || outcome === 'blocked') && from !== '') {
            // nothing said of this mailbox: a new transaction with <>, from this recipient on
            toNullPath(reply);
            step = 'rset';
            break;
          }
          if (outcome === 'starttls' && !session.secure && !tlsAsked && !plainText) {
            tlsAsked = true;
            step = 'rset';
            afterRset = 'starttls';
            break;
          }
          // the null path refused for a while (Postfix's 450 4.1.7 and kin): deferred like any 4xx
          if (outcome === 'sender' && reply.code < 500) outcome = 'temporary';
          if (!ABOUT_MAILBOX.has(outcome)) problem = `${host}: ${showReply(reply)}`;
          const held = failed >= 2 && session.lastReplyMs >= fastest + HELD_REPLY_MS ? failed : undefined;
          fastest = Math.min(fastest, session.lastReplyMs);
          queue.shift();
          inTransaction++;
          answered++;
          if (reply.code >= 400) failed++;
          last = { rcpt, outcome };
          if (outcome === 'temporary') deferred.push(rcpt);
          else outcomes.set(rcpt, outcome);
          // the server began to hold its replies: what it said stands; the rest in a new session
          if (held !== undefined && queue.length > 0) return { ...done(), rest: [...queue], slowedAfter: held };
          break;
        }
      }
    }
  } catch (err) {
    if (!(err instanceof SessionError)) throw err;
    problem = `${host}: ${err.message}`;
    if (err.kind === 'protocol') {
      return { ...nothing('unreachable', `${host}: ${err.message}; this session's answers are not used`), ended: 'failed', host: 'protocol', problem };
    }
    if (err.kind === 'dropped') {
      const end = dropped(step === 'rcpt' ? queue[0] : undefined, problem, 'failed', true);
      if (end) return end;
    }
    // a timeout, a dropped connection, a failed TLS handshake or our own abort: what was answered stands, the rest stays undetermined
    return { ...stop('failed'), why: failureOf(err.kind), note: problem };
  }
}
