import { UsageError } from '../../../errors.js';

/** `--smtp-proxy socks5://[user:pass@]host:port` once read; `password` is a secret. */
export interface SocksProxy {
  host: string;
  port: number;
  userId?: string;
  password?: string;
  /** socks5h://: the proxy resolves the MX host names */
  remoteDns: boolean;
}

/**
 * Reads a proxy URL. Errors name the problem but never echo the URL: it may
 * hold the password.
 */
export function parseSmtpProxy(value: string, source = '--smtp-proxy'): SocksProxy {
  let url: URL;
  try {
    url = new URL(value.trim());
  } catch {
    throw new UsageError(`${source} wants socks5://[user:password@]host:port (the value given is not a URL)`);
  }
  if (url.protocol !== 'socks5:' && url.protocol !== 'socks5h:') {
    throw new UsageError(`${source} wants a socks5:// or socks5h:// URL, not ${url.protocol.replace(/:$/, '')}://`);
  }
  const port = url.port === '' ? 1080 : Number(url.port);
  if (!url.hostname || (url.pathname !== '' && url.pathname !== '/') || url.search || url.hash) {
    throw new UsageError(`${source} wants socks5://[user:password@]host:port and nothing after the port`);
  }
  const proxy: SocksProxy = {
    host: url.hostname.replace(/^\[|\]$/g, ''),
    port,
    remoteDns: url.protocol === 'socks5h:',
  };
  if (url.username) proxy.userId = decodeURIComponent(url.username);
  if (url.password) proxy.password = decodeURIComponent(url.password);
  return proxy;
}

/** The proxy as it may be shown: `socks5://ann:***@127.0.0.1:1080`. */
export function showProxy(p: SocksProxy): string {
  const auth = p.userId !== undefined ? `${encodeURIComponent(p.userId)}${p.password !== undefined ? ':***' : ''}@` : '';
  const host = p.host.includes(':') ? `[${p.host}]` : p.host;
  return `socks5${p.remoteDns ? 'h' : ''}://${auth}${host}:${p.port}`;
}
