import { startServer as startHttpServer, type RunningServer, type ServeOptions } from '../serve/server.js';

export type StartServerOptions = Partial<ServeOptions> & Pick<ServeOptions, 'keys'>;

/**
 * `mailsift serve` as a function: the spec's API on host:port (default
 * 127.0.0.1, a free port), backed by `engine` (default: the offline engine
 * with the system resolver, closed with the server). The URL is in the result.
 */
export async function startServer(options: StartServerOptions): Promise<RunningServer> {
  const ownEngine = options.engine === undefined ? (await import('../engines/local/index.js')).createLocalValidator() : undefined;
  const engine = options.engine ?? ownEngine!;
  const close = async (): Promise<void> => {
    await ownEngine?.close();
  };
  const server = await startHttpServer({
    host: '127.0.0.1',
    port: 0,
    rateLimit: { requests: 60, seconds: 60 },
    shape: 'a',
    // its own engine's DNS state tells /readyz (a caller's engine, the caller's dnsState option)
    ...(ownEngine ? { dnsState: () => ownEngine.dnsState() } : {}),
    ...options,
    engine,
  }).catch(async (err: unknown) => {
    await close();
    throw err;
  });
  return {
    url: server.url,
    close: async () => {
      await server.close();
      await close();
    },
  };
}
