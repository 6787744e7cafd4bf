import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable, Writable } from 'node:stream';

/** Debian's package puts it here (CI installs `chromium`); MAILSIFT_CHROMIUM names another. */
export const CHROMIUM = process.env.MAILSIFT_CHROMIUM ?? '/usr/bin/chromium';

export const hasChromium = (): boolean => existsSync(CHROMIUM);

/** Nothing that would reach the network on its own, as root in a container. */
const FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-default-apps',
  '--disable-extensions',
  '--mute-audio',
  '--hide-scrollbars',
  '--remote-debugging-pipe',
];

/** a step of the browser that takes longer than this fails the test (the machine is shared and loaded) */
const STEP_MS = 60_000;

type Params = Record<string, unknown>;
interface Message {
  id?: number;
  method?: string;
  params?: Params;
  result?: Params;
  error?: { message: string };
  sessionId?: string;
}

/**
 * Headless Chromium driven over the DevTools protocol on a pipe (fds 3 and 4,
 * messages ended by NUL): no port opened, no dependency beyond Node.
 */
export class Browser {
  private nextId = 1;
  private readonly pending = new Map<number, { resolve: (r: Params) => void; reject: (e: Error) => void; method: string }>();
  private readonly listeners = new Set<(m: Message) => void>();
  private exited = false;

  private constructor(
    private readonly child: ChildProcess,
    private readonly profile: string,
  ) {
    const out = child.stdio[4] as Readable;
    let buffered = '';
    out.setEncoding('utf8').on('data', (chunk: string) => {
      buffered += chunk;
      let end: number;
      while ((end = buffered.indexOf('\0')) >= 0) {
        const message = JSON.parse(buffered.slice(0, end)) as Message;
        buffered = buffered.slice(end + 1);
        this.dispatch(message);
      }
    });
    child.on('exit', () => {
      this.exited = true;
      for (const p of this.pending.values()) p.reject(new Error(`chromium exited during ${p.method}`));
      this.pending.clear();
    });
  }

