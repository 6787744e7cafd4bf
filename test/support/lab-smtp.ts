import { createServer, type Server, type Socket } from 'node:net';

/**
 * Mail servers the Postfix lab cannot be configured into (Exim's ACLs,
 * appliances' replies), written as SMTP scripts on a real socket: each
 * listens on its own address, port 25 (as the Postfix lab does, so that one
 * `--smtp-port` reaches both), counts the sessions open at once as the server
 * sees them (from accept to its own close), and records every command, so a
 * test can tell that DATA never came.
 */
export interface Script {
  /** the greeting, given the sessions open now (this one included); a 4xx/5xx greeting closes the connection */
  banner(open: number): string;
  /** EHLO's keywords after the first line; `false`: a server too old for EHLO (500), which takes HELO */
  extensions?: string[] | false;
  /**
   * The reply to RCPT TO, given the address (as sent), the reverse path of
   * the transaction, and the recipients refused so far in it; `drop` answers
   * with the text after it and closes the connection (Exim's `drop` verb).
   */
  rcpt(address: string, from: string, failed: number): string | { drop: string };
}

export interface ScriptedServer {
  readonly host: string;
  /** every command received, per connection */
  readonly sessions: string[][];
  /** the most connections open at once */
  readonly maxOpen: number;
  close(): Promise<void>;
}

/** A multi-line reply from its lines: `550-a`, `550 b`. */
export function reply(code: number, ...lines: string[]): string {
  return lines.map((l, i) => `${code}${i === lines.length - 1 ? ' ' : '-'}${l}`).join('\r\n');
}

export async function startScriptedServer(host: string, script: Script, port = 25): Promise<ScriptedServer> {
  const sessions: string[][] = [];
  const sockets = new Set<Socket>();
  let open = 0;
  let maxOpen = 0;
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    open++;
    maxOpen = Math.max(maxOpen, open);
    socket.once('close', () => {
      sockets.delete(socket);
      open--;
    });
    socket.on('error', () => socket.destroy());
    const commands: string[] = [];
    sessions.push(commands);
    const send = (text: string) => socket.write(`${text}\r\n`);
    const banner = script.banner(open);
    send(banner);
    if (!/^220[ -]/.test(banner)) {
      socket.end();
      return;
    }
    let from: string | undefined;
    let failed = 0;
    let buffered = '';
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => {
      buffered += chunk;
      for (let at = buffered.indexOf('\r\n'); at >= 0 && !socket.destroyed; at = buffered.indexOf('\r\n')) {
        const line = buffered.slice(0, at);
        buffered = buffered.slice(at + 2);
        commands.push(line);
        const verb = line.split(/[ :]/)[0]!.toUpperCase();
        if (verb === 'EHLO')
          send(
            script.extensions === false
              ? '500 Command unrecognized'
              : reply(250, `${host} Hello`, ...(script.extensions ?? ['SIZE 52428800', '8BITMIME', 'HELP'])),
          );
        else if (verb === 'HELO') send(`250 ${host}`);
        else if (verb === 'MAIL') {
          from = /<([^>]*)>/.exec(line)?.[1] ?? '';
          failed = 0;
          send('250 OK');
        } else if (verb === 'RCPT') {
          if (from === undefined) send('503 sender not yet given');
          else {
            const answer = script.rcpt(/<([^>]*)>/.exec(line)?.[1] ?? '', from, failed);
            if (typeof answer !== 'string') {
              send(answer.drop);
              socket.end();
              return;
            }
            if (!answer.startsWith('2')) failed++;
            send(answer);
          }
        } else if (verb === 'RSET') {
          from = undefined;
          failed = 0;
          send('250 Reset OK');
        } else if (verb === 'NOOP') send('250 OK');
        else if (verb === 'QUIT') {
          send('221 closing connection');
          socket.end();
          return;
        } else send('500 unrecognized command');
      }
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  return {
    host,
    sessions,
    get maxOpen() {
      return maxOpen;
    },
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise((r) => server.close(r));
    },
  };
}
