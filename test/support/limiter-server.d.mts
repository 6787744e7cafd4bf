/** The headers one express-rate-limit limiter writes; several styles at once are allowed (legacy beside a draft). */
export type ExpressHeaders = 'legacy' | 'draft-6' | 'draft-7' | 'draft-8';

export interface Limiter {
  limit: number;
  windowMs: number;
  /** express-rate-limit: its header styles; @fastify/rate-limit: 'legacy' (X-RateLimit-*) or 'draft' (RateLimit-*) */
  headers: ExpressHeaders | ExpressHeaders[] | 'draft';
}

export interface LimiterServerOptions {
  library: 'express' | 'fastify';
  /** express: each its own middleware, in this order (a quota first, as the docs show); fastify: the first alone */
  limiters: Limiter[];
  /** the API's own time, after the limiters counted the request */
  latencyMs?: number;
  /** express: a Date header this far off the limiter's clock (0: written from the limiter's clock, when the process shifts it: --clock-offset-ms) */
  dateOffsetMs?: number;
  port?: number;
}

export interface LimiterServerStats {
  requests: number;
  count429: number;
  byStatus: Record<string, number>;
  /** when each request arrived, epoch ms */
  arrivals: number[];
}

export interface LimiterServer {
  url: string;
  requests: { at: number; status: number }[];
  stats(): LimiterServerStats;
  count429(): number;
  close(): Promise<void>;
}

export function startLimiterServer(options: LimiterServerOptions): Promise<LimiterServer>;