  static async launch(): Promise<Browser> {
    const profile = mkdtempSync(join(tmpdir(), 'mailsift-chromium-'));
    const child = spawn(CHROMIUM, [...FLAGS, `--user-data-dir=${profile}`, 'about:blank'], {
      stdio: ['ignore', 'ignore', 'pipe', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr = (stderr + d).slice(-4000)));
    const browser = new Browser(child, profile);
    try {
      await browser.send('Browser.getVersion');
    } catch (err) {
      await browser.close();
      throw new Error(`chromium did not start: ${(err as Error).message}\n${stderr}`);
    }
    return browser;
  }

  send(method: string, params: Params = {}, sessionId?: string): Promise<Params> {
    if (this.exited) return Promise.reject(new Error(`chromium has exited (${method})`));
    const id = this.nextId++;
    const stdin = this.child.stdio[3] as Writable;
    return new Promise<Params>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new Error(`chromium: no answer to ${method} in ${STEP_MS} ms`));
      }, STEP_MS);
      this.pending.set(id, {
        method,
        resolve: (r) => (clearTimeout(timer), resolve(r)),
        reject: (e) => (clearTimeout(timer), reject(e)),
      });
      stdin.write(JSON.stringify({ id, method, params, ...(sessionId ? { sessionId } : {}) }) + '\0');
    });
  }

  /** The next event `method` of `sessionId` (bounded by STEP_MS). */
  next(method: string, sessionId: string): Promise<Params> {
    return new Promise((resolve, reject) => {
      const listener = (m: Message): void => {
        if (m.method !== method || m.sessionId !== sessionId) return;
        done();
        resolve(m.params ?? {});
      };
      const timer = setTimeout(() => {
        done();
        reject(new Error(`chromium: no ${method} in ${STEP_MS} ms`));
      }, STEP_MS);
      const done = (): void => {
        clearTimeout(timer);
        this.listeners.delete(listener);
      };
      this.listeners.add(listener);
    });
  }

  on(listener: (m: Message) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** A new tab, with what it asks of the network and what it logs recorded from the start. */
  async newPage(viewport = { width: 1280, height: 800 }): Promise<Page> {
    const { targetId } = (await this.send('Target.createTarget', { url: 'about:blank' })) as { targetId: string };
    const { sessionId } = (await this.send('Target.attachToTarget', { targetId, flatten: true })) as { sessionId: string };
    const page = new Page(this, sessionId);
    for (const domain of ['Network', 'Runtime', 'Log', 'Page']) await page.send(`${domain}.enable`);
    await page.viewport(viewport.width, viewport.height);
    return page;
  }

  /** Ends the browser (politely, then by its pid) and removes its profile. */
  async close(): Promise<void> {
    if (!this.exited) {
      const exited = new Promise<void>((resolve) => this.child.once('exit', () => resolve()));
      this.send('Browser.close').catch(() => {});
      const timer = setTimeout(() => this.child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    }
    rmSync(this.profile, { recursive: true, force: true });
  }

  private dispatch(m: Message): void {
    if (m.id !== undefined) {
      const p = this.pending.get(m.id);
      if (!p) return;
      this.pending.delete(m.id);
      if (m.error) p.reject(new Error(`chromium: ${p.method}: ${m.error.message}`));
      else p.resolve(m.result ?? {});
      return;
    }
    for (const l of [...this.listeners]) l(m);
  }
}

/** One tab: its network requests, console errors and uncaught exceptions, as they happen. */
export class Page {
  readonly requests: string[] = [];
  readonly errors: string[] = [];

  constructor(
    private readonly browser: Browser,
    readonly sessionId: string,
  ) {
    browser.on((m) => {
      if (m.sessionId !== sessionId) return;
      const p = m.params as Record<string, any>;
      if (m.method === 'Network.requestWillBeSent') this.requests.push(p.request.url as string);
      else if (m.method === 'Runtime.exceptionThrown') this.errors.push(`exception: ${p.exceptionDetails?.text}`);
      else if (m.method === 'Runtime.consoleAPICalled' && p.type === 'error') this.errors.push(`console.error: ${JSON.stringify(p.args)}`);
      else if (m.method === 'Log.entryAdded' && p.entry.level === 'error') this.errors.push(`log: ${p.entry.text} ${p.entry.url ?? ''}`);
    });
  }

  send(method: string, params: Params = {}): Promise<Params> {
    return this.browser.send(method, params, this.sessionId);
  }

  async viewport(width: number, height: number): Promise<void> {
    await this.send('Emulation.setDeviceMetricsOverride', { width, height, deviceScaleFactor: 1, mobile: false });
  }

  /** Opens `url` and waits for its load event. */
  async open(url: string): Promise<void> {
    const loaded = this.browser.next('Page.loadEventFired', this.sessionId);
    const { errorText } = (await this.send('Page.navigate', { url })) as { errorText?: string };
    if (errorText) throw new Error(`chromium could not open ${url}: ${errorText}`);
    await loaded;
  }

  /** The value of `expression` in the page (run by the test through DevTools, not by the page). */
  async evaluate<T>(expression: string): Promise<T> {
    const r = (await this.send('Runtime.evaluate', { expression, returnByValue: true })) as {
      result: { value: T };
      exceptionDetails?: { text: string };
    };
    if (r.exceptionDetails) throw new Error(`evaluate: ${r.exceptionDetails.text}`);
    return r.result.value;
  }

  /** A PNG of the page at the current width, from the top: all of it, or `maxHeight` pixels. */
  async screenshot(maxHeight = Infinity): Promise<Buffer> {
    const { cssContentSize } = (await this.send('Page.getLayoutMetrics')) as { cssContentSize: { width: number; height: number } };
    const { data } = (await this.send('Page.captureScreenshot', {
      format: 'png',
      captureBeyondViewport: true,
      clip: { x: 0, y: 0, width: Math.ceil(cssContentSize.width), height: Math.min(maxHeight, Math.ceil(cssContentSize.height)), scale: 1 },
    })) as { data: string };
    return Buffer.from(data, 'base64');
  }

  /** The page printed as the browser prints it (its own @page size). */
  async pdf(): Promise<Buffer> {
    const { data } = (await this.send('Page.printToPDF', { preferCSSPageSize: true, printBackground: true })) as { data: string };
    return Buffer.from(data, 'base64');
  }
}
