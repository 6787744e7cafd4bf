import { classifyRcpt, classifyStep, isBusy, type RcptOutcome, type StepOutcome } from './classify.js';
import { showReply, type Reply } from './reply.js';
import { SessionError, type FailureKind, type SmtpSession } from './session.js';
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
}

export interface DialogueOptions {
  helo: string;
  /** the MAIL FROM reverse path; '' is the null path `<>` */
  from: string;
  /** RCPT per transaction at most */
  maxRecipients: number;
  /**
   * failed RCPT replies (4xx/5xx, what anti-harvest limits count) a session
   * may have before it ends and leaves the rest to a new one: learnt from a
   * server that dropped one (hosts.ts)
   */
  failedPerSession?: number;
}

export const nothing = (why: SmtpFailure, note?: string): Attempt => ({ outcomes: new Map(), later: [], why, ...(note ? { note } : {}) });

/** The row's reason for a session that failed this way. */
export function failureOf(kind: FailureKind): SmtpFailure {
  return kind === 'connect-timeout' || kind === 'timeout' || kind === 'budget' ? 'timeout' : 'unreachable';
}

/** where the dialogue is: the command it sends next */
type Step = 'hello' | 'mail' | 'rcpt' | 'rset';

/** RCPT outcomes that say something of the mailbox: never the reply a drop came with */
const ABOUT_MAILBOX: ReadonlySet<RcptOutcome> = new Set(['accepted', 'refused', 'full']);

/**
 * The dialogue after the banner, as a small state machine: EHLO (HELO for an
 * old server), then transactions of MAIL FROM and up to `maxRecipients` RCPT
 * TO, RSET between them — never DATA. Replies that end the session early leave
 * the recipients not yet answered in `later` (a 4xx, 421) or unanswered (a
 * block of the checker, a timeout, a dropped connection, a protocol error:
 * never evidence). A protocol error also throws away what this session
 * answered: once replies may have slipped, none of them is believed.
 *
 * A server that drops the session after answering some recipients (Exim's
 * "Too many failed recipients" ACL, Postfix's smtpd_hard_error_limit: they
 * count per connection) leaves the rest in `rest`, for a new session; so does
 * a session that reached `failedPerSession`. One dropped before any answer
 * leaves nothing to go on with.
 */
export async function converse(session: SmtpSession, greeting: Reply, rcpts: readonly string[], host: string, o: DialogueOptions): Promise<DialogueEnd> {
  const outcomes = new Map<string, RcptOutcome>();
  const queue = [...rcpts];
  /** answered 4xx in this session: asked again later */
  const deferred: string[] = [];
  let problem: string | undefined;
  /** RCPT replies read in this session, the failed ones (4xx/5xx), and the last one */
  let answered = 0;
  let failed = 0;
  let last: { rcpt: string; outcome: RcptOutcome } | undefined;
  /**
   * The server ended the session while `inFlight` (if any) waited for its
   * reply: the rest for a new session, when this one got answers. When the
   * connection closed, the last reply may have been the drop's own ("550 Too
   * many failed recipients"): unless it spoke of the mailbox, its recipient is
   * asked again, last.
   */
  const dropped = (inFlight: string | undefined, note: string, ended: SessionOutcome, closed: boolean): DialogueEnd | undefined => {
    const suspect = closed && last && !ABOUT_MAILBOX.has(last.outcome) ? last.rcpt : undefined;
    const before = answered - (suspect ? 1 : 0);
    if (before <= 0) return undefined;
    if (suspect) {
      outcomes.delete(suspect);
      const at = deferred.indexOf(suspect);
      if (at >= 0) deferred.splice(at, 1);
    }
    const rest = [...queue.filter((r) => r !== inFlight), ...(inFlight ? [inFlight] : []), ...(suspect ? [suspect] : [])];
    return { outcomes, later: deferred, why: 'unreachable', ended, rest, droppedAfter: failed, note, problem: note };
  };
  const stop = (step: StepOutcome, reply?: Reply): DialogueEnd => {
    const ended: SessionOutcome = step === 'temporary' ? 'deferred' : step === 'blocked' ? 'blocked' : reply ? 'refused' : 'failed';
    const why: SmtpFailure = step === 'blocked' || step === 'failed' ? (reply ? 'blocked' : 'unreachable') : 'greylisted';
    const end: DialogueEnd = { outcomes, later: step === 'temporary' ? [...deferred, ...queue] : deferred, why, ended };
    if (reply) {
      end.note = end.problem = `${host}: ${showReply(reply)}`;
      if (isBusy(reply) || reply.code === 421) end.host = 'busy';
    } else if (problem) end.problem = problem;
    return end;
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
          // RFC 5321 §3.2: an old server that does not know EHLO gets HELO
          if (hello.code >= 500 && hello.code <= 504) hello = await session.command(`HELO ${o.helo}`);
          if (classifyStep(hello) !== 'ok') return stop(classifyStep(hello), hello);
          step = 'mail';
          break;
        }
        case 'rset': {
          const rset = await session.command('RSET');
          if (classifyStep(rset) !== 'ok') return stop(classifyStep(rset), rset);
          step = 'mail';
          break;
        }
        case 'mail': {
          const mail = await session.command(`MAIL FROM:<${o.from}>`);
          if (classifyStep(mail) !== 'ok') return stop(classifyStep(mail), mail);
          inTransaction = 0;
          step = 'rcpt';
          break;
        }
        case 'rcpt': {
          if (queue.length === 0) return { outcomes, later: deferred, why: 'unreachable', ended: 'completed', host: 'fine', ...(problem ? { problem } : {}) };
          if (o.failedPerSession !== undefined && failed >= o.failedPerSession) {
            return { outcomes, later: deferred, why: 'unreachable', ended: 'completed', host: 'fine', rest: [...queue], ...(problem ? { problem } : {}) };
          }
          if (inTransaction >= limit) {
            step = 'rset';
            break;
          }
          const rcpt = queue[0]!;
          const reply = await session.command(`RCPT TO:<${rcpt}>`);
          const outcome = classifyRcpt(reply);
          if (outcome === 'too-many') {
            // a new transaction for the rest, no larger than what this one took
            if (inTransaction === 0) return stop('temporary', reply);
            limit = inTransaction;
            step = 'rset';
            break;
          }
          if (outcome === 'closing' && !isBusy(reply)) {
            const end = dropped(rcpt, `${host}: ${showReply(reply)}`, 'deferred', false);
            if (end) return end;
          }
          if (outcome === 'closing' || isBusy(reply)) return stop('temporary', reply);
          if (outcome === 'blocked' || outcome === 'unclear' || outcome === 'temporary') problem = `${host}: ${showReply(reply)}`;
          queue.shift();
          inTransaction++;
          answered++;
          if (reply.code >= 400) failed++;
          last = { rcpt, outcome };
          if (outcome === 'temporary') deferred.push(rcpt);
          else outcomes.set(rcpt, outcome);
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
    // a timeout, a dropped connection or our own abort: what was answered stands, the rest stays undetermined
    return { ...stop('failed'), why: failureOf(err.kind), note: problem };
  }
}
